package plan

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
)

// bindSubquery binds q as a subquery of sc and reports whether it
// references columns of enclosing queries.
func (b *binder) bindSubquery(q *parser.Query, sc *scope) (Node, bool, error) {
	// a correlated reference resolves through inner's parent; the bound
	// subquery then has free columns
	inner := &scope{parent: sc}
	b.subqueries++
	n, err := b.bindQuery(q, inner)
	b.subqueries--
	if err != nil {
		return nil, false, err
	}
	return n, len(freeCols(n)) > 0, nil
}

// probeSubquery binds q where ec would (the aggregate's input above a
// GROUP BY), for what the binding tells (its width, its correlation), and
// forgets the init plans it recorded: the caller binds q again in the
// form it plans.
func (b *binder) probeSubquery(q *parser.Query, ec *exprCtx) (Node, bool, error) {
	sc := ec.sc
	if ec.agg != nil {
		sc = ec.agg.input
	}
	inits := len(b.inits)
	sub, corr, err := b.bindSubquery(q, sc)
	b.inits = b.inits[:inits]
	return sub, corr, err
}

// bindWhere binds a WHERE clause over input: IN, NOT IN and [NOT] EXISTS
// conjuncts become semi, null-aware anti and anti joins; the rest a
// Filter.
func (b *binder) bindWhere(input Node, sc *scope, where parser.Expr) (Node, error) {
	return b.bindFilter(input, sc, where, "WHERE", "WHERE")
}

// bindFilter is bindWhere for a condition of clause (named as PostgreSQL
// names it in its messages: aggClause for aggregates, clause for the
// type check).
func (b *binder) bindFilter(input Node, sc *scope, where parser.Expr, clause, aggClause string) (Node, error) {
	var preds []Expr
	var marks []*Join
	orig := input
	for _, c := range splitAnd(where) {
		if containsAggregate(c) && sc.parent == nil {
			// (in a subquery, an aggregate of an enclosing query's
			// columns is that query's, which bindAggregate tells)
			return nil, errorf(c.Position(), "aggregate functions are not allowed in %s", aggClause)
		}
		joined, ok, err := b.subqueryJoin(input, sc, c)
		if err != nil {
			return nil, err
		}
		if ok {
			input = joined
			continue
		}
		x, err := b.bindExpr(c, &exprCtx{sc: sc, clause: aggClause, marks: &marks})
		if err != nil {
			return nil, err
		}
		if err := checkBool(x, c.Position(), clause); err != nil {
			return nil, err
		}
		preds = append(preds, x)
	}
	for _, p := range preds {
		if c, v, ok := constBool(p); ok && !v {
			// a conjunct that is constantly FALSE or NULL: no row passes,
			// and the other conjuncts (their subqueries and
			// correlations) are never evaluated, as in PostgreSQL
			return &Filter{Input: orig, Pred: c}, nil
		}
	}
	kept := preds[:0]
	for _, p := range preds {
		if _, v, ok := constBool(p); !ok || !v {
			kept = append(kept, p)
		}
	}
	preds = kept
	input = applyMarks(input, marks)
	if len(preds) > 0 {
		input = &Filter{Input: input, Pred: andAll(b, preds)}
	}
	return input, nil
}

func checkBool(x Expr, pos parser.Pos, clause string) error {
	if !arrow.TypeEqual(x.Type(), tBool) && x.Type().ID() != arrow.NULL {
		return errorf(pos, "argument of %s must be type boolean, not type %s", clause, exec.TypeName(x.Type()))
	}
	return nil
}

func splitAnd(e parser.Expr) []parser.Expr {
	if be, ok := e.(*parser.BinaryExpr); ok && be.Op == parser.OpAnd {
		return append(splitAnd(be.L), splitAnd(be.R)...)
	}
	return []parser.Expr{e}
}

// subqueryJoin turns a WHERE conjunct that is [NOT] IN (subquery) or
// [NOT] EXISTS (subquery) into a join onto input.
func (b *binder) subqueryJoin(input Node, sc *scope, c parser.Expr) (Node, bool, error) {
	not := false
	if u, ok := c.(*parser.UnaryExpr); ok && u.Op == parser.OpNot {
		if ex, ok := u.X.(*parser.Exists); ok {
			c, not = ex, true
		}
	}
	switch c := c.(type) {
	case *parser.Exists:
		sub, corr, err := b.bindSubquery(c.Query, sc)
		if err != nil {
			return nil, false, err
		}
		if !corr {
			return nil, false, nil // evaluated once, as a constant
		}
		sub = stripProject(sub)
		sub, pulled, ok := pullCorrelated(sub)
		if !ok || len(freeCols(sub)) > 0 {
			return nil, false, nil // a dependent join (bindExistsValue)
		}
		kind := exec.JoinSemi
		if not {
			kind = exec.JoinAnti
		}
		return &Join{Kind: kind, Left: input, Right: sub, On: andAll(b, pulled)}, true, nil
	case *parser.InExpr:
		if c.Query == nil || containsQuery(c.X) {
			// a subquery on IN's left side needs marks of its own: the
			// general path (bindInSubquery) gives them
			return nil, false, nil
		}
		if row, ok := c.X.(*parser.RowExpr); ok {
			if c.Not {
				return nil, false, nil // a checked mark (bindRowInSubquery)
			}
			return b.rowInJoin(input, sc, c, row)
		}
		x, err := b.bindExpr(c.X, &exprCtx{sc: sc, clause: "WHERE"})
		if err != nil {
			return nil, false, err
		}
		sub, corr, err := b.bindSubquery(c.Query, sc)
		if err != nil {
			return nil, false, err
		}
		cols := sub.Columns()
		if len(cols) != 1 {
			return nil, false, errorf(c.Pos, "subquery has too many columns")
		}
		var pulled []Expr
		if corr {
			if c.Not {
				return nil, false, nil // a mark join: NOT IN's NULLs are judged among the correlated rows
			}
			in, p, ok := pullCorrelated(sub)
			if !ok || len(freeCols(in)) > 0 {
				return nil, false, nil // a dependent mark join (bindInSubquery)
			}
			sub, pulled = in, p
		}
		eq, err := b.inEquality(c.Pos, x, sub.Columns()[0])
		if err != nil {
			return nil, false, err
		}
		kind := exec.JoinSemi
		if c.Not {
			kind = exec.JoinNullAwareAnti
		}
		return &Join{Kind: kind, Left: input, Right: sub, On: andAll(b, append([]Expr{eq}, pulled...))}, true, nil
	}
	return nil, false, nil
}

// rowInJoin turns the WHERE conjunct (a, b, …) IN (subquery) into a semi
// join on every column pair: a row matches when some subquery row equals
// it column by column; a NULL comparison matches nothing, which, as a
// top-level WHERE condition, is what IN's NULL result does too.
func (b *binder) rowInJoin(input Node, sc *scope, c *parser.InExpr, row *parser.RowExpr) (Node, bool, error) {
	sub, eqs, err := b.rowInEqualities(c, row, &exprCtx{sc: sc, clause: "WHERE"})
	if err != nil {
		return nil, false, err
	}
	return &Join{Kind: exec.JoinSemi, Left: input, Right: sub, On: andAll(b, eqs)}, true, nil
}

// rowInEqualities binds the uncorrelated subquery of (a, b, …) IN
// (subquery) and the equalities a = c1, b = c2, … of its columns.
func (b *binder) rowInEqualities(e *parser.InExpr, row *parser.RowExpr, ec *exprCtx) (Node, []Expr, error) {
	sc := ec.sc
	if ec.agg != nil {
		sc = ec.agg.input
	}
	sub, corr, err := b.bindSubquery(e.Query, sc)
	if err != nil {
		return nil, nil, err
	}
	if corr {
		return nil, nil, errorf(e.Pos, "a row of values (a, b, …) IN a correlated subquery is not supported yet; use EXISTS (SELECT 1 FROM … WHERE a = … AND b = …)")
	}
	cols := sub.Columns()
	if len(cols) != len(row.Elems) {
		return nil, nil, errorf(e.Pos, "subquery has %d columns, the row of values before IN has %d", len(cols), len(row.Elems))
	}
	eqs := make([]Expr, len(cols))
	for i, el := range row.Elems {
		x, err := b.bindExpr(el, ec)
		if err != nil {
			return nil, nil, err
		}
		if eqs[i], err = b.inEquality(el.Position(), x, cols[i]); err != nil {
			return nil, nil, err
		}
	}
	return sub, eqs, nil
}

// bindRowInSubquery binds (a, b, …) [NOT] IN (subquery) in a value
// position as a mark join on every column pair. The mark is TRUE exactly
// when some subquery row equals the row, and FALSE exactly when no NULL
// is involved; otherwise it is NULL, where the true answer may be NULL or
// FALSE (JoinMark's NULL rule looks at whole keys, while a row comparison
// is decided column by column). Where NULL acts as FALSE, a top-level AND
// condition of a filter (ec.filterIn), the mark is exact as it is;
// anywhere else a NULL mark is an error rather than a guess.
func (b *binder) bindRowInSubquery(e *parser.InExpr, row *parser.RowExpr, ec *exprCtx) (Expr, error) {
	if ec.marks == nil {
		return nil, errorf(e.Pos, "IN (subquery) is not supported in %s yet", ec.clause)
	}
	sub, eqs, err := b.rowInEqualities(e, row, ec)
	if err != nil {
		return nil, err
	}
	mark := b.newCol("mark", "", tBool, true)
	from := len(*ec.marks)
	*ec.marks = append(*ec.marks, &Join{Kind: exec.JoinMark, Right: sub, On: andAll(b, eqs), Mark: &mark})
	if err := regroup(ec, from); err != nil {
		return nil, atPos(e.Pos, err)
	}
	var ref Expr = &ColRef{ID: mark.ID, Typ: tBool, Name: "mark"}
	if !e.Not && ec.filterIn[e] {
		return ref, nil
	}
	what := "(…) IN (subquery)"
	if e.Not {
		what = "(…) NOT IN (subquery)"
	}
	ref = &Func{Name: "decided", Args: []Expr{ref}, Typ: tBool, render: fixedRender("decided(mark)"),
		build: func(a []exec.Expr) (exec.Expr, error) { return &decidedMark{arg: a[0], what: what}, nil }}
	if e.Not {
		return b.call(e.Pos, "not", ref)
	}
	return ref, nil
}

// decidedMark fails a batch whose row IN mark is NULL (see
// bindRowInSubquery).
type decidedMark struct {
	arg  exec.Expr
	what string
}

func (d *decidedMark) DataType() arrow.DataType { return d.arg.DataType() }
func (d *decidedMark) String() string           { return "decided(" + d.arg.String() + ")" }
func (d *decidedMark) Eval(ec *exec.EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	a, err := d.arg.Eval(ec, batch)
	if err != nil {
		return nil, err
	}
	if a.NullN() > 0 {
		a.Release()
		return nil, fmt.Errorf("%s: a NULL in a compared row (of the left side or of the subquery) leaves the answer to be decided column by column, which is not supported yet; filter the NULLs out, or use [NOT] EXISTS (SELECT 1 FROM … WHERE a = … AND b = …)", d.what)
	}
	return a, nil
}

// filterIns collects the positive (a, b, …) IN (subquery) tests among the
// top-level AND conditions of where.
func filterIns(where parser.Expr) map[*parser.InExpr]bool {
	var out map[*parser.InExpr]bool
	for _, c := range splitAnd(where) {
		if in, ok := c.(*parser.InExpr); ok && in.Query != nil && !in.Not {
			if _, ok := in.X.(*parser.RowExpr); ok {
				if out == nil {
					out = map[*parser.InExpr]bool{}
				}
				out[in] = true
			}
		}
	}
	return out
}

// inEquality is x = sub_column with both sides of one type.
func (b *binder) inEquality(pos parser.Pos, x Expr, col Column) (Expr, error) {
	var r Expr = &ColRef{ID: col.ID, Typ: col.Type, Name: col.Name}
	t, err := exec.CommonTypeFor("IN", unknownAsNull([]Expr{x})[0], col.Type)
	if err != nil {
		return nil, atPos(pos, err)
	}
	if x, err = b.coerce(x, t); err != nil {
		return nil, atPos(pos, err)
	}
	if r, err = b.coerce(r, t); err != nil {
		return nil, atPos(pos, err)
	}
	return b.call(pos, "=", x, r)
}

// bindInSubquery binds x [NOT] IN (subquery) in a value position as a
// mark join.
func (b *binder) bindInSubquery(e *parser.InExpr, ec *exprCtx) (Expr, error) {
	if row, ok := e.X.(*parser.RowExpr); ok {
		return b.bindRowInSubquery(e, row, ec)
	}
	if ec.marks == nil || ec.inOnce {
		// no mark joins here, or a MERGE clause (evaluated on batches of
		// joined rows): an uncorrelated subquery runs once, as x = ANY
		// (ARRAY(q)), which has IN's NULL rules
		_, corr, err := b.probeSubquery(e.Query, ec)
		if err != nil {
			return nil, err
		}
		if corr && ec.marks == nil {
			return nil, errorf(e.Pos, "a correlated IN (subquery) is not supported in %s yet", ec.clause)
		}
		if !corr {
			var q parser.Expr = &parser.Quantified{Pos: e.Pos, X: e.X, Op: parser.OpEq, Array: &parser.ArraySubquery{Pos: e.Pos, Query: e.Query}}
			if e.Not {
				q = &parser.UnaryExpr{Pos: e.Pos, Op: parser.OpNot, X: q}
			}
			return b.bindExpr(q, ec)
		}
	}
	x, err := b.bindExpr(e.X, ec)
	if err != nil {
		return nil, err
	}
	sc := ec.sc
	if ec.agg != nil {
		sc = ec.agg.input
	}
	sub, corr, err := b.bindSubquery(e.Query, sc)
	if err != nil {
		return nil, err
	}
	if len(sub.Columns()) != 1 {
		return nil, errorf(e.Pos, "subquery has too many columns")
	}
	eq, err := b.inEquality(e.Pos, x, sub.Columns()[0])
	if err != nil {
		return nil, err
	}
	mark := b.newCol("mark", "", tBool, true)
	join := &Join{Kind: exec.JoinMark, Right: sub, On: eq, Mark: &mark}
	from := len(*ec.marks)
	if corr {
		// the correlation equalities are the hash keys; the IN comparison
		// is judged, NULLs included, among the candidates they select
		in, pulled, ok := pullCorrelated(sub)
		keyed := ok && len(pulled) > 0 && len(freeCols(in)) == 0
		if keyed {
			_, _, keyed = splitCorrelation(pulled, idSet(in.Columns()))
		}
		if keyed {
			join.Right, join.On, join.Residual = in, andAll(b, pulled), eq
		} else {
			// any other correlation: a dependent mark join
			d, ok := b.newDependent(sub, sc)
			if !ok {
				return nil, errorf(e.Pos, "this correlated IN (subquery) is not supported here yet: it reads a query further out")
			}
			q, dc, err := d.push(sub)
			if err != nil {
				return nil, atPos(e.Pos, err)
			}
			if err := d.join(q, dc, ec); err != nil {
				return nil, err
			}
			join = (*ec.marks)[len(*ec.marks)-1]
			*ec.marks = (*ec.marks)[:len(*ec.marks)-1]
			join.Kind, join.Residual, join.Mark = exec.JoinMark, eq, &mark
		}
	}
	*ec.marks = append(*ec.marks, join)
	if err := regroup(ec, from); err != nil {
		return nil, atPos(e.Pos, err)
	}
	var ref Expr = &ColRef{ID: mark.ID, Typ: tBool, Name: "mark"}
	if e.Not {
		return b.call(e.Pos, "not", ref)
	}
	return ref, nil
}

// runInit plans and runs an uncorrelated subquery now, returning at most
// limit rows of its single column.
func (b *binder) runInit(n Node, limit int64) ([]scalar.Scalar, error) {
	op, err := b.physical(&Limit{Input: n, Limit: limit})
	if err != nil {
		return nil, err
	}
	if err := op.Open(b.ctx); err != nil {
		op.Close()
		return nil, err
	}
	defer op.Close()
	var out []scalar.Scalar
	for {
		batch, err := op.Next(b.ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		for i := 0; i < int(batch.NumRows()); i++ {
			if batch.NumCols() == 0 {
				out = append(out, scalar.MakeNullScalar(arrow.Null))
				continue
			}
			s, err := scalar.GetScalar(batch.Column(0), i)
			if err != nil {
				batch.Release()
				return nil, err
			}
			out = append(out, s)
		}
		batch.Release()
	}
}

func (b *binder) bindScalarSubquery(e *parser.SubqueryExpr, ec *exprCtx) (Expr, error) {
	sc := ec.sc
	if ec.agg != nil {
		sc = ec.agg.input
	}
	sub, corr, err := b.bindSubquery(e.Query, sc)
	if err != nil {
		return nil, err
	}
	if corr {
		if ec.marks == nil {
			return nil, errorf(e.Pos, "a correlated scalar subquery is not supported in %s yet", ec.clause)
		}
		from := len(*ec.marks)
		x, ok, err := b.decorrelateScalar(sub, ec)
		if err == nil && !ok {
			x, ok, err = b.dependentScalar(sub, ec, sc)
		}
		if err != nil {
			return nil, atPos(e.Pos, err)
		}
		if !ok {
			return nil, errorf(e.Pos, "this correlated scalar subquery is not supported yet; only one over rows matched by equalities in its WHERE clause is (rewrite it as a join)")
		}
		if err := regroup(ec, from); err != nil {
			return nil, atPos(e.Pos, err)
		}
		return x, nil
	}
	cols := sub.Columns()
	if len(cols) != 1 {
		return nil, errorf(e.Pos, "subquery must return only one column")
	}
	return b.newInitPlan(sub, false, cols[0].Type, e.Pos), nil
}

func (b *binder) bindExistsValue(e *parser.Exists, ec *exprCtx) (Expr, error) {
	sc := ec.sc
	if ec.agg != nil {
		sc = ec.agg.input
	}
	sub, corr, err := b.bindSubquery(e.Query, sc)
	if err != nil {
		return nil, err
	}
	if corr {
		from := 0
		if ec.marks != nil {
			from = len(*ec.marks)
		}
		x, ok, err := b.existsMark(sub, ec)
		if err == nil && !ok && ec.marks != nil {
			x, ok, err = b.dependentExists(sub, ec, sc)
		}
		if err != nil {
			return nil, atPos(e.Pos, err)
		}
		if !ok {
			return nil, errorf(e.Pos, "this correlated EXISTS is not supported here yet; only correlations by equality in its WHERE clause are")
		}
		if err := regroup(ec, from); err != nil {
			return nil, atPos(e.Pos, err)
		}
		return x, nil
	}
	return b.newInitPlan(sub, true, arrow.FixedWidthTypes.Boolean, e.Pos), nil
}

// stripProject drops the select list of an EXISTS subquery.
func stripProject(n Node) Node {
	if p, ok := n.(*Project); ok {
		return p.Input
	}
	return n
}

// pullCorrelated removes, from the Filters of a Project/Filter chain, the
// conjuncts that reference columns from outside n, and returns them.
func pullCorrelated(n Node) (Node, []Expr, bool) {
	switch x := n.(type) {
	case *Filter:
		in, pulled, ok := pullCorrelated(x.Input)
		if !ok {
			return nil, nil, false
		}
		own := map[ColumnID]bool{}
		for _, c := range in.Columns() {
			own[c.ID] = true
		}
		var keep []Expr
		for _, c := range conjuncts(x.Pred) {
			if refsOnly(c, own) {
				keep = append(keep, c)
			} else {
				pulled = append(pulled, c)
			}
		}
		if len(keep) == 0 {
			return in, pulled, true
		}
		return &Filter{Input: in, Pred: andConj(keep)}, pulled, true
	case *Project:
		in, pulled, ok := pullCorrelated(x.Input)
		if !ok {
			return nil, nil, false
		}
		if len(pulled) == 0 {
			return n, nil, true
		}
		// expose the input columns the pulled conjuncts need
		need := map[ColumnID]bool{}
		for _, p := range pulled {
			exprCols(p, need)
		}
		p := &Project{Input: in, Exprs: append([]Expr(nil), x.Exprs...), Cols: append([]Column(nil), x.Cols...)}
		for _, c := range in.Columns() {
			if need[c.ID] {
				p.Exprs = append(p.Exprs, &ColRef{ID: c.ID, Typ: c.Type, Name: c.Name})
				p.Cols = append(p.Cols, c)
			}
		}
		return p, pulled, true
	}
	if len(freeCols(n)) > 0 {
		return nil, nil, false
	}
	return n, nil, true
}

// andConj rebuilds a conjunction from already-bound boolean conjuncts.
func andConj(cs []Expr) Expr {
	out := cs[0]
	build := func(a []exec.Expr) (exec.Expr, error) { return exec.NewCall("and", a...) }
	for _, c := range cs[1:] {
		out = &Func{Name: "and", Args: []Expr{out, c}, Typ: tBool, build: build}
	}
	return out
}

// nodeExprs lists the expressions a node evaluates.
func nodeExprs(n Node) []Expr {
	switch x := n.(type) {
	case *Filter:
		return []Expr{x.Pred}
	case *Unnest:
		return x.Args
	case *Project:
		return x.Exprs
	case *Join:
		var out []Expr
		if x.On != nil {
			out = append(out, x.On)
		}
		if x.Residual != nil {
			out = append(out, x.Residual)
		}
		return out
	case *Aggregate:
		out := append([]Expr(nil), x.GroupBy...)
		for _, a := range x.Aggs {
			out = append(out, a.Args...)
			if a.Filter != nil {
				out = append(out, a.Filter)
			}
			for _, k := range a.OrderBy {
				out = append(out, k.Expr)
			}
		}
		return out
	case *Window:
		var out []Expr
		for _, f := range x.Funcs {
			out = append(out, f.Args...)
			out = append(out, f.PartitionBy...)
			for _, k := range f.OrderBy {
				out = append(out, k.Expr)
			}
		}
		return out
	case *Sort:
		var out []Expr
		for _, k := range x.Keys {
			out = append(out, k.Expr)
		}
		return out
	case *Values:
		var out []Expr
		for _, r := range x.Rows {
			out = append(out, r...)
		}
		return out
	case *Scan:
		// the conjuncts the scan applies exactly need no column out of it
		if len(x.Exact) == 0 {
			return x.Filters
		}
		var out []Expr
		for _, f := range x.Filters {
			if !slices.Contains(x.Exact, f) {
				out = append(out, f)
			}
		}
		return out
	}
	return nil
}

// freeCols are the columns n's expressions reference that n's subtree
// does not produce: references to enclosing queries.
func freeCols(n Node) map[ColumnID]bool {
	used := map[ColumnID]bool{}
	produced := map[ColumnID]bool{}
	var walk func(Node)
	walk = func(n Node) {
		for _, e := range nodeExprs(n) {
			exprCols(e, used)
		}
		for _, c := range n.Columns() {
			produced[c.ID] = true
		}
		if s, ok := n.(*Scan); ok {
			for _, c := range s.All {
				produced[c.ID] = true
			}
		}
		if j, ok := n.(*Join); ok {
			for _, c := range j.Right.Columns() {
				produced[c.ID] = true
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(n)
	for id := range produced {
		delete(used, id)
	}
	return used
}

func (b *binder) bindWindowCall(e *parser.FuncCall, name string, ec *exprCtx) (Expr, error) {
	if ec.win == nil {
		clause := ec.clause
		if clause == "" {
			clause = "this context"
		}
		return nil, errorf(e.Pos, "window functions are not allowed in %s", clause)
	}
	spec := e.Over
	if spec == nil {
		spec = &parser.WindowSpec{Pos: e.Pos, Ref: e.OverName}
	}
	spec, err := b.resolveWindow(spec)
	if err != nil {
		return nil, err
	}
	if e.Distinct || e.Filter != nil || len(e.OrderBy) > 0 {
		return nil, errorf(e.Pos, "DISTINCT, FILTER and ORDER BY inside a window function call are not supported yet")
	}
	inner := *ec
	inner.win = nil
	inner.clause = "window functions"
	var args []Expr
	if !e.Star {
		var err error
		if args, err = b.bindExprs(e.Args, &inner); err != nil {
			return nil, err
		}
	}
	if (name == "lag" || name == "lead") && len(args) == 3 {
		// lead(anycompatible, integer, anycompatible): the value and the
		// default take their common type, as in PostgreSQL
		t, err := exec.CommonTypeFor(name, unknownAsNull([]Expr{args[0], args[2]})...)
		if err != nil {
			return nil, atPos(e.Pos, err)
		}
		for _, i := range []int{0, 2} {
			if args[i], err = b.coerce(args[i], t); err != nil {
				return nil, atPos(e.Args[i].Position(), err)
			}
		}
	}
	part, err := b.bindExprs(spec.PartitionBy, &inner)
	if err != nil {
		return nil, err
	}
	var order []SortKey
	for _, o := range spec.OrderBy {
		x, err := b.bindExpr(o.Expr, &inner)
		if err != nil {
			return nil, err
		}
		order = append(order, sortKey(x, o))
	}
	var frame *exec.Frame
	if spec.Frame != nil {
		f, err := b.frame(spec.Frame)
		if err != nil {
			return nil, err
		}
		frame = f
	}
	// check with placeholders
	all := append(append([]Expr(nil), args...), part...)
	ph := placeholders(all)
	var oph []exec.SortKey
	for i, k := range order {
		oph = append(oph, exec.SortKey{Expr: &exec.Column{Index: len(all) + i, Type: k.Expr.Type()}, Descending: k.Desc, NullsFirst: k.NullsFirst})
	}
	wf, err := exec.NewWindowFunc(name, ph[:len(args)], ph[len(args):], oph, frame)
	if err != nil {
		return nil, atPos(e.Pos, err)
	}
	col := b.newCol(name, "", wf.DataType(), true)
	ec.win.funcs = append(ec.win.funcs, &WindowCall{Name: name, Args: args, PartitionBy: part, OrderBy: order, Frame: frame, Col: col})
	return &ColRef{ID: col.ID, Typ: col.Type, Name: strings.ToLower(e.String())}, nil
}

func (b *binder) frame(f *parser.Frame) (*exec.Frame, error) {
	out := &exec.Frame{}
	switch f.Unit {
	case parser.FrameRows:
		out.Unit = exec.FrameRows
	case parser.FrameRange:
		out.Unit = exec.FrameRange
	default:
		out.Unit = exec.FrameGroups
	}
	switch f.Exclude {
	case "CURRENT ROW":
		out.Exclude = exec.ExcludeCurrentRow
	case "GROUP":
		out.Exclude = exec.ExcludeGroup
	case "TIES":
		out.Exclude = exec.ExcludeTies
	}
	bound := func(fb *parser.FrameBound) (exec.FrameBound, error) {
		var k exec.FrameBound
		switch fb.Kind {
		case parser.UnboundedPreceding:
			k.Kind = exec.UnboundedPreceding
		case parser.Preceding:
			k.Kind = exec.OffsetPreceding
		case parser.CurrentRow:
			k.Kind = exec.CurrentRow
		case parser.Following:
			k.Kind = exec.OffsetFollowing
		case parser.UnboundedFollowing:
			k.Kind = exec.UnboundedFollowing
		}
		if fb.Offset != nil {
			l, err := b.constValue(fb.Offset, "frame offset")
			if err != nil {
				return k, err
			}
			k.Offset = l.Value
		}
		return k, nil
	}
	var err error
	if out.Start, err = bound(f.Start); err != nil {
		return nil, err
	}
	if f.End == nil {
		out.End = exec.FrameBound{Kind: exec.CurrentRow}
	} else if out.End, err = bound(f.End); err != nil {
		return nil, err
	}
	return out, nil
}

// decorrelateScalar rewrites a correlated scalar subquery of the shape
//
//	(SELECT f(agg(...)) FROM … WHERE inner_k = outer_k AND …)
//
// into a left join of the outer rows with the subquery grouped by its
// inner keys, the value read from the joined row. An outer row without a
// group gets what the aggregate gives an empty input: NULL, or 0 for a
// bare count.
func (b *binder) decorrelateScalar(sub Node, ec *exprCtx) (Expr, bool, error) {
	if lim, ok := sub.(*Limit); ok {
		return b.decorrelateLimited(lim, ec)
	}
	proj, ok := sub.(*Project)
	if !ok || len(proj.Exprs) != 1 {
		return nil, false, nil
	}
	agg, ok := proj.Input.(*Aggregate)
	if !ok {
		return b.decorrelateRows(proj, ec)
	}
	if len(agg.GroupBy) > 0 {
		return nil, false, nil
	}
	in, pulled, ok := pullCorrelated(agg.Input)
	if !ok || len(pulled) == 0 || len(freeCols(in)) > 0 {
		return nil, false, nil
	}
	own := idSet(in.Columns())
	innerKeys, outerKeys, ok := splitCorrelation(pulled, own)
	if !ok {
		return nil, false, nil // a dependent join (dependentScalar)
	}
	// grouping by the inner keys leaves no outer row to read: aggregates
	// of outer columns (max(i.c + o.c)) need the dependent join (agg has
	// no GROUP BY, so these are its aggregates' expressions)
	for _, x := range nodeExprs(agg) {
		if !refsOnly(x, own) {
			return nil, false, nil // a dependent join (dependentScalar)
		}
	}
	// the select expression may use the aggregates only
	aggIDs := map[ColumnID]bool{}
	for _, a := range agg.Aggs {
		aggIDs[a.Col.ID] = true
	}
	if !refsOnly(proj.Exprs[0], aggIDs) {
		return nil, false, nil // a dependent join (dependentScalar)
	}
	bareCount := false
	if c, isCol := proj.Exprs[0].(*ColRef); isCol {
		for _, a := range agg.Aggs {
			if a.Col.ID == c.ID && a.Name == "count" {
				bareCount = true
			}
		}
	} else {
		for _, a := range agg.Aggs {
			if a.Name == "count" {
				// f(count) of an empty group is not f(NULL): an outer row
				// without matches needs its own group
				return nil, false, nil // a dependent join (dependentScalar)
			}
		}
	}
	grouped := &Aggregate{Input: in, GroupBy: innerKeys, Aggs: agg.Aggs}
	for _, k := range innerKeys {
		grouped.Groups = append(grouped.Groups, b.newCol(k.String(), "", k.Type(), true))
	}
	value := b.newCol("subquery", "", proj.Exprs[0].Type(), true)
	right := &Project{Input: grouped}
	for _, g := range grouped.Groups {
		right.Exprs = append(right.Exprs, &ColRef{ID: g.ID, Typ: g.Type, Name: g.Name})
		right.Cols = append(right.Cols, g)
	}
	right.Exprs = append(right.Exprs, proj.Exprs[0])
	right.Cols = append(right.Cols, value)
	var conds []Expr
	for i, ok := range outerKeys {
		g := grouped.Groups[i]
		eq, err := b.call(parserPos, "=", ok, &ColRef{ID: g.ID, Typ: g.Type, Name: g.Name})
		if err != nil {
			return nil, false, err
		}
		conds = append(conds, eq)
	}
	*ec.marks = append(*ec.marks, &Join{Kind: exec.JoinLeft, Right: right, On: andAll(b, conds)})
	var out Expr = &ColRef{ID: value.ID, Typ: value.Type, Name: "subquery"}
	if bareCount {
		zero, _ := exec.NewLiteral(int64(0))
		x, err := b.coalesce(out, constLit(zero))
		if err != nil {
			return nil, false, err
		}
		out = x
	}
	return out, true, nil
}

var parserPos parser.Pos

// regroup rewrites the joins a correlated subquery added to marks from
// index `from` on, when the subquery sits above a GROUP BY (select list,
// HAVING): its correlated references were bound to the aggregate's input
// columns, which the joins, applied after the aggregate, see as group
// columns. A reference to a column that is not grouped is Postgres's
// error.
func regroup(ec *exprCtx, from int) error {
	if ec.agg == nil || ec.marks == nil {
		return nil
	}
	subst := map[ColumnID]Expr{}
	for id, g := range ec.agg.groupIDs {
		subst[id] = g
	}
	for _, j := range (*ec.marks)[from:] {
		for _, e := range []*Expr{&j.On, &j.Residual} {
			if *e == nil {
				continue
			}
			x, ok := substitute(*e, subst)
			if !ok {
				return fmt.Errorf("a correlated subquery over a volatile group key is not supported yet")
			}
			var bad string
			walkExpr(x, func(y Expr) {
				if c, isCol := y.(*ColRef); isCol && bad == "" && !isOuter(ec.agg.input, c.ID) && !ec.agg.outerAggs[c.ID] {
					bad = c.Name
				}
			})
			if bad != "" {
				return fmt.Errorf("subquery uses ungrouped column %q from outer query", bad)
			}
			*e = x
		}
	}
	return nil
}

// splitCorrelation splits correlation conjuncts, each inner = outer, into
// the inner sides (over own) and the outer sides. ok is false when one is
// not such an equality.
func splitCorrelation(pulled []Expr, own map[ColumnID]bool) (inner, outer []Expr, ok bool) {
	for _, p := range pulled {
		f, isFunc := p.(*Func)
		if !isFunc || f.Name != "=" {
			return nil, nil, false
		}
		l, r := f.Args[0], f.Args[1]
		switch {
		case refsOnly(l, own) && !refsAny(r, own):
			inner, outer = append(inner, l), append(outer, r)
		case refsOnly(r, own) && !refsAny(l, own):
			inner, outer = append(inner, r), append(outer, l)
		default:
			return nil, nil, false
		}
	}
	return inner, outer, true
}

// decorrelateLimited rewrites a correlated scalar subquery with a LIMIT
// (and maybe ORDER BY and OFFSET),
//
//	(SELECT v FROM … WHERE inner_k = outer_k AND … ORDER BY o LIMIT n OFFSET m)
//
// as decorrelateRows does, over the rows numbered by row_number() OVER
// (PARTITION BY inner_k ORDER BY o) that fall in (m, m+n].
func (b *binder) decorrelateLimited(lim *Limit, ec *exprCtx) (Expr, bool, error) {
	n := lim.Input
	valueID := ColumnID(-1)
	if f, ok := n.(*Project); ok && len(f.Exprs) == 1 {
		if _, isSort := f.Input.(*Sort); isSort {
			c, isCol := f.Exprs[0].(*ColRef)
			if !isCol {
				return nil, false, nil
			}
			valueID, n = c.ID, f.Input // the select list over hidden sort keys
		}
	}
	var keys []SortKey
	if st, ok := n.(*Sort); ok {
		keys, n = st.Keys, st.Input
	}
	proj, ok := n.(*Project)
	if !ok || len(proj.Exprs) == 0 {
		return nil, false, nil
	}
	subst := map[ColumnID]Expr{}
	value := proj.Exprs[0]
	for i, c := range proj.Cols {
		subst[c.ID] = proj.Exprs[i]
		if c.ID == valueID {
			value = proj.Exprs[i]
		}
	}
	in, pulled, ok := pullCorrelated(proj.Input)
	if !ok || len(pulled) == 0 || len(freeCols(in)) > 0 {
		return nil, false, nil
	}
	own := idSet(in.Columns())
	var order []SortKey
	ownOrder := true
	for _, k := range keys {
		x, ok := substitute(k.Expr, subst)
		if !ok {
			return nil, false, nil
		}
		ownOrder = ownOrder && refsOnly(x, own)
		order = append(order, SortKey{Expr: x, Desc: k.Desc, NullsFirst: k.NullsFirst})
	}
	innerKeys, outerKeys, ok := splitCorrelation(pulled, own)
	if !ok || !refsOnly(value, own) || !ownOrder {
		return nil, false, nil
	}
	rn := b.newCol("row_number", "", tInt64, false)
	var numbered Node = &Window{Input: in, Funcs: []*WindowCall{{Name: "row_number", PartitionBy: innerKeys, OrderBy: order, Col: rn}}}
	ref := &ColRef{ID: rn.ID, Typ: tInt64, Name: "row_number"}
	lo, _ := exec.NewLiteral(lim.Offset)
	pred, err := b.call(parserPos, ">", ref, constLit(lo))
	if err != nil {
		return nil, false, err
	}
	if lim.Limit >= 0 {
		hi, _ := exec.NewLiteral(lim.Offset + lim.Limit)
		le, err := b.call(parserPos, "<=", ref, constLit(hi))
		if err != nil {
			return nil, false, err
		}
		pred = andConj([]Expr{pred, le})
	}
	numbered = &Filter{Input: numbered, Pred: pred}
	return b.groupedSingleRow(numbered, innerKeys, outerKeys, value, ec)
}

// decorrelateRows rewrites a correlated scalar subquery without an
// aggregate,
//
//	(SELECT v FROM … WHERE inner_k = outer_k AND …)
//
// into a left join of the outer rows with the subquery's rows grouped by
// their inner keys, each group giving its row count and any value. The
// result is that value, NULL for an outer row without rows, and
// Postgres's error for an outer row given more than one (exec.SingleRow).
//
// Two more kinds of correlated conjunct are taken (psql's \d writes
// both): one over outer columns only, a guard, makes the value
// CASE WHEN guard THEN (…) END, which evaluates the subquery only where
// the guard holds, as PostgreSQL's WHERE would find no row otherwise; and
// one mixing both sides, which becomes an inner filter when every outer
// column in it is an outer key, replaced by its inner key (the join
// makes them equal).
func (b *binder) decorrelateRows(proj *Project, ec *exprCtx) (Expr, bool, error) {
	in, pulled, ok := pullCorrelated(proj.Input)
	if !ok || len(pulled) == 0 || len(freeCols(in)) > 0 {
		return nil, false, nil
	}
	own := idSet(in.Columns())
	var eqs, guards, mixed []Expr
	for _, p := range pulled {
		switch {
		case !refsAny(p, own):
			guards = append(guards, p)
		default:
			if _, _, isKey := splitCorrelation([]Expr{p}, own); isKey {
				eqs = append(eqs, p)
			} else {
				mixed = append(mixed, p)
			}
		}
	}
	if len(eqs) == 0 {
		return nil, false, nil
	}
	innerKeys, outerKeys, ok := splitCorrelation(eqs, own)
	if !ok || !refsOnly(proj.Exprs[0], own) {
		return nil, false, nil
	}
	if len(mixed) > 0 {
		subst := map[ColumnID]Expr{}
		for i, o := range outerKeys {
			if c, isCol := o.(*ColRef); isCol {
				subst[c.ID] = innerKeys[i]
			}
		}
		var filters []Expr
		for _, m := range mixed {
			r, ok := substitute(m, subst)
			if !ok || !refsOnly(r, own) {
				return nil, false, nil
			}
			filters = append(filters, r)
		}
		in = &Filter{Input: in, Pred: andConj(filters)}
	}
	x, ok, err := b.groupedSingleRow(in, innerKeys, outerKeys, proj.Exprs[0], ec)
	if err != nil || !ok || len(guards) == 0 {
		return x, ok, err
	}
	guard := andAll(b, guards)
	r, err := b.newFunc("case", []Expr{guard, x}, func(a []exec.Expr) (exec.Expr, error) {
		return exec.NewCase([]exec.When{{Cond: a[0], Then: a[1]}}, nil)
	})
	if err != nil {
		return nil, false, err
	}
	return r, true, nil
}

// groupedSingleRow left-joins the outer rows, by outerKeys, to in grouped
// by innerKeys, and returns the value v of the group's one row, NULL
// without a row, or exec.SingleRow's error for more than one.
func (b *binder) groupedSingleRow(in Node, innerKeys, outerKeys []Expr, v Expr, ec *exprCtx) (Expr, bool, error) {
	count := &AggCall{Name: "count", Col: b.newCol("count", "", tInt64, false)}
	value := &AggCall{Name: "any_value", Args: []Expr{v}, Col: b.newCol("subquery", "", v.Type(), true)}
	grouped := &Aggregate{Input: in, GroupBy: innerKeys, Aggs: []*AggCall{count, value}}
	for _, k := range innerKeys {
		grouped.Groups = append(grouped.Groups, b.newCol(k.String(), "", k.Type(), true))
	}
	var conds []Expr
	for i, o := range outerKeys {
		g := grouped.Groups[i]
		eq, err := b.call(parserPos, "=", o, &ColRef{ID: g.ID, Typ: g.Type, Name: g.Name})
		if err != nil {
			return nil, false, err
		}
		conds = append(conds, eq)
	}
	*ec.marks = append(*ec.marks, &Join{Kind: exec.JoinLeft, Right: grouped, On: andAll(b, conds)})
	x, err := b.newFunc("single_row", []Expr{
		&ColRef{ID: count.Col.ID, Typ: tInt64, Name: "count"},
		&ColRef{ID: value.Col.ID, Typ: v.Type(), Name: "subquery"},
	}, func(a []exec.Expr) (exec.Expr, error) { return exec.NewSingleRow(a[0], a[1]) })
	if err != nil {
		return nil, false, err
	}
	return x, true, nil
}

// refsAny reports whether e references any column in set.
func refsAny(e Expr, set map[ColumnID]bool) bool {
	found := false
	walkExpr(e, func(x Expr) {
		if c, ok := x.(*ColRef); ok && set[c.ID] {
			found = true
		}
	})
	return found
}

// resolveWindow merges a window specification with the named window it
// extends (OVER w, OVER (w ORDER BY …)), as SQL defines: the reference
// supplies PARTITION BY and may supply ORDER BY; the frame is the
// referencing spec's.
func (b *binder) resolveWindow(spec *parser.WindowSpec) (*parser.WindowSpec, error) {
	if spec.Ref.Empty() {
		return spec, nil
	}
	base, ok := b.windows[identName(spec.Ref)]
	if !ok {
		return nil, errorf(spec.Pos, "window %q does not exist", identName(spec.Ref))
	}
	if len(spec.PartitionBy) > 0 {
		return nil, errorf(spec.Pos, "cannot override PARTITION BY clause of window %q", identName(spec.Ref))
	}
	if len(spec.OrderBy) > 0 && len(base.OrderBy) > 0 {
		return nil, errorf(spec.Pos, "cannot override ORDER BY clause of window %q", identName(spec.Ref))
	}
	if base.Frame != nil {
		return nil, errorf(spec.Pos, "cannot copy window %q because it has a frame clause", identName(spec.Ref))
	}
	out := &parser.WindowSpec{Pos: spec.Pos, PartitionBy: base.PartitionBy, OrderBy: base.OrderBy, Frame: spec.Frame}
	if len(spec.OrderBy) > 0 {
		out.OrderBy = spec.OrderBy
	}
	return out, nil
}

// existsMark binds a correlated EXISTS in a value position (a DELETE's
// WHERE, a select list) as a mark join on its correlation conjuncts:
// EXISTS is TRUE when the outer row has a match, else FALSE (a NULL key
// matches nothing, so the mark's NULL means FALSE here).
func (b *binder) existsMark(sub Node, ec *exprCtx) (Expr, bool, error) {
	if ec.marks == nil {
		return nil, false, nil
	}
	in, pulled, ok := pullCorrelated(stripProject(sub))
	if !ok || len(pulled) == 0 || len(freeCols(in)) > 0 {
		return nil, false, nil
	}
	// equalities become the join's hash keys; the other correlated
	// conjuncts are checked per candidate (all of them, by a nested loop
	// join, when there is no equality), where a NULL, like a FALSE, leaves
	// EXISTS false
	mark := b.newCol("mark", "", tBool, true)
	*ec.marks = append(*ec.marks, &Join{Kind: exec.JoinMark, Right: in, On: andAll(b, pulled), Mark: &mark})
	f, _ := exec.NewLiteral(false)
	x, err := b.coalesce(&ColRef{ID: mark.ID, Typ: tBool, Name: "exists"}, constLit(f))
	if err != nil {
		return nil, false, err
	}
	return x, true, nil
}
