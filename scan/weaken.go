package scan

import "github.com/apache/iceberg-go"

// Weaken rebuilds filter with each leaf predicate replaced by what leaf
// (for unbound leaves) or bound (for bound ones) returns, nil meaning
// TRUE. NOT is pushed into the leaves first (RewriteNotExpr), so a leaf
// replaced by a weaker expression makes the whole weaker: the result is
// implied by filter, which is what pruning may use in its place. It
// returns nil when nothing of the filter is left (or it cannot be
// rewritten).
func Weaken(filter iceberg.BooleanExpression, leaf func(iceberg.UnboundPredicate) iceberg.BooleanExpression, bound func(iceberg.BoundPredicate) iceberg.BooleanExpression) iceberg.BooleanExpression {
	if filter == nil {
		return nil
	}
	pushed, err := iceberg.RewriteNotExpr(filter)
	if err != nil {
		return nil
	}
	out, err := iceberg.VisitExpr(pushed, weakener{leaf: leaf, bound: bound})
	if err != nil || out.Equals(iceberg.AlwaysTrue{}) {
		return nil
	}
	return out
}

type weakener struct {
	leaf  func(iceberg.UnboundPredicate) iceberg.BooleanExpression
	bound func(iceberg.BoundPredicate) iceberg.BooleanExpression
}

func (weakener) VisitTrue() iceberg.BooleanExpression  { return iceberg.AlwaysTrue{} }
func (weakener) VisitFalse() iceberg.BooleanExpression { return iceberg.AlwaysFalse{} }

// VisitNot cannot weaken its child's negation; RewriteNotExpr leaves none.
func (weakener) VisitNot(iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.AlwaysTrue{}
}

func (weakener) VisitAnd(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewAnd(l, r)
}

func (weakener) VisitOr(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewOr(l, r)
}

func (w weakener) VisitUnbound(p iceberg.UnboundPredicate) iceberg.BooleanExpression {
	if w.leaf == nil {
		return iceberg.AlwaysTrue{}
	}
	return orTrue(w.leaf(p))
}

func (w weakener) VisitBound(p iceberg.BoundPredicate) iceberg.BooleanExpression {
	if w.bound == nil {
		return iceberg.AlwaysTrue{}
	}
	return orTrue(w.bound(p))
}

func orTrue(e iceberg.BooleanExpression) iceberg.BooleanExpression {
	if e == nil {
		return iceberg.AlwaysTrue{}
	}
	return e
}
