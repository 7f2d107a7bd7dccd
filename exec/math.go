package exec

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// Math functions. Integer and numeric arguments keep their type where
// Postgres keeps it (abs, sign, floor, ceil, round); the transcendental
// functions compute in double precision. Domain errors carry Postgres's
// texts.

var (
	errSqrtNegative = errors.New("cannot take square root of a negative number")
	errLogZero      = errors.New("cannot take logarithm of zero")
	errLogNegative  = errors.New("cannot take logarithm of a negative number")
	errPowZeroNeg   = errors.New("zero raised to a negative power is undefined")
	errPowComplex   = errors.New("a negative number raised to a non-integer power yields a complex result")
)

func init() {
	register("abs", resolveNumUnary("abs"))
	register("sign", resolveNumUnary("sign"))
	register("floor", resolveNumUnary("floor"))
	register("ceil", resolveNumUnary("ceil"))
	register("ceiling", resolveNumUnary("ceil"))
	register("trunc", resolveNumUnary("trunc"))
	register("round", resolveNumUnary("round"), resolveRoundN)
	register("trunc", resolveRoundN)
	register("mod", func(_ string, args []Expr) (Expr, error) {
		if len(args) != 2 {
			return nil, errNoMatch
		}
		return resolveArith("%", args)
	})
	f64 := types(tFloat64)
	register("sqrt", sig(f64, tFloat64, mapKernelErr(tFloat64, func(x float64) (float64, error) {
		if x < 0 {
			return 0, errSqrtNegative
		}
		return math.Sqrt(x), nil
	})))
	register("cbrt", sig(f64, tFloat64, mapKernel(tFloat64, math.Cbrt)))
	register("exp", sig(f64, tFloat64, mapKernelErr(tFloat64, func(x float64) (float64, error) {
		r := math.Exp(x)
		if math.IsInf(r, 0) && !math.IsInf(x, 0) {
			return 0, errors.New("value out of range: overflow")
		}
		return r, nil
	})))
	register("ln", sig(f64, tFloat64, mapKernelErr(tFloat64, logWith(math.Log))))
	register("log10", sig(f64, tFloat64, mapKernelErr(tFloat64, logWith(math.Log10))))
	register("log", sig(f64, tFloat64, mapKernelErr(tFloat64, logWith(math.Log10))),
		sig(types(tFloat64, tFloat64), tFloat64, mapKernel2Err(tFloat64, func(b, x float64) (float64, error) {
			lb, err := logWith(math.Log)(b)
			if err != nil {
				return 0, err
			}
			lx, err := logWith(math.Log)(x)
			if err != nil {
				return 0, err
			}
			if lb == 0 {
				return 0, errDivByZero
			}
			return lx / lb, nil
		})))
	powFn := sig(types(tFloat64, tFloat64), tFloat64, mapKernel2Err(tFloat64, func(x, y float64) (float64, error) {
		if x == 0 && y < 0 {
			return 0, errPowZeroNeg
		}
		if x < 0 && y != math.Trunc(y) {
			return 0, errPowComplex
		}
		return math.Pow(x, y), nil
	}))
	register("power", powFn)
	register("pow", powFn)
	registerOp("^", func(op string, args []Expr) (Expr, error) {
		e, err := powFn(op, args)
		if err != nil {
			return nil, err
		}
		e.(*Call).form = formInfix
		return e, nil
	})
	register("pi", func(name string, args []Expr) (Expr, error) {
		if len(args) != 0 {
			return nil, errNoMatch
		}
		return newCall(name, tFloat64, func(ec *EvalContext, _ []arrow.Array, n int) (arrow.Array, error) {
			return constFixed(ec, tFloat64, math.Pi, n), nil
		}, formFunc), nil
	})
}

func logWith(f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) {
		switch {
		case x == 0:
			return 0, errLogZero
		case x < 0:
			return 0, errLogNegative
		}
		return f(x), nil
	}
}

// resolveNumUnary builds abs, sign, floor, ceil, trunc and round(x) for
// every numeric type, keeping the argument's type.
func resolveNumUnary(fn string) overload {
	return func(name string, args []Expr) (Expr, error) {
		if len(args) != 1 {
			return nil, errNoMatch
		}
		a := args[0]
		if isUnknownLiteral(a) || isNull(a.DataType()) {
			var err error
			if a, err = NewCast(a, tFloat64, false); err != nil {
				return nil, err
			}
		}
		t := a.DataType()
		var k kernel
		switch t.ID() {
		case arrow.INT8:
			k = intUnary[int8](fn, t)
		case arrow.INT16:
			k = intUnary[int16](fn, t)
		case arrow.INT32:
			k = intUnary[int32](fn, t)
		case arrow.INT64:
			k = intUnary[int64](fn, t)
		case arrow.FLOAT32:
			f := floatUnary(fn)
			k = mapKernel(t, func(x float32) float32 { return float32(f(float64(x))) })
		case arrow.FLOAT64:
			k = mapKernel(t, floatUnary(fn))
		case arrow.DECIMAL128:
			dt := t.(*arrow.Decimal128Type)
			out, f := decUnary(fn, dt)
			return newCall(name, out, mapKernelErr(out, f), formFunc, a), nil
		default:
			return nil, errNoMatch
		}
		return newCall(name, t, k, formFunc, a), nil
	}
}

func intUnary[T signed](fn string, dt arrow.DataType) kernel {
	switch fn {
	case "abs":
		var one T = 1
		minT := one << (unsafe.Sizeof(one)*8 - 1)
		return mapKernelErr(dt, func(x T) (T, error) {
			if x == minT {
				return 0, outOfRange(dt)
			}
			if x < 0 {
				return -x, nil
			}
			return x, nil
		})
	case "sign":
		return mapKernel(dt, func(x T) T {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return ^T(0) // -1
			}
			return 0
		})
	}
	return mapKernel(dt, func(x T) T { return x })
}

func floatUnary(fn string) func(float64) float64 {
	switch fn {
	case "abs":
		return math.Abs
	case "sign":
		return func(x float64) float64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		}
	case "floor":
		return math.Floor
	case "ceil":
		return math.Ceil
	case "trunc":
		return math.Trunc
	}
	// round(double precision) rounds half to even, as Postgres's rint
	return math.RoundToEven
}

// decUnary returns the result type and per-value function for a numeric
// argument. floor, ceil, trunc and round(x) yield scale 0.
func decUnary(fn string, dt *arrow.Decimal128Type) (arrow.DataType, func(decimal128.Num) (decimal128.Num, error)) {
	s := dt.Scale
	switch fn {
	case "abs":
		return dt, func(x decimal128.Num) (decimal128.Num, error) { return x.Abs(), nil }
	case "sign":
		return decimalOf(1, 0), func(x decimal128.Num) (decimal128.Num, error) { return decimal128.FromI64(int64(x.Sign())), nil }
	}
	out := decimalOf(dt.Precision-s+1, 0)
	return out, func(x decimal128.Num) (decimal128.Num, error) {
		return decRound(fn, x, s, 0), nil
	}
}

// decRound rounds x (scale s) to scale to by mode: round (half away from
// zero), floor, ceil or trunc.
func decRound(mode string, x decimal128.Num, s, to int32) decimal128.Num {
	if to >= s {
		r, _ := decRescale(x, s, to)
		return r
	}
	if mode == "round" {
		r, _ := decRescale(x, s, to)
		return r
	}
	pow := decimal128.GetScaleMultiplier(int(s - to))
	q, rem := truncDiv(x, pow)
	if rem.Sign() != 0 {
		switch {
		case mode == "floor" && x.Sign() < 0:
			q = q.Sub(decimal128.FromI64(1))
		case mode == "ceil" && x.Sign() > 0:
			q = q.Add(decimal128.FromI64(1))
		}
	}
	return q
}

func truncDiv(x, d decimal128.Num) (decimal128.Num, decimal128.Num) {
	if a, ok := decI64(x); ok {
		if b, ok := decI64(d); ok {
			return decimal128.FromI64(a / b), decimal128.FromI64(a % b)
		}
	}
	return x.Div(d)
}

// resolveRoundN implements round(x, n) for numeric and double precision.
// For numeric with a constant n the result has scale n, as in Postgres.
func resolveRoundN(name string, args []Expr) (Expr, error) {
	if len(args) != 2 || !isInteger(args[1].DataType()) {
		return nil, errNoMatch
	}
	x := args[0]
	nArg, err := Coerce(args[1], tInt32)
	if err != nil {
		return nil, err
	}
	if isInteger(x.DataType()) {
		if x, err = NewCast(x, asDecimal(x.DataType()), false); err != nil {
			return nil, err
		}
	}
	switch t := x.DataType().(type) {
	case *arrow.Decimal128Type:
		nv, ok := literalValue(nArg)
		if !ok {
			return nil, fmt.Errorf("round: the number of digits must be a constant for type %s", TypeName(t))
		}
		digits := nv.(*scalar.Int32).Value
		to := max(digits, 0)
		out := decimalOf(t.Precision-t.Scale+to+1, to)
		s := t.Scale
		return newCall(name, out, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
			return mapKernel(out, func(v decimal128.Num) decimal128.Num {
				if digits < 0 {
					// round to tens, hundreds...: one rounding division, then scale back up
					k := s - digits
					if k > 38 {
						return decimal128.Num{}
					}
					var q decimal128.Num
					if name == "trunc" {
						q, _ = v.Div(decimal128.GetScaleMultiplier(int(k)))
					} else {
						q, _ = decDivRound(v, decimal128.GetScaleMultiplier(int(k)))
					}
					q, _ = decMul(q, decimal128.GetScaleMultiplier(int(-digits)))
					return q
				}
				if name == "trunc" && to < s {
					// toward zero: the remainder dropped
					q, _ := v.Div(decimal128.GetScaleMultiplier(int(s - to)))
					return q
				}
				r, _ := decRescale(v, s, to)
				return r
			})(ec, a[:1], n)
		}, formFunc, x, nArg).skipping(1), nil
	case *arrow.Float64Type, *arrow.Float32Type:
		x, err = Coerce(x, tFloat64)
		if err != nil {
			return nil, err
		}
		return newCall(name, tFloat64, mapKernel2(tFloat64, func(v float64, d int32) float64 {
			p := math.Pow10(int(d))
			if name == "trunc" {
				return math.Trunc(v*p) / p
			}
			return math.Round(v*p) / p
		}), formFunc, x, nArg), nil
	}
	return nil, errNoMatch
}
