package pgwire_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/skadedb/skade/server/pgwire"
)

// TestDBeaverQueries runs DBeaver's catalog queries (testdata/dbeaver.sql)
// through pgx's extended protocol, binding the namespace or table OID
// as DBeaver does: each must run, and the table listing must show the
// table and its columns.
func TestDBeaverQueries(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	ctx := context.Background()
	c := ts.connect(t, "")
	if _, err := c.Exec(ctx, "CREATE TABLE t (id INT, name VARCHAR, tags TEXT[])"); err != nil {
		t.Fatal(err)
	}
	var nsp, rel int64
	if err := c.QueryRow(ctx, "SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'main'").Scan(&nsp); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT 't'::regclass::oid").Scan(&rel); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/dbeaver.sql")
	if err != nil {
		t.Fatal(err)
	}
	var tables, columns []string
	for _, q := range strings.Split(string(raw), "\n") {
		q = strings.TrimSuffix(strings.TrimSpace(q), ";")
		if q == "" || strings.HasPrefix(q, "--") {
			continue
		}
		var args []any
		attrs := strings.Contains(q, "FROM pg_catalog.pg_attribute a")
		switch {
		case attrs:
			args = append(args, rel)
		case strings.Contains(q, "$1"):
			args = append(args, nsp)
		}
		rows, err := c.Query(ctx, q, args...)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		fields := rows.FieldDescriptions()
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Errorf("%s: %v", q, err)
				break
			}
			for i, f := range fields {
				switch {
				case !attrs && len(args) > 0 && f.Name == "relname":
					tables = append(tables, vals[i].(string))
				case attrs && f.Name == "attname":
					columns = append(columns, vals[i].(string))
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	if strings.Join(tables, ",") != "t" || strings.Join(columns, ",") != "id,name,tags" {
		t.Errorf("tables %v, columns %v", tables, columns)
	}
}
