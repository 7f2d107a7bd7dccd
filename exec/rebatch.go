package exec

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Rebatch coalesces small batches (a selective Filter leaves many) into
// batches of at least MinRows rows, so that the operators above pay their
// per-batch costs on full batches. Large batches pass through untouched;
// rows keep their order.
type Rebatch struct {
	child   Operator
	minRows int64
	mem     memory.Allocator
	pending []arrow.RecordBatch
	rows    int64
	eof     bool
	metrics Metrics
}

var _ Operator = (*Rebatch)(nil)

// NewRebatch coalesces child's batches to at least minRows rows (the last
// batch may be smaller). minRows <= 0 means DefaultBatchRows.
func NewRebatch(child Operator, minRows int, mem memory.Allocator) (*Rebatch, error) {
	if child == nil {
		return nil, fmt.Errorf("exec: rebatch: nil child (planner bug)")
	}
	if minRows <= 0 {
		minRows = DefaultBatchRows
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &Rebatch{child: child, minRows: int64(minRows), mem: mem}, nil
}

func (r *Rebatch) Schema() *arrow.Schema { return r.child.Schema() }

func (r *Rebatch) Open(ctx context.Context) error {
	start := time.Now()
	defer r.metrics.Add(nil, start)
	r.eof = false
	return r.child.Open(ctx)
}

func (r *Rebatch) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	for !r.eof && r.rows < r.minRows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := r.child.Next(ctx)
		if err == io.EOF {
			r.eof = true
			break
		}
		if err != nil {
			return nil, err
		}
		if len(r.pending) == 0 && b.NumRows() >= r.minRows {
			r.metrics.Add(b, start)
			return b, nil
		}
		r.pending = append(r.pending, b)
		r.rows += b.NumRows()
	}
	if len(r.pending) == 0 {
		r.metrics.Add(nil, start)
		return nil, io.EOF
	}
	out, err := r.flush()
	if err != nil {
		return nil, err
	}
	r.metrics.Add(out, start)
	return out, nil
}

// flush concatenates the pending batches into one.
func (r *Rebatch) flush() (arrow.RecordBatch, error) {
	defer r.releasePending()
	if len(r.pending) == 1 {
		b := r.pending[0]
		b.Retain()
		return b, nil
	}
	schema := r.child.Schema()
	cols := make([]arrow.Array, schema.NumFields())
	parts := make([]arrow.Array, len(r.pending))
	for c := range cols {
		for i, b := range r.pending {
			parts[i] = b.Column(c)
		}
		a, err := array.Concatenate(parts, r.mem)
		if err != nil {
			releaseArrays(cols)
			return nil, fmt.Errorf("exec: rebatch: %w", err)
		}
		cols[c] = a
	}
	out := array.NewRecordBatch(schema, cols, r.rows)
	releaseArrays(cols)
	return out, nil
}

func (r *Rebatch) releasePending() {
	for _, b := range r.pending {
		b.Release()
	}
	r.pending = r.pending[:0]
	r.rows = 0
}

func (r *Rebatch) Close() error {
	r.releasePending()
	return r.child.Close()
}

func (r *Rebatch) Children() []Operator { return []Operator{r.child} }

func (r *Rebatch) String() string { return fmt.Sprintf("Rebatch min_rows=%d", r.minRows) }

func (r *Rebatch) Metrics() *Metrics { return &r.metrics }
