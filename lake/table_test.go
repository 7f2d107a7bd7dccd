package lake_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/lake"
)

// smallFiles rolls a new file after every batch written (the target size
// is 1 byte, and a file rolls once a batch has been written to it). With
// mustAppend's 100,000-row batches a 1M-row append yields 10 files with
// disjoint id ranges.
var smallFiles = lake.WithProperties(map[string]string{
	"write.parquet.row-group-limit":      "100000",
	"write.target-file-size-bytes":       "1",
	"write.parquet.row-group-size-bytes": "1073741824",
})

func TestAppendAndScanMillionRows(t *testing.T) {
	if testing.Short() {
		t.Skip("1M rows; skipped with -short")
	}
	ctx := context.Background()
	lk, dir := openLake(t)
	tbl := mustCreate(t, lk, "events", smallFiles)
	tbl = mustAppend(t, tbl, 0, 1_000_000)

	if got := len(history(t, tbl)); got != 1 {
		t.Fatalf("history has %d snapshots, want 1", got)
	}
	files, err := tbl.PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 10 {
		t.Fatalf("planned %d files for a full scan, want 10 (one per 100,000 rows)", len(files))
	}
	if n := len(dataFiles(t, dir)); n != 10 {
		t.Fatalf("%d parquet files on disk, want 10", n)
	}

	rdr, err := tbl.Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, want := sumOf(t, rdr), expectedSums(0, 1_000_000)
	if got != want {
		t.Fatalf("scan sums differ:\n got %s\nwant %s", describe(got), describe(want))
	}

	// A fresh handle from the catalog reads the same.
	again, err := lk.Table(ctx, "skade.main.events")
	if err != nil {
		t.Fatal(err)
	}
	rdr, err = again.Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := sumOf(t, rdr); got != want {
		t.Fatalf("re-opened scan sums differ:\n got %s\nwant %s", describe(got), describe(want))
	}

	// [150000, 250000) lies in files 2 and 3 only.
	filter := lake.Filter(iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference("id"), int64(150_000)),
		iceberg.LessThan(iceberg.Reference("id"), int64(250_000))))
	files, err = tbl.PlanFiles(ctx, filter)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("id range filter planned %d files, want 2", len(files))
	}
	rdr, err = tbl.Scan(ctx, filter, lake.Columns("id", "amount"))
	if err != nil {
		t.Fatal(err)
	}
	got, want = sumOf(t, rdr), expectedSums(150_000, 250_000)
	want.status, want.ts = 0, 0 // not projected
	if got != want {
		t.Fatalf("filtered scan sums differ:\n got %s\nwant %s", describe(got), describe(want))
	}
}

func TestEmptyTableScan(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	tbl := mustCreate(t, lk, "empty")
	if tbl.Snapshot() != nil {
		t.Fatalf("new table has snapshot %v, want none", tbl.Snapshot())
	}
	rdr, err := tbl.Scan(ctx, lake.Columns("id"))
	if err != nil {
		t.Fatal(err)
	}
	if s := sumOf(t, rdr); s.rows != 0 {
		t.Fatalf("empty table scanned %d rows", s.rows)
	}
	if _, err := tbl.Scan(ctx, lake.Columns("nope")); err == nil || !errors.Is(err, lake.ErrInvalidArgument) {
		t.Fatalf("scan of a missing column: got %v, want ErrInvalidArgument", err)
	}
}

func TestTableNames(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	mustCreate(t, lk, "events")
	for _, name := range []string{"events", "main.events", "skade.main.events", `"events"`} {
		tbl, err := lk.Table(ctx, name)
		if err != nil {
			t.Fatalf("Table(%q): %v", name, err)
		}
		if tbl.Name() != "main.events" {
			t.Fatalf("Table(%q).Name() = %q, want main.events", name, tbl.Name())
		}
	}
	_, err := lk.CreateTable(ctx, "main.events", eventsSchema)
	if !errors.Is(err, lake.ErrTableExists) {
		t.Fatalf("re-create: got %v, want ErrTableExists", err)
	}
	_, err = lk.Table(ctx, "nosuch")
	if !errors.Is(err, lake.ErrTableNotFound) {
		t.Fatalf("missing table: got %v, want ErrTableNotFound", err)
	}
	if want := "table main.nosuch does not exist; list tables with `skade tables` or SHOW TABLES"; err.Error() != want {
		t.Fatalf("missing table message:\n got %q\nwant %q", err.Error(), want)
	}
	names, err := lk.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != "main.events" {
		t.Fatalf("Tables() = %v, want [main.events]", names)
	}
}

func TestPartitionedTablePrunes(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	tbl := mustCreate(t, lk, "events", lake.PartitionBy("day(ts)", "bucket(4, id)"))
	// ts advances one second per id: 3 days of rows.
	tbl = mustAppend(t, tbl, 0, 3*86400)
	all, err := tbl.PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 12 {
		t.Fatalf("3 days x 4 buckets planned %d files, want 12", len(all))
	}
	for _, f := range all {
		if !strings.HasPrefix(f.Path, dir) {
			t.Fatalf("data file %s is outside the lake %s", f.Path, dir)
		}
	}
	day2 := baseTime.Add(24 * time.Hour)
	filter := lake.Filter(iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference("ts"), day2.UnixMicro()),
		iceberg.LessThan(iceberg.Reference("ts"), day2.Add(24*time.Hour).UnixMicro())))
	files, err := tbl.PlanFiles(ctx, filter)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Fatalf("a one-day filter planned %d files, want the day's 4", len(files))
	}
	rdr, err := tbl.Scan(ctx, filter)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sumOf(t, rdr), expectedSums(86400, 2*86400); got != want {
		t.Fatalf("one day:\n got %s\nwant %s", describe(got), describe(want))
	}
	for _, spec := range []string{"nope(ts)", "bucket(0, id)", "day(status)", "missing", "bucket(4 id)"} {
		_, err := lk.CreateTable(ctx, "bad", eventsSchema, lake.PartitionBy(spec))
		if !errors.Is(err, lake.ErrInvalidArgument) {
			t.Errorf("PartitionBy(%q): got %v, want ErrInvalidArgument", spec, err)
		}
	}
}
