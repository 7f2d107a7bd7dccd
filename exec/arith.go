package exec

import (
	"errors"
	"math/big"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Arithmetic operators + - * / % and unary negate, with Postgres
// semantics: both sides are coerced to their common numeric type and the
// result has that type (smallint + smallint is smallint), integer overflow
// is an error naming the type, integer division truncates toward zero,
// division by zero is an error for every numeric type, and numeric
// (decimal) results take Postgres's scales. Date and time arithmetic is
// resolved in temporal.go.

var errDivByZero = errors.New("division by zero")

func init() {
	for _, op := range []string{"+", "-", "*", "/", "%"} {
		registerOp(op, resolveArith)
	}
	registerOp("negate", resolveNegate)
}

// unknownPair gives a string literal or untyped NULL on one side the type
// of the other side, as Postgres resolves "unknown" operands.
func unknownPair(l, r Expr) (Expr, Expr, error) {
	lt, rt := l.DataType(), r.DataType()
	var err error
	switch {
	case (isUnknownLiteral(l) || isNull(lt)) && !isUnknownLiteral(r) && !isNull(rt):
		l, err = resolveUnknown(l, rt)
	case (isUnknownLiteral(r) || isNull(rt)) && !isUnknownLiteral(l) && !isNull(lt):
		r, err = resolveUnknown(r, lt)
	}
	return l, r, err
}

// resolveUnknown types a string literal or NULL by its context type. Next
// to a numeric the literal keeps its own scale (Postgres's unknown becomes
// unconstrained numeric), so dec_col = '1.5' does not round the constant
// to the column's scale.
func resolveUnknown(e Expr, ctx arrow.DataType) (Expr, error) {
	if isDecimal(ctx) && isUnknownLiteral(e) {
		v, _ := literalValue(e)
		if d, err := NewDecimalLiteral(strings.TrimSpace(v.String())); err == nil {
			return d, nil
		}
	}
	return NewCast(e, ctx, false)
}

func resolveArith(op string, args []Expr) (Expr, error) {
	if len(args) == 1 && (op == "-" || op == "+") {
		// unary minus and plus under their binary names
		if op == "-" {
			return resolveNegate("negate", args)
		}
		if isNumeric(args[0].DataType()) || args[0].DataType().ID() == arrow.INTERVAL_MONTH_DAY_NANO {
			return args[0], nil
		}
		return nil, errNoMatch
	}
	if len(args) != 2 {
		return nil, errNoMatch
	}
	l, r := args[0], args[1]
	// a quoted literal next to a date or timestamp is an interval in + and -
	if (op == "+" || op == "-") && isUnknownLiteral(r) && isDateLike(l.DataType()) {
		var err error
		if r, err = NewCast(r, tInterval, false); err != nil {
			return nil, err
		}
	}
	if op == "+" && isUnknownLiteral(l) && isDateLike(r.DataType()) {
		var err error
		if l, err = NewCast(l, tInterval, false); err != nil {
			return nil, err
		}
	}
	l, r, err := unknownPair(l, r)
	if err != nil {
		return nil, err
	}
	lt, rt := l.DataType(), r.DataType()
	if isNull(lt) && isNull(rt) {
		// NULL + NULL: Postgres cannot choose; integer is a harmless pick
		if l, err = NewCast(l, tInt32, false); err != nil {
			return nil, err
		}
		if r, err = NewCast(r, tInt32, false); err != nil {
			return nil, err
		}
		lt, rt = tInt32, tInt32
	}
	if isNumeric(lt) && isNumeric(rt) {
		return numericArith(op, l, r)
	}
	return temporalArith(op, l, r)
}

// numericArith coerces both sides and picks the kernel.
func numericArith(op string, l, r Expr) (Expr, error) {
	t, _ := CommonType(l.DataType(), r.DataType())
	if isDecimal(t) {
		return decimalArith(op, l, r)
	}
	if isFloat(t) && op == "%" {
		return nil, errNoMatch // Postgres has no % for floating point
	}
	l, err := Coerce(l, t)
	if err != nil {
		return nil, err
	}
	r, err = Coerce(r, t)
	if err != nil {
		return nil, err
	}
	var fn kernel
	var lc, rc bool
	switch t.ID() {
	case arrow.INT8:
		fn, lc, rc = intArith(op, t, constOf[int8](l), constOf[int8](r))
	case arrow.INT16:
		fn, lc, rc = intArith(op, t, constOf[int16](l), constOf[int16](r))
	case arrow.INT32:
		fn, lc, rc = intArith(op, t, constOf[int32](l), constOf[int32](r))
	case arrow.INT64:
		fn, lc, rc = intArith(op, t, constOf[int64](l), constOf[int64](r))
	case arrow.FLOAT32:
		fn, lc, rc = floatArith(op, t, constOf[float32](l), constOf[float32](r))
	case arrow.FLOAT64:
		fn, lc, rc = floatArith(op, t, constOf[float64](l), constOf[float64](r))
	default:
		return nil, errNoMatch
	}
	c := newCall(op, t, fn, formInfix, l, r)
	if lc {
		c.skipping(0)
	}
	if rc {
		c.skipping(1)
	}
	return c, nil
}

// binaryOut prepares a strict binary kernel's output: values of T and the
// intersection of the inputs' validity.
func binaryOut[T arrow.FixedWidthType](mem memory.Allocator, n int, a, b arrow.Array) (*memory.Buffer, []T, *memory.Buffer, []byte) {
	valid := andValidity(mem, n, a, b)
	buf, out := newFixed[T](mem, n)
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
	}
	return buf, out, valid, vb
}

func releaseBufs(bufs ...*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}

// intArith is integer arithmetic with overflow checks. Errors are raised
// only for valid rows: the values under a NULL are arbitrary.
// A constant side (lc or rc non-nil) is read in place; the returned flags
// say which arguments the kernel does not need evaluated.
func intArith[T signed](op string, dt arrow.DataType, lc, rc []T) (kernel, bool, bool) {
	var one T = 1
	width := unsafe.Sizeof(one) * 8
	minT := one << (width - 1)
	narrow := width < 64
	rangeErr := outOfRange(dt)
	// x / d and x % d by a constant d > 1: a multiply and a shift for
	// x >= 0 (udiv), the hardware's division for the rest
	var ud udiv
	if (op == "/" || op == "%") && len(rc) == 1 && rc[0] > 1 {
		ud = newUDiv(uint64(rc[0]))
	}
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a, am := operand(args[0], lc)
		b, bm := operand(args[1], rc)
		buf, out, valid, vb := binaryOut[T](ec.Mem, n, args[0], args[1])
		fail := func(err error) (arrow.Array, error) {
			releaseBufs(buf, valid)
			return nil, err
		}
		if ud.m != 0 {
			d := rc[0]
			if op == "/" {
				for i := range out {
					if x := a[i&am]; x >= 0 {
						out[i] = T(ud.div(uint64(x)))
					} else {
						out[i] = x / d
					}
				}
			} else {
				for i := range out {
					if x := a[i&am]; x >= 0 {
						out[i] = x - T(ud.div(uint64(x)))*d
					} else {
						out[i] = x % d
					}
				}
			}
			return makeArray(dt, n, valid, array.UnknownNullCount, buf), nil
		}
		switch op {
		case "+":
			for i := range out {
				x, y := a[i&am], b[i&bm]
				r := x + y
				if (x^r)&(y^r) < 0 && isValid(vb, i) {
					return fail(rangeErr)
				}
				out[i] = r
			}
		case "-":
			for i := range out {
				x, y := a[i&am], b[i&bm]
				r := x - y
				if (x^y)&(x^r) < 0 && isValid(vb, i) {
					return fail(rangeErr)
				}
				out[i] = r
			}
		case "*":
			if narrow {
				for i := range out {
					w := int64(a[i&am]) * int64(b[i&bm])
					if w != int64(T(w)) && isValid(vb, i) {
						return fail(rangeErr)
					}
					out[i] = T(w)
				}
			} else {
				for i := range out {
					x, y := a[i&am], b[i&bm]
					r := x * y
					if x != 0 && (r/x != y || (x == -1 && y == minT)) && isValid(vb, i) {
						return fail(rangeErr)
					}
					out[i] = r
				}
			}
		case "/":
			for i := range out {
				x, y := a[i&am], b[i&bm]
				switch {
				case y == 0:
					if isValid(vb, i) {
						return fail(errDivByZero)
					}
					out[i] = 0
				case y == -1:
					if x == minT && isValid(vb, i) {
						return fail(rangeErr)
					}
					out[i] = -x
				default:
					out[i] = x / y
				}
			}
		case "%":
			for i := range out {
				x, y := a[i&am], b[i&bm]
				switch {
				case y == 0:
					if isValid(vb, i) {
						return fail(errDivByZero)
					}
					out[i] = 0
				case y == -1:
					out[i] = 0
				default:
					out[i] = x % y
				}
			}
		}
		return makeArray(dt, n, valid, array.UnknownNullCount, buf), nil
	}, lc != nil, rc != nil
}

// udiv divides a non-negative int64 by a constant d > 1 with a multiply
// and a shift: floor(x/d) = floor(x*m / 2^(63+l)) for every x < 2^63,
// where l = bits.Len64(d) and m = ceil(2^(63+l) / d) < 2^64 (Granlund and
// Montgomery, "Division by invariant integers using multiplication",
// 1994, theorem 4.2, with N = 63: m*d - 2^(63+l) <= d-1 < 2^l). For d =
// 2^k it is x*2^(64-k) / 2^64, a shift.
type udiv struct {
	m     uint64 // 0: none
	shift uint
}

func newUDiv(d uint64) udiv {
	l := uint(bits.Len64(d))
	if d&(d-1) == 0 {
		return udiv{m: 1 << (65 - l)} // d = 2^(l-1), l-1 <= 62
	}
	q, r := bits.Div64(1<<(l-1), 0, d) // 2^(63+l) / d; 2^(l-1) < d
	if r != 0 {
		q++
	}
	return udiv{m: q, shift: l - 1}
}

func (u udiv) div(x uint64) uint64 {
	hi, _ := bits.Mul64(x, u.m)
	return hi >> u.shift
}

// floatArith is IEEE arithmetic, except that division by zero is an
// error as in Postgres.
func floatArith[T ~float32 | ~float64](op string, dt arrow.DataType, lc, rc []T) (kernel, bool, bool) {
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a, am := operand(args[0], lc)
		b, bm := operand(args[1], rc)
		buf, out, valid, vb := binaryOut[T](ec.Mem, n, args[0], args[1])
		switch op {
		case "+":
			for i := range out {
				out[i] = a[i&am] + b[i&bm]
			}
		case "-":
			for i := range out {
				out[i] = a[i&am] - b[i&bm]
			}
		case "*":
			for i := range out {
				out[i] = a[i&am] * b[i&bm]
			}
		case "/":
			for i := range out {
				if b[i&bm] == 0 {
					if isValid(vb, i) {
						releaseBufs(buf, valid)
						return nil, errDivByZero
					}
					out[i] = 0
					continue
				}
				out[i] = a[i&am] / b[i&bm]
			}
		}
		return makeArray(dt, n, valid, array.UnknownNullCount, buf), nil
	}, lc != nil, rc != nil
}

// decimalArith implements numeric arithmetic. Result types follow
// Postgres's scales: + - % keep the larger scale, * adds the scales, and /
// keeps at least 16 fractional digits (Postgres's minimum significant
// digits); precision is capped at 38 and exceeding it is an error.
func decimalArith(op string, l, r Expr) (Expr, error) {
	ld, rd := asDecimal(l.DataType()), asDecimal(r.DataType())
	var err error
	if l, err = Coerce(l, ld); err != nil {
		return nil, err
	}
	if r, err = Coerce(r, rd); err != nil {
		return nil, err
	}
	s := max(ld.Scale, rd.Scale)
	intd := max(ld.Precision-ld.Scale, rd.Precision-rd.Scale)
	switch op {
	case "+", "-", "%":
		// align scales with casts so the kernel adds raw integers
		common := decimalOf(intd+s, s)
		if l, err = NewCast(l, common, false); err != nil {
			return nil, err
		}
		if r, err = NewCast(r, common, false); err != nil {
			return nil, err
		}
		p := intd + s + 1
		if op == "%" {
			p = intd + s
		}
		dt := decimalOf(p, s)
		return newCall(op, dt, decAddSubMod(op, dt), formInfix, l, r), nil
	case "*":
		dt := decimalOf(ld.Precision+rd.Precision, ld.Scale+rd.Scale)
		return newCall(op, dt, decMulKernel(ld.Scale+rd.Scale, dt), formInfix, l, r), nil
	case "/":
		rs := min(max(16, s), 38)
		dt := decimalOf(38, rs)
		// a / b at scale rs: a * 10^(rs - sa + sb) / b
		k := rs - ld.Scale + rd.Scale
		return newCall(op, dt, decDivKernel(k, dt), formInfix, l, r), nil
	}
	return nil, errNoMatch
}

var errNumericFormat = errors.New("value overflows numeric format")

func decAddSubMod(op string, dt arrow.DataType) kernel {
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a, b := values[decimal128.Num](args[0]), values[decimal128.Num](args[1])
		buf, out, valid, vb := binaryOut[decimal128.Num](ec.Mem, n, args[0], args[1])
		for i := range out {
			var r decimal128.Num
			ok := true
			switch op {
			case "+":
				r, ok = decAdd(a[i], b[i])
			case "-":
				r, ok = decAdd(a[i], b[i].Negate())
			case "%":
				if b[i].Sign() == 0 {
					if isValid(vb, i) {
						releaseBufs(buf, valid)
						return nil, errDivByZero
					}
					break
				}
				r = decRem(a[i], b[i])
			}
			if !ok && isValid(vb, i) {
				releaseBufs(buf, valid)
				return nil, errNumericFormat
			}
			out[i] = r
		}
		return makeArray(dt, n, valid, array.UnknownNullCount, buf), nil
	}
}

// decRem is the remainder with the sign of the dividend, as Postgres's.
func decRem(a, b decimal128.Num) decimal128.Num {
	if x, ok := decI64(a); ok {
		if y, ok := decI64(b); ok && y != -1 {
			return decimal128.FromI64(x % y)
		}
	}
	return decimal128.FromBigInt(new(big.Int).Rem(a.BigInt(), b.BigInt()))
}

func decMulKernel(rawScale int32, dt *arrow.Decimal128Type) kernel {
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a, b := values[decimal128.Num](args[0]), values[decimal128.Num](args[1])
		buf, out, valid, vb := binaryOut[decimal128.Num](ec.Mem, n, args[0], args[1])
		for i := range out {
			r, ok := decMul(a[i], b[i])
			if ok && rawScale != dt.Scale {
				r, ok = decRescale(r, rawScale, dt.Scale)
			}
			if !ok && isValid(vb, i) {
				releaseBufs(buf, valid)
				return nil, errNumericFormat
			}
			out[i] = r
		}
		return makeArray(dt, n, valid, array.UnknownNullCount, buf), nil
	}
}

func decDivKernel(k int32, dt *arrow.Decimal128Type) kernel {
	pow := decimal128.GetScaleMultiplier(int(k))
	bigPow := pow.BigInt()
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a, b := values[decimal128.Num](args[0]), values[decimal128.Num](args[1])
		buf, out, valid, vb := binaryOut[decimal128.Num](ec.Mem, n, args[0], args[1])
		for i := range out {
			if b[i].Sign() == 0 {
				if isValid(vb, i) {
					releaseBufs(buf, valid)
					return nil, errDivByZero
				}
				out[i] = decimal128.Num{}
				continue
			}
			num, ok := decMul(a[i], pow)
			var r decimal128.Num
			if ok {
				r, ok = decDivRound(num, b[i])
			} else {
				// the scaled dividend passes 38 digits; divide in big ints
				bn := new(big.Int).Mul(a[i].BigInt(), bigPow)
				bd := b[i].BigInt()
				q, rem := new(big.Int).QuoRem(bn, bd, new(big.Int))
				if rem.Abs(rem).Lsh(rem, 1).CmpAbs(bd) >= 0 {
					if bn.Sign() != bd.Sign() {
						q.Sub(q, big.NewInt(1))
					} else {
						q.Add(q, big.NewInt(1))
					}
				}
				r, ok = decFromBig(q)
			}
			if !ok && isValid(vb, i) {
				releaseBufs(buf, valid)
				return nil, errNumericFormat
			}
			out[i] = r
		}
		return makeArray(dt, n, valid, array.UnknownNullCount, buf), nil
	}
}

func resolveNegate(op string, args []Expr) (Expr, error) {
	if len(args) != 1 {
		return nil, errNoMatch
	}
	a := args[0]
	if isUnknownLiteral(a) || isNull(a.DataType()) {
		var err error
		if a, err = NewCast(a, tInt32, false); err != nil {
			return nil, err
		}
	}
	t := a.DataType()
	var fn kernel
	switch t.ID() {
	case arrow.INT8:
		fn = intNegate[int8](t)
	case arrow.INT16:
		fn = intNegate[int16](t)
	case arrow.INT32:
		fn = intNegate[int32](t)
	case arrow.INT64:
		fn = intNegate[int64](t)
	case arrow.FLOAT32:
		fn = mapKernel(t, func(v float32) float32 { return -v })
	case arrow.FLOAT64:
		fn = mapKernel(t, func(v float64) float64 { return -v })
	case arrow.DECIMAL128:
		fn = mapKernel(t, func(v decimal128.Num) decimal128.Num { return v.Negate() })
	case arrow.INTERVAL_MONTH_DAY_NANO:
		fn = mapKernel(t, func(v arrow.MonthDayNanoInterval) arrow.MonthDayNanoInterval {
			return arrow.MonthDayNanoInterval{Months: -v.Months, Days: -v.Days, Nanoseconds: -v.Nanoseconds}
		})
	default:
		return nil, errNoMatch
	}
	return newCall("negate", t, fn, formPrefix, a), nil
}

func intNegate[T signed](dt arrow.DataType) kernel {
	var one T = 1
	minT := one << (unsafe.Sizeof(one)*8 - 1)
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a := values[T](args[0])
		valid := andValidity(ec.Mem, n, args[0])
		var vb []byte
		if valid != nil {
			vb = valid.Bytes()
		}
		buf, out := newFixed[T](ec.Mem, n)
		for i, x := range a {
			if x == minT && isValid(vb, i) {
				releaseBufs(buf, valid)
				return nil, outOfRange(dt)
			}
			out[i] = -x
		}
		return makeArray(dt, n, valid, array.UnknownNullCount, buf), nil
	}
}

// mapKernel lifts a total per-value function into a strict unary kernel.
func mapKernel[S, D arrow.FixedWidthType](dt arrow.DataType, f func(S) D) kernel {
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a := values[S](args[0])
		buf, out := newFixed[D](ec.Mem, n)
		for i, x := range a {
			out[i] = f(x)
		}
		return makeArray(dt, n, andValidity(ec.Mem, n, args[0]), array.UnknownNullCount, buf), nil
	}
}

// mapKernelErr is mapKernel for functions that can fail on a value.
func mapKernelErr[S, D arrow.FixedWidthType](dt arrow.DataType, f func(S) (D, error)) kernel {
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a := values[S](args[0])
		valid := andValidity(ec.Mem, n, args[0])
		var vb []byte
		if valid != nil {
			vb = valid.Bytes()
		}
		buf, out := newFixed[D](ec.Mem, n)
		for i, x := range a {
			d, err := f(x)
			if err != nil && isValid(vb, i) {
				releaseBufs(buf, valid)
				return nil, err
			}
			out[i] = d
		}
		return makeArray(dt, n, valid, array.UnknownNullCount, buf), nil
	}
}
