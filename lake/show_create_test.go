package lake_test

import (
	"context"
	"strings"
	"testing"
)

// SHOW CREATE TABLE prints a statement that recreates the table: run
// under another name, it makes a table whose own SHOW CREATE TABLE is the
// same but for the name, with the same column types, nullability,
// partitioning and properties.
func TestShowCreateTableRecreates(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE orig (
		id BIGINT NOT NULL, "Mixed Case" VARCHAR, "select" INTEGER, amount DECIMAL(12, 3), ok BOOLEAN,
		d DATE, ts TIMESTAMP, tz TIMESTAMPTZ, f DOUBLE, r REAL, b BLOB, u UUID, s SMALLINT)
		PARTITIONED BY (bucket(8, id), truncate(3, "Mixed Case"), day(ts), month(d), "select")
		WITH ('format-version' = '3', 'write.merge.mode' = 'merge-on-read', 'owner' = 'O''Brien',
			'write.parquet.bloom-filter-enabled.column.id' = 'true')`)
	show := func(name string) string {
		t.Helper()
		got := query(t, s, "SHOW CREATE TABLE "+name)
		if len(got) != 1 {
			t.Fatalf("SHOW CREATE TABLE %s: %d rows", name, len(got))
		}
		return got[0]
	}
	stmt := show("orig")
	for _, want := range []string{`"Mixed Case" TEXT`, `"select" INTEGER`, "id BIGINT NOT NULL", "NUMERIC(12,3)", "truncate(3, \"Mixed Case\")", "'owner' = 'O''Brien'", "'format-version' = '3'"} {
		if !strings.Contains(stmt, want) {
			t.Errorf("SHOW CREATE TABLE lacks %s:\n%s", want, stmt)
		}
	}
	mustExec(t, s, strings.Replace(stmt, "main.orig", "main.copy", 1))
	if again := show("copy"); strings.Replace(again, "main.copy", "main.orig", 1) != stmt {
		t.Errorf("the recreated table differs:\n%s\nwant\n%s", again, stmt)
	}
	if a, b := query(t, s, "DESCRIBE orig"), query(t, s, "DESCRIBE copy"); strings.Join(a, ";") != strings.Join(b, ";") {
		t.Errorf("columns differ: %v, %v", a, b)
	}
	orig, err := lk.Table(ctx, "orig")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := lk.Table(ctx, "copy")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := orig.Iceberg().Spec().String(), cp.Iceberg().Spec().String(); a != b {
		t.Errorf("partition specs differ: %s, %s", a, b)
	}
	if a, b := orig.Iceberg().Metadata().Properties(), cp.Iceberg().Metadata().Properties(); len(a) != len(b) {
		t.Errorf("properties differ: %v, %v", a, b)
	} else {
		for k, v := range a {
			if b[k] != v {
				t.Errorf("property %s: %q, %q", k, v, b[k])
			}
		}
	}
}
