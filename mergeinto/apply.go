package mergeinto

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
)

// batchOut is what one target batch becomes.
type batchOut struct {
	changed bool
	// out replaces the input batch when changed: its kept rows (when there
	// are any, and not in merge-on-read, which never writes them), then
	// the updated rows, or (inPlace) all of them in order. Owned by the
	// receiver.
	out  []arrow.RecordBatch
	kept int64
	// changedPos holds the file positions (among live rows) of the rows
	// updated or deleted, ascending: what a merge-on-read sink turns into
	// position deletes, writing out[1:] (or out when kept == 0) as new rows.
	changedPos []int64
	// updRows: the last len(updRows) batches of out are a MERGE's updated
	// rows, and updRows[i] the row of the input batch each row of the
	// i-th of them updates (what a patched row group puts back in place).
	updRows [][]int32
	// inPlace: out is one batch, the input's rows in order with the
	// updated ones in place (inplace.go); updRows is nil.
	inPlace bool
}

// fileSink receives one data file's batches and what the clauses made of
// them, and decides how the change is written. Copy-on-write
// (fileRewrite) rewrites the file; merge-on-read (morSink, mor.go) writes
// position deletes for batchOut.changedPos plus the updated rows.
type fileSink interface {
	emit(ctx context.Context, in arrow.RecordBatch, o batchOut) error
	// finish ends the file; read is how many live rows it yielded.
	finish(ctx context.Context, read int64) error
	releaseBuffer()
}

var _ fileSink = (*fileRewrite)(nil)

// mergeFile reads one candidate data file through read, applies the
// clauses to its rows, and rewrites it when a row changed. direct: read
// reads the file here and now (no read-ahead), so the merge may read it
// another way (key columns first, rgcopy.go). rw is the file's
// copy-on-write state when the caller made it (a read-ahead worker did),
// else nil.
func (m *merger) mergeFile(ctx context.Context, task table.FileScanTask, read batchReader, direct bool, rw *fileRewrite) error {
	var fr fileSink
	switch {
	case m.mor:
		fr = &morSink{m: m, fd: m.pd.File(task)}
	case rw == nil:
		rw = m.newFileRewrite(ctx, task)
		fr = rw
	default:
		fr = rw
	}
	defer fr.releaseBuffer()
	if rw != nil && direct && m.keyFirst(rw) {
		return m.mergeRowGroups(ctx, task, rw)
	}
	var pos int64
	apply := func(b arrow.RecordBatch, groups []int32) error {
		o, err := m.applyBatch(b, groups, task, pos, false)
		pos += b.NumRows()
		if err != nil {
			return err
		}
		return fr.emit(ctx, b, o)
	}
	err := read(func(b arrow.RecordBatch, groups []int32) error {
		if rw == nil {
			return apply(b, groups)
		}
		// a batch spanning row groups goes in pieces, one per group
		return rw.pieces(pos, b, func(s arrow.RecordBatch, lo, hi int64) error {
			return apply(s, groups[lo:hi])
		})
	})
	if err != nil {
		return err
	}
	return fr.finish(ctx, pos)
}

// batchReader calls fn with each batch of one target file, in order, and
// the source group each row's key probes to (fn owns neither), until fn
// fails.
type batchReader func(fn func(b arrow.RecordBatch, groups []int32) error) error

// reader reads task here and now, probing each batch.
func (m *merger) reader(ctx context.Context, task table.FileScanTask) batchReader {
	return func(fn func(arrow.RecordBatch, []int32) error) error {
		return m.readFile(ctx, task, func(b arrow.RecordBatch) (bool, error) {
			groups, err := m.src.Probe(m.ec, b, m.p.probeKeys)
			if err != nil {
				return false, m.probeError(err)
			}
			return true, fn(b, groups)
		})
	}
}

// reader takes file i's batches from the workers.
func (ra *readAhead) reader(i int) batchReader {
	return func(fn func(arrow.RecordBatch, []int32) error) error {
		ra.m.res.Metrics.BytesRead += ra.feeds[i].task.File.FileSizeBytes()
		for {
			it, ok, err := ra.take(i)
			if !ok {
				return err
			}
			err = fn(it.b, it.groups)
			it.b.Release()
			ra.done(it)
			if err != nil {
				return err
			}
		}
	}
}

func (m *merger) probeError(err error) error {
	return fmt.Errorf("merge into %s: probing: %w", m.p.name, err)
}

// fileRewrite is the copy-on-write state of one data file.
//
// The file is read as groups of rows: its row groups when the unchanged
// ones may be copied verbatim (rgcopy.go; batches then never span two),
// else the whole file as one group. Until a group's first changed row,
// its batches are only buffered (up to Options.BufferLimit bytes, then
// let go and re-read if needed). From that row on, the rest of the group
// streams into a writer, or, for an UPDATE (or a MERGE that only
// updates) that may patch row groups (setLeaf), only the group's SET
// columns are kept, to be encoded alone
// when it ends. A group that ends unchanged is let go, and listed for the
// copy; a file in which no group changed is not written.
type fileRewrite struct {
	m       *merger
	task    table.FileScanTask
	touched bool // some group changed: the file is replaced

	meta     *metadata.FileMetaData // the footer, when groups are row groups
	ends     []int64                // each row group's end (rows); nil: one group
	g        int                    // the group being read
	gStart   int64                  // where it starts
	gChanged bool
	pos      int64 // rows read so far
	copyRGs  []int // unchanged row groups, to copy verbatim

	// setLeaf[k] is the file's Parquet leaf column of the k-th column
	// the statement's updates set (merger.setCols), when row groups may
	// be patched; gCols holds the SET
	// columns of the group being patched; patches the groups patched.
	setLeaf  []int
	gCols    [][]arrow.Array
	gKept    int64 // rows of the group being patched that keep their values
	colBytes int64
	patches  map[int]*patch
	// awaiting: finished reading, its patches still encoding (settle
	// completes it); read is the rows it read, for the ledger
	awaiting bool
	read     int64

	buf      []arrow.RecordBatch
	bufBytes int64
	replay   int64 // rows of the group's unchanged prefix let go; re-read on change
	copied   int64

	// narrow: the row groups hit were read without the columns the
	// statement does not need (merger.narrowColumns), NULL in their
	// place, so no row of a batch is ever written as it is. A group that
	// cannot be patched is read again whole when it ends (deferring),
	// from deferFrom on, with the updates held in deferred put in place
	// (deferred.go). unreadChunks counts the column chunks left unread,
	// for the metrics.
	narrow       bool
	deferring    bool
	deferFrom    int64
	deferred     []deferredUpdates
	deferBytes   int64
	unreadChunks int64

	// sparse: the file's patched groups are read without their SET
	// columns, and their updates held alone (sparse.go). setRead is how
	// each SET column is read when a group is patched; gSparse marks the
	// group being read as patched so, gUpd its updates (gUpdBytes of the
	// budget), gReadBytes the budget of its patch's read.
	sparse     bool
	setRead    []directColumn
	gSparse    bool
	gUpd       []deferredUpdates
	gUpdBytes  int64
	gReadBytes int64

	w *fileWriter
}

// newFileRewrite starts the copy-on-write of task's file.
func (m *merger) newFileRewrite(ctx context.Context, task table.FileScanTask) *fileRewrite {
	f := &fileRewrite{m: m, task: task}
	if m.canChange {
		patching := m.patching()
		f.meta, f.ends = m.rowGroupLayout(ctx, task, patching)
		if patching && f.meta != nil {
			f.setLeaf = m.columnLayout(task, f.meta)
			if f.setLeaf == nil && len(f.ends) < 2 {
				f.meta, f.ends = nil, nil
			}
		}
	}
	return f
}

// pieces calls fn with b, whose first row is the file's row pos, cut
// where a row group ends: each piece and its rows [lo, hi) within b (b
// itself when it lies in one group).
func (f *fileRewrite) pieces(pos int64, b arrow.RecordBatch, fn func(s arrow.RecordBatch, lo, hi int64) error) error {
	n := b.NumRows()
	piece := func(lo, hi int64) error {
		if lo == 0 && hi == n {
			return fn(b, lo, hi)
		}
		s := b.NewSlice(lo, hi)
		defer s.Release()
		return fn(s, lo, hi)
	}
	lo := int64(0)
	for _, end := range f.ends {
		if end <= pos+lo {
			continue
		}
		if end >= pos+n {
			break
		}
		if err := piece(lo, end-pos); err != nil {
			return err
		}
		lo = end - pos
	}
	return piece(lo, n)
}

func (f *fileRewrite) releaseBuffer() {
	releaseBatches(f.buf)
	f.m.spec.Budget.Release(f.bufBytes)
	f.buf, f.bufBytes = nil, 0
	f.releaseCols()
	f.releaseDeferred()
	f.releaseSparse()
}

func (f *fileRewrite) releaseCols() {
	for _, cs := range f.gCols {
		releaseAll(cs)
	}
	f.m.spec.Budget.Release(f.colBytes)
	f.gCols, f.colBytes = nil, 0
}

// groupRange is the rows [from, to) of row group g.
func (f *fileRewrite) groupRange(g int) [2]int64 {
	r := [2]int64{0, f.ends[g]}
	if g > 0 {
		r[0] = f.ends[g-1]
	}
	return r
}

// groupRuns are the runs [a, b) of adjacent row groups for which keep
// holds.
func (f *fileRewrite) groupRuns(keep func(g int) bool) [][2]int {
	var runs [][2]int
	for g := range f.ends {
		if !keep(g) {
			continue
		}
		if k := len(runs); k > 0 && runs[k-1][1] == g {
			runs[k-1][1] = g + 1
		} else {
			runs = append(runs, [2]int{g, g + 1})
		}
	}
	return runs
}

// runRows are the file rows [from, to) of the row groups of run r.
func (f *fileRewrite) runRows(r [2]int) (from, to int64) {
	return f.groupRange(r[0])[0], f.groupRange(r[1] - 1)[1]
}

// runTask is task narrowed to the bytes of the row groups of run r
// (rangesReadable must hold), without the early filter's residual: a
// run's rows are read whole, every one counted.
func (f *fileRewrite) runTask(task table.FileScanTask, r [2]int) table.FileScanTask {
	task.Residual = nil
	offsets := rowGroupOffsets(f.meta)
	task.Start = offsets[r[0]]
	task.Length = task.File.FileSizeBytes() - task.Start
	if r[1] < len(offsets) {
		task.Length = offsets[r[1]] - task.Start
	}
	return task
}

// unordered gives the row groups up: the statement yields the file's rows
// out of file order (a rewrite whose plan joins), so a row's place in
// the stream is not its place in the file, and a group's rows are not
// the row group's. The whole file becomes one group, as if read that way
// from the start: the rows of the groups closed unchanged or patched,
// let go, are read again (the statement yields the same rows in the same
// order each run) and written if the file changed, or become the let-go
// prefix if nothing changed yet.
func (f *fileRewrite) unordered(ctx context.Context) error {
	var ranges [][2]int64
	for g := range f.ends {
		if _, ok := f.patches[g]; ok || slices.Contains(f.copyRGs, g) {
			ranges = append(ranges, f.groupRange(g))
		}
	}
	patchedNow := f.gCols != nil
	f.releaseCols()
	for _, p := range f.patches {
		f.copied -= p.kept // replayRows counts every row it writes
	}
	if patchedNow {
		f.copied -= f.gKept
	}
	f.copyRGs, f.patches, f.setLeaf, f.ends, f.meta = nil, nil, nil, nil, nil
	if !f.touched {
		// groups closed so far all ended unchanged: [0, gStart) is let go
		f.replay += f.gStart
		f.gStart = 0
		return nil
	}
	if patchedNow {
		// the group's rows so far were kept as SET columns only
		ranges = append(ranges, [2]int64{f.gStart, f.pos})
	}
	if len(ranges) > 0 {
		if err := f.replayRows(ctx, ranges, nil); err != nil {
			return err
		}
	}
	if f.gChanged {
		return nil
	}
	return f.startChange(ctx)
}

// startChange writes what the group kept unchanged so far (its let-go
// prefix, read again, and its buffer); from here on its rows stream into
// the writer.
func (f *fileRewrite) startChange(ctx context.Context) error {
	f.gChanged, f.touched = true, true
	if f.replay > 0 {
		if err := f.replayRows(ctx, [][2]int64{{f.gStart, f.gStart + f.replay}}, nil); err != nil {
			return err
		}
		f.replay = 0
	}
	buf := f.buf
	f.m.spec.Budget.Release(f.bufBytes)
	f.buf, f.bufBytes = nil, 0
	for i, b := range buf {
		f.copied += b.NumRows()
		if err := f.push(ctx, b); err != nil {
			releaseBatches(buf[i+1:])
			return err
		}
	}
	return nil
}

// skipTo moves to the file's row pos, closing the groups before it: the
// rows between were not read (mergeRowGroups), their groups unchanged.
func (f *fileRewrite) skipTo(ctx context.Context, pos int64) error {
	if err := f.advance(ctx); err != nil {
		return err
	}
	if pos > f.pos {
		f.pos = pos
		return f.advance(ctx)
	}
	return nil
}

// advance closes the groups that end at or before the current row.
func (f *fileRewrite) advance(ctx context.Context) error {
	for f.g < len(f.ends) && f.pos >= f.ends[f.g] {
		switch {
		case f.deferring:
			err := f.replayDeferred(ctx, f.ends[f.g])
			f.deferring = false
			if err != nil {
				return err
			}
		case f.gSparse:
			f.patchSparse(ctx)
		case f.gCols != nil:
			f.patchGroup(ctx)
		case !f.gChanged && f.ends[f.g] > f.gStart:
			f.copyRGs = append(f.copyRGs, f.g)
		}
		f.releaseBuffer()
		f.replay = 0
		f.gStart, f.gChanged = f.ends[f.g], false
		f.g++
	}
	return nil
}

// patchGroup starts encoding the SET columns of the group ending now
// (rgcopy.go), on a goroutine; complete waits for it, and if it could not
// be done, reads the group's rows again and writes them whole.
func (f *fileRewrite) patchGroup(ctx context.Context) {
	p := f.addPatch(false)
	cols, bytes := f.gCols, f.colBytes
	f.gCols, f.colBytes = nil, 0 // the patch's now
	f.m.startPatch(ctx, p, f.meta, f.setLeaf, cols, bytes, f.ends[f.g]-f.gStart, chunkBytes(f.meta, f.g, f.setLeaf))
}

// addPatch records a patch (sparse or not) of the group ending now.
func (f *fileRewrite) addPatch(sparse bool) *patch {
	p := &patch{kept: f.gKept, done: make(chan struct{}), sparse: sparse}
	if f.patches == nil {
		f.patches = map[int]*patch{}
	}
	f.patches[f.g] = p
	return p
}

// chunkBytes are the bytes the column chunks leaves of row group g of meta
// take in the file.
func chunkBytes(meta *metadata.FileMetaData, g int, leaves []int) int64 {
	var size int64
	for _, leaf := range leaves {
		size += meta.RowGroups[g].Columns[leaf].MetaData.GetTotalCompressedSize()
	}
	return size
}

// awaitPatches waits for the file's patches to be encoded; the rows of
// the groups whose patch failed (but not on cancellation) are read again
// and written whole.
//
// A MERGE's failed patch kept the group's SET columns (patch.set): the
// rows read again take them, so its updates are written. (An UPDATE's
// rows read again are the statement's output, updates applied.)
func (f *fileRewrite) awaitPatches(ctx context.Context) error {
	var failed [][2]int64
	var sets [][][]arrow.Array
	var held []*patch
	defer func() {
		for _, p := range held {
			p.freeSet(f.m.spec.Budget)
		}
	}()
	type sparseFailure struct {
		g    int
		held []deferredUpdates
	}
	var sparse []sparseFailure // the sparse patches that failed
	for _, g := range slices.Sorted(maps.Keys(f.patches)) {
		p := f.patches[g]
		<-p.done
		f.m.res.Metrics.BytesRead += p.read
		if p.set != nil || p.held != nil {
			held = append(held, p)
		}
		if p.err == nil {
			continue
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		delete(f.patches, g)
		if p.sparse {
			if p.held == nil {
				return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: a row group of data file %s could not be patched (%v), and its updates were not kept (broken invariant)", f.m.what(), f.m.relPath(f.task.File.FilePath()), p.err)}
			}
			// replayHeld counts the rows it writes that keep their values
			f.copied -= p.kept
			sparse = append(sparse, sparseFailure{g, p.held})
			continue
		}
		if f.m.rw == nil && p.set == nil {
			return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: a row group of data file %s could not be patched (%v), and its new values were not kept (broken invariant)", f.m.what(), f.m.relPath(f.task.File.FilePath()), p.err)}
		}
		if p.set == nil {
			f.copied -= p.kept // replayRows counts every row it writes
		}
		failed = append(failed, f.groupRange(g))
		sets = append(sets, p.set)
	}
	for _, sf := range sparse {
		r := f.groupRange(sf.g)
		if err := f.replayHeld(ctx, sf.g, r[0], r[1], sf.held); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return f.replayRows(ctx, failed, sets)
	}
	return nil
}

// collect keeps the SET columns of b, one batch of the group being
// patched; false when the budget cannot hold them.
func (f *fileRewrite) collect(cols []arrow.Array) bool {
	var size int64
	for _, a := range cols {
		size += int64(a.Data().SizeInBytes())
	}
	if f.colBytes+size > f.m.opts.BufferLimit || f.m.spec.Budget.Reserve(size, "update column buffer") != nil {
		return false
	}
	f.colBytes += size
	for k, a := range cols {
		a.Retain()
		f.gCols[k] = append(f.gCols[k], a)
	}
	return true
}

// setColumns are the SET columns of one batch's rows, in file order, with
// the new values on the rows updated: of in when nothing changed, of an
// UPDATE's out (every row, in order), or a MERGE's input with its updated
// rows put back in place. ok is false when the batch lost rows (a
// delete), which a patch cannot express. The caller releases the arrays.
func (f *fileRewrite) setColumns(ctx context.Context, in arrow.RecordBatch, o batchOut) (cols []arrow.Array, ok bool, err error) {
	set := f.m.setCols
	n := in.NumRows()
	src := in
	switch {
	case !o.changed:
	case f.m.rw != nil || o.inPlace:
		if len(o.out) != 1 || o.out[0].NumRows() != n {
			return nil, false, nil
		}
		src = o.out[0]
	default:
		upd := o.out[len(o.out)-len(o.updRows):]
		idx := make([]int32, n)
		for r := range idx {
			idx[r] = int32(r)
		}
		base, moved := int32(n), int64(0)
		for i, rows := range o.updRows {
			for k, r := range rows {
				idx[r] = base + int32(k)
			}
			base += int32(upd[i].NumRows())
			moved += int64(len(rows))
		}
		if moved+o.kept != n {
			return nil, false, nil
		}
		for _, c := range set {
			parts := []arrow.Array{in.Column(c)}
			for _, u := range upd {
				parts = append(parts, u.Column(c))
			}
			all, err := array.Concatenate(parts, f.m.opts.Mem)
			if err != nil {
				releaseAll(cols)
				return nil, false, err
			}
			placed, err := takeCols(ctx, []arrow.Array{all}, idx)
			all.Release()
			if err != nil {
				releaseAll(cols)
				return nil, false, err
			}
			cols = append(cols, placed[0])
		}
		return cols, true, nil
	}
	for _, c := range set {
		a := src.Column(c)
		a.Retain()
		cols = append(cols, a)
	}
	return cols, true, nil
}

// unpatch stops patching the group: its rows so far, [gStart, upTo), are
// read again and written whole, and the rest of it streams as usual.
//
// A MERGE's rows read again take the SET columns kept (f.gCols): they
// hold the group's updates so far, which nothing else does. An UPDATE's
// rows read again are the statement's output, updates applied.
func (f *fileRewrite) unpatch(ctx context.Context, upTo int64) error {
	defer f.releaseCols()
	if f.m.rw == nil {
		return f.replayRows(ctx, [][2]int64{{f.gStart, upTo}}, [][][]arrow.Array{f.gCols})
	}
	f.copied -= f.gKept // replayRows counts every row it writes
	return f.replayRows(ctx, [][2]int64{{f.gStart, upTo}}, nil)
}

func (f *fileRewrite) emit(ctx context.Context, in arrow.RecordBatch, o batchOut) error {
	if !f.m.canChange {
		return nil
	}
	if err := f.advance(ctx); err != nil {
		return err
	}
	start := f.pos
	f.pos += in.NumRows()
	if f.deferring {
		defer releaseBatches(o.out)
		return f.deferRows(ctx, in, o, start)
	}
	if f.sparse {
		return f.emitSparse(ctx, in, o, start)
	}
	if f.gCols != nil {
		// a group being patched keeps its SET columns only
		cols, ok, err := f.setColumns(ctx, in, o)
		if err != nil {
			releaseBatches(o.out)
			return err
		}
		ok = ok && f.collect(cols)
		releaseAll(cols)
		if ok {
			kept := in.NumRows()
			if o.changed {
				kept = o.kept
			}
			f.copied += kept
			f.gKept += kept
			releaseBatches(o.out)
			return nil
		}
		if err := f.unpatch(ctx, start); err != nil {
			releaseBatches(o.out)
			return err
		}
		if f.narrow {
			// the rest of the group is read again when it ends
			f.startDefer(start)
			defer releaseBatches(o.out)
			return f.deferRows(ctx, in, o, start)
		}
	}
	if !o.changed {
		if f.gChanged {
			if f.narrow {
				return f.narrowWrite()
			}
			in.Retain()
			f.copied += in.NumRows()
			return f.push(ctx, in)
		}
		// The buffer is reserved in the budget; when the budget is short
		// the rows are let go and re-read instead of failing.
		size := exec.BatchBytes(in)
		if f.replay > 0 || f.bufBytes+size > f.m.opts.BufferLimit || f.m.spec.Budget.Reserve(size, "merge buffer") != nil {
			for _, b := range f.buf {
				f.replay += b.NumRows()
			}
			f.releaseBuffer()
			f.replay += in.NumRows()
			return nil
		}
		in.Retain()
		f.buf = append(f.buf, in)
		f.bufBytes += size
		return nil
	}
	out := o.out
	defer func() { releaseBatches(out) }()
	if !f.gChanged {
		if f.setLeaf != nil && f.replay == 0 {
			// patch the group: keep the SET columns of its rows so far
			cols, ok, err := f.setColumns(ctx, in, o)
			if err != nil {
				return err
			}
			if ok {
				f.gChanged, f.touched = true, true
				f.gCols = make([][]arrow.Array, len(f.setLeaf))
				for _, b := range f.buf {
					bc, _, _ := f.setColumns(ctx, b, batchOut{}) // unchanged: cannot fail
					ok = ok && f.collect(bc)
					releaseAll(bc)
				}
				ok = ok && f.collect(cols)
			}
			releaseAll(cols)
			if ok {
				f.gKept = o.kept
				for _, b := range f.buf {
					f.gKept += b.NumRows()
				}
				f.copied += f.gKept
				releaseBatches(f.buf)
				f.m.spec.Budget.Release(f.bufBytes)
				f.buf, f.bufBytes = nil, 0
				return nil
			}
			f.releaseCols()
			f.gChanged = false
		}
		if f.narrow {
			// the group's rows so far kept their values; they and the
			// rest are read again when it ends
			f.releaseBuffer()
			f.replay = 0
			f.startDefer(f.gStart)
			return f.deferRows(ctx, in, o, start)
		}
		if err := f.startChange(ctx); err != nil {
			return err
		}
	}
	if f.narrow {
		return f.narrowWrite()
	}
	f.copied += o.kept
	for i, b := range out {
		out[i] = nil
		if err := f.push(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// narrowWrite is the error of a write of a narrow batch's rows as they
// are, which emit never makes: their unread columns are NULL.
func (f *fileRewrite) narrowWrite() error {
	return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: rows of data file %s read without some columns were about to be written (broken invariant)", f.m.what(), f.m.relPath(f.task.File.FilePath()))}
}

// replayRows re-reads the file's rows in ranges ([from, to) positions,
// ascending, apart), rows let go earlier, and writes them. sets, when
// not nil, may give a range the SET columns (merger.setCols, each as
// chunks) its rows are written with, in place of the ones read: a
// patched group's, with its updates. The rows written as read count as
// copied; a range written with its SET columns was counted when patched.
func (f *fileRewrite) replayRows(ctx context.Context, ranges [][2]int64, sets [][][]arrow.Array) error {
	var pos, n, want, plain int64
	ends := make([][][]int64, len(ranges)) // per range and SET column, its chunks' ends
	for i, r := range ranges {
		want += r[1] - r[0]
		if i >= len(sets) || sets[i] == nil {
			plain += r[1] - r[0]
			continue
		}
		if len(sets[i]) != len(f.m.setCols) {
			return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: %d SET columns kept for %d (broken invariant)", f.m.what(), len(sets[i]), len(f.m.setCols))}
		}
		ends[i] = make([][]int64, len(sets[i]))
		for k, chunks := range sets[i] {
			var at int64
			for _, c := range chunks {
				at += int64(c.Len())
				ends[i][k] = append(ends[i][k], at)
			}
			if at != r[1]-r[0] {
				return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: %d values of a SET column kept for rows [%d, %d) of data file %s (broken invariant)", f.m.what(), at, r[0], r[1], f.m.relPath(f.task.File.FilePath()))}
			}
		}
	}
	if want == 0 {
		return nil
	}
	last := ranges[len(ranges)-1][1]
	err := f.m.readFile(ctx, f.task, func(b arrow.RecordBatch) (bool, error) {
		lo, hi := pos, pos+b.NumRows()
		pos = hi
		for i, r := range ranges {
			a, z := max(lo, r[0]), min(hi, r[1])
			if a >= z {
				continue
			}
			n += z - a
			part := b.NewSlice(a-lo, z-lo)
			if ends[i] != nil {
				var err error
				if part, err = f.withSet(part, sets[i], ends[i], a-r[0]); err != nil {
					return false, err
				}
			}
			if err := f.push(ctx, part); err != nil {
				return false, err
			}
		}
		return pos < last, nil
	})
	if err != nil {
		return err
	}
	if n != want {
		return fmt.Errorf("%s: data file %s yielded %d of the %d rows to write again on a second read (broken invariant)", f.m.what(), f.m.relPath(f.task.File.FilePath()), n, want)
	}
	f.copied += plain
	return nil
}

// withSet returns b (which it releases) with its SET columns taken from
// set (chunks ending at ends), from row at on.
func (f *fileRewrite) withSet(b arrow.RecordBatch, set [][]arrow.Array, ends [][]int64, at int64) (arrow.RecordBatch, error) {
	defer b.Release()
	return f.m.withColumns(b, f.m.setCols, func(k int) (arrow.Array, error) {
		return sliceChunks(f.m.opts.Mem, set[k], ends[k], at, b.NumRows())
	})
}

// push writes b (which it owns), starting the writer on first use.
func (f *fileRewrite) push(ctx context.Context, b arrow.RecordBatch) error {
	if b.NumRows() == 0 {
		b.Release()
		return nil
	}
	if f.w == nil {
		if err := f.refused(); err != nil {
			b.Release()
			return err
		}
		f.w = f.m.newWriter(ctx)
	}
	return f.w.push(ctx, b)
}

// refused is the rewrite's refusal to write rows (RewriteSpec.RefuseRewrite).
func (f *fileRewrite) refused() error {
	if rw := f.m.rw; rw != nil {
		return rw.spec.RefuseRewrite
	}
	return nil
}

func (f *fileRewrite) finish(ctx context.Context, read int64) error {
	if err := f.advance(ctx); err != nil {
		return err
	}
	if !f.touched {
		return nil
	}
	f.read = read
	if len(f.patches) == 0 {
		if err := f.complete(ctx); err != nil {
			return err
		}
		if f.w == nil {
			return nil
		}
		f.w.closeInput() // every row is pushed
	} else {
		f.awaiting = true
	}
	// The writer is closed (and its last row group compressed), and the
	// patches encoded, while the next file is read; settle collects it.
	f.m.pending = append(f.m.pending, f)
	return nil
}

// complete copies the file's unchanged and patched row groups, once
// its patches are encoded, and records the file as replaced.
func (f *fileRewrite) complete(ctx context.Context) error {
	if err := f.awaitPatches(ctx); err != nil {
		return err
	}
	if len(f.copyRGs) > 0 || len(f.patches) > 0 {
		if err := f.copyGroups(ctx); err != nil {
			return err
		}
	}
	f.m.ledger.Read(f.task, f.read)
	mt := &f.m.res.Metrics
	f.m.removed = append(f.m.removed, f.task.File)
	f.m.removedTasks = append(f.m.removedTasks, f.task)
	mt.FilesRemoved++
	mt.RowsCopied += f.copied
	if f.w == nil && len(f.copyRGs)+len(f.patches) > 0 {
		// no row written: the copy replaces the file
		mt.FilesRewritten++
	}
	return nil
}

// copyGroups copies the unchanged and the patched row groups into a new
// data file; when that fails (but not on cancellation), their rows are
// read again and written like the changed groups' rows.
func (f *fileRewrite) copyGroups(ctx context.Context) error {
	if err := f.refused(); err != nil {
		return err
	}
	rgs := slices.Clone(f.copyRGs)
	for g := range f.patches {
		rgs = append(rgs, g)
	}
	slices.Sort(rgs)
	df, err := f.m.copyRowGroups(ctx, f.task, f.meta, rgs, f.patches, f.setLeaf)
	if err == nil {
		mt := &f.m.res.Metrics
		mt.RowGroupsCopied += int64(len(f.copyRGs))
		mt.RowGroupsPatched += int64(len(f.patches))
		mt.BytesCopied += df.FileSizeBytes()
		for _, p := range f.patches {
			mt.BytesCopied -= p.bytes()
			if p.sparse {
				mt.RowGroupsPatchedSparse++
			}
		}
		for _, g := range f.copyRGs {
			r := f.groupRange(g)
			f.copied += r[1] - r[0]
		}
		f.m.addFiles([]iceberg.DataFile{df})
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if f.m.rw == nil && len(f.patches) > 0 {
		// a MERGE's patched groups' new values are in their patches only
		return fmt.Errorf("%s: copying the row groups of data file %s: %w (the table property skade.write.copy-row-groups = false rewrites files whole)", f.m.what(), f.m.relPath(f.task.File.FilePath()), err)
	}
	ranges := make([][2]int64, len(rgs))
	for i, g := range rgs {
		ranges[i] = f.groupRange(g)
	}
	// the patched groups' rows were counted as copied; replayRows counts
	// every row it writes
	for _, p := range f.patches {
		f.copied -= p.kept
	}
	return f.replayRows(ctx, ranges, nil)
}

// settle waits for all but the last keep rewrites still being written and
// records their files.
func (m *merger) settle(ctx context.Context, keep int) error {
	for len(m.pending) > keep {
		f := m.pending[0]
		m.pending = m.pending[1:]
		if f.awaiting {
			f.awaiting = false
			if err := f.complete(ctx); err != nil {
				return err
			}
			if f.w == nil {
				continue
			}
		}
		files, err := f.w.finish()
		if err != nil {
			return fmt.Errorf("%s: rewriting data file %s: %w", m.what(), m.relPath(f.task.File.FilePath()), err)
		}
		if len(files) > 0 {
			m.res.Metrics.FilesRewritten++
		}
		m.addFiles(files)
	}
	return nil
}

// writeSchema is the layout of the batches the merge writes: the
// target's columns, then the lineage columns on a table with them.
func (m *merger) writeSchema() *arrow.Schema {
	if m.lin != nil {
		return m.lin.schema
	}
	return m.p.target
}

// insertSortKeys are the keys the inserted rows are sorted by: a table
// with a declared sort order gets its inserted rows sorted (as an
// INSERT's are); they are few next to the source, which the join holds
// already. None on a table without one.
func (m *merger) insertSortKeys() []exec.SortKey {
	return WriteSortKeys(m.spec.Target.Metadata(), m.writeSchema())
}

// newWriter starts a writer of new data files; an early insert's
// goroutine calls it beside the merger's.
func (m *merger) newWriter(ctx context.Context) *fileWriter {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	schema := m.writeSchema()
	if m.lin == nil && !m.directPlanned {
		m.directPlanned = true
		m.direct = planDirect(ctx, m.spec.Target, schema, m.opts.TargetFileSize)
	}
	w := startWriter(ctx, m.spec.Target, schema, append(slices.Clone(m.wopts), m.lin.writeOptions()...), m.direct)
	m.writers = append(m.writers, w)
	return w
}

func (m *merger) addFiles(files []iceberg.DataFile) {
	for _, df := range files {
		m.added = append(m.added, df)
		m.res.Metrics.FilesAdded++
		m.res.Metrics.BytesWritten += df.FileSizeBytes()
	}
}

// applyBatch joins one target batch with the source (groups: each row's
// source group, -1 for none) and applies the MATCHED and NOT MATCHED BY
// SOURCE clauses. pos is the position of b's
// first row in its file.
//
// sparse (a sparse file's, sparse.go): an UPDATE-only MERGE's out holds
// the updated rows alone, each batch with its updRows, as the file's
// sink holds only the updates.
func (m *merger) applyBatch(b arrow.RecordBatch, groups []int32, task table.FileScanTask, pos int64, sparse bool) (o batchOut, err error) {
	n := int(b.NumRows())
	rows, srcs, multi, err := m.match(b, groups)
	if err == nil && len(multi) > 0 {
		err = m.resolveMulti(b, rows, srcs, multi, task, pos)
	}
	if err != nil || !m.canChange {
		return o, err
	}
	var mRows, mSrc, sRows []int32
	if len(m.p.matched) > 0 {
		mRows, mSrc = rows, srcs
	}
	if m.bySourceChanges() {
		sRows = unmatchedRows(rows, n)
	}
	if len(mRows) == 0 && len(sRows) == 0 {
		return o, nil
	}
	drop := m.dropScratch(n)
	defer func() {
		if err != nil {
			releaseBatches(o.out)
			o = batchOut{}
		}
	}()
	o.out = append(o.out, nil) // slot for the kept rows
	for _, side := range []struct {
		rows, src []int32
		clauses   []Clause
	}{{mRows, mSrc, m.p.matched}, {sRows, nil, m.p.bySource}} {
		if len(side.rows) == 0 {
			continue
		}
		j, err := m.joinedRows(b, side.rows, side.src)
		if err != nil {
			return o, err
		}
		err = m.applyClauses(b, j, side.rows, side.clauses, drop, &o.out, &o.updRows)
		j.Release()
		if err != nil {
			return o, err
		}
	}
	// Only the rows of the two sides can be dropped; with one side (the
	// common case) its rows, ascending, are the only ones to look at.
	dropped := 0
	changed := func(r int32) {
		if drop[r] {
			o.changedPos = append(o.changedPos, pos+int64(r))
			dropped++
		}
	}
	switch {
	case len(sRows) == 0:
		for _, r := range mRows {
			changed(r)
		}
	case len(mRows) == 0:
		for _, r := range sRows {
			changed(r)
		}
	default:
		for r := range int32(n) {
			changed(r)
		}
	}
	if dropped == 0 {
		releaseBatches(o.out)
		return batchOut{}, nil
	}
	o.changed = true
	o.kept = int64(n - dropped)
	if m.mor {
		// Merge-on-read never writes a row it keeps: the file stays, and
		// position deletes hide the changed rows. out holds only the
		// updated rows.
		o.out = o.out[1:]
		return o, nil
	}
	if sparse && m.lin == nil && m.rw == nil && len(o.updRows) == len(o.out)-1 {
		o.out = o.out[1:] // the kept rows' slot, empty
		return o, nil
	}
	if m.lin == nil && m.rw == nil {
		// an UPDATE-only MERGE: the updated rows where they were
		upd := o.out[len(o.out)-len(o.updRows):]
		ib, ok, err := m.inPlace(b, upd, o.updRows, dropped)
		if err != nil {
			return o, err
		}
		if ok {
			releaseBatches(o.out)
			o.out, o.updRows, o.inPlace = []arrow.RecordBatch{ib}, nil, true
			return o, nil
		}
	}
	if dropped < n {
		keep := make([]int32, 0, n-dropped)
		for r := 0; r < n; r++ {
			if !drop[r] {
				keep = append(keep, int32(r))
			}
		}
		kb, err := m.takeBatch(b, keep)
		if err != nil {
			return o, err
		}
		o.out[0] = kb
	} else {
		o.out = o.out[1:]
	}
	return o, nil
}

// dropScratch returns n false flags in a buffer the merger reuses from
// batch to batch (a 10M-row MERGE allocated 10 MB of them, and 40 MB of
// match's results, for the garbage collector to clear).
func (m *merger) dropScratch(n int) []bool {
	if cap(m.dropBuf) < n {
		m.dropBuf = make([]bool, n)
	}
	d := m.dropBuf[:n]
	clear(d)
	return d
}

// match finds the rows of b that match a source row (rows, ascending)
// and the source row each matches (srcs), and marks matched source rows.
// Where MATCHED clauses exist and a target row matches more than one
// source row, multi holds all of them (in build order) for resolveMulti;
// srcs then holds the first.
//
// Only the matching rows are listed: a batch of a large target has few,
// and a dense per-row answer cost two more passes over 4 bytes a row
// (a 10M-row MERGE's apply loop spent most of its time there).
func (m *merger) match(b arrow.RecordBatch, groups []int32) (rows, srcs []int32, multi map[int32][]int32, err error) {
	jt := m.src.Table
	// The rule applies when some clause acts on matched rows; an
	// insert-only merge just skips the source rows that match.
	card := len(m.p.matched) > 0
	if m.spec.On == nil {
		for r, g := range groups {
			if g < 0 {
				continue
			}
			s := jt.First(g)
			rows = append(rows, int32(r))
			srcs = append(srcs, s)
			if card && jt.Count(g) > 1 {
				if multi == nil {
					multi = map[int32][]int32{}
				}
				for x := s; x >= 0; x = jt.Next(x) {
					multi[int32(r)] = append(multi[int32(r)], x)
				}
			}
			if jt.Count(g) == 1 {
				jt.SetMatched(s)
				continue
			}
			// A key shared by many source rows and many target rows is
			// marked once, not once per target row.
			if _, done := m.markedGroups[g]; done {
				continue
			}
			if m.markedGroups == nil {
				m.markedGroups = map[int32]struct{}{}
			}
			m.markedGroups[g] = struct{}{}
			for ; s >= 0; s = jt.Next(s) {
				jt.SetMatched(s)
			}
		}
		return rows, srcs, multi, nil
	}
	// A residual ON condition: the candidate pairs are checked in
	// batches, so a row's first match is kept per row.
	n := len(groups)
	if cap(m.matchBuf) < n {
		m.matchBuf = make([]int32, n)
	}
	match := m.matchBuf[:n]
	for i := range match {
		match[i] = -1
	}
	var pt, ps []int32
	flush := func() error {
		if len(pt) == 0 {
			return nil
		}
		j, err := m.joinedRows(b, pt, ps)
		if err != nil {
			return err
		}
		v, err := m.spec.On.Eval(m.ec, j)
		j.Release()
		if err != nil {
			return fmt.Errorf("merge into %s: ON: %w", m.p.name, err)
		}
		defer v.Release()
		for k := range pt {
			if !isTrue(v, k) {
				continue
			}
			r, s := pt[k], ps[k]
			switch {
			case match[r] < 0:
				match[r] = s
			case card:
				if multi == nil {
					multi = map[int32][]int32{}
				}
				if len(multi[r]) == 0 {
					multi[r] = append(multi[r], match[r])
				}
				multi[r] = append(multi[r], s)
			}
			jt.SetMatched(s)
		}
		pt, ps = pt[:0], ps[:0]
		return nil
	}
	for r, g := range groups {
		for s := jt.First(g); s >= 0; s = jt.Next(s) {
			pt = append(pt, int32(r))
			ps = append(ps, s)
		}
		if len(pt) >= m.opts.BatchSize {
			if err := flush(); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, nil, nil, err
	}
	for r, s := range match {
		if s >= 0 {
			rows = append(rows, int32(r))
			srcs = append(srcs, s)
		}
	}
	return rows, srcs, multi, nil
}

// unmatchedRows are the rows of a batch of n rows not in rows
// (ascending).
func unmatchedRows(rows []int32, n int) []int32 {
	out := make([]int32, 0, n-len(rows))
	next := int32(0)
	for _, r := range rows {
		for ; next < r; next++ {
			out = append(out, next)
		}
		next = r + 1
	}
	for ; next < int32(n); next++ {
		out = append(out, next)
	}
	return out
}

// resolveMulti decides the target rows that match more than one source
// row. Each (target, source) pair selects its MATCHED clause as a single
// match would; a row that more than one pair would change (an UPDATE or
// DELETE selected) is a *CardinalityError; a row exactly one pair changes
// takes that source row; a row none changes keeps its first match, which
// then changes nothing. rows and srcs are match's; srcs is updated.
func (m *merger) resolveMulti(b arrow.RecordBatch, rows, srcs []int32, multi map[int32][]int32, task table.FileScanTask, pos int64) error {
	several := make([]int32, 0, len(multi))
	for r := range multi {
		several = append(several, r)
	}
	slices.Sort(several)
	var pt, ps []int32
	for _, r := range several {
		for _, s := range multi[r] {
			pt = append(pt, r)
			ps = append(ps, s)
		}
	}
	j, err := m.joinedRows(b, pt, ps)
	if err != nil {
		return err
	}
	assign, err := m.fire(j, m.p.matched)
	j.Release()
	if err != nil {
		return err
	}
	var violation *CardinalityError
	for k := 0; k < len(pt); {
		r := pt[k]
		acting := -1
		for ; k < len(pt) && pt[k] == r; k++ {
			if a := assign[k]; a < 0 || m.p.matched[a].Action.Kind == ActionDoNothing {
				continue
			}
			if acting < 0 {
				acting = k
				continue
			}
			e := &CardinalityError{Table: m.p.name, File: m.relPath(task.File.FilePath()), Row: pos + int64(r),
				Key: m.renderKey(b, int(r)), Sources: [2]int64{int64(ps[acting]), int64(ps[k])}}
			if violation == nil {
				violation = e
			} else if len(violation.More) < 4 {
				violation.More = append(violation.More, e.describe())
			}
			for k < len(pt) && pt[k] == r {
				k++
			}
			break
		}
		if acting >= 0 {
			// every row of multi has a first match in rows
			i, _ := slices.BinarySearch(rows, r)
			srcs[i] = ps[acting]
		}
	}
	if violation != nil {
		return violation
	}
	return nil
}

// renderKey renders target row r's ON key values, "id=7, region=eu".
func (m *merger) renderKey(b arrow.RecordBatch, r int) string {
	var sb strings.Builder
	for i, c := range m.p.keyCols {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%s=%s", m.p.target.Field(c).Name, b.Column(c).ValueStr(r))
	}
	return sb.String()
}

// joinedRows builds joined rows from target rows tRows of b and source
// rows sRows (nil: a NULL source half).
func (m *merger) joinedRows(b arrow.RecordBatch, tRows, sRows []int32) (arrow.RecordBatch, error) {
	var tcols []arrow.Array
	var err error
	if b == nil {
		tcols = m.nullCols(m.p.target.Fields(), len(sRows))
	} else if tcols, err = takeCols(m.ec.Ctx, b.Columns()[:m.p.target.NumFields()], tRows); err != nil {
		return nil, err
	}
	var scols []arrow.Array
	n := len(tRows)
	if sRows == nil {
		scols = m.nullCols(m.p.source.Fields(), n)
	} else {
		n = len(sRows)
		if lo, ok := run(sRows); ok {
			// a run of source rows (an insert's new rows often are):
			// views of the build side's columns, which outlive the
			// statement's batches
			scols = make([]arrow.Array, len(m.src.Columns))
			for i, c := range m.src.Columns {
				scols[i] = array.NewSlice(c, int64(lo), int64(lo)+int64(n))
			}
		} else if scols, err = takeCols(m.ec.Ctx, m.src.Columns, sRows); err != nil {
			releaseAll(tcols)
			return nil, err
		}
	}
	return newBatch(m.p.joined, append(tcols, scols...), int64(n)), nil
}

// run reports whether idx is one run of consecutive rows from lo on.
func run(idx []int32) (lo int32, ok bool) {
	if len(idx) == 0 {
		return 0, false
	}
	lo = idx[0]
	for k, r := range idx {
		if r != lo+int32(k) {
			return 0, false
		}
	}
	return lo, true
}

// fire returns, for each row of j, the index of the first clause whose
// condition is TRUE, or -1. A clause's condition is evaluated only on the
// rows no earlier clause took, so it cannot fail on rows it never sees.
func (m *merger) fire(j arrow.RecordBatch, clauses []Clause) ([]int, error) {
	n := int(j.NumRows())
	assign := make([]int, n)
	undecided := make([]int32, n)
	for i := range assign {
		assign[i] = -1
		undecided[i] = int32(i)
	}
	for ci, c := range clauses {
		if len(undecided) == 0 {
			break
		}
		if c.Cond == nil {
			for _, r := range undecided {
				assign[r] = ci
			}
			break
		}
		sub := j
		if len(undecided) < n {
			var err error
			if sub, err = m.takeBatch(j, undecided); err != nil {
				return nil, err
			}
		} else {
			sub.Retain()
		}
		v, err := c.Cond.Eval(m.ec, sub)
		sub.Release()
		if err != nil {
			return nil, fmt.Errorf("merge into %s: %s: %w", m.p.name, c.Kind, err)
		}
		next := undecided[:0]
		for k, r := range undecided {
			if isTrue(v, k) {
				assign[r] = ci
			} else {
				next = append(next, r)
			}
		}
		v.Release()
		undecided = next
	}
	return assign, nil
}

// applyClauses applies clauses to joined rows j, whose row k is target row
// rows[k] of the batch: updated rows go to out, and updated or deleted
// rows are marked in drop.
func (m *merger) applyClauses(b, j arrow.RecordBatch, rows []int32, clauses []Clause, drop []bool, out *[]arrow.RecordBatch, updRows *[][]int32) error {
	assign, err := m.fire(j, clauses)
	if err != nil {
		return err
	}
	mt := &m.res.Metrics
	nt := m.p.target.NumFields()
	for ci, c := range clauses {
		if c.Action.Kind == ActionDoNothing {
			continue
		}
		var idx []int32
		for k, a := range assign {
			if a == ci {
				idx = append(idx, int32(k))
			}
		}
		if len(idx) == 0 {
			continue
		}
		for _, k := range idx {
			drop[rows[k]] = true
		}
		jc, err := m.takeBatch(j, idx)
		if err != nil {
			return err
		}
		switch c.Action.Kind {
		case ActionDelete:
			mt.RowsDeleted += int64(len(idx))
			err = m.returnRows(jc.Columns()[:nt], jc.Columns()[nt:], jc.Columns()[:nt], nil, ActionNameDelete, len(idx))
		case ActionUpdate:
			var cols []arrow.Array
			cols, err = m.updatedRows(jc, c.Action.Set)
			if err == nil {
				mt.RowsUpdated += int64(len(idx))
				err = m.returnRows(cols, jc.Columns()[nt:], jc.Columns()[:nt], cols, ActionNameUpdate, len(idx))
				nb := newBatch(m.p.target, cols, int64(len(idx)))
				// the batch rows updated, in nb's order
				at := make([]int32, len(idx))
				for k, i := range idx {
					at[k] = rows[i]
				}
				if err == nil && m.lin != nil {
					// an updated row keeps its _row_id (lineage.go)
					var ids arrow.Array
					if ids, err = m.lin.updatedIDs(m.ec.Ctx, b, at); err == nil {
						nb = m.lin.attach(m.opts.Mem, nb, ids, nil)
					}
				}
				*out = append(*out, nb)
				*updRows = append(*updRows, at)
			}
		}
		jc.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// updatedRows computes the new target rows of an UPDATE over joined rows.
func (m *merger) updatedRows(jc arrow.RecordBatch, set []Assignment) ([]arrow.Array, error) {
	nt := m.p.target.NumFields()
	cols := make([]arrow.Array, nt)
	for _, a := range set {
		v, err := a.Expr.Eval(m.ec, jc)
		if err != nil {
			releaseAll(cols)
			return nil, fmt.Errorf("merge into %s: UPDATE SET %s: %w", m.p.name, m.p.target.Field(a.Column).Name, err)
		}
		cols[a.Column] = v
	}
	for i := range cols {
		if cols[i] == nil {
			cols[i] = jc.Column(i)
			cols[i].Retain()
		}
	}
	// a column a narrow read left out is NULL here, and unchanged
	if err := m.checkNotNull(cols, "UPDATE", m.unread); err != nil {
		releaseAll(cols)
		return nil, err
	}
	return cols, nil
}

// insertUnmatched applies the NOT MATCHED clauses to the source rows that
// matched no target row and writes the inserted rows to new files. The
// rows an early insert took (insert_early.go) it leaves, and their
// writers it finishes with its own, writing to them too. Once every row
// is pushed it closes all its writers' inputs before waiting for any
// (closeInputs, waitAll): each holds its open row group until then.
// before, when not nil, runs between the two (finishWrites waits there
// for the updated rows' writer, whose files come first).
func (m *merger) insertUnmatched(ctx context.Context, before func() error) (err error) {
	if len(m.p.notMatched) == 0 {
		if before != nil {
			return before()
		}
		return nil
	}
	start := time.Now()
	var waited time.Duration // in before, not the insert's
	defer func() { m.res.Metrics.InsertTime = time.Since(start) - waited }()
	var ws []*fileWriter
	if e := m.early; e != nil {
		m.early = nil
		e.wait()
		m.res.Metrics.RowsInserted += e.inserted
		if e.err != nil {
			return e.err
		}
		ws = e.ws
	}
	keys := m.insertSortKeys()
	jt := m.src.Table
	next := func(dst []int32, from int32) ([]int32, int32) { return jt.AppendUnmatched(dst, from, m.opts.BatchSize) }
	if len(keys) > 0 {
		w, err := m.insertSorted(ctx, next, keys)
		if err != nil {
			return err
		}
		ws = append(ws, w)
	} else {
		// A large insert is written by several writers at once, each
		// taking a contiguous share of the source rows, so that encoding
		// and compression run on every core; each writes its own files.
		n := jt.UnmatchedRows()
		for len(ws) < insertWriters(n) {
			ws = append(ws, nil)
		}
		if err := m.pushInserts(ctx, ctx, next, n, ws, &m.res.Metrics.RowsInserted); err != nil {
			return err
		}
	}
	closeInputs(ws)
	if before != nil {
		t := time.Now()
		err := before()
		waited = time.Since(t)
		if err != nil {
			return err
		}
	}
	files, err := waitAll(ws)
	if err != nil {
		return fmt.Errorf("merge into %s: writing inserted rows: %w", m.p.name, err)
	}
	for _, fs := range files {
		m.addFiles(fs)
	}
	return nil
}

// insertWriters is how many writers share an insert of n rows.
func insertWriters(n int) int {
	return min(runtime.GOMAXPROCS(0), 4, max(1, n/insertRowsPerWriter))
}

// pushInserts applies the NOT MATCHED clauses to the source rows next
// lists (n of them, in order) and pushes the inserted rows to ws, each
// writer (started on first use, with wctx) taking a contiguous share of
// the rows. It adds the rows it inserts to *inserted. It reads the
// source's columns and writes to its own writers alone, so an early
// insert runs it beside the target's scan.
func (m *merger) pushInserts(ctx, wctx context.Context, next func(dst []int32, from int32) ([]int32, int32), n int, ws []*fileWriter, inserted *int64) error {
	share := max((n+len(ws)-1)/len(ws), 1)
	seen := 0
	return m.eachInsert(ctx, next, inserted, func(batches []arrow.RecordBatch, rows int) error {
		k := min(seen/share, len(ws)-1)
		seen += rows
		if len(batches) == 0 {
			return nil
		}
		if ws[k] == nil {
			ws[k] = m.newWriter(wctx)
		}
		return ws[k].pushAll(ctx, batches)
	})
}

// eachInsert applies the NOT MATCHED clauses to the source rows next
// lists, a batch of them at a time, adds the rows inserted to *inserted,
// and hands take each batch's inserted rows (which take then owns) and
// the number of source rows they came from.
func (m *merger) eachInsert(ctx context.Context, next func(dst []int32, from int32) ([]int32, int32), inserted *int64, take func(batches []arrow.RecordBatch, rows int) error) error {
	idx := make([]int32, 0, m.opts.BatchSize)
	for from := int32(0); ; {
		if err := ctx.Err(); err != nil {
			return err
		}
		if idx, from = next(idx[:0], from); len(idx) == 0 {
			return nil
		}
		j, err := m.joinedRows(nil, nil, idx)
		if err != nil {
			return err
		}
		batches, err := m.insertRows(j, inserted)
		j.Release()
		if err != nil {
			return err
		}
		if err := take(batches, len(idx)); err != nil {
			return err
		}
	}
}

// insertSorted inserts the rows next lists in the table's sort order:
// all of them are held, sorted, and pushed to one writer, which it
// returns (nil when no row is inserted) for the caller to finish.
func (m *merger) insertSorted(ctx context.Context, next func(dst []int32, from int32) ([]int32, int32), keys []exec.SortKey) (*fileWriter, error) {
	var held []arrow.RecordBatch
	defer func() { releaseBatches(held) }()
	err := m.eachInsert(ctx, next, &m.res.Metrics.RowsInserted, func(batches []arrow.RecordBatch, _ int) error {
		held = append(held, batches...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(held) == 0 {
		return nil, nil
	}
	sorted, err := sortBatches(ctx, held[0].Schema(), held, keys, exec.SortOptions{Mem: m.opts.Mem})
	held = nil // sortBatches took them
	if err != nil {
		return nil, fmt.Errorf("merge into %s: sorting inserted rows: %w", m.p.name, err)
	}
	w := m.newWriter(ctx)
	if err := w.pushAll(ctx, sorted); err != nil {
		return nil, err
	}
	return w, nil
}

// insertRowsPerWriter is how many inserted rows make another writer
// worth its extra file. Tests lower it (export_test.go).
var insertRowsPerWriter = 400_000

// insertRows applies the NOT MATCHED clauses to joined rows j, adding the
// rows it inserts to *inserted.
func (m *merger) insertRows(j arrow.RecordBatch, inserted *int64) (out []arrow.RecordBatch, err error) {
	defer func() {
		if err != nil {
			releaseBatches(out)
			out = nil
		}
	}()
	assign, err := m.fire(j, m.p.notMatched)
	if err != nil {
		return nil, err
	}
	nt := m.p.target.NumFields()
	for ci, c := range m.p.notMatched {
		if c.Action.Kind != ActionInsert {
			continue
		}
		n := 0
		for _, a := range assign {
			if a == ci {
				n++
			}
		}
		if n == 0 {
			continue
		}
		idx := make([]int32, 0, n)
		for k, a := range assign {
			if a == ci {
				idx = append(idx, int32(k))
			}
		}
		var jc arrow.RecordBatch
		if len(idx) == int(j.NumRows()) {
			// the clause takes every row, in order (idx counts up): j
			// itself, which joinedRows gathered for this call alone
			j.Retain()
			jc = j
		} else if jc, err = m.takeBatch(j, idx); err != nil {
			return out, err
		}
		cols := make([]arrow.Array, nt)
		for i, e := range c.Action.Values {
			if cols[i], err = e.Eval(m.ec, jc); err != nil {
				err = fmt.Errorf("merge into %s: INSERT value for %s: %w", m.p.name, m.p.target.Field(i).Name, err)
				break
			}
		}
		if err == nil {
			err = m.checkNotNull(cols, "INSERT", nil)
		}
		if err == nil {
			err = m.returnRows(cols, jc.Columns()[nt:], nil, cols, ActionNameInsert, len(idx))
		}
		jc.Release()
		if err != nil {
			releaseAll(cols)
			return out, err
		}
		*inserted += int64(len(idx))
		nb := newBatch(m.p.target, cols, int64(len(idx)))
		if m.lin != nil {
			nb = m.lin.attach(m.opts.Mem, nb, nil, nil) // new rows: new ids
		}
		out = append(out, nb)
	}
	return out, nil
}

// checkNotNull refuses a NULL in a NOT NULL column.
func (m *merger) checkNotNull(cols []arrow.Array, what string, skip []bool) error {
	for i, f := range m.p.target.Fields() {
		if !f.Nullable && cols[i].NullN() > 0 && (skip == nil || !skip[i]) {
			return &Error{State: StateNotNull, Msg: fmt.Sprintf("merge into %s: column %q is NOT NULL, but the %s would set it to NULL", m.p.name, f.Name, what)}
		}
	}
	return nil
}

// returnRows evaluates RETURNING on rows whose target half is tcols and
// source half scols (neither is released).
func (m *merger) returnRows(tcols, scols, oldCols, newCols []arrow.Array, action string, n int) error {
	if m.spec.Returning == nil {
		return nil
	}
	cols := make([]arrow.Array, 0, len(tcols)+len(scols)+2*len(tcols)+1)
	for _, c := range append(append([]arrow.Array(nil), tcols...), scols...) {
		c.Retain()
		cols = append(cols, c)
	}
	// the old row (NULL for an insert), then the new (NULL for a delete)
	for _, side := range [][]arrow.Array{oldCols, newCols} {
		if side == nil {
			cols = append(cols, m.nullCols(m.p.target.Fields(), n)...)
			continue
		}
		for _, c := range side {
			c.Retain()
			cols = append(cols, c)
		}
	}
	ab := array.NewStringBuilder(m.opts.Mem)
	for i := 0; i < n; i++ {
		ab.Append(action)
	}
	cols = append(cols, ab.NewArray())
	ab.Release()
	rb := newBatch(m.p.ret, cols, int64(n))
	defer rb.Release()
	out := make([]arrow.Array, len(m.spec.Returning))
	for i, e := range m.spec.Returning {
		v, err := e.Eval(m.ec, rb)
		if err != nil {
			releaseAll(out)
			return fmt.Errorf("merge into %s: RETURNING %s: %w", m.p.name, e, err)
		}
		out[i] = v
	}
	m.res.Returning = append(m.res.Returning, newBatch(m.p.retSchema, out, int64(n)))
	return nil
}

func isTrue(v arrow.Array, k int) bool {
	b, ok := v.(*array.Boolean)
	return ok && b.IsValid(k) && b.Value(k)
}

func (m *merger) takeBatch(b arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	cols, err := takeCols(m.ec.Ctx, b.Columns(), idx)
	if err != nil {
		return nil, err
	}
	return newBatch(b.Schema(), cols, int64(len(idx))), nil
}

// takeCols gathers rows idx of every column.
func takeCols(ctx context.Context, cols []arrow.Array, idx []int32) ([]arrow.Array, error) {
	ia := indexArray(idx)
	defer ia.Release()
	out := make([]arrow.Array, len(cols))
	for i, c := range cols {
		var t arrow.Array
		var err error
		if engineTakes(c.DataType()) {
			// the engine's own gather: arrow-go's compute call costs
			// microseconds of set-up each, and a MERGE gathers a few
			// rows of each column of every target batch
			t, err = exec.Take(compute.GetAllocator(ctx), c, idx)
		} else {
			t, err = compute.TakeArray(ctx, c, ia)
		}
		if err != nil {
			releaseAll(out)
			return nil, fmt.Errorf("merge: gather %s: %w", c.DataType(), err)
		}
		out[i] = t
	}
	return out, nil
}

// engineTakes reports whether exec.Take gathers columns of type dt: flat
// types (the rest, nested and dictionary columns, go through arrow-go).
func engineTakes(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.BOOL, arrow.STRING, arrow.BINARY,
		arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DATE32, arrow.DATE64,
		arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64, arrow.DECIMAL128:
		return true
	}
	return false
}

// indexArray views idx as an Int32 array without copying; release it
// before idx changes.
func indexArray(idx []int32) arrow.Array {
	buf := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(idx))
	d := array.NewData(arrow.PrimitiveTypes.Int32, len(idx), []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// newBatch assembles a batch from columns it takes ownership of.
func newBatch(schema *arrow.Schema, cols []arrow.Array, n int64) arrow.RecordBatch {
	b := array.NewRecordBatch(schema, cols, n)
	releaseAll(cols)
	return b
}

func releaseAll(cols []arrow.Array) {
	for _, c := range cols {
		if c != nil {
			c.Release()
		}
	}
}

func releaseBatches(bs []arrow.RecordBatch) {
	for _, b := range bs {
		if b != nil {
			b.Release()
		}
	}
}
