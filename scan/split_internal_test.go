package scan

import (
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

func splitTestFile(t *testing.T, path string, size int64, offsets []int64) iceberg.DataFile {
	t.Helper()
	bld, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData, path, iceberg.ParquetFile, nil, nil, nil, 100, size)
	if err != nil {
		t.Fatal(err)
	}
	return bld.SplitOffsets(offsets).Build()
}

// SplitForWorkers cuts only large whole files without deletes, at their
// split offsets, into adjacent ranges that cover each file (WholeFiles
// folds them back), keeps the plan's order, and leaves a one-core plan
// alone.
func TestSplitForWorkers(t *testing.T) {
	mib := int64(1 << 20)
	// 50 MiB in row groups of 2 MiB
	var offs []int64
	for o := int64(4); o < 50*mib; o += 2 * mib {
		offs = append(offs, o)
	}
	big := splitTestFile(t, "big.parquet", 50*mib, offs)
	small := splitTestFile(t, "small.parquet", 3*mib, []int64{4, mib})
	oneGroup := splitTestFile(t, "one.parquet", 30*mib, []int64{4})
	del := splitTestFile(t, "del.parquet", 40*mib, offs)
	posDel := splitTestFile(t, "pd.parquet", 1000, nil)
	tasks := []table.FileScanTask{
		{File: small, Length: 3 * mib},
		{File: big, Length: 50 * mib},
		{File: oneGroup, Length: 30 * mib},
		{File: del, Length: 40 * mib, DeleteFiles: []iceberg.DataFile{posDel}},
	}
	if got := SplitForWorkers(tasks, 1); len(got) != len(tasks) {
		t.Fatalf("one worker: %d tasks, want %d", len(got), len(tasks))
	}
	got := SplitForWorkers(tasks, 2)
	// a piece is max(123 MiB / 8, 4 MiB) = 15.375 MiB: big splits in
	// three ranges, each cut at the first row group past a piece (16 and
	// 32 MiB; the 2 MiB after 48 would be under half a piece);
	// one.parquet is one row group, del.parquet has deletes
	var paths []string
	for _, g := range got {
		paths = append(paths, g.File.FilePath())
	}
	if want := []string{"small.parquet", "big.parquet", "big.parquet", "big.parquet", "one.parquet", "del.parquet"}; !slices.Equal(paths, want) {
		t.Fatalf("planned %v, want %v", paths, want)
	}
	if got[1].Start != 0 || got[1].Length != 16*mib+4 || got[2].Start != got[1].Length || got[2].Length != 16*mib ||
		got[3].Start != 32*mib+4 || got[3].Start+got[3].Length != 50*mib {
		t.Fatalf("big's ranges: [%d,+%d) [%d,+%d) [%d,+%d)", got[1].Start, got[1].Length, got[2].Start, got[2].Length, got[3].Start, got[3].Length)
	}
	whole, err := WholeFiles(got)
	if err != nil || len(whole) != len(tasks) {
		t.Fatalf("WholeFiles: %v, %d tasks", err, len(whole))
	}
	// a file alone: pieces of an eighth of it for 2 workers (6.25 MiB:
	// ranges of 8 MiB of row groups, the last one taking the 2 MiB tail,
	// under half a piece); never below minPieceBytes (ranges of 4 MiB,
	// the last one 6)
	for _, c := range []struct{ workers, ranges int }{{2, 6}, {4, 12}, {64, 12}} {
		got = SplitForWorkers(tasks[1:2], c.workers)
		if len(got) != c.ranges {
			t.Fatalf("50 MiB for %d workers: %d ranges, want %d", c.workers, len(got), c.ranges)
		}
		if _, err := WholeFiles(got); err != nil {
			t.Fatal(err)
		}
	}
}

// groupSplits hands a run of splits of one file to at most workers
// entries, each a contiguous share of about as many bytes, and leaves
// files with their own deletes alone.
func TestGroupSplitsShares(t *testing.T) {
	f := splitTestFile(t, "f.parquet", 800, nil)
	g := splitTestFile(t, "g.parquet", 100, nil)
	sc := &table.Scan{}
	mk := func(lens ...int64) []fileRead {
		var files []fileRead
		start := int64(0)
		for _, l := range lens {
			files = append(files, fileRead{task: table.FileScanTask{File: f, Start: start, Length: l}, scan: sc})
			start += l
		}
		return append(files, fileRead{task: table.FileScanTask{File: g, Length: 100}, scan: sc})
	}
	leads := func(files []fileRead) (out [][]int64) {
		for _, fr := range files {
			if fr.read {
				continue
			}
			starts := []int64{fr.task.Start}
			for _, m := range fr.more {
				starts = append(starts, m.Start)
			}
			out = append(out, starts)
		}
		return out
	}
	cases := []struct {
		workers int
		lens    []int64
		want    [][]int64
	}{
		// one core: one share
		{1, []int64{100, 100, 100, 100}, [][]int64{{0, 100, 200, 300}, {0}}},
		// more: up to splitShares (4) shares a worker, each about as many
		// bytes
		{2, []int64{100, 100, 100, 100}, [][]int64{{0}, {100}, {200}, {300}, {0}}},
		{4, []int64{100, 100}, [][]int64{{0}, {100}, {0}}},
		{2, []int64{500, 100, 100, 100}, [][]int64{{0}, {500}, {600}, {700}, {0}}},
		{2, []int64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100},
			[][]int64{{0, 100}, {200}, {300, 400}, {500}, {600, 700}, {800}, {900, 1000}, {1100}, {0}}},
	}
	for _, c := range cases {
		files := mk(c.lens...)
		groupSplits(files, c.workers)
		if got := leads(files); !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("workers %d, splits %v: entries read %v, want %v", c.workers, c.lens, got, c.want)
		}
	}
	// a file whose deletes are applied here is read whole, entry by entry
	files := mk(100, 100)
	files[0].deletes, files[1].deletes = &deleteIndex{}, &deleteIndex{}
	groupSplits(files, 1)
	if got := leads(files); !slices.EqualFunc(got, [][]int64{{0}, {100}, {0}}, slices.Equal) {
		t.Errorf("with deletes: %v", got)
	}
}
