package plan

import (
	"strconv"
	"strings"

	"github.com/skadedb/skade/parser"
)

// unnest in the select list (PostgreSQL's set-returning function in a
// target list): each input row yields one row per element, and none when
// the array is NULL or empty.
//
//	SELECT id, unnest(tags) AS tag, unnest(ns) + 1 FROM t WHERE …
//
// binds as
//
//	SELECT id, "unnest#".c1 AS tag, "unnest#".c2 + 1
//	FROM t, unnest(tags, ns) AS "unnest#"(c1, c2) WHERE …
//
// which is the same query: WHERE cannot name the unnested columns, and
// DISTINCT, ORDER BY and LIMIT apply to the expanded rows in both. Several
// unnests are zipped, as PostgreSQL zips them (as many rows as the
// longest array, NULLs past the end of the others); the same call written
// twice is one. An unnest may sit inside an expression, but not inside
// CASE or COALESCE (PostgreSQL refuses those too) nor inside another
// unnest's argument. The two queries differ with aggregates, GROUP BY,
// HAVING or window functions (PostgreSQL expands after those): then
// srfAfterAggregate moves the aggregating select into a derived table,
// and unnests over it.

// srfQualifier names the FROM item the unnests move to; no user alias can
// collide with it unquoted.
const srfQualifier = "unnest#"

// srfSelect rewrites sel when its select list calls unnest, returning the
// select to bind instead (sel itself is not changed) and, by each call's
// text, the hidden column that replaces it (bindFuncCall reads b.srfCols);
// or sel and nil.
func (b *binder) srfSelect(sel *parser.Select, orderBy []*parser.OrderItem) (*parser.Select, []*parser.OrderItem, map[string]string, error) {
	var calls []*parser.FuncCall
	cols := map[string]string{}
	var bad error
	for _, it := range sel.Items {
		parser.Inspect(it.Expr, func(n parser.Node) bool {
			if bad != nil {
				return false
			}
			switch x := n.(type) {
			case *parser.Query:
				return false
			case *parser.CaseExpr:
				if f := findUnnest(x); f != nil {
					bad = errorf(f.Pos, "set-returning functions are not allowed in CASE; unnest in FROM: FROM t, unnest(t.a) AS u(x)")
				}
				return false
			case *parser.FuncCall:
				if !isUnnestCall(x) {
					if len(x.Name) == 1 && strings.EqualFold(x.Name[0].Name, "coalesce") {
						if f := findUnnest(x); f != nil {
							bad = errorf(f.Pos, "set-returning functions are not allowed in COALESCE; unnest in FROM: FROM t, unnest(t.a) AS u(x)")
							return false
						}
					}
					return true
				}
				if len(x.Args) != 1 || x.Star || x.Distinct || len(x.OrderBy) > 0 || x.Filter != nil {
					bad = errorf(x.Pos, "unnest in the select list takes one array argument; unnest several in FROM: FROM t, unnest(t.a, t.b) AS u(x, y)")
					return false
				}
				if f := findUnnest(x.Args[0]); f != nil {
					bad = errorf(f.Pos, "unnest inside unnest's argument is not supported; unnest in FROM, one after the other")
					return false
				}
				key := x.String()
				if _, seen := cols[key]; !seen {
					cols[key] = "c" + strconv.Itoa(len(calls)+1)
					calls = append(calls, x)
				}
				return false
			}
			return true
		})
	}
	if bad != nil {
		return nil, nil, nil, bad
	}
	if len(calls) == 0 {
		return sel, orderBy, nil, nil
	}
	at := calls[0].Pos
	aggregating := len(sel.GroupBy) > 0 || sel.GroupByAll || sel.Having != nil || len(sel.Windows) > 0 || sel.Qualify != nil
	for _, it := range sel.Items {
		aggregating = aggregating || containsAggregate(it.Expr) || containsWindowCall(it.Expr)
	}
	if aggregating {
		after, inner, order, err := srfAfterAggregate(sel, orderBy, at)
		if err != nil {
			return nil, nil, nil, err
		}
		if br, ok := b.groupingBranches[sel]; ok {
			// a GROUPING SETS branch (bindGroupingSets) aggregates inside
			b.groupingBranches[inner] = br
		}
		return b.srfSelect(after, order)
	}
	args := make([]parser.Expr, len(calls))
	names := make([]parser.Ident, len(calls))
	for i, c := range calls {
		args[i] = c.Args[0]
		names[i] = parser.Ident{Pos: c.Pos, Name: cols[c.String()], Quoted: true}
	}
	out := *sel
	fn := &parser.TableFunc{Pos: at, Name: parser.Name{{Pos: at, Name: "unnest"}}, Args: args,
		Alias: &parser.Alias{Pos: at, Name: parser.Ident{Pos: at, Name: srfQualifier, Quoted: true}, Columns: names}}
	out.From = append(append([]parser.TableExpr(nil), sel.From...), fn)
	return &out, orderBy, cols, nil
}

// srfAfterAggregate rewrites a select that aggregates (GROUP BY, HAVING,
// aggregates, window functions, QUALIFY) and calls unnest in its select
// list, where PostgreSQL expands the arrays after aggregating, into a
// select of the unnests over the aggregating select as a derived table:
//
//	SELECT k, unnest(array_agg(v)) AS v FROM t GROUP BY k
//
// becomes
//
//	SELECT "srf#"."#c1" AS k, unnest("srf#"."#u2") AS v
//	FROM (SELECT k AS "#c1", array_agg(v) AS "#u2" FROM t GROUP BY k) AS "srf#"
//
// (an item the user aliased keeps its alias inside, which GROUP BY may
// name)
//
// DISTINCT moves out with the unnests (it applies to the expanded rows).
// An item holding an unnest inside an expression keeps the expression's
// operators outside and its other parts inside (liftAroundUnnest). An
// ORDER BY naming an output column (by name or position) stays; any other
// ORDER BY expression (count(*), a GROUP BY column left out of the select
// list) is computed inside, as a column the outer select orders by, and
// returned in order, the ORDER BY to bind instead.
func srfAfterAggregate(sel *parser.Select, orderBy []*parser.OrderItem, at parser.Pos) (outer, inner *parser.Select, order []*parser.OrderItem, err error) {
	const qual = "srf#"
	if len(sel.DistinctOn) > 0 {
		return nil, nil, nil, errorf(at, "unnest in the select list of a query with DISTINCT ON and aggregates or window functions is not supported; unnest in a subquery or in FROM")
	}
	in := *sel
	inner = &in
	inner.Distinct = false
	inner.Items = nil
	outer = &parser.Select{Pos: sel.Pos, Distinct: sel.Distinct}
	names := map[string]bool{}
	aliasCount := map[string]int{}
	for _, it := range sel.Items {
		if !it.Alias.Empty() {
			aliasCount[identName(it.Alias)]++
		}
	}
	for i, it := range sel.Items {
		if _, star := it.Expr.(*parser.Star); star {
			return nil, nil, nil, errorf(it.Pos, "unnest in the select list beside * and aggregates or window functions is not supported; unnest in a subquery or in FROM")
		}
		name := identName(it.Alias)
		if it.Alias.Empty() {
			name = deriveName(it.Expr)
		}
		names[name] = true
		alias := parser.Ident{Pos: it.Pos, Name: name, Quoted: true}
		col := func(c string) parser.Expr {
			return &parser.ColumnRef{Pos: it.Pos, Name: parser.Name{{Pos: it.Pos, Name: qual, Quoted: true}, {Pos: it.Pos, Name: c, Quoted: true}}}
		}
		if isUnnestCall(it.Expr) {
			f := it.Expr.(*parser.FuncCall)
			c := "#u" + strconv.Itoa(i+1)
			inner.Items = append(inner.Items, &parser.SelectItem{Pos: it.Pos, Expr: f.Args[0], Alias: parser.Ident{Pos: it.Pos, Name: c, Quoted: true}})
			call := *f
			call.Args = []parser.Expr{col(c)}
			outer.Items = append(outer.Items, &parser.SelectItem{Pos: it.Pos, Expr: &call, Alias: alias})
			continue
		}
		if findUnnest(it.Expr) != nil {
			// an unnest inside an expression: the parts around the
			// unnests are computed inside, by the aggregating select
			n := 0
			x, err := liftAroundUnnest(it.Expr, func(e parser.Expr, unnest bool) parser.Expr {
				n++
				c := "#c" + strconv.Itoa(i+1) + "_" + strconv.Itoa(n)
				if unnest {
					c = "#u" + strconv.Itoa(i+1) + "_" + strconv.Itoa(n)
				}
				inner.Items = append(inner.Items, &parser.SelectItem{Pos: it.Pos, Expr: e, Alias: parser.Ident{Pos: it.Pos, Name: c, Quoted: true}})
				return col(c)
			})
			if err != nil {
				return nil, nil, nil, err
			}
			outer.Items = append(outer.Items, &parser.SelectItem{Pos: it.Pos, Expr: x, Alias: alias})
			continue
		}
		c := "#c" + strconv.Itoa(i+1)
		innerAlias := parser.Ident{Pos: it.Pos, Name: c, Quoted: true}
		if !it.Alias.Empty() && aliasCount[name] == 1 {
			// the user's alias stays: GROUP BY may name it
			innerAlias, c = it.Alias, name
		}
		inner.Items = append(inner.Items, &parser.SelectItem{Pos: it.Pos, Expr: it.Expr, Alias: innerAlias})
		outer.Items = append(outer.Items, &parser.SelectItem{Pos: it.Pos, Expr: col(c), Alias: alias})
	}
	order = orderBy
	copied := false // order is orderBy until an item changes
	for i, o := range orderBy {
		switch x := o.Expr.(type) {
		case *parser.Literal:
			if x.Kind == parser.LitInteger {
				continue
			}
		case *parser.ColumnRef:
			if len(x.Name) == 1 && names[identName(x.Name[0])] {
				continue
			}
		}
		if f := findUnnest(o.Expr); f != nil {
			return nil, nil, nil, errorf(f.Pos, "unnest in the ORDER BY of a query that unnests after aggregating is not supported; unnest in the select list and order by its name")
		}
		if sel.Distinct {
			return nil, nil, nil, errorf(o.Pos, "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
		}
		if !copied {
			order, copied = append([]*parser.OrderItem(nil), orderBy...), true
		}
		c := "#o" + strconv.Itoa(i+1)
		inner.Items = append(inner.Items, &parser.SelectItem{Pos: o.Pos, Expr: o.Expr, Alias: parser.Ident{Pos: o.Pos, Name: c, Quoted: true}})
		lifted := *o
		lifted.Expr = &parser.ColumnRef{Pos: o.Pos, Name: parser.Name{{Pos: o.Pos, Name: qual, Quoted: true}, {Pos: o.Pos, Name: c, Quoted: true}}}
		order[i] = &lifted
	}
	outer.From = []parser.TableExpr{&parser.SubqueryRef{Pos: sel.Pos, Query: &parser.Query{Pos: sel.Pos, Body: inner},
		Alias: &parser.Alias{Pos: sel.Pos, Name: parser.Ident{Pos: sel.Pos, Name: qual, Quoted: true}}}}
	return outer, inner, order, nil
}

// liftAroundUnnest rewrites e, an expression calling unnest, for the
// outer select of srfAfterAggregate: each unnest's argument, and each
// largest part of e holding no unnest (but constants and parameters,
// which stay for their types to be inferred in place), becomes an item
// of the aggregating select, which inner adds and whose column it
// returns. The operators between them stay outside. Only expressions
// whose parts can be evaluated apart are taken; CASE and COALESCE are
// refused earlier (srfSelect), as in PostgreSQL.
func liftAroundUnnest(e parser.Expr, inner func(e parser.Expr, unnest bool) parser.Expr) (parser.Expr, error) {
	if isUnnestCall(e) {
		f := *e.(*parser.FuncCall)
		f.Args = []parser.Expr{inner(f.Args[0], true)}
		return &f, nil
	}
	if findUnnest(e) == nil {
		switch e.(type) {
		case *parser.Literal, *parser.TypedLiteral, *parser.IntervalLiteral, *parser.Param:
			return e, nil
		}
		return inner(e, false), nil
	}
	var err error
	lift := func(x parser.Expr) parser.Expr {
		if err != nil || x == nil {
			return x
		}
		var y parser.Expr
		y, err = liftAroundUnnest(x, inner)
		return y
	}
	lifts := func(xs []parser.Expr) []parser.Expr {
		out := make([]parser.Expr, len(xs))
		for i, x := range xs {
			out[i] = lift(x)
		}
		return out
	}
	switch x := e.(type) {
	case *parser.UnaryExpr:
		y := *x
		y.X = lift(x.X)
		return &y, err
	case *parser.BinaryExpr:
		y := *x
		y.L, y.R = lift(x.L), lift(x.R)
		return &y, err
	case *parser.Cast:
		y := *x
		y.X = lift(x.X)
		return &y, err
	case *parser.IsExpr:
		y := *x
		y.X, y.From = lift(x.X), lift(x.From)
		return &y, err
	case *parser.BetweenExpr:
		y := *x
		y.X, y.Lo, y.Hi = lift(x.X), lift(x.Lo), lift(x.Hi)
		return &y, err
	case *parser.InExpr:
		if x.Query == nil {
			y := *x
			y.X, y.List = lift(x.X), lifts(x.List)
			return &y, err
		}
	case *parser.LikeExpr:
		y := *x
		y.X, y.Pattern, y.Escape = lift(x.X), lift(x.Pattern), lift(x.Escape)
		return &y, err
	case *parser.Subscript:
		y := *x
		y.X, y.Index = lift(x.X), lift(x.Index)
		return &y, err
	case *parser.FieldAccess:
		y := *x
		y.X = lift(x.X)
		return &y, err
	case *parser.Extract:
		y := *x
		y.X = lift(x.X)
		return &y, err
	case *parser.ArrayExpr:
		y := *x
		y.Elems = lifts(x.Elems)
		return &y, err
	case *parser.FuncCall:
		if isAggregateCall(x) || x.Over != nil || !x.OverName.Empty() {
			return nil, errorf(findUnnest(x).Pos, "set-returning functions are not allowed in the arguments of an aggregate or window function; unnest in a subquery or in FROM")
		}
		if !x.Star && !x.Distinct && len(x.OrderBy) == 0 && x.Filter == nil {
			for _, a := range x.Args {
				if _, named := a.(*parser.NamedArg); named {
					return nil, errorf(findUnnest(x).Pos, "unnest inside a call with named arguments beside aggregates or window functions is not supported; unnest in a subquery or in FROM")
				}
			}
			y := *x
			y.Args = lifts(x.Args)
			return &y, err
		}
	}
	return nil, errorf(findUnnest(e).Pos, "unnest inside this kind of expression beside aggregates or window functions is not supported; unnest alone as a select item, or in FROM")
}

func isUnnestCall(e parser.Expr) bool {
	f, ok := e.(*parser.FuncCall)
	return ok && f.Over == nil && f.OverName.Empty() && len(f.Name) == 1 && strings.EqualFold(f.Name[0].Name, "unnest")
}

// findUnnest finds an unnest call in e outside subqueries.
func findUnnest(e parser.Expr) *parser.FuncCall {
	return findCall(e, func(f *parser.FuncCall) bool { return isUnnestCall(f) })
}

// containsWindowCall reports whether e calls a window function outside
// subqueries.
func containsWindowCall(e parser.Expr) bool {
	return findCall(e, func(f *parser.FuncCall) bool { return f.Over != nil || !f.OverName.Empty() }) != nil
}
