package lake_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/parser"
)

// TestDescribe checks that Describe types parameters from their context
// and reports the result schema, and that it changes nothing.
func TestDescribe(t *testing.T) {
	ctx := context.Background()
	lk, err := lake.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	s := lk.Session()
	if err := s.Exec(ctx, `CREATE TABLE t (id BIGINT NOT NULL, name VARCHAR, amount DECIMAL(10,2), ts TIMESTAMP, d DATE, ok BOOLEAN);
		INSERT INTO t VALUES (1, 'a', 1.50, TIMESTAMP '2026-01-01 00:00:00', DATE '2026-01-01', true)`); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		sql    string
		params string // the parameters' types, by exec.TypeName; "-" for none
		cols   string // the result's columns and types; "" for no rows
	}{
		{"SELECT id, name FROM t WHERE id = $1", "bigint", "id bigint, name text"},
		{"SELECT $1", "-", "?column? unknown"},
		{"SELECT * FROM t WHERE name = $2 AND amount > $1", "numeric(10,2) text", "id bigint, name text, amount numeric(10,2), ts timestamp, d date, ok boolean"},
		{"INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6)", "bigint text numeric(10,2) timestamp date boolean", ""},
		{"INSERT INTO t (id) VALUES ($1) RETURNING id + 1 AS next", "bigint", "next bigint"},
		{"UPdate t SET name = $1 WHERE id = $2", "text bigint", ""},
		{"DELETE FROM t WHERE ts < $1", "timestamp", ""},
		{"MERGE INTO t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN UPdate SET amount = $1", "numeric(10,2)", ""},
		{"SHOW TABLES", "", "name text"},
		{"CREATE TABLE u (a INT)", "", ""},
	}
	for _, c := range cases {
		stmt, err := parser.ParseOne(c.sql)
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.Describe(ctx, stmt, 0)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		var ps []string
		for _, p := range d.Params {
			if p == nil {
				ps = append(ps, "-")
			} else {
				ps = append(ps, exec.TypeName(p))
			}
		}
		var cols []string
		if d.Schema != nil {
			for _, f := range d.Schema.Fields() {
				cols = append(cols, f.Name+" "+exec.TypeName(f.Type))
			}
		}
		if got := strings.Join(ps, " "); got != c.params {
			t.Errorf("%s: params %q, want %q", c.sql, got, c.params)
		}
		if got := strings.Join(cols, ", "); got != c.cols {
			t.Errorf("%s: columns %q, want %q", c.sql, got, c.cols)
		}
	}
	tables, err := lk.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 {
		t.Errorf("describe created a table: %v", tables)
	}
	if got := strings.Join(query(t, s, "SELECT count(*), max(name) FROM t"), ";"); got != "1|a" {
		t.Errorf("describe changed the table: %s", got)
	}
}
