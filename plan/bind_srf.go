package plan

import (
	"strings"

	"github.com/skadedb/skade/parser"
)

// unnest in the select list (PostgreSQL's set-returning function in a
// target list): each input row yields one row per element, and none when
// the array is NULL or empty.
//
//	SELECT id, unnest(tags) AS tag FROM t WHERE …
//
// binds as
//
//	SELECT id, "unnest#".tag AS tag FROM t, unnest(tags) AS "unnest#"(tag) WHERE …
//
// which is the same query: WHERE cannot name the unnested column, and
// DISTINCT, ORDER BY and LIMIT apply to the expanded rows in both. It is
// refused where the two differ: with aggregates, GROUP BY, HAVING or
// window functions (PostgreSQL expands after those), with more than one
// unnest (PostgreSQL zips them), and for an unnest inside an expression.

// srfQualifier names the FROM item an unnest moves to; no user alias can
// collide with it unquoted.
const srfQualifier = "unnest#"

// srfSelect rewrites sel when its select list calls unnest, returning
// the select to bind instead (sel itself is not changed), or sel.
func srfSelect(sel *parser.Select) (*parser.Select, error) {
	var whole []int // items that are an unnest call
	var nested *parser.FuncCall
	for i, it := range sel.Items {
		if isUnnestCall(it.Expr) {
			whole = append(whole, i)
			for _, a := range it.Expr.(*parser.FuncCall).Args {
				if f := findUnnest(a); f != nil && nested == nil {
					nested = f
				}
			}
			continue
		}
		if f := findUnnest(it.Expr); f != nil && nested == nil {
			nested = f
		}
	}
	if nested != nil {
		return nil, errorf(nested.Pos, "unnest in the select list must be a whole select item (SELECT unnest(a) AS x …); inside an expression, move it to FROM: FROM t, unnest(t.a) AS u(x)")
	}
	if len(whole) == 0 {
		return sel, nil
	}
	at := sel.Items[whole[0]].Pos
	if len(whole) > 1 {
		return nil, errorf(sel.Items[whole[1]].Pos, "more than one unnest in a select list is not supported; unnest them in FROM: FROM t, unnest(t.a) WITH ORDINALITY AS x(v, i) …")
	}
	call := sel.Items[whole[0]].Expr.(*parser.FuncCall)
	if len(call.Args) != 1 || call.Star || call.Distinct || len(call.OrderBy) > 0 || call.Filter != nil {
		return nil, errorf(call.Pos, "unnest takes one array argument")
	}
	if len(sel.GroupBy) > 0 || sel.GroupByAll || sel.Having != nil || len(sel.Windows) > 0 || sel.Qualify != nil {
		return nil, errorf(at, "unnest in the select list of a query with GROUP BY, HAVING, WINDOW or QUALIFY is not supported; unnest in a subquery or in FROM")
	}
	for _, it := range sel.Items {
		if containsAggregate(it.Expr) || containsWindowCall(it.Expr) {
			return nil, errorf(at, "unnest in the select list beside an aggregate or window function is not supported; unnest in a subquery or in FROM")
		}
	}
	item := sel.Items[whole[0]]
	col := item.Alias
	if col.Empty() {
		col = parser.Ident{Pos: item.Pos, Name: "unnest", Quoted: true}
	}
	out := *sel
	out.Items = append([]*parser.SelectItem(nil), sel.Items...)
	out.Items[whole[0]] = &parser.SelectItem{Pos: item.Pos, Alias: col, Expr: &parser.ColumnRef{Pos: item.Pos,
		Name: parser.Name{{Pos: item.Pos, Name: srfQualifier, Quoted: true}, col}}}
	fn := &parser.TableFunc{Pos: call.Pos, Name: call.Name, Args: call.Args,
		Alias: &parser.Alias{Pos: call.Pos, Name: parser.Ident{Pos: call.Pos, Name: srfQualifier, Quoted: true}, Columns: []parser.Ident{col}}}
	out.From = append(append([]parser.TableExpr(nil), sel.From...), fn)
	return &out, nil
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
