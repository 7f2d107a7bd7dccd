package lake_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/scan"
)

// The reproduction: 600,000 rows in one file, split into 64 KiB
// scan tasks. Copy-on-write UPDATE, DELETE and MERGE once read one split
// and replaced the whole file; every write path must keep every row, in
// both modes, v2 and v3, partitioned and not. On v3 every row must also
// keep its _row_id through every write, and ids stay unique.
func TestWritesKeepEveryRowOfSplitFiles(t *testing.T) {
	n := 600000
	if testing.Short() {
		n = 120000
	}
	cases := []struct{ mode, version, part string }{
		{"copy-on-write", "2", ""},
		{"merge-on-read", "2", ""},
		{"merge-on-read", "3", ""},
		{"copy-on-write", "3", ""},
		{"copy-on-write", "2", "PARTITIONED BY (bucket(2, id))"},
		{"merge-on-read", "3", "PARTITIONED BY (bucket(2, id))"},
		{"copy-on-write", "3", "PARTITIONED BY (bucket(2, id))"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s-v%s-%t", c.mode, c.version, c.part != ""), func(t *testing.T) {
			lk, _ := openLake(t)
			s := lk.Session()
			mustExec(t, s, fmt.Sprintf(`CREATE TABLE s (id BIGINT, v DOUBLE) %s WITH ('format-version' = '%s',
				'write.parquet.row-group-limit' = '20000', 'read.split.target-size' = '65536',
				'write.update.mode' = '%s', 'write.delete.mode' = '%s', 'write.merge.mode' = '%s')`, c.part, c.version, c.mode, c.mode, c.mode))
			mustExec(t, s, fmt.Sprintf("INSERT INTO s SELECT i, 0 FROM range(%d) r(i)", n))
			if c.version == "3" {
				mustExec(t, s, "CREATE TABLE ids AS SELECT id, _row_id AS rid FROM s")
			}
			check := func(step string, rows, sum string) {
				t.Helper()
				if got := query(t, s, "SELECT count(*), sum(v) FROM s"); !slices.Equal(got, []string{rows + "|" + sum}) {
					t.Fatalf("after %s: count|sum = %v, want %s|%s", step, got, rows, sum)
				}
				if c.version != "3" {
					return
				}
				// every row keeps the id it was inserted with, and no
				// id is NULL or repeated
				if got := query(t, s, "SELECT count(*) FROM s JOIN ids ON s.id = ids.id WHERE s._row_id IS DISTINCT FROM ids.rid"); !slices.Equal(got, []string{"0"}) {
					t.Fatalf("after %s: %v rows changed their _row_id", step, got)
				}
				if got := query(t, s, "SELECT count(*) - count(DISTINCT _row_id) FROM s"); !slices.Equal(got, []string{"0"}) {
					t.Fatalf("after %s: %v repeated or NULL _row_ids", step, got)
				}
			}
			files := query(t, s, "SELECT split_offsets FROM s$files WHERE content = 0")
			if len(files) == 0 || !strings.Contains(files[0], ",") {
				t.Fatalf("want files of several row groups: %v", files)
			}
			N := fmt.Sprint(n)
			mustExec(t, s, "UPDATE s SET v = 1 WHERE id < 100")
			check("UPDATE", N, "100")
			mustExec(t, s, fmt.Sprintf("DELETE FROM s WHERE id >= %d", n-10))
			check("DELETE", fmt.Sprint(n-10), "100")
			mustExec(t, s, "MERGE INTO s USING (SELECT i AS id FROM range(0, 1000, 10) r(i)) src ON s.id = src.id WHEN MATCHED THEN UPDATE SET v = 2")
			// ids 0, 10, …, 990 become 2; ten of them (below 100) were 1
			check("MERGE", fmt.Sprint(n-10), "290")
			if c.version == "3" {
				// the rows the MERGE changed took its sequence number;
				// the others kept theirs
				if got := query(t, s, "SELECT v, count(DISTINCT _last_updated_sequence_number), min(_last_updated_sequence_number) FROM s GROUP BY v ORDER BY v"); !slices.Equal(got, []string{"0|1|1", "1|1|2", "2|1|4"}) {
					t.Fatalf("sequence numbers by value after MERGE: %v", got)
				}
			}
			mustExec(t, s, "UPDATE s SET v = v + 1 FROM (SELECT i AS id FROM range(50, 60) r(i)) u WHERE s.id = u.id")
			check("UPDATE … FROM", fmt.Sprint(n-10), "300")
			if c.mode == "merge-on-read" {
				mustExec(t, s, "ALTER TABLE s EXECUTE compact")
				check("compact", fmt.Sprint(n-10), "300")
			}
			mustExec(t, s, "TRUNCATE s")
			check("TRUNCATE", "0", "(null)")
		})
	}
}

// A file written by another writer, with its own row groups (pqarrow with
// 5,000 rows a group, no Iceberg field ids), added to a table and then
// merged into with small splits.
func TestMergeIntoAFileOfAnotherWriter(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		t.Run(mode, func(t *testing.T) {
			lk, _ := openLake(t)
			s := lk.Session()
			mustExec(t, s, fmt.Sprintf(`CREATE TABLE f (id BIGINT, v DOUBLE) WITH ('read.split.target-size' = '16384', 'write.merge.mode' = '%s', 'write.delete.mode' = '%s')`, mode, mode))
			tbl, err := lk.Table(ctx, "f")
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(tbl.Iceberg().Location(), "data", "foreign.parquet")
			const n = 100000
			writeForeignParquet(t, path, n, 5000)
			txn := tbl.Iceberg().NewTransaction()
			if err := txn.AddFiles(ctx, []string{path}, nil, false); err != nil {
				t.Fatal(err)
			}
			if _, err := txn.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if got := query(t, s, "SELECT count(*), sum(id) FROM f"); !slices.Equal(got, []string{fmt.Sprintf("%d|%d", n, n*(n-1)/2)}) {
				t.Fatalf("foreign file reads as %v", got)
			}
			mustExec(t, s, "MERGE INTO f USING (SELECT i AS id, 1.0 AS v FROM range(99990, 100010) r(i)) src ON f.id = src.id WHEN MATCHED THEN UPDATE SET v = src.v WHEN NOT MATCHED THEN INSERT VALUES (src.id, src.v)")
			if got := query(t, s, "SELECT count(*), sum(v) FROM f"); !slices.Equal(got, []string{fmt.Sprintf("%d|20", n+10)}) {
				t.Fatalf("after MERGE: %v", got)
			}
			mustExec(t, s, "DELETE FROM f WHERE id % 1000 = 7")
			// 100 of the file's ids and the inserted 100007
			if got := query(t, s, "SELECT count(*) FROM f"); !slices.Equal(got, []string{fmt.Sprint(n + 10 - 101)}) {
				t.Fatalf("after DELETE: %v", got)
			}
		})
	}
}

func writeForeignParquet(t *testing.T, path string, n, rowGroup int) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(int64(rowGroup))), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	ids := array.NewInt64Builder(memory.DefaultAllocator)
	vs := array.NewFloat64Builder(memory.DefaultAllocator)
	for i := 0; i < n; i++ {
		ids.Append(int64(i))
		vs.Append(0)
	}
	rec := array.NewRecordBatch(sc, []arrow.Array{ids.NewArray(), vs.NewArray()}, int64(n))
	if err := w.WriteBuffered(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// The row-count ledger refuses a copy-on-write commit whose new files do
// not hold the rows they must, and the failed statement leaves the lake
// as it was.
func TestLedgerRefusesAMismatchedCommit(t *testing.T) {
	lk, dir := openLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE l AS SELECT i AS id, 0 AS v FROM range(1000) r(i)")
	before := lakeFiles(t, dir)
	mergeinto.TestHookLedger = func(written int64) int64 { return written - 1 }
	defer func() { mergeinto.TestHookLedger = nil }()
	for _, stmt := range []string{
		"UPDATE l SET v = 1 WHERE id = 5",
		"DELETE FROM l WHERE id = 6",
		"MERGE INTO l USING (SELECT 7 AS id) src ON l.id = src.id WHEN MATCHED THEN UPDATE SET v = 2",
	} {
		_, err := s.SQL(context.Background(), stmt)
		if err == nil || !strings.Contains(err.Error(), "refusing to commit") || !strings.Contains(err.Error(), "nothing was committed") {
			t.Fatalf("%s: want the ledger's refusal, got %v", stmt, err)
		}
		if after := lakeFiles(t, dir); len(after) != len(before) {
			t.Fatalf("%s: a refused commit left files behind: %d files, was %d", stmt, len(after), len(before))
		}
	}
	mergeinto.TestHookLedger = nil
	if got := query(t, s, "SELECT count(*), sum(v) FROM l"); !slices.Equal(got, []string{"1000|0"}) {
		t.Fatalf("after refused commits: %v", got)
	}
	// compaction is held to the same count, through its snapshot summary
	mustExec(t, s, "ALTER TABLE l SET ('write.delete.mode' = 'merge-on-read'); DELETE FROM l WHERE id < 10")
	before = lakeFiles(t, dir)
	mergeinto.TestHookLedger = func(written int64) int64 { return written + 1 }
	_, err := s.SQL(context.Background(), "ALTER TABLE l EXECUTE compact")
	mergeinto.TestHookLedger = nil
	if err == nil || !strings.Contains(err.Error(), "refusing to commit") {
		t.Fatalf("compact: want the ledger's refusal, got %v", err)
	}
	if after := lakeFiles(t, dir); len(after) != len(before) {
		t.Fatalf("a refused compaction left files behind: %d files, was %d", len(after), len(before))
	}
	if got := query(t, s, "SELECT count(*) FROM l"); !slices.Equal(got, []string{"990"}) {
		t.Fatalf("after the refused compaction: %v", got)
	}
}

// A query over a file planned as several splits counts it as one file in
// its progress, planned and done.
func TestProgressCountsFilesNotSplits(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE p (id BIGINT, v DOUBLE) WITH ('write.parquet.row-group-limit' = '1000', 'read.split.target-size' = '4096');
		INSERT INTO p SELECT i, i FROM range(20000) r(i)`)
	files := query(t, s, "SELECT count(*) FROM p$files")
	var p lake.Progress
	ctx := lake.WithProgress(context.Background(), &p)
	res, err := s.SQL(ctx, "SELECT sum(v) FROM p WHERE v >= 0")
	if err != nil {
		t.Fatal(err)
	}
	batches, err := res.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		b.Release()
	}
	if got := fmt.Sprintf("%d/%d", p.FilesDone.Load(), p.FilesTotal.Load()); got != files[0]+"/"+files[0] {
		t.Fatalf("progress %s, want %s/%s (the table's data files)", got, files[0], files[0])
	}
}

// A query over one large file of many row groups (a table written by one
// statement, below read.split.target-size) plans it as several ranges of
// row groups, read side by side, and still returns every row once, in
// file order, with the right _row_id on v3; a filter that prunes row
// groups still prunes.
func TestQueryReadsALargeFileInRanges(t *testing.T) {
	if prev := runtime.GOMAXPROCS(0); prev < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(prev)
	}
	const n = 1_200_000
	ctx := context.Background()
	for _, version := range []string{"2", "3"} {
		t.Run("v"+version, func(t *testing.T) {
			lk, _ := openLake(t)
			s := lk.Session()
			// v is a double of a full mantissa, so the file does not
			// compress below a few MiB
			mustExec(t, s, fmt.Sprintf(`CREATE TABLE big (id BIGINT, v DOUBLE) WITH ('format-version' = '%s', 'write.parquet.row-group-limit' = '50000');
				INSERT INTO big SELECT i, (i * 2654435761 %% 4294967291)::DOUBLE / 7 FROM range(%d) r(i)`, version, n))
			files := query(t, s, "SELECT file_size_in_bytes FROM big$files WHERE content = 0")
			if len(files) != 1 {
				t.Fatalf("want one data file, got %v", files)
			}
			var sum float64
			for i := int64(0); i < n; i++ {
				sum += float64(i*2654435761%4294967291) / 7
			}
			analyze := strings.Join(query(t, s, "EXPLAIN ANALYZE SELECT count(*), sum(v) FROM big"), "\n")
			var ranges int
			if k := strings.Index(analyze, "ranges_scanned="); k >= 0 {
				fmt.Sscanf(analyze[k:], "ranges_scanned=%d", &ranges)
			}
			if !strings.Contains(analyze, "files_scanned=1") || ranges < 2 {
				t.Fatalf("want one file read as several ranges (a file of %s bytes):\n%s", files[0], analyze)
			}
			got := query(t, s, "SELECT count(*), sum(v) FROM big")
			var cnt int64
			var gotSum float64
			if len(got) != 1 {
				t.Fatalf("count, sum: %v", got)
			}
			fmt.Sscanf(strings.ReplaceAll(got[0], "|", " "), "%d %g", &cnt, &gotSum)
			if cnt != n || math.Abs(gotSum-sum) > 1e-6*sum {
				t.Fatalf("count, sum = %v, want %d, %g", got, n, sum)
			}
			// every id once, in the file's order
			res, err := s.SQL(ctx, "SELECT id FROM big")
			if err != nil {
				t.Fatal(err)
			}
			bs, err := res.Collect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			next := int64(0)
			for _, b := range bs {
				for _, id := range b.Column(0).(*array.Int64).Int64Values() {
					if id != next {
						t.Fatalf("row %d has id %d", next, id)
					}
					next++
				}
				b.Release()
			}
			if next != n {
				t.Fatalf("read %d ids, want %d", next, n)
			}
			if got := query(t, s, "SELECT count(*) FROM big WHERE id >= 700000 AND id < 730000"); !slices.Equal(got, []string{"30000"}) {
				t.Fatalf("filtered count = %v", got)
			}
			if version == "3" {
				if got := query(t, s, "SELECT count(DISTINCT _row_id - id), count(DISTINCT _row_id) FROM big"); !slices.Equal(got, []string{fmt.Sprintf("1|%d", n)}) {
					t.Fatalf("_row_id - id distinct values, distinct _row_ids: %v", got)
				}
			}
		})
	}
}

// TestScanHoldsBoundedBytesAhead: a file's reader holds at most
// scan.AheadBytes of batches read and not yet taken, counted by what they
// hold; a batch larger than that goes alone rather than waiting for room
// it can never have. A consumer that stops taking batches leaves the
// readers waiting, and closing the result lets every one of them go.
func TestScanHoldsBoundedBytesAhead(t *testing.T) {
	if prev := runtime.GOMAXPROCS(0); prev < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(prev)
	}
	var mu sync.Mutex
	var most, largest int64
	scan.TestHookAhead = func(batch, held int64) {
		mu.Lock()
		most, largest = max(most, held), max(largest, batch)
		mu.Unlock()
	}
	defer func() { scan.TestHookAhead = nil }()
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	// 24 BIGINT columns: a batch of 131,071 rows holds about 25 MB
	const n = 400_000
	cols := make([]string, 24)
	for i := range cols {
		cols[i] = fmt.Sprintf("i * %d AS c%d", i+1, i)
	}
	mustExec(t, s, fmt.Sprintf(`CREATE TABLE wide WITH ('write.parquet.row-group-limit' = '150000') AS SELECT %s FROM range(%d) r(i)`,
		strings.Join(cols, ", "), n))
	sums := make([]string, len(cols))
	for i := range cols {
		sums[i] = fmt.Sprintf("sum(c%d)", i)
	}
	got := query(t, s, "SELECT count(*), "+strings.Join(sums, ", ")+" FROM wide")
	want := []string{strconv.Itoa(n)}
	for i := range cols {
		want = append(want, strconv.FormatInt(int64(i+1)*(n-1)*n/2, 10))
	}
	if len(got) != 1 || got[0] != strings.Join(want, "|") {
		t.Fatalf("count and sums: %v, want %s", got, strings.Join(want, "|"))
	}
	if largest <= scan.AheadBytes || most > scan.AheadBytes {
		t.Fatalf("largest batch %d bytes, most held %d: want a batch over %d bytes, and never more than that held", largest, most, scan.AheadBytes)
	}
	// a consumer that takes one batch and stops: the readers fill what
	// they may hold and wait; closing the result lets them go
	before := runtime.NumGoroutine()
	most = 0
	res, err := s.SQL(ctx, "SELECT * FROM wide")
	if err != nil {
		t.Fatal(err)
	}
	rdr := res.Reader()
	if !rdr.Next() {
		t.Fatalf("no first batch: %v", rdr.Err())
	}
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	held := most
	mu.Unlock()
	if held < scan.AheadBytes/2 || held > scan.AheadBytes {
		t.Fatalf("a reader held %d bytes ahead; want between %d and %d", held, scan.AheadBytes/2, scan.AheadBytes)
	}
	closed := make(chan error, 1)
	go func() {
		rdr.Release()
		closed <- res.Close()
	}()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing the result did not return: a reader waits for room")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Fatalf("%d goroutines after closing the result, %d before it", g, before)
	}
}
