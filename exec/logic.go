package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// Three-valued logic: AND and OR are Kleene (FALSE AND NULL is FALSE, TRUE
// OR NULL is TRUE), NOT NULL is NULL, and the IS predicates never yield
// NULL.

func init() {
	registerOp("and", resolveLogic)
	registerOp("or", resolveLogic)
	registerOp("not", resolveLogic)
	for _, op := range []string{"is_true", "is_false", "is_not_true", "is_not_false"} {
		registerOp(op, resolveLogic)
	}
	registerOp("is_null", resolveIsNull)
	registerOp("is_not_null", resolveIsNull)
}

// boolArg coerces an argument to boolean (NULL and 'true'-like literals
// convert), or reports no match.
func boolArg(e Expr) (Expr, error) {
	t := e.DataType()
	if t.ID() == arrow.BOOL {
		return e, nil
	}
	if isNull(t) || isUnknownLiteral(e) {
		return NewCast(e, tBool, false)
	}
	return nil, errNoMatch
}

func resolveLogic(op string, args []Expr) (Expr, error) {
	want := 1
	if op == "and" || op == "or" {
		want = 2
	}
	if len(args) != want {
		return nil, errNoMatch
	}
	cargs := make([]Expr, len(args))
	for i, a := range args {
		c, err := boolArg(a)
		if err != nil {
			return nil, err
		}
		cargs[i] = c
	}
	switch op {
	case "and", "or":
		c := newCall(op, tBool, kleene(op == "and"), formInfix, cargs...)
		c.eval = evalShortCircuit
		return c, nil
	case "not":
		return newCall(op, tBool, notKernel, formPrefix, cargs...), nil
	}
	return newCall(op, tBool, isTruth(op), formPostfix, cargs...), nil
}

// bitReader reads a boolean array's value and validity bits.
type bitReader struct {
	data     []byte
	doff     int
	valid    []byte
	voff     int
	allNulls bool
}

func newBitReader(a arrow.Array) bitReader {
	if a.DataType().ID() == arrow.NULL {
		return bitReader{allNulls: true}
	}
	r := bitReader{}
	r.data, r.doff = boolBits(a)
	r.valid, r.voff = validBits(a)
	return r
}

func (r *bitReader) get(i int) (val, ok bool) {
	if r.allNulls {
		return false, false
	}
	ok = r.valid == nil || bitutil.BitIsSet(r.valid, r.voff+i)
	return bitutil.BitIsSet(r.data, r.doff+i), ok
}

func kleene(and bool) kernel {
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a, b := newBitReader(args[0]), newBitReader(args[1])
		withNulls := hasNulls(args[0]) || hasNulls(args[1])
		out := newBoolOut(ec.Mem, n, withNulls)
		for i := range n {
			av, aok := a.get(i)
			bv, bok := b.get(i)
			if and {
				switch {
				case (aok && !av) || (bok && !bv):
					out.set(i, false)
				case aok && bok:
					out.set(i, true)
				}
			} else {
				switch {
				case (aok && av) || (bok && bv):
					out.set(i, true)
				case aok && bok:
					out.set(i, false)
				}
			}
		}
		return out.finish(n), nil
	}
}

func notKernel(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
	a := args[0]
	if a.DataType().ID() == arrow.NULL {
		return nullArray(ec.Mem, tBool, n), nil
	}
	vals := newBitmap(ec.Mem, n)
	src, off := boolBits(a)
	if n > 0 {
		bitutil.InvertBitmap(src, off, n, vals.Bytes(), 0)
	}
	return makeArray(tBool, n, andValidity(ec.Mem, n, a), array.UnknownNullCount, vals), nil
}

// isTruth implements IS [NOT] TRUE / FALSE: NULL counts as neither.
func isTruth(op string) kernel {
	return func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		a := newBitReader(args[0])
		out := newBoolOut(ec.Mem, n, false)
		for i := range n {
			v, ok := a.get(i)
			var r bool
			switch op {
			case "is_true":
				r = ok && v
			case "is_false":
				r = ok && !v
			case "is_not_true":
				r = !ok || !v
			case "is_not_false":
				r = !ok || v
			}
			out.set(i, r)
		}
		return out.finish(n), nil
	}
}

func resolveIsNull(op string, args []Expr) (Expr, error) {
	if len(args) != 1 {
		return nil, errNoMatch
	}
	want := op == "is_null"
	return newCall(op, tBool, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		in := a[0]
		vals := newBitmap(ec.Mem, n)
		vb := vals.Bytes()
		switch {
		case in.DataType().ID() == arrow.NULL:
			if want {
				bitutil.SetBitsTo(vb, 0, int64(n), true)
			}
		case in.NullN() == 0:
			if !want {
				bitutil.SetBitsTo(vb, 0, int64(n), true)
			}
		default:
			bits, off := validBits(in)
			if want {
				bitutil.InvertBitmap(bits, off, n, vb, 0)
			} else {
				bitutil.CopyBitmap(bits, off, n, vb, 0)
			}
		}
		return makeArray(tBool, n, nil, 0, vals), nil
	}, formPostfix, args[0]), nil
}
