package lake

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/plan"
	"github.com/skadedb/skade/snapshot"
)

// Merge-on-read UPDATE and DELETE (write.update.mode, write.delete.mode =
// merge-on-read): each candidate file is read once with its deletes
// applied; the rows the statement matches get position deletes (deletion
// vectors on format version 3) through mergeinto.PositionDeletes, the
// same machinery MERGE uses, and an UPDATE's new row versions go to new
// data files. One row delta commits it; no data file is rewritten or
// removed.

// mergeOnRead reports whether the table's write mode for op is
// merge-on-read.
func mergeOnRead(tbl *Table, update bool) bool {
	op := "delete"
	if update {
		op = "update"
	}
	return snapshot.WriteMode(tbl.Iceberg().Properties(), op) == snapshot.ModeMergeOnRead
}

// morOutcome is what a merge-on-read UPDATE or DELETE did.
type morOutcome struct {
	matched   int64
	returned  []arrow.RecordBatch // matched rows (new values for UPDATE), when asked for
	added     int                 // data files written
	dv        bool                // deletes written as deletion vectors
	deleteOut int                 // delete files written
	dropped   int                 // data files dropped unread
}

// rewriteMergeOnRead runs the merge-on-read write of a DELETE or UPDATE
// over tasks. run evaluates the statement over one file (output: the match
// column, then the row's columns, new values for UPDATE); keep retains the
// matched rows for RETURNING. drops are files (without deletes) whose
// every row a DELETE removes, as statistics prove: they are removed
// unread, in the same commit.
func (s *Session) rewriteMergeOnRead(ctx context.Context, tbl *Table, op string, tasks, drops []table.FileScanTask, run func(table.FileScanTask) (exec.Operator, error), target *arrow.Schema, update, keep bool) (out morOutcome, err error) {
	defer func() {
		if err != nil {
			for _, b := range out.returned {
				b.Release()
			}
			out = morOutcome{}
		}
	}()
	what := op + " " + tbl.Name()
	err = s.write(ctx, tbl, op, true, func(txn *table.Transaction) error {
		staged, err := txn.StagedTable()
		if err != nil {
			return err
		}
		pd := mergeinto.NewPositionDeletes(staged.Table, []table.ScanOption{table.WithSnapshotID(tbl.snap.SnapshotID)}, what, nil)
		out.dv = pd.DeletionVectors()
		var readErr error
		// rows streams the matched rows of every candidate file, recording
		// their positions as it goes; an UPDATE writes what it yields.
		rows := func(yield func(arrow.RecordBatch, error) bool) {
			for _, task := range tasks {
				fd := pd.File(task)
				more, err := s.morFile(ctx, task, run, fd, target, update || keep, func(b arrow.RecordBatch) bool {
					if keep {
						b.Retain()
						out.returned = append(out.returned, b)
					}
					if !update {
						b.Release()
						return true
					}
					return yield(b, nil)
				})
				out.matched += fd.Rows()
				if err != nil {
					readErr = err
					if update {
						yield(nil, err)
					}
					return
				}
				if !more {
					return
				}
			}
		}
		var added []iceberg.DataFile
		if update {
			for df, err := range table.WriteRecords(ctx, staged.Table, target, rows) {
				if err != nil {
					return err
				}
				added = append(added, df)
			}
		} else {
			rows(func(arrow.RecordBatch, error) bool { return true })
		}
		if readErr != nil {
			return readErr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(drops) > 0 {
			// first its own snapshot: the row delta below cannot remove
			// data files
			removed := make([]iceberg.DataFile, len(drops))
			for i, t := range drops {
				removed[i] = t.File
				out.matched += t.File.Count()
			}
			if err := txn.ReplaceDataFilesWithDataFiles(ctx, removed, nil, nil); err != nil {
				return err
			}
			out.dropped = len(drops)
		}
		if pd.Empty() {
			return nil // nothing (else) matched: nothing (more) to commit
		}
		if _, err := pd.Write(ctx); err != nil {
			return err
		}
		out.added = len(added)
		out.deleteOut = len(pd.DeleteFiles())
		return pd.Stage(ctx, txn, iceberg.Properties{"skade.operation": strings.ReplaceAll(op, " ", "-")}, added)
	})
	if err != nil {
		return out, err
	}
	return out, nil
}

// morFile reads one candidate file through run, records the live
// positions of the rows it matches in fd, and, with emit set, hands each
// batch of matched rows (their columns after the match column, in the
// target schema) to fn, which owns it. It returns false when fn did.
func (s *Session) morFile(ctx context.Context, task table.FileScanTask, run func(table.FileScanTask) (exec.Operator, error), fd *mergeinto.FileDeletes, target *arrow.Schema, emit bool, fn func(arrow.RecordBatch) bool) (bool, error) {
	o, err := run(task)
	if err != nil {
		return false, err
	}
	if err := o.Open(ctx); err != nil {
		o.Close()
		return false, err
	}
	defer o.Close()
	// The rows come in plan order, not file order (a join reorders them):
	// each carries its position, and the positions are added sorted once
	// the file is read (Add refuses a position twice).
	var pos []int64
	for {
		b, err := o.Next(ctx)
		if err == io.EOF {
			slices.Sort(pos)
			return true, fd.Add(ctx, pos)
		}
		if err != nil {
			return false, err
		}
		match, ok := b.Column(0).(*array.Boolean)
		if !ok {
			b.Release()
			return false, fmt.Errorf("the rewrite's match column is %s, not boolean (planner bug)", b.Column(0).DataType())
		}
		at, ok := b.Column(int(b.NumCols()) - 1).(*array.Int64)
		if !ok {
			b.Release()
			return false, fmt.Errorf("the rewrite's last column is %s, not the row position (planner bug)", b.Column(int(b.NumCols())-1).DataType())
		}
		matched := 0
		for i := 0; i < match.Len(); i++ {
			if match.IsValid(i) && match.Value(i) {
				pos = append(pos, at.Value(i))
				matched++
			}
		}
		if matched == 0 || !emit {
			b.Release()
			continue
		}
		rows, err := matchedColumns(ctx, b, match, target)
		b.Release()
		if err != nil {
			return false, err
		}
		if !fn(rows) {
			return false, nil
		}
	}
}

// matchedColumns keeps the rows of b whose match is TRUE and drops the
// match column, giving the target schema.
func matchedColumns(ctx context.Context, b arrow.RecordBatch, match *array.Boolean, target *arrow.Schema) (arrow.RecordBatch, error) {
	cols := b.Columns()[1 : b.NumCols()-1]
	inner := array.NewRecordBatch(arrow.NewSchema(rowColumns(b.Schema()), nil), cols, b.NumRows())
	defer inner.Release()
	f, err := compute.FilterRecordBatch(ctx, inner, match, compute.DefaultFilterOptions())
	if err != nil {
		return nil, err
	}
	return rewrap(f, target), nil
}

// morSummary is the EXPLAIN ANALYZE text of a merge-on-read UPDATE or
// DELETE.
func morSummary(op, name string, o morOutcome, total int64, planned int) string {
	kind := "position delete files"
	if o.dv {
		kind = "deletion vectors"
	}
	dropped := ""
	if o.dropped > 0 {
		dropped = fmt.Sprintf("%d dropped unread, ", o.dropped)
	}
	return fmt.Sprintf("%s %s (merge-on-read): %d rows\n  data files: %d in the snapshot, %d skipped by pruning, %s%d read, 0 rewritten, %d removed, %d added\n  %s written: %d\n",
		strings.ToUpper(op), name, o.matched, total, total-int64(planned), dropped, planned-o.dropped, o.dropped, o.added, kind, o.deleteOut)
}

// morExplain renders EXPLAIN of a merge-on-read UPDATE or DELETE.
func morExplain(op string, tbl *Table, rw *plan.Rewrite, total int64, planned, dropped int) string {
	kind := "position delete files"
	if tbl.Iceberg().Metadata().Version() >= 3 {
		kind = "deletion vectors"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (merge-on-read: %s, no file rewritten)\n", strings.ToUpper(op), tbl.Name(), kind)
	if rw.Pushed != nil {
		fmt.Fprintf(&b, "  pruning filter: %s\n", rw.Pushed)
	}
	drops := ""
	if dropped > 0 {
		drops = fmt.Sprintf("%d dropped unread (statistics prove every row matches), ", dropped)
	}
	fmt.Fprintf(&b, "  data files: %d in the snapshot, %d skipped by pruning, %s%d to read\n", total, total-int64(planned), drops, planned-dropped)
	b.WriteString("  per file:\n")
	for _, l := range strings.Split(strings.TrimRight(rw.Explain(), "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}
