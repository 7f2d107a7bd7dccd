package exec

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Limit passes on at most limit rows after skipping offset rows. Once it
// has passed on limit rows it stops pulling its child, so LIMIT 0 never
// reads the input at all (CREATE TABLE ... AS (SELECT * FROM (q) LIMIT 0)
// relies on this to get q's schema without running q).
type Limit struct {
	child   Operator
	limit   int64 // < 0: no limit
	offset  int64
	skipped int64
	emitted int64
	done    bool
	metrics Metrics
}

var _ Operator = (*Limit)(nil)

// NewLimit returns LIMIT limit OFFSET offset over child. A negative limit
// means no limit (OFFSET alone).
func NewLimit(child Operator, limit, offset int64) (*Limit, error) {
	if child == nil {
		return nil, fmt.Errorf("exec: limit: nil child (planner bug)")
	}
	if offset < 0 {
		return nil, fmt.Errorf("OFFSET must not be negative")
	}
	if limit < -1 {
		limit = -1
	}
	return &Limit{child: child, limit: limit, offset: offset}, nil
}

func (l *Limit) Schema() *arrow.Schema { return l.child.Schema() }

// Bounds returns the limit (-1 for none) and the offset.
func (l *Limit) Bounds() (limit, offset int64) { return l.limit, l.offset }

// Open opens the child even for LIMIT 0: opening is cheap and keeps the
// Open/Close protocol uniform; no batch is pulled.
func (l *Limit) Open(ctx context.Context) error {
	start := time.Now()
	defer l.metrics.Add(nil, start)
	l.skipped, l.emitted, l.done = 0, 0, false
	return l.child.Open(ctx)
}

func (l *Limit) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	for {
		if l.done || (l.limit >= 0 && l.emitted >= l.limit) {
			l.done = true
			return nil, io.EOF
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := l.child.Next(ctx)
		if err == io.EOF {
			l.done = true
		}
		if err != nil {
			l.metrics.Add(nil, start)
			return nil, err
		}
		n := b.NumRows()
		lo := int64(0)
		if l.skipped < l.offset {
			lo = min(l.offset-l.skipped, n)
			l.skipped += lo
		}
		hi := n
		if rem := l.limit - l.emitted; l.limit >= 0 && rem < n-lo { // no lo+rem: rem may be near MaxInt64
			hi = lo + rem
		}
		if lo >= hi {
			b.Release()
			continue
		}
		out := b
		if lo != 0 || hi != n {
			out = b.NewSlice(lo, hi)
			b.Release()
		}
		l.emitted += hi - lo
		l.metrics.Add(out, start)
		return out, nil
	}
}

func (l *Limit) Close() error { return l.child.Close() }

func (l *Limit) Children() []Operator { return []Operator{l.child} }

func (l *Limit) String() string {
	switch {
	case l.limit < 0:
		return fmt.Sprintf("Limit offset=%d", l.offset)
	case l.offset == 0:
		return fmt.Sprintf("Limit %d", l.limit)
	}
	return fmt.Sprintf("Limit %d offset=%d", l.limit, l.offset)
}

func (l *Limit) Metrics() *Metrics { return &l.metrics }
