package lake_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/view"

	"github.com/skadedb/skade/lake"
)

// A view is an Iceberg view metadata file in a directory of its own: it
// survives forced orphan cleanup of the lake, cannot be made inside a
// transaction, and goes with DROP VIEW.
func TestViewsOnDisk(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1), (2); CREATE VIEW v AS SELECT id * 10 AS x FROM t")
	files, _ := filepath.Glob(filepath.Join(dir, "main", "v-*", "metadata", "*.metadata.json"))
	if len(files) != 1 {
		t.Fatalf("view metadata files %v, want one", files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	md, err := view.ParseMetadata(f)
	f.Close()
	if err != nil {
		t.Fatalf("the view metadata does not parse as an Iceberg view: %v", err)
	}
	if sql := md.CurrentVersion().Representations[0].Sql; sql != "SELECT id * 10 AS x FROM t" {
		t.Errorf("stored SQL %q", sql)
	}
	if f := md.CurrentSchema().Fields(); len(f) != 1 || f[0].Name != "x" {
		t.Errorf("view schema %v", f)
	}

	if _, err := lk.RemoveOrphanTableDirs(ctx, time.Now().Add(time.Hour), lake.ForceTableDirs()); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT x FROM v ORDER BY x"); !slices.Equal(got, []string{"10", "20"}) {
		t.Fatalf("after orphan cleanup: %v", got)
	}

	mustExec(t, s, "BEGIN")
	if _, err := s.SQL(ctx, "CREATE VIEW w AS SELECT 1 AS one"); err == nil || !strings.Contains(err.Error(), "inside a transaction") {
		t.Errorf("CREATE VIEW in a transaction: %v", err)
	}
	mustExec(t, s, "ROLLBACK")

	mustExec(t, s, "DROP VIEW v")
	if left, _ := filepath.Glob(filepath.Join(dir, "main", "v-*")); len(left) != 0 {
		t.Errorf("DROP VIEW left %v", left)
	}
}
