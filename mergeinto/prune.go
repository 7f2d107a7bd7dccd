package mergeinto

import (
	"cmp"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// The early filter (delta-rs calls it that): before the target is read,
// the source's key values become an Iceberg row filter that iceberg-go's
// planner evaluates against partition values and column min/max, so data
// files that cannot hold a matching row are never opened. For each key
// column the filter is `col IN (every distinct source value)` when there
// are few, else `col BETWEEN min AND max`; key columns are ANDed.
//
// INVARIANT: the filter is implied by "this target row matches some source
// row", so pruning never drops a file that holds a match. It is used only
// to plan files; the files it keeps are read whole.

// pruneResult is the outcome of building the early filter.
type pruneResult struct {
	filter iceberg.BooleanExpression // nil: every file is a candidate
	none   bool                      // no target row can match: read nothing
}

// earlyFilter builds the filter from the source keys held in jb.
func (m *merger) earlyFilter() (pruneResult, error) {
	p := m.p
	if m.src.Rows == 0 {
		return pruneResult{none: true}, nil
	}
	batch := array.NewRecordBatch(p.source, m.src.Columns, int64(m.src.Rows))
	defer batch.Release()
	var conj []iceberg.BooleanExpression
	for i, key := range p.buildKeys {
		vals, err := key.Eval(m.ec, batch)
		if err != nil {
			return pruneResult{}, fmt.Errorf("merge into %s: evaluating the source key %s: %w", p.name, key, err)
		}
		expr, none := keyFilter(p.target.Field(p.keyCols[i]), vals, m.opts.ExactKeyLimit)
		vals.Release()
		if none {
			return pruneResult{none: true}, nil
		}
		if expr != nil {
			conj = append(conj, expr)
		}
	}
	switch len(conj) {
	case 0:
		return pruneResult{}, nil
	case 1:
		return pruneResult{filter: conj[0]}, nil
	}
	return pruneResult{filter: iceberg.NewAnd(conj[0], conj[1], conj[2:]...)}, nil
}

// keyFilter is the filter on one target column given the source's key
// values for it; none when every value is NULL (nothing can match).
// A nil expression means the column's type is not pruned on.
func keyFilter(f arrow.Field, vals arrow.Array, exactLimit int) (expr iceberg.BooleanExpression, none bool) {
	if vals.NullN() == vals.Len() {
		return nil, true
	}
	ref := iceberg.Reference(f.Name)
	switch f.Type.ID() {
	case arrow.INT32:
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		conv := func(v int64) int32 { return int32(min(max(v, lo), hi)) }
		return ints(ref, vals, exactLimit, conv), false
	case arrow.INT64:
		return ints(ref, vals, exactLimit, func(v int64) int64 { return v }), false
	case arrow.STRING:
		a, ok := vals.(*array.String)
		if !ok {
			return nil, false
		}
		return build(ref, a.Len(), a.IsNull, a.Value, exactLimit, cmp.Compare[string]), false
	case arrow.DATE32:
		a, ok := vals.(*array.Date32)
		if !ok {
			return nil, false
		}
		get := func(i int) iceberg.Date { return iceberg.Date(a.Value(i)) }
		return build(ref, a.Len(), a.IsNull, get, exactLimit, cmp.Compare[iceberg.Date]), false
	case arrow.TIMESTAMP:
		a, ok := vals.(*array.Timestamp)
		tt := f.Type.(*arrow.TimestampType)
		if !ok || tt.Unit != arrow.Microsecond || !arrow.TypeEqual(a.DataType(), f.Type) {
			return nil, false
		}
		get := func(i int) iceberg.Timestamp { return iceberg.Timestamp(a.Value(i)) }
		return build(ref, a.Len(), a.IsNull, get, exactLimit, cmp.Compare[iceberg.Timestamp]), false
	case arrow.DECIMAL128:
		a, ok := vals.(*array.Decimal128)
		dt := f.Type.(*arrow.Decimal128Type)
		if !ok || a.DataType().(*arrow.Decimal128Type).Scale != dt.Scale {
			return nil, false
		}
		get := func(i int) iceberg.Decimal { return iceberg.Decimal{Val: a.Value(i), Scale: int(dt.Scale)} }
		c := func(x, y iceberg.Decimal) int { return x.Val.Cmp(y.Val) }
		return build(ref, a.Len(), a.IsNull, get, exactLimit, c), false
	}
	return nil, false
}

// ints handles every signed integer key type: the values are read as
// int64 and converted (clamped) to the column's literal type.
func ints[T int32 | int64](ref iceberg.Reference, vals arrow.Array, exactLimit int, conv func(int64) T) iceberg.BooleanExpression {
	var get func(i int) int64
	switch a := vals.(type) {
	case *array.Int8:
		get = func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int16:
		get = func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int32:
		get = func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int64:
		get = a.Value
	default:
		return nil
	}
	return build(ref, vals.Len(), vals.IsNull, func(i int) T { return conv(get(i)) }, exactLimit, cmp.Compare[T])
}

// build returns ref IN (distinct values) when there are at most
// exactLimit of them, else ref BETWEEN min AND max. NULLs are skipped:
// they never match. n > 0 non-NULL values are assumed.
func build[T iceberg.LiteralType](ref iceberg.Reference, n int, isNull func(int) bool, get func(int) T, exactLimit int, compare func(a, b T) int) iceberg.BooleanExpression {
	var lo, hi T
	first := true
	var set []T
	seen := map[any]struct{}{}
	exact := exactLimit > 0
	for i := 0; i < n; i++ {
		if isNull(i) {
			continue
		}
		v := get(i)
		if first {
			lo, hi, first = v, v, false
		} else {
			if compare(v, lo) < 0 {
				lo = v
			}
			if compare(v, hi) > 0 {
				hi = v
			}
		}
		if exact {
			k := any(v)
			if d, ok := k.(iceberg.Decimal); ok {
				k = d.Val
			}
			if _, ok := seen[k]; !ok {
				seen[k] = struct{}{}
				set = append(set, v)
				if len(set) > exactLimit {
					exact, set, seen = false, nil, nil
				}
			}
		}
	}
	if first {
		return nil
	}
	if exact {
		if len(set) == 1 {
			return iceberg.EqualTo(ref, set[0])
		}
		return iceberg.IsIn(ref, set...)
	}
	if compare(lo, hi) == 0 {
		return iceberg.EqualTo(ref, lo)
	}
	return iceberg.NewAnd(iceberg.GreaterThanEqual(ref, lo), iceberg.LessThanEqual(ref, hi))
}
