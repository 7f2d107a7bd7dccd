package lake

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	skscan "github.com/skadedb/skade/scan"
	"github.com/skadedb/skade/snapshot"
)

// Table is a handle on one table, pinned to one snapshot. Reads see that
// snapshot; writes commit a new snapshot and return a new handle.
type Table struct {
	lk    *Lake
	id    table.Identifier
	tbl   *table.Table
	snap  *table.Snapshot // nil for a table with no snapshot yet
	arrow *arrow.Schema
	// branch is the branch this handle reads and writes, empty for main:
	// tbl is then the branch's view (snapshot.OnRef). tag is set on a
	// handle on a tag, which is read-only.
	branch, tag string
}

// SnapshotInfo describes one snapshot of a table.
type SnapshotInfo = snapshot.Info

func (l *Lake) newTable(id table.Identifier, tbl *table.Table, snap *table.Snapshot) *Table {
	return &Table{lk: l, id: id, tbl: tbl, snap: snap}
}

// Name is the table's name as namespace.table.
func (t *Table) Name() string { return displayName(t.id) }

// Iceberg exposes the underlying iceberg-go table (the current metadata,
// not only the pinned snapshot), for tools that speak iceberg-go.
func (t *Table) Iceberg() *table.Table { return t.tbl }

// Schema is the table's Arrow schema as of the pinned snapshot.
func (t *Table) Schema() *arrow.Schema {
	if t.arrow == nil {
		s, err := table.SchemaToArrowSchema(t.icebergSchema(), nil, false, false)
		if err != nil {
			// Every Iceberg type skade writes has an Arrow type; failing here
			// means the metadata holds a type we never create.
			panic(fmt.Sprintf("lake: table %s has a schema with no Arrow form: %v (broken invariant)", t.Name(), err))
		}
		t.arrow = s
	}
	return t.arrow
}

// icebergSchema is the schema reads and writes through this handle use: the
// table's current schema when the handle is on the current snapshot (so
// that ALTER TABLE, which moves the schema without a new snapshot, is seen
// at once), and the snapshot's own schema for time travel.
func (t *Table) icebergSchema() *iceberg.Schema {
	meta := t.tbl.Metadata()
	if cur := meta.CurrentSnapshot(); t.snap == nil || cur == nil || cur.SnapshotID == t.snap.SnapshotID {
		return meta.CurrentSchema()
	}
	if t.snap.SchemaID != nil {
		for _, s := range meta.Schemas() {
			if s.ID == *t.snap.SchemaID {
				return s
			}
		}
	}
	return meta.CurrentSchema()
}

// Snapshot describes the pinned snapshot; nil for a table never written.
func (t *Table) Snapshot() *SnapshotInfo {
	if t.snap == nil {
		return nil
	}
	var cur int64 = -1
	if cs := t.tbl.CurrentSnapshot(); cs != nil {
		cur = cs.SnapshotID
	}
	info := snapshot.FromSnapshot(t.snap, cur)
	return &info
}

// History lists the table's retained snapshots, oldest first, as of the
// metadata this handle holds: snapshots committed since the handle was
// taken appear after Refresh. It fails only when ctx is done.
func (t *Table) History(ctx context.Context) ([]SnapshotInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return snapshot.History(t.tbl.Metadata()), nil
}

// At returns a handle pinned to the snapshot with the given id.
func (t *Table) At(snapshotID int64) (*Table, error) {
	s, err := snapshot.ByID(t.tbl.Metadata(), t.Name(), snapshotID)
	if err != nil {
		return nil, err
	}
	return t.lk.newTable(t.id, t.tbl, s), nil
}

// AsOf returns a handle pinned to the snapshot that was current at ts.
func (t *Table) AsOf(ts time.Time) (*Table, error) {
	s, err := snapshot.AsOf(t.tbl.Metadata(), t.Name(), ts)
	if err != nil {
		return nil, err
	}
	return t.lk.newTable(t.id, t.tbl, s), nil
}

// Refresh returns a handle on the table's current snapshot (of the
// handle's branch or tag).
func (t *Table) Refresh(ctx context.Context) (*Table, error) {
	tbl, err := t.reload(ctx)
	if err != nil {
		return nil, err
	}
	return t.onRef(t.lk.newTable(t.id, tbl, tbl.CurrentSnapshot())), nil
}

// reload reads the table's committed metadata again, as this handle's
// branch or tag sees it.
func (t *Table) reload(ctx context.Context) (*table.Table, error) {
	tbl, err := t.lk.load(ctx, t.id)
	if err != nil || (t.branch == "" && t.tag == "") {
		return tbl, err
	}
	view, _, err := snapshot.OnRef(tbl, t.Name(), t.branch+t.tag)
	return view, translate(err)
}

// onRef gives n this handle's branch or tag.
func (t *Table) onRef(n *Table) *Table {
	n.branch, n.tag = t.branch, t.tag
	return n
}

// Branch returns a handle reading and writing the table's branch name
// (a write commits to the branch and leaves main as it is); "main" is the
// table itself. A tag's name gives a read-only handle on the tag's
// snapshot.
func (t *Table) Branch(ctx context.Context, name string) (*Table, error) {
	tbl, err := t.lk.load(ctx, t.id)
	if err != nil {
		return nil, err
	}
	if name == table.MainBranch {
		return t.lk.newTable(t.id, tbl, tbl.CurrentSnapshot()), nil
	}
	view, ref, err := snapshot.OnRef(tbl, t.Name(), name)
	if err != nil {
		return nil, err
	}
	n := t.lk.newTable(t.id, view, view.CurrentSnapshot())
	if ref.SnapshotRefType == table.TagRef {
		n.tag = name
	} else {
		n.branch = name
	}
	return n, nil
}

// WriteOption configures a write.
type WriteOption func(*writeConfig)

type writeConfig struct {
	assert bool
	props  iceberg.Properties
	// rebase returns a row-level write's staged change (see Session.write).
	rebase func() snapshot.Rebaser
}

// AssertSnapshot makes the write fail with ErrCommitConflict if the table
// has moved past the handle's snapshot, instead of replaying the write on
// top of the newer head.
func AssertSnapshot() WriteOption { return func(c *writeConfig) { c.assert = true } }

// WithSnapshotProperties adds properties to the new snapshot's summary.
func WithSnapshotProperties(props map[string]string) WriteOption {
	return func(c *writeConfig) {
		for k, v := range props {
			c.props[k] = v
		}
	}
}

// Append writes the records as new data files and commits them as one
// snapshot. Without AssertSnapshot, a concurrent commit is absorbed by
// refreshing and replaying the append (appends commute).
func (t *Table) Append(ctx context.Context, rdr array.RecordReader, opts ...WriteOption) (*Table, error) {
	return t.writeRecords(ctx, "append to", rdr, opts, func(txn *table.Transaction, r array.RecordReader, props iceberg.Properties) error {
		if ok, err := appendDirect(ctx, txn, r, props); ok {
			return err
		}
		return txn.Append(ctx, r, props)
	})
}

// writeRecords is the shared body of Append and Overwrite: options,
// the writability and schema checks, and a commit whose reader stops when
// ctx is cancelled.
func (t *Table) writeRecords(ctx context.Context, op string, rdr array.RecordReader, opts []WriteOption,
	write func(*table.Transaction, array.RecordReader, iceberg.Properties) error,
) (*Table, error) {
	cfg := writeConfig{props: iceberg.Properties{}}
	for _, o := range opts {
		o(&cfg)
	}
	if err := t.checkWritable(); err != nil {
		return nil, err
	}
	if err := checkSchemaForWrite(t.icebergSchema(), rdr.Schema()); err != nil {
		return nil, t.opError(op, err)
	}
	rdr, done, err := conformed(ctx, t.Name(), t.icebergSchema(), rdr)
	if err != nil {
		return nil, t.opError(op, err)
	}
	defer done()
	return t.commitWrite(ctx, op, cfg, func(txn *table.Transaction) error {
		return write(txn, skscan.DetachingReader(t.tbl.Metadata(), &ctxReader{ctx: ctx, RecordReader: rdr}), cfg.props)
	})
}

// checkWritable refuses writes through a handle pinned to an old snapshot:
// the write would apply to the head, which the caller has not seen.
func (t *Table) checkWritable() error {
	if t.tag != "" {
		return &sentinelError{ErrReadOnly, fmt.Errorf("table %s: tag %q is read-only; write to a branch (ALTER TABLE %s CREATE BRANCH …)", t.Name(), t.tag, t.Name())}
	}
	cur := t.tbl.CurrentSnapshot()
	if t.snap != nil && (cur == nil || cur.SnapshotID != t.snap.SnapshotID) {
		return &sentinelError{ErrReadOnly, fmt.Errorf("table %s: this handle is pinned to snapshot %d by time travel and is read-only; write through a handle on the current snapshot (lake.Table)", t.Name(), t.snap.SnapshotID)}
	}
	return nil
}

// opError puts "op table: " before err, unless a lower layer already
// named the operation and table (mergeinto's errors do), so that messages
// never stutter ("merge into main.t: merge into main.t: ...").
func (t *Table) opError(op string, err error) error {
	prefix := op + " " + t.Name() + ":"
	if strings.HasPrefix(err.Error(), prefix) {
		return err
	}
	return fmt.Errorf("%s %w", prefix, err)
}

// commitWrite runs one write transaction whose new files all go through a
// Tracker, so that a commit that fails removes exactly what it wrote.
// testHookAfterStage, when set, runs in every autocommit write after it
// staged and checked its change and before it commits: tests race another
// write into that window.
var testHookAfterStage func()

func (t *Table) commitWrite(ctx context.Context, op string, cfg writeConfig, stage func(*table.Transaction) error) (*Table, error) {
	if err := t.checkWritable(); err != nil {
		return nil, err
	}
	if hasUniqueConstraint(t.tbl.Metadata()) {
		// the keys were checked against this snapshot: a lost race runs
		// the statement again instead of replaying it on another head
		cfg.assert, cfg.rebase = true, nil
	}
	checked := func(txn *table.Transaction) error {
		if err := stage(txn); err != nil {
			return err
		}
		if err := checkConstraints(ctx, t.Name(), t.tbl, t.branch, txn); err != nil {
			return err
		}
		if hook := testHookAfterStage; hook != nil {
			hook()
		}
		return nil
	}
	committed, err := snapshot.Commit(ctx, t.lk.cat, t.tbl, op+" "+t.Name(), snapshot.CommitOptions{Assert: cfg.assert, Rebase: cfg.rebase, Branch: t.branch}, checked,
		func(ctx context.Context) (*table.Table, error) { return t.lk.load(ctx, t.id) })
	if err != nil {
		return nil, translate(err)
	}
	return t.onRef(t.lk.newTable(t.id, committed, committed.CurrentSnapshot())), nil
}

// ctxReader stops a write promptly when its context is cancelled.
type ctxReader struct {
	ctx context.Context
	array.RecordReader
	err error
}

func (r *ctxReader) Next() bool {
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return false
	}
	return r.RecordReader.Next()
}

func (r *ctxReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.RecordReader.Err()
}

// checkSchemaForWrite compares incoming records with the table schema by
// name, so that a mismatch gets a message naming the column.
func checkSchemaForWrite(tableSchema *iceberg.Schema, in *arrow.Schema) error {
	for _, f := range in.Fields() {
		if _, ok := tableSchema.FindFieldByName(f.Name); !ok {
			return &sentinelError{ErrInvalidArgument, fmt.Errorf("column %q is not in the table; the table's columns are %s", f.Name, columnList(tableSchema))}
		}
	}
	for _, f := range tableSchema.Fields() {
		if f.Required && len(in.FieldIndices(f.Name)) == 0 {
			return &sentinelError{ErrInvalidArgument, fmt.Errorf("column %q is NOT NULL but the records have no such column", f.Name)}
		}
	}
	return nil
}

func columnList(s *iceberg.Schema) string {
	var names []string
	for _, f := range s.Fields() {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// ScanOption configures Scan and PlanFiles.
type ScanOption func(*scanConfig)

type scanConfig struct {
	columns []string
	filter  iceberg.BooleanExpression
	limit   int64
	batch   int
}

// Columns projects the scan onto the named columns, in that order.
func Columns(names ...string) ScanOption {
	return func(c *scanConfig) { c.columns = append(c.columns, names...) }
}

// Filter keeps rows for which expr holds. Files and row groups whose
// statistics or partition values rule the filter out are never read.
func Filter(expr iceberg.BooleanExpression) ScanOption {
	return func(c *scanConfig) {
		if c.filter == nil {
			c.filter = expr
		} else {
			c.filter = iceberg.NewAnd(c.filter, expr)
		}
	}
}

// Limit stops the scan after n rows.
func Limit(n int64) ScanOption { return func(c *scanConfig) { c.limit = n } }

// BatchSize sets the rows per Arrow batch.
func BatchSize(n int) ScanOption { return func(c *scanConfig) { c.batch = n } }

func (t *Table) newScan(opts []ScanOption) (*table.Scan, scanConfig) {
	cfg := scanConfig{limit: -1}
	for _, o := range opts {
		o(&cfg)
	}
	var sopts []table.ScanOption
	if t.snap != nil {
		sopts = append(sopts, skscan.PinSnapshot(t.tbl, t.snap.SnapshotID)...)
	}
	if len(cfg.columns) > 0 {
		sopts = append(sopts, table.WithSelectedFields(cfg.columns...))
	}
	if cfg.filter != nil {
		sopts = append(sopts, table.WithRowFilter(cfg.filter))
	}
	if cfg.limit >= 0 {
		sopts = append(sopts, table.WithLimit(cfg.limit))
	}
	if cfg.batch > 0 {
		sopts = append(sopts, table.WithArrowBatchSize(cfg.batch))
	}
	return t.tbl.Scan(sopts...), cfg
}

// FileInfo describes one data file a scan would read.
type FileInfo struct {
	Path        string
	Records     int64
	SizeBytes   int64
	DeleteFiles int
}

// PlanFiles lists the data files a scan with these options would read,
// after partition and min/max pruning.
func (t *Table) PlanFiles(ctx context.Context, opts ...ScanOption) ([]FileInfo, error) {
	if t.snap == nil {
		return nil, nil
	}
	cfg := scanConfig{limit: -1}
	for _, o := range opts {
		o(&cfg)
	}
	// the files the engine's scan reads: planned with the sound part of
	// the filter (scan.PlanFilter), one entry per data file
	sopts := skscan.PinSnapshot(t.tbl, t.snap.SnapshotID)
	if len(cfg.columns) > 0 {
		sopts = append(sopts, table.WithSelectedFields(cfg.columns...))
	}
	if pf := skscan.PlanFilter(ctx, t.tbl, t.snap, cfg.filter); pf != nil {
		sopts = append(sopts, table.WithRowFilter(pf))
	}
	scan := t.tbl.Scan(sopts...)
	defer scan.Close()
	tasks, err := skscan.PlanWholeFiles(ctx, scan)
	if err != nil {
		return nil, translate(fmt.Errorf("plan scan of %s: %w", t.Name(), err))
	}
	out := make([]FileInfo, 0, len(tasks))
	for _, task := range tasks {
		out = append(out, FileInfo{
			Path:        task.File.FilePath(),
			Records:     task.File.Count(),
			SizeBytes:   task.File.FileSizeBytes(),
			DeleteFiles: len(task.DeleteFiles) + len(task.EqualityDeleteFiles) + len(task.DeletionVectorFiles),
		})
	}
	return out, nil
}

// Scan reads the pinned snapshot. The reader streams; release it when done.
func (t *Table) Scan(ctx context.Context, opts ...ScanOption) (array.RecordReader, error) {
	scan, cfg := t.newScan(opts)
	if t.snap == nil {
		scan.Close()
		schema := t.Schema()
		if len(cfg.columns) > 0 {
			var fields []arrow.Field
			for _, c := range cfg.columns {
				idx := schema.FieldIndices(c)
				if len(idx) == 0 {
					return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("scan %s: column %q does not exist; the columns are %s", t.Name(), c, columnList(t.icebergSchema()))}
				}
				fields = append(fields, schema.Field(idx[0]))
			}
			schema = arrow.NewSchema(fields, nil)
		}
		return array.NewRecordReader(schema, nil)
	}
	if cfg.filter != nil {
		scan.Close()
		return t.filteredScan(ctx, cfg)
	}
	// iceberg-go's ToArrowRecords, but reading files that lack a
	// partition column as skscan.ReadTasks does
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		scan.Close()
		return nil, translate(fmt.Errorf("scan %s: %w", t.Name(), err))
	}
	alt := func(fields []string) *table.Scan {
		o := append(skscan.PinSnapshot(t.tbl, t.snap.SnapshotID), table.WithSelectedFields(fields...))
		if cfg.batch > 0 {
			o = append(o, table.WithArrowBatchSize(cfg.batch))
		}
		return t.tbl.Scan(o...)
	}
	schema, seq, err := skscan.ReadTasksSchema(ctx, t.tbl, scan, alt, tasks)
	if err == nil && cfg.limit >= 0 {
		seq = limitSeq(seq, cfg.limit)
	}
	if err != nil {
		scan.Close()
		return nil, translate(fmt.Errorf("scan %s: %w", t.Name(), err))
	}
	return newSeqReader(schema, seq, scan.Close), nil
}

// limitSeq stops seq after n rows.
func limitSeq(seq iter.Seq2[arrow.RecordBatch, error], n int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		if n <= 0 {
			return
		}
		for b, err := range seq {
			if err != nil {
				yield(nil, err)
				return
			}
			if b.NumRows() >= n {
				if b.NumRows() > n {
					c := b.NewSlice(0, n)
					b.Release()
					b = c
				}
				yield(b, nil)
				return
			}
			n -= b.NumRows()
			if !yield(b, nil) {
				return
			}
		}
	}
}

// seqReader adapts iceberg-go's batch iterator to array.RecordReader.
type seqReader struct {
	refs   atomic.Int64
	schema *arrow.Schema
	next   func() (arrow.RecordBatch, error, bool)
	stop   func()
	close  func() error
	cur    arrow.RecordBatch
	err    error
	done   bool
}

func newSeqReader(schema *arrow.Schema, seq iter.Seq2[arrow.RecordBatch, error], closeFn func() error) *seqReader {
	next, stop := iter.Pull2(seq)
	r := &seqReader{schema: schema, next: next, stop: stop, close: closeFn}
	r.refs.Store(1)
	return r
}

func (r *seqReader) Retain() { r.refs.Add(1) }

func (r *seqReader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.finish()
	}
}

func (r *seqReader) finish() {
	if !r.done {
		r.done = true
		r.stop()
		if r.close != nil {
			_ = r.close()
		}
	}
}

func (r *seqReader) Schema() *arrow.Schema { return r.schema }

func (r *seqReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	for !r.done {
		b, err, ok := r.next()
		if !ok {
			r.finish()
			return false
		}
		if err != nil {
			r.err = err
			r.finish()
			return false
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		r.cur = b
		return true
	}
	return false
}

func (r *seqReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch under its deprecated name.
func (r *seqReader) Record() arrow.RecordBatch { return r.cur }

func (r *seqReader) Err() error { return r.err }

var _ array.RecordReader = (*seqReader)(nil)

// ExpireSnapshots removes snapshots committed before olderThan from the
// history, keeping at least the newest retainLast, and deletes the files
// that only the removed snapshots reached (never a file another table still
// references). Time travel to an expired snapshot then fails with
// ErrSnapshotNotFound.
func (t *Table) ExpireSnapshots(ctx context.Context, olderThan time.Time, retainLast int) (snapshot.ExpireResult, error) {
	cur, err := t.Refresh(ctx)
	if err != nil {
		return snapshot.ExpireResult{}, err
	}
	res, err := snapshot.Expire(ctx, cur.tbl, olderThan, retainLast, t.lk.otherRefs(t.id))
	if err != nil {
		return res, translate(fmt.Errorf("table %s: %w", t.Name(), err))
	}
	return res, nil
}

// RemoveOrphanFiles deletes files under the table's directory that no
// snapshot reaches and that are older than olderThan. Choose olderThan
// well before now: a writer in another process may have written files it
// has not committed yet.
func (t *Table) RemoveOrphanFiles(ctx context.Context, olderThan time.Time) (snapshot.OrphanResult, error) {
	cur, err := t.Refresh(ctx)
	if err != nil {
		return snapshot.OrphanResult{}, err
	}
	res, err := snapshot.RemoveOrphans(ctx, cur.tbl, olderThan, t.lk.otherRefs(t.id))
	if err != nil {
		return res, translate(fmt.Errorf("table %s: %w", t.Name(), err))
	}
	return res, nil
}

// Overwrite replaces every row of the table with the records, in one
// snapshot.
func (t *Table) Overwrite(ctx context.Context, rdr array.RecordReader, opts ...WriteOption) (*Table, error) {
	return t.writeRecords(ctx, "overwrite", rdr, opts, func(txn *table.Transaction, r array.RecordReader, props iceberg.Properties) error {
		return txn.Overwrite(ctx, r, props)
	})
}
