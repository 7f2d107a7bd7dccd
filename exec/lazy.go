package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Short-circuit evaluation. Postgres evaluates AND and OR left to right
// and skips the right side once the left decides a row, and evaluates a
// CASE arm only on the rows that reach it; users rely on both
// (WHERE x <> 0 AND 10 / x > 1). Vectorized, that means evaluating the
// right side only on the undecided rows. Gathering those rows costs a
// copy, so it is done only when it matters: when the left side decided
// some rows and the right side can raise an error.

// canFail reports whether evaluating e might return an error for some
// input row. Unknown expression kinds might.
func canFail(e Expr) bool {
	switch x := e.(type) {
	case nil, *Column, *Literal:
		return false
	case *Cast:
		from := x.Arg.DataType()
		// rendering as text and implicit widening never fail
		safe := isString(x.To) && !isString(from) || canImplicit(from, x.To) && !isDecimal(x.To)
		return !safe || canFail(x.Arg)
	case *Call:
		if !safeCall(x) {
			return true
		}
		for _, a := range x.Args {
			if canFail(a) {
				return true
			}
		}
		return false
	case *Case:
		for _, w := range x.Whens {
			if canFail(w.Cond) || canFail(w.Then) {
				return true
			}
		}
		return canFail(x.Else)
	case *Coalesce:
		for _, a := range x.Args {
			if canFail(a) {
				return true
			}
		}
		return false
	case *inList:
		if canFail(x.arg) {
			return true
		}
		for _, a := range x.list {
			if canFail(a) {
				return true
			}
		}
		return false
	}
	return true
}

// safeCall reports whether a call's own kernel never fails.
func safeCall(c *Call) bool {
	switch c.Name {
	case "=", "<>", "!=", "<", "<=", ">", ">=", "and", "or", "not",
		"is_null", "is_not_null", "is_true", "is_false", "is_not_true", "is_not_false",
		"is_distinct_from", "is_not_distinct_from", "||", "concat", "concat_ws",
		"lower", "upper", "length", "char_length", "octet_length", "starts_with", "ends_with",
		"contains", "strpos", "nullif", "greatest", "least", "now", "current_date", "current_timestamp", "text",
		"today", "localtimestamp", "current_time", "localtime":
		return true
	case "like", "ilike", "not_like", "not_ilike":
		return c.skip != 0 // a constant pattern was checked at bind time
	case "+", "-", "*":
		return isFloat(c.typ) // IEEE arithmetic does not fail
	}
	return false
}

// evalShortCircuit evaluates AND / OR, evaluating the right side only on
// rows the left side leaves undecided (TRUE or NULL for AND, FALSE or NULL
// for OR) whenever the right side could fail.
func evalShortCircuit(c *Call, ec *EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	isAnd := c.Name == "and"
	n := int(batch.NumRows())
	l, err := c.Args[0].Eval(ec, batch)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	lr := newBitReader(l)
	var undecided []int32
	decided := 0
	for i := range n {
		v, ok := lr.get(i)
		if ok && v != isAnd { // FALSE for AND, TRUE for OR
			decided++
		} else {
			undecided = append(undecided, int32(i))
		}
	}
	if decided == n {
		l.Retain()
		return l, nil
	}
	if decided == 0 || !canFail(c.Args[1]) {
		r, err := c.Args[1].Eval(ec, batch)
		if err != nil {
			return nil, err
		}
		defer r.Release()
		return kleene(isAnd)(ec, []arrow.Array{l, r}, n)
	}
	sub, err := narrowBatch(ec, batch, undecided, UsedColumns(c.Args[1]))
	if err != nil {
		return nil, err
	}
	r, err := c.Args[1].Eval(ec, sub)
	sub.Release()
	if err != nil {
		return nil, err
	}
	defer r.Release()
	rr := newBitReader(r)
	out := newBoolOut(ec.Mem, n, true)
	j := 0
	for i := range n {
		lv, lok := lr.get(i)
		if j < len(undecided) && int(undecided[j]) == i {
			rv, rok := rr.get(j)
			j++
			if isAnd {
				switch {
				case (lok && !lv) || (rok && !rv):
					out.set(i, false)
				case lok && rok:
					out.set(i, true)
				}
			} else {
				switch {
				case (lok && lv) || (rok && rv):
					out.set(i, true)
				case lok && rok:
					out.set(i, false)
				}
			}
			continue
		}
		out.set(i, lv) // decided by the left side
	}
	return out.finish(n), nil
}

// narrowBatch gathers rows idx of batch, copying only the columns in used
// (nil = all); the others become buffer-less NULL columns.
func narrowBatch(ec *EvalContext, batch arrow.RecordBatch, idx []int32, used []int) (arrow.RecordBatch, error) {
	if used == nil {
		return takeBatch(ec.Mem, batch, idx)
	}
	keep := make([]bool, batch.NumCols())
	for _, i := range used {
		if i >= 0 && i < len(keep) {
			keep[i] = true
		}
	}
	fields := make([]arrow.Field, len(keep))
	cols := make([]arrow.Array, len(keep))
	defer releaseAll(cols)
	for i := range keep {
		f := batch.Schema().Field(i)
		if keep[i] {
			c, err := takeArray(ec.Mem, batch.Column(i), idx)
			if err != nil {
				return nil, err
			}
			cols[i] = c
		} else {
			f.Type = arrow.Null
			cols[i] = array.NewNull(len(idx))
		}
		fields[i] = f
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(len(idx))), nil
}
