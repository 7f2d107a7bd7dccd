package lake_test

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/lake"
)

// morTable builds a table of 6 small files, then upserts and deletes by
// key twice, leaving equality deletes on every file.
func morTable(t *testing.T, lk *lake.Lake) *lake.Table {
	t.Helper()
	ctx := context.Background()
	tbl := mustCreate(t, lk, "ev")
	for lo := int64(0); lo < 600; lo += 100 {
		tbl = mustAppend(t, tbl, lo, lo+100)
	}
	for round := int64(0); round < 2; round++ {
		var ids []int64
		for i := round; i < 600; i += 37 {
			ids = append(ids, i)
		}
		ids = append(ids, 1000+round)
		rdr := upsertBatch(ids)
		var err error
		tbl, err = tbl.Upsert(ctx, []string{"id"}, rdr)
		rdr.Release()
		if err != nil {
			t.Fatal(err)
		}
		keys := idReader(5+round, 305+round)
		tbl, err = tbl.DeleteEquality(ctx, []string{"id"}, keys)
		keys.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	return tbl
}

func TestCompactFoldsDeletesAndPreservesContents(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	tbl := morTable(t, lk)
	want := rowsByID(t, tbl)
	wantSums := sumOf(t, mustScan(t, tbl))
	files, err := tbl.PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := deleteFileCount(t, tbl); n == 0 {
		t.Fatalf("setup: no delete files before compaction")
	}

	out, res, err := tbl.Compact(ctx, lake.CompactOptions{})
	if err != nil {
		t.Fatalf("compact: %v", err)
	}
	if got := rowsByID(t, out); !maps.Equal(got, want) {
		t.Fatalf("compaction changed contents: %d rows, want %d", len(got), len(want))
	}
	if got := sumOf(t, mustScan(t, out)); got != wantSums {
		t.Fatalf("compaction changed values:\n got %s\nwant %s", describe(got), describe(wantSums))
	}
	after, err := out.PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 || after[0].DeleteFiles != 0 {
		t.Fatalf("after compaction: %d data files (%+v), want 1 with no deletes", len(after), after)
	}
	if n := deleteFileCount(t, out); n != 0 {
		t.Fatalf("after compaction the snapshot still has %d delete files", n)
	}
	t.Logf("compact: %+v", res)
	if res.RewrittenDataFiles != len(files) || res.AddedDataFiles != 1 || res.RemovedDeleteFiles == 0 {
		t.Errorf("result %+v: want %d rewritten, 1 added, some deletes removed", res, len(files))
	}
	// The snapshot before compaction still reads as it was.
	old, err := out.At(tbl.Snapshot().ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsByID(t, old); !maps.Equal(got, want) {
		t.Fatalf("time travel to before compaction: %d rows, want %d", len(got), len(want))
	}

	// Compacting a compacted table commits nothing.
	again, res2, err := out.Compact(ctx, lake.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Snapshot().ID != out.Snapshot().ID || res2 != (lake.CompactResult{}) {
		t.Errorf("second compaction committed %+v", res2)
	}

	// Expiry after compaction deletes every replaced data and delete file.
	beforeExpire := dataFiles(t, dir)
	if _, err := out.ExpireSnapshots(ctx, time.Now().Add(time.Second), 1); err != nil {
		t.Fatal(err)
	}
	left := dataFiles(t, dir)
	if len(left) != 1 || filepath.Base(left[0]) != filepath.Base(after[0].Path) {
		t.Fatalf("after expiry %d Parquet files remain (%v), want only %s; %d before", len(left), left, after[0].Path, len(beforeExpire))
	}
	cur, err := out.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsByID(t, cur); !maps.Equal(got, want) {
		t.Fatalf("after expiry: %d rows, want %d", len(got), len(want))
	}
}

func TestCompactSmallFilesOnly(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	tbl := mustCreate(t, lk, "ev")
	for lo := int64(0); lo < 500; lo += 100 {
		tbl = mustAppend(t, tbl, lo, lo+100)
	}
	out, res, err := tbl.Compact(ctx, lake.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.RewrittenDataFiles != 5 || res.AddedDataFiles != 1 || res.RemovedDeleteFiles != 0 {
		t.Errorf("result %+v, want 5 rewritten into 1", res)
	}
	if got := sumOf(t, mustScan(t, out)); got != expectedSums(0, 500) {
		t.Errorf("contents changed: %s", describe(got))
	}
}

func TestCompactErrors(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	tbl := mustCreate(t, lk, "ev")
	tbl = mustAppend(t, tbl, 0, 10)
	tbl = mustAppend(t, tbl, 10, 20)
	old := tbl
	tbl = mustAppend(t, tbl, 20, 30)

	_, _, err := tbl.Compact(ctx, lake.CompactOptions{TargetFileSizeBytes: -1})
	if err == nil || !errors.Is(err, lake.ErrInvalidArgument) || !strings.Contains(err.Error(), "compact main.ev: target file size -1 is negative; give a size in bytes, or 0 for the table's default") {
		t.Errorf("negative size: %v", err)
	}
	// A stale handle loses the commit race to the newer head, and
	// compaction runs again on it: the head is compacted, nothing lost.
	out, res, err := old.Compact(ctx, lake.CompactOptions{})
	if err != nil {
		t.Errorf("compact through a stale handle: %v", err)
	} else if res.RewrittenDataFiles != 3 || sumOf(t, mustScan(t, out)) != expectedSums(0, 30) {
		t.Errorf("compact through a stale handle: %+v, %s", res, describe(sumOf(t, mustScan(t, out))))
	}
	pinned, err := tbl.At(old.Snapshot().ID)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = pinned.Compact(ctx, lake.CompactOptions{})
	if err == nil || !errors.Is(err, lake.ErrReadOnly) {
		t.Errorf("compact through a pinned handle: %v", err)
	}
	// An empty table has nothing to compact.
	empty := mustCreate(t, lk, "empty")
	if _, res, err := empty.Compact(ctx, lake.CompactOptions{}); err != nil || res != (lake.CompactResult{}) {
		t.Errorf("empty table: %+v, %v", res, err)
	}
}

func mustScan(t *testing.T, tbl *lake.Table) array.RecordReader {
	t.Helper()
	rdr, err := tbl.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rdr
}

// deleteFileCount reads the snapshot summary's total-delete-files.
func deleteFileCount(t *testing.T, tbl *lake.Table) int {
	t.Helper()
	s := tbl.Snapshot()
	v, ok := s.Summary["total-delete-files"]
	if !ok {
		t.Fatalf("snapshot %d has no total-delete-files in its summary: %v", s.ID, slices.Collect(maps.Keys(s.Summary)))
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
