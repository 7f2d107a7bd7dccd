package scan

import (
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// minPieceBytes is the smallest range of row groups SplitForWorkers
// plans a file into: each range is read by its own ReadTasks call, which
// opens the file and parses its footer.
const minPieceBytes int64 = 4 << 20

// SplitForWorkers splits the large whole-file tasks of a query's plan
// into ranges of row groups, so that workers goroutines can read one
// file side by side. iceberg-go splits a file only past
// read.split.target-size (128 MiB by default): a table written by one
// statement is often one file below that, read on one core.
//
// A file is split when it is larger than a piece, which is an even share
// of the plan's bytes for four times the workers and at least
// minPieceBytes: pieces smaller than a worker's half, so that the reads
// of a file's later pieces, which run ahead of the consumer only as far
// as their channels hold, keep both cores busy (groupSplits,
// splitShares; BENCHMARKS.md, session 39).
// Ranges start at the file's split offsets (its row groups), as
// iceberg-go's own splits do. A task with deletes of any kind is left
// whole: the delete index applies position and equality deletes to whole
// files (deletes.go).
//
// INVARIANT: a split file's ranges are adjacent in the returned plan and
// cover it from 0 to its size, as WholeFiles requires.
func SplitForWorkers(tasks []table.FileScanTask, workers int) []table.FileScanTask {
	if workers < 2 || len(tasks) == 0 {
		return tasks
	}
	var total int64
	for _, t := range tasks {
		total += TaskBytes(t)
	}
	piece := max(total/int64(4*workers), minPieceBytes)
	var out []table.FileScanTask
	for i, t := range tasks {
		ranges := pieceRanges(t, piece)
		if ranges == nil {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = append(make([]table.FileScanTask, 0, len(tasks)+len(ranges)), tasks[:i]...)
		}
		for _, r := range ranges {
			s := t
			s.Start, s.Length = r[0], r[1]-r[0]
			out = append(out, s)
		}
	}
	if out == nil {
		return tasks
	}
	return out
}

// TaskBytes is the bytes a task covers: its range, or its whole file
// when it names none.
func TaskBytes(t table.FileScanTask) int64 {
	if t.Length > 0 {
		return t.Length
	}
	return t.File.FileSizeBytes()
}

// pieceRanges is the [start, end) byte ranges of about piece bytes each
// that t's whole Parquet file splits into at its split offsets, or nil
// when it is not split.
func pieceRanges(t table.FileScanTask, piece int64) [][2]int64 {
	f := t.File
	if f == nil || f.FileFormat() != iceberg.ParquetFile || !IsWhole(t) ||
		len(t.DeleteFiles) > 0 || len(t.EqualityDeleteFiles) > 0 || len(t.DeletionVectorFiles) > 0 {
		return nil
	}
	size := f.FileSizeBytes()
	offsets := f.SplitOffsets()
	if size <= piece || len(offsets) < 2 {
		return nil
	}
	if !ascendingInside(offsets, size) {
		return nil // not offsets to trust
	}
	var ranges [][2]int64
	start := int64(0)
	for _, o := range offsets[1:] {
		if o-start >= piece && size-o >= piece/2 {
			ranges = append(ranges, [2]int64{start, o})
			start = o
		}
	}
	if len(ranges) == 0 {
		return nil
	}
	return append(ranges, [2]int64{start, size})
}

// ascendingInside reports whether offsets ascend strictly and lie inside
// a file of size bytes: split offsets to trust.
func ascendingInside(offsets []int64, size int64) bool {
	for i, o := range offsets {
		if o < 0 || o >= size || i > 0 && o <= offsets[i-1] {
			return false
		}
	}
	return true
}
