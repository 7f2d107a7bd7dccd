package plan

import (
	"strconv"

	"github.com/skadedb/skade/parser"
)

// Row comparisons, PostgreSQL's: (a, b) op (c, d) for =, <>, <, <=, >, >=
// and IS [NOT] DISTINCT FROM, a row against a subquery of one row, and
// (a, b) op ANY|ALL (subquery). Each is written out as the comparisons
// of its elements before binding:
//
//	(a, b) = (c, d)   a = c AND b = d   (false if a pair differs, else NULL if a pair is NULL)
//	(a, b) <> (c, d)  a <> c OR b <> d
//	(a, b) < (c, d)   a < c OR (a = c AND b < d)
//
// The last is PostgreSQL's rule, element by element from the left,
// stopping at the first pair that differs (its comparison decides) or
// holds a NULL (the answer is NULL): three-valued AND and OR give exactly
// that. An element on the left of an ordering comparison is written, and
// so evaluated, more than once; ROW(…) is a struct, compared as DuckDB
// compares structs, not a row constructor.

// rowElems returns the elements of a parenthesized row (a, b, …).
func rowElems(e parser.Expr) ([]parser.Expr, bool) {
	if r, ok := e.(*parser.RowExpr); ok {
		return r.Elems, true
	}
	return nil, false
}

// bindRowCompare binds l op r where l or r is a row; ok is false when
// neither is.
func (b *binder) bindRowCompare(pos parser.Pos, op parser.BinaryOp, l, r parser.Expr, ec *exprCtx) (Expr, bool, error) {
	le, lrow := rowElems(l)
	re, rrow := rowElems(r)
	if !lrow && !rrow {
		return nil, false, nil
	}
	if !lrow || !rrow {
		// a row against a subquery of as many columns, one row
		q, ok := r.(*parser.SubqueryExpr)
		if !lrow {
			q, ok = l.(*parser.SubqueryExpr)
		}
		if !ok {
			return nil, true, errorf(pos, "a row (a, b, …) can only be compared with a row of as many values or a subquery of as many columns")
		}
		n := len(le) + len(re)
		sub, _, err := b.probeSubquery(q.Query, ec)
		if err != nil {
			return nil, true, err
		}
		if len(sub.Columns()) != n {
			return nil, true, errorf(pos, "subquery has %d columns where the row has %d", len(sub.Columns()), n)
		}
		cols := rowSubqueryColumns(q, n)
		if lrow {
			re = cols
		} else {
			le = cols
		}
	}
	if len(le) != len(re) {
		return nil, true, errorf(pos, "unequal number of entries in row expressions")
	}
	var x parser.Expr
	switch op {
	case parser.OpEq, parser.OpNe, parser.OpLt, parser.OpLe, parser.OpGt, parser.OpGe:
		x = rowComparison(pos, op, le, re)
	default:
		return nil, true, errorf(pos, "operator %s is not defined for rows; rows compare with =, <>, <, <=, >, >= and IS [NOT] DISTINCT FROM", op)
	}
	bound, err := b.bindExpr(x, ec)
	return bound, true, err
}

// rowSubqueryColumns is, for each of a row subquery's n columns, a scalar
// subquery of that column alone: (SELECT __row.cK FROM (q) AS __row(c1, …)).
// Each raises PostgreSQL's error when q returns more than one row.
func rowSubqueryColumns(q *parser.SubqueryExpr, n int) []parser.Expr {
	pos := q.Pos
	names := make([]parser.Ident, n)
	for i := range names {
		names[i] = parser.Ident{Pos: pos, Name: "c" + strconv.Itoa(i+1)}
	}
	out := make([]parser.Expr, n)
	for i := range out {
		ref := &parser.ColumnRef{Pos: pos, Name: parser.Name{{Pos: pos, Name: "__row"}, names[i]}}
		sel := &parser.Select{Pos: pos, Items: []*parser.SelectItem{{Pos: pos, Expr: ref}},
			From: []parser.TableExpr{&parser.SubqueryRef{Pos: pos, Query: q.Query,
				Alias: &parser.Alias{Pos: pos, Name: parser.Ident{Pos: pos, Name: "__row"}, Columns: names}}}}
		out[i] = &parser.SubqueryExpr{Pos: pos, Query: &parser.Query{Pos: pos, Body: sel}}
	}
	return out
}

// rowComparison writes (l…) op (r…) out element by element.
func rowComparison(pos parser.Pos, op parser.BinaryOp, l, r []parser.Expr) parser.Expr {
	bin := func(op parser.BinaryOp, x, y parser.Expr) parser.Expr {
		return &parser.BinaryExpr{Pos: pos, Op: op, L: x, R: y}
	}
	switch op {
	case parser.OpEq, parser.OpNe:
		join := parser.OpAnd
		if op == parser.OpNe {
			join = parser.OpOr
		}
		x := bin(op, l[0], r[0])
		for i := 1; i < len(l); i++ {
			x = bin(join, x, bin(op, l[i], r[i]))
		}
		return x
	}
	strict := op
	switch op {
	case parser.OpLe:
		strict = parser.OpLt
	case parser.OpGe:
		strict = parser.OpGt
	}
	n := len(l)
	x := bin(op, l[n-1], r[n-1])
	for i := n - 2; i >= 0; i-- {
		x = bin(parser.OpOr, bin(strict, l[i], r[i]), bin(parser.OpAnd, bin(parser.OpEq, l[i], r[i]), x))
	}
	return x
}

// rowIs writes a test of a row out element by element: (a, b) IS NULL
// when every element is NULL, IS NOT NULL when none is (so a row can be
// neither), and IS [NOT] DISTINCT FROM. ok is false when no row is
// involved. A row against a non-row is left to fail as before.
func rowIs(e *parser.IsExpr) (parser.Expr, bool) {
	l, ok := rowElems(e.X)
	if !ok {
		return nil, false
	}
	switch e.Test {
	case parser.IsNull, parser.IsUnknown:
		var x parser.Expr
		for _, v := range l {
			t := &parser.IsExpr{Pos: e.Pos, X: v, Not: e.Not, Test: parser.IsNull}
			if x == nil {
				x = t
			} else {
				x = &parser.BinaryExpr{Pos: e.Pos, Op: parser.OpAnd, L: x, R: t}
			}
		}
		return x, true
	case parser.IsDistinctFrom:
		if r, ok := rowElems(e.From); ok && len(r) == len(l) {
			return rowDistinct(e.Pos, e.Not, l, r), true
		}
	}
	return nil, false
}

// rowDistinct writes (l…) IS [NOT] DISTINCT FROM (r…) out: distinct when
// some pair is distinct.
func rowDistinct(pos parser.Pos, not bool, l, r []parser.Expr) parser.Expr {
	join := parser.OpOr
	if not {
		join = parser.OpAnd
	}
	var x parser.Expr
	for i := range l {
		d := &parser.IsExpr{Pos: pos, X: l[i], Not: not, Test: parser.IsDistinctFrom, From: r[i]}
		if x == nil {
			x = d
		} else {
			x = &parser.BinaryExpr{Pos: pos, Op: join, L: x, R: d}
		}
	}
	return x
}

// rowQuantified rewrites (a, b, …) op ANY|ALL (q), for the operators
// other than = ANY and <> ALL (which are IN and NOT IN), as a scalar
// subquery over q's rows of the row comparison p:
//
//	ANY: CASE WHEN bool_or(p) THEN true WHEN bool_or(p IS NULL) THEN NULL ELSE false END
//	ALL: CASE WHEN NOT bool_and(p) THEN false WHEN bool_or(p IS NULL) THEN NULL ELSE true END
//
// true when some row compares true (ALL: none compares false), NULL when
// that is not so but some comparison is NULL, and for no rows false
// (ALL: true). A correlated row or q makes it a dependent join.
func rowQuantified(e *parser.Quantified, elems []parser.Expr) parser.Expr {
	pos := e.Pos
	names := make([]parser.Ident, len(elems))
	cols := make([]parser.Expr, len(elems))
	for i := range names {
		names[i] = parser.Ident{Pos: pos, Name: "c" + strconv.Itoa(i+1)}
		cols[i] = &parser.ColumnRef{Pos: pos, Name: parser.Name{{Pos: pos, Name: "__quantified"}, names[i]}}
	}
	p := rowComparison(pos, e.Op, elems, cols)
	call := func(fn string, arg parser.Expr) parser.Expr {
		return &parser.FuncCall{Pos: pos, Name: parser.Name{{Pos: pos, Name: fn}}, Args: []parser.Expr{arg}}
	}
	lit := func(kind parser.LitKind, v string) parser.Expr {
		return &parser.Literal{Pos: pos, Kind: kind, Value: v}
	}
	yes, no, null := lit(parser.LitBool, "true"), lit(parser.LitBool, "false"), lit(parser.LitNull, "NULL")
	someNull := call("bool_or", &parser.IsExpr{Pos: pos, X: p, Test: parser.IsNull})
	var whens []*parser.When
	var otherwise parser.Expr
	if e.All {
		whens = []*parser.When{{Pos: pos, Cond: &parser.UnaryExpr{Pos: pos, Op: parser.OpNot, X: call("bool_and", p)}, Result: no},
			{Pos: pos, Cond: someNull, Result: null}}
		otherwise = yes
	} else {
		whens = []*parser.When{{Pos: pos, Cond: call("bool_or", p), Result: yes}, {Pos: pos, Cond: someNull, Result: null}}
		otherwise = no
	}
	sel := &parser.Select{Pos: pos, Items: []*parser.SelectItem{{Pos: pos, Expr: &parser.CaseExpr{Pos: pos, Whens: whens, Else: otherwise}}},
		From: []parser.TableExpr{&parser.SubqueryRef{Pos: pos, Query: e.Query,
			Alias: &parser.Alias{Pos: pos, Name: parser.Ident{Pos: pos, Name: "__quantified"}, Columns: names}}}}
	return &parser.SubqueryExpr{Pos: pos, Query: &parser.Query{Pos: pos, Body: sel}}
}
