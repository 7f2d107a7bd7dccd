package lake

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

// opReader adapts an opened operator to array.RecordReader.
type opReader struct {
	refs   atomic.Int64
	ctx    context.Context
	op     exec.Operator
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
	done   bool
}

func newOpReader(ctx context.Context, op exec.Operator, schema *arrow.Schema) *opReader {
	r := &opReader{ctx: ctx, op: op, schema: schema}
	r.refs.Store(1)
	return r
}

func (r *opReader) Retain()               { r.refs.Add(1) }
func (r *opReader) Schema() *arrow.Schema { return r.schema }
func (r *opReader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.op.Close()
	}
}
func (r *opReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.done {
		return false
	}
	b, err := r.op.Next(r.ctx)
	if err != nil {
		r.done = true
		if err != io.EOF {
			r.err = err
		}
		return false
	}
	r.cur = rewrap(b, r.schema)
	return true
}
func (r *opReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *opReader) Record() arrow.RecordBatch      { return r.cur }
func (r *opReader) Err() error                     { return r.err }

// rewrap gives b the schema s (same column types, other names or
// nullability).
func rewrap(b arrow.RecordBatch, s *arrow.Schema) arrow.RecordBatch {
	b = exec.NormalizeBatch(b)
	if b.Schema().Equal(s) {
		return b
	}
	out := array.NewRecordBatch(s, b.Columns(), b.NumRows())
	b.Release()
	return out
}

// countingReader counts rows and holds back a first batch it peeked.
type countingReader struct {
	array.RecordReader
	pending arrow.RecordBatch
	cur     arrow.RecordBatch
	rows    int64
	// keep, when set, retains every batch read (for RETURNING)
	keep bool
	kept []arrow.RecordBatch
}

func (c *countingReader) Next() bool {
	if c.pending != nil {
		c.cur, c.pending = c.pending, nil
		c.rows += c.cur.NumRows()
		c.retain()
		return true
	}
	if !c.RecordReader.Next() {
		c.cur = nil
		return false
	}
	c.cur = c.RecordReader.RecordBatch()
	c.rows += c.cur.NumRows()
	c.retain()
	return true
}

func (c *countingReader) retain() {
	if c.keep {
		c.cur.Retain()
		c.kept = append(c.kept, c.cur)
	}
}
func (c *countingReader) RecordBatch() arrow.RecordBatch { return c.cur }
func (c *countingReader) Record() arrow.RecordBatch      { return c.cur }

// appendRows appends rdr's rows to tbl in one snapshot and returns how
// many; no rows commits nothing.
func (s *Session) appendRows(ctx context.Context, tbl *Table, rdr array.RecordReader) (int64, error) {
	n, _, err := s.appendRowsKeep(ctx, tbl, rdr, false)
	return n, err
}

// appendRowsKeep is appendRows that, with keep, also returns the rows
// appended (the caller releases them).
func (s *Session) appendRowsKeep(ctx context.Context, tbl *Table, rdr array.RecordReader, keep bool) (int64, []arrow.RecordBatch, error) {
	if !rdr.Next() {
		if err := rdr.Err(); err != nil {
			return 0, nil, err
		}
		return 0, nil, nil
	}
	first := rdr.RecordBatch()
	first.Retain()
	cr := &countingReader{RecordReader: rdr, pending: first, keep: keep}
	release := func() {
		for _, b := range cr.kept {
			b.Release()
		}
	}
	defer func() {
		if cr.pending != nil {
			cr.pending.Release()
		}
	}()
	// Append through the table's commit path, not Table.Append: the plan
	// already shaped the rows to the table's current schema, which a
	// handle's snapshot schema may predate (after ALTER TABLE).
	if err := tbl.checkWritable(); err != nil {
		return 0, nil, err
	}
	err := s.write(ctx, tbl, "insert into", false, func(txn *table.Transaction) error {
		return txn.Append(ctx, &ctxReader{ctx: ctx, RecordReader: cr}, nil)
	})
	if err != nil {
		release()
		return 0, nil, err
	}
	return cr.rows, cr.kept, nil
}

// returningResult evaluates a RETURNING list over the affected rows and
// releases them.
func returningResult(ctx context.Context, ret *plan.Returning, rows []arrow.RecordBatch, m Metrics) (*Result, error) {
	defer func() {
		for _, b := range rows {
			b.Release()
		}
	}()
	if len(rows) == 0 {
		return &Result{schema: ret.Schema(), metrics: m}, nil
	}
	src, err := exec.NewValues(rows[0].Schema(), rows)
	if err != nil {
		return nil, err
	}
	op, err := ret.Operator(src)
	if err != nil {
		src.Close()
		return nil, err
	}
	out, err := exec.Drain(ctx, op)
	if err != nil {
		return nil, err
	}
	return &Result{schema: ret.Schema(), batches: out, metrics: m}, nil
}

func (s *Session) lookup(ctx context.Context, n parser.Name) (*Table, *plan.TableRef, error) {
	ref, err := sessionCatalog{s}.LookupTable(ctx, strings.Split(tableName(n), "."))
	if err != nil {
		return nil, nil, err
	}
	return s.lk.newTable(ref.Ident, ref.Table, ref.Table.CurrentSnapshot()), ref, nil
}

func (s *Session) truncate(ctx context.Context, st *parser.Truncate, now time.Time) (*Result, error) {
	var deleted int64
	for _, n := range st.Tables {
		del := &parser.Delete{Pos: st.Pos, Table: &parser.TableName{Pos: st.Pos, Name: n}}
		res, err := s.delete(ctx, del, now)
		if err != nil {
			return nil, err
		}
		deleted += res.Metrics().RowsDeleted
		res.Close()
	}
	// no count, as in Postgres, but the row movement
	out := emptyResult()
	out.metrics.RowsDeleted = deleted
	return out, nil
}

// insert, delete and query run through plan.Planner.Plan (runPlanned);
// COPY, TRUNCATE and CLONE … AS OF call them with statements they build.
func (s *Session) insert(ctx context.Context, st *parser.Insert, now time.Time) (*Result, error) {
	return s.runPlanned(ctx, st, now)
}

func (s *Session) delete(ctx context.Context, st *parser.Delete, now time.Time) (*Result, error) {
	return s.runPlanned(ctx, st, now)
}

func (s *Session) query(ctx context.Context, q *parser.Query, now time.Time) (*Result, error) {
	return s.runPlanned(ctx, q, now)
}
