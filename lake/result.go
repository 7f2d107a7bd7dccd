package lake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"runtime"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/scan"
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
	// leak, for a streaming result, lets a Result collected unclosed be
	// closed and reported (watchLeak).
	leak *leakWatch
}

// leakWatch is what a streaming Result holds that must be let go even
// when the caller forgets Close. It is reachable from the Result and from
// the runtime cleanup, never the other way round.
type leakWatch struct {
	closed atomic.Bool
	op     exec.Operator
	leave  func()
}

// unclosedResults counts Results collected without Close (for tests).
var unclosedResults atomic.Int64

// watchLeak arranges for r, a streaming result, to be closed if it is
// garbage collected before Close or the end of its rows, with a warning:
// until then it holds open files and its share of the memory limit.
func (r *Result) watchLeak() {
	w := &leakWatch{op: r.op, leave: r.onClose}
	r.leak = w
	runtime.AddCleanup(r, func(w *leakWatch) {
		if w.closed.Swap(true) {
			return
		}
		unclosedResults.Add(1)
		slog.Warn("lake: a Result was garbage collected without Close; close every Result (or read it to its end), as an open one holds files and memory")
		_ = w.op.Close()
		if w.leave != nil {
			w.leave()
		}
	}, w)
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
	if r.leak != nil && r.leak.closed.Swap(true) {
		r.onClose = nil // the cleanup ran it
	}
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
		return scan.Detached(b), nil
	}
	b, err := r.op.Next(ctx)
	if err != nil {
		if err == io.EOF {
			r.done()
			return nil, err
		}
		return nil, statementError(translate(err), "")
	}
	// INVARIANT: nothing a caller gets shares memory a scan's buffer pool
	// will reuse (scan.BufferPool).
	b = scan.Detached(exec.NormalizeBatch(b))
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

// Int64s reads the result to its end and returns column col as int64s,
// whatever integer type it has: SMALLINT, INTEGER, BIGINT, and NUMERIC with
// no fractional digits, which is what sum(bigint) returns (PostgreSQL's
// numeric, so that sums cannot overflow). A NULL, a fraction or a value
// beyond int64 is an error naming the row. The result is closed.
func (r *Result) Int64s(ctx context.Context, col int) ([]int64, error) {
	bs, err := r.Collect(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	if col < 0 || col >= r.schema.NumFields() {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("int64s: the result has %d columns, not a column %d", r.schema.NumFields(), col)}
	}
	name := r.schema.Field(col).Name
	var out []int64
	for _, b := range bs {
		a := b.Column(col)
		for i := 0; i < a.Len(); i++ {
			row := len(out) + 1
			if a.IsNull(i) {
				return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("int64s: column %q is NULL in row %d", name, row)}
			}
			switch c := a.(type) {
			case *array.Int8:
				out = append(out, int64(c.Value(i)))
			case *array.Int16:
				out = append(out, int64(c.Value(i)))
			case *array.Int32:
				out = append(out, int64(c.Value(i)))
			case *array.Int64:
				out = append(out, c.Value(i))
			case *array.Decimal128:
				scale := c.DataType().(*arrow.Decimal128Type).Scale
				q, rem := new(big.Int).QuoRem(c.Value(i).BigInt(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(scale, 0))), nil), new(big.Int))
				if scale < 0 || rem.Sign() != 0 || !q.IsInt64() {
					return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("int64s: column %q holds %s in row %d, which is not an int64", name, c.ValueStr(i), row)}
				}
				out = append(out, q.Int64())
			default:
				return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("int64s: column %q is %s, not an integer type", name, exec.TypeName(a.DataType()))}
			}
		}
	}
	return out, nil
}
