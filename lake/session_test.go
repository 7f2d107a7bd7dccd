package lake_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/parser"
)

func sqlLake(t *testing.T) *lake.Lake {
	t.Helper()
	lk, err := lake.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lk.Close() })
	return lk
}

func mustExec(t *testing.T, s *lake.Session, script string) {
	t.Helper()
	if err := s.Exec(context.Background(), script); err != nil {
		t.Fatal(err)
	}
}

// rows runs a query and renders its rows as "a|b" strings.
func rows(t *testing.T, res *lake.Result, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	bs, err := res.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range bs {
		for i := 0; i < int(b.NumRows()); i++ {
			var vals []string
			for j := 0; j < int(b.NumCols()); j++ {
				vals = append(vals, b.Column(j).ValueStr(i))
			}
			out = append(out, strings.Join(vals, "|"))
		}
		b.Release()
	}
	return out
}

func query(t *testing.T, s *lake.Session, q string) []string {
	t.Helper()
	res, err := s.SQL(context.Background(), q)
	return rows(t, res, err)
}

func TestSQLTimeTravelByVersion(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id INT); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)")
	tbl, err := lk.Table(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	hist := history(t, tbl)
	if len(hist) != 2 {
		t.Fatalf("want 2 snapshots, got %d", len(hist))
	}
	first := hist[0].ID
	if _, err := s.SQL(context.Background(), "SELECT * FROM t FOR VERSION AS OF 42"); !errors.Is(err, lake.ErrSnapshotNotFound) {
		t.Errorf("want ErrSnapshotNotFound, got %v", err)
	}
	if _, err := s.SQL(context.Background(), "SELECT * FROM nope"); !errors.Is(err, lake.ErrTableNotFound) {
		t.Errorf("want ErrTableNotFound, got %v", err)
	}
	if _, err := s.SQL(context.Background(), "SELECT nope FROM t"); !errors.Is(err, lake.ErrInvalidArgument) {
		t.Errorf("want ErrInvalidArgument, got %v", err)
	}
	for _, q := range []string{
		fmt.Sprintf("SELECT count(*) FROM t FOR VERSION AS OF %d", first),
		fmt.Sprintf("SELECT count(*) FROM t AT (VERSION => %d)", first),
	} {
		if got := query(t, s, q); len(got) != 1 || got[0] != "1" {
			t.Errorf("%s: got %v, want [1]", q, got)
		}
	}
}

func TestSQLPruningScansOneOfTenFiles(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE p (id BIGINT, v VARCHAR)")
	for i := 0; i < 10; i++ {
		mustExec(t, s, fmt.Sprintf("INSERT INTO p SELECT range + %d, 'x' FROM range(100)", i*100))
	}
	plan := strings.Join(query(t, s, "EXPLAIN SELECT v FROM p WHERE id = 350"), "\n")
	if !strings.Contains(plan, "files scanned=1 skipped=9") {
		t.Errorf("a selective filter should scan 1 of 10 files:\n%s", plan)
	}
	if got := query(t, s, "SELECT id FROM p WHERE id = 350"); len(got) != 1 || got[0] != "350" {
		t.Errorf("got %v", got)
	}
	analyze := strings.Join(query(t, s, "EXPLAIN ANALYZE SELECT v FROM p WHERE id BETWEEN 120 AND 310"), "\n")
	if !strings.Contains(analyze, "files_scanned=3") || !strings.Contains(analyze, "files_skipped=7") {
		t.Errorf("want 3 files scanned, 7 skipped:\n%s", analyze)
	}
	// DELETE rewrites only the file holding the row; the head moves once
	tbl, _ := lk.Table(context.Background(), "p")
	before := len(history(t, tbl))
	if got := query(t, s, "DELETE FROM p WHERE id = 350"); got[0] != "1" {
		t.Fatalf("delete count %v", got)
	}
	tbl, _ = tbl.Refresh(context.Background())
	if n := len(history(t, tbl)); n != before+1 {
		t.Errorf("delete made %d snapshots, want 1", n-before)
	}
	sum := tbl.Snapshot().Summary
	if sum["deleted-data-files"] != "1" || sum["added-data-files"] != "1" {
		t.Errorf("delete should rewrite exactly one file: %v", sum)
	}
	// a DELETE matching nothing commits nothing
	query(t, s, "DELETE FROM p WHERE id = 350")
	tbl2, _ := tbl.Refresh(context.Background())
	if tbl2.Snapshot().ID != tbl.Snapshot().ID {
		t.Errorf("a delete that matched nothing moved the head")
	}
	// a DELETE of a whole file drops it without a rewrite, and without
	// reading it: make the file unreadable to prove it
	files, err := tbl2.PlanFiles(context.Background(), lake.Filter(iceberg.LessThan(iceberg.Reference("id"), int64(100))))
	if err != nil || len(files) != 1 {
		t.Fatalf("files %v, %v", files, err)
	}
	path := strings.TrimPrefix(files[0].Path, "file://")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "DELETE FROM p WHERE id < 100"); got[0] != "100" {
		t.Errorf("delete count %v", got)
	}
	tbl3, _ := tbl2.Refresh(context.Background())
	if sum := tbl3.Snapshot().Summary; sum["deleted-data-files"] != "1" || sum["added-data-files"] != "" {
		t.Errorf("a fully deleted file should be dropped, not rewritten: %v", sum)
	}
	_ = os.WriteFile(path, data, 0o644)
	// the same DELETE with a predicate statistics cannot decide reads
	query(t, s, "DELETE FROM p WHERE id + 0 < 200")
	tbl4, _ := tbl3.Refresh(context.Background())
	if sum := tbl4.Snapshot().Summary; sum["deleted-data-files"] != "1" || sum["added-data-files"] != "" {
		t.Errorf("a fully deleted file should be dropped, not rewritten: %v", sum)
	}
	if got := query(t, s, "SELECT count(*) FROM p"); got[0] != "799" {
		t.Errorf("rows left %v", got)
	}
}

func TestSQLPartitionPruning(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE e (region VARCHAR, n INT) PARTITIONED BY (region);
		INSERT INTO e VALUES ('eu', 1), ('us', 2), ('ap', 3), ('eu', 4)`)
	plan := strings.Join(query(t, s, "EXPLAIN SELECT n FROM e WHERE region = 'eu'"), "\n")
	if !strings.Contains(plan, "files scanned=1 skipped=2") {
		t.Errorf("a partition filter should skip the other partitions:\n%s", plan)
	}
	if got := query(t, s, "SELECT n FROM e WHERE region = 'eu' ORDER BY n"); strings.Join(got, ",") != "1,4" {
		t.Errorf("got %v", got)
	}
	if got := query(t, s, "UPDATE e SET n = n * 10 WHERE region = 'us'"); got[0] != "1" {
		t.Errorf("update count %v", got)
	}
	if got := query(t, s, "SELECT region, n FROM e ORDER BY n"); strings.Join(got, ",") != "eu|1,ap|3,eu|4,us|20" {
		t.Errorf("after update: %v", got)
	}
}

func TestSQLCountFromMetadata(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE c (id INT); INSERT INTO c SELECT range FROM range(1000)")
	plan := strings.Join(query(t, s, "EXPLAIN SELECT count(*) FROM c"), "\n")
	if !strings.Contains(plan, "MetadataAnswer") || !strings.Contains(plan, "no data files read") {
		t.Errorf("count(*) should be answered from metadata:\n%s", plan)
	}
	if got := query(t, s, "SELECT count(*) FROM c"); got[0] != "1000" {
		t.Errorf("got %v", got)
	}
}

func TestTableSQLIsReadOnlyAndPinned(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE r (id INT); INSERT INTO r VALUES (1)")
	tbl, err := lk.Table(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, s, "INSERT INTO r VALUES (2)")
	res, err := tbl.SQL(context.Background(), "SELECT count(*) FROM r")
	if got := rows(t, res, err); got[0] != "1" {
		t.Errorf("a handle's SQL must see its snapshot: got %v", got)
	}
	_, err = tbl.SQL(context.Background(), "INSERT INTO r VALUES (3)")
	if !errors.Is(err, lake.ErrReadOnly) || !strings.Contains(err.Error(), "table handle is read-only; use a session to write") {
		t.Errorf("want the read-only error, got %v", err)
	}
}

func TestRegisterSources(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE events (id INT)")
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 2, 3}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "b", "c"}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	b.Release()
	if err := s.RegisterBatch(ctx, "events", rec); !errors.Is(err, lake.ErrTableExists) {
		t.Errorf("registering over a table name must fail, got %v", err)
	}
	if err := s.RegisterBatch(ctx, "incoming", rec); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterBatch(ctx, "incoming", rec); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("registering twice must fail, got %v", err)
	}
	if _, err := s.SQL(context.Background(), "CREATE TABLE incoming (id INT)"); !errors.Is(err, lake.ErrTableExists) || !strings.Contains(err.Error(), "registered as a source") {
		t.Errorf("a table may not be created under a registered name, got %v", err)
	}
	if got := query(t, s, "SELECT s FROM incoming WHERE id > 1 ORDER BY id"); strings.Join(got, ",") != "b,c" {
		t.Errorf("got %v", got)
	}
	if got := query(t, s, "INSERT INTO events SELECT id FROM incoming"); got[0] != "3" {
		t.Errorf("got %v", got)
	}
	rdr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterReader(ctx, "stream", rdr); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT count(*) FROM stream"); got[0] != "3" {
		t.Errorf("got %v", got)
	}
	if _, err := s.SQL(context.Background(), "SELECT * FROM stream"); err == nil || !strings.Contains(err.Error(), "was already read") {
		t.Errorf("a reader reads once, got %v", err)
	}
}

func TestResultReaderAndMetrics(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE m (id BIGINT)")
	res, err := s.SQL(context.Background(), "INSERT INTO m SELECT * FROM range(10)")
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Metrics(); m.RowsInserted != 10 {
		t.Errorf("metrics %+v", m)
	}
	res.Close()
	res, err = s.SQL(context.Background(), "UPDATE m SET id = id + 1 WHERE id < 3")
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Metrics(); m.RowsUpdated != 3 {
		t.Errorf("metrics %+v", m)
	}
	res.Close()
	res, err = s.SQL(context.Background(), "SELECT id FROM m ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	rdr := res.Reader()
	defer rdr.Release()
	n := 0
	for rdr.Next() {
		n += int(rdr.RecordBatch().NumRows())
	}
	if rdr.Err() != nil || n != 10 || rdr.Schema().Field(0).Name != "id" {
		t.Errorf("reader: %d rows, err %v, schema %v", n, rdr.Err(), rdr.Schema())
	}
}

func TestSQLCancellation(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	ctx, cancel := context.WithCancel(context.Background())
	res, err := s.SQL(ctx, "SELECT count(*) FROM range(1000000000)")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := res.Collect(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("want context.Canceled, got %v", err)
	}
	mustExec(t, s, "CREATE TABLE k (id BIGINT)")
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := s.SQL(ctx2, "INSERT INTO k SELECT * FROM range(10)"); !errors.Is(err, context.Canceled) {
		t.Errorf("want context.Canceled, got %v", err)
	}
	if got := query(t, s, "SELECT count(*) FROM k"); got[0] != "0" {
		t.Errorf("a cancelled insert changed the table: %v", got)
	}
}

func TestStatementsNotYetSupported(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	if _, err := s.SQL(context.Background(), "SELEC 1"); !errors.Is(err, lake.ErrInvalidArgument) || !strings.Contains(err.Error(), "syntax error at line 1") {
		t.Errorf("want a syntax error, got %v", err)
	}
}

func TestSQLPruningThroughSubqueries(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE q (id BIGINT, v VARCHAR)")
	for i := 0; i < 4; i++ {
		mustExec(t, s, fmt.Sprintf("INSERT INTO q SELECT range + %d, 'x' FROM range(10)", i*10))
	}
	for _, sql := range []string{
		"EXPLAIN SELECT * FROM (SELECT id AS k, v FROM q) s WHERE k = 15",
		"EXPLAIN WITH c AS (SELECT * FROM q) SELECT v FROM c WHERE id >= 30",
	} {
		plan := strings.Join(query(t, s, sql), "\n")
		if !strings.Contains(plan, "files scanned=1 skipped=3") {
			t.Errorf("%s: the filter should prune through the subquery:\n%s", sql, plan)
		}
	}
	if got := query(t, s, "SELECT k FROM (SELECT id + 1 AS k FROM q) s WHERE k = 16"); len(got) != 1 || got[0] != "16" {
		t.Errorf("got %v", got)
	}
}

func TestRegisterBatchWithStorageTypes(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	s := lk.Session()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.LargeString}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	b.Field(0).(*array.LargeStringBuilder).AppendValues([]string{"x", "y"}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	b.Release()
	if err := s.RegisterBatch(ctx, "big", rec); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT s, s || '!' FROM big WHERE s > 'x' "); strings.Join(got, ",") != "y|y!" {
		t.Errorf("got %v", got)
	}
}

func TestRegisterFiles(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	s := lk.Session()
	if err := s.RegisterCSV(ctx, "ev", "../testdata/events.csv", lake.DefaultCSVOptions()); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT count(*), min(status) FROM ev"); got[0] != "8|new" {
		t.Errorf("got %v", got)
	}
	out := filepath.Join(t.TempDir(), "ev.parquet")
	query(t, s, fmt.Sprintf("COPY ev TO '%s'", out))
	if err := s.RegisterParquet(ctx, "evp", out); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT count(*) FROM evp JOIN ev USING (id)"); got[0] != "8" {
		t.Errorf("got %v", got)
	}
	if err := s.RegisterCSV(ctx, "missing", "../testdata/nope.csv", lake.DefaultCSVOptions()); !errors.Is(err, lake.ErrInvalidArgument) {
		t.Errorf("want ErrInvalidArgument, got %v", err)
	}
	s.Unregister("ev")
	if _, err := s.SQL(context.Background(), "SELECT * FROM ev"); !errors.Is(err, lake.ErrTableNotFound) {
		t.Errorf("after Unregister: %v", err)
	}
}

func TestSQLParallelScan(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core")
	}
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "SET parallel_scans = 'on'; CREATE TABLE par (id BIGINT, v VARCHAR)")
	for i := 0; i < 4; i++ {
		mustExec(t, s, fmt.Sprintf("INSERT INTO par SELECT range, 'v' || range FROM range(%d, %d)", i*1000, (i+1)*1000))
	}
	plan := strings.Join(query(t, s, "EXPLAIN SELECT sum(id), count(v) FROM par WHERE id % 2 = 0"), "\n")
	if !strings.Contains(plan, "Exchange (2 parallel inputs)") {
		t.Errorf("a 4-file scan should run in parallel:\n%s", plan)
	}
	for i := 0; i < 20; i++ {
		if got := query(t, s, "SELECT sum(id), count(v) FROM par WHERE id % 2 = 0"); got[0] != "3998000|2000" {
			t.Fatalf("got %v", got)
		}
		if got := query(t, s, "SELECT id FROM par LIMIT 3"); len(got) != 3 {
			t.Fatalf("got %v", got)
		}
	}
	analyze := strings.Join(query(t, s, "EXPLAIN ANALYZE SELECT count(v) FROM par WHERE id < 1500"), "\n")
	if !strings.Contains(analyze, "files_scanned=2") || !strings.Contains(analyze, "files_skipped=2") {
		t.Errorf("want 2 files scanned, 2 skipped:\n%s", analyze)
	}
}

func TestSQLParameters(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE prm (id BIGINT, d DATE, s VARCHAR)")
	res, err := s.SQL(context.Background(), "INSERT INTO prm VALUES ($1, $2, $3)", 1, "2024-01-02", "it's")
	if got := rows(t, res, err); got[0] != "1" {
		t.Fatalf("got %v", got)
	}
	res, err = s.SQL(context.Background(), "INSERT INTO prm VALUES (?, ?, ?)", int64(2), nil, nil)
	if got := rows(t, res, err); got[0] != "1" {
		t.Fatalf("got %v", got)
	}
	res, err = s.SQL(context.Background(), "SELECT id, s FROM prm WHERE d = $1 AND s LIKE $2", "2024-01-02", "it%")
	if got := rows(t, res, err); len(got) != 1 || got[0] != "1|it's" {
		t.Errorf("got %v", got)
	}
	if _, err := s.SQL(context.Background(), "SELECT $2", 1); !errors.Is(err, lake.ErrInvalidArgument) || !strings.Contains(err.Error(), "there is no parameter $2; the statement was given 1 arguments") {
		t.Errorf("got %v", err)
	}
	if _, err := s.SQL(context.Background(), "SELECT $1", struct{}{}); err == nil || !strings.Contains(err.Error(), "cannot be a SQL value") {
		t.Errorf("got %v", err)
	}
	// unsigned integers, which the message's "integers" promises, as
	// the next signed type; a uint64 past BIGINT as numeric(20)
	res, err = s.SQL(context.Background(), "SELECT $1 + 1, $2 + 1, $3 + 1, $4 + 1, $5, $5 + 1", uint8(255), uint16(65535), uint32(1<<32-1), uint(7), uint64(1<<64-1))
	if got := rows(t, res, err); len(got) != 1 || got[0] != "256|65536|4294967296|8|18446744073709551615|18446744073709551616" {
		t.Errorf("unsigned arguments: %v", got)
	}
}

// TestSessionRun runs statements parsed by the caller, as the shell does,
// with parameters, and refuses a nil statement.
func TestSessionRun(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	for _, q := range []string{"CREATE TABLE t (id INTEGER, v VARCHAR)", "INSERT INTO t VALUES (1, 'a'), (2, 'b')"} {
		stmt, err := parser.ParseOne(q)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Run(ctx, stmt)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		res.Close()
	}
	stmt, err := parser.ParseOne("SELECT v FROM t WHERE id = $1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(ctx, stmt, 2)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := res.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].NumRows() != 1 || bs[0].Column(0).ValueStr(0) != "b" {
		t.Fatalf("got %v", bs)
	}
	bs[0].Release()
	res.Close()
	if _, err := s.Run(ctx, nil); !errors.Is(err, lake.ErrInvalidArgument) {
		t.Fatalf("nil statement: %v", err)
	}
}

// An IN list longer than iceberg-go checks in one set (200 values) still
// prunes files: it is pushed as several INs.
func TestSQLPruningWithALongInList(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE ids (id BIGINT)")
	for i := 0; i < 4; i++ {
		mustExec(t, s, fmt.Sprintf("INSERT INTO ids SELECT range FROM range(%d, %d)", i*1000, (i+1)*1000))
	}
	var vals []string
	for id := 1500; id < 1800; id++ {
		vals = append(vals, strconv.Itoa(id))
	}
	plan := strings.Join(query(t, s, "EXPLAIN SELECT count(*) FROM ids WHERE id IN ("+strings.Join(vals, ", ")+")"), "\n")
	if !strings.Contains(plan, "files scanned=1 skipped=3") {
		t.Errorf("300 keys of one file:\n%s", plan)
	}
	if got := query(t, s, "SELECT count(*) FROM ids WHERE id IN ("+strings.Join(vals, ", ")+")"); got[0] != "300" {
		t.Errorf("count %v", got)
	}
}

// A MERGE whose source is large enough for a partitioned join build
// leaves the build's arrays pooled for the next statement (docs/sql.md,
// "Memory"); closing the lake drops them. The MERGE's result is checked
// too, and a second MERGE, which builds from the pooled arrays, must
// give the same result as on a fresh table.
func TestMergeLeavesJoinArraysPooledUntilClose(t *testing.T) {
	lk := sqlLake(t) // closed again at the end: Close may be called twice
	s := lk.Session()
	exec.DropPooled()
	// each target also holds id 1,000,000, past every source key, so
	// that the source's keys lie inside the target's key range and all
	// go into the join table (keyrange.go leaves out those outside it)
	mustExec(t, s, `CREATE TABLE a (id BIGINT, v BIGINT); INSERT INTO a SELECT i, i FROM range(0, 1000) r(i); INSERT INTO a VALUES (1000000, 0);
		CREATE TABLE b (id BIGINT, v BIGINT); INSERT INTO b SELECT i, i FROM range(0, 1000) r(i); INSERT INTO b VALUES (1000000, 0)`)
	const merge = `MERGE INTO %s t USING (SELECT i * 2 AS id, i AS v FROM range(0, 150000) r(i)) s ON t.id = s.id
		WHEN MATCHED THEN UPDATE SET v = t.v + s.v WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v)`
	want := []string{"150501|11250424500|624250"} // computed outside skade
	check := "SELECT count(*), sum(v), sum(v) FILTER (WHERE id < 1000) FROM %s"
	mustExec(t, s, fmt.Sprintf(merge, "a"))
	if got := query(t, s, fmt.Sprintf(check, "a")); !slices.Equal(got, want) {
		t.Fatalf("after the first MERGE: %v, want %v", got, want)
	}
	if exec.PooledBytes() == 0 {
		t.Fatal("a MERGE of 150,000 source keys left no join arrays pooled")
	}
	mustExec(t, s, fmt.Sprintf(merge, "b"))
	if got := query(t, s, fmt.Sprintf(check, "b")); !slices.Equal(got, want) {
		t.Fatalf("after the MERGE that reused the pooled arrays: %v, want %v", got, want)
	}
	if err := lk.Close(); err != nil {
		t.Fatal(err)
	}
	if n := exec.PooledBytes(); n != 0 {
		t.Fatalf("%d bytes still pooled after Close", n)
	}
	// with pooling off, a MERGE of the same size keeps nothing
	exec.SetJoinPooling(false)
	defer exec.SetJoinPooling(true)
	lk2 := sqlLake(t)
	s2 := lk2.Session()
	mustExec(t, s2, "CREATE TABLE c (id BIGINT, v BIGINT); INSERT INTO c SELECT i, i FROM range(0, 1000) r(i); INSERT INTO c VALUES (1000000, 0)")
	mustExec(t, s2, fmt.Sprintf(merge, "c"))
	if got := query(t, s2, fmt.Sprintf(check, "c")); !slices.Equal(got, want) {
		t.Fatalf("with pooling off: %v, want %v", got, want)
	}
	if n := exec.PooledBytes(); n != 0 {
		t.Fatalf("with pooling off a MERGE left %d bytes pooled", n)
	}
}

// SET takes ON bare, as PostgreSQL does though ON is reserved: pg_dump's
// output and tools send SET standard_conforming_strings = on.
func TestSetOnBare(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "SET standard_conforming_strings = on")
	if got := query(t, s, "SHOW standard_conforming_strings"); len(got) != 1 || got[0] != "on" {
		t.Errorf("SHOW standard_conforming_strings: %v", got)
	}
	mustExec(t, s, "SET parallel_scans TO on; CREATE TABLE onb (id BIGINT)")
	for i := 0; i < 2; i++ {
		mustExec(t, s, fmt.Sprintf("INSERT INTO onb VALUES (%d)", i))
	}
	plan := strings.Join(query(t, s, "EXPLAIN SELECT id FROM onb WHERE id >= 0"), "\n")
	if (runtime.GOMAXPROCS(0) >= 2) != strings.Contains(plan, "Exchange") {
		t.Errorf("SET parallel_scans TO on should split the 2-file scan on %d cores:\n%s", runtime.GOMAXPROCS(0), plan)
	}
	if _, err := s.SQL(context.Background(), "SET x = on on"); err == nil {
		t.Error("SET x = on on: want a syntax error")
	}
}
