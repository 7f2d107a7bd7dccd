package lake_test

import (
	"context"
	"reflect"
	"testing"
)

// A format-version 3 table keeps its constant DEFAULTs as Iceberg's
// write-default (for other engines' writes) and ADD COLUMN … DEFAULT's as
// the initial-default (which rows written before read); a default that is
// not a constant of such a type (now(), a date) is skade's own and leaves
// write-default unset; dropping a default clears it. A v2 table has no
// field defaults.
func TestDefaultsInIcebergSchemaV3(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE d (id INT, tag VARCHAR DEFAULT 'x', n BIGINT DEFAULT 2 + 3, at TIMESTAMP DEFAULT now(), day DATE DEFAULT DATE '2024-01-02', ok BOOLEAN DEFAULT true, f DOUBLE DEFAULT 1.5) WITH ('format-version' = '3');
		INSERT INTO d (id) VALUES (1);
		ALTER TABLE d ADD COLUMN k INT DEFAULT 42;
		ALTER TABLE d ALTER COLUMN ok DROP DEFAULT;
		ALTER TABLE d ALTER COLUMN tag SET DEFAULT upper('y');
		CREATE TABLE d2 (id INT, tag VARCHAR DEFAULT 'x') WITH ('format-version' = '2')`)
	tbl, err := lk.Table(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	type defaults struct{ initial, write any }
	got := map[string]defaults{}
	for _, f := range tbl.Iceberg().Schema().Fields() {
		got[f.Name] = defaults{f.InitialDefault, f.WriteDefault}
	}
	want := map[string]defaults{
		"id": {}, "tag": {}, "n": {nil, int64(5)}, "at": {}, "day": {}, "ok": {}, "f": {nil, 1.5},
		"k": {int32(42), int32(42)},
	}
	// (a reloaded table reads JSON numbers as float64)
	norm := func(v any) any {
		switch x := v.(type) {
		case int32:
			return float64(x)
		case int64:
			return float64(x)
		}
		return v
	}
	for name, w := range want {
		g := got[name]
		if !reflect.DeepEqual(norm(g.initial), norm(w.initial)) || !reflect.DeepEqual(norm(g.write), norm(w.write)) {
			t.Errorf("%s: initial-default %v (%T), write-default %v (%T); want %v, %v", name, g.initial, g.initial, g.write, g.write, w.initial, w.write)
		}
	}
	if got := query(t, s, "SELECT id, k, n FROM d"); !reflect.DeepEqual(got, []string{"1|42|5"}) {
		t.Errorf("d = %v", got)
	}
	t2, err := lk.Table(ctx, "d2")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range t2.Iceberg().Schema().Fields() {
		if f.InitialDefault != nil || f.WriteDefault != nil {
			t.Errorf("v2 table field %s has Iceberg defaults %v, %v", f.Name, f.InitialDefault, f.WriteDefault)
		}
	}
}
