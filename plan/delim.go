package plan

import (
	"fmt"
	"sort"

	"github.com/skadedb/skade/exec"
)

// Dependent joins: the general decorrelation of Neumann and Kemper
// ("Unnesting Arbitrary Queries", BTW 2015), for subqueries correlated
// anywhere, not only in the conjuncts of their WHERE clause (a FROM
// function over outer values, a correlated join condition or grouping).
//
// The subquery Q, over outer columns o1…on, is rewritten into Q' over D,
// the distinct values of (o1…on) among the outer rows: D is pushed down
// Q's operators until the ones below no longer depend on the outer row,
// where it is joined as a cross product (a DelimScan), and every outer
// reference above becomes a reference to D's columns. Q' computes the
// subquery once per distinct outer value; the outer rows are then
// left-joined to it on oi IS NOT DISTINCT FROM di. At run time,
// exec.DelimJoin reads the outer rows once, computes D from them and
// feeds it to the DelimScans.

// dependent is one dependent join being built.
type dependent struct {
	b     *binder
	outer []Column // the outer columns Q references, in ID order
	set   map[ColumnID]bool
	scans []*DelimScan
}

// errNotDecorrelated says a subquery shape push cannot rewrite.
type errNotDecorrelated struct{ what string }

func (e errNotDecorrelated) Error() string {
	return "this correlated subquery is not supported yet: " + e.what
}

// newDependent prepares the dependent join of sub, whose outer columns
// must be columns of sc (the enclosing query) or of the queries around it.
func (b *binder) newDependent(sub Node, sc *scope) (*dependent, bool) {
	free := freeCols(sub)
	if len(free) == 0 {
		return nil, false
	}
	// the enclosing queries' columns: a column of a query further out is
	// the enclosing subquery's own outer reference, which its
	// decorrelation (push) substitutes in this join's condition too
	byID := map[ColumnID]Column{}
	for s := sc; s != nil; s = s.parent {
		for _, c := range s.cols {
			if _, seen := byID[c.ID]; !seen {
				byID[c.ID] = c.Column
			}
		}
	}
	d := &dependent{b: b, set: map[ColumnID]bool{}}
	for id := range free {
		c, ok := byID[id]
		if !ok {
			return nil, false
		}
		d.outer = append(d.outer, c)
		d.set[id] = true
	}
	sort.Slice(d.outer, func(i, j int) bool { return d.outer[i].ID < d.outer[j].ID })
	return d, true
}

// depends reports whether n reads an outer column.
func (d *dependent) depends(n Node) bool {
	for id := range freeCols(n) {
		if d.set[id] {
			return true
		}
	}
	return false
}

// scan adds a DelimScan of fresh columns, one per outer column.
func (d *dependent) scan() (*DelimScan, []Column) {
	s := &DelimScan{}
	for _, o := range d.outer {
		s.Cols = append(s.Cols, d.b.newCol(o.Name, "", o.Type, true))
	}
	d.scans = append(d.scans, s)
	return s, s.Cols
}

// subst rewrites outer references in e to dc.
func (d *dependent) subst(e Expr, dc []Column) (Expr, error) {
	if e == nil {
		return nil, nil
	}
	m := map[ColumnID]Expr{}
	for i, o := range d.outer {
		m[o.ID] = colRef(dc[i])
	}
	r, ok := substitute(e, m)
	if !ok {
		return nil, errNotDecorrelated{"it reads an outer column under a volatile function"}
	}
	return r, nil
}

func (d *dependent) substAll(es []Expr, dc []Column) ([]Expr, error) {
	out := make([]Expr, len(es))
	for i, e := range es {
		x, err := d.subst(e, dc)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func colRef(c Column) *ColRef { return &ColRef{ID: c.ID, Typ: c.Type, Name: c.Name} }

func colRefs(cs []Column) []Expr {
	out := make([]Expr, len(cs))
	for i, c := range cs {
		out[i] = colRef(c)
	}
	return out
}

// push returns n over D: n's columns followed by the columns carrying the
// outer values (returned), with outer references replaced by them.
func (d *dependent) push(n Node) (Node, []Column, error) {
	if !d.depends(n) {
		s, dc := d.scan()
		if _, one := n.(*OneRow); one {
			return s, dc, nil
		}
		return &Join{Kind: exec.JoinInner, Left: n, Right: s}, dc, nil
	}
	switch x := n.(type) {
	case *Filter:
		in, dc, err := d.push(x.Input)
		if err != nil {
			return nil, nil, err
		}
		p, err := d.subst(x.Pred, dc)
		if err != nil {
			return nil, nil, err
		}
		return &Filter{Input: in, Pred: p}, dc, nil
	case *Project:
		in, dc, err := d.push(x.Input)
		if err != nil {
			return nil, nil, err
		}
		exprs, err := d.substAll(x.Exprs, dc)
		if err != nil {
			return nil, nil, err
		}
		return &Project{Input: in, Exprs: append(exprs, colRefs(dc)...), Cols: append(append([]Column(nil), x.Cols...), dc...)}, dc, nil
	case *Unnest:
		in, dc, err := d.push(x.Input)
		if err != nil {
			return nil, nil, err
		}
		args, err := d.substAll(x.Args, dc)
		if err != nil {
			return nil, nil, err
		}
		return &Unnest{Input: in, Func: x.Func, Args: args, Col: x.Col, More: x.More, Ord: x.Ord, Outer: x.Outer}, dc, nil
	case *Join:
		dl, dr := d.depends(x.Left), d.depends(x.Right)
		if x.Delim != nil && dr {
			return nil, nil, errNotDecorrelated{"a subquery nested in it reads the outermost row"}
		}
		// a nested subquery's dependent join computes over its left rows,
		// which now carry the outer values too
		j := &Join{Kind: x.Kind, Left: x.Left, Right: x.Right, Mark: x.Mark, Delim: x.Delim}
		var dc []Column
		var err error
		leftKeeps := false // each join row extends one left row, so D rides along
		switch x.Kind {
		case exec.JoinInner, exec.JoinLeft, exec.JoinSemi, exec.JoinAnti, exec.JoinMark, exec.JoinNullAwareAnti:
			leftKeeps = true
		}
		switch {
		case dr && x.Kind == exec.JoinInner && !dl:
			j.Right, dc, err = d.push(x.Right)
		case !dr && leftKeeps:
			// the left side, or only the condition, reads it; NOT IN's
			// null-aware anti join too: its right side, whose NULLs and
			// emptiness it judges, does not read D
			j.Left, dc, err = d.push(x.Left)
		default:
			return d.pushJoinBoth(x)
		}
		if err != nil {
			return nil, nil, err
		}
		if j.On, err = d.subst(x.On, dc); err != nil {
			return nil, nil, err
		}
		if j.Residual, err = d.subst(x.Residual, dc); err != nil {
			return nil, nil, err
		}
		return j, dc, nil
	case *Aggregate:
		if len(x.GroupBy) == 0 {
			return d.pushScalarAgg(x)
		}
		in, dc, err := d.push(x.Input)
		if err != nil {
			return nil, nil, err
		}
		gb, err := d.substAll(x.GroupBy, dc)
		if err != nil {
			return nil, nil, err
		}
		aggs, err := d.substAggs(x.Aggs, dc)
		if err != nil {
			return nil, nil, err
		}
		groups := append([]Column(nil), x.Groups...)
		var out []Column
		for _, c := range dc {
			g := d.b.newCol(c.Name, "", c.Type, true)
			gb, groups, out = append(gb, colRef(c)), append(groups, g), append(out, g)
		}
		return &Aggregate{Input: in, GroupBy: gb, Groups: groups, Aggs: aggs}, out, nil
	case *Window:
		in, dc, err := d.push(x.Input)
		if err != nil {
			return nil, nil, err
		}
		funcs := make([]*WindowCall, len(x.Funcs))
		for i, f := range x.Funcs {
			c := *f
			if c.Args, err = d.substAll(f.Args, dc); err != nil {
				return nil, nil, err
			}
			part, err := d.substAll(f.PartitionBy, dc)
			if err != nil {
				return nil, nil, err
			}
			c.PartitionBy = append(part, colRefs(dc)...)
			if c.OrderBy, err = d.substKeys(f.OrderBy, dc); err != nil {
				return nil, nil, err
			}
			funcs[i] = &c
		}
		return &Window{Input: in, Funcs: funcs}, dc, nil
	case *Sort:
		in, dc, err := d.push(x.Input)
		if err != nil {
			return nil, nil, err
		}
		keys, err := d.substKeys(x.Keys, dc)
		if err != nil {
			return nil, nil, err
		}
		s := *x
		s.Input, s.Keys = in, keys
		return &s, dc, nil
	case *Distinct:
		in, dc, err := d.push(x.Input)
		if err != nil {
			return nil, nil, err
		}
		return &Distinct{Input: in}, dc, nil
	case *Limit:
		return d.pushLimit(x)
	case *SetOp:
		// D goes into both sides (a side that does not read the outer
		// row is crossed with D), and the rows compared are the side's
		// row plus its D values: one set operation per outer value
		side := func(in Node) (Node, error) {
			p, dc, err := d.push(in)
			if err != nil {
				return nil, err
			}
			cols := append(append([]Column(nil), in.Columns()...), dc...)
			return &Project{Input: p, Exprs: colRefs(cols), Cols: cols}, nil
		}
		l, err := side(x.Left)
		if err != nil {
			return nil, nil, err
		}
		r, err := side(x.Right)
		if err != nil {
			return nil, nil, err
		}
		var out []Column
		for _, o := range d.outer {
			out = append(out, d.b.newCol(o.Name, "", o.Type, true))
		}
		return &SetOp{Op: x.Op, All: x.All, Left: l, Right: r, Cols: append(append([]Column(nil), x.Cols...), out...)}, out, nil
	}
	return nil, nil, errNotDecorrelated{fmt.Sprintf("it reads the outer row inside %s", n.String())}
}

// pushScalarAgg pushes D into x, an aggregate without GROUP BY nested in
// the subquery: one row per outer value even where its input has no rows.
// Its input over D is grouped by the outer values (groupScalarAgg), and D
// (a DelimScan) is left-joined to the groups, so an outer value without
// rows gets the aggregates over no rows: NULL, or 0 for a count.
func (d *dependent) pushScalarAgg(x *Aggregate) (Node, []Column, error) {
	// the groups' aggregates get columns of their own; the projection
	// above gives x's columns their values
	inner := *x
	inner.Aggs = make([]*AggCall, len(x.Aggs))
	for i, a := range x.Aggs {
		c := *a
		c.Col = d.b.newCol(a.Col.Name, "", a.Col.Type, true)
		inner.Aggs[i] = &c
	}
	g, keys, subst, err := d.groupScalarAgg(&inner)
	if err != nil {
		return nil, nil, err
	}
	s, sc := d.scan()
	on, err := d.notDistinct(sc, keys)
	if err != nil {
		return nil, nil, err
	}
	p := &Project{Input: &Join{Kind: exec.JoinLeft, Left: s, Right: g, On: andConj(on)}}
	for i, a := range x.Aggs {
		var e Expr = colRef(inner.Aggs[i].Col)
		if z, ok := subst[inner.Aggs[i].Col.ID]; ok {
			e = z
		}
		p.Exprs, p.Cols = append(p.Exprs, e), append(p.Cols, a.Col)
	}
	for _, c := range sc {
		p.Exprs, p.Cols = append(p.Exprs, colRef(c)), append(p.Cols, c)
	}
	return p, sc, nil
}

// notDistinct is the conjuncts a[i] IS NOT DISTINCT FROM b[i]: the two
// column lists carry the same outer values.
func (d *dependent) notDistinct(a, b []Column) ([]Expr, error) {
	out := make([]Expr, len(a))
	for i := range a {
		eq, err := d.b.call(parserPos, "is_not_distinct_from", colRef(a[i]), colRef(b[i]))
		if err != nil {
			return nil, err
		}
		out[i] = eq
	}
	return out, nil
}

// pushJoinBoth pushes D into both sides of x (a side that does not read
// the outer row is crossed with D), and a row joins only rows of its own
// outer value: the condition also compares the two sides' D columns IS NOT
// DISTINCT FROM, so the join runs once per outer value, as in the paper's
// rule for a dependent join whose both sides (or whose preserved side)
// read the outer row. A full join's D is each row's present side.
func (d *dependent) pushJoinBoth(x *Join) (Node, []Column, error) {
	if x.Delim != nil {
		return nil, nil, errNotDecorrelated{"a subquery nested in it reads the outermost row"}
	}
	switch x.Kind {
	case exec.JoinInner, exec.JoinLeft, exec.JoinRight, exec.JoinFull, exec.JoinSemi, exec.JoinAnti:
	default:
		// a mark or NOT IN join judges NULLs over the whole right side,
		// which would need them per outer value
		return nil, nil, errNotDecorrelated{fmt.Sprintf("the right side of a %s join in it reads the outer row", x.Kind)}
	}
	l, dl, err := d.push(x.Left)
	if err != nil {
		return nil, nil, err
	}
	r, dr, err := d.push(x.Right)
	if err != nil {
		return nil, nil, err
	}
	// a pair joins only when both carry the same outer value, so the
	// condition reads it from either side
	on, err := d.subst(x.On, dl)
	if err != nil {
		return nil, nil, err
	}
	same, err := d.notDistinct(dl, dr)
	if err != nil {
		return nil, nil, err
	}
	j := &Join{Kind: x.Kind, Left: l, Right: r, On: andConj(append(conjuncts(on), same...))}
	if j.Residual, err = d.subst(x.Residual, dl); err != nil {
		return nil, nil, err
	}
	switch x.Kind {
	case exec.JoinRight:
		return j, dr, nil
	case exec.JoinFull:
	default:
		return j, dl, nil
	}
	drop := map[ColumnID]bool{}
	for i := range dl {
		drop[dl[i].ID], drop[dr[i].ID] = true, true
	}
	p := &Project{Input: j}
	for _, c := range j.Columns() {
		if !drop[c.ID] {
			p.Exprs, p.Cols = append(p.Exprs, colRef(c)), append(p.Cols, c)
		}
	}
	var out []Column
	for i := range dl {
		co, err := d.b.coalesce(colRef(dl[i]), colRef(dr[i]))
		if err != nil {
			return nil, nil, err
		}
		c := d.b.newCol(dl[i].Name, "", dl[i].Type, true)
		p.Exprs, p.Cols, out = append(p.Exprs, co), append(p.Cols, c), append(out, c)
	}
	return p, out, nil
}

func (d *dependent) substKeys(ks []SortKey, dc []Column) ([]SortKey, error) {
	out := make([]SortKey, len(ks))
	for i, k := range ks {
		x, err := d.subst(k.Expr, dc)
		if err != nil {
			return nil, err
		}
		out[i] = SortKey{Expr: x, Desc: k.Desc, NullsFirst: k.NullsFirst}
	}
	return out, nil
}

func (d *dependent) substAggs(aggs []*AggCall, dc []Column) ([]*AggCall, error) {
	out := make([]*AggCall, len(aggs))
	for i, a := range aggs {
		c := *a
		var err error
		if c.Args, err = d.substAll(a.Args, dc); err != nil {
			return nil, err
		}
		if c.Filter, err = d.subst(a.Filter, dc); err != nil {
			return nil, err
		}
		if c.OrderBy, err = d.substKeys(a.OrderBy, dc); err != nil {
			return nil, err
		}
		out[i] = &c
	}
	return out, nil
}

// join records the dependent left join of the outer rows to r, whose
// columns keys carry the outer values.
func (d *dependent) join(r Node, keys []Column, ec *exprCtx) error {
	on, delim, err := d.joinOn(keys)
	if err != nil {
		return err
	}
	*ec.marks = append(*ec.marks, &Join{Kind: exec.JoinLeft, Right: r, On: on, Delim: delim})
	return nil
}

// joinOn is the condition and the Delim of the dependent join of the
// outer rows to a node whose columns keys carry the outer values.
func (d *dependent) joinOn(keys []Column) (Expr, *Delim, error) {
	on, err := d.notDistinct(d.outer, keys)
	if err != nil {
		return nil, nil, err
	}
	return andConj(on), &Delim{N: len(on), Scans: d.scans}, nil
}

// groupScalarAgg decorrelates agg, an aggregate without GROUP BY: its
// input over D, grouped by the outer values (keys). An outer value with
// no rows has no group, so subst maps each count's column to the count
// coalesced to 0, for the expressions read above the join.
func (d *dependent) groupScalarAgg(agg *Aggregate) (g Node, keys []Column, subst map[ColumnID]Expr, err error) {
	q, dc, err := d.push(agg.Input)
	if err != nil {
		return nil, nil, nil, err
	}
	aggs, err := d.substAggs(agg.Aggs, dc)
	if err != nil {
		return nil, nil, nil, err
	}
	g, keys = d.groupByOuter(q, dc, aggs)
	subst = map[ColumnID]Expr{}
	zero, _ := exec.NewLiteral(int64(0))
	for _, a := range aggs {
		if a.Name == "count" {
			x, err := d.b.coalesce(colRef(a.Col), constLit(zero))
			if err != nil {
				return nil, nil, nil, err
			}
			subst[a.Col.ID] = x
		}
	}
	return g, keys, subst, nil
}

// groupByOuter groups q (over D, dc carrying the outer values) by the
// outer values, computing aggs.
func (d *dependent) groupByOuter(q Node, dc []Column, aggs []*AggCall) (*Aggregate, []Column) {
	g := &Aggregate{Input: q, GroupBy: colRefs(dc), Aggs: aggs}
	for _, c := range dc {
		g.Groups = append(g.Groups, d.b.newCol(c.Name, "", c.Type, true))
	}
	return g, g.Groups
}

// dependentScalar decorrelates a scalar subquery by a dependent join: an
// aggregate without GROUP BY (whose count over no rows is 0 where the
// outer value has no group), or a query of at most one row per outer row.
func (b *binder) dependentScalar(sub Node, ec *exprCtx, sc *scope) (Expr, bool, error) {
	d, ok := b.newDependent(sub, sc)
	if !ok {
		return nil, false, nil
	}
	if len(sub.Columns()) != 1 {
		return nil, false, nil
	}
	if proj, ok := sub.(*Project); ok && isScalarAgg(proj.Input) {
		g, keys, subst, err := d.groupScalarAgg(proj.Input.(*Aggregate))
		if err != nil {
			return nil, false, err
		}
		if err := d.join(g, keys, ec); err != nil {
			return nil, false, err
		}
		// an outer value without a group: the aggregates over no rows
		v, ok := substitute(proj.Exprs[0], subst)
		if !ok {
			return nil, false, nil
		}
		return v, true, nil
	}
	// at most one row per outer row: its value, NULL without one
	q, dc, err := d.push(sub)
	if err != nil {
		return nil, false, err
	}
	v := colRef(sub.Columns()[0])
	count := &AggCall{Name: "count", Col: b.newCol("count", "", tInt64, false)}
	value := &AggCall{Name: "any_value", Args: []Expr{v}, Col: b.newCol("subquery", "", v.Type(), true)}
	g, keys := d.groupByOuter(q, dc, []*AggCall{count, value})
	if err := d.join(g, keys, ec); err != nil {
		return nil, false, err
	}
	x, err := b.newFunc("single_row", []Expr{colRef(count.Col), colRef(value.Col)},
		func(a []exec.Expr) (exec.Expr, error) { return exec.NewSingleRow(a[0], a[1]) })
	if err != nil {
		return nil, false, err
	}
	return x, true, nil
}

// dependentExists decorrelates [NOT] EXISTS (sub) by a dependent join:
// the outer values for which sub has a row.
func (b *binder) dependentExists(sub Node, ec *exprCtx, sc *scope) (Expr, bool, error) {
	d, ok := b.newDependent(sub, sc)
	if !ok {
		return nil, false, nil
	}
	q, dc, err := d.push(stripProject(sub))
	if err != nil {
		return nil, false, err
	}
	distinct := &Distinct{Input: &Project{Input: q, Exprs: colRefs(dc), Cols: dc}}
	mark := b.newCol("exists", "", tBool, true)
	t, _ := exec.NewLiteral(true)
	r := &Project{Input: distinct, Exprs: append(colRefs(dc), constLit(t)), Cols: append(append([]Column(nil), dc...), mark)}
	if err := d.join(r, dc, ec); err != nil {
		return nil, false, err
	}
	f, _ := exec.NewLiteral(false)
	x, err := b.coalesce(colRef(mark), constLit(f))
	if err != nil {
		return nil, false, err
	}
	return x, true, nil
}

// pushLimit pushes D through ORDER BY … LIMIT … OFFSET: the rows are
// numbered per outer value in the sort's order (row_number() OVER
// (PARTITION BY d ORDER BY …)) and those in (offset, offset+limit] kept.
// The sort is Limit's input, or under the select list over it.
func (d *dependent) pushLimit(x *Limit) (Node, []Column, error) {
	var top *Project // a select list over the sort
	below := x.Input
	if p, ok := below.(*Project); ok {
		if _, sorted := p.Input.(*Sort); sorted {
			top, below = p, p.Input
		}
	}
	var keys []SortKey
	if s, ok := below.(*Sort); ok {
		keys, below = s.Keys, s.Input
	}
	in, dc, err := d.push(below)
	if err != nil {
		return nil, nil, err
	}
	if keys, err = d.substKeys(keys, dc); err != nil {
		return nil, nil, err
	}
	rn := d.b.newCol("row_number", "", tInt64, false)
	ref := colRef(rn)
	lo, _ := exec.NewLiteral(x.Offset)
	pred, err := d.b.call(parserPos, ">", ref, constLit(lo))
	if err != nil {
		return nil, nil, err
	}
	if x.Limit >= 0 {
		hi, _ := exec.NewLiteral(x.Offset + x.Limit)
		le, err := d.b.call(parserPos, "<=", ref, constLit(hi))
		if err != nil {
			return nil, nil, err
		}
		pred = andConj([]Expr{pred, le})
	}
	var n Node = &Filter{Input: &Window{Input: in, Funcs: []*WindowCall{{Name: "row_number", PartitionBy: colRefs(dc), OrderBy: keys, Col: rn}}}, Pred: pred}
	if top != nil {
		exprs, err := d.substAll(top.Exprs, dc)
		if err != nil {
			return nil, nil, err
		}
		n = &Project{Input: n, Exprs: append(exprs, colRefs(dc)...), Cols: append(append([]Column(nil), top.Cols...), dc...)}
	}
	return n, dc, nil
}

func isScalarAgg(n Node) bool {
	a, ok := n.(*Aggregate)
	return ok && len(a.GroupBy) == 0
}
