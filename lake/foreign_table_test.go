package lake_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"

	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/lake"
)

// hadoopWriter is another writer's catalog: iceberg-go committing to a
// Hadoop-style table directory (metadata/vN.metadata.json and a
// version-hint.text holding N), as Spark's HadoopCatalog lays it out.
type hadoopWriter struct {
	dir string
	n   int
	cur table.Metadata
}

func (h *hadoopWriter) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	return table.New(id, h.cur, h.path(), func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil }, h), nil
}

func (h *hadoopWriter) CommitTable(_ context.Context, _ table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	for _, r := range reqs {
		if err := r.Validate(h.cur); err != nil {
			return nil, "", err
		}
	}
	next, err := table.UpdateTableMetadata(h.cur, updates, h.path())
	if err != nil {
		return nil, "", err
	}
	if err := h.write(next); err != nil {
		return nil, "", err
	}
	return next, h.path(), nil
}

func (h *hadoopWriter) path() string {
	return filepath.Join(h.dir, "metadata", fmt.Sprintf("v%d.metadata.json", h.n))
}

func (h *hadoopWriter) write(meta table.Metadata) error {
	h.n++
	body, err := meta.(interface{ MarshalJSON() ([]byte, error) }).MarshalJSON()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(h.dir, "metadata"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(h.path(), body, 0o644); err != nil {
		return err
	}
	h.cur = meta
	return os.WriteFile(filepath.Join(h.dir, "metadata", "version-hint.text"), []byte(strconv.Itoa(h.n)), 0o644)
}

// TestTableOfAnotherWriter: a table iceberg-go made with a layout of its
// own (Hadoop-style metadata names, data files in files/, written by
// pqarrow with no field ids and added with AddFiles), v2 and v3. skade
// reads it with iceberg_scan from outside the catalog, adopts it with
// register_table, and MERGEs, UPDATEs and DELETEs it in both write modes.
func TestTableOfAnotherWriter(t *testing.T) {
	ctx := context.Background()
	for _, version := range []string{"2", "3"} {
		for _, mode := range []string{"copy-on-write", "merge-on-read"} {
			t.Run("v"+version+" "+mode, func(t *testing.T) {
				lk, dir := openLake(t)
				s := lk.Session()
				loc := filepath.Join(dir, "main", "foreign")
				sch := iceberg.NewSchema(0,
					iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
					iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.Float64})
				// v3's table location is a file:// URI, as JVM engines write
				// it: skade's own files then get URIs too
				location := loc
				if version == "3" {
					location = "file://" + loc
				}
				meta, err := table.NewMetadata(sch, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, location, iceberg.Properties{
					"format-version": version, "write.merge.mode": mode, "write.update.mode": mode, "write.delete.mode": mode})
				if err != nil {
					t.Fatal(err)
				}
				h := &hadoopWriter{dir: loc}
				if err := h.write(meta); err != nil {
					t.Fatal(err)
				}
				const n = 20000
				var files []string
				for i := 0; i < 2; i++ {
					p := filepath.Join(loc, "files", fmt.Sprintf("part-%d.parquet", i))
					writeForeignParquet(t, p, n, 3000)
					files = append(files, p)
				}
				tbl, err := h.LoadTable(ctx, table.Identifier{"ext", "foreign"})
				if err != nil {
					t.Fatal(err)
				}
				txn := tbl.NewTransaction()
				if err := txn.AddFiles(ctx, files, nil, false); err != nil {
					t.Fatal(err)
				}
				if _, err := txn.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				// both files hold ids 0..n-1
				want := fmt.Sprintf("%d|%d", 2*n, n*(n-1))
				if got := query(t, s, "SELECT count(*), sum(id) FROM iceberg_scan('"+loc+"')"); !slices.Equal(got, []string{want}) {
					t.Fatalf("iceberg_scan of the directory: %v, want %s", got, want)
				}
				mustExec(t, s, "CALL system.register_table('ext_t', '"+h.path()+"')")
				mustExec(t, s, "MERGE INTO ext_t f USING (SELECT i AS id, 1.0 AS v FROM range(19990, 20010) r(i)) src ON f.id = src.id WHEN MATCHED THEN UPDATE SET v = src.v WHEN NOT MATCHED THEN INSERT VALUES (src.id, src.v)")
				mustExec(t, s, "UPDATE ext_t SET v = 2 WHERE id = 5; DELETE FROM ext_t WHERE id % 1000 = 7")
				// MERGE: 10 ids matched in both files (20 rows to v = 1) and 10
				// inserted (v = 1); UPDATE: id 5's two rows to v = 2; DELETE:
				// 20 ids of both files and the inserted 20007
				if got := query(t, s, "SELECT count(*), sum(v) FROM ext_t"); !slices.Equal(got, []string{fmt.Sprintf("%d|%d", 2*n+10-41, 20+10+4-1)}) {
					t.Errorf("after MERGE, UPDATE, DELETE: %v", got)
				}
				if version == "3" {
					if got := query(t, s, "SELECT count(*) = count(DISTINCT _row_id) FROM ext_t"); !slices.Equal(got, []string{"true"}) {
						t.Errorf("row ids not unique: %v", got)
					}
					if got := query(t, s, "SELECT count(*) FROM ext_t$files WHERE file_path LIKE 'file:///%'"); got[0] == "0" {
						t.Errorf("no file of the URI-located table has a URI path")
					}
				}
				// the directory is the table's: a second register is refused,
				// whichever way the location is spelled
				if _, err := s.SQL(ctx, "CALL system.register_table('ext_again', '"+h.path()+"')"); err == nil || !strings.Contains(err.Error(), "already uses the directory") {
					t.Errorf("a second register of the directory: %v", err)
				}
				// orphan cleanup walks the directory and keeps what is live
				stray := filepath.Join(loc, "files", "stray.parquet")
				if err := os.WriteFile(stray, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
				mustExec(t, s, "ALTER TABLE ext_t EXECUTE remove_orphan_files(older_than => '2200-01-01 00:00:00')")
				if _, err := os.Stat(stray); !os.IsNotExist(err) {
					t.Errorf("the stray file survived orphan cleanup: %v", err)
				}
				if got := query(t, s, "SELECT count(*), sum(v) FROM ext_t"); !slices.Equal(got, []string{fmt.Sprintf("%d|%d", 2*n+10-41, 20+10+4-1)}) {
					t.Errorf("after orphan cleanup: %v", got)
				}
			})
		}
	}
}

// TestFileURILake: a lake opened WithFileURIs locates its tables by
// file:// URIs, and every maintenance path works on them: writes in both
// modes, compaction, expiry, orphan cleanup, a clone, a drop with purge,
// and relocating a copy.
func TestFileURILake(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	dir := filepath.Join(base, "lake")
	lk, err := lake.Open(ctx, dir, lake.WithFileURIs())
	if err != nil {
		t.Fatal(err)
	}
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE u (id BIGINT, v VARCHAR) WITH ('write.delete.mode' = 'merge-on-read');
INSERT INTO u SELECT range, 'v' || range FROM range(1000);
INSERT INTO u SELECT range, 'w' || range FROM range(1000, 1100);
DELETE FROM u WHERE id % 10 = 0;
UPDATE u SET v = 'u' WHERE id % 10 = 1;
MERGE INTO u USING (SELECT range AS id FROM range(1095, 1105)) s ON u.id = s.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'new')`)
	want := query(t, s, "SELECT count(*), sum(id), count(*) FILTER (WHERE v = 'u') FROM u")
	if got := query(t, s, "SELECT count(*) FROM u$files WHERE file_path NOT LIKE 'file:///%'"); got[0] != "0" {
		t.Fatalf("%s files of u have plain paths", got[0])
	}
	tbl, err := lk.Table(ctx, "u")
	if err != nil {
		t.Fatal(err)
	}
	if loc := tbl.Iceberg().Location(); !strings.HasPrefix(loc, "file:///") {
		t.Fatalf("u's location %s", loc)
	}
	stray := filepath.Join(strings.TrimPrefix(tbl.Iceberg().Location(), "file://"), "data", "stray.parquet")
	if err := os.WriteFile(stray, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustExec(t, s, `CREATE TABLE uc CLONE u;
ALTER TABLE u EXECUTE compact;
ALTER TABLE u EXECUTE expire_snapshots(older_than => '2200-01-01 00:00:00', retain_last => 1);
ALTER TABLE u EXECUTE remove_orphan_files(older_than => '2200-01-01 00:00:00')`)
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("the stray file survived orphan cleanup: %v", err)
	}
	for _, q := range []string{"SELECT count(*), sum(id), count(*) FILTER (WHERE v = 'u') FROM u", "SELECT count(*), sum(id), count(*) FILTER (WHERE v = 'u') FROM uc"} {
		if got := query(t, s, q); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	mustExec(t, s, "DROP TABLE u")
	if got := query(t, s, "SELECT count(*), sum(id), count(*) FILTER (WHERE v = 'u') FROM uc"); !slices.Equal(got, want) {
		t.Errorf("the clone after its source was purged: %v, want %v", got, want)
	}
	if err := lk.Close(); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(base, "copy")
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	lk2, err := lake.Open(ctx, cp)
	if err != nil {
		t.Fatal(err)
	}
	defer lk2.Close()
	if _, err := lk2.Relocate(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if got := query(t, lk2.Session(), "SELECT count(*), sum(id), count(*) FILTER (WHERE v = 'u') FROM uc"); !slices.Equal(got, want) {
		t.Errorf("the relocated copy: %v, want %v", got, want)
	}
}
