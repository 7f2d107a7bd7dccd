package lake_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// CALL register_table adopts a table whose metadata another writer put in
// the lake directory (here iceberg-go, writing version 0 of a v2 table by
// hand); the table is then read and written like any other.
func TestCallRegisterTable(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	s := lk.Session()
	loc := filepath.Join(dir, "main", "ext-0000abcd")
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String})
	meta, err := table.NewMetadata(sch, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, loc, iceberg.Properties{"format-version": "2"})
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(loc, "metadata", "00000-2a0b6c1e-0000-4000-8000-000000000000.metadata.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}

	if got := query(t, s, "CALL system.register_table(table => 'ext', metadata_file => '"+file+"')"); len(got) != 1 || !strings.HasPrefix(got[0], "registered main.ext at ") {
		t.Fatalf("register_table: %v", got)
	}
	mustExec(t, s, "INSERT INTO ext VALUES (1, 'a'), (2, 'b')")
	mustExec(t, s, "UPDATE ext SET name = 'B' WHERE id = 2")
	if got := query(t, s, "SELECT id, name FROM ext ORDER BY id"); !slices.Equal(got, []string{"1|a", "2|B"}) {
		t.Fatalf("rows %v", got)
	}
	for _, c := range []struct{ sql, want string }{
		{"CALL system.register_table('ext2', '" + file + "')", "already uses the directory"},
		{"CALL system.register_table('ext3', '/elsewhere/x.metadata.json')", "outside the lake"},
		{"CALL system.register_table('ext4')", "takes two strings"},
		{"CALL system.registr_table('a', 'b')", `did you mean "register_table"?`},
	} {
		if _, err := s.SQL(ctx, c.sql); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.sql, err, c.want)
		}
	}
}
