package exec

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ErrSubqueryRows is Postgres's error for a scalar subquery that returns
// more than one row for some outer row.
var ErrSubqueryRows = errors.New("more than one row returned by a subquery used as an expression")

// SingleRow is the value of a decorrelated scalar subquery that has no
// aggregate: the planner joins each outer row to its candidates grouped
// by the correlation keys, Count being how many rows the subquery gives
// that row (NULL when none) and Value one of them. It returns Value, or
// fails with ErrSubqueryRows when any row's Count exceeds one.
//
// INVARIANT: the check runs only over the rows the expression is
// evaluated for, so outer rows a WHERE removed never fail the query.
type SingleRow struct {
	Count, Value Expr
}

var _ Expr = (*SingleRow)(nil)

// NewSingleRow checks that count is a BIGINT.
func NewSingleRow(count, value Expr) (*SingleRow, error) {
	if count == nil || value == nil || count.DataType().ID() != arrow.INT64 {
		return nil, fmt.Errorf("exec: single-row check needs a BIGINT count and a value (planner bug)")
	}
	return &SingleRow{Count: count, Value: value}, nil
}

func (s *SingleRow) DataType() arrow.DataType { return s.Value.DataType() }

func (s *SingleRow) String() string {
	return "single_row(" + s.Count.String() + ", " + s.Value.String() + ")"
}

func (s *SingleRow) Eval(ec *EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	c, err := s.Count.Eval(ec, batch)
	if err != nil {
		return nil, err
	}
	n, ok := c.(*array.Int64)
	if !ok {
		c.Release()
		return nil, fmt.Errorf("exec: single-row count is %s (planner bug)", c.DataType())
	}
	for i := 0; i < n.Len(); i++ {
		if n.IsValid(i) && n.Value(i) > 1 {
			c.Release()
			return nil, ErrSubqueryRows
		}
	}
	c.Release()
	return s.Value.Eval(ec, batch)
}
