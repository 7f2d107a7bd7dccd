package lake

import (
	"context"
	"fmt"
	"io"
	"slices"
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
	rdr := newOpReader(ctx, op, writeSchema(tbl, p.Schema()))
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

// writeSchema is the table's Arrow schema when its types match the
// plan's output (they do: both are the table's canonical types), which
// carries the NOT NULL flags iceberg-go checks.
func writeSchema(tbl *Table, out *arrow.Schema) *arrow.Schema {
	ts, err := table.SchemaToArrowSchema(tbl.tbl.Metadata().CurrentSchema(), nil, false, false)
	if err != nil {
		return out
	}
	if ts.NumFields() != out.NumFields() {
		return out
	}
	for i := range ts.Fields() {
		if !arrow.TypeEqual(ts.Field(i).Type, out.Field(i).Type) {
			return out
		}
	}
	return ts
}

func (s *Session) delete(ctx context.Context, st *parser.Delete, now time.Time) (*Result, error) {
	if st.With != nil {
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("DELETE with WITH is not supported yet; use a subquery")}
	}
	var alias parser.Ident
	if st.Table.Alias != nil {
		alias = st.Table.Alias.Name
	}
	return s.rewrite(ctx, st.Table, alias, st.Where, nil, st.Using, st.Returning, now, false)
}

func (s *Session) update(ctx context.Context, st *parser.Update, now time.Time) (*Result, error) {
	if len(st.From) > 0 {
		return s.updateFrom(ctx, st, now)
	}
	if st.With != nil {
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("UPDATE with WITH is not supported yet; use a subquery")}
	}
	var alias parser.Ident
	if st.Table.Alias != nil {
		alias = st.Table.Alias.Name
	}
	return s.rewrite(ctx, st.Table, alias, st.Where, st.Set, nil, st.Returning, now, true)
}

// rewrite runs DELETE (update false) or UPDATE. Copy-on-write (the
// default): the files that may hold matching rows (after pruning) are
// read once, with their deletes applied, to count the matches; files
// without any stay; files whose every row a DELETE removes are dropped;
// the others are rewritten. One overwrite snapshot commits it all,
// removing the position deletes and deletion vectors of the removed files,
// and asserting the snapshot it read. Merge-on-read (write.delete.mode,
// write.update.mode): see session_dml_mor.go. Nothing matched commits
// nothing.
func (s *Session) rewrite(ctx context.Context, tn *parser.TableName, alias parser.Ident, where parser.Expr, set []*parser.SetClause, using []parser.TableExpr, returning []*parser.SelectItem, now time.Time, update bool) (*Result, error) {
	res, _, err := s.rewriteOrExplain(ctx, tn, alias, where, set, using, returning, now, update, false)
	return res, err
}

// rewriteOrExplain runs a DELETE or UPDATE, or with explain only plans it
// and describes what it would read and drop.
func (s *Session) rewriteOrExplain(ctx context.Context, tn *parser.TableName, alias parser.Ident, where parser.Expr, set []*parser.SetClause, using []parser.TableExpr, returning []*parser.SelectItem, now time.Time, update, explain bool) (*Result, string, error) {
	if tn.AsOf != nil {
		return nil, "", &sentinelError{ErrReadOnly, fmt.Errorf("cannot write to a time-travel read of %s", tn.Name)}
	}
	tbl, ref, err := s.lookup(ctx, tn.Name)
	if err != nil {
		return nil, "", err
	}
	op := "delete"
	if update {
		op = "update"
	}
	rw, err := s.planner(now).RowRewrite(ctx, ref, alias, where, set, using)
	if err != nil {
		return nil, "", err
	}
	defer rw.Release()
	var ret *plan.Returning
	var kept []arrow.RecordBatch
	defer func() {
		for _, b := range kept {
			b.Release()
		}
	}()
	if len(returning) > 0 && !explain {
		if ret, err = s.planner(now).BindReturning(ctx, ref, alias, returning); err != nil {
			return nil, "", err
		}
	}
	if tbl.snap == nil {
		return countResult(0, Metrics{}), "table has no snapshot: nothing to read", nil
	}
	fields := make([]string, len(rw.Columns))
	fs := make([]arrow.Field, len(rw.Columns))
	for i, c := range rw.Columns {
		fields[i] = c.Name
		fs[i] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: !c.Required}
	}
	readSchema := arrow.NewSchema(fs, nil)
	sopts := []table.ScanOption{table.WithSnapshotID(tbl.snap.SnapshotID)}
	if pf := skscan.PlanFilter(ctx, tbl.tbl, tbl.snap, rw.Pushed); pf != nil {
		sopts = append(sopts, table.WithRowFilter(pf))
	}
	sc := tbl.tbl.Scan(sopts...)
	// whole files: a file is rewritten, or numbered for position deletes,
	// from its first row to its last
	tasks, err := skscan.PlanWholeFiles(ctx, sc)
	sc.Close()
	// every data file, when known (for dead delete files); a copy, as
	// tasks is filtered in place below
	all := slices.Clone(tasks)
	if err == nil && rw.Pushed != nil {
		// The filter may have pruned equality deletes a rewritten file needs.
		tasks, all, err = mergeinto.CompleteDeletes(ctx, tbl.tbl, tbl.snap, []table.ScanOption{table.WithSnapshotID(tbl.snap.SnapshotID)}, tasks)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", op, tbl.Name(), err)
	}
	if !explain {
		// files outside the key range of a `key IN (subquery)` condition
		// hold no match (the subquery runs here, once)
		kept := tasks[:0]
		for _, t := range tasks {
			skip, err := rw.Excludes(t.File)
			if err != nil {
				return nil, "", err
			}
			if !skip {
				kept = append(kept, t)
			}
		}
		tasks = kept
	}
	// run evaluates the rewrite over one file, with the file's deletes
	// applied.
	run := func(task table.FileScanTask) (exec.Operator, error) {
		// read the whole file: the pushed filter prunes files, never rows
		task.Residual = nil
		if err := skscan.CheckWhole(op+" "+tbl.Name(), task); err != nil {
			return nil, err
		}
		in, err := exec.NewFileScan(tbl.Name(), tbl.tbl, tbl.snap, fields, readSchema, nil /* filter */, []table.FileScanTask{task})
		if err != nil {
			return nil, err
		}
		// each row's position in the file rides through the plan, whose
		// joins may reorder rows
		withPos, err := exec.NewRowPosition(in, plan.RowPositionColumn)
		if err != nil {
			return nil, err
		}
		return rw.Operator(withPos)
	}
	target := writeSchema(tbl, readSchema)
	// Merge-on-read, unless statistics prove that a DELETE empties every
	// candidate file: dropping them is cheaper than deleting each row and
	// rewrites nothing either.
	mor := mergeOnRead(tbl, update)
	wholly := func(t table.FileScanTask) bool {
		// statistics prove every row of the file matches
		return !update && ret == nil && rw.AllMatch(t.File)
	}
	// dropUnread: a file with deletes is read even so (its record count
	// includes the deleted rows), then dropped with its deletes
	dropUnread := func(t table.FileScanTask) bool { return wholly(t) && !hasDeletes(t) }
	if mor && len(tasks) > 0 && !slices.ContainsFunc(tasks, func(t table.FileScanTask) bool { return !wholly(t) }) {
		mor = false
	}
	var drops, files []table.FileScanTask
	for _, task := range tasks {
		if dropUnread(task) {
			drops = append(drops, task)
		} else {
			files = append(files, task)
		}
	}
	// Merge-on-read drops the files a DELETE empties unread too (a time
	// window's inner files); the others get deletes.
	total := exec.SnapshotDataFiles(tbl.tbl, tbl.snap.SnapshotID)
	if explain && mor {
		return nil, morExplain(op, tbl, rw, total, len(tasks), len(drops)), nil
	}
	if explain {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s (copy-on-write)\n", strings.ToUpper(op), tbl.Name())
		if rw.Pushed != nil {
			fmt.Fprintf(&b, "  pruning filter: %s\n", rw.Pushed)
		}
		fmt.Fprintf(&b, "  data files: %d in the snapshot, %d skipped by pruning, %d dropped unread (statistics prove every row matches), %d to read\n",
			total, total-int64(len(tasks)), len(drops), len(files))
		b.WriteString("  per file:\n")
		for _, l := range strings.Split(strings.TrimRight(rw.Explain(), "\n"), "\n") {
			b.WriteString("    " + l + "\n")
		}
		return nil, b.String(), nil
	}
	mode, props := mergeinto.CopyOnWrite, map[string]string(nil)
	if mor {
		mode, props = mergeinto.MergeOnRead, map[string]string{"skade.operation": op}
	}
	var refuse error
	if v := tbl.tbl.Metadata().Version(); v >= 3 && !mor {
		// iceberg-go demands first_row_id on the rewritten files of a v3
		// table, which its writer does not set.
		refuse = &sentinelError{ErrNotImplemented, fmt.Errorf("%s %s: copy-on-write %s of a format-version %d table is not supported yet (row lineage); set write.%s.mode = 'merge-on-read', or use a format-version 2 table", op, tbl.Name(), strings.ToUpper(op), v, op)}
	}
	// One pass: each candidate file is read once through the row-rewrite
	// engine MERGE uses, which rewrites only the files with a change, or
	// marks the changed rows with deletes.
	var res *mergeinto.Result
	err = s.write(ctx, tbl, op, false, func(txn *table.Transaction) error {
		staged, err := txn.StagedTable()
		if err != nil {
			return err
		}
		res.Release()
		// INVARIANT: mergeinto writes through the transaction's tracked IO
		res, err = mergeinto.Rewrite(ctx, &mergeinto.RewriteSpec{
			Table: tbl.Name(), Target: staged.Table, Snapshot: tbl.snap, Schema: target,
			Files: files, Drop: drops, All: all, Rows: run, Update: update, Returning: ret != nil, Mode: mode,
			RefuseRewrite: refuse, Budget: s.planner(now).Options.Budget,
			Options: mergeinto.Options{SnapshotProperties: props},
		}, txn)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	matched := res.Count
	m := Metrics{RowsDeleted: matched}
	if update {
		m = Metrics{RowsUpdated: matched}
	}
	mt := res.Metrics
	summary := "" // EXPLAIN ANALYZE: nothing matched, nothing committed
	if mor {
		summary = morSummary(op, tbl.Name(), res, total, len(tasks), len(drops))
	} else if matched > 0 {
		summary = fmt.Sprintf("%s %s (copy-on-write): %d rows\n  data files: %d in the snapshot, %d skipped by pruning, %d dropped unread, %d read, %d rewritten, %d removed, %d added\n",
			strings.ToUpper(op), tbl.Name(), matched, total, total-int64(len(tasks)), len(drops), len(files), mt.FilesRewritten, mt.FilesRemoved, mt.FilesAdded)
	}
	if ret != nil {
		rows := res.Returning
		res.Returning = nil
		r, err := returningResult(ctx, ret, rows, m)
		return r, summary, err
	}
	res.Release()
	return countResult(matched, m), summary, nil
}

// hasDeletes reports whether delete files apply to task's data file.
func hasDeletes(task table.FileScanTask) bool {
	return len(task.DeleteFiles)+len(task.EqualityDeleteFiles)+len(task.DeletionVectorFiles) > 0
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
