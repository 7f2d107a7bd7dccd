package lake_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/lake"
)

func TestFormatVersion3(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	tbl := mustCreate(t, lk, "v3", lake.WithProperties(map[string]string{"format-version": "3"}))
	if v := tbl.Iceberg().Metadata().Version(); v != 3 {
		t.Fatalf("format version %d, want 3", v)
	}
	tbl = mustAppend(t, tbl, 0, 1000)
	rdr, err := tbl.Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sumOf(t, rdr), expectedSums(0, 1000); got != want {
		t.Fatalf("v3 table:\n got %s\nwant %s", describe(got), describe(want))
	}
	_, err = lk.CreateTable(ctx, "v1", eventsSchema, lake.WithProperties(map[string]string{"format-version": "1"}))
	if !errors.Is(err, lake.ErrInvalidArgument) {
		t.Fatalf("format-version 1: got %v, want ErrInvalidArgument", err)
	}
}

// cancellingReader cancels the write's context after its first batch.
type cancellingReader struct {
	array.RecordReader
	cancel context.CancelFunc
	n      int
}

func (c *cancellingReader) Next() bool {
	if c.n == 1 {
		c.cancel()
	}
	c.n++
	return c.RecordReader.Next()
}

func TestCancelledAppendLeavesNothing(t *testing.T) {
	lk, dir := openLake(t)
	tbl := mustAppend(t, mustCreate(t, lk, "events"), 0, 100)
	before := allFiles(t, dir)

	ctx, cancel := context.WithCancel(context.Background())
	rdr := &cancellingReader{RecordReader: eventsReader(0, 500_000, 10_000), cancel: cancel}
	defer rdr.Release()
	_, err := tbl.Append(ctx, rdr)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled append: got %v, want context.Canceled", err)
	}
	after := allFiles(t, dir)
	for p := range after {
		if !before[p] {
			t.Errorf("cancelled append left %s", p)
		}
	}
	cur, err := lk.Table(context.Background(), "events")
	if err != nil {
		t.Fatal(err)
	}
	if cur.Snapshot().ID != tbl.Snapshot().ID {
		t.Fatalf("head moved to %d after a cancelled append", cur.Snapshot().ID)
	}
}

func TestAppendSchemaMismatch(t *testing.T) {
	lk, _ := openLake(t)
	tbl := mustCreate(t, lk, "events")
	other := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "extra", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rdr, _ := array.NewRecordReader(other, nil)
	defer rdr.Release()
	_, err := tbl.Append(context.Background(), rdr)
	if !errors.Is(err, lake.ErrInvalidArgument) {
		t.Fatalf("got %v, want ErrInvalidArgument", err)
	}
	if want := `append to main.events: column "extra" is not in the table; the table's columns are id, status, amount, ts`; err.Error() != want {
		t.Fatalf("message:\n got %q\nwant %q", err.Error(), want)
	}
}

// An INSERT that fails after skade's own writer (string columns) has
// finished several files leaves no file behind and the table as it was.
func TestFailedInsertThroughDirectWriterLeavesNothing(t *testing.T) {
	lk, dir := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE t (id BIGINT, v VARCHAR) WITH ('write.target-file-size-bytes' = '20000', 'write.parquet.row-group-limit' = '2000');
		INSERT INTO t SELECT i, 'v' || (i % 10) FROM range(0, 1000) r(i)`)
	before := allFiles(t, dir)
	want := query(t, s, `SELECT count(*), max(v) FROM t`)
	err := s.Exec(context.Background(), `INSERT INTO t SELECT i, CASE WHEN i < 150000 THEN 's' || (i % 7) ELSE CAST(1 / (i - 150000) AS VARCHAR) END FROM range(0, 200000) r(i)`)
	if err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("INSERT: %v, want division by zero", err)
	}
	for p := range allFiles(t, dir) {
		if !before[p] {
			t.Errorf("the failed INSERT left %s", p)
		}
	}
	if got := query(t, s, `SELECT count(*), max(v) FROM t`); !slices.Equal(got, want) {
		t.Fatalf("after the failed INSERT: %v, want %v", got, want)
	}
	// the same INSERT without the failure writes several files
	mustExec(t, s, `INSERT INTO t SELECT i, 's' || (i % 7) FROM range(0, 150000) r(i)`)
	if got := query(t, s, `SELECT count(*) > 3 FROM t$files`); !slices.Equal(got, []string{"true"}) {
		t.Fatalf("the INSERT wrote %v files; the failure above may have come before any file was done", got)
	}
}
