package lake

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
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

func (s *Session) insert(ctx context.Context, st *parser.Insert, now time.Time) (*Result, error) {
	tbl, ref, err := s.lookup(ctx, st.Table)
	if err != nil {
		return nil, err
	}
	p, err := s.planner(now).Insert(ctx, st, ref)
	if err != nil {
		return nil, err
	}
	op, err := p.Operator()
	if err != nil {
		return nil, err
	}
	if err := op.Open(ctx); err != nil {
		op.Close()
		return nil, err
	}
	rdr := newOpReader(ctx, op, plan.TableSchema(tbl.tbl, p.Schema()))
	defer rdr.Release()
	var ret *plan.Returning
	if len(st.Returning) > 0 {
		if ret, err = s.planner(now).BindReturning(ctx, ref, st.Alias, st.Returning); err != nil {
			return nil, err
		}
	}
	n, kept, err := s.appendRowsKeep(ctx, tbl, rdr, ret != nil)
	if err != nil {
		return nil, err
	}
	if ret != nil {
		return returningResult(ctx, ret, kept, Metrics{RowsInserted: n})
	}
	return countResult(n, Metrics{RowsInserted: n}), nil
}

func (s *Session) delete(ctx context.Context, st *parser.Delete, now time.Time) (*Result, error) {
	if st.With != nil {
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("DELETE with WITH is not supported yet; use a subquery")}
	}
	res, _, err := s.rewrite(ctx, st, st.Table, now, false)
	return res, err
}

func (s *Session) update(ctx context.Context, st *parser.Update, now time.Time) (*Result, error) {
	if len(st.From) > 0 {
		return s.updateFrom(ctx, st, now)
	}
	if st.With != nil {
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("UPDATE with WITH is not supported yet; use a subquery")}
	}
	res, _, err := s.rewrite(ctx, st, st.Table, now, false)
	return res, err
}

// rewrite runs a DELETE or UPDATE (st, writing tn), or with explain only
// plans it and returns its EXPLAIN text; run, it returns the EXPLAIN
// ANALYZE text. plan.Write plans it (files, pruning, write mode) and
// lowers it onto mergeinto.Rewrite, which this runs inside the commit:
// one pass over the candidate files, rewriting those with a change
// (copy-on-write) or marking the changed rows with deletes
// (merge-on-read). Nothing matched commits nothing.
func (s *Session) rewrite(ctx context.Context, st parser.Stmt, tn *parser.TableName, now time.Time, explain bool) (*Result, string, error) {
	if tn.AsOf != nil {
		return nil, "", &sentinelError{ErrReadOnly, fmt.Errorf("cannot write to a time-travel read of %s", tn.Name)}
	}
	tbl, ref, err := s.lookup(ctx, tn.Name)
	if err != nil {
		return nil, "", err
	}
	w, err := s.planner(now).Write(ctx, st, ref, tbl.snap, explain)
	if err != nil {
		return nil, "", err
	}
	defer w.Release()
	if explain {
		return nil, w.Explain(), nil
	}
	if tbl.snap == nil {
		return countResult(0, Metrics{}), w.Explain(), nil
	}
	op := w.Op.String()
	var refuse error
	if v := tbl.tbl.Metadata().Version(); v >= 3 && w.Mode == mergeinto.CopyOnWrite {
		// iceberg-go demands first_row_id on the rewritten files of a v3
		// table, which its writer does not set.
		refuse = &sentinelError{ErrNotImplemented, fmt.Errorf("%s %s: copy-on-write %s of a format-version %d table is not supported yet (row lineage); set write.%s.mode = 'merge-on-read', or use a format-version 2 table", op, tbl.Name(), strings.ToUpper(op), v, op)}
	}
	var res *mergeinto.Result
	err = s.write(ctx, tbl, op, false, func(txn *table.Transaction) error {
		staged, err := txn.StagedTable()
		if err != nil {
			return err
		}
		res.Release()
		// INVARIANT: mergeinto writes through the transaction's tracked IO
		spec := w.Spec(staged.Table, s.planner(now).Options.Budget)
		spec.RefuseRewrite = refuse
		res, err = mergeinto.Rewrite(ctx, spec, txn)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	m := Metrics{RowsDeleted: res.Count}
	if w.Op == plan.WriteUpdate {
		m = Metrics{RowsUpdated: res.Count}
	}
	summary := w.Summary(res)
	if w.Returning != nil {
		rows := res.Returning
		res.Returning = nil
		r, err := returningResult(ctx, w.Returning, rows, m)
		return r, summary, err
	}
	res.Release()
	return countResult(res.Count, m), summary, nil
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

// updateFrom runs UPDATE t SET … FROM s WHERE … as the MERGE
//
//	MERGE INTO t USING s ON <where> WHEN MATCHED THEN UPDATE SET …
//
// so WHERE must relate t to s by at least one equality. Unlike Postgres,
// which updates a target row from an arbitrary one of several matching
// rows, a target row matching more than one row of s is an error (MERGE's
// cardinality rule) rather than a silent choice.
func (s *Session) updateFrom(ctx context.Context, st *parser.Update, now time.Time) (*Result, error) {
	if len(st.From) > 1 {
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("UPDATE … FROM with more than one table is not supported yet; join them in a subquery: FROM (SELECT … FROM a JOIN b …) s")}
	}
	if st.Where == nil {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("UPDATE … FROM needs a WHERE clause relating %s to the FROM table", st.Table.Name)}
	}
	if len(st.Returning) > 0 || st.With != nil || st.Table.AsOf != nil {
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("UPDATE … FROM with WITH, RETURNING or time travel is not supported yet")}
	}
	m := &parser.Merge{Pos: st.Pos, Target: st.Table.Name, TargetAlias: aliasOf(st.Table), Source: st.From[0], On: st.Where,
		Clauses: []*parser.MergeClause{{Pos: st.Pos, Kind: parser.Matched, Action: &parser.MergeUpdate{Pos: st.Pos, Set: st.Set}}}}
	res, _, err := s.runMerge(ctx, m, now, false, "update")
	return res, err
}
