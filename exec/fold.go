package exec

import (
	"fmt"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
)

// Constant folding support for the optimizer: which expressions are
// constant, and their value.

// volatileFuncs give a different value on every call, so they are never
// folded. now() and current_date are stable within a statement and may be
// folded once the EvalContext's Now is fixed.
var volatileFuncs = map[string]bool{"random": true, "gen_random_uuid": true, "uuid": true}

func init() {
	register("random", func(name string, args []Expr) (Expr, error) {
		if len(args) != 0 {
			return nil, errNoMatch
		}
		return newCall(name, tFloat64, func(ec *EvalContext, _ []arrow.Array, n int) (arrow.Array, error) {
			buf, out := newFixed[float64](ec.Mem, n)
			for i := range out {
				out[i] = rand.Float64()
			}
			return makeArray(tFloat64, n, nil, 0, buf), nil
		}, formFunc), nil
	})
}

// IsConstant reports whether e reads no column and calls nothing
// volatile, so that FoldConstant may replace it by its value. Expression
// kinds exec does not know are not constant.
func IsConstant(e Expr) bool {
	switch x := e.(type) {
	case *Literal:
		return true
	case *Cast:
		return IsConstant(x.Arg)
	case *Call:
		if volatileFuncs[x.Name] {
			return false
		}
		for _, a := range x.Args {
			if !IsConstant(a) {
				return false
			}
		}
		return true
	case *Case:
		for _, w := range x.Whens {
			if !IsConstant(w.Cond) || !IsConstant(w.Then) {
				return false
			}
		}
		return x.Else == nil || IsConstant(x.Else)
	case *Coalesce:
		for _, a := range x.Args {
			if !IsConstant(a) {
				return false
			}
		}
		return true
	case *inList:
		if !IsConstant(x.arg) {
			return false
		}
		for _, a := range x.list {
			if !IsConstant(a) {
				return false
			}
		}
		return true
	}
	return false
}

// FoldConstant evaluates a constant expression once. An error is the
// error the expression would raise at run time (1/0 is "division by
// zero"), so a planner that folds eagerly reports it at bind time, as
// Postgres does. ec supplies Now for now() and current_date; nil means the
// current time.
func FoldConstant(ec *EvalContext, e Expr) (*Literal, error) {
	if !IsConstant(e) {
		return nil, fmt.Errorf("exec: %s is not constant (planner bug)", e)
	}
	if l, ok := e.(*Literal); ok {
		return l, nil
	}
	if _, ext := e.DataType().(arrow.ExtensionType); ext {
		return nil, fmt.Errorf("exec: cannot fold %s: arrow cannot make an array of an extension scalar", e)
	}
	return foldConstantWith(ec, e)
}
