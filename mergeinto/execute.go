package mergeinto

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/scan"
	"github.com/skadedb/skade/snapshot"
)

// Execute runs a MERGE and stages its change into txn, which the caller
// commits (or abandons). It never commits.
//
// The staged change is one overwrite snapshot that removes every data
// file it rewrote or emptied and adds the files it wrote, with a
// requirement that the main branch still points at the snapshot the
// transaction started from (AssertRefSnapshotID): of two racing merges
// the second to commit fails with table.ErrCommitFailed, and the caller
// may then validate Result.Delta against the commits since and restage it
// on the new head (snapshot.Commit does). A merge that changes nothing
// stages nothing and returns Staged == false.
//
// txn must be a transaction on spec.Target (or on a table sharing its
// metadata and IO), and spec.Snapshot its head. On error nothing is staged
// and the data files Execute wrote are removed through the target's IO.
func Execute(ctx context.Context, spec *Spec, txn *table.Transaction) (res *Result, err error) {
	p, err := prepare(spec)
	if err != nil {
		return nil, err
	}
	if txn == nil {
		return nil, &Error{State: StateInternal, Msg: fmt.Sprintf("merge into %s: no transaction (binder bug)", p.name)}
	}
	m := &merger{p: p, spec: spec, opts: spec.Options.withDefaults(), res: &Result{ReturningSchema: p.retSchema}}
	if m.lin, err = newLineage(spec.Target, p.target, "merge into "+p.name); err != nil {
		return nil, err
	}
	m.start(ctx)
	defer m.end(&res, &err)
	if err := m.build(ctx); err != nil {
		return nil, err
	}
	m.startEarlyInsert(ctx)
	if err := m.scanTarget(ctx); err != nil {
		return nil, err
	}
	if err := m.finishWrites(ctx, true); err != nil {
		return nil, err
	}
	if err := m.stage(ctx, txn); err != nil {
		return nil, err
	}
	mt := &m.res.Metrics
	m.res.Count = mt.RowsInserted + mt.RowsUpdated + mt.RowsDeleted
	return m.res, nil
}

// merger is one Execute's state.
type merger struct {
	p    *prepared
	spec *Spec
	opts Options
	ec   *exec.EvalContext
	res  *Result

	src *exec.JoinBuild
	// markedGroups are the multi-row source groups already marked matched.
	markedGroups map[int32]struct{}
	// canChange: some clause can change a target row, so files are
	// buffered and rewritten; otherwise the target is read only to find
	// the source rows that match.
	canChange bool

	readScan *table.Scan
	keyScan  *table.Scan // reads the ON key columns alone (rgcopy.go)
	restScan *table.Scan // reads the other columns (rgcopy.go's fileKeys)
	// setCols are the columns the statement's updates assign, when it may
	// patch row groups (rgcopy.go); nil until patching is first asked.
	setCols []int
	// unread marks the target columns a narrow read leaves out (see
	// narrowColumns), nil when none; unreadCount counts them
	unread      []bool
	unreadCount int
	// sparseUnread is unread with the SET columns marked too, when no
	// clause reads a SET column: a file's patched row groups may then be
	// read without them, their updates held alone (sparse.go); nil when
	// not
	sparseUnread []bool
	nullsMu      sync.Mutex
	nulls        map[string]arrow.Array // nullArray's, by type
	wopts        []table.WriteRecordOption
	// direct is the direct writer's plan (direct_writer.go), nil when
	// WriteRecords writes; directPlanned once it was asked for
	direct        *directPlan
	directPlanned bool
	// per-batch scratch of applyBatch and match (a residual ON), reused
	// (one goroutine)
	matchBuf []int32
	dropBuf  []bool
	wmu      sync.Mutex     // guards writers and the direct plan (newWriter)
	writers  []*fileWriter  // every writer started, for abort
	copies   []string       // row-group copies written (rgcopy.go), for abort
	pending  []*fileRewrite // rewrites read but still being written
	// patches being encoded (startPatch): their goroutines, and a slot
	// each of patchesInFlight
	patchWG sync.WaitGroup
	// patchNaN notes the float columns (by field id) some patch wrote a
	// NaN into (nancount.go)
	patchNaN   nanFields
	failedMu   sync.Mutex
	failed     []*patch // patches that failed, keeping their SET columns
	patchSlots chan struct{}
	removed    []iceberg.DataFile
	added      []iceberg.DataFile
	// removedTasks are the scan tasks of removed, whose delete files may
	// die with them; allTasks, when known, plan every data file of the
	// snapshot (see DeadDeleteFiles).
	removedTasks []table.FileScanTask
	allTasks     []table.FileScanTask
	// dead are the delete files that die with removed.
	dead []iceberg.DataFile
	// conflict is the row filter outside which no row can change what the
	// statement does (the early filter, a DELETE's WHERE); nil: any row.
	conflict iceberg.BooleanExpression

	// ledger checks the copy-on-write commit's row counts (ledger.go).
	ledger *Ledger

	// rw is set when the merger runs a DELETE or UPDATE (rewrite.go).
	rw *rewriter

	// lin is set on a table with row lineage (lineage.go): target
	// batches then carry _row_id and _last_updated_sequence_number after
	// the target's columns, as lin.schema.
	lin *lineage

	// early is the insert of the source rows outside the target's key
	// range, running beside the scan (insert_early.go); nil when none.
	early *earlyInsert

	// Merge-on-read (mor.go): set when the statement runs in that mode.
	mor       bool
	morWriter *fileWriter      // updated rows of every file
	pd        *PositionDeletes // the changed rows' deletes
}

func (m *merger) close() {
	if m.src != nil {
		m.src.Release()
		m.src = nil
	}
	if m.readScan != nil {
		m.readScan.Close()
		m.readScan = nil
	}
	if m.keyScan != nil {
		m.keyScan.Close()
		m.keyScan = nil
	}
	if m.restScan != nil {
		m.restScan.Close()
		m.restScan = nil
	}
	for _, a := range m.nulls {
		a.Release()
	}
	m.nulls = nil
}

// start sets up what every run of the merger needs: the evaluation
// context (gathers, compute.Take, allocate from the context's allocator)
// and the writer options.
func (m *merger) start(ctx context.Context) {
	m.ec = &exec.EvalContext{Ctx: compute.WithAllocator(ctx, m.opts.Mem), Mem: m.opts.Mem, Now: m.opts.Now}
	if m.opts.TargetFileSize > 0 {
		m.wopts = append(m.wopts, table.WithTargetFileSize(m.opts.TargetFileSize))
	}
}

// end is deferred by Execute and Rewrite: on error it removes every file
// written and drops the result; it always releases what the run holds.
func (m *merger) end(res **Result, err *error) {
	m.stopEarlyInsert()
	m.patchWG.Wait()
	for _, p := range m.failed {
		p.freeSet(m.spec.Budget) // if the file's end did not
	}
	if *err != nil {
		if aerr := m.abort(); aerr != nil {
			*err = errors.Join(*err, aerr)
		}
		m.res.Release()
		*res = nil
	}
	m.close()
}

// what names the statement in errors: "merge into main.t", "delete main.t".
func (m *merger) what() string {
	if m.rw != nil {
		return m.rw.verb + " " + m.p.name
	}
	return "merge into " + m.p.name
}

// abort stops the writers and removes every data file this merge wrote.
func (m *merger) abort() error {
	paths := m.copies
	for _, w := range m.writers {
		w.stop(true)
		for _, df := range w.written() {
			paths = append(paths, df.FilePath())
		}
	}
	var errs []error
	if m.pd != nil {
		errs = append(errs, m.pd.Abort())
	}
	if len(paths) == 0 {
		return errors.Join(errs...)
	}
	fsys, err := m.spec.Target.FS(context.Background())
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("%s: removing the files it wrote: %w", m.what(), err))...)
	}
	for _, p := range paths {
		if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("%s: removing the file it wrote: %w", m.what(), err))
		}
	}
	return errors.Join(errs...)
}

// build drains the source into a hash table on its keys.
func (m *merger) build(ctx context.Context) error {
	start := time.Now()
	defer func() { m.res.Metrics.BuildTime = time.Since(start) }()
	src := m.spec.Source
	if err := src.Open(ctx); err != nil {
		src.Close()
		return fmt.Errorf("merge into %s: source: %w", m.p.name, err)
	}
	jb, err := exec.BuildJoin(ctx, src, m.p.buildKeys, exec.HashOptions{
		Mem: m.opts.Mem, Budget: m.spec.Budget, BatchSize: m.opts.BatchSize, Now: m.opts.Now,
		KeyRanges: m.keyRanges(ctx),
	}, fmt.Sprintf("merge into %s: the source", m.p.name))
	cerr := src.Close()
	if err != nil {
		return fmt.Errorf("merge into %s: source: %w", m.p.name, err)
	}
	m.src = jb
	if cerr != nil {
		return fmt.Errorf("merge into %s: source: %w", m.p.name, cerr)
	}
	m.res.Metrics.SourceRows = int64(jb.Rows)
	m.res.Metrics.SourceRowsOutside = int64(jb.OutOfRange)
	for _, c := range append(append([]Clause(nil), m.p.matched...), m.p.bySource...) {
		if c.Action.Kind == ActionUpdate || c.Action.Kind == ActionDelete {
			m.canChange = true
		}
	}
	return nil
}

// bySourceChanges reports whether a NOT MATCHED BY SOURCE clause can
// change a row, which makes every target row (and file) a candidate.
func (m *merger) bySourceChanges() bool {
	for _, c := range m.p.bySource {
		if c.Action.Kind != ActionDoNothing {
			return true
		}
	}
	return false
}

// scanTarget plans the candidate files and streams them one at a time.
func (m *merger) scanTarget(ctx context.Context) error {
	mt := &m.res.Metrics
	snap := m.spec.Snapshot
	if snap == nil {
		return nil
	}
	total := scan.SnapshotDataFiles(m.spec.Target, snap.SnapshotID)
	if len(m.p.matched) == 0 && len(m.p.notMatched) == 0 && !m.bySourceChanges() {
		// Only DO NOTHING for target rows and no inserts: nothing to learn.
		mt.FilesSkipped = max(total, 0)
		return nil
	}
	start := time.Now()
	var filter iceberg.BooleanExpression
	if !m.bySourceChanges() {
		pr, err := m.earlyFilter()
		if err != nil {
			return err
		}
		m.conflict = pr.conflict
		if pr.none {
			mt.FilesSkipped = max(total, 0)
			mt.PruneTime = time.Since(start)
			return nil
		}
		filter = pr.filter
	}
	opts := m.snapshotOpts()
	if filter != nil {
		if pf := scan.PlanFilter(ctx, m.spec.Target, m.spec.Snapshot, filter); pf != nil {
			opts = append(opts, table.WithRowFilter(pf))
		}
	}
	planScan := m.spec.Target.Scan(opts...)
	tasks, err := scan.PlanWholeFiles(ctx, planScan)
	planScan.Close()
	if err != nil && filter != nil && ctx.Err() == nil {
		// The filter is only an optimization (a source value the target
		// column's type cannot hold may fail to bind): plan without it.
		planScan = m.spec.Target.Scan(m.snapshotOpts()...)
		tasks, err = scan.PlanWholeFiles(ctx, planScan)
		planScan.Close()
	}
	if err == nil && filter != nil {
		tasks, m.allTasks, err = m.completeDeletes(ctx, tasks)
	} else {
		m.allTasks = tasks
	}
	mt.PruneTime = time.Since(start)
	if err != nil {
		return fmt.Errorf("merge into %s: planning the target files: %w", m.p.name, err)
	}
	m.ledger = NewLedger(m.spec.Target, m.snapshotOpts(), "merge into "+m.p.name, m.opts.Mem)
	if m.mor = m.spec.Mode == MergeOnRead; m.mor {
		m.pd = NewPositionDeletes(m.spec.Target, m.snapshotOpts(), "merge into "+m.p.name, m.opts.Mem)
	}
	mt.FilesScanned = int64(len(tasks))
	if total >= int64(len(tasks)) {
		mt.FilesSkipped = total - int64(len(tasks))
	}

	start = time.Now()
	defer func() { mt.ScanTime = time.Since(start) }()
	ropts := append(m.snapshotOpts(), table.WithArrowBatchSize(scan.ReadBatchRows(m.opts.BatchSize)))
	if names := m.readColumns(); names != nil {
		ropts = append(ropts, table.WithSelectedFields(names...))
	} else if m.lin != nil {
		ropts = append(ropts, table.WithRowLineage())
	}
	m.readScan = m.spec.Target.Scan(ropts...)
	prog := exec.ProgressFrom(ctx)
	prog.Planned(int64(len(tasks)))
	prog.PlannedRows(scan.DistinctRows(tasks))
	var ra *readAhead
	if w := m.readAheadWorkers(len(tasks)); w > 0 {
		if ra = m.startReadAhead(ctx, tasks, w); ra != nil {
			defer ra.stop()
		}
	}
	for i, task := range tasks {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := m.mergeNext(ctx, i, task, ra); err != nil {
			return err
		}
		prog.FileDone()
		// INVARIANT: at most two rewrites are being written at once: the
		// file just read and the one before it, still compressing.
		if err := m.settle(ctx, 1); err != nil {
			return err
		}
	}
	return m.settle(ctx, 0)
}

// mergeNext merges the i-th candidate file, task: read here and now, or
// taken from the read-ahead workers (ra, when not nil).
func (m *merger) mergeNext(ctx context.Context, i int, task table.FileScanTask, ra *readAhead) error {
	if ra == nil {
		return m.mergeFile(ctx, task, m.reader(ctx, task), true, nil)
	}
	rw, keyed := ra.layout(i)
	if !keyed {
		return m.mergeFile(ctx, task, ra.reader(i), false, rw)
	}
	defer rw.releaseBuffer()
	hit, err := ra.keyedRead(ctx, i, rw)
	if err != nil || !hit {
		return err
	}
	return rw.finishKeyFirst(ctx)
}

// readColumns names the target columns the merge reads, or nil for all
// of them; conform fills the columns not read with NULL, which nothing
// then reads.
//
//   - An insert-only merge (no clause changes a target row, no ON
//     residual) only probes target rows: the ON keys alone.
//   - A merge-on-read merge writes position deletes for the rows it
//     changes and new rows for their new versions; it never copies a row
//     it leaves alone, so it needs the ON keys, what the conditions and
//     expressions read, and the columns an UPDATE carries over (those its
//     SET does not assign). Not with RETURNING (it returns old rows
//     whole), nor on a v3 table, whose lineage columns are read with the
//     whole row.
//   - Copy-on-write reads every column: it rewrites the rows it keeps.
func (m *merger) readColumns() []string {
	if !m.canChange && m.spec.On == nil {
		return m.columnNames(m.p.keyCols)
	}
	if !m.mor || m.lin != nil || m.rw != nil || len(m.spec.Returning) > 0 {
		return nil
	}
	need := m.clauseColumns()
	if need == nil {
		return nil // an expression hides what it reads
	}
	n := len(need)
	for _, cl := range m.spec.Clauses {
		if cl.Action.Kind == ActionUpdate {
			set := make([]bool, n)
			for _, a := range cl.Action.Set {
				set[a.Column] = true
			}
			for i, s := range set {
				need[i] = need[i] || !s
			}
		}
	}
	var cols []int
	for i, ok := range need {
		if ok {
			cols = append(cols, i)
		}
	}
	if len(cols) == n {
		return nil
	}
	return m.columnNames(cols)
}

// clauseColumns marks the target columns the statement reads to decide
// and compute its changes: the ON keys, and what the ON residual and the
// clauses' conditions and expressions read. It is nil when an expression
// hides what it reads.
func (m *merger) clauseColumns() []bool {
	n := m.p.target.NumFields()
	exprs := []exec.Expr{m.spec.On}
	for _, cl := range m.spec.Clauses {
		exprs = append(exprs, cl.Cond)
		exprs = append(exprs, cl.Action.Values...)
		for _, a := range cl.Action.Set {
			exprs = append(exprs, a.Expr)
		}
	}
	used := exec.UsedColumns(exprs...)
	if used == nil {
		return nil
	}
	need := make([]bool, n)
	for _, c := range m.p.keyCols {
		need[c] = true
	}
	for _, c := range used {
		if c < n {
			need[c] = true
		}
	}
	return need
}

// columnNames names target columns by index.
func (m *merger) columnNames(cols []int) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = m.p.target.Field(c).Name
	}
	return names
}

// snapshotOpts selects the snapshot to read (scan.PinSnapshot). The head
// is read as a live scan, which reads through the table's current schema:
// a scan pinned by snapshot id uses the schema the snapshot was written
// with, whose names may predate an ALTER TABLE ... RENAME, and conform
// matches by current name.
func (m *merger) snapshotOpts() []table.ScanOption {
	return scan.PinSnapshot(m.spec.Target, m.spec.Snapshot.SnapshotID)
}

// readFile streams task's rows in the target layout, calling fn per batch
// (fn does not own the batch) until fn returns false or an error.
func (m *merger) readFile(ctx context.Context, task table.FileScanTask, fn func(arrow.RecordBatch) (bool, error)) error {
	if m.rw != nil {
		return m.rw.readRows(ctx, m, task, fn)
	}
	m.res.Metrics.BytesRead += task.File.FileSizeBytes()
	return m.readTask(ctx, task, fn)
}

// readTask is readFile's read, which a read-ahead worker calls too: it
// touches no state of m that it does not only read.
func (m *merger) readTask(ctx context.Context, task table.FileScanTask, fn func(arrow.RecordBatch) (bool, error)) error {
	// The task may carry the early filter's residual; the file is read
	// whole.
	task.Residual = nil
	if err := scan.CheckWhole(m.what(), task); err != nil {
		return &Error{State: StateInternal, Msg: err.Error()}
	}
	return m.readConformed(ctx, m.readScan, []table.FileScanTask{task}, "reading", true, fn)
}

// readConformed reads tasks, ranges of one data file, through sc, and
// calls fn with each batch conformed to the target layout (fn does not
// own it) until fn returns false or an error. doing names the read in
// errors ("reading"); progress: the rows count in the statement's
// progress (a file re-read, a rewrite's replayed prefix, counts its rows
// again).
func (m *merger) readConformed(ctx context.Context, sc *table.Scan, tasks []table.FileScanTask, doing string, progress bool, fn func(arrow.RecordBatch) (bool, error)) error {
	return m.readConformedMeta(ctx, sc, tasks, nil, doing, progress, fn)
}

// readConformedMeta is readConformed given the file's footer, meta, when
// the caller holds it (nil otherwise), for a plain read (plainread.go).
func (m *merger) readConformedMeta(ctx context.Context, sc *table.Scan, tasks []table.FileScanTask, meta *metadata.FileMetaData, doing string, progress bool, fn func(arrow.RecordBatch) (bool, error)) error {
	fail := func(err error) error {
		return fmt.Errorf("%s: %s data file %s: %w", m.what(), doing, m.relPath(tasks[0].File.FilePath()), err)
	}
	seq := m.plainRead(ctx, sc, tasks, meta)
	if seq == nil {
		var err error
		if seq, err = scan.ReadTasks(compute.WithAllocator(ctx, scan.ReadBuffers), m.spec.Target, sc, m.altScan, tasks); err != nil {
			return fail(err)
		}
	}
	for b, err := range seq {
		if err != nil {
			return fail(err)
		}
		if progress {
			exec.ProgressFrom(ctx).AddRows(b.NumRows())
		}
		tb, err := m.conform(ctx, b)
		if err != nil {
			return err
		}
		more, err := fn(tb)
		tb.Release()
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// altScan is a scan of the named target columns like the merge's own
// (scan.ReadTasks reads a file lacking a partition column with it).
func (m *merger) altScan(fields []string) *table.Scan {
	return m.spec.Target.Scan(append(m.snapshotOpts(), table.WithArrowBatchSize(scan.ReadBatchRows(m.opts.BatchSize)), table.WithSelectedFields(fields...))...)
}

// nullArray is an all-NULL array of type dt and length n (the caller
// releases it): a slice of one array per type kept for the statement,
// grown by doubling. A read of a few columns (the keys) conforms every
// batch to the whole target layout, and a batch of inserted rows (their
// target half) or of rows no source row matched has a NULL half: making
// those NULLs anew for each batch cost more than reading the keys. Safe
// for the read-ahead workers.
func (m *merger) nullArray(dt arrow.DataType, n int) arrow.Array {
	key := dt.Fingerprint()
	m.nullsMu.Lock()
	defer m.nullsMu.Unlock()
	a, ok := m.nulls[key]
	if !ok || a.Len() < n {
		size := n
		if ok {
			size = max(n, 2*a.Len())
			a.Release() // the slices made of it keep its buffers
		}
		a = array.MakeArrayOfNull(m.opts.Mem, dt, size)
		if m.nulls == nil {
			m.nulls = map[string]arrow.Array{}
		}
		m.nulls[key] = a
	}
	return array.NewSlice(a, 0, int64(n))
}

// nullCols returns NULL arrays of fields' types, n rows each (nullArray).
func (m *merger) nullCols(fields []arrow.Field, n int) []arrow.Array {
	out := make([]arrow.Array, len(fields))
	for i, f := range fields {
		out[i] = m.nullArray(f.Type, n)
	}
	return out
}

// conform makes b match TargetSchema: column order by name, canonical
// types, NULL for columns the file predates. It releases b.
func (m *merger) conform(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer b.Release()
	ts := m.writeSchema() // the lineage columns after the target's, NULL when not read
	cols := make([]arrow.Array, ts.NumFields())
	bs := b.Schema()
	for i, f := range ts.Fields() {
		idx := bs.FieldIndices(f.Name)
		if len(idx) == 0 {
			cols[i] = m.nullArray(f.Type, int(b.NumRows()))
			continue
		}
		c, err := scan.CastTo(ctx, b.Column(idx[0]), f.Type)
		if err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("%s: column %q: %w", m.what(), f.Name, err)
		}
		cols[i] = c
	}
	return newBatch(ts, cols, b.NumRows()), nil
}

// relPath is path relative to the table location when inside it.
func (m *merger) relPath(path string) string {
	loc := strings.TrimSuffix(m.spec.Target.Location(), "/") + "/"
	if rel, ok := strings.CutPrefix(path, loc); ok {
		return rel
	}
	return path
}

// stage stages the file swap into txn.
func (m *merger) stage(ctx context.Context, txn *table.Transaction) error {
	start := time.Now()
	defer func() { m.res.Metrics.StageTime = time.Since(start) }()
	if len(m.removed) == 0 && len(m.added) == 0 && (m.pd == nil || m.pd.Empty()) {
		return nil
	}
	staged, err := txn.StagedTable()
	if err != nil {
		return fmt.Errorf("%s: %w", m.what(), err)
	}
	var want, got int64 = -1, -1
	if m.spec.Snapshot != nil {
		want = m.spec.Snapshot.SnapshotID
	}
	if h := staged.CurrentSnapshot(); h != nil {
		got = h.SnapshotID
	}
	if want != got {
		return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: the statement read snapshot %d but the transaction's head is %d (binder bug: read the transaction's staged table)", m.what(), want, got)}
	}
	if err := txn.AssertRefSnapshotID(""); err != nil { // the branch the transaction writes
		return fmt.Errorf("%s: %w", m.what(), err)
	}
	if !m.mor {
		// INVARIANT: no copy-on-write commit loses or duplicates a row.
		if m.ledger == nil { // the target was not read: only inserts
			m.ledger = NewLedger(m.spec.Target, nil, m.what(), m.opts.Mem)
		}
		if err := m.ledger.Check(ctx, m.removed, m.added, m.res.Metrics.RowsDeleted, m.res.Metrics.RowsInserted); err != nil {
			return err
		}
		// Deletes that applied only to the removed files die with them.
		m.dead = DeadDeleteFiles(m.removedTasks, m.allTasks)
	}
	if err := m.stageChange(ctx, txn); err != nil {
		return err
	}
	m.res.Staged = true
	m.res.Delta = m.delta()
	return nil
}

// stageChange stages the statement's files into txn: the first time on
// the snapshot it read, again on a newer head when it lost the commit
// race and no commit since conflicts (Delta).
func (m *merger) stageChange(ctx context.Context, txn *table.Transaction) error {
	props := iceberg.Properties{}
	for k, v := range m.opts.SnapshotProperties {
		props[k] = v
	}
	if mt := m.res.Metrics; mt.RowGroupsCopied+mt.RowGroupsPatched > 0 {
		// what the rewrite copied verbatim (rgcopy.go), for $snapshots
		props["skade.copied-row-groups"] = strconv.FormatInt(mt.RowGroupsCopied, 10)
		props["skade.patched-row-groups"] = strconv.FormatInt(mt.RowGroupsPatched, 10)
		props["skade.copied-files-size"] = strconv.FormatInt(mt.BytesCopied, 10)
	}
	if m.mor {
		if len(m.removed) > 0 {
			// A merge-on-read DELETE's files that statistics prove empty
			// (RewriteSpec.Drop): their own snapshot first, since the row
			// delta below cannot remove data files.
			if err := txn.ReplaceDataFilesWithDataFiles(ctx, m.removed, nil, props); err != nil {
				return fmt.Errorf("%s: staging the snapshot: %w", m.what(), err)
			}
		}
		if m.pd.Empty() && len(m.added) == 0 {
			return nil
		}
		// INVARIANT: the row delta removes no data file.
		return m.pd.Stage(ctx, txn, props, m.added)
	}
	added, err := assignFirstRowIDs(txn, m.added)
	if err != nil {
		return fmt.Errorf("%s: staging the snapshot: %w", m.what(), err)
	}
	if len(m.dead) > 0 {
		err = txn.ReplaceFiles(ctx, m.removed, added, m.dead, props)
	} else {
		err = txn.ReplaceDataFilesWithDataFiles(ctx, m.removed, added, props)
	}
	if err != nil {
		return fmt.Errorf("%s: staging the snapshot: %w", m.what(), err)
	}
	return nil
}

// delta describes the staged change for conflict validation.
func (m *merger) delta() *Delta {
	meta := m.spec.Target.Metadata()
	op := "merge"
	if m.rw != nil {
		op = m.rw.verb
	}
	d := &Delta{
		what:      m.what(),
		op:        op,
		isolation: snapshot.Isolation(meta.Properties(), op),
		base:      m.spec.Snapshot,
		schemaID:  meta.CurrentSchema().ID,
		specID:    meta.DefaultPartitionSpec(),
		rewritten: m.removed,
		filter:    m.conflict,
		restage: func(ctx context.Context, txn *table.Transaction) error {
			return m.stageChange(ctx, txn)
		},
	}
	d.removedDeletes = append(d.removedDeletes, m.dead...)
	if m.pd != nil {
		d.referenced = m.pd.Targets()
		d.removedDeletes = append(d.removedDeletes, m.pd.superseded...)
	}
	return d
}

// completeDeletes gives each task planned under the early filter every
// delete file that applies to its data file (CompleteDeletes).
func (m *merger) completeDeletes(ctx context.Context, tasks []table.FileScanTask) ([]table.FileScanTask, []table.FileScanTask, error) {
	return CompleteDeletes(ctx, m.spec.Target, m.spec.Snapshot, m.snapshotOpts(), tasks)
}

// CompleteDeletes gives each task planned under a row filter every
// equality delete file that applies to its data file, by planning snap
// again without the filter (with scanOpts). iceberg-go prunes delete
// files by the scan filter too (an equality delete whose keys the filter
// rules out cannot hide a row the filter keeps), which is right for a
// filtered read but not for a write: a changed file is read whole and
// rewritten, or its live rows are counted for position deletes, and a row
// hidden by a pruned delete would come back.
//
// It also returns the unfiltered plan (every data file of snap, for
// DeadDeleteFiles), or nil when snap has no equality deletes and the tasks
// were left as they were.
func CompleteDeletes(ctx context.Context, tbl *table.Table, snap *table.Snapshot, scanOpts []table.ScanOption, tasks []table.FileScanTask) (_, all []table.FileScanTask, _ error) {
	if len(tasks) == 0 || snap == nil {
		return tasks, nil, nil
	}
	if n, ok := snap.Summary.Properties["total-equality-deletes"]; ok && n == "0" {
		return tasks, nil, nil
	}
	sc := tbl.Scan(scanOpts...)
	all, err := scan.PlanWholeFiles(ctx, sc)
	sc.Close()
	if err != nil {
		return nil, nil, err
	}
	byPath := make(map[string]table.FileScanTask, len(all))
	for _, t := range all {
		byPath[t.File.FilePath()] = t
	}
	for i, t := range tasks {
		full, ok := byPath[t.File.FilePath()]
		if !ok {
			return nil, nil, fmt.Errorf("data file %s is planned under the filter but not without it (broken invariant)", relPath(tbl, t.File.FilePath()))
		}
		tasks[i].DeleteFiles = full.DeleteFiles
		tasks[i].EqualityDeleteFiles = full.EqualityDeleteFiles
		tasks[i].DeletionVectorFiles = full.DeletionVectorFiles
	}
	return tasks, all, nil
}
