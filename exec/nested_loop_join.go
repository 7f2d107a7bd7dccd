package exec

import "fmt"

// NestedLoopJoin joins every left row with every right row for which the
// predicate is TRUE: CROSS JOIN (kind inner, nil predicate) and joins whose
// condition has no equality to hash on. It materializes the build side
// (the right unless HashOptions.BuildLeft, so the planner puts the smaller
// side there), reserved in the Budget, and streams the other side.
//
// Kinds: all of HashJoin's, with its output schemas and semantics, the
// predicate playing the residual's part; a nil predicate matches every
// pair. Mark and null-aware anti joins need a predicate (the IN
// comparison, e.g. x = y, three-valued) and build the right side.
type NestedLoopJoin struct {
	joinCore
}

var _ Operator = (*NestedLoopJoin)(nil)

// NewNestedLoopJoin returns a nested loop join of left and right.
func NewNestedLoopJoin(kind JoinKind, left, right Operator, predicate Expr, opts HashOptions) (*NestedLoopJoin, error) {
	if (kind == JoinMark || kind == JoinNullAwareAnti) && (predicate == nil || opts.BuildLeft) {
		return nil, fmt.Errorf("nested loop join: a %s join needs a predicate and builds the right side (planner bug)", kind)
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
