package exec

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Operator is a pull-based physical operator that yields Arrow batches.
//
// The protocol is Open, then Next until it returns io.EOF, then Close.
// A parent opens and closes its children. Close is idempotent and must be
// safe to call after a failed Open or in the middle of the stream, because
// cancellation and errors stop pipelines early.
type Operator interface {
	// Schema is the schema of every batch Next returns.
	Schema() *arrow.Schema
	// Open prepares the operator and its children for Next.
	Open(ctx context.Context) error
	// Next returns the next non-empty batch, or (nil, io.EOF) at the end.
	// The caller owns the batch and must Release it. Operators check ctx
	// between batches so that cancellation stops a statement promptly.
	Next(ctx context.Context) (arrow.RecordBatch, error)
	// Close releases everything the operator holds.
	Close() error
	// Children are the inputs, in order (left before right for joins).
	Children() []Operator
	// String is a one-line description for EXPLAIN, e.g.
	// "HashJoin inner on [#0 = #2]".
	String() string
	// Metrics are the counters EXPLAIN ANALYZE prints.
	Metrics() *Metrics
}

// EOF is returned by Next at the end of the stream. It is io.EOF, so that
// callers may test it either way.
var EOF = io.EOF

// Metrics are an operator's runtime counters. They are updated with
// atomics because parallel operators update them from several goroutines.
type Metrics struct {
	RowsOut    atomic.Int64
	BatchesOut atomic.Int64
	// Elapsed is the wall time spent inside this operator's Open and Next,
	// children included.
	Elapsed atomic.Int64 // nanoseconds
	// Extra holds operator-specific counters such as "files_skipped",
	// "build_rows" or "spilled_bytes", printed in name order by EXPLAIN.
	extra atomic.Pointer[map[string]int64]
}

// Add records a batch leaving the operator.
func (m *Metrics) Add(b arrow.RecordBatch, since time.Time) {
	if b != nil {
		m.RowsOut.Add(b.NumRows())
		m.BatchesOut.Add(1)
	}
	m.Elapsed.Add(int64(time.Since(since)))
}

// Set stores an operator-specific counter.
func (m *Metrics) Set(name string, v int64) {
	for {
		old := m.extra.Load()
		next := map[string]int64{}
		if old != nil {
			for k, x := range *old {
				next[k] = x
			}
		}
		next[name] = v
		if m.extra.CompareAndSwap(old, &next) {
			return
		}
	}
}

// Inc adds delta to an operator-specific counter.
func (m *Metrics) Inc(name string, delta int64) {
	for {
		old := m.extra.Load()
		next := map[string]int64{}
		if old != nil {
			for k, x := range *old {
				next[k] = x
			}
		}
		next[name] += delta
		if m.extra.CompareAndSwap(old, &next) {
			return
		}
	}
}

// Extra returns a copy of the operator-specific counters.
func (m *Metrics) Extra() map[string]int64 {
	out := map[string]int64{}
	if p := m.extra.Load(); p != nil {
		for k, v := range *p {
			out[k] = v
		}
	}
	return out
}

// Drain runs op to the end and returns every batch it produced. It opens
// and closes op. It is meant for tests and for small inputs such as a
// build side; streaming consumers should call Next themselves.
func Drain(ctx context.Context, op Operator) (out []arrow.RecordBatch, err error) {
	if err := op.Open(ctx); err != nil {
		op.Close()
		return nil, err
	}
	defer func() {
		if cerr := op.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			for _, b := range out {
				b.Release()
			}
			out = nil
		}
	}()
	for {
		b, err := op.Next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, b)
	}
}

// Explain renders an operator tree, one operator per line, indented by
// depth. With analyze set it appends each operator's metrics.
func Explain(op Operator, analyze bool) string {
	var sb strings.Builder
	var walk func(op Operator, depth int)
	walk = func(op Operator, depth int) {
		sb.WriteString(strings.Repeat("  ", depth))
		sb.WriteString(op.String())
		if analyze {
			m := op.Metrics()
			fmt.Fprintf(&sb, " (rows=%d batches=%d time=%s", m.RowsOut.Load(), m.BatchesOut.Load(),
				time.Duration(m.Elapsed.Load()).Round(time.Microsecond))
			extra := m.Extra()
			keys := make([]string, 0, len(extra))
			for k := range extra {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				fmt.Fprintf(&sb, " %s=%d", k, extra[k])
			}
			sb.WriteString(")")
		}
		sb.WriteString("\n")
		for _, c := range op.Children() {
			walk(c, depth+1)
		}
	}
	walk(op, 0)
	return sb.String()
}
