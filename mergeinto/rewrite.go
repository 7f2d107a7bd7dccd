package mergeinto

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/scan"
)

// RewriteSpec is a DELETE or UPDATE lowered to the row-rewrite engine,
// the sinks MERGE writes through. Copy-on-write (fileRewrite): a changed
// file is read once, its unchanged prefix buffered within the budget, and
// no file without a change is written. Merge-on-read: the matched rows get
// position deletes (deletion vectors on format version 3) through
// PositionDeletes, and an UPDATE's new row versions go to new data files;
// no data file is rewritten.
type RewriteSpec struct {
	// Table is the target's display name, for messages.
	Table string
	// Target is the table through the caller's tracked IO (see Spec).
	Target *table.Table
	// Snapshot is the snapshot the statement reads, the transaction's head.
	Snapshot *table.Snapshot
	// Schema is the layout of the rows written: the table's Arrow schema.
	Schema *arrow.Schema
	// Files are the candidate data files, planned whole
	// (scan.PlanWholeFiles), each with every delete file that applies.
	Files []table.FileScanTask
	// Filter is the statement's row filter (its pushed WHERE): a row
	// outside it cannot change what the statement does. nil means any
	// row can. A commit that lost the race is validated with it (Delta).
	Filter iceberg.BooleanExpression
	// Drop are files without deletes whose every row the statement
	// deletes, as statistics prove: they are removed unread.
	Drop []table.FileScanTask
	// All plans every data file of the snapshot, or is nil when not known
	// (see DeadDeleteFiles: then only the delete files scoped to one
	// removed data file are removed with it).
	All []table.FileScanTask
	// Rows evaluates the statement over one file's live rows (task is
	// the whole file, first 0; or, only with RowGroupFilter, a byte range
	// of whole row groups of a file without deletes, whose first row is
	// the file's row first): an operator
	// whose first column is the match flag (BOOLEAN; TRUE deletes or
	// updates the row), then the row's columns in Schema order (an
	// UPDATE's new values on matched rows), then any further columns
	// (the row position), which are ignored. Rewrite opens, drains and
	// closes it. It runs Rows a second time for a file whose unchanged
	// prefix outgrew the buffer, and takes the prefix from that run, so
	// both runs must yield the same rows in the same order.
	Rows func(task table.FileScanTask, first int64) (exec.Operator, error)
	// RowGroupFilter, when non-nil, reports whether a row of row group rg
	// of a data file (meta is its footer) may match the statement, by the
	// row group's statistics; false proves none does. It is set only when
	// Rows yields a file's rows in file order. A copy-on-write rewrite of
	// a file whose row groups may be copied (rgcopy.go) then reads only
	// the row groups it may change and copies the others unread.
	RowGroupFilter func(meta *metadata.FileMetaData, rg int) bool
	// Update: matched rows are rewritten with their new values; else
	// they are deleted.
	Update bool
	// SetColumns are the columns (Schema indexes) an UPDATE assigns; nil
	// when not known. With them, a copy-on-write UPDATE may re-encode
	// only those columns of a row group and copy the others (rgcopy.go).
	SetColumns []int
	// Mode is the write path. In MergeOnRead mode the last column of Rows
	// must be each row's position in its file (BIGINT), since a plan may
	// reorder rows, and Drop is staged as a snapshot of its own before the
	// row delta (a row delta cannot remove data files).
	Mode Mode
	// Returning keeps the changed rows (Schema layout: a DELETE's old
	// values, an UPDATE's new ones) in Result.Returning.
	Returning bool
	// ReturningOld: Rows carries each row's stored values after its new
	// ones (an UPDATE whose RETURNING reads old.*), and Result.Returning
	// holds both, the new then the old.
	ReturningOld bool
	// Lineage: Rows carries each row's _row_id and
	// _last_updated_sequence_number (LineageColumns) as its last columns
	// but one, before the position; set on a table that keeps row lineage
	// (TracksLineage), whose rewritten rows keep them (lineage.go).
	Lineage bool
	// RefuseRewrite, when non-nil, is returned before a file with rows
	// left would be rewritten.
	RefuseRewrite error
	// Budget bounds the buffered prefixes; nil means unlimited.
	Budget *exec.Budget
	// Options tune execution (Mem, Now, BatchSize, BufferLimit,
	// TargetFileSize, SnapshotProperties).
	Options Options
}

// rewriter is a merger's DELETE/UPDATE half.
type rewriter struct {
	spec *RewriteSpec
	verb string // "delete", "update"
}

// Rewrite runs a copy-on-write DELETE or UPDATE and stages its change into
// txn, which the caller commits: one overwrite snapshot that removes the
// files it rewrote, emptied or dropped and adds the rewrites, checked by
// the row-count ledger, with the delete files that applied only to the
// removed files removed too. A statement that changes nothing stages
// nothing. On error nothing is staged and the files it wrote are removed.
func Rewrite(ctx context.Context, spec *RewriteSpec, txn *table.Transaction) (res *Result, err error) {
	verb := "delete"
	if spec.Update {
		verb = "update"
	}
	if spec.Target == nil || spec.Schema == nil || spec.Rows == nil || txn == nil {
		return nil, &Error{State: StateInternal, Msg: fmt.Sprintf("%s %s: incomplete rewrite (binder bug)", verb, spec.Table)}
	}
	p := &prepared{name: spec.Table, target: spec.Schema}
	if spec.Returning {
		p.retSchema = spec.Schema
		if spec.ReturningOld {
			fs := slices.Clone(spec.Schema.Fields())
			for _, f := range spec.Schema.Fields() {
				fs = append(fs, arrow.Field{Name: "old." + f.Name, Type: f.Type, Nullable: true})
			}
			p.retSchema = arrow.NewSchema(fs, nil)
		}
	}
	m := &merger{
		p:         p,
		spec:      &Spec{Table: spec.Table, Target: spec.Target, Snapshot: spec.Snapshot, Budget: spec.Budget, Options: spec.Options},
		opts:      spec.Options.withDefaults(),
		res:       &Result{ReturningSchema: p.retSchema},
		canChange: true,
		rw:        &rewriter{spec: spec, verb: verb},
	}
	if spec.Lineage != TracksLineage(spec.Target) {
		return nil, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: the rewrite's rows carry row lineage: %v, the table keeps it: %v (binder bug)", m.what(), spec.Lineage, !spec.Lineage)}
	}
	if m.lin, err = newLineage(spec.Target, spec.Schema, m.what()); err != nil {
		return nil, err
	}
	m.start(ctx)
	defer m.end(&res, &err)
	if spec.Snapshot == nil {
		return m.res, nil
	}
	m.allTasks = spec.All
	m.conflict = spec.Filter
	m.ledger = NewLedger(spec.Target, m.snapshotOpts(), m.what(), m.opts.Mem)
	if m.mor = spec.Mode == MergeOnRead; m.mor {
		m.pd = NewPositionDeletes(spec.Target, m.snapshotOpts(), m.what(), m.opts.Mem)
		m.res.DeletionVectors = m.pd.DeletionVectors()
	}
	mt := &m.res.Metrics
	mt.FilesScanned = int64(len(spec.Files) + len(spec.Drop))
	for _, task := range spec.Drop {
		// statistics prove every row matches: drop the file unread
		if scan.HasDeletes(task) {
			return nil, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: data file %s has deletes and cannot be dropped unread (binder bug)", m.what(), m.relPath(task.File.FilePath()))}
		}
		m.ledger.Read(task, task.File.Count())
		m.removed = append(m.removed, task.File)
		m.removedTasks = append(m.removedTasks, task)
		mt.FilesRemoved++
		mt.RowsDeleted += task.File.Count()
	}
	start := time.Now()
	prog := exec.ProgressFrom(ctx)
	prog.Planned(int64(len(spec.Files)))
	for _, task := range spec.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rewrite := m.rewriteFile
		if m.mor {
			rewrite = m.markFile
		}
		if err := rewrite(ctx, task); err != nil {
			return nil, err
		}
		prog.FileDone()
		// INVARIANT: at most two rewrites are being written at once.
		if err := m.settle(ctx, 1); err != nil {
			return nil, err
		}
	}
	if err := m.settle(ctx, 0); err != nil {
		return nil, err
	}
	mt.ScanTime = time.Since(start)
	if err := m.finishWrites(ctx, false); err != nil {
		return nil, err
	}
	if m.pd != nil {
		m.res.DeleteFilesWritten = len(m.pd.DeleteFiles())
	}
	if err := m.stage(ctx, txn); err != nil {
		return nil, err
	}
	m.res.Count = mt.RowsUpdated + mt.RowsDeleted
	return m.res, nil
}

// rewriteFile runs the statement over one file and hands each batch to
// the copy-on-write sink.
func (m *merger) rewriteFile(ctx context.Context, task table.FileScanTask) error {
	fr := m.newFileRewrite(ctx, task)
	defer fr.releaseBuffer()
	if runs, ok := m.rw.mayChange(fr); ok {
		return m.rewriteRowGroups(ctx, task, fr, runs)
	}
	var read int64
	apply := func(b arrow.RecordBatch) error {
		read += b.NumRows()
		return m.rw.applyTo(ctx, m, fr, b)
	}
	err := m.rw.run(ctx, m, task, func(b arrow.RecordBatch) (bool, error) {
		if fr.ends != nil && !inFileOrder(b, read) {
			if err := fr.unordered(ctx); err != nil {
				return false, err
			}
		}
		// a batch spanning row groups goes in pieces, one per group
		err := fr.pieces(read, b, func(s arrow.RecordBatch, _, _ int64) error { return apply(s) })
		return err == nil, err
	})
	if err != nil {
		return err
	}
	return fr.finish(ctx, read)
}

// applyTo evaluates the statement's batch b and hands it to f.
func (rw *rewriter) applyTo(ctx context.Context, m *merger, f *fileRewrite, b arrow.RecordBatch) error {
	in, o, err := rw.apply(m, b)
	if err != nil {
		return err
	}
	err = f.emit(ctx, in, o)
	in.Release()
	return err
}

// mayChange returns the runs of adjacent row groups, [a, b), of f's file
// in which a row may match the statement by the row groups' statistics
// (RewriteSpec.RowGroupFilter), when some row group cannot change and
// the file can be read by row group ranges; ok is false to read it whole.
func (rw *rewriter) mayChange(f *fileRewrite) (runs [][2]int, ok bool) {
	if rw.spec.RowGroupFilter == nil || f.ends == nil || !rangesReadable(f) {
		return nil, false
	}
	runs = f.groupRuns(func(g int) bool { return rw.spec.RowGroupFilter(f.meta, g) })
	if len(runs) == 1 && runs[0] == [2]int{0, len(f.ends)} {
		return nil, false // every row group may change
	}
	return runs, true
}

// rewriteRowGroups is rewriteFile for a file some of whose row groups
// statistics prove unchanged: it reads the runs of the others by byte
// range, each with its file positions, and lets the rest go to the copy
// unread. No run: nothing in the file can match, and it stays.
func (m *merger) rewriteRowGroups(ctx context.Context, task table.FileScanTask, f *fileRewrite, runs [][2]int) error {
	if err := scan.CheckWhole(m.what(), task); err != nil {
		return &Error{State: StateInternal, Msg: err.Error()}
	}
	m.res.Metrics.RowGroupsSkipped += int64(len(f.ends))
	n := f.ends[len(f.ends)-1]
	for _, r := range runs {
		m.res.Metrics.RowGroupsSkipped -= int64(r[1] - r[0])
		t := f.runTask(task, r)
		from, to := f.runRows(r)
		if err := f.skipTo(ctx, from); err != nil {
			return err
		}
		read := from
		err := m.rw.runFrom(ctx, m, t, from, func(b arrow.RecordBatch) (bool, error) {
			if !inFileOrder(b, read) || read+b.NumRows() > to {
				// RowGroupFilter promised rows in file order
				return false, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: data file %s: row groups %v yielded rows out of file order (broken invariant)", m.what(), m.relPath(task.File.FilePath()), r)}
			}
			err := f.pieces(read, b, func(s arrow.RecordBatch, _, _ int64) error { return m.rw.applyTo(ctx, m, f, s) })
			read += b.NumRows()
			return err == nil, err
		})
		if err != nil {
			return err
		}
		if read != to {
			return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: data file %s: row groups %v yielded %d rows of %d (broken invariant)", m.what(), m.relPath(task.File.FilePath()), r, read-from, to-from)}
		}
	}
	if err := f.skipTo(ctx, n); err != nil {
		return err
	}
	return f.finish(ctx, n)
}

// rangesReadable reports whether f's row groups can be read by byte
// ranges: iceberg-go places a row group in a range by the manifest's
// split offsets when it has one per row group, else by its first column
// chunk's first page; either must be where the footer says the row
// group starts.
func rangesReadable(f *fileRewrite) bool {
	offsets := rowGroupOffsets(f.meta)
	for i := range offsets {
		cc, err := f.meta.RowGroup(i).ColumnChunk(0)
		if err != nil {
			return false
		}
		at := cc.DataPageOffset()
		if cc.HasDictionaryPage() && cc.DictionaryPageOffset() >= 0 && (at < 0 || cc.DictionaryPageOffset() < at) {
			at = cc.DictionaryPageOffset()
		}
		if at != offsets[i] {
			return false
		}
	}
	so := f.task.File.SplitOffsets()
	return len(so) != len(f.ends) || slices.Equal(so, offsets)
}

// inFileOrder reports whether b, an operator batch of the statement,
// holds the file's rows from position pos on, in order: its last column
// is each row's position (RewriteSpec.Rows).
func inFileOrder(b arrow.RecordBatch, pos int64) bool {
	if b.NumCols() == 0 {
		return false
	}
	p, ok := b.Column(int(b.NumCols()) - 1).(*array.Int64)
	if !ok || p.NullN() > 0 {
		return false
	}
	for i, v := range p.Int64Values() {
		if v != pos+int64(i) {
			return false
		}
	}
	return true
}

// run drains the statement's operator over task, calling fn with each
// batch (which fn does not own) until fn returns false or an error.
func (rw *rewriter) run(ctx context.Context, m *merger, task table.FileScanTask, fn func(arrow.RecordBatch) (bool, error)) (err error) {
	if err := scan.CheckWhole(m.what(), task); err != nil {
		return &Error{State: StateInternal, Msg: err.Error()}
	}
	return rw.runFrom(ctx, m, task, 0, fn)
}

// runFrom is run over task, whole or a byte range of row groups whose
// first row is the file's row first (RewriteSpec.Rows).
func (rw *rewriter) runFrom(ctx context.Context, m *merger, task table.FileScanTask, first int64, fn func(arrow.RecordBatch) (bool, error)) (err error) {
	m.res.Metrics.BytesRead += task.Length
	op, err := rw.spec.Rows(task, first)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := op.Close(); err == nil {
			err = cerr
		}
	}()
	if err := op.Open(ctx); err != nil {
		return err
	}
	if n := op.Schema().NumFields(); n < 1+m.p.target.NumFields() {
		return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: the rewrite yields %d columns for a %d-column table (binder bug)", m.what(), n, m.p.target.NumFields())}
	}
	for {
		b, err := op.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		more, err := fn(b)
		b.Release()
		if err != nil || !more {
			return err
		}
	}
}

// rowBatch is the row columns of an operator batch, in the target layout;
// with row lineage, then its lineage columns, the sequence number NULL
// on the rows updated (their indexes in updated, ascending).
func (m *merger) rowBatch(b arrow.RecordBatch, updated []int32) arrow.RecordBatch {
	n := m.p.target.NumFields()
	cols := make([]arrow.Array, n)
	for i := range cols {
		cols[i] = b.Column(1 + i)
		cols[i].Retain()
	}
	rows := newBatch(m.p.target, cols, b.NumRows())
	if m.lin == nil {
		return rows
	}
	// the lineage columns come right before the position, the last
	k := int(b.NumCols()) - 3
	ids, seq := b.Column(k), b.Column(k+1)
	ids.Retain()
	if len(updated) > 0 {
		seq = clearSeq(m.opts.Mem, seq, updated)
	} else {
		seq.Retain()
	}
	return m.lin.attach(m.opts.Mem, rows, ids, seq)
}

// targetRows is b's target columns in the target layout, without the
// lineage columns (what RETURNING sees). b is not released.
func (m *merger) targetRows(b arrow.RecordBatch) arrow.RecordBatch {
	if m.lin == nil {
		b.Retain()
		return b
	}
	return m.lin.narrow(m.p.target, b)
}

// apply splits one operator batch into what the sink needs: in, the
// batch's rows in the target layout (what an unchanged batch keeps), and
// the batchOut of its changed rows.
func (rw *rewriter) apply(m *merger, b arrow.RecordBatch) (arrow.RecordBatch, batchOut, error) {
	match, ok := b.Column(0).(*array.Boolean)
	if !ok {
		return nil, batchOut{}, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: the match column is %s, not boolean (binder bug)", m.what(), b.Column(0).DataType())}
	}
	n := int(b.NumRows())
	var hit, miss []int32
	for r := 0; r < n; r++ {
		if match.IsValid(r) && match.Value(r) {
			hit = append(hit, int32(r))
		} else {
			miss = append(miss, int32(r))
		}
	}
	if len(hit) == 0 {
		return m.rowBatch(b, nil), batchOut{}, nil
	}
	var updated []int32
	if rw.spec.Update {
		updated = hit
	}
	in := m.rowBatch(b, updated)
	mt := &m.res.Metrics
	o := batchOut{changed: true, kept: int64(len(miss))}
	if rw.spec.Update {
		// NOT NULL is enforced by the plan's assignments.
		mt.RowsUpdated += int64(len(hit))
		in.Retain()
		o.out = []arrow.RecordBatch{in}
	} else {
		mt.RowsDeleted += int64(len(hit))
		if len(miss) > 0 {
			kept, err := m.takeBatch(in, miss)
			if err != nil {
				in.Release()
				return nil, batchOut{}, err
			}
			o.out = []arrow.RecordBatch{kept}
		}
	}
	if rw.spec.Returning {
		changed, err := m.returningRows(b, in, hit)
		if err != nil {
			releaseBatches(o.out)
			in.Release()
			return nil, batchOut{}, err
		}
		m.res.Returning = append(m.res.Returning, changed)
	}
	return in, o, nil
}

// returningRows are the hit rows RETURNING sees: of in (the target
// layout), or with ReturningOld the new values and then the old ones,
// from the rewrite's batch b.
func (m *merger) returningRows(b, in arrow.RecordBatch, hit []int32) (arrow.RecordBatch, error) {
	if !m.rw.spec.ReturningOld {
		rows := m.targetRows(in)
		defer rows.Release()
		return m.takeBatch(rows, hit)
	}
	n := 2 * m.p.target.NumFields()
	if int(b.NumCols()) < 2+n {
		return nil, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: the rewrite carries no old values (binder bug)", m.what())}
	}
	cols := make([]arrow.Array, n)
	for i := range cols {
		cols[i] = b.Column(1 + i)
		cols[i].Retain()
	}
	both := newBatch(m.p.retSchema, cols, b.NumRows())
	defer both.Release()
	return m.takeBatch(both, hit)
}

// readRows is readFile for a DELETE or UPDATE: the statement's rows of
// task in the target layout (a replayed prefix holds unchanged rows only).
func (rw *rewriter) readRows(ctx context.Context, m *merger, task table.FileScanTask, fn func(arrow.RecordBatch) (bool, error)) error {
	return rw.run(ctx, m, task, func(b arrow.RecordBatch) (bool, error) {
		rb := m.rowBatch(b, nil)
		defer rb.Release()
		return fn(rb)
	})
}

// markFile is rewriteFile for merge-on-read: the matched rows' positions
// (from the last column; the plan may reorder rows) become the file's
// deletes once the file is read, sorted, and an UPDATE's matched rows go
// to the new-rows writer.
func (m *merger) markFile(ctx context.Context, task table.FileScanTask) error {
	var pos []int64
	mark := func(b arrow.RecordBatch) (bool, error) {
		match, ok := b.Column(0).(*array.Boolean)
		if !ok {
			return false, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: the match column is %s, not boolean (binder bug)", m.what(), b.Column(0).DataType())}
		}
		last := b.Column(int(b.NumCols()) - 1)
		at, ok := last.(*array.Int64)
		if !ok || int(b.NumCols()) < 2+m.p.target.NumFields() {
			return false, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: the rewrite's last column is %s, not the row position (binder bug)", m.what(), last.DataType())}
		}
		var hit []int32
		for r := 0; r < match.Len(); r++ {
			if match.IsValid(r) && match.Value(r) {
				pos = append(pos, at.Value(r))
				hit = append(hit, int32(r))
			}
		}
		if len(hit) == 0 {
			return true, nil
		}
		mt := &m.res.Metrics
		if m.rw.spec.Update {
			mt.RowsUpdated += int64(len(hit))
		} else {
			mt.RowsDeleted += int64(len(hit))
		}
		if !m.rw.spec.Update && !m.rw.spec.Returning {
			return true, nil
		}
		var updated []int32
		if m.rw.spec.Update {
			updated = hit
		}
		in := m.rowBatch(b, updated)
		rows, err := m.takeBatch(in, hit)
		in.Release()
		if err != nil {
			return false, err
		}
		if m.rw.spec.Returning {
			if m.rw.spec.ReturningOld {
				both, err := m.returningRows(b, nil, hit)
				if err != nil {
					rows.Release()
					return false, err
				}
				m.res.Returning = append(m.res.Returning, both)
			} else {
				m.res.Returning = append(m.res.Returning, m.targetRows(rows))
			}
		}
		if !m.rw.spec.Update {
			rows.Release()
			return true, nil
		}
		if m.morWriter == nil {
			if m.morWriter = m.newWriter(ctx); m.morWriter == nil {
				rows.Release()
				return false, fmt.Errorf("%s: no writer (bug)", m.what())
			}
		}
		return true, m.morWriter.push(ctx, rows)
	}
	var err error
	if f, runs, ok := m.markRuns(ctx, task); ok {
		err = m.markRowGroups(ctx, task, f, runs, mark)
	} else {
		err = m.rw.run(ctx, m, task, mark)
	}
	if err != nil {
		return err
	}
	// Add refuses a position twice, and wants them ascending.
	slices.Sort(pos)
	return m.pd.File(task).Add(ctx, pos)
}

// markRuns is mayChange for merge-on-read: the runs of row groups of
// task's file in which a row may match, when statistics rule some out
// and the file can be read by row group ranges. Lineage matters only to
// an UPDATE's new rows, so a DELETE qualifies on a table that keeps it.
func (m *merger) markRuns(ctx context.Context, task table.FileScanTask) (*fileRewrite, [][2]int, bool) {
	if m.rw.spec.RowGroupFilter == nil || (m.lin != nil && (m.rw.spec.Update || m.rw.spec.Returning)) {
		return nil, nil, false
	}
	f := &fileRewrite{m: m, task: task}
	if f.meta, f.ends = m.footerLayout(ctx, task, false); f.meta == nil {
		return nil, nil, false
	}
	runs, ok := m.rw.mayChange(f)
	return f, runs, ok
}

// markRowGroups is markFile's read of the runs of row groups that may
// match, each by byte range with its file positions; the others are left
// unread. The positions ride with the rows, so only the count read is
// checked.
func (m *merger) markRowGroups(ctx context.Context, task table.FileScanTask, f *fileRewrite, runs [][2]int, mark func(arrow.RecordBatch) (bool, error)) error {
	m.res.Metrics.RowGroupsSkipped += int64(len(f.ends))
	for _, r := range runs {
		m.res.Metrics.RowGroupsSkipped -= int64(r[1] - r[0])
		t := f.runTask(task, r)
		from, to := f.runRows(r)
		read := int64(0)
		err := m.rw.runFrom(ctx, m, t, from, func(b arrow.RecordBatch) (bool, error) {
			read += b.NumRows()
			return mark(b)
		})
		if err != nil {
			return err
		}
		if read != to-from {
			return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: data file %s: row groups %v yielded %d rows of %d (broken invariant)", m.what(), m.relPath(task.File.FilePath()), r, read, to-from)}
		}
	}
	return nil
}
