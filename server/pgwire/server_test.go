package pgwire_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/skadedb/skade/server/pgwire"
)

func TestSmoke(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	ctx := context.Background()
	for _, mode := range []string{"", "&default_query_exec_mode=simple_protocol", "&default_query_exec_mode=exec", "&default_query_exec_mode=describe_exec"} {
		t.Run(mode, func(t *testing.T) {
			c := ts.connect(t, mode)
			var one int
			if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("SELECT 1: %v %d", err, one)
			}
			if _, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS t (id BIGINT, name VARCHAR)"); err != nil {
				t.Fatal(err)
			}
			tag, err := c.Exec(ctx, "INSERT INTO t VALUES ($1, $2), ($3, $4)", 1, "a", 2, "b")
			if err != nil {
				t.Fatal(err)
			}
			if tag.String() != "INSERT 0 2" {
				t.Errorf("tag %q", tag)
			}
			var name string
			if err := c.QueryRow(ctx, "SELECT name FROM t WHERE id = $1", 2).Scan(&name); err != nil || name != "b" {
				t.Fatalf("select: %v %q", err, name)
			}
			_, err = c.Exec(ctx, "SELECT nope FROM t")
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "42703" {
				t.Errorf("want 42703, got %v", err)
			}
			if _, err := c.Exec(ctx, "DROP TABLE t"); err != nil {
				t.Fatal(err)
			}
			_ = pgx.ErrNoRows
		})
	}
}
