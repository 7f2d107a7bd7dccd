package plan

import (
	"github.com/skadedb/skade/exec"
)

// Apply decorrelates a scalar subquery whose correlation is any
// predicate, not only the equalities the grouped rewrites need: the
// dependent join of Neumann and Kemper, in its outer-join form. The outer
// rows are numbered, left-joined to the subquery's rows on the correlated
// conjuncts (hash keys where some are equalities, a nested loop join
// otherwise), and grouped back by their number, each group computing the
// subquery's aggregates over its matches. An outer row without matches
// forms its own group, whose aggregates see no input: the count is 0 and
// the others NULL, exactly the subquery's answer over no rows.
//
// INVARIANT: the regrouped node outputs every outer column under its own
// ID (any_value over a group of one outer row), so expressions bound
// against the outer scope keep working above it.
type Apply struct {
	Num   Column      // the outer rows' numbers
	Aggs  []*AggCall  // the subquery's aggregates, over matched rows only
	Limit *applyLimit // the subquery's LIMIT, or nil
}

// applyJoin records a pending Apply of the subquery rows in, matched to
// the outer row by pulled, computing aggs (their FILTERs restricted to
// matched rows).
func (b *binder) applyJoin(in Node, pulled []Expr, aggs []*AggCall, ec *exprCtx) {
	matched := b.newCol("matched", "", tBool, false)
	right := &Project{Input: in}
	for _, c := range in.Columns() {
		right.Exprs = append(right.Exprs, &ColRef{ID: c.ID, Typ: c.Type, Name: c.Name})
		right.Cols = append(right.Cols, c)
	}
	t, _ := exec.NewLiteral(true)
	right.Exprs = append(right.Exprs, constLit(t))
	right.Cols = append(right.Cols, matched)
	mref := &ColRef{ID: matched.ID, Typ: tBool, Name: "matched"}
	out := make([]*AggCall, len(aggs))
	for i, a := range aggs {
		c := *a
		if c.Filter == nil {
			c.Filter = mref
		} else {
			c.Filter = andConj([]Expr{mref, c.Filter})
		}
		out[i] = &c
	}
	num := b.newCol("outer_row", "", tInt64, false)
	*ec.marks = append(*ec.marks, &Join{Kind: exec.JoinLeft, Right: right, On: andAll(b, pulled),
		Apply: &Apply{Num: num, Aggs: out}})
}

// wrap joins input to j's subquery per outer row and regroups.
func (a *Apply) wrap(input Node, j *Join) Node {
	outer := input.Columns()
	j.Left = &Window{Input: input, Funcs: []*WindowCall{{Name: "row_number", Col: a.Num}}}
	aggs := make([]*AggCall, 0, len(outer)+len(a.Aggs))
	for _, c := range outer {
		aggs = append(aggs, &AggCall{Name: "any_value", Args: []Expr{&ColRef{ID: c.ID, Typ: c.Type, Name: c.Name}}, Col: c})
	}
	aggs = append(aggs, a.Aggs...)
	var joined Node = j
	if l := a.Limit; l != nil {
		part := &ColRef{ID: a.Num.ID, Typ: tInt64, Name: a.Num.Name}
		joined = &Filter{Input: &Window{Input: j, Funcs: []*WindowCall{{Name: "row_number", PartitionBy: []Expr{part}, OrderBy: l.Keys, Col: l.Num}}}, Pred: l.Pred}
	}
	return &Aggregate{Input: joined, GroupBy: []Expr{&ColRef{ID: a.Num.ID, Typ: tInt64, Name: a.Num.Name}},
		Groups: []Column{a.Num}, Aggs: aggs}
}

// applyAggregate decorrelates (SELECT f(aggs) FROM in WHERE pulled) by
// Apply: the select expression reads the aggregates (and maybe outer
// columns, which the regrouped rows keep).
func (b *binder) applyAggregate(proj *Project, agg *Aggregate, in Node, pulled []Expr, ec *exprCtx) (Expr, bool, error) {
	b.applyJoin(in, pulled, agg.Aggs, ec)
	return proj.Exprs[0], true, nil
}

// applyRows decorrelates (SELECT v FROM in WHERE pulled) by Apply: v of
// the one matching row, NULL without one, and exec.SingleRow's error for
// an outer row matched more than once.
func (b *binder) applyRows(v Expr, in Node, pulled []Expr, ec *exprCtx) (Expr, bool, error) {
	count := &AggCall{Name: "count", Col: b.newCol("count", "", tInt64, false)}
	value := &AggCall{Name: "any_value", Args: []Expr{v}, Col: b.newCol("subquery", "", v.Type(), true)}
	b.applyJoin(in, pulled, []*AggCall{count, value}, ec)
	x, err := b.newFunc("single_row", []Expr{
		&ColRef{ID: count.Col.ID, Typ: tInt64, Name: "count"},
		&ColRef{ID: value.Col.ID, Typ: v.Type(), Name: "subquery"},
	}, func(a []exec.Expr) (exec.Expr, error) { return exec.NewSingleRow(a[0], a[1]) })
	if err != nil {
		return nil, false, err
	}
	return x, true, nil
}

// applyLimit is the ORDER BY … LIMIT … OFFSET … of a subquery under
// Apply: its rows are numbered per outer row after the join, and only
// the numbers in (Offset, Offset+Limit] are kept (Limit < 0: no limit).
type applyLimit struct {
	Keys []SortKey
	Num  Column
	Pred Expr // over Num and the matched marker
}

// applyLimited decorrelates (SELECT v FROM in WHERE pulled ORDER BY …
// LIMIT n OFFSET m) by Apply, as applyRows does over the rows kept.
func (b *binder) applyLimited(v Expr, in Node, pulled []Expr, keys []SortKey, offset, limit int64, ec *exprCtx) (Expr, bool, error) {
	x, ok, err := b.applyRows(v, in, pulled, ec)
	if err != nil || !ok {
		return x, ok, err
	}
	j := (*ec.marks)[len(*ec.marks)-1]
	right := j.Right.(*Project)
	l := &applyLimit{Keys: keys, Num: b.newCol("row_number", "", tInt64, false)}
	// keep the numbers in the window, and an outer row without matches
	// (its one NULL-extended row)
	ref := &ColRef{ID: l.Num.ID, Typ: tInt64, Name: "row_number"}
	lo, _ := exec.NewLiteral(offset)
	pred, err := b.call(parserPos, ">", ref, constLit(lo))
	if err != nil {
		return nil, false, err
	}
	if limit >= 0 {
		hi, _ := exec.NewLiteral(offset + limit)
		le, err := b.call(parserPos, "<=", ref, constLit(hi))
		if err != nil {
			return nil, false, err
		}
		pred = andConj([]Expr{pred, le})
	}
	matched := right.Cols[len(right.Cols)-1]
	unmatched, err := b.call(parserPos, "is_null", &ColRef{ID: matched.ID, Typ: tBool, Name: "matched"})
	if err != nil {
		return nil, false, err
	}
	if l.Pred, err = b.call(parserPos, "or", pred, unmatched); err != nil {
		return nil, false, err
	}
	j.Apply.Limit = l
	return x, true, nil
}
