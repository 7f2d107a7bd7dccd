package pgwire_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

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

// Views appear in the catalogs tools read: information_schema.tables
// (VIEW), information_schema.views and pg_views with their query,
// information_schema.columns with their columns, pg_class with relkind v.
func TestViewsInCatalogs(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	ctx := context.Background()
	c := ts.connect(t, "")
	if _, err := c.Exec(ctx, "CREATE TABLE t (id INT, name VARCHAR)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "CREATE VIEW v AS SELECT id AS key FROM t"); err != nil {
		t.Fatal(err)
	}
	wantValues(t, c, []struct{ q, want string }{
		{"SELECT string_agg(table_name || ':' || table_type, ',' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'main'", "t:BASE TABLE,v:VIEW"},
		{"SELECT table_name || ':' || view_definition FROM information_schema.views", "v:SELECT id AS key FROM t"},
		{"SELECT viewname || ':' || definition FROM pg_views WHERE schemaname = 'main'", "v:SELECT id AS key FROM t"},
		{"SELECT string_agg(column_name, ',') FROM information_schema.columns WHERE table_name = 'v'", "key"},
		{"SELECT relkind FROM pg_class WHERE relname = 'v'", "v"},
		{"SELECT count(*)::text FROM pg_tables WHERE tablename = 'v'", "0"},
	})
}

// A table's PRIMARY KEY, UNIQUE and CHECK constraints appear where tools
// look for them: pg_constraint (contype, conkey as attnums, joined to
// pg_class and pg_attribute) and information_schema.table_constraints,
// key_column_usage and check_constraints.
func TestConstraintsInCatalogs(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	ctx := context.Background()
	c := ts.connect(t, "")
	for _, q := range []string{
		"CREATE TABLE orders (region VARCHAR NOT NULL, id BIGINT NOT NULL, code VARCHAR, qty INT, PRIMARY KEY (region, id), CONSTRAINT code_uq UNIQUE (code), CONSTRAINT qty_pos CHECK (qty > 0))",
		"CREATE TABLE plain (x INT)",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	wantValues(t, c, []struct{ q, want string }{
		{"SELECT string_agg(conname || ':' || contype, ',' ORDER BY conname) FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid WHERE r.relname = 'orders'",
			"code_uq:u,orders_pkey:p,qty_pos:c"},
		// the primary key's columns through conkey, in key order
		{"SELECT string_agg(a.attname, ',' ORDER BY k.i) FROM pg_constraint c, unnest(c.conkey) WITH ORDINALITY AS k(n, i), pg_attribute a WHERE c.contype = 'p' AND a.attrelid = c.conrelid AND a.attnum = k.n",
			"region,id"},
		{"SELECT count(*)::text FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid WHERE r.relname = 'plain'", "0"},
		{"SELECT string_agg(constraint_name || ':' || constraint_type, ',' ORDER BY constraint_name) FROM information_schema.table_constraints WHERE table_name = 'orders'",
			"code_uq:UNIQUE,orders_pkey:PRIMARY KEY,qty_pos:CHECK"},
		{"SELECT string_agg(column_name || ordinal_position::text, ',' ORDER BY constraint_name, ordinal_position) FROM information_schema.key_column_usage WHERE table_name = 'orders'",
			"code1,region1,id2"},
		{"SELECT constraint_name || ':' || check_clause FROM information_schema.check_constraints", "qty_pos:qty > 0"},
		// definitions as PostgreSQL prints them, pretty (psql's \d) or not
		{"SELECT string_agg(pg_get_constraintdef(c.oid), '; ' ORDER BY conname) FROM pg_constraint c", "UNIQUE (code); PRIMARY KEY (region, id); CHECK ((qty > 0))"},
		{"SELECT pg_get_constraintdef(oid, true) FROM pg_constraint WHERE contype = 'c'", "CHECK (qty > 0)"},
		{"SELECT coalesce(pg_get_constraintdef(12345), 'none')", "none"},
		{"SELECT relchecks::text FROM pg_class WHERE relname = 'orders'", "1"},
		// each key as the unique index PostgreSQL would make for it: in
		// pg_class (relkind i), pg_index (its table, columns as indkey)
		// and pg_constraint.conindid
		{"SELECT string_agg(relname || ':' || relhasindex::text, ',' ORDER BY relname) FROM pg_class WHERE relkind = 'r'", "orders:true,plain:false"},
		{"SELECT string_agg(x.relname || ':' || i.indisprimary::text || ':' || i.indisunique::text || ':' || i.indkey || ':' || r.relname, ',' ORDER BY x.relname) FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid JOIN pg_class r ON r.oid = i.indrelid",
			"code_uq:false:true:3:orders,orders_pkey:true:true:1 2:orders"},
		{"SELECT string_agg(c.conname, ',' ORDER BY c.conname) FROM pg_constraint c JOIN pg_index i ON i.indexrelid = c.conindid", "code_uq,orders_pkey"},
		{"SELECT string_agg(pg_get_indexdef(indexrelid), '; ' ORDER BY indisprimary) FROM pg_index",
			"CREATE UNIQUE INDEX code_uq ON main.orders USING btree (code); CREATE UNIQUE INDEX orders_pkey ON main.orders USING btree (region, id)"},
		{"SELECT string_agg(a.attname || '=' || pg_get_indexdef(a.attrelid, a.attnum::int, true), ',' ORDER BY a.attnum) FROM pg_attribute a JOIN pg_class x ON x.oid = a.attrelid WHERE x.relname = 'orders_pkey'",
			"region=region,id=id"},
		{"SELECT coalesce(pg_get_indexdef(12345), 'none') || coalesce(pg_get_indexdef(indexrelid, 3, true), 'none') FROM pg_index WHERE indisprimary", "nonenone"},
	})
}

// wantValues runs each query, which returns one text value, and compares.
func wantValues(t *testing.T, c *pgx.Conn, cases []struct{ q, want string }) {
	t.Helper()
	for _, tc := range cases {
		var got string
		if err := c.QueryRow(context.Background(), tc.q).Scan(&got); err != nil {
			t.Errorf("%s: %v", tc.q, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.q, got, tc.want)
		}
	}
}
