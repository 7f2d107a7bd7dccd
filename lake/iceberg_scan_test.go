package lake_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// iceberg_scan reads a table without the catalog: by metadata file, by
// directory through skade's version hint, and in a Hadoop-style layout
// (vN.metadata.json, a numeric hint, or no hint: the highest version).
func TestIcebergScan(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id BIGINT, v VARCHAR); INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	tbl, err := lk.Table(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	first := tbl.Iceberg().MetadataLocation()
	mustExec(t, s, "INSERT INTO t VALUES (3, 'c')")
	tbl, err = tbl.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	current := tbl.Iceberg().MetadataLocation()
	dir := filepath.Dir(filepath.Dir(current))
	scan := func(loc string) []string {
		t.Helper()
		return query(t, s, "SELECT id, v FROM iceberg_scan('"+loc+"') ORDER BY id")
	}
	want := []string{"1|a", "2|b", "3|c"}
	for _, loc := range []string{current, dir, dir + "/"} {
		if got := scan(loc); !slices.Equal(got, want) {
			t.Errorf("iceberg_scan(%s) = %v, want %v", loc, got, want)
		}
	}
	if got := scan(first); !slices.Equal(got, want[:2]) {
		t.Errorf("iceberg_scan of the first metadata file = %v", got)
	}

	// a Hadoop-style directory: v1 and v2, with and without a hint
	hadoop := filepath.Join(t.TempDir(), "tbl")
	if err := os.MkdirAll(filepath.Join(hadoop, "metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, from := range map[string]string{"v1.metadata.json": first, "v2.metadata.json": current} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(hadoop, "metadata", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := scan(hadoop); !slices.Equal(got, want) {
		t.Errorf("no hint: %v, want the highest version's rows %v", got, want)
	}
	if err := os.WriteFile(filepath.Join(hadoop, "metadata", "version-hint.text"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := scan(hadoop); !slices.Equal(got, want[:2]) {
		t.Errorf("hint 1: %v, want version 1's rows", got)
	}

	// a table whose metadata is gzip-compressed: the hint names the
	// .gz.metadata.json file
	mustExec(t, s, "CREATE TABLE gz (id BIGINT) WITH ('write.metadata.compression-codec' = 'gzip'); INSERT INTO gz VALUES (7)")
	gz, err := lk.Table(ctx, "gz")
	if err != nil {
		t.Fatal(err)
	}
	gzDir := filepath.Dir(filepath.Dir(gz.Iceberg().MetadataLocation()))
	if !strings.HasSuffix(gz.Iceberg().MetadataLocation(), ".gz.metadata.json") {
		t.Fatalf("metadata %s is not gzip-compressed", gz.Iceberg().MetadataLocation())
	}
	if got := query(t, s, "SELECT id FROM iceberg_scan('"+gzDir+"')"); !slices.Equal(got, []string{"7"}) {
		t.Errorf("iceberg_scan of a gzip-metadata table: %v", got)
	}

	for _, c := range []struct{ loc, want string }{
		{filepath.Join(t.TempDir(), "nope"), "no Iceberg table at"},
		{"s3://elsewhere/tbl", "only local paths and locations in this lake's object store"},
	} {
		if _, err := s.SQL(ctx, "SELECT * FROM iceberg_scan('"+c.loc+"')"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("iceberg_scan(%s): %v, want %q", c.loc, err, c.want)
		}
	}
	// read-only: it is no table to write
	if _, err := s.SQL(ctx, "INSERT INTO iceberg_scan('"+dir+"') VALUES (4, 'd')"); err == nil {
		t.Errorf("an INSERT into iceberg_scan succeeded")
	}
}
