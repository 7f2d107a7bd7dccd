package lake

import (
	"context"
	"errors"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/exec"
)

// Result is a statement's result. A query's result streams: read it with
// Reader or Collect, once. Close releases it (Collect and a reader read
// to the end close it too).
type Result struct {
	schema  *arrow.Schema
	ctx     context.Context
	op      exec.Operator // nil for a materialized result
	batches []arrow.RecordBatch
	metrics Metrics
	closed  bool
	// onClose runs once when the result is closed or read to its end.
	onClose func()
	notices []string
}

// Notices are the messages the statement raised that are not errors, in
// PostgreSQL's words: DROP TABLE IF EXISTS on a missing table gives
// `table "t" does not exist, skipping`. The shell prints them as NOTICE
// lines; the PostgreSQL server sends them as NoticeResponse messages.
func (r *Result) Notices() []string { return r.notices }

// noticeResult is an empty result carrying notices.
func noticeResult(notices []string) *Result {
	r := emptyResult()
	r.notices = notices
	return r
}

// Metrics are a statement's row movement: what DML changed.
type Metrics struct {
	RowsInserted int64
	RowsUpdated  int64
	RowsDeleted  int64
	// SnapshotID is the snapshot the statement committed; 0 when it
	// committed none (a query, a write that changed nothing, or a write
	// inside a transaction).
	SnapshotID int64
	// Staged reports a write inside an open transaction that changed its
	// table: nothing is committed until COMMIT, which may still fail.
	Staged bool
}

// Schema is the result's schema.
func (r *Result) Schema() *arrow.Schema { return r.schema }

// Metrics reports the rows a DML statement inserted, updated and deleted.
func (r *Result) Metrics() Metrics { return r.metrics }

// Close releases what the result holds; it is safe to call twice.
func (r *Result) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	for _, b := range r.batches {
		b.Release()
	}
	r.batches = nil
	defer r.done()
	if r.op != nil {
		return r.op.Close()
	}
	return nil
}

// done runs onClose, once.
func (r *Result) done() {
	if f := r.onClose; f != nil {
		r.onClose = nil
		f()
	}
}

// next returns the next batch renamed to the result's schema.
func (r *Result) next(ctx context.Context) (arrow.RecordBatch, error) {
	if r.closed {
		return nil, io.EOF
	}
	if r.op == nil {
		if len(r.batches) == 0 {
			return nil, io.EOF
		}
		b := r.batches[0]
		r.batches = r.batches[1:]
		return b, nil
	}
	b, err := r.op.Next(ctx)
	if err != nil {
		if err == io.EOF {
			r.done()
			return nil, err
		}
		return nil, statementError(translate(err), "")
	}
	b = exec.NormalizeBatch(b)
	if b.Schema().Equal(r.schema) {
		return b, nil
	}
	out := array.NewRecordBatch(r.schema, b.Columns(), b.NumRows())
	b.Release()
	return out, nil
}

// Collect reads the whole result. The caller releases the batches.
func (r *Result) Collect(ctx context.Context) ([]arrow.RecordBatch, error) {
	defer r.Close()
	var out []arrow.RecordBatch
	for {
		b, err := r.next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			for _, x := range out {
				x.Release()
			}
			return nil, translate(err)
		}
		out = append(out, b)
	}
}

// Reader streams the result. Cancelling the statement's context stops
// it. Releasing the reader closes the result.
func (r *Result) Reader() array.RecordReader {
	rr := &resultReader{res: r}
	rr.refs.Store(1)
	return rr
}

type resultReader struct {
	refs atomic.Int64
	res  *Result
	cur  arrow.RecordBatch
	err  error
}

func (r *resultReader) Retain()               { r.refs.Add(1) }
func (r *resultReader) Schema() *arrow.Schema { return r.res.schema }
func (r *resultReader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.res.Close()
	}
}

func (r *resultReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil {
		return false
	}
	b, err := r.res.next(r.res.ctx)
	if err != nil {
		if !errors.Is(err, io.EOF) {
			r.err = translate(err)
		}
		r.res.Close()
		return false
	}
	r.cur = b
	return true
}

func (r *resultReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *resultReader) Record() arrow.RecordBatch      { return r.cur }
func (r *resultReader) Err() error                     { return r.err }

var _ array.RecordReader = (*resultReader)(nil)
