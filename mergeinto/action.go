package mergeinto

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/exec"
)

// Action names as merge_action() returns them, as in Postgres.
const (
	ActionNameInsert = "INSERT"
	ActionNameUpdate = "UPDATE"
	ActionNameDelete = "DELETE"
)

// MergeAction is merge_action() in RETURNING: the action applied to the
// row, "INSERT", "UPDATE" or "DELETE". It reads the extra last column that
// Execute appends to the joined row when it evaluates RETURNING, so it is
// valid in Spec.Returning only.
type MergeAction struct{}

var _ exec.Expr = MergeAction{}

func (MergeAction) DataType() arrow.DataType { return arrow.BinaryTypes.String }

func (MergeAction) Eval(_ *exec.EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	n := int(batch.NumCols())
	if n == 0 || batch.Schema().Field(n-1).Name != "merge_action" || batch.Column(n-1).DataType().ID() != arrow.STRING {
		return nil, fmt.Errorf("merge: merge_action() is only valid in MERGE ... RETURNING (binder bug)")
	}
	c := batch.Column(n - 1)
	c.Retain()
	return c, nil
}

func (MergeAction) String() string { return "merge_action()" }
