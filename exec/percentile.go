package exec

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The ordered-set aggregates, percentile_cont, percentile_disc and mode
// WITHIN GROUP (ORDER BY x), and DuckDB's median and quantile_cont, are
// bound by plan as one of the functions below over the group's
// array_agg(x ORDER BY x) without NULLs: a list of the group's values in
// the WITHIN GROUP order. Their names end in "#list", which no unquoted
// name can spell.
//
//	percentile_cont#list(values, f)  PostgreSQL's percentile_cont: the
//	    value at position f·(n-1), interpolated linearly between the two
//	    values around it; DOUBLE (numeric values are read as doubles)
//	percentile_disc#list(values, f)  the first value whose position in
//	    the order reaches f (the ⌈f·n⌉-th); the values' type
//	mode#list(values)                the most frequent value, the first
//	    in the order among equally frequent ones
//	median#list(values)              percentile_cont at 0.5 for numbers,
//	    percentile_disc at 0.5 for other types (the lower middle value)
//
// f may be an array of fractions, giving an array of results. An empty
// list (a group without non-NULL values) or a NULL fraction gives NULL;
// a fraction outside [0, 1] is an error, as in PostgreSQL.

func init() {
	register("percentile_cont#list", resolvePercentile(true))
	register("percentile_disc#list", resolvePercentile(false))
	register("mode#list", resolveMode)
	register("median#list", func(name string, args []Expr) (Expr, error) {
		if len(args) != 1 || listOf(args[0].DataType()) == nil {
			return nil, errNoMatch
		}
		half, err := NewLiteral(0.5)
		if err != nil {
			return nil, err
		}
		return resolvePercentile(isNumeric(listOf(args[0].DataType()).Elem()))(name, []Expr{args[0], half})
	})
}

var tFloat64List = arrow.ListOf(arrow.PrimitiveTypes.Float64)

// resolvePercentile is percentile_cont#list (cont) or percentile_disc#list.
func resolvePercentile(cont bool) overload {
	return func(name string, args []Expr) (Expr, error) {
		if len(args) != 2 {
			return nil, errNoMatch
		}
		lt := listOf(args[0].DataType())
		if lt == nil {
			return nil, errNoMatch
		}
		vals := args[0]
		elem := lt.Elem()
		if cont {
			if !isNumeric(elem) && !isNull(elem) {
				return nil, fmt.Errorf("percentile_cont needs numbers to interpolate, not %s; use percentile_disc", TypeName(elem))
			}
			var err error
			if vals, err = NewCast(vals, tFloat64List, false); err != nil {
				return nil, err
			}
			elem = arrow.PrimitiveTypes.Float64
		}
		frac, many := args[1], false
		if fl := listOf(frac.DataType()); fl != nil {
			if !isNumeric(fl.Elem()) && !isNull(fl.Elem()) {
				return nil, errNoMatch
			}
			c, err := NewCast(frac, tFloat64List, false)
			if err != nil {
				return nil, err
			}
			frac, many = c, true
		} else {
			c, err := Coerce(frac, arrow.PrimitiveTypes.Float64)
			if err != nil {
				return nil, errNoMatch
			}
			frac = c
		}
		typ := elem
		if many {
			typ = arrow.ListOf(elem)
		}
		return newCall(name, typ, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
			return percentiles(ec.Mem, a[0].(*array.List), a[1], n, cont, many)
		}, formFunc, vals, frac), nil
	}
}

// percentiles computes each row's percentile(s) of its list l.
func percentiles(mem memory.Allocator, l *array.List, fracs arrow.Array, n int, cont, many bool) (arrow.Array, error) {
	values := l.ListValues()
	// at returns, for row i and fraction f, the element index (disc) or
	// the two indexes and the weight of the second (cont); ok false for
	// NULL
	pick := func(i int, f float64) (lo, hi int, w float64, err error) {
		if f < 0 || f > 1 || math.IsNaN(f) {
			return 0, 0, 0, fmt.Errorf("percentile value %g is not between 0 and 1", f)
		}
		start, end := l.ValueOffsets(i)
		cnt := int(end - start)
		if cont {
			pos := f * float64(cnt-1)
			lo, hi = int(math.Floor(pos)), int(math.Ceil(pos))
			return int(start) + lo, int(start) + hi, pos - float64(lo), nil
		}
		k := int(math.Ceil(f*float64(cnt))) - 1
		k = max(k, 0)
		return int(start) + k, int(start) + k, 0, nil
	}
	empty := func(i int) bool {
		start, end := l.ValueOffsets(i)
		return l.IsNull(i) || start == end
	}
	if !many {
		fa := fracs.(*array.Float64)
		if cont {
			vs := values.(*array.Float64)
			b := array.NewFloat64Builder(mem)
			defer b.Release()
			b.Reserve(n)
			for i := 0; i < n; i++ {
				if empty(i) || fa.IsNull(i) {
					b.AppendNull()
					continue
				}
				lo, hi, w, err := pick(i, fa.Value(i))
				if err != nil {
					return nil, err
				}
				b.Append(lerp(vs.Value(lo), vs.Value(hi), w))
			}
			return b.NewArray(), nil
		}
		take := make([]int32, n)
		for i := 0; i < n; i++ {
			take[i] = -1
			if empty(i) || fa.IsNull(i) {
				continue
			}
			k, _, _, err := pick(i, fa.Value(i))
			if err != nil {
				return nil, err
			}
			take[i] = int32(k)
		}
		return takeArray(mem, values, take)
	}
	// an array of fractions: one list of results per row
	fl := fracs.(*array.List)
	fv := fl.ListValues().(*array.Float64)
	offBuf, offsets := newFixed[int32](mem, n+1)
	offsets[0] = 0
	var validBuf *memory.Buffer
	if fl.NullN() > 0 {
		validBuf = newBitmap(mem, n)
	}
	var take []int32
	var conts []float64
	var contValid []bool
	for i := 0; i < n; i++ {
		offsets[i+1] = offsets[i]
		if fl.IsNull(i) {
			continue
		}
		if validBuf != nil {
			bitutil.SetBit(validBuf.Bytes(), i)
		}
		fs, fe := fl.ValueOffsets(i)
		for j := fs; j < fe; j++ {
			null := empty(i) || fv.IsNull(int(j))
			var lo, hi int
			var w float64
			if !null {
				var err error
				if lo, hi, w, err = pick(i, fv.Value(int(j))); err != nil {
					offBuf.Release()
					if validBuf != nil {
						validBuf.Release()
					}
					return nil, err
				}
			}
			switch {
			case cont && null:
				conts, contValid = append(conts, 0), append(contValid, false)
			case cont:
				vs := values.(*array.Float64)
				conts, contValid = append(conts, lerp(vs.Value(lo), vs.Value(hi), w)), append(contValid, true)
			case null:
				take = append(take, -1)
			default:
				take = append(take, int32(lo))
			}
			offsets[i+1]++
		}
	}
	var elems arrow.Array
	if cont {
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		b.AppendValues(conts, contValid)
		elems = b.NewArray()
	} else {
		var err error
		if elems, err = takeArray(mem, values, take); err != nil {
			offBuf.Release()
			if validBuf != nil {
				validBuf.Release()
			}
			return nil, err
		}
	}
	defer elems.Release()
	return newList(arrow.ListOf(elems.DataType()), n, validBuf, offBuf, elems), nil
}

// lerp is PostgreSQL's float8_lerp: lo + (hi - lo) · w.
func lerp(lo, hi, w float64) float64 {
	if w == 0 {
		return lo
	}
	return lo + (hi-lo)*w
}

// resolveMode is mode#list(values): the longest run of equal values of
// the sorted list, the first on ties.
func resolveMode(name string, args []Expr) (Expr, error) {
	if len(args) != 1 || listOf(args[0].DataType()) == nil {
		return nil, errNoMatch
	}
	elem := listOf(args[0].DataType()).Elem()
	if err := skKeyTypeSupported(elem); err != nil {
		return nil, err
	}
	return newCall(name, elem, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		l := a[0].(*array.List)
		values := l.ListValues()
		keys, err := newSkRowKeys([]arrow.DataType{elem}, []skOrder{{}})
		if err != nil {
			return nil, err
		}
		keys.add([]arrow.Array{values})
		take := make([]int32, n)
		for i := 0; i < n; i++ {
			take[i] = -1
			start, end := l.ValueOffsets(i)
			if l.IsNull(i) || start == end {
				continue
			}
			best, bestLen := start, int64(0)
			for j := start; j < end; {
				k := j + 1
				for k < end && keys.compare(skRef{0, int32(j)}, skRef{0, int32(k)}) == 0 {
					k++
				}
				if k-j > bestLen {
					best, bestLen = j, k-j
				}
				j = k
			}
			take[i] = int32(best)
		}
		return takeArray(ec.Mem, values, take)
	}, formFunc, args[0]), nil
}
