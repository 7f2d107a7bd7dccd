package mergeinto

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
)

// Deferred groups. A MERGE that only updates reads the row groups its
// keys hit narrow (merger.narrowColumns): the columns nothing reads are
// NULL in its batches, as a patch copies their chunks. When such a group
// cannot be patched after all (its SET columns outgrow the budget or the
// buffer limit), its rows must still be written whole, and the batches do
// not hold them. The group is then deferred: from the row where the patch
// gave way (or from the group's start, when none had begun), each
// batch's updates, the updated rows' positions and SET values, are held
// (deferredUpdates), and when the group ends its rows from there on are
// read again whole, the updates put in place, and written
// (fileRewrite.replayDeferred). The rows before that point went out
// whole already (unpatch reads them again with the SET columns kept).
// When the held updates outgrow the budget, the rows seen so far are read
// again and written at once, and holding starts over from the next batch.
//
// INVARIANT: no row of a narrow batch is written as it is: emit defers or
// fails with an internal error rather than push one.

// deferredUpdates are one batch's updates of a deferred group: the file
// positions of the rows updated, ascending, and the SET columns'
// (merger.setCols) new values of each, in that order.
type deferredUpdates struct {
	pos  []int64
	vals []arrow.Array
}

func (d deferredUpdates) release() { releaseAll(d.vals) }

func (f *fileRewrite) releaseDeferred() {
	for _, d := range f.deferred {
		d.release()
	}
	f.deferred = nil
	f.m.spec.Budget.Release(f.deferBytes)
	f.deferBytes = 0
}

// TestHookDefer, when set (by tests only), is called when a group read
// narrow is deferred.
var TestHookDefer func()

// startDefer defers the group being read from the file's row from on.
func (f *fileRewrite) startDefer(from int64) {
	if TestHookDefer != nil {
		TestHookDefer()
	}
	f.gChanged, f.touched = true, true
	f.deferring, f.deferFrom = true, from
}

// deferRows holds the updates of in, the file's rows from start on, of a
// deferred group (o is what the clauses made of in; the caller releases
// o.out). When the budget cannot hold them, the group's rows up to in's
// last are read again and written now, with every update held and in's.
func (f *fileRewrite) deferRows(ctx context.Context, in arrow.RecordBatch, o batchOut, start int64) error {
	if !o.changed {
		return nil
	}
	n := in.NumRows()
	cols, ok, err := f.setColumns(ctx, in, o)
	if err != nil {
		return err
	}
	defer releaseAll(cols)
	if !ok || int64(len(o.changedPos)) != n-o.kept {
		return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: a batch of a row group read narrow lost rows (broken invariant)", f.m.what())}
	}
	rows := make([]int32, len(o.changedPos))
	for i, p := range o.changedPos {
		if p < start || p >= start+n || i > 0 && p <= o.changedPos[i-1] {
			return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: updated row %d outside its batch [%d, %d) (broken invariant)", f.m.what(), p, start, start+n)}
		}
		rows[i] = int32(p - start)
	}
	vals, err := takeCols(ctx, cols, rows)
	if err != nil {
		return err
	}
	return f.holdDeferred(ctx, deferredUpdates{pos: slices.Clone(o.changedPos), vals: vals}, start+n)
}

// replayDeferred reads the rows [deferFrom, to) of the group being read
// again whole, puts the held updates in place, writes them, and lets the
// updates go. The rows that keep their values count as copied.
func (f *fileRewrite) replayDeferred(ctx context.Context, to int64) error {
	defer f.releaseDeferred()
	return f.replayHeld(ctx, f.g, f.deferFrom, to, f.deferred)
}

// replayHeld reads the rows [from, to) of row group g again whole, puts
// the updates held (in file order, within those rows) in place, and
// writes them. The rows that keep their values count as copied. The
// caller lets held go.
func (f *fileRewrite) replayHeld(ctx context.Context, g int, from, to int64, held []deferredUpdates) error {
	if to <= from {
		if len(held) > 0 {
			return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: updates held for no rows (broken invariant)", f.m.what())}
		}
		return nil
	}
	r := f.groupRange(g)
	if from < r[0] || to > r[1] {
		return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: rows [%d, %d) deferred outside their row group [%d, %d) (broken invariant)", f.m.what(), from, to, r[0], r[1])}
	}
	var updated, applied int64
	for _, d := range held {
		updated += int64(len(d.pos))
	}
	// the held updates in file order: entry k, row j next
	k, j := 0, 0
	pos, n := r[0], int64(0)
	// the row group whole (runTask drops the early filter's residual the
	// task may carry)
	task := f.runTask(f.task, [2]int{g, g + 1})
	f.m.res.Metrics.BytesRead += task.Length
	err := f.m.readConformed(ctx, f.m.readScan, []table.FileScanTask{task}, "reading again", true, func(b arrow.RecordBatch) (bool, error) {
		lo, hi := pos, pos+b.NumRows()
		pos = hi
		a, z := max(lo, from), min(hi, to)
		if a >= z {
			return pos < to, nil
		}
		part := b.NewSlice(a-lo, z-lo)
		defer part.Release()
		n += z - a
		// the updates of rows [a, z)
		var rows []int32
		parts := make([][]arrow.Array, len(f.m.setCols))
		for k < len(held) {
			d := held[k]
			if j == len(d.pos) {
				k, j = k+1, 0
				continue
			}
			if d.pos[j] < a {
				return false, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: an update of row %d held before the rows read again (broken invariant)", f.m.what(), d.pos[j])}
			}
			e := j
			for e < len(d.pos) && d.pos[e] < z {
				rows = append(rows, int32(d.pos[e]-a))
				e++
			}
			applied += int64(e - j)
			if e > j {
				for c := range parts {
					parts[c] = append(parts[c], array.NewSlice(d.vals[c], int64(j), int64(e)))
				}
			}
			if e < len(d.pos) {
				j = e
				break
			}
			k, j = k+1, 0
		}
		defer func() {
			for _, ps := range parts {
				releaseAll(ps)
			}
		}()
		out := part
		if len(rows) > 0 {
			var err error
			out, err = f.m.withColumns(part, f.m.setCols, func(c int) (arrow.Array, error) {
				vals, err := concatParts(f.m.opts.Mem, parts[c])
				if err != nil {
					return nil, err
				}
				defer vals.Release()
				return overlay(ctx, f.m.opts.Mem, part.Column(f.m.setCols[c]), rows, vals)
			})
			if err != nil {
				return false, err
			}
		} else {
			out.Retain()
		}
		if err := f.push(ctx, out); err != nil {
			return false, err
		}
		return pos < to, nil
	})
	if err != nil {
		return err
	}
	if n != to-from || applied != updated {
		return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: data file %s yielded %d of the %d rows to write again, taking %d of %d updates held (broken invariant)", f.m.what(), f.m.relPath(f.task.File.FilePath()), n, to-from, applied, updated)}
	}
	f.copied += to - from - updated
	return nil
}

// overlay is base with rows (ascending) set to vals, in order.
func overlay(ctx context.Context, mem memory.Allocator, base arrow.Array, rows []int32, vals arrow.Array) (arrow.Array, error) {
	if a, ok := exec.Patch(mem, base, rows, vals); ok {
		return a, nil
	}
	all, err := array.Concatenate([]arrow.Array{base, vals}, mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	n := base.Len()
	idx := make([]int32, n)
	for r := range idx {
		idx[r] = int32(r)
	}
	for k, r := range rows {
		idx[r] = int32(n + k)
	}
	out, err := takeCols(ctx, []arrow.Array{all}, idx)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}
