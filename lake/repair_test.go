package lake_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skadedb/skade/lake"
)

// lakeFiles hashes every file under dir but the catalog files, by path.
func lakeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), "catalog.db") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%x", sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newRepairLake makes a lake with tables in two namespaces, one with a
// history of several commits, and returns its directory and the rows.
func newRepairLake(t *testing.T) (string, []string) {
	lk, dir := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE a AS SELECT * FROM generate_series(1, 50) g(x);
		UPDATE a SET x = x + 100 WHERE x <= 10; DELETE FROM a WHERE x = 20;
		CREATE SCHEMA other; CREATE TABLE other.b (k INTEGER, v VARCHAR); INSERT INTO other.b VALUES (1, 'one'), (2, NULL)`)
	want := query(t, s, "SELECT (SELECT count(*) || '/' || sum(x) FROM a) || ' ' || (SELECT count(*) FROM other.b)")
	lk.Close()
	return dir, want
}

func TestMissingOrEmptyCatalogRefusesAndRepairRestores(t *testing.T) {
	ctx := context.Background()
	for _, damage := range []string{"deleted", "empty"} {
		t.Run(damage, func(t *testing.T) {
			dir, want := newRepairLake(t)
			db := filepath.Join(dir, "catalog.db")
			if damage == "deleted" {
				if err := os.Remove(db); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Truncate(db, 0); err != nil {
				t.Fatal(err)
			}
			before := lakeFiles(t, dir)
			_, err := lake.Open(ctx, dir)
			if !errors.Is(err, lake.ErrCatalogMissing) {
				t.Fatalf("open with the catalog %s: want ErrCatalogMissing, got %v", damage, err)
			}
			for _, s := range []string{"catalog.db is missing or empty", "main.a", "other.b", "skade repair"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if after := lakeFiles(t, dir); !maps.Equal(before, after) {
				t.Fatal("a refused open changed the lake's files")
			}
			if damage == "deleted" {
				if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a refused open created %s: %v", db, err)
				}
			}
			p, err := lake.PlanRepair(dir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, ft := range p.Tables {
				names = append(names, strings.Join(ft.Ident, "."))
			}
			if !slices.Equal(names, []string{"main.a", "other.b"}) {
				t.Fatalf("repair found %v", names)
			}
			if len(p.CatalogProblems) != 0 {
				t.Errorf("problems reported for a %s catalog: %v", damage, p.CatalogProblems)
			}
			if _, err := lake.Repair(ctx, p); err != nil {
				t.Fatal(err)
			}
			if again, err := lake.PlanRepair(dir); err != nil || len(again.CatalogProblems) != 0 {
				t.Errorf("the repaired catalog: %v, %v", again.CatalogProblems, err)
			}
			lk, err := lake.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer lk.Close()
			s := lk.Session()
			if got := query(t, s, "SELECT (SELECT count(*) || '/' || sum(x) FROM a) || ' ' || (SELECT count(*) FROM other.b)"); !slices.Equal(got, want) {
				t.Fatalf("after repair: %v, want %v", got, want)
			}
			// the repaired tables take writes and keep their history
			mustExec(t, s, "INSERT INTO a VALUES (1000)")
			if got := query(t, s, "SELECT count(*) FROM a$snapshots"); len(got) != 1 || got[0] == "1" {
				t.Errorf("history after repair: %v", got)
			}
		})
	}
}

func TestDamagedCatalogIsAnErrorNotAPanic(t *testing.T) {
	ctx := context.Background()
	for _, at := range []int64{0, 2 * 4096, 4 * 4096} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			dir, want := newRepairLake(t)
			db := filepath.Join(dir, "catalog.db")
			f, err := os.OpenFile(db, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			junk := make([]byte, 6*4096)
			for i := range junk {
				junk[i] = byte(i*7919 + 13)
			}
			if _, err := f.WriteAt(junk, at); err != nil {
				t.Fatal(err)
			}
			f.Close()
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic on a damaged catalog: %v", r)
					}
				}()
				lk, err := lake.Open(ctx, dir)
				if err == nil {
					_, err = lk.Tables(ctx)
					if err == nil {
						_, err = lk.Session().SQL(ctx, "SELECT count(*) FROM a")
					}
					lk.Close()
				}
				if !errors.Is(err, lake.ErrCatalogDamaged) {
					t.Fatalf("want ErrCatalogDamaged, got %v", err)
				}
				if !strings.Contains(err.Error(), "catalog.db is damaged") || !strings.Contains(err.Error(), "skade repair") {
					t.Errorf("error does not say what and what to do: %v", err)
				}
			}()
			p, err := lake.PlanRepair(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.CatalogProblems) == 0 {
				t.Error("bbolt's check found nothing wrong with the damaged catalog")
			}
			kept, err := lake.Repair(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(kept); err != nil {
				t.Errorf("the damaged catalog was not kept aside: %v", err)
			}
			lk, err := lake.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer lk.Close()
			if got := query(t, lk.Session(), "SELECT (SELECT count(*) || '/' || sum(x) FROM a) || ' ' || (SELECT count(*) FROM other.b)"); !slices.Equal(got, want) {
				t.Fatalf("after repair: %v, want %v", got, want)
			}
		})
	}
}

// A table directory the catalog does not name but whose metadata is
// valid is never cleaned without ForceTableDirs.
func TestOrphanDirsKeepTablesTheCatalogDoesNotName(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE kept AS SELECT * FROM generate_series(1, 10) g(x)")
	if err := lk.DropTable(ctx, "kept", false /* purge */); err != nil {
		t.Fatal(err)
	}
	before := lakeFiles(t, dir)
	res, err := lk.RemoveOrphanTableDirs(ctx, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.DeletedFiles) != 0 || len(res.Kept) != 1 || !strings.Contains(res.Kept[0], "kept-") {
		t.Fatalf("deleted %v, kept %v", res.DeletedFiles, res.Kept)
	}
	if after := lakeFiles(t, dir); !maps.Equal(before, after) {
		t.Fatal("files of a table directory with metadata were deleted")
	}
	res, err = lk.RemoveOrphanTableDirs(ctx, time.Now().Add(time.Hour), lake.ForceTableDirs())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.DeletedFiles) == 0 || len(lakeFiles(t, dir)) != 0 {
		t.Fatalf("forced: deleted %v, left %v", res.DeletedFiles, lakeFiles(t, dir))
	}
}
