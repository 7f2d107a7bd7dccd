package lake_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skadedb/skade/lake"
)

// tableDirs lists the table directories of namespace main.
func tableDirs(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(dir, "main"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestRemoveOrphanTableDirs(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE a AS SELECT * FROM generate_series(1, 100) g(x);
		CREATE TABLE b CLONE a`)
	// a transaction whose process "dies": never committed nor rolled back
	dead := lk.Session()
	mustExec(t, dead, "BEGIN; CREATE TABLE ghost AS SELECT 1 AS one")
	if n := len(tableDirs(t, dir)); n != 3 {
		t.Fatalf("want directories of a, b and the uncommitted ghost, got %v", tableDirs(t, dir))
	}
	// young files stay: the transaction might still be running
	res, err := lk.RemoveOrphanTableDirs(ctx, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.DeletedFiles) != 0 {
		t.Errorf("deleted young files: %v", res.DeletedFiles)
	}
	res, err = lk.RemoveOrphanTableDirs(ctx, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.DeletedFiles) == 0 || !strings.Contains(res.DeletedFiles[0], "ghost-") {
		t.Errorf("the dead transaction's files were not removed: %v", res.DeletedFiles)
	}
	dirs := tableDirs(t, dir)
	if len(dirs) != 2 || slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(d, "ghost-") }) {
		t.Errorf("directories left: %v", dirs)
	}

	// a dropped table whose files a clone still reads keeps them
	mustExec(t, s, "DROP TABLE a")
	if _, err := lk.RemoveOrphanTableDirs(ctx, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT count(*), sum(x) FROM b"); !slices.Equal(got, []string{"100|5050"}) {
		t.Fatalf("the clone lost rows: %v", got)
	}
	if n := len(tableDirs(t, dir)); n != 2 {
		t.Errorf("the dropped source's directory went while the clone reads it: %v", tableDirs(t, dir))
	}
	// once the clone is gone too, nothing is left
	mustExec(t, s, "DROP TABLE b")
	if _, err := lk.RemoveOrphanTableDirs(ctx, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if dirs := tableDirs(t, dir); len(dirs) != 0 {
		t.Errorf("directories left after dropping everything: %v", dirs)
	}
}

// iceberg-go tools purge through the catalog; a clone's files survive.
func TestCatalogPurgeKeepsClonedFiles(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE a AS SELECT * FROM generate_series(1, 100) g(x);
		CREATE TABLE b CLONE a;
		CREATE TABLE c AS SELECT 1 AS one`)
	if err := lk.Catalog().PurgeTable(ctx, []string{"main", "a"}); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT count(*), sum(x) FROM b"); !slices.Equal(got, []string{"100|5050"}) {
		t.Fatalf("the clone lost rows after its source was purged: %v", got)
	}
	before := len(tableDirs(t, lk.Dir()))
	if err := lk.Catalog().PurgeTable(ctx, []string{"main", "c"}); err != nil {
		t.Fatal(err)
	}
	if after := len(tableDirs(t, lk.Dir())); after != before-1 {
		t.Errorf("purging an unshared table left its directory: %d directories before, %d after", before, after)
	}
}

// TestOpenWithoutCreate: WithoutCreate refuses a directory with no lake
// (missing, or empty) and creates nothing there; it opens a lake, and
// leaves a lake that lost its catalog to ErrCatalogMissing.
func TestOpenWithoutCreate(t *testing.T) {
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "lkae1")
	if _, err := lake.Open(ctx, missing, lake.WithoutCreate()); !errors.Is(err, lake.ErrLakeNotFound) || !strings.Contains(err.Error(), "no lake at") {
		t.Fatalf("missing dir: %v", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("Open WithoutCreate created %s", missing)
	}
	empty := t.TempDir()
	if _, err := lake.Open(ctx, empty, lake.WithoutCreate()); !errors.Is(err, lake.ErrLakeNotFound) {
		t.Fatalf("empty dir: %v", err)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Fatalf("Open WithoutCreate wrote %d entries into an empty dir", len(ents))
	}
	dir := t.TempDir()
	lk, err := lake.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, lk.Session(), "CREATE TABLE t (id INTEGER); INSERT INTO t VALUES (1)")
	lk.Close()
	lk, err = lake.Open(ctx, dir, lake.WithoutCreate())
	if err != nil {
		t.Fatalf("existing lake: %v", err)
	}
	lk.Close()
	if err := os.Remove(filepath.Join(dir, "catalog.db")); err != nil {
		t.Fatal(err)
	}
	if _, err := lake.Open(ctx, dir, lake.WithoutCreate()); !errors.Is(err, lake.ErrCatalogMissing) {
		t.Fatalf("lost catalog: %v, want ErrCatalogMissing", err)
	}
}
