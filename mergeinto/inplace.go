package mergeinto

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/exec"
)

// Updated rows in place. A copy-on-write MERGE whose row actions are all
// UPDATEs rewrites a batch as its rows in their own order, each updated
// row where it was: the columns no SET assigns are the input's arrays as
// they are, and each SET column is the input's copied whole with the
// updated rows' values written over it. Without this the batch became
// its kept rows gathered row by row (every column, for the 99% of rows a
// typical MERGE keeps) followed by the updated rows; the gather was a
// tenth of a copy-on-write MERGE's CPU. The rows are the same either
// way, so are the files' metrics; the order differs (in place keeps the
// file's).

// inPlace returns b rewritten with its updated rows in place (see above):
// upd are the updated-row batches of b and at[i] the rows of b that
// upd[i]'s rows replace. ok is false, nothing allocated, when it does not
// apply: some changed row is not an updated one, b has columns beyond the
// target's, or a SET column's type is not one exec.Patch writes.
func (m *merger) inPlace(b arrow.RecordBatch, upd []arrow.RecordBatch, at [][]int32, changed int) (_ arrow.RecordBatch, ok bool, err error) {
	nt := m.p.target.NumFields()
	if int(b.NumCols()) != nt || !m.patching() {
		return nil, false, nil
	}
	for _, c := range m.setCols {
		if !patchable(b.Column(c).DataType()) {
			return nil, false, nil
		}
	}
	order, sorted, ok := updateOrder(at, changed)
	if !ok {
		return nil, false, nil
	}
	cols := make([]arrow.Array, nt)
	defer func() {
		if err != nil {
			releaseAll(cols)
		}
	}()
	isSet := make([]bool, nt)
	for _, c := range m.setCols {
		isSet[c] = true
	}
	for c := range nt {
		if !isSet[c] {
			cols[c] = b.Column(c)
			cols[c].Retain()
			continue
		}
		vals, err := m.updatedValues(m.ec.Ctx, upd, c, order)
		if err != nil {
			return nil, false, err
		}
		var ok bool
		cols[c], ok = exec.Patch(m.opts.Mem, b.Column(c), sorted, vals)
		vals.Release()
		if !ok {
			releaseAll(cols)
			return nil, false, nil
		}
	}
	return newBatch(b.Schema(), cols, b.NumRows()), true, nil
}

// updatedValues are column c of the updated-row batches upd in row order
// (order: updateOrder's). The caller releases them.
func (m *merger) updatedValues(ctx context.Context, upd []arrow.RecordBatch, c int, order []int32) (arrow.Array, error) {
	parts := make([]arrow.Array, len(upd))
	for i, u := range upd {
		parts[i] = u.Column(c)
	}
	all, err := concatParts(m.opts.Mem, parts)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	vals, err := takeCols(ctx, []arrow.Array{all}, order)
	if err != nil {
		return nil, err
	}
	return vals[0], nil
}

// concatParts is parts as one array: the only part, retained, or their
// concatenation. The caller releases it.
func concatParts(mem memory.Allocator, parts []arrow.Array) (arrow.Array, error) {
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	return array.Concatenate(parts, mem)
}

// updateOrder puts the updated rows at (at[i]: the rows of the batch the
// i-th updated-row batch's rows replace) in row order: sorted are the
// rows, ascending, and order[k] is the index, among the updated rows of
// all batches in turn, of the k-th lowest. ok is false when they are not
// changed rows, or a row is updated twice (not a MERGE's).
func updateOrder(at [][]int32, changed int) (order, sorted []int32, ok bool) {
	var rows []int32
	for _, a := range at {
		rows = append(rows, a...)
	}
	if len(rows) != changed {
		return nil, nil, false
	}
	order = make([]int32, len(rows))
	for k := range order {
		order[k] = int32(k)
	}
	slices.SortFunc(order, func(x, y int32) int { return int(rows[x]) - int(rows[y]) })
	sorted = make([]int32, len(rows))
	for k, o := range order {
		sorted[k] = rows[o]
	}
	for k := 1; k < len(sorted); k++ {
		if sorted[k] == sorted[k-1] {
			return nil, nil, false
		}
	}
	return order, sorted, true
}

// patchable reports whether exec.Patch writes columns of type dt: the
// flat types the engine's take gathers, but booleans.
func patchable(dt arrow.DataType) bool {
	return dt.ID() != arrow.BOOL && engineTakes(dt)
}
