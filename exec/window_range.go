package exec

import (
	"cmp"
	"fmt"
	"math"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// RANGE frames with an offset (RANGE BETWEEN 5 PRECEDING AND CURRENT ROW)
// bound the frame by the ORDER BY value: the rows whose key lies within
// the offset of the current row's key. Keys are mapped to one of three
// domains (int64, float64, decimal128) where "key plus offset" is exact.

// winRangeDomain is how a RANGE key and its offsets are compared.
type winRangeDomain uint8

const (
	winRangeInt winRangeDomain = iota // integers; DATE, TIME, TIMESTAMP as microseconds
	winRangeFloat
	winRangeDecimal
)

// winRangeKey is one RANGE offset converted to the key's domain.
type winRangeKey struct {
	domain winRangeDomain
	i      int64
	f      float64
	d      decimal128.Num
}

const winMicrosPerDay = 86400 * 1_000_000

// newWinRangeKey converts offset to the domain of an ORDER BY key of type
// dt, applying Postgres's checks. which is "starting" or "ending".
func newWinRangeKey(dt arrow.DataType, offset scalar.Scalar, which string) (winRangeKey, error) {
	neg := fmt.Errorf("frame %s offset must not be negative", which)
	bad := fmt.Errorf("RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s and offset type %s", dt, offset.DataType())
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		n, ok := winScalarInt(offset)
		if !ok {
			return winRangeKey{}, bad
		}
		if n < 0 {
			return winRangeKey{}, neg
		}
		return winRangeKey{domain: winRangeInt, i: n}, nil
	case arrow.FLOAT32, arrow.FLOAT64:
		var f float64
		if n, ok := winScalarInt(offset); ok {
			f = float64(n)
		} else {
			switch s := offset.(type) {
			case *scalar.Float64:
				f = s.Value
			case *scalar.Float32:
				f = float64(s.Value)
			case *scalar.Decimal128:
				f = s.Value.ToFloat64(s.Type.(*arrow.Decimal128Type).Scale)
			default:
				return winRangeKey{}, bad
			}
		}
		if f < 0 || math.IsNaN(f) {
			return winRangeKey{}, fmt.Errorf("invalid preceding or following size in window function")
		}
		return winRangeKey{domain: winRangeFloat, f: f}, nil
	case arrow.DECIMAL128:
		c, err := offset.CastTo(dt)
		if err != nil {
			return winRangeKey{}, bad
		}
		d := c.(*scalar.Decimal128).Value
		if d.Sign() < 0 {
			return winRangeKey{}, neg
		}
		return winRangeKey{domain: winRangeDecimal, d: d}, nil
	case arrow.DATE32, arrow.TIME64, arrow.TIMESTAMP:
		var us int64
		if n, ok := winScalarInt(offset); ok && dt.ID() == arrow.DATE32 {
			us = n * winMicrosPerDay
		} else if iv, ok := offset.(*scalar.MonthDayNanoInterval); ok {
			if iv.Value.Months != 0 {
				return winRangeKey{}, fmt.Errorf("RANGE frame offsets cannot contain months; use days (e.g. INTERVAL '30 days')")
			}
			us = int64(iv.Value.Days)*winMicrosPerDay + iv.Value.Nanoseconds/1000
		} else {
			return winRangeKey{}, bad
		}
		if us < 0 {
			return winRangeKey{}, neg
		}
		return winRangeKey{domain: winRangeInt, i: us}, nil
	}
	return winRangeKey{}, bad
}

// winRangeVals holds the ORDER BY key of every row, in sorted order.
type winRangeVals struct {
	domain winRangeDomain
	asc    bool
	ok     []bool
	i      []int64
	f      []float64
	d      []decimal128.Num
}

// newWinRangeVals reads the key at each sorted position.
func newWinRangeVals(dt arrow.DataType, asc bool, arrs []arrow.Array, ord []skRef) *winRangeVals {
	v := &winRangeVals{asc: asc, ok: make([]bool, len(ord))}
	switch dt.ID() {
	case arrow.FLOAT32, arrow.FLOAT64:
		v.domain = winRangeFloat
		v.f = make([]float64, len(ord))
	case arrow.DECIMAL128:
		v.domain = winRangeDecimal
		v.d = make([]decimal128.Num, len(ord))
	default:
		v.domain = winRangeInt
		v.i = make([]int64, len(ord))
	}
	for p, r := range ord {
		a := arrs[r.b]
		row := int(r.r)
		if a.IsNull(row) {
			continue
		}
		v.ok[p] = true
		switch a := a.(type) {
		case *array.Int8:
			v.i[p] = int64(a.Value(row))
		case *array.Int16:
			v.i[p] = int64(a.Value(row))
		case *array.Int32:
			v.i[p] = int64(a.Value(row))
		case *array.Int64:
			v.i[p] = a.Value(row)
		case *array.Date32:
			v.i[p] = int64(a.Value(row)) * winMicrosPerDay
		case *array.Time64:
			v.i[p] = int64(a.Value(row))
		case *array.Timestamp:
			v.i[p] = int64(a.Value(row))
		case *array.Float32:
			v.f[p] = float64(a.Value(row))
		case *array.Float64:
			v.f[p] = a.Value(row)
		case *array.Decimal128:
			v.d[p] = a.Value(row)
		}
	}
	return v
}

// bound returns, within the non-NULL segment [lo, hi) of a partition, the
// first position whose key is past (after=true) or at-or-past
// (after=false) the current row's key moved by off: towards earlier rows
// for preceding, later rows for following.
func (v *winRangeVals) bound(lo, hi, cur int, off winRangeKey, preceding, after bool) int {
	// In sort direction, "preceding" subtracts for ASC and adds for DESC.
	plus := preceding != v.asc
	sgn := 1
	if !v.asc {
		sgn = -1
	}
	var c func(j int) int // the key at j compared with the target, in sort direction
	switch v.domain {
	case winRangeInt:
		t := v.i[cur]
		if plus {
			if t > math.MaxInt64-off.i {
				t = math.MaxInt64
			} else {
				t += off.i
			}
		} else {
			if t < math.MinInt64+off.i {
				t = math.MinInt64
			} else {
				t -= off.i
			}
		}
		c = func(j int) int { return sgn * cmp.Compare(v.i[j], t) }
	case winRangeFloat:
		t := v.f[cur]
		if plus {
			t += off.f
		} else {
			t -= off.f
		}
		if math.IsNaN(v.f[cur]) { // NaN + anything is NaN: the frame is the NaN peers
			t = math.NaN()
		}
		c = func(j int) int { return sgn * skCompareFloat(v.f[j], t) }
	case winRangeDecimal:
		t := v.d[cur]
		if plus {
			t = t.Add(off.d)
		} else {
			t = t.Sub(off.d)
		}
		c = func(j int) int { return sgn * v.d[j].Cmp(t) }
	}
	return lo + sort.Search(hi-lo, func(k int) bool {
		if after {
			return c(lo+k) > 0
		}
		return c(lo+k) >= 0
	})
}
