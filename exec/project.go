package exec

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Project computes one output column per expression.
type Project struct {
	child   Operator
	exprs   []Expr
	schema  *arrow.Schema
	mem     memory.Allocator
	now     time.Time
	ec      *EvalContext
	metrics Metrics
}

var _ Operator = (*Project)(nil)

// NewProject evaluates exprs over every batch of child; names are the
// output column names, one per expression. mem may be nil.
func NewProject(child Operator, exprs []Expr, names []string, mem memory.Allocator) (*Project, error) {
	if child == nil {
		return nil, fmt.Errorf("exec: project: nil child (planner bug)")
	}
	if len(exprs) != len(names) {
		return nil, fmt.Errorf("exec: project: %d expressions but %d names (planner bug)", len(exprs), len(names))
	}
	fields := make([]arrow.Field, len(exprs))
	for i, e := range exprs {
		if e == nil {
			return nil, fmt.Errorf("exec: project: expression %d is nil (planner bug)", i)
		}
		fields[i] = arrow.Field{Name: names[i], Type: e.DataType(), Nullable: true}
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &Project{child: child, exprs: exprs, schema: arrow.NewSchema(fields, nil), mem: mem}, nil
}

// Exprs returns the projected expressions.
func (p *Project) Exprs() []Expr { return p.exprs }

// SetNow fixes the statement time expressions see.
func (p *Project) SetNow(now time.Time) { p.now = now }

func (p *Project) Schema() *arrow.Schema { return p.schema }

func (p *Project) Open(ctx context.Context) error {
	start := time.Now()
	defer p.metrics.Add(nil, start)
	p.ec = newOpEvalContext(ctx, p.mem, p.now)
	return p.child.Open(ctx)
}

func (p *Project) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := p.child.Next(ctx)
	if err != nil {
		p.metrics.Add(nil, start)
		return nil, err
	}
	defer b.Release()
	ec := p.ec
	if ec == nil {
		ec = newOpEvalContext(ctx, p.mem, p.now)
	}
	cols := make([]arrow.Array, len(p.exprs))
	for i, e := range p.exprs {
		c, err := e.Eval(ec, b)
		if err == nil && int64(c.Len()) != b.NumRows() {
			c.Release()
			err = fmt.Errorf("exec: project: %s returned %d rows for a batch of %d (planner bug)", e, c.Len(), b.NumRows())
		}
		if err != nil {
			releaseArrays(cols)
			return nil, err
		}
		cols[i] = c
	}
	out := array.NewRecordBatch(p.schema, cols, b.NumRows())
	releaseArrays(cols)
	p.metrics.Add(out, start)
	return out, nil
}

// releaseArrays releases the non-nil arrays of cols.
func releaseArrays(cols []arrow.Array) {
	for _, c := range cols {
		if c != nil {
			c.Release()
		}
	}
}

func (p *Project) Close() error { return p.child.Close() }

func (p *Project) Children() []Operator { return []Operator{p.child} }

func (p *Project) String() string {
	parts := make([]string, len(p.exprs))
	for i, e := range p.exprs {
		s := e.String()
		if n := p.schema.Field(i).Name; n != "" && n != s {
			s += " AS " + n
		}
		parts[i] = s
	}
	return "Project [" + strings.Join(parts, ", ") + "]"
}

func (p *Project) Metrics() *Metrics { return &p.metrics }
