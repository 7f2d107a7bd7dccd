package lake

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
	skscan "github.com/skadedb/skade/scan"
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
	err := s.write(ctx, tbl, "insert into", nil, func(txn *table.Transaction) error {
		r := &ctxReader{ctx: ctx, RecordReader: cr}
		if ok, err := appendDirect(ctx, txn, r, nil); ok {
			return err
		}
		return txn.Append(ctx, skscan.DetachingReader(tbl.tbl.Metadata(), r), nil)
	})
	if err != nil {
		release()
		return 0, nil, err
	}
	return cr.rows, cr.kept, nil
}

// appendDirect stages r's rows in txn as txn.Append would, but written by
// mergeinto's writers: skade's own where the table allows it (string
// columns dictionary-encoded without arrow-go's memo,
// mergeinto/direct_writer.go), and otherwise iceberg-go's WriteRecords,
// both with NaN counts for the float columns (mergeinto/nancount.go),
// which txn.Append leaves out. ok is false, and nothing is read, when the
// transaction has no staged table to write for, or the table is of format
// version 3 and needs iceberg-go's writer (Append assigns first_row_id). The files are staged as
// Append stages them: no name mapping set, and no check for files the
// table already has (these are new). They are written through the
// transaction's IO, which removes them if the statement fails.
func appendDirect(ctx context.Context, txn *table.Transaction, r array.RecordReader, props iceberg.Properties) (ok bool, err error) {
	staged, err := txn.StagedTable()
	if err != nil {
		return false, nil
	}
	written, ok := mergeinto.WriteDirect(ctx, staged.Table, r.Schema(), readerSeq(r), 0 /* the table's target size */)
	if !ok {
		if staged.Table.Metadata().Version() >= 3 {
			// AddDataFiles wants each file's first_row_id, which
			// Append assigns
			return false, nil
		}
		written = mergeinto.WriteRecords(ctx, staged.Table, r.Schema(), readerSeq(r), 0)
	}
	var files []iceberg.DataFile
	for df, err := range written {
		if err != nil {
			return true, err
		}
		files = append(files, df)
	}
	return true, txn.AddDataFiles(ctx, files, props, table.WithoutAutoNameMapping(), table.WithoutDuplicateCheck())
}

// readerSeq yields r's batches, each retained for the consumer to
// release, then r's error.
func readerSeq(r array.RecordReader) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for r.Next() {
			b := r.RecordBatch()
			b.Retain()
			if !yield(b, nil) {
				return
			}
		}
		if err := r.Err(); err != nil {
			yield(nil, err)
		}
	}
}

// returned says what a DML statement's affected rows are, for RETURNING's
// old.* and new.*.
type returned int

const (
	returnedInserted   returned = iota // new rows; old is NULL
	returnedDeleted                    // old rows; new is NULL
	returnedUpdated                    // new rows; old is NULL (RETURNING reads no old.*)
	returnedUpdatedOld                 // new rows, then their old values
)

// returningResult evaluates a RETURNING list over the affected rows and
// releases them. Each batch is laid out as RETURNING reads it: the row,
// then old.*, then new.*.
func returningResult(ctx context.Context, ret *plan.Returning, rows []arrow.RecordBatch, m Metrics, kind returned) (*Result, error) {
	defer func() {
		for _, b := range rows {
			b.Release()
		}
	}()
	if len(rows) == 0 {
		return &Result{schema: ret.Schema(), metrics: m}, nil
	}
	laid := make([]arrow.RecordBatch, 0, len(rows))
	defer func() {
		for _, b := range laid {
			b.Release()
		}
	}()
	for _, b := range rows {
		lb, err := returningLayout(b, kind)
		if err != nil {
			return nil, err
		}
		laid = append(laid, lb)
	}
	src, err := exec.NewValues(laid[0].Schema(), laid)
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
	return s.tableOf(ref), ref, nil
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

// returningLayout lays one batch of affected rows out as RETURNING reads
// it: the row, old.*, new.*.
func returningLayout(b arrow.RecordBatch, kind returned) (arrow.RecordBatch, error) {
	n := int(b.NumCols())
	nt := n
	if kind == returnedUpdatedOld {
		if n%2 != 0 {
			return nil, fmt.Errorf("returning: an update's rows carry %d columns, not the new and old values (bug)", n)
		}
		nt = n / 2
	}
	row := b.Columns()[:nt]
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	nulls := func() []arrow.Array {
		out := make([]arrow.Array, nt)
		for i := range out {
			out[i] = array.MakeArrayOfNull(memoryAllocator, b.Schema().Field(i).Type, int(b.NumRows()))
			made = append(made, out[i])
		}
		return out
	}
	var oldCols, newCols []arrow.Array
	switch kind {
	case returnedInserted:
		oldCols, newCols = nulls(), row
	case returnedDeleted:
		oldCols, newCols = row, nulls()
	case returnedUpdated:
		oldCols, newCols = nulls(), row
	default:
		oldCols, newCols = b.Columns()[nt:], row
	}
	cols := append(append(append([]arrow.Array(nil), row...), oldCols...), newCols...)
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: b.Schema().Field(i % nt).Name, Type: c.DataType(), Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, b.NumRows()), nil
}
