package pgwire_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/skadedb/skade/server/pgwire"
)

// TestNotices: DROP TABLE IF EXISTS on a missing table, and the other IF
// [NOT] EXISTS no-ops, send PostgreSQL's NOTICE before completing, which
// pgx hands to OnNotice and psql prints.
func TestNotices(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(ts.url(""))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notices []*pgconn.Notice
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		notices = append(notices, n)
		mu.Unlock()
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{"DROP TABLE IF EXISTS nosuch", "CREATE TABLE t (x INT)", "CREATE TABLE IF NOT EXISTS t (x INT)", "DROP TABLE IF EXISTS t"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notices) != 2 || notices[0].Message != `table "nosuch" does not exist, skipping` || notices[0].Severity != "NOTICE" || notices[0].Code != "00000" ||
		notices[1].Message != `relation "t" already exists, skipping` {
		t.Fatalf("notices: %+v", notices)
	}

	psql := psqlPath(t)
	host, port, _ := net.SplitHostPort(ts.addr)
	cmd := exec.Command(psql, "-X", "-h", host, "-p", port, "-U", "skade", "-d", "lake", "-c", "DROP TABLE IF EXISTS gone")
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGSSLMODE=disable")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `NOTICE:  table "gone" does not exist, skipping`) || !strings.Contains(string(out), "DROP TABLE") {
		t.Fatalf("psql printed:\n%s", out)
	}
}
