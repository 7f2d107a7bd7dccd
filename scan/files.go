package scan

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"
)

// PlanWholeFiles plans sc and returns one task per data file, each
// covering its whole file (WholeFiles). Every path that reads a data file
// in order to replace it, or that maps its rows to positions, plans
// through it; queries may keep iceberg-go's splits.
func PlanWholeFiles(ctx context.Context, sc *table.Scan) ([]table.FileScanTask, error) {
	tasks, err := sc.PlanFiles(ctx)
	if err != nil {
		return nil, err
	}
	return WholeFiles(tasks)
}

// WholeFiles folds the split tasks of each data file back into one task
// that reads the whole file.
//
// iceberg-go splits a Parquet file larger than read.split.target-size into
// one task per range of row groups. A reader that rewrites a file, or
// numbers its rows to write position deletes, must see every row of it
// from position 0: reading one range and replacing the file loses the
// rows of the others. So the ranges of a file must be adjacent in the plan
// and cover the file exactly, from 0 to its size, each starting where the
// one before ends; anything else is an error and nothing is returned.
//
// INVARIANT: every returned task has Start 0 and Length equal to its
// file's size (IsWhole), and no data file appears twice.
func WholeFiles(tasks []table.FileScanTask) ([]table.FileScanTask, error) {
	out := make([]table.FileScanTask, 0, len(tasks))
	seen := make(map[string]struct{}, len(tasks))
	for i := 0; i < len(tasks); {
		t := tasks[i]
		path := t.File.FilePath()
		if _, dup := seen[path]; dup {
			return nil, fmt.Errorf("data file %s is planned in ranges that are not adjacent (broken invariant)", path)
		}
		seen[path] = struct{}{}
		size := t.File.FileSizeBytes()
		end := int64(0)
		j := i
		for ; j < len(tasks) && tasks[j].File.FilePath() == path; j++ {
			r := tasks[j]
			switch {
			case r.Start != end:
				return nil, fmt.Errorf("data file %s: planned range %d starts at byte %d, want %d: the ranges do not cover the file (broken invariant)", path, j-i, r.Start, end)
			case r.Start == 0 && r.Length == 0:
				end = size // an unsized task reads the whole file
			case r.Length < 0:
				return nil, fmt.Errorf("data file %s: planned range %d has length %d (broken invariant)", path, j-i, r.Length)
			default:
				end += r.Length
			}
		}
		if end != size {
			return nil, fmt.Errorf("data file %s: planned ranges cover %d of its %d bytes (broken invariant)", path, end, size)
		}
		t.Start, t.Length = 0, size
		out = append(out, t)
		i = j
	}
	return out, nil
}

// IsWhole reports whether t reads its whole data file.
func IsWhole(t table.FileScanTask) bool {
	return t.Start == 0 && (t.Length == 0 || t.Length == t.File.FileSizeBytes())
}

// CheckWhole returns an error unless t reads its whole data file; a
// rewrite calls it before it reads, so that a split task can never be
// taken for its file.
func CheckWhole(what string, t table.FileScanTask) error {
	if IsWhole(t) {
		return nil
	}
	return fmt.Errorf("%s: data file %s would be read from byte %d for %d of its %d bytes; a file that is rewritten must be read whole (broken invariant)", what, t.File.FilePath(), t.Start, t.Length, t.File.FileSizeBytes())
}
