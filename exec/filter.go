package exec

import (
	"context"
	"fmt"
	"math/bits"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Filter keeps the rows for which a boolean predicate is true. A NULL
// predicate drops the row, as WHERE does in SQL. Batches left empty are
// not passed on.
type Filter struct {
	child   Operator
	pred    Expr
	mem     memory.Allocator
	now     time.Time
	ec      *EvalContext
	metrics Metrics
}

var _ Operator = (*Filter)(nil)

// NewFilter filters child by pred, which must be BOOLEAN (or an untyped
// NULL, which keeps nothing). mem may be nil for the default allocator.
func NewFilter(child Operator, pred Expr, mem memory.Allocator) (*Filter, error) {
	if child == nil || pred == nil {
		return nil, fmt.Errorf("exec: filter: nil child or predicate (planner bug)")
	}
	switch pred.DataType().ID() {
	case arrow.BOOL, arrow.NULL:
	default:
		return nil, fmt.Errorf("exec: filter: predicate %s is %s, not boolean (planner bug)", pred, pred.DataType())
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &Filter{child: child, pred: pred, mem: mem}, nil
}

func (f *Filter) Schema() *arrow.Schema { return f.child.Schema() }

// Predicate returns the filter condition.
func (f *Filter) Predicate() Expr { return f.pred }

func (f *Filter) Open(ctx context.Context) error {
	start := time.Now()
	defer f.metrics.Add(nil, start)
	f.ec = newOpEvalContext(ctx, f.mem, f.now)
	return f.child.Open(ctx)
}

// SetNow fixes the statement time the predicate sees (now(),
// current_date); without it Open uses the time of Open.
func (f *Filter) SetNow(now time.Time) { f.now = now }

func (f *Filter) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := f.child.Next(ctx)
		if err != nil {
			f.metrics.Add(nil, start)
			return nil, err
		}
		out, err := f.apply(ctx, b)
		b.Release()
		if err != nil {
			return nil, err
		}
		if out != nil {
			f.metrics.Add(out, start)
			return out, nil
		}
	}
}

// apply returns the rows of b that pass, or nil when none do.
func (f *Filter) apply(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if f.pred.DataType().ID() == arrow.NULL {
		return nil, nil
	}
	ec := f.ec
	if ec == nil {
		ec = newOpEvalContext(ctx, f.mem, f.now)
	}
	m, err := f.pred.Eval(ec, b)
	if err != nil {
		return nil, err
	}
	defer m.Release()
	mask, ok := m.(*array.Boolean)
	if !ok || int64(m.Len()) != b.NumRows() {
		return nil, fmt.Errorf("exec: filter: predicate %s returned %s of %d rows for a batch of %d (planner bug)", f.pred, m.DataType(), m.Len(), b.NumRows())
	}
	n := countSelected(mask)
	switch {
	case n == 0:
		return nil, nil
	case int64(n) == b.NumRows():
		b.Retain()
		return b, nil
	}
	// Gather the kept rows with skGather rather than compute's filter: it
	// covers every canonical type (arrow-go's take rejects 16-byte
	// intervals and leaks on that error path).
	return skGatherBatch(f.mem, b.Schema(), []arrow.RecordBatch{b}, selectedRefs(mask, n))
}

// countSelected counts the rows that are true and not NULL.
func countSelected(mask *array.Boolean) int {
	if mask.NullN() == 0 {
		return bitutil.CountSetBits(mask.Data().Buffers()[1].Bytes(), mask.Data().Offset(), mask.Len())
	}
	n := 0
	for i := 0; i < mask.Len(); i++ {
		if mask.IsValid(i) && mask.Value(i) {
			n++
		}
	}
	return n
}

func (f *Filter) Close() error { return f.child.Close() }

func (f *Filter) Children() []Operator { return []Operator{f.child} }

func (f *Filter) String() string { return "Filter " + f.pred.String() }

func (f *Filter) Metrics() *Metrics { return &f.metrics }

// newOpEvalContext is the EvalContext an operator's expressions see.
func newOpEvalContext(ctx context.Context, mem memory.Allocator, now time.Time) *EvalContext {
	if now.IsZero() {
		now = time.Now()
	}
	return &EvalContext{Ctx: ctx, Mem: mem, Now: now}
}

// selectedRefs lists the rows where mask is true (and not NULL), a byte
// of the bitmap at a time, so that a selective filter skips 8 rows per
// zero byte.
func selectedRefs(mask *array.Boolean, n int) []skRef {
	refs := make([]skRef, 0, n)
	d := mask.Data()
	off, length := d.Offset(), mask.Len()
	data := d.Buffers()[1].Bytes()
	var valid []byte
	if mask.NullN() > 0 {
		valid = d.Buffers()[0].Bytes()
	}
	for i := 0; i < length; {
		if (off+i)%8 == 0 && i+8 <= length {
			by := data[(off+i)/8]
			if valid != nil {
				by &= valid[(off+i)/8]
			}
			for by != 0 {
				j := bits.TrailingZeros8(by)
				refs = append(refs, skRef{0, int32(i + j)})
				by &= by - 1
			}
			i += 8
			continue
		}
		if bitutil.BitIsSet(data, off+i) && (valid == nil || bitutil.BitIsSet(valid, off+i)) {
			refs = append(refs, skRef{0, int32(i)})
		}
		i++
	}
	return refs
}
