package lake_test

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skadedb/skade/internal/s3test"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/objstore"
)

// splitDefaults give small tables multi-row-group, multi-split files.
var splitDefaults = map[string]string{
	"write.parquet.row-group-limit": "500",
	"read.split.target-size":        "1",
}

func openS3Lake(t *testing.T, srv *s3test.Server, prefix string, opts ...lake.Option) (*lake.Lake, string) {
	t.Helper()
	catalogFile := filepath.Join(t.TempDir(), "catalog.db")
	lk, err := lake.Open(context.Background(), "s3://"+s3test.Bucket+"/"+prefix,
		append([]lake.Option{lake.WithCatalogFile(catalogFile)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lk.Close() })
	return lk, catalogFile
}

// TestObjectStoreMatchesDisk runs the same writes (INSERT, copy-on-write
// and merge-on-read MERGE, UPDATE, DELETE, on a plain and a partitioned
// table, v2 and v3) on a lake on disk and a lake in a real S3-compatible
// server, and checks after every statement that both hold the same rows;
// then that the files are objects in the store, and nothing of the
// tables is on local disk.
func TestObjectStoreMatchesDisk(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	s3lk, catalogFile := openS3Lake(t, srv, "same", lake.WithTableDefaults(splitDefaults))
	disk, err := lake.Open(ctx, filepath.Join(t.TempDir(), "lake"), lake.WithTableDefaults(splitDefaults))
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	onS3, onDisk := s3lk.Session(), disk.Session()
	steps := []string{
		`CREATE TABLE plain (id BIGINT, v VARCHAR, n INTEGER)`,
		`CREATE TABLE part (id BIGINT, v VARCHAR, n INTEGER) PARTITIONED BY (bucket(4, id))`,
		`CREATE TABLE mor3 (id BIGINT, v VARCHAR, n INTEGER) WITH ('format-version' = '3', 'write.merge.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.delete.mode' = 'merge-on-read')`,
		`INSERT INTO plain SELECT i, 'v' || i, (i % 7)::INTEGER FROM range(0, 6000) r(i)`,
		`INSERT INTO part SELECT * FROM plain`,
		`INSERT INTO mor3 SELECT * FROM plain`,
		`CREATE TABLE src AS SELECT i * 37 % 7000 AS id, 'm' || i AS v, (i % 5)::INTEGER AS n FROM range(0, 400) r(i)`,
		`MERGE INTO plain t USING src s ON t.id = s.id WHEN MATCHED AND s.n = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET v = s.v, n = s.n WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v, s.n)`,
		`MERGE INTO part t USING src s ON t.id = s.id WHEN MATCHED AND s.n = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET v = s.v, n = s.n WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v, s.n)`,
		`MERGE INTO mor3 t USING src s ON t.id = s.id WHEN MATCHED AND s.n = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET v = s.v, n = s.n WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v, s.n)`,
		`UPDATE plain SET n = n + 100 WHERE id % 11 = 3`,
		`UPDATE part SET n = n + 100 WHERE id % 11 = 3`,
		`UPDATE mor3 SET n = n + 100 WHERE id % 11 = 3`,
		// update-only MERGEs whose clauses read no SET column: patched
		// sparse, each patch reading its row group's SET chunks itself
		`EXPLAIN ANALYZE MERGE INTO plain t USING src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v || 'x', n = s.n + 1`,
		`EXPLAIN ANALYZE MERGE INTO part t USING src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v || 'x', n = s.n + 1`,
		`DELETE FROM plain WHERE id BETWEEN 1000 AND 1500`,
		`DELETE FROM part WHERE id BETWEEN 1000 AND 1500`,
		`DELETE FROM mor3 WHERE id BETWEEN 1000 AND 1500`,
		`ALTER TABLE plain SET ('write.merge.mode' = 'merge-on-read', 'write.delete.mode' = 'merge-on-read')`,
		`MERGE INTO plain t USING (SELECT id + 1 AS id, v FROM src) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 'again' WHEN NOT MATCHED BY SOURCE AND t.id < 50 THEN DELETE`,
		`DELETE FROM plain WHERE n = 3`,
	}
	check := func(step string) {
		t.Helper()
		for _, tbl := range []string{"plain", "part", "mor3"} {
			q := fmt.Sprintf(`SELECT count(*), sum(id), sum(n), count(DISTINCT v), min(v), max(v) FROM %s`, tbl)
			a, b := query(t, onS3, q), query(t, onDisk, q)
			if !slices.Equal(a, b) {
				t.Fatalf("after %s: %s differs\n  s3:   %v\n  disk: %v", step, tbl, a, b)
			}
		}
	}
	sparse := regexp.MustCompile(`\((\d+) sparse\)`)
	for _, st := range steps {
		mustExec(t, onDisk, st)
		if strings.HasPrefix(st, "EXPLAIN ANALYZE") {
			plan := strings.Join(query(t, onS3, st), "\n")
			if m := sparse.FindStringSubmatch(plan); m == nil || m[1] == "0" {
				t.Fatalf("%s: no row group patched sparse on s3:\n%s", st, plan)
			}
		} else {
			mustExec(t, onS3, st)
		}
		if strings.HasPrefix(st, "CREATE TABLE src") || strings.HasPrefix(st, "CREATE TABLE") && !strings.Contains(st, "src") {
			continue
		}
		check(st)
	}
	full := `SELECT * FROM plain ORDER BY id`
	if a, b := query(t, onS3, full), query(t, onDisk, full); !slices.Equal(a, b) {
		t.Fatalf("plain differs row by row: %d rows on s3, %d on disk", len(a), len(b))
	}
	// time travel reads the store's older metadata and files
	if got := query(t, onS3, `SELECT count(*) FROM plain FOR VERSION AS OF (SELECT snapshot_id FROM plain$snapshots ORDER BY committed_at LIMIT 1)`); !slices.Equal(got, []string{"6000"}) {
		t.Fatalf("the first snapshot of plain has %v rows, want 6000", got)
	}

	keys := srv.Keys(t, "same/")
	var parquet, metadata, manifests, copies int
	for _, k := range keys {
		if strings.HasSuffix(k, "-rgcopy.parquet") {
			copies++ // copy-on-write's verbatim row-group copies (rgcopy.go)
		}
		switch {
		case strings.HasSuffix(k, ".parquet"):
			parquet++
		case strings.HasSuffix(k, ".metadata.json"):
			metadata++
		case strings.HasSuffix(k, ".avro"):
			manifests++
		}
	}
	if copies == 0 {
		t.Fatal("no copy-on-write rewrite copied row groups in the store")
	}
	if parquet < 12 || metadata < 10 || manifests < 10 {
		t.Fatalf("the store holds %d Parquet, %d metadata and %d manifest files; want the tables' files there", parquet, metadata, manifests)
	}
	// the catalog's directory holds the catalog file and nothing else
	err = filepath.WalkDir(filepath.Dir(catalogFile), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && p != catalogFile {
			t.Errorf("a file of the lake is on local disk: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// the files $files names are the store's
	paths := query(t, onS3, `SELECT file_path FROM part$files`)
	if len(paths) == 0 || !strings.HasPrefix(paths[0], "s3://lake/same/main/part-") {
		t.Fatalf("part$files names %v; want s3://lake/same/main/part-… locations", paths)
	}

	// a purge removes the table's objects
	if err := s3lk.DropTable(ctx, "src", true); err != nil {
		t.Fatal(err)
	}
	if len(srv.Keys(t, "same/main/part-")) == 0 {
		t.Fatal("the check below looks at the wrong keys")
	}
	for _, k := range srv.Keys(t, "same/main/src-") {
		t.Errorf("purged table left %s", k)
	}
}

// A query that reads one column of a wide table downloads that column's
// chunks and the footers, not the files.
func TestObjectStoreProjection(t *testing.T) {
	srv := s3test.Start(t)
	lk, _ := openS3Lake(t, srv, "proj")
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE wide (id BIGINT, pad VARCHAR) WITH ('write.parquet.compression-codec' = 'uncompressed');
		INSERT INTO wide SELECT i, repeat(md5(i::VARCHAR), 20) FROM range(0, 20000) r(i)`)
	total, err := strconv.ParseInt(query(t, s, `SELECT sum(file_size_in_bytes) FROM wide$files`)[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := lk.ObjectStoreStats()
	if got := query(t, s, `SELECT sum(id) FROM wide`); !slices.Equal(got, []string{"199990000"}) {
		t.Fatalf("sum(id) = %v", got)
	}
	after, _ := lk.ObjectStoreStats()
	d := after.Sub(before)
	t.Logf("data files: %d bytes; a one-column query read %v", total, d)
	if d.BytesRead*5 > total {
		t.Fatalf("a one-column query read %d bytes of %d bytes of data files; want well under a fifth", d.BytesRead, total)
	}
	if d.PUTs != 0 {
		t.Fatalf("a query wrote to the store: %v", d)
	}
}

// A query closed early (its LIMIT met) stops reading: the readers that
// had begun other ranges of the file stop at their next column chunk
// instead of decoding their ranges to the end (scan/cancel_io.go).
func TestObjectStoreLimitStopsReading(t *testing.T) {
	srv := s3test.Start(t)
	// small row groups and batches, and the file read as one task
	// (iceberg-go's default split size)
	lk, _ := openS3Lake(t, srv, "limit", lake.WithTableDefaults(map[string]string{
		"write.parquet.row-group-limit": "500", "read.parquet.batch-size": "1000"}))
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE t (id BIGINT, v VARCHAR, x DOUBLE) WITH ('write.parquet.compression-codec' = 'uncompressed');
		INSERT INTO t SELECT i, md5(i::VARCHAR), i * 0.5 FROM range(0, 60000) r(i)`)
	if got := query(t, s, `SELECT count(*) FROM t$files`); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("data files %v, want one (the test reads one file's ranges)", got)
	}
	read := func(q string, want []string) int64 {
		t.Helper()
		before, _ := lk.ObjectStoreStats()
		got := query(t, s, q)
		after, _ := lk.ObjectStoreStats()
		if want != nil && !slices.Equal(got, want) {
			t.Fatalf("%s = %v, want %v", q, got, want)
		}
		if len(got) == 0 {
			t.Fatalf("%s returned nothing", q)
		}
		return after.Sub(before).BytesRead
	}
	maxV := ""
	for i := range 60000 {
		maxV = max(maxV, fmt.Sprintf("%x", md5.Sum([]byte(strconv.Itoa(i)))))
	}
	whole := read(`SELECT sum(id), max(v), count(x) FROM t`, []string{"1799970000|" + maxV + "|60000"})
	for _, q := range []string{`SELECT * FROM t LIMIT 1`, `SELECT id, v FROM t WHERE x >= 0 LIMIT 5`} {
		got := read(q, nil)
		t.Logf("%s read %d bytes; the whole scan %d", q, got, whole)
		if got*4 > whole {
			t.Errorf("%s read %d bytes, the whole scan %d: want well under a quarter", q, got, whole)
		}
	}
}

// A statement that fails in the middle of writing (the store refuses its
// PUTs) leaves the table at its last commit and no object behind; so does
// the loser of two racing writers.
func TestObjectStoreFailuresLeaveNothing(t *testing.T) {
	srv := s3test.Start(t)
	proxy := s3test.NewProxy(t, srv.Endpoint)
	srv.SetEnv(t, proxy.URL)
	lk, _ := openS3Lake(t, srv, "fail", lake.WithObjectStore(objstore.Config{MaxAttempts: 1}), lake.WithTableDefaults(splitDefaults))
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE t (id BIGINT, v VARCHAR);
		INSERT INTO t SELECT i, 'v' || i FROM range(0, 3000) r(i)`)
	// a merge-on-read table: its position deletes are written beside its
	// updated and inserted rows (mergeinto's finishWrites)
	mustExec(t, s, `CREATE TABLE m (id BIGINT, v VARCHAR) WITH ('write.merge.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read');
		INSERT INTO m SELECT i, 'v' || i FROM range(0, 3000) r(i)`)
	before := srv.Keys(t, "fail/")
	want := query(t, s, `SELECT count(*), sum(id), max(v) FROM t`)
	wantM := query(t, s, `SELECT count(*), sum(id), max(v) FROM m`)

	for _, fault := range []int{1, 2, 3} {
		for _, st := range []string{
			`INSERT INTO t SELECT i, 'w' || i FROM range(3000, 9000) r(i)`,
			`UPDATE t SET v = 'u' WHERE id % 3 = 0`,
			`MERGE INTO t USING (SELECT i AS id FROM range(0, 6000, 2) r(i)) s ON t.id = s.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'new')`,
			`MERGE INTO m USING (SELECT i AS id FROM range(0, 6000, 2) r(i)) s ON m.id = s.id WHEN MATCHED THEN UPDATE SET v = 'u' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'new')`,
			`UPDATE m SET v = 'u' WHERE id % 3 = 0`,
		} {
			proxy.Faults(fault, 0, 0, false)
			err := s.Exec(context.Background(), st)
			proxy.Faults(0, 0, 0, false)
			if err == nil {
				// the store let every PUT of this statement through
				// (the fault count fell between them): undo it
				t.Fatalf("%s succeeded with every %dth PUT failing", st, fault)
			}
			if !strings.Contains(err.Error(), "SlowDown") {
				t.Errorf("%s: the error does not say what the store answered: %v", st, err)
			}
			if got := query(t, s, `SELECT count(*), sum(id), max(v) FROM t`); !slices.Equal(got, want) {
				t.Fatalf("after a failed %s the table holds %v, want %v", st, got, want)
			}
			if got := query(t, s, `SELECT count(*), sum(id), max(v) FROM m`); !slices.Equal(got, wantM) {
				t.Fatalf("after a failed %s table m holds %v, want %v", st, got, wantM)
			}
			if after := srv.Keys(t, "fail/"); !slices.Equal(after, before) {
				t.Fatalf("a failed %s left objects behind: %v", st, added(before, after))
			}
		}
	}

	// two sessions race to change the same rows: one wins, the loser's
	// files go
	a, b := lk.Session(), lk.Session()
	k0 := srv.Keys(t, "fail/")
	mustExec(t, a, `BEGIN; UPDATE t SET v = 'a' WHERE id < 100`)
	k1 := srv.Keys(t, "fail/")
	mustExec(t, b, `UPDATE t SET v = 'b' WHERE id < 100`)
	k2 := srv.Keys(t, "fail/")
	err := a.Exec(context.Background(), `COMMIT`)
	if !errors.Is(err, lake.ErrCommitConflict) {
		t.Fatalf("the second writer's COMMIT: %v, want ErrCommitConflict", err)
	}
	if got := query(t, s, `SELECT DISTINCT v FROM t WHERE id < 100`); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("rows the winner changed hold %v", got)
	}
	// the loser had written its files before the winner committed
	if len(added(k0, k1)) == 0 {
		t.Fatal("the transaction's UPDATE wrote nothing before COMMIT; the check below checks nothing")
	}
	want = append(slices.Clone(k0), added(k1, k2)...)
	slices.Sort(want)
	if after := srv.Keys(t, "fail/"); !slices.Equal(after, want) {
		t.Fatalf("after the loser's COMMIT the store holds %d objects, want %d: left behind %v, lost %v",
			len(after), len(want), added(want, after), added(after, want))
	}
}

func added(before, after []string) []string {
	var out []string
	for _, k := range after {
		if !slices.Contains(before, k) {
			out = append(out, k)
		}
	}
	return out
}

// Writers in two lakes opened on the same catalog file and prefix (as two
// processes would) append concurrently; every committed row is there once.
func TestObjectStoreConcurrentWriters(t *testing.T) {
	s3test.Start(t)
	catalogFile := filepath.Join(t.TempDir(), "catalog.db")
	open := func() *lake.Lake {
		lk, err := lake.Open(context.Background(), "s3://lake/shared", lake.WithCatalogFile(catalogFile))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lk.Close() })
		return lk
	}
	l1, l2 := open(), open()
	mustExec(t, l1.Session(), `CREATE TABLE t (w INTEGER, i BIGINT)`)
	writeConcurrently(t, []*lake.Lake{l1, l2}, 8, 3, func(w, r int) string {
		return fmt.Sprintf(`INSERT INTO t SELECT %d, i FROM range(%d, %d) r(i)`, w, r*100, r*100+100)
	})
	if got := query(t, l2.Session(), `SELECT count(*), count(DISTINCT w * 1000 + i) FROM t`); !slices.Equal(got, []string{"2400|2400"}) {
		t.Fatalf("after 8 writers × 3 inserts of 100 rows: %v, want 2400|2400", got)
	}
}

func TestObjectStoreOpenErrors(t *testing.T) {
	ctx := context.Background()
	_, err := lake.Open(ctx, "s3://lake/x")
	if !errors.Is(err, lake.ErrInvalidArgument) || !strings.Contains(err.Error(), "--catalog FILE") {
		t.Fatalf("s3 lake without a catalog file: %v", err)
	}
	_, err = lake.Open(ctx, "s3://lake/x", lake.WithCatalogFile(filepath.Join(t.TempDir(), "none.db")), lake.WithoutCreate())
	if !errors.Is(err, lake.ErrLakeNotFound) {
		t.Fatalf("WithoutCreate and no catalog file: %v, want ErrLakeNotFound", err)
	}
	_, err = lake.Open(ctx, "s3://lake/a/../b", lake.WithCatalogFile(filepath.Join(t.TempDir(), "c.db")))
	if err == nil || !strings.Contains(err.Error(), "not clean") {
		t.Fatalf("unclean prefix: %v", err)
	}
	dir := t.TempDir()
	_, err = lake.Open(ctx, "s3://lake/x", lake.WithCatalogFile(dir))
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("catalog file that is a directory: %v", err)
	}

	// a new catalog file on a prefix that already holds a lake is refused
	srv := s3test.Start(t)
	lk, _ := openS3Lake(t, srv, "owned")
	mustExec(t, lk.Session(), `CREATE TABLE t (a INT); INSERT INTO t VALUES (1)`)
	_, err = lake.Open(ctx, "s3://lake/owned", lake.WithCatalogFile(filepath.Join(t.TempDir(), "other.db")))
	if !errors.Is(err, lake.ErrCatalogMissing) || !strings.Contains(err.Error(), "already holds files") {
		t.Fatalf("a second catalog on an owned prefix: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "other.db")); err == nil {
		t.Fatal("the refused catalog file was created")
	}

	// the store down: a clear error, and nothing changes
	proxy := s3test.NewProxy(t, srv.Endpoint)
	srv.SetEnv(t, proxy.URL)
	down, err := lake.Open(ctx, "s3://lake/owned", lake.WithCatalogFile(catalogOf(t, lk)), lake.WithObjectStore(objstore.Config{MaxAttempts: 2, MaxBackoff: time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	proxy.Faults(0, 0, 0, true)
	_, err = down.Session().SQL(ctx, `SELECT * FROM t`)
	proxy.Faults(0, 0, 0, false)
	if err == nil || !strings.Contains(err.Error(), "injected outage") {
		t.Fatalf("a query with the store down: %v", err)
	}
}

func catalogOf(t *testing.T, lk *lake.Lake) string {
	t.Helper()
	return filepath.Join(lk.Catalog().Dir(), "catalog.db")
}

// writeConcurrently runs writers goroutines, each with its own session on
// one of lakes in turn, each running stmt(writer, round) for rounds
// rounds; any failed statement fails the test.
func writeConcurrently(t *testing.T, lakes []*lake.Lake, writers, rounds int, stmt func(w, r int) string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := lakes[w%len(lakes)].Session()
			for r := range rounds {
				if err := s.Exec(context.Background(), stmt(w, r)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent write: %v", err)
	}
}
