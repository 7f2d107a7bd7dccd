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

	"github.com/apache/iceberg-go/view"

	"github.com/skadedb/skade/lake"
)

// A view is an Iceberg view metadata file in a directory of its own: it
// survives forced orphan cleanup of the lake, is made and dropped inside
// a transaction at COMMIT and leaves nothing at ROLLBACK, and goes with
// DROP VIEW.
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

	// a view created in a rolled-back transaction leaves no file
	mustExec(t, s, "BEGIN; CREATE VIEW w AS SELECT 1 AS one; CREATE OR REPLACE VIEW w AS SELECT 2 AS two")
	if got := query(t, s, "SELECT * FROM w"); !slices.Equal(got, []string{"2"}) {
		t.Errorf("w inside its transaction: %v", got)
	}
	mustExec(t, s, "ROLLBACK")
	if left, _ := filepath.Glob(filepath.Join(dir, "main", "w-*")); len(left) != 0 {
		t.Errorf("ROLLBACK left %v", left)
	}
	// committed: one metadata file, the last version's
	mustExec(t, s, "BEGIN; CREATE VIEW w AS SELECT 1 AS one; CREATE OR REPLACE VIEW w AS SELECT 2 AS two; COMMIT")
	if files, _ := filepath.Glob(filepath.Join(dir, "main", "w-*", "metadata", "*.metadata.json")); len(files) != 1 {
		t.Errorf("after COMMIT, w's metadata files are %v, want one", files)
	}
	if got := query(t, s, "SELECT * FROM w"); !slices.Equal(got, []string{"2"}) {
		t.Errorf("w after COMMIT: %v", got)
	}
	// dropped in a transaction: gone at COMMIT, with its directory
	mustExec(t, s, "BEGIN; DROP VIEW w; CREATE TABLE w_gone AS SELECT count(*) AS n FROM (SELECT 1) q WHERE NOT EXISTS (SELECT 1 FROM t WHERE false)")
	other := lk.Session()
	if got := query(t, other, "SELECT * FROM w"); !slices.Equal(got, []string{"2"}) {
		t.Errorf("another session sees w as %v before COMMIT", got)
	}
	mustExec(t, s, "COMMIT")
	if _, err := s.SQL(ctx, "SELECT * FROM w"); err == nil {
		t.Errorf("w read after its DROP VIEW committed")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "main", "w-*")); len(left) != 0 {
		t.Errorf("DROP VIEW at COMMIT left %v", left)
	}
	// a table and a view of one name in one transaction
	mustExec(t, s, "BEGIN; CREATE VIEW z AS SELECT 1 AS one")
	if _, err := s.SQL(ctx, "CREATE TABLE z (a INT)"); err == nil || !strings.Contains(err.Error(), "a view has that name") {
		t.Errorf("CREATE TABLE over a view of the transaction: %v", err)
	}
	mustExec(t, s, "ROLLBACK")

	mustExec(t, s, "DROP VIEW v")
	if left, _ := filepath.Glob(filepath.Join(dir, "main", "v-*")); len(left) != 0 {
		t.Errorf("DROP VIEW left %v", left)
	}
}

// Two transactions creating one view: the second COMMIT is a conflict
// and publishes nothing, its table write included.
func TestViewsInRacingTransactions(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	a, b := lk.Session(), lk.Session()
	mustExec(t, a, "CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
	mustExec(t, a, "BEGIN; CREATE VIEW v AS SELECT id FROM t")
	mustExec(t, b, "BEGIN; CREATE VIEW v AS SELECT id + 1 AS id FROM t; INSERT INTO t VALUES (2)")
	mustExec(t, a, "COMMIT")
	if _, err := b.SQL(ctx, "COMMIT"); err == nil || !errors.Is(err, lake.ErrCommitConflict) {
		t.Fatalf("the second COMMIT: %v, want a conflict", err)
	}
	if got := query(t, a, "SELECT (SELECT sum(id) FROM v), (SELECT count(*) FROM t)"); got[0] != "1|1" {
		t.Errorf("after the race: %v", got)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "main", "v-*", "metadata", "*.metadata.json")); len(files) != 1 {
		t.Errorf("v's metadata files: %v, want the winner's only", files)
	}
}
