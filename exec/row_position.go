package exec

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// RowPosition appends to each row of its child a BIGINT column holding
// the row's ordinal in the child's stream, from 0. Over a scan of one data
// file it is each live row's position among the rows the file yields,
// which a row-level DELETE or UPDATE carries through its plan (joins
// reorder rows) to say which rows to delete by position.
type RowPosition struct {
	child   Operator
	schema  *arrow.Schema
	mem     memory.Allocator
	first   int64
	next    int64
	metrics Metrics
}

var _ Operator = (*RowPosition)(nil)

// NewRowPosition appends the column name to child's rows.
func NewRowPosition(child Operator, name string) (*RowPosition, error) {
	return NewRowPositionFrom(child, name, 0)
}

// NewRowPositionFrom is NewRowPosition counting from first: over a scan
// of a data file's row groups from its row first on, file positions.
func NewRowPositionFrom(child Operator, name string, first int64) (*RowPosition, error) {
	if child == nil {
		return nil, fmt.Errorf("exec: row position: nil child (planner bug)")
	}
	fs := append(child.Schema().Fields()[:child.Schema().NumFields():child.Schema().NumFields()],
		arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64})
	return &RowPosition{child: child, schema: arrow.NewSchema(fs, nil), mem: memory.DefaultAllocator, first: first}, nil
}

func (p *RowPosition) Schema() *arrow.Schema { return p.schema }
func (p *RowPosition) Children() []Operator  { return []Operator{p.child} }
func (p *RowPosition) Metrics() *Metrics     { return &p.metrics }
func (p *RowPosition) String() string        { return "RowPosition" }

func (p *RowPosition) Open(ctx context.Context) error {
	p.next = p.first
	return p.child.Open(ctx)
}

func (p *RowPosition) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	b, err := p.child.Next(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Release()
	n := int(b.NumRows())
	bld := array.NewInt64Builder(p.mem)
	defer bld.Release()
	bld.Reserve(n)
	for i := 0; i < n; i++ {
		bld.UnsafeAppend(p.next + int64(i))
	}
	p.next += int64(n)
	pos := bld.NewArray()
	defer pos.Release()
	cols := append(b.Columns()[:b.NumCols():b.NumCols()], pos)
	out := array.NewRecordBatch(p.schema, cols, b.NumRows())
	p.metrics.Add(out, start)
	return out, nil
}

func (p *RowPosition) Close() error { return p.child.Close() }
