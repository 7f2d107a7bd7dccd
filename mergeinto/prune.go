package mergeinto

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// The early filter (delta-rs calls it that): before the target is read,
// the source's key values become an Iceberg row filter that iceberg-go's
// planner evaluates against partition values and column min/max, so data
// files that cannot hold a matching row are never opened. For each key
// column the filter is `col IN (every distinct source value)` when there
// are few, else `col BETWEEN min AND max`, split into up to 16 ranges at
// the widest gaps between the values for numeric and temporal keys; key
// columns are ANDed.
//
// INVARIANT: the filter is implied by "this target row matches some source
// row", so pruning never drops a file that holds a match. It is used only
// to plan files; the files it keeps are read whole.
//
// The source rows the target's key range left out of the join table
// (keyrange.go) match no target row, so the planning filter is built from
// the others alone: sorting the 1M new keys of a 1.1M-row upsert only to
// find that they lie past every file took most of the planning time. The
// conflict filter (Delta.filter) must still cover every source key, since
// a concurrent commit may add a file holding one of those new keys. It is
// the planning filter ORed with bounding ranges of the left-out keys: one
// below, one above and one within the planning keys' span, found in one
// pass without a sort.

// pruneResult is the outcome of building the early filter.
type pruneResult struct {
	filter iceberg.BooleanExpression // nil: every file is a candidate
	none   bool                      // no target row can match: read nothing
	// conflict is implied by "this row's key is some source row's key"
	// (nil: any row may be; AlwaysFalse: none can be)
	conflict iceberg.BooleanExpression
}

// earlyFilter builds the filter from the source keys held in jb.
func (m *merger) earlyFilter() (pruneResult, error) {
	p := m.p
	if m.src.Rows == 0 {
		return pruneResult{none: true, conflict: iceberg.AlwaysFalse{}}, nil
	}
	batch := array.NewRecordBatch(p.source, m.src.Columns, int64(m.src.Rows))
	defer batch.Release()
	outside := m.src.OutsideBits()
	var plan, conflict []iceberg.BooleanExpression
	none := false
	for i, key := range p.buildKeys {
		vals, err := key.Eval(m.ec, batch)
		if err != nil {
			return pruneResult{}, fmt.Errorf("merge into %s: evaluating the source key %s: %w", p.name, key, err)
		}
		kf := keyFilters(p.target.Field(p.keyCols[i]), vals, m.opts.ExactKeyLimit, outside)
		vals.Release()
		if kf.conflictNone {
			// every source value of this key is NULL: no row matches
			// any, now or after a concurrent commit
			return pruneResult{none: true, conflict: iceberg.AlwaysFalse{}}, nil
		}
		none = none || kf.none
		if kf.plan != nil {
			plan = append(plan, kf.plan)
		}
		if kf.conflict != nil {
			conflict = append(conflict, kf.conflict)
		}
	}
	res := pruneResult{filter: and(plan), none: none, conflict: and(conflict)}
	if none {
		res.filter = nil
	}
	return res, nil
}

// and is the conjunction of exprs (nil when there are none).
func and(exprs []iceberg.BooleanExpression) iceberg.BooleanExpression {
	switch len(exprs) {
	case 0:
		return nil
	case 1:
		return exprs[0]
	}
	return iceberg.NewAnd(exprs[0], exprs[1], exprs[2:]...)
}

// keyFilterPair is the planning and conflict filters of one key column.
type keyFilterPair struct {
	plan     iceberg.BooleanExpression // of the rows not outside; nil: not pruned on
	none     bool                      // no row that is not outside has a value
	conflict iceberg.BooleanExpression // of every row; nil: not pruned on
	// conflictNone: every value is NULL
	conflictNone bool
}

// keyFilters is KeyFilter of the values of the rows whose bit in outside
// (nil: none) is clear, the planning filter, and the filter of every
// row's value, the conflict filter.
func keyFilters(f arrow.Field, vals arrow.Array, exactLimit int, outside []uint64) keyFilterPair {
	if vals.NullN() == vals.Len() {
		return keyFilterPair{none: true, conflictNone: true}
	}
	ref := iceberg.Reference(f.Name)
	switch f.Type.ID() {
	case arrow.INT32:
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		conv := func(v int64) int32 { return int32(min(max(v, lo), hi)) }
		return ints(ref, vals, exactLimit, outside, conv)
	case arrow.INT64:
		return ints(ref, vals, exactLimit, outside, func(v int64) int64 { return v })
	case arrow.STRING:
		a, ok := vals.(*array.String)
		if !ok {
			return keyFilterPair{}
		}
		in, out := collect(a.Len(), a.IsNull, a.Value, outside)
		return pair(ref, in, slices.Values(out), len(out) > 0, exactLimit, nil)
	case arrow.DATE32:
		a, ok := vals.(*array.Date32)
		if !ok {
			return keyFilterPair{}
		}
		get := func(i int) iceberg.Date { return iceberg.Date(a.Value(i)) }
		gap := func(x, y iceberg.Date) float64 { return float64(y) - float64(x) }
		in, out := collect(a.Len(), a.IsNull, get, outside)
		return pair(ref, in, slices.Values(out), len(out) > 0, exactLimit, gap)
	case arrow.TIMESTAMP:
		a, ok := vals.(*array.Timestamp)
		tt := f.Type.(*arrow.TimestampType)
		if !ok || tt.Unit != arrow.Microsecond || !arrow.TypeEqual(a.DataType(), f.Type) {
			return keyFilterPair{}
		}
		get := func(i int) iceberg.Timestamp { return iceberg.Timestamp(a.Value(i)) }
		gap := func(x, y iceberg.Timestamp) float64 { return float64(y) - float64(x) }
		in, out := collect(a.Len(), a.IsNull, get, outside)
		return pair(ref, in, slices.Values(out), len(out) > 0, exactLimit, gap)
	case arrow.DECIMAL128:
		a, ok := vals.(*array.Decimal128)
		dt := f.Type.(*arrow.Decimal128Type)
		if !ok || a.DataType().(*arrow.Decimal128Type).Scale != dt.Scale {
			return keyFilterPair{}
		}
		get := func(i int) iceberg.Decimal { return iceberg.Decimal{Val: a.Value(i), Scale: int(dt.Scale)} }
		c := func(x, y iceberg.Decimal) int { return x.Val.Cmp(y.Val) }
		in, out := collect(a.Len(), a.IsNull, get, outside)
		// no ordered type to box with: the conflict filter of every value
		kf := keyFilterPair{plan: build(ref, in, exactLimit, c, nil), none: len(in) == 0}
		kf.conflict = kf.plan
		if len(out) > 0 {
			kf.conflict = build(ref, append(in[:len(in):len(in)], out...), exactLimit, c, nil)
		}
		return kf
	}
	return keyFilterPair{}
}

// pair builds the planning filter of in and the conflict filter of in
// and out (hasOut: out yields a value; see the comment at the top).
func pair[T interface {
	iceberg.LiteralType
	cmp.Ordered
}](ref iceberg.Reference, in []T, out iter.Seq[T], hasOut bool, exactLimit int, gap func(a, b T) float64) keyFilterPair {
	compare := cmp.Compare[T]
	if len(in) == 0 {
		// nothing to read; the conflict filter as without the split
		return keyFilterPair{none: true, conflict: build(ref, slices.Collect(out), exactLimit, compare, gap)}
	}
	kf := keyFilterPair{plan: build(ref, in, exactLimit, compare, gap)}
	kf.conflict = kf.plan
	if !hasOut {
		return kf
	}
	// the left-out values below, within and above [lo, hi]
	lo, hi := slices.Min(in), slices.Max(in)
	type box struct {
		lo, hi T
		ok     bool
	}
	var boxes [3]box
	for v := range out {
		b := &boxes[1]
		if v < lo {
			b = &boxes[0]
		} else if v > hi {
			b = &boxes[2]
		}
		switch {
		case !b.ok:
			*b = box{v, v, true}
		case v < b.lo:
			b.lo = v
		case v > b.hi:
			b.hi = v
		}
	}
	ors := []iceberg.BooleanExpression{kf.plan}
	for _, b := range boxes {
		if b.ok {
			ors = append(ors, between(ref, b.lo, b.hi, compare))
		}
	}
	kf.conflict = iceberg.NewOr(ors[0], ors[1], ors[2:]...)
	return kf
}

// inside is how many of n rows have their bit clear in bm (nil: all of
// them): the capacity the values kept need. An upsert's new keys are
// mostly outside: with 1M of a source's 1.1M rows outside, a slice for
// every row cost the early filter about 8 ms of its 13 on one core, most
// of it zeroing.
func inside(bm []uint64, n int) int {
	for _, w := range bm {
		n -= bits.OnesCount64(w)
	}
	return max(n, 0)
}

// isOutside reports whether row i's bit is set in bm (nil: no row's).
func isOutside(bm []uint64, i int) bool {
	return bm != nil && bm[i>>6]&(1<<(uint(i)&63)) != 0
}

// ints handles every signed integer key type: the values are read as
// int64 and converted (clamped) to the column's literal type.
func ints[T int32 | int64](ref iceberg.Reference, vals arrow.Array, exactLimit int, outside []uint64, conv func(int64) T) keyFilterPair {
	gap := func(x, y T) float64 { return float64(y) - float64(x) }
	var in, out []T
	switch a := vals.(type) {
	case *array.Int8:
		in, out = collect(a.Len(), a.IsNull, func(i int) T { return conv(int64(a.Value(i))) }, outside)
	case *array.Int16:
		in, out = collect(a.Len(), a.IsNull, func(i int) T { return conv(int64(a.Value(i))) }, outside)
	case *array.Int32:
		in, out = collect(a.Len(), a.IsNull, func(i int) T { return conv(int64(a.Value(i))) }, outside)
	case *array.Int64:
		if a.NullN() > 0 {
			in, out = collect(a.Len(), a.IsNull, func(i int) T { return conv(a.Value(i)) }, outside)
			break
		}
		// the common case, a MERGE's BIGINT key: no call per value but
		// conv, and the left-out values (most of an upsert's) are boxed
		// where they are, not copied
		vs := a.Int64Values()
		in = make([]T, 0, inside(outside, len(vs)))
		hasOut := false
		for i, v := range vs {
			if isOutside(outside, i) {
				hasOut = true
				continue
			}
			in = append(in, conv(v))
		}
		left := func(yield func(T) bool) {
			for i, v := range vs {
				if isOutside(outside, i) && !yield(conv(v)) {
					return
				}
			}
		}
		return pair(ref, in, left, hasOut, exactLimit, gap)
	default:
		return keyFilterPair{}
	}
	return pair(ref, in, slices.Values(out), len(out) > 0, exactLimit, gap)
}

// collect returns the non-NULL values of an array of n values, those of
// the rows whose bit in outside is set in out.
func collect[T any](n int, isNull func(int) bool, get func(int) T, outside []uint64) (in, out []T) {
	if outside == nil {
		in = make([]T, 0, n)
	}
	for i := 0; i < n; i++ {
		switch {
		case isNull(i):
		case isOutside(outside, i):
			out = append(out, get(i))
		default:
			in = append(in, get(i))
		}
	}
	return in, out
}

// build returns ref IN (distinct values) when there are at most
// exactLimit of them, else ref BETWEEN min AND max, split at the widest
// gaps when gap is given. vals are the non-NULL values (NULLs never
// match); build may reorder them.
func build[T iceberg.LiteralType](ref iceberg.Reference, vals []T, exactLimit int, compare func(a, b T) int, gap func(a, b T) float64) iceberg.BooleanExpression {
	if len(vals) == 0 {
		return nil
	}
	lo, hi := bounds(vals, compare)
	var set []T
	exact := exactLimit > 0
	if exact {
		seen := map[any]struct{}{}
		for _, v := range vals {
			k := any(v)
			if d, ok := k.(iceberg.Decimal); ok {
				k = d.Val
			}
			if _, ok := seen[k]; ok {
				continue
			}
			seen[k] = struct{}{}
			set = append(set, v)
			if len(set) > exactLimit {
				exact, set = false, nil
				break
			}
		}
	}
	if exact {
		if len(set) == 1 {
			return iceberg.EqualTo(ref, set[0])
		}
		lits := make([]iceberg.Literal, len(set))
		for i, v := range set {
			lits[i] = iceberg.NewLiteral(v)
		}
		return InFilter(ref, lits)
	}
	if gap == nil {
		return between(ref, lo, hi, compare)
	}
	// Split the range at its widest gaps, so that keys in a few clusters
	// (updates to old rows plus new keys past the end) prune the files
	// between the clusters.
	all := vals
	slices.SortFunc(all, compare)
	cuts := widestGaps(all, maxIntervals-1, gap)
	var ors []iceberg.BooleanExpression
	start := 0
	for _, c := range append(cuts, len(all)-1) {
		ors = append(ors, between(ref, all[start], all[c], compare))
		start = c + 1
	}
	if len(ors) == 1 {
		return ors[0]
	}
	return iceberg.NewOr(ors[0], ors[1], ors[2:]...)
}

// bounds returns the smallest and largest of vals (not empty).
func bounds[T any](vals []T, compare func(a, b T) int) (lo, hi T) {
	lo, hi = vals[0], vals[0]
	for _, v := range vals[1:] {
		if compare(v, lo) < 0 {
			lo = v
		}
		if compare(v, hi) > 0 {
			hi = v
		}
	}
	return lo, hi
}

// icebergInLimit is the most values iceberg-go's metrics and partition
// evaluators check an IN against (inPredicateLimit); past it they answer
// "might match".
const icebergInLimit = 200

// InFilter is ref IN lits for iceberg-go's planner: an OR of INs of at
// most icebergInLimit values when there are more, since each of those
// prunes and one long IN does not. Every value is checked on its own
// against a file's bounds, so how the values are grouped does not matter.
func InFilter(ref iceberg.Reference, lits []iceberg.Literal) iceberg.BooleanExpression {
	if len(lits) <= icebergInLimit {
		return iceberg.SetPredicate(iceberg.OpIn, ref, lits)
	}
	var ors []iceberg.BooleanExpression
	for lo := 0; lo < len(lits); lo += icebergInLimit {
		ors = append(ors, iceberg.SetPredicate(iceberg.OpIn, ref, lits[lo:min(lo+icebergInLimit, len(lits))]))
	}
	return iceberg.NewOr(ors[0], ors[1], ors[2:]...)
}

// maxIntervals bounds the disjuncts of a range filter.
const maxIntervals = 16

func between[T iceberg.LiteralType](ref iceberg.Reference, lo, hi T, compare func(a, b T) int) iceberg.BooleanExpression {
	if compare(lo, hi) == 0 {
		return iceberg.EqualTo(ref, lo)
	}
	return iceberg.NewAnd(iceberg.GreaterThanEqual(ref, lo), iceberg.LessThanEqual(ref, hi))
}

// widestGaps returns, in ascending order, the positions i (cut between
// sorted[i] and sorted[i+1]) of the k widest gaps wider than 1.
func widestGaps[T any](sorted []T, k int, gap func(a, b T) float64) []int {
	type cut struct {
		at int
		w  float64
	}
	var top []cut // descending by width, at most k
	for i := 0; i+1 < len(sorted); i++ {
		w := gap(sorted[i], sorted[i+1])
		if w <= 1 || (len(top) == k && w <= top[k-1].w) {
			continue
		}
		j := len(top)
		if j < k {
			top = append(top, cut{})
		} else {
			j = k - 1
		}
		for j > 0 && top[j-1].w < w {
			top[j] = top[j-1]
			j--
		}
		top[j] = cut{i, w}
	}
	out := make([]int, len(top))
	for i, c := range top {
		out[i] = c.at
	}
	slices.Sort(out)
	return out
}

// KeyFilter is the filter on column f that a set of key values implies:
// f IN (values) for at most exactLimit distinct ones, else ranges
// between them; none when every value is NULL. Files it rules out hold no
// row whose f equals one of the values. nil: f's type is not pruned on.
func KeyFilter(f arrow.Field, vals arrow.Array, exactLimit int) (expr iceberg.BooleanExpression, none bool) {
	kf := keyFilters(f, vals, exactLimit, nil)
	return kf.plan, kf.none
}
