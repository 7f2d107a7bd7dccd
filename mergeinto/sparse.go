package mergeinto

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/scan"
)

// Sparse patches. A MERGE that only updates, whose clauses read none of
// the columns its SETs assign, and each of whose WHEN MATCHED UPDATEs
// assigns all of them (everyUpdateSetsAll: an update row's other SET
// columns would carry the target's values, which such a read leaves
// NULL), needs a patched row group's SET columns
// only to encode them again: the stored values of the rows it keeps, and
// the new values of the rows it updates. Such a file is read sparse: its
// row groups hit are read without the SET columns (NULL in the batches,
// as the other unread columns of a narrow read), and a group's updates
// alone are held, the updated rows' positions and new values
// (deferredUpdates). When the group ends, the patch reads the group's SET
// column chunks itself, on its own goroutine, puts the updates in place,
// and encodes them (encodeSparse).
//
// A fixed-width column of PLAIN pages without NULLs, and a string column
// dictionary-encoded throughout, are patched page by page, never made
// into Arrow arrays (fixedpatch.go, dictpatch.go). Where such a patch
// does not apply, the chunk is read through pqarrow: a string column
// whose data pages are all dictionary-encoded as its dictionary and
// indices, the updates becoming indices into it (new values appended to
// it), and it is written from them: the strings are never made one by
// one, nor hashed again (patchDict). In a spread MERGE setting a status
// column and a double, making and hashing the strings took a tenth of
// the CPU (BENCHMARKS.md, session 32).
//
// A sparse file is a narrow one (fileRewrite.narrow): no row of its
// batches is ever written as it is. Where a group cannot be patched
// (the budget cannot hold its updates or the read of its SET columns),
// it is deferred from its start (deferred.go), its held updates moving to
// the deferral; where its patch fails to encode, the group's rows are
// read again whole and written with the held updates in place
// (awaitPatches, replayHeld).

// sparseOff switches sparse patches off (a test's, export_test.go).
var sparseOff = false

// TestHookSparse, when set (by tests only), is called with the rows of
// each row group a sparse patch encodes.
var TestHookSparse func(rows int64)

// planSparse plans the sparse read of task's file (see above): the
// direct read of every column the statement needs but the SET columns,
// with f.setRead how each SET column is read when its group is patched;
// nil when the file does not qualify (some column is not read directly).
// It marks f sparse and narrow.
func (f *fileRewrite) planSparse(task table.FileScanTask) []directColumn {
	m := f.m
	full := m.directColumns(task, f.meta, m.unread)
	if full == nil {
		return nil
	}
	read := make([]directColumn, len(m.setCols))
	for k, c := range m.setCols {
		if c >= len(full) || full[c].leaf < 0 || full[c].leaf != f.setLeaf[k] {
			return nil
		}
		read[k] = full[c]
	}
	out := slices.Clone(full)
	for _, c := range m.setCols {
		out[c].leaf, out[c].dict = -1, false
	}
	f.setRead = read
	f.sparse, f.narrow = true, true
	return out
}

// emitSparse is emit for a sparse file: it holds the updates of in, the
// file's rows from start on (o: what the clauses made of it, its updated
// rows alone), and counts the rows kept. The caller has dealt with a
// deferred group.
func (f *fileRewrite) emitSparse(ctx context.Context, in arrow.RecordBatch, o batchOut, start int64) error {
	defer releaseBatches(o.out)
	n := in.NumRows()
	if !o.changed {
		if f.gSparse {
			f.copied += n
			f.gKept += n
		}
		return nil
	}
	d, err := f.sparseUpdates(ctx, o, start, n)
	if err != nil {
		return err
	}
	m := f.m
	if !f.gSparse {
		// the group's first change: the rows before it keep their values
		if start < f.gStart {
			d.release()
			return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: rows from %d emitted in a row group from %d (broken invariant)", m.what(), start, f.gStart)}
		}
		need := f.sparseReadBytes(f.g)
		if need > m.opts.BufferLimit || m.spec.Budget.Reserve(need, "merge patch read") != nil {
			// no room to read the group's SET columns: defer it
			f.startDefer(f.gStart)
			return f.holdDeferred(ctx, d, start+n)
		}
		f.gSparse, f.gReadBytes = true, need
		f.gChanged, f.touched = true, true
		f.gKept = start - f.gStart
		f.copied += f.gKept
	}
	size := d.bytes()
	if f.gUpdBytes+size > m.opts.BufferLimit || m.spec.Budget.Reserve(size, "merge held updates") != nil {
		// no room for more updates: defer the group from its start,
		// the updates held so far with it
		f.copied -= f.gKept
		held, heldBytes := f.gUpd, f.gUpdBytes
		f.gUpd, f.gUpdBytes = nil, 0
		f.releaseSparse()
		f.startDefer(f.gStart)
		f.deferred, f.deferBytes = held, heldBytes
		return f.holdDeferred(ctx, d, start+n)
	}
	f.gUpd = append(f.gUpd, d)
	f.gUpdBytes += size
	f.copied += o.kept
	f.gKept += o.kept
	return nil
}

// sparseUpdates are the updates of o, the updated rows alone of a batch
// of n rows, the file's rows from start on (applyBatch's sparse out):
// their positions, ascending, and their SET columns' values.
func (f *fileRewrite) sparseUpdates(ctx context.Context, o batchOut, start, n int64) (deferredUpdates, error) {
	m := f.m
	order, sorted, ok := updateOrder(o.updRows, int(n-o.kept))
	if !ok || len(o.out) != len(o.updRows) || int64(len(o.changedPos)) != n-o.kept {
		return deferredUpdates{}, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: a batch of a row group read sparse holds rows other than its updated ones (broken invariant)", m.what())}
	}
	d := deferredUpdates{pos: make([]int64, len(sorted))}
	for k, r := range sorted {
		d.pos[k] = start + int64(r)
	}
	for _, c := range m.setCols {
		vals, err := m.updatedValues(ctx, o.out, c, order)
		if err != nil {
			d.release()
			return deferredUpdates{}, err
		}
		d.vals = append(d.vals, vals)
	}
	return d, nil
}

// bytes is what d holds.
func (d deferredUpdates) bytes() int64 {
	size := int64(len(d.pos)) * 8
	for _, a := range d.vals {
		size += int64(a.Data().SizeInBytes())
	}
	return size
}

// holdDeferred holds d, the updates of a deferred group's batch ending
// at the file's row end. When the budget cannot hold them, the group's
// rows up to end are read again and written now, with every update held
// and d's.
func (f *fileRewrite) holdDeferred(ctx context.Context, d deferredUpdates, end int64) error {
	size := d.bytes()
	f.deferred = append(f.deferred, d)
	if f.deferBytes+size <= f.m.opts.BufferLimit && f.m.spec.Budget.Reserve(size, "merge deferred updates") == nil {
		f.deferBytes += size
		return nil
	}
	// no room: write the group's rows up to here now
	err := f.replayDeferred(ctx, end)
	f.deferFrom = end
	return err
}

// sparseReadBytes are the bytes held while row group g's SET columns are
// read and patched: what they take decoded (by the footer), an index or
// offset and a validity bit a row, twice (the column read and patched).
func (f *fileRewrite) sparseReadBytes(g int) int64 {
	r := f.groupRange(g)
	rows := r[1] - r[0]
	var size int64
	for _, leaf := range f.setLeaf {
		size += f.meta.RowGroups[g].Columns[leaf].MetaData.GetTotalUncompressedSize() + rows*4 + rows/8 + 1
	}
	return 2 * size
}

// releaseSparse lets go of the group's held updates and the budget of
// its read.
func (f *fileRewrite) releaseSparse() {
	for _, d := range f.gUpd {
		d.release()
	}
	f.m.spec.Budget.Release(f.gUpdBytes + f.gReadBytes)
	f.gUpd, f.gUpdBytes, f.gReadBytes, f.gSparse = nil, 0, 0, false
}

// patchSparse starts the sparse patch of the group ending now.
func (f *fileRewrite) patchSparse(ctx context.Context) {
	p := f.addPatch(true)
	held, heldBytes, readBytes := f.gUpd, f.gUpdBytes, f.gReadBytes
	f.gUpd, f.gUpdBytes, f.gReadBytes, f.gSparse = nil, 0, 0, false // the patch's now
	f.m.startSparsePatch(ctx, p, sparseGroup{task: f.task, meta: f.meta, g: f.g, from: f.gStart, rows: f.ends[f.g] - f.gStart,
		setLeaf: f.setLeaf, setRead: f.setRead}, held, heldBytes, readBytes)
}

// sparseGroup is a row group a sparse patch reads and encodes.
type sparseGroup struct {
	task       table.FileScanTask
	meta       *metadata.FileMetaData
	g          int
	from, rows int64 // the group's first row in the file, and its rows
	setLeaf    []int
	setRead    []directColumn
}

// startSparsePatch encodes group sg's sparse patch into p on a goroutine,
// as startPatch does: held are its updates (bytes heldBytes of the
// budget), readBytes the budget of its read, all the patch's to let go.
// A MERGE's failed patch keeps held (patch.held): its updates are
// nowhere else.
func (m *merger) startSparsePatch(ctx context.Context, p *patch, sg sparseGroup, held []deferredUpdates, heldBytes, readBytes int64) {
	m.runPatch(ctx, p, func() (*patch, error) {
		defer func() {
			m.spec.Budget.Release(readBytes)
			readBytes = 0
		}()
		enc, read, err := m.encodeSparse(ctx, sg, held)
		p.read = read
		return enc, err
	}, func() bool {
		p.held, p.heldBytes = held, heldBytes
		return true
	}, func() {
		for _, d := range held {
			d.release()
		}
		m.spec.Budget.Release(heldBytes + readBytes)
	})
}

// encodeSparse reads row group sg's SET column chunks, puts the updates
// held in place, and encodes the patch; read is the bytes it read.
func (m *merger) encodeSparse(ctx context.Context, sg sparseGroup, held []deferredUpdates) (_ *patch, read int64, err error) {
	if TestHookSparse != nil {
		TestHookSparse(sg.rows)
	}
	fail := func(err error) error {
		return fmt.Errorf("%s: reading data file %s: %w", m.what(), m.relPath(sg.task.File.FilePath()), err)
	}
	// the updates, as rows of the group and one array of values a column
	var rows []int32
	for _, d := range held {
		for _, p := range d.pos {
			r := p - sg.from
			if r < 0 || r >= sg.rows || len(rows) > 0 && int32(r) <= rows[len(rows)-1] {
				return nil, 0, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: an update of row %d held for the row group [%d, %d) (broken invariant)", m.what(), p, sg.from, sg.from+sg.rows)}
			}
			rows = append(rows, int32(r))
		}
	}
	vals := make([]arrow.Array, len(m.setCols))
	defer func() { releaseAll(vals) }()
	for k := range vals {
		parts := make([]arrow.Array, len(held))
		for i, d := range held {
			parts[i] = d.vals[k]
		}
		if vals[k], err = concatParts(m.opts.Mem, parts); err != nil {
			return nil, 0, err
		}
	}
	fsys, err := m.spec.Target.FS(ctx)
	if err != nil {
		return nil, 0, fail(err)
	}
	src, err := fsys.Open(sg.task.File.FilePath())
	if err != nil {
		return nil, 0, fail(err)
	}
	defer src.Close()
	pr, err := file.NewParquetReader(src, file.WithMetadata(sg.meta))
	if err != nil {
		return nil, 0, fail(err)
	}
	defer pr.Close()
	read = chunkBytes(sg.meta, sg.g, sg.setLeaf)
	// fixed-width and dictionary-encoded string columns page by page
	// (fixedpatch.go, dictpatch.go), the rest (by their place in
	// m.setCols) through pqarrow
	paged := map[int]pagedChunk{}
	var rest, restCols, restLeaf []int
	wprops := writerProps(m.spec.Target.Properties(), nil, sg.rows)
	limit := stringDictLimit(m.spec.Target.Properties())
	for k, c := range m.setCols {
		typ, leaf := m.p.target.Field(c).Type, sg.setLeaf[k]
		var pc pagedChunk
		ok := false
		if w := scan.FixedWidth(typ, sg.meta.Schema.Column(leaf)); w > 0 {
			m.patchNaN.note(int(sg.meta.Schema.Column(leaf).SchemaNode().FieldID()), vals[k])
			if pc, ok, err = fixedPatch(pr, sg.g, leaf, sg.rows, rows, vals[k], w, wprops, m.opts.Mem); ok && TestHookFixed != nil {
				TestHookFixed(sg.rows)
			}
		} else if s, isStr := vals[k].(*array.String); isStr && sg.setRead[k].dict && typ.ID() == arrow.STRING {
			if pc, ok, err = dictPatch(pr, sg.g, leaf, sg.rows, rows, s, limit, wprops, m.opts.Mem); ok && TestHookDictPaged != nil {
				TestHookDictPaged(sg.rows)
			}
		}
		if err != nil {
			return nil, read, fail(fmt.Errorf("column %q: %w", m.p.target.Field(c).Name, err))
		}
		if ok {
			paged[k] = pc
			continue
		}
		rest, restCols, restLeaf = append(rest, k), append(restCols, c), append(restLeaf, sg.setLeaf[k])
	}
	if len(rest) == 0 {
		if TestHookPatch != nil {
			if err := TestHookPatch(sg.rows); err != nil {
				return nil, read, err
			}
		}
		return &patch{paged: paged}, read, nil
	}
	// batches of the scan's size: arrow-go's dictionary decoder takes
	// scratch of 17 bytes a row of the batch, anew for each column chunk
	props := pqarrow.ArrowReadProperties{BatchSize: int64(scan.ReadBatchRows(m.opts.BatchSize))}
	for _, k := range rest {
		props.SetReadDict(sg.setRead[k].leaf, sg.setRead[k].dict)
	}
	// read into the scan's pooled buffers, as readDirect does: fresh
	// ones are zeroed by the runtime, a page at a time
	fr, err := pqarrow.NewFileReader(pr, props, scan.ReadBuffers)
	if err != nil {
		return nil, read, fail(err)
	}
	rr, err := fr.GetRecordReader(ctx, restLeaf, []int{sg.g})
	if err != nil {
		return nil, read, fail(err)
	}
	defer rr.Release()
	chunks := make([][]arrow.Array, len(rest))
	defer func() {
		for _, cs := range chunks {
			releaseAll(cs)
		}
	}()
	var got int64
	for rr.Next() {
		rec := rr.RecordBatch()
		got += rec.NumRows()
		for i := range chunks {
			a := rec.Column(i)
			a.Retain()
			chunks[i] = append(chunks[i], a)
		}
	}
	if err := rr.Err(); err != nil {
		return nil, read, fail(err)
	}
	if got != sg.rows {
		return nil, read, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: row group %d of data file %s yielded %d of its %d rows (broken invariant)", m.what(), sg.g, m.relPath(sg.task.File.FilePath()), got, sg.rows)}
	}
	cols := make([][]arrow.Array, len(rest))
	defer func() {
		for _, cs := range cols {
			releaseAll(cs)
		}
	}()
	for i, k := range rest {
		c := m.setCols[k]
		typ := m.p.target.Field(c).Type
		if sg.setRead[k].dict && typ.ID() == arrow.STRING {
			if out, ok := patchDict(m.opts.Mem, chunks[i], rows, vals[k], limit); ok {
				cols[i] = out
				continue
			}
		}
		// chunk by chunk: the updates of rows [lo, lo+len) of the group
		lo, u := 0, 0
		for _, ch := range chunks[i] {
			n := ch.Len()
			e := u
			for e < len(rows) && int(rows[e]) < lo+n {
				e++
			}
			a, err := directArray(ctx, ch, typ, sg.setRead[k].dict)
			if err != nil {
				return nil, read, fail(fmt.Errorf("column %q: %w", m.p.target.Field(c).Name, err))
			}
			if e > u {
				local := make([]int32, e-u)
				for i, r := range rows[u:e] {
					local[i] = r - int32(lo)
				}
				v := array.NewSlice(vals[k], int64(u), int64(e))
				out, err := overlay(ctx, m.opts.Mem, a, local, v)
				v.Release()
				a.Release()
				if err != nil {
					return nil, read, err
				}
				a = out
			}
			cols[i] = append(cols[i], a)
			lo, u = lo+n, e
		}
		if u != len(rows) {
			return nil, read, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: %d of %d updates put in place (broken invariant)", m.what(), u, len(rows))}
		}
	}
	p, err := m.encodePatch(ctx, sg.meta, restCols, restLeaf, cols, sg.rows, chunkBytes(sg.meta, sg.g, restLeaf))
	if p != nil {
		p.paged = paged
	}
	return p, read, err
}

// patchDict is chunks, a string column read as its dictionary and
// indices (the batches of one column chunk, over one dictionary), with
// rows (ascending, of the chunks in turn) set to vals, in order: as
// indices into the dictionary, the values it lacks appended to it, every
// chunk over that one dictionary. ok is false, nothing returned, where
// the result could not be written from its dictionary (dictColumnWriter):
// the chunks' dictionaries differ, the dictionary or a value is the empty
// string (see stringDict.encode), the dictionary repeats a value, or it
// would grow past limit bytes.
func patchDict(mem memory.Allocator, chunks []arrow.Array, rows []int32, vals arrow.Array, limit int64) (_ []arrow.Array, ok bool) {
	vs, isStr := vals.(*array.String)
	if len(chunks) == 0 || !isStr || vs.Len() != len(rows) {
		return nil, false
	}
	var dict *array.String
	total := 0
	for i, c := range chunks {
		d, isDict := c.(*array.Dictionary)
		if !isDict || d.Indices().DataType().ID() != arrow.INT32 {
			return nil, false
		}
		ds, isStr := d.Dictionary().(*array.String)
		if !isStr || i > 0 && ds != dict && !array.Equal(ds, dict) {
			return nil, false
		}
		if i == 0 {
			dict = ds
		}
		total += d.Len()
	}
	if dict.NullN() > 0 {
		return nil, false
	}
	for _, r := range rows {
		if r < 0 || int(r) >= total {
			return nil, false
		}
	}
	grow := newDictGrowth(dict.Len(), limit)
	for i := range dict.Len() {
		if !grow.have(dict.Value(i)) {
			return nil, false
		}
	}
	// the new values, and each update's index
	var added []string
	at := make([]int32, len(rows))
	for k := range rows {
		if vs.IsNull(k) {
			continue
		}
		v := vs.Value(k)
		i, isNew, ok := grow.of(v)
		if !ok {
			return nil, false
		}
		if isNew {
			added = append(added, v) // the builder below copies it
		}
		at[k] = i
	}
	newDict := arrow.Array(dict)
	newDict.Retain()
	if len(added) > 0 {
		newDict.Release()
		bld := array.NewStringBuilder(mem)
		bld.Reserve(dict.Len() + len(added))
		for i := range dict.Len() {
			bld.Append(dict.Value(i))
		}
		bld.AppendValues(added, nil)
		newDict = bld.NewArray()
		bld.Release()
	}
	defer newDict.Release()
	out := make([]arrow.Array, 0, len(chunks))
	defer func() {
		if !ok {
			releaseAll(out)
		}
	}()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	lo, u := 0, 0
	for _, c := range chunks {
		ind := c.(*array.Dictionary).Indices().(*array.Int32)
		n := ind.Len()
		e := u
		for e < len(rows) && int(rows[e]) < lo+n {
			e++
		}
		a, good := dictChunk(mem, dt, ind, rows[u:e], lo, vs, u, at[u:e], newDict, len(grow.index))
		if !good {
			return nil, false
		}
		out = append(out, a)
		lo, u = lo+n, e
	}
	return out, true
}

// dictChunk is one chunk of patchDict: ind, the indices of the chunk's
// rows from lo on, with rows set to the indices at (NULL where vs's
// values from u on are), as a dictionary array over dict (entries
// values); ok is false when a valid row's index lies outside it.
func dictChunk(mem memory.Allocator, dt *arrow.DictionaryType, ind *array.Int32, rows []int32, lo int, vs *array.String, u int, at []int32, dict arrow.Array, entries int) (arrow.Array, bool) {
	n := ind.Len()
	ib := memory.NewResizableBuffer(mem)
	defer ib.Release()
	ib.Resize(n * arrow.Int32SizeBytes)
	ix := arrow.Int32Traits.CastFromBytes(ib.Bytes())[:n]
	copy(ix, ind.Int32Values())
	var valid *memory.Buffer
	nulls := 0
	anyNull := ind.NullN() > 0
	for k := range rows {
		anyNull = anyNull || vs.IsNull(u+k)
	}
	if anyNull {
		valid = memory.NewResizableBuffer(mem)
		defer valid.Release()
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		vb := valid.Bytes()
		if ind.NullN() > 0 {
			bitutil.CopyBitmap(ind.NullBitmapBytes(), ind.Data().Offset(), n, vb, 0)
		} else {
			bitutil.SetBitsTo(vb, 0, int64(n), true)
		}
		for k, r := range rows {
			bitutil.SetBitTo(vb, int(r)-lo, vs.IsValid(u+k))
		}
		nulls = n - bitutil.CountSetBits(vb, 0, n)
	}
	for k, r := range rows {
		ix[int(r)-lo] = at[k] // 0 for NULL
	}
	for i, k := range ix {
		if k < 0 || int(k) >= entries {
			if valid == nil || bitutil.BitIsSet(valid.Bytes(), i) {
				return nil, false
			}
			ix[i] = 0
		}
	}
	data := array.NewData(arrow.PrimitiveTypes.Int32, n, []*memory.Buffer{valid, ib}, nil, nulls, 0)
	indices := array.MakeFromData(data)
	data.Release()
	defer indices.Release()
	return array.NewDictionaryArray(dt, indices, dict), true
}
