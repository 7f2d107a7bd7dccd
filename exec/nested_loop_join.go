package exec

import "fmt"

// NestedLoopJoin joins every left row with every right row for which the
// predicate is TRUE: CROSS JOIN (kind inner, nil predicate) and joins whose
// condition has no equality to hash on. It materializes the build side
// (the right unless HashOptions.BuildLeft, so the planner puts the smaller
// side there), reserved in the Budget, and streams the other side.
//
// Kinds: inner, left, right, full, semi and anti, with the output schemas
// and outer-join semantics of HashJoin; a nil predicate matches every pair.
type NestedLoopJoin struct {
	joinCore
}

var _ Operator = (*NestedLoopJoin)(nil)

// NewNestedLoopJoin returns a nested loop join of left and right.
func NewNestedLoopJoin(kind JoinKind, left, right Operator, predicate Expr, opts HashOptions) (*NestedLoopJoin, error) {
	if kind == JoinMark || kind == JoinNullAwareAnti {
		return nil, fmt.Errorf("nested loop join: %s joins need equality keys; use a hash join (planner bug)", kind)
	}
	j := &NestedLoopJoin{}
	if err := j.joinCore.init("nested loop join", kind, left, right, predicate, opts); err != nil {
		return nil, err
	}
	return j, nil
}

func (j *NestedLoopJoin) String() string {
	var s string
	if j.kind == JoinInner && j.residual == nil {
		s = "NestedLoopJoin cross"
	} else {
		s = "NestedLoopJoin " + j.kind.String()
		if j.residual != nil {
			s += " on " + j.residual.String()
		}
	}
	if j.opts.BuildLeft {
		s += " build left"
	}
	return s
}
