package plan

import (
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
)

// Arrays: constructors, subscripts, x op ANY|ALL (…) and ARRAY(subquery).
// The kernels are exec's list functions (exec/list.go).

func (b *binder) bindArrayExpr(e *parser.ArrayExpr, ec *exprCtx) (Expr, error) {
	elems, err := b.bindExprs(e.Elems, ec)
	if err != nil {
		return nil, err
	}
	return b.call(e.Pos, "list_value", elems...)
}

func (b *binder) bindSubscript(e *parser.Subscript, ec *exprCtx) (Expr, error) {
	x, err := b.bindExpr(e.X, ec)
	if err != nil {
		return nil, err
	}
	if _, ok := x.Type().(*arrow.StructType); ok {
		return b.structSubscript(e, x)
	}
	if _, ok := x.Type().(*arrow.MapType); ok {
		k, err := b.bindExpr(e.Index, ec)
		if err != nil {
			return nil, err
		}
		return b.call(e.Pos, "element_at", x, k)
	}
	if _, ok := x.Type().(*arrow.ListType); !ok {
		return nil, errorf(e.Pos, "cannot subscript type %s because it is not an array", exec.TypeName(x.Type()))
	}
	i, err := b.bindExpr(e.Index, ec)
	if err != nil {
		return nil, err
	}
	r, err := b.call(e.Pos, "list_extract", x, i)
	if err != nil {
		return nil, errorf(e.Index.Position(), "array subscript must have type integer, not %s", exec.TypeName(i.Type()))
	}
	return r, nil
}

// bindQuantified binds x op ANY|ALL (array) to exec's kernel, and the
// subquery forms to what computes them: = ANY is IN and <> ALL is NOT IN
// (with their exact NULL rules); the other comparisons compare x with the
// subquery's extreme values, counting NULLs, so that the answer is
// PostgreSQL's: for > ANY, true when some value is smaller, NULL when none
// is but one is NULL (or x is NULL), false otherwise.
func (b *binder) bindQuantified(e *parser.Quantified, ec *exprCtx) (Expr, error) {
	op := e.Op.String()
	switch op {
	case "=", "<>", "<", "<=", ">", ">=":
	default:
		return nil, errorf(e.Pos, "op ANY/ALL (…) requires a comparison operator, not %s", op)
	}
	if e.Array != nil {
		x, err := b.bindExpr(e.X, ec)
		if err != nil {
			return nil, err
		}
		arr, err := b.bindExpr(e.Array, ec)
		if err != nil {
			return nil, err
		}
		all := e.All
		r, err := b.newFunc(quantName(op, all), []Expr{x, arr}, func(a []exec.Expr) (exec.Expr, error) {
			return exec.NewQuantified(op, all, a[0], a[1])
		})
		return r, atPos(e.Pos, err)
	}
	switch {
	case op == "=" && !e.All:
		return b.bindExpr(&parser.InExpr{Pos: e.Pos, X: e.X, Query: e.Query}, ec)
	case op == "<>" && e.All:
		return b.bindExpr(&parser.InExpr{Pos: e.Pos, X: e.X, Not: true, Query: e.Query}, ec)
	}
	// probe the subquery for its width; the rewrite below binds it again
	sub, _, err := b.probeSubquery(e.Query, ec)
	if err != nil {
		return nil, err
	}
	if elems, ok := rowElems(e.X); ok {
		if len(sub.Columns()) != len(elems) {
			return nil, errorf(e.Pos, "subquery has %d columns where the row has %d", len(sub.Columns()), len(elems))
		}
		return b.bindExpr(rowQuantified(e, elems), ec)
	}
	if len(sub.Columns()) != 1 {
		return nil, errorf(e.Pos, "subquery has too many columns")
	}
	// a correlated subquery makes each extreme a correlated scalar
	// subquery over a derived table: a dependent join
	return b.bindExpr(quantifiedCase(e, op), ec)
}

var compareOps = map[string]parser.BinaryOp{"=": parser.OpEq, "<>": parser.OpNe, "<": parser.OpLt,
	"<=": parser.OpLe, ">": parser.OpGt, ">=": parser.OpGe}

func quantWord(all bool) string {
	if all {
		return "ALL"
	}
	return "ANY"
}

func quantName(op string, all bool) string { return op + " " + strings.ToLower(quantWord(all)) }

// quantifiedCase is the CASE that computes x op ANY|ALL (q) from q's
// count(*), count(v), min(v) and max(v), each a scalar subquery (run
// once, or per distinct outer value when q is correlated):
//
//	x > ANY: CASE WHEN n = 0 THEN false WHEN x > min THEN true
//	         WHEN x IS NULL OR nulls > 0 THEN NULL ELSE false END
//	x > ALL: CASE WHEN n = 0 THEN true WHEN x IS NULL THEN NULL
//	         WHEN NOT (x > max) THEN false WHEN nulls > 0 THEN NULL ELSE true END
//
// (< uses max and min the other way round); = ALL is false when x differs
// from min or max, and <> ANY is its negation.
func quantifiedCase(e *parser.Quantified, op string) parser.Expr {
	pos := e.Pos
	agg := func(fn string, star bool) parser.Expr {
		var args []parser.Expr
		if !star {
			args = []parser.Expr{&parser.ColumnRef{Pos: pos, Name: parser.Name{{Pos: pos, Name: "__quantified"}, {Pos: pos, Name: "v"}}}}
		}
		call := &parser.FuncCall{Pos: pos, Name: parser.Name{{Pos: pos, Name: fn}}, Args: args, Star: star}
		sel := &parser.Select{Pos: pos, Items: []*parser.SelectItem{{Pos: pos, Expr: call}},
			From: []parser.TableExpr{&parser.SubqueryRef{Pos: pos, Query: e.Query,
				Alias: &parser.Alias{Pos: pos, Name: parser.Ident{Pos: pos, Name: "__quantified"}, Columns: []parser.Ident{{Pos: pos, Name: "v"}}}}}}
		return &parser.SubqueryExpr{Pos: pos, Query: &parser.Query{Pos: pos, Body: sel}}
	}
	lit := func(kind parser.LitKind, v string) parser.Expr {
		return &parser.Literal{Pos: pos, Kind: kind, Value: v}
	}
	boolLit := func(v bool) parser.Expr { return lit(parser.LitBool, strconv.FormatBool(v)) }
	null := lit(parser.LitNull, "NULL")
	bin := func(op parser.BinaryOp, l, r parser.Expr) parser.Expr {
		return &parser.BinaryExpr{Pos: pos, Op: op, L: l, R: r}
	}
	cmp := func(op string, l, r parser.Expr) parser.Expr { return bin(compareOps[op], l, r) }
	x := e.X
	empty := bin(parser.OpEq, agg("count", true), lit(parser.LitInteger, "0"))
	nulls := bin(parser.OpGt, bin(parser.OpSub, agg("count", true), agg("count", false)), lit(parser.LitInteger, "0"))
	xNull := &parser.IsExpr{Pos: pos, X: x, Test: parser.IsNull}
	when := func(c, r parser.Expr) *parser.When { return &parser.When{Pos: pos, Cond: c, Result: r} }
	// the extreme that decides: the smallest value for > ANY and < ALL
	lowFor := (op == ">" || op == ">=") != e.All
	extreme := "max"
	if lowFor {
		extreme = "min"
	}
	var whens []*parser.When
	var otherwise parser.Expr
	switch {
	case op == "=" || op == "<>": // = ALL, or <> ANY as its negation
		any := op == "<>"
		differs := bin(parser.OpOr, cmp("<>", x, agg("min", false)), cmp("<>", x, agg("max", false)))
		whens = []*parser.When{when(empty, boolLit(!any)), when(xNull, null), when(differs, boolLit(any)), when(nulls, null)}
		otherwise = boolLit(!any)
	case !e.All:
		whens = []*parser.When{when(empty, boolLit(false)), when(cmp(op, x, agg(extreme, false)), boolLit(true)),
			when(bin(parser.OpOr, xNull, nulls), null)}
		otherwise = boolLit(false)
	default:
		not := &parser.UnaryExpr{Pos: pos, Op: parser.OpNot, X: cmp(op, x, agg(extreme, false))}
		whens = []*parser.When{when(empty, boolLit(true)), when(xNull, null), when(not, boolLit(false)), when(nulls, null)}
		otherwise = boolLit(true)
	}
	return &parser.CaseExpr{Pos: pos, Whens: whens, Else: otherwise}
}

// bindArraySubquery binds ARRAY(q): q's one column gathered in q's order
// by array_agg, '{}' when q returns no rows. An uncorrelated q runs once;
// a correlated one must be a plain SELECT (its ORDER BY becomes the
// aggregate's), which then decorrelates as a scalar aggregate does.
func (b *binder) bindArraySubquery(e *parser.ArraySubquery, ec *exprCtx) (Expr, error) {
	sc := ec.sc
	if ec.agg != nil {
		sc = ec.agg.input
	}
	inits := len(b.inits)
	sub, corr, err := b.bindSubquery(e.Query, sc)
	if err != nil {
		return nil, err
	}
	cols := sub.Columns()
	if len(cols) != 1 {
		return nil, errorf(e.Pos, "subquery must return only one column")
	}
	if !corr {
		c := cols[0]
		agg, err := exec.NewAggregate("array_agg", []exec.Expr{&exec.Column{Index: 0, Type: c.Type}}, false, nil, nil)
		if err != nil {
			return nil, atPos(e.Pos, err)
		}
		lt := agg.DataType()
		out := b.newCol("array", "", lt, true)
		// INVARIANT: an aggregate without GROUP BY consumes its input in
		// order on one goroutine, so array_agg keeps q's ORDER BY.
		node := &Aggregate{Input: sub, Aggs: []*AggCall{{Name: "array_agg", Args: []Expr{&ColRef{ID: c.ID, Typ: c.Type, Name: c.Name}}, Col: out}}}
		ip := b.newInitPlan(node, false, lt, e.Pos)
		empty, err := emptyList(lt.(*arrow.ListType))
		if err != nil {
			return nil, err
		}
		r, err := b.coalesce(ip, constLit(empty))
		return r, atPos(e.Pos, err)
	}
	b.inits = b.inits[:inits]
	agg, ok := arrayAggQuery(e.Query)
	if !ok {
		return nil, errorf(e.Pos, "this correlated ARRAY(subquery) is not supported yet; only a plain SELECT of one column (with WHERE and ORDER BY) is")
	}
	return b.bindExpr(&parser.FuncCall{Pos: e.Pos, Name: parser.Name{{Pos: e.Pos, Name: "coalesce"}},
		Args: []parser.Expr{&parser.SubqueryExpr{Pos: e.Pos, Query: agg}, &parser.ArrayExpr{Pos: e.Pos}}}, ec)
}

// arrayAggQuery rewrites SELECT v FROM … [WHERE …] [ORDER BY …] into
// SELECT array_agg(v ORDER BY …) FROM … [WHERE …].
func arrayAggQuery(q *parser.Query) (*parser.Query, bool) {
	sel, ok := q.Body.(*parser.Select)
	if !ok || q.With != nil || q.Limit != nil || q.Offset != nil || sel.Distinct || len(sel.GroupBy) > 0 || sel.GroupByAll ||
		sel.Having != nil || len(sel.Windows) > 0 || sel.Qualify != nil || len(sel.Items) != 1 {
		return nil, false
	}
	item := sel.Items[0]
	if _, star := item.Expr.(*parser.Star); star {
		return nil, false
	}
	var order []*parser.OrderItem
	for _, o := range q.OrderBy {
		oe := o.Expr
		if l, ok := oe.(*parser.Literal); ok && l.Kind == parser.LitInteger {
			if l.Value != "1" {
				return nil, false
			}
			oe = item.Expr
		} else if c, ok := oe.(*parser.ColumnRef); ok && len(c.Name) == 1 && item.Alias.Name != "" && strings.EqualFold(c.Name[0].Name, item.Alias.Name) {
			oe = item.Expr
		}
		order = append(order, &parser.OrderItem{Pos: o.Pos, Expr: oe, Desc: o.Desc, Nulls: o.Nulls})
	}
	s := *sel
	s.Items = []*parser.SelectItem{{Pos: item.Pos, Expr: &parser.FuncCall{Pos: item.Pos, Name: parser.Name{{Pos: item.Pos, Name: "array_agg"}},
		Args: []parser.Expr{item.Expr}, OrderBy: order}}}
	return &parser.Query{Pos: q.Pos, Body: &s}, true
}

// emptyList is the literal '{}' of type lt.
func emptyList(lt *arrow.ListType) (*exec.Literal, error) {
	vals := array.MakeArrayOfNull(memory.DefaultAllocator, lt.Elem(), 0)
	defer vals.Release()
	return exec.NewLiteral(scalar.NewListScalar(vals))
}
