package exec

import (
	"bytes"
	"cmp"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// Comparison operators on every canonical type. Both sides are coerced to
// their common type first (a string literal takes the other side's type,
// as Postgres's unknown literals do). Comparisons with NULL yield NULL;
// IS [NOT] DISTINCT FROM never yields NULL. Floats order NaN above every
// number and equal to itself, as Postgres does, so sorts and comparisons
// agree.

func init() {
	for _, op := range []string{"=", "<>", "<", "<=", ">", ">="} {
		registerOp(op, resolveCompare)
	}
	registerOp("!=", func(_ string, args []Expr) (Expr, error) { return resolveCompare("<>", args) })
	registerOp("is_distinct_from", resolveCompare)
	registerOp("is_not_distinct_from", resolveCompare)
}

func resolveCompare(op string, args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, errNoMatch
	}
	l, r, err := unknownPair(args[0], args[1])
	if err != nil {
		return nil, err
	}
	if c, err := wideDecimalCompare(op, l, r); c != nil || err != nil {
		return c, err
	}
	t, err := CommonType(l.DataType(), r.DataType())
	if err != nil {
		return nil, errNoMatch
	}
	if l, err = Coerce(l, t); err != nil {
		return nil, err
	}
	if r, err = Coerce(r, t); err != nil {
		return nil, err
	}
	fn, lc, rc := compareKernelFor(op, t, l, r)
	if fn == nil {
		return nil, errNoMatch
	}
	c := newCall(op, tBool, fn, formInfix, l, r)
	if lc {
		c.skipping(0)
	}
	if rc {
		c.skipping(1)
	}
	return c, nil
}

// compareKernel picks the comparison of two arrays of type t.
func compareKernel(op string, t arrow.DataType) kernel {
	k, _, _ := compareKernelFor(op, t, nil, nil)
	return k
}

// compareKernelFor is compareKernel where l or r may be a constant that
// the kernel reads in place (integer-like and string types); the flags say
// which arguments need not be evaluated. IS [NOT] DISTINCT FROM reads both.
func compareKernelFor(op string, t arrow.DataType, l, r Expr) (kernel, bool, bool) {
	if lt := listOf(t); lt != nil {
		if k := listCompareKernel(op, lt); k != nil {
			return k, false, false
		}
		return nestedOrderKernel(op, t), false, false
	}
	if mt, ok := t.(*arrow.MapType); ok {
		// a map compares as the list of its entries, in their order, as
		// it hashes (DISTINCT, GROUP BY) and as DuckDB compares maps
		if k := listCompareKernel(op, arrow.ListOfField(mt.ElemField())); k != nil {
			return func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
				return k(ec, []arrow.Array{listArray(a[0]), listArray(a[1])}, n)
			}, false, false
		}
		return nestedOrderKernel(op, t), false, false
	}
	if st, ok := t.(*arrow.StructType); ok {
		if k := structCompareKernel(op, st); k != nil {
			return k, false, false
		}
		return nestedOrderKernel(op, t), false, false
	}
	var raw func(mem memory.Allocator, a, b arrow.Array, n int) *memory.Buffer
	distinct := op == "is_distinct_from" || op == "is_not_distinct_from"
	if distinct {
		l, r = nil, nil
	}
	lc, rc := false, false
	switch {
	case isUUID(t):
		raw = func(mem memory.Allocator, a, b arrow.Array, n int) *memory.Buffer {
			x := a.(array.ExtensionArray).Storage().(*array.FixedSizeBinary)
			y := b.(array.ExtensionArray).Storage().(*array.FixedSizeBinary)
			cs := make([]int8, n)
			for i := range cs {
				cs[i] = int8(bytes.Compare(x.Value(i), y.Value(i)))
			}
			return bitsFromCmp(mem, op, cs)
		}
	default:
		switch t.ID() {
		case arrow.INT8:
			raw, lc, rc = cmpOrdered(op, constOf[int8](l), constOf[int8](r))
		case arrow.INT16:
			raw, lc, rc = cmpOrdered(op, constOf[int16](l), constOf[int16](r))
		case arrow.INT32:
			raw, lc, rc = cmpOrdered(op, constOf[int32](l), constOf[int32](r))
		case arrow.INT64:
			raw, lc, rc = cmpOrdered(op, constOf[int64](l), constOf[int64](r))
		case arrow.DATE32:
			raw, lc, rc = cmpOrdered(op, constOf[arrow.Date32](l), constOf[arrow.Date32](r))
		case arrow.TIME64:
			raw, lc, rc = cmpOrdered(op, constOf[arrow.Time64](l), constOf[arrow.Time64](r))
		case arrow.TIMESTAMP:
			raw, lc, rc = cmpOrdered(op, constOf[arrow.Timestamp](l), constOf[arrow.Timestamp](r))
		case arrow.FLOAT32:
			raw = cmpFloat[float32](op)
		case arrow.FLOAT64:
			raw = cmpFloat[float64](op)
		case arrow.DECIMAL128:
			raw = func(mem memory.Allocator, a, b arrow.Array, n int) *memory.Buffer {
				x, y := values[decimal128.Num](a), values[decimal128.Num](b)
				cs := make([]int8, n)
				for i := range cs {
					cs[i] = int8(x[i].Cmp(y[i]))
				}
				return bitsFromCmp(mem, op, cs)
			}
		case arrow.STRING, arrow.BINARY:
			ls, rs := constStr(l), constStr(r)
			lc, rc = ls != nil, rs != nil
			raw = func(mem memory.Allocator, a, b arrow.Array, n int) *memory.Buffer {
				x, xm := strOperand(a, ls)
				y, ym := strOperand(b, rs)
				cs := make([]int8, n)
				switch op {
				case "=", "<>":
					// equality needs no order: bytes.Equal is cheaper
					for i := range cs {
						if !bytes.Equal(x.at(i&xm), y.at(i&ym)) {
							cs[i] = 1
						}
					}
				default:
					for i := range cs {
						cs[i] = int8(bytes.Compare(x.at(i&xm), y.at(i&ym)))
					}
				}
				return bitsFromCmp(mem, op, cs)
			}
		case arrow.BOOL:
			raw = func(mem memory.Allocator, a, b arrow.Array, n int) *memory.Buffer {
				x, y := a.(*array.Boolean), b.(*array.Boolean)
				cs := make([]int8, n)
				for i := range cs {
					cs[i] = int8(cmpBool(x.Value(i), y.Value(i)))
				}
				return bitsFromCmp(mem, op, cs)
			}
		case arrow.INTERVAL_MONTH_DAY_NANO:
			raw = func(mem memory.Allocator, a, b arrow.Array, n int) *memory.Buffer {
				x, y := values[arrow.MonthDayNanoInterval](a), values[arrow.MonthDayNanoInterval](b)
				cs := make([]int8, n)
				for i := range cs {
					cs[i] = int8(cmp.Compare(intervalKey(x[i]), intervalKey(y[i])))
				}
				return bitsFromCmp(mem, op, cs)
			}
		default:
			return nil, false, false
		}
	}
	return rawCompareKernel(op, raw), lc, rc
}

// rawCompareKernel makes raw, which compares two arrays' values, a
// comparison kernel: NULL where either side is, or for IS [NOT] DISTINCT
// FROM, NULLs compared as values.
func rawCompareKernel(op string, raw func(mem memory.Allocator, a, b arrow.Array, n int) *memory.Buffer) kernel {
	distinct := op == "is_distinct_from" || op == "is_not_distinct_from"
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a, b := args[0], args[1]
		vals := raw(ec.Mem, a, b, n)
		if !distinct {
			return makeArray(tBool, n, andValidity(ec.Mem, n, a, b), array.UnknownNullCount, vals), nil
		}
		// IS [NOT] DISTINCT FROM: two NULLs are not distinct, one NULL is
		if hasNulls(a) || hasNulls(b) {
			ab, aoff := validBits(a)
			bb, boff := validBits(b)
			allA, allB := a.DataType().ID() == arrow.NULL, b.DataType().ID() == arrow.NULL
			vb := vals.Bytes()
			isDistinct := op == "is_distinct_from"
			for i := range n {
				av := !allA && (ab == nil || bitutil.BitIsSet(ab, aoff+i))
				bv := !allB && (bb == nil || bitutil.BitIsSet(bb, boff+i))
				if av && bv {
					continue
				}
				bitutil.SetBitTo(vb, i, (av != bv) == isDistinct)
			}
		}
		return makeArray(tBool, n, nil, 0, vals), nil
	}
}

// wideDecimalCompare compares numerics exactly where their common numeric
// would need more than 38 digits (numeric(38,0) against numeric(38,1), a
// bigint against numeric(38,20)), which coercing both to it cannot hold:
// both sides are scaled to the larger scale in 256 bits. nil when the
// sides are not such a pair.
func wideDecimalCompare(op string, l, r Expr) (Expr, error) {
	lt, rt := l.DataType(), r.DataType()
	if !isDecimal(lt) && !isDecimal(rt) || !isDecimal(lt) && !isInteger(lt) || !isDecimal(rt) && !isInteger(rt) {
		return nil, nil
	}
	dl, dr := asDecimal(lt), asDecimal(rt)
	p, s := decimalHolding(dl, dr)
	if p <= maxDecimalPrecision {
		return nil, nil
	}
	var err error
	if l, err = Coerce(l, dl); err != nil {
		return nil, err
	}
	if r, err = Coerce(r, dr); err != nil {
		return nil, err
	}
	sl, sr := dl.Scale, dr.Scale
	raw := func(mem memory.Allocator, a, b arrow.Array, n int) *memory.Buffer {
		x, y := values[decimal128.Num](a), values[decimal128.Num](b)
		cs := make([]int8, n)
		for i := range cs {
			xv := decimal256.FromDecimal128(x[i]).IncreaseScaleBy(s - sl)
			yv := decimal256.FromDecimal128(y[i]).IncreaseScaleBy(s - sr)
			cs[i] = int8(xv.Cmp(yv))
		}
		return bitsFromCmp(mem, op, cs)
	}
	return newCall(op, tBool, rawCompareKernel(op, raw), formInfix, l, r), nil
}

// constStr is the bytes of a non-NULL string literal, or nil.
func constStr(e Expr) *strView {
	if e == nil {
		return nil
	}
	v, ok := literalValue(e)
	if !ok {
		return nil
	}
	var b []byte
	switch s := v.(type) {
	case *scalar.String:
		b = s.Data()
	case *scalar.Binary:
		b = s.Data()
	default:
		return nil
	}
	return &strView{offs: []int32{0, int32(len(b))}, data: b}
}

// strOperand is operand for strings.
func strOperand(a arrow.Array, c *strView) (strView, int) {
	if c != nil {
		return *c, 0
	}
	return newStrView(a), -1
}

// intervalKey orders intervals as Postgres does: a month is 30 days, a
// day 24 hours.
func intervalKey(v arrow.MonthDayNanoInterval) int64 {
	return (int64(v.Months)*30+int64(v.Days))*usPerDay + v.Nanoseconds/1000
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}

// bitsFromCmp turns three-way comparison results into the operator's
// truth bitmap. Comparing into an []int8 first keeps every loop free of
// indirect calls: one specialised loop computes, one per operator tests.
func bitsFromCmp(mem memory.Allocator, op string, cs []int8) *memory.Buffer {
	out := newBitmap(mem, len(cs))
	ob := out.Bytes()
	switch op {
	case "=", "is_not_distinct_from":
		for i, c := range cs {
			if c == 0 {
				ob[i>>3] |= 1 << (i & 7)
			}
		}
	case "<>", "is_distinct_from":
		for i, c := range cs {
			if c != 0 {
				ob[i>>3] |= 1 << (i & 7)
			}
		}
	case "<":
		for i, c := range cs {
			if c < 0 {
				ob[i>>3] |= 1 << (i & 7)
			}
		}
	case "<=":
		for i, c := range cs {
			if c <= 0 {
				ob[i>>3] |= 1 << (i & 7)
			}
		}
	case ">":
		for i, c := range cs {
			if c > 0 {
				ob[i>>3] |= 1 << (i & 7)
			}
		}
	case ">=":
		for i, c := range cs {
			if c >= 0 {
				ob[i>>3] |= 1 << (i & 7)
			}
		}
	}
	return out
}

// cmpOrdered compares integer-like values with one specialised loop per
// operator, so the inner loop is a compare and a bit set.
func cmpOrdered[T interface {
	cmp.Ordered
	arrow.FixedWidthType
}](op string, lc, rc []T) (func(mem memory.Allocator, a, b arrow.Array, n int) *memory.Buffer, bool, bool) {
	return func(mem memory.Allocator, a, b arrow.Array, n int) *memory.Buffer {
		out := newBitmap(mem, n)
		ob := out.Bytes()
		if n == 0 {
			return out
		}
		if lc != nil && rc == nil {
			// constant on the left: flip the operator so the loops below
			// only handle a constant on the right
			return cmpOrderedRight(op, values[T](b)[:n], lc[0], ob, out, true)
		}
		if rc != nil && lc == nil {
			return cmpOrderedRight(op, values[T](a)[:n], rc[0], ob, out, false)
		}
		var x, y []T
		if lc != nil {
			x, y = make([]T, n), make([]T, n)
			for i := range x {
				x[i], y[i] = lc[0], rc[0]
			}
		} else {
			x, y = values[T](a)[:n], values[T](b)[:n]
		}
		switch op {
		case "=", "is_not_distinct_from":
			for i := range x {
				if x[i] == y[i] {
					ob[i>>3] |= 1 << (i & 7)
				}
			}
		case "<>", "is_distinct_from":
			for i := range x {
				if x[i] != y[i] {
					ob[i>>3] |= 1 << (i & 7)
				}
			}
		case "<":
			for i := range x {
				if x[i] < y[i] {
					ob[i>>3] |= 1 << (i & 7)
				}
			}
		case "<=":
			for i := range x {
				if x[i] <= y[i] {
					ob[i>>3] |= 1 << (i & 7)
				}
			}
		case ">":
			for i := range x {
				if x[i] > y[i] {
					ob[i>>3] |= 1 << (i & 7)
				}
			}
		case ">=":
			for i := range x {
				if x[i] >= y[i] {
					ob[i>>3] |= 1 << (i & 7)
				}
			}
		}
		return out
	}, lc != nil, rc != nil
}

// cmpOrderedRight compares a column with a constant; flipped means the
// constant was on the left, so "<" becomes ">" and so on.
func cmpOrderedRight[T cmp.Ordered](op string, x []T, c T, ob []byte, out *memory.Buffer, flipped bool) *memory.Buffer {
	if flipped {
		switch op {
		case "<":
			op = ">"
		case "<=":
			op = ">="
		case ">":
			op = "<"
		case ">=":
			op = "<="
		}
	}
	switch op {
	case "=":
		for i := range x {
			if x[i] == c {
				ob[i>>3] |= 1 << (i & 7)
			}
		}
	case "<>":
		for i := range x {
			if x[i] != c {
				ob[i>>3] |= 1 << (i & 7)
			}
		}
	case "<":
		for i := range x {
			if x[i] < c {
				ob[i>>3] |= 1 << (i & 7)
			}
		}
	case "<=":
		for i := range x {
			if x[i] <= c {
				ob[i>>3] |= 1 << (i & 7)
			}
		}
	case ">":
		for i := range x {
			if x[i] > c {
				ob[i>>3] |= 1 << (i & 7)
			}
		}
	case ">=":
		for i := range x {
			if x[i] >= c {
				ob[i>>3] |= 1 << (i & 7)
			}
		}
	}
	return out
}

// cmpFloat compares floats with NaN equal to itself and above all else.
func cmpFloat[T float32 | float64](op string) func(mem memory.Allocator, a, b arrow.Array, n int) *memory.Buffer {
	return func(mem memory.Allocator, a, b arrow.Array, n int) *memory.Buffer {
		x, y := values[T](a), values[T](b)
		cs := make([]int8, n)
		for i := range cs {
			cs[i] = int8(floatCompare(float64(x[i]), float64(y[i])))
		}
		return bitsFromCmp(mem, op, cs)
	}
}

func floatCompare(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
