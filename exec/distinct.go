package exec

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/compute"
)

// Distinct drops duplicate rows, comparing whole rows with NULL equal to
// NULL (SELECT DISTINCT). It streams: each batch yields the rows not seen
// before, in input order. The seen keys are reserved in the Budget.
type Distinct struct {
	input   Operator
	opts    HashOptions
	metrics Metrics
	enc     *KeyEncoder
	table   *HashTable
	res     htReservation
	cctx    context.Context
	keys    RowKeys
	ids     []int32
	first   []int32
}

var _ Operator = (*Distinct)(nil)

// NewDistinct returns a Distinct over input.
func NewDistinct(input Operator, opts HashOptions) (*Distinct, error) {
	if input == nil {
		return nil, fmt.Errorf("distinct: missing input (planner bug)")
	}
	enc, err := htRowEncoder(input.Schema())
	if err != nil {
		return nil, fmt.Errorf("distinct: %w", err)
	}
	return &Distinct{input: input, opts: opts.withDefaults(), enc: enc,
		res: htReservation{budget: opts.Budget, what: "distinct (rows seen)"}}, nil
}

// htRowEncoder encodes whole rows of schema.
func htRowEncoder(schema *arrow.Schema) (*KeyEncoder, error) {
	ts := make([]arrow.DataType, schema.NumFields())
	for i, f := range schema.Fields() {
		ts[i] = f.Type
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("no columns to compare (planner bug)")
	}
	return NewKeyEncoder(ts)
}

func (d *Distinct) Schema() *arrow.Schema { return d.input.Schema() }
func (d *Distinct) Children() []Operator  { return []Operator{d.input} }
func (d *Distinct) Metrics() *Metrics     { return &d.metrics }
func (d *Distinct) String() string        { return "Distinct" }

func (d *Distinct) Open(ctx context.Context) error {
	start := time.Now()
	defer func() { d.metrics.Elapsed.Add(int64(time.Since(start))) }()
	d.cctx = compute.WithAllocator(ctx, d.opts.Mem)
	d.table = NewHashTable(d.enc.Width(), 0)
	return d.input.Open(ctx)
}

func (d *Distinct) Close() error {
	d.table = nil
	d.res.release()
	return d.input.Close()
}

func (d *Distinct) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := d.input.Next(ctx)
		if err == io.EOF {
			d.metrics.Add(nil, start)
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		out, err := d.filter(b)
		b.Release()
		if err != nil {
			return nil, err
		}
		if out != nil {
			d.metrics.Add(out, start)
			return out, nil
		}
	}
}

// filter returns the rows of b whose key is new, or nil if none is.
func (d *Distinct) filter(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(b.NumRows())
	if err := d.enc.Encode(b.Columns(), &d.keys); err != nil {
		return nil, err
	}
	d.ids = htGrow(d.ids, n)
	before := int32(d.table.Len())
	added := d.table.FindOrInsertRows(&d.keys, d.ids, false /* skipNull */)
	if err := d.res.setTo(d.table.Bytes()); err != nil {
		return nil, err
	}
	if added == 0 {
		return nil, nil
	}
	if added == n {
		b.Retain()
		return b, nil
	}
	d.first = htNewRows(d.first[:0], d.ids[:n], before)
	cols, err := htTakeColumns(d.cctx, b.Columns(), d.first)
	if err != nil {
		return nil, err
	}
	return htNewBatch(d.input.Schema(), cols, len(d.first)), nil
}
