package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// UnionAll concatenates its inputs' rows, in input order (UNION ALL).
// Inputs must have the same column types; the output takes the first
// input's names, and a column is nullable if it is in any input.
type UnionAll struct {
	inputs  []Operator
	schema  *arrow.Schema
	cur     int
	metrics Metrics
}

var _ Operator = (*UnionAll)(nil)

// NewUnionAll returns the concatenation of inputs (at least one).
func NewUnionAll(inputs ...Operator) (*UnionAll, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("union all: no inputs (planner bug)")
	}
	schema := inputs[0].Schema()
	for i, in := range inputs[1:] {
		s, err := htSetSchema("union all", schema, in.Schema(), i+2)
		if err != nil {
			return nil, err
		}
		schema = s
	}
	return &UnionAll{inputs: inputs, schema: schema}, nil
}

// htSetSchema checks that input number n's schema matches acc column by
// column and returns acc with nullability widened.
func htSetSchema(op string, acc, s *arrow.Schema, n int) (*arrow.Schema, error) {
	if acc.NumFields() != s.NumFields() {
		return nil, fmt.Errorf("each %s query must have the same number of columns: input %d has %d, the first has %d (planner bug)",
			op, n, s.NumFields(), acc.NumFields())
	}
	fs := make([]arrow.Field, acc.NumFields())
	for i, f := range acc.Fields() {
		g := s.Field(i)
		if !arrow.TypeEqual(f.Type, g.Type) {
			return nil, fmt.Errorf("%s types %s and %s cannot be matched in column %d (%s); cast one side first (planner bug)",
				op, htSQLType(f.Type), htSQLType(g.Type), i+1, f.Name)
		}
		f.Nullable = f.Nullable || g.Nullable
		fs[i] = f
	}
	return arrow.NewSchema(fs, nil), nil
}

// htRelabel gives b the schema s (same types), owning b.
func htRelabel(b arrow.RecordBatch, s *arrow.Schema) arrow.RecordBatch {
	if b.Schema().Equal(s) {
		return b
	}
	out := array.NewRecordBatch(s, b.Columns(), b.NumRows())
	b.Release()
	return out
}

func (u *UnionAll) Schema() *arrow.Schema { return u.schema }
func (u *UnionAll) Children() []Operator  { return u.inputs }
func (u *UnionAll) Metrics() *Metrics     { return &u.metrics }
func (u *UnionAll) String() string        { return "UnionAll" }

func (u *UnionAll) Open(ctx context.Context) error {
	start := time.Now()
	defer func() { u.metrics.Elapsed.Add(int64(time.Since(start))) }()
	u.cur = 0
	for _, in := range u.inputs {
		if err := in.Open(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (u *UnionAll) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	for u.cur < len(u.inputs) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := u.inputs[u.cur].Next(ctx)
		if err == io.EOF {
			u.cur++
			continue
		}
		if err != nil {
			return nil, err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		b = htRelabel(b, u.schema)
		u.metrics.Add(b, start)
		return b, nil
	}
	u.metrics.Add(nil, start)
	return nil, io.EOF
}

func (u *UnionAll) Close() error {
	var errs []error
	for _, in := range u.inputs {
		errs = append(errs, in.Close())
	}
	return errors.Join(errs...)
}
