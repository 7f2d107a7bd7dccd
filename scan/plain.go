package scan

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Plain reads. A file read whole by a scan without a row filter or a
// limit, whose every column read is fixed-width (FixedWidth: the Arrow
// values' bytes are the file's) in PLAIN pages without NULLs, is read here
// page by page instead of through iceberg-go's scan: arrow-go's page
// reader decompresses each page (buffers from the caller's allocator),
// and its values are copied once into the batch's buffer. pqarrow decodes
// each page's definition levels into int16s, turns them into a validity
// bitmap and copies the values through its decoder into a growing
// buffer: for a PLAIN BIGINT without NULLs that cost a third as much
// again as decompressing its pages (BENCHMARKS.md, session 34).
//
// The caller is a MERGE's key reads (mergeinto's plainread.go), whose
// scans have no row filter: the file's rows are then all returned, as
// iceberg-go returns them. A query's scan of files does not come here:
// measured beside iceberg-go's read of the same files, it was no faster
// for a DOUBLE and slower for a BIGINT (BENCHMARKS.md, session 34). A file qualifies (plainColumns) when it has no delete files (or
// they are applied by the caller, on the file read whole) and is read
// whole, each column read is a top-level leaf of the file with the
// field's id, and no chunk of it has a dictionary page, an encoding other
// than PLAIN for its values, or statistics that count a NULL. A page that
// still turns out not to be PLAIN values all defined (a file without
// statistics) sends the rest of its row group through pqarrow
// (plainFallback); nothing read before it is read twice.

// ReadPlain returns the batches of task's file read page by page, with
// the columns of proj (the scan's projection) in batches of at most
// batchRows rows allocated from mem; meta is the file's footer when the
// caller holds it. It returns nil when the file does not qualify (see
// above), and the caller reads it through its scan. The caller must know
// that its scan has no row filter and no limit.
func ReadPlain(ctx context.Context, fsys iceio.IO, task table.FileScanTask, meta *metadata.FileMetaData, proj *iceberg.Schema, batchRows int, mem memory.Allocator) iter.Seq2[arrow.RecordBatch, error] {
	if TestPlainReadOff.Load() || HasDeletes(task) || !IsWhole(task) || task.File.FileFormat() != iceberg.ParquetFile || task.Residual != nil {
		return nil
	}
	schema, err := table.SchemaToArrowSchema(proj, nil, false, false)
	if err != nil || schema.NumFields() != len(proj.Fields()) {
		return nil
	}
	ids := make([]int, len(proj.Fields()))
	for i, f := range proj.Fields() {
		ids[i] = f.ID
		if _, ok := f.Type.(iceberg.PrimitiveType); !ok || fixedWidthType(schema.Field(i).Type) == 0 {
			return nil // decided without opening the file
		}
		if n, ok := task.File.NullValueCounts()[f.ID]; ok && n > 0 {
			return nil
		}
	}
	src, err := fsys.Open(task.File.FilePath())
	if err != nil {
		return nil // the scan reports it
	}
	// the page buffers from mem: fresh ones for each chunk cost more than
	// decoding it with pqarrow
	opts := []file.ReadOption{file.WithReadProps(parquet.NewReaderProperties(mem))}
	if meta != nil {
		opts = append(opts, file.WithMetadata(meta))
	}
	pr, err := file.NewParquetReader(src, opts...)
	if err != nil {
		src.Close()
		return nil
	}
	cols := plainColumns(pr.MetaData(), schema, ids, task.File.Count())
	if cols == nil {
		pr.Close()
		src.Close()
		return nil
	}
	seq := plainBatches(ctx, pr, schema, cols, batchRows, mem)
	return func(yield func(arrow.RecordBatch, error) bool) {
		defer src.Close()
		defer pr.Close()
		for b, err := range seq {
			if !yield(b, err) || err != nil {
				return
			}
		}
	}
}

// fixedWidthType is the byte width of an Arrow type FixedWidth may accept
// (0: none).
func fixedWidthType(t arrow.DataType) int {
	switch t.ID() {
	case arrow.INT32, arrow.DATE32, arrow.FLOAT32:
		return 4
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64, arrow.FLOAT64:
		return 8
	}
	return 0
}

// TestPlainReadOff, when set (by tests only), turns plain reads off, for
// a test to compare them with iceberg-go's scan of the same files.
var TestPlainReadOff atomic.Bool

// TestHookPlainRead, when set (by tests only), is called with the rows of
// each row group read page by page, and with -1 for each row group whose
// rest went through pqarrow.
var TestHookPlainRead func(rows int64)

// plainColumn is one column of a plain read: its leaf in the file, the
// byte width of its values, and whether it is optional (one level of
// definition).
type plainColumn struct {
	leaf     int
	width    int
	optional bool
}

// plainColumns plans the plain read of schema's fields (field ids ids)
// from a file with footer meta and rows rows; nil unless the file
// qualifies (see above).
func plainColumns(meta *metadata.FileMetaData, schema *arrow.Schema, ids []int, rows int64) []plainColumn {
	if meta == nil || schema.NumFields() == 0 || len(ids) != schema.NumFields() ||
		meta.IsSetEncryptionAlgorithm() || meta.FileDecryptor != nil || meta.NumRows != rows {
		return nil
	}
	out := make([]plainColumn, len(ids))
	for i, id := range ids {
		if id == iceberg.RowIDFieldID || id == iceberg.LastUpdatedSequenceNumberFieldID {
			return nil // iceberg-go fills their NULLs from the file's lineage
		}
		leaf := -1
		for k := range meta.Schema.NumColumns() {
			if c := meta.Schema.Column(k); c.SchemaNode().FieldID() == int32(id) && len(c.ColumnPath()) == 1 {
				leaf = k
				break
			}
		}
		if leaf < 0 {
			return nil // not in the file: a NULL or a default, the scan's to give
		}
		col := meta.Schema.Column(leaf)
		w := FixedWidth(schema.Field(i).Type, col)
		if w == 0 {
			return nil
		}
		for g := range meta.NumRowGroups() {
			cc, err := meta.RowGroup(g).ColumnChunk(leaf)
			if err != nil || cc.HasDictionaryPage() || cc.CryptoMetadata() != nil {
				return nil
			}
			for _, e := range cc.Encodings() {
				if e != parquet.Encodings.Plain && e != parquet.Encodings.RLE && e != parquet.Encodings.BitPacked {
					return nil
				}
			}
			if set, err := cc.StatsSet(); err == nil && set {
				if st, err := cc.Statistics(); err == nil && st != nil && st.HasNullCount() && st.NullCount() > 0 {
					return nil
				}
			}
		}
		out[i] = plainColumn{leaf: leaf, width: w, optional: col.MaxDefinitionLevel() == 1}
	}
	return out
}

// plainBatches reads every row group of pr, as cols plan it (one per
// field of schema), in batches of at most size rows of schema, allocated
// from mem.
func plainBatches(ctx context.Context, pr *file.Reader, schema *arrow.Schema, cols []plainColumn, size int, mem memory.Allocator) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		size := int64(max(size, 1))
		for g := range pr.NumRowGroups() {
			done, fell, more := plainGroup(ctx, pr.RowGroup(g), g, schema, cols, size, mem, yield)
			if !more {
				return
			}
			if fell {
				if TestHookPlainRead != nil {
					TestHookPlainRead(-1)
				}
				if !plainFallback(ctx, pr, schema, cols, g, done, size, mem, yield) {
					return
				}
			}
		}
	}
}

// plainGroup reads row group g (rg) page by page as plainBatches does,
// yielding each batch; done are the rows it yielded. fell is true where
// a page was not PLAIN values every one defined: the rest of the group is
// the caller's to read another way. more is false where yield said stop
// or an error was yielded.
func plainGroup(ctx context.Context, rg *file.RowGroupReader, g int, schema *arrow.Schema, cols []plainColumn, size int64, mem memory.Allocator, yield func(arrow.RecordBatch, error) bool) (done int64, fell, more bool) {
	curs := make([]plainCursor, len(cols))
	defer func() {
		for i := range curs {
			if curs[i].pages != nil {
				curs[i].pages.Close()
			}
		}
	}()
	fail := func(i int, err error) (int64, bool, bool) {
		yield(nil, fmt.Errorf("row group %d, column %s: %w", g, schema.Field(i).Name, err))
		return done, false, false
	}
	for i, c := range cols {
		pages, err := rg.GetColumnPageReader(c.leaf)
		if err != nil {
			yield(nil, err)
			return done, false, false
		}
		curs[i] = plainCursor{pages: pages, col: c}
	}
	rows := rg.NumRows()
	for done < rows {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return done, false, false
		}
		n := min(size, rows-done)
		arrs := make([]arrow.Array, len(cols))
		for i := range cols {
			a, ok, err := curs[i].next(int(n), schema.Field(i).Type, mem)
			if err != nil || !ok {
				releaseAll(arrs)
				if err != nil {
					return fail(i, err)
				}
				return done, true, true
			}
			arrs[i] = a
		}
		b := array.NewRecordBatch(schema, arrs, n)
		releaseAll(arrs)
		done += n
		if !yield(b, nil) {
			return done, false, false
		}
	}
	for i := range curs {
		if err := curs[i].finish(); err != nil {
			return fail(i, err)
		}
	}
	if TestHookPlainRead != nil {
		TestHookPlainRead(rows)
	}
	return done, false, true
}

// plainFallback reads row group g of pr from row skip on through pqarrow,
// as plainBatches would have, and reports whether to go on (false: yield
// said stop, or an error was yielded).
func plainFallback(ctx context.Context, pr *file.Reader, schema *arrow.Schema, cols []plainColumn, g int, skip, size int64, mem memory.Allocator, yield func(arrow.RecordBatch, error) bool) bool {
	fail := func(err error) bool {
		yield(nil, fmt.Errorf("row group %d: %w", g, err))
		return false
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: size}, mem)
	if err != nil {
		return fail(err)
	}
	leaves := make([]int, len(cols))
	for i, c := range cols {
		leaves[i] = c.leaf
	}
	rr, err := fr.GetRecordReader(ctx, leaves, []int{g})
	if err != nil {
		return fail(err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		n := rec.NumRows()
		if skip >= n {
			skip -= n
			continue
		}
		arrs := make([]arrow.Array, len(cols))
		for i, c := range cols {
			k := slices.IndexFunc(rec.Schema().Fields(), func(f arrow.Field) bool { return f.Name == pr.MetaData().Schema.Column(c.leaf).Name() })
			if k < 0 {
				releaseAll(arrs)
				return fail(fmt.Errorf("column %s not read (broken invariant)", schema.Field(i).Name))
			}
			part := array.NewSlice(rec.Column(k), skip, n)
			a, err := CastTo(ctx, part, schema.Field(i).Type)
			part.Release()
			if err != nil {
				releaseAll(arrs)
				return fail(fmt.Errorf("column %s: %w", schema.Field(i).Name, err))
			}
			arrs[i] = a
		}
		b := array.NewRecordBatch(schema, arrs, n-skip)
		releaseAll(arrs)
		skip = 0
		if !yield(b, nil) {
			return false
		}
	}
	if err := rr.Err(); err != nil {
		return fail(err)
	}
	return true
}

// plainCursor reads one column chunk's PLAIN values page by page.
type plainCursor struct {
	pages file.PageReader
	col   plainColumn
	vals  []byte // the current page's values not yet taken
}

// next returns the chunk's next n values as an array of type typ; ok is
// false when a page is not PLAIN values every one defined (the caller
// reads the rest of the row group another way).
func (c *plainCursor) next(n int, typ arrow.DataType, mem memory.Allocator) (a arrow.Array, ok bool, err error) {
	w := c.col.width
	var buf *memory.Buffer
	if p, ok := mem.(*BufferPool); ok {
		// every byte is written below before the array is made
		buf = memory.NewBufferWithAllocator(p.AllocateUninit(n*w), p)
	} else {
		buf = memory.NewResizableBuffer(mem)
		buf.Resize(n * w)
	}
	defer buf.Release()
	dst := buf.Bytes()
	for len(dst) > 0 {
		if len(c.vals) == 0 {
			if !c.pages.Next() {
				if err := c.pages.Err(); err != nil {
					return nil, false, err
				}
				return nil, false, fmt.Errorf("the column chunk ends %d values short of its row group", len(dst)/w)
			}
			vals, _, good := PlainValues(c.pages.Page(), c.col.optional, w)
			if !good {
				return nil, false, nil
			}
			c.vals = vals
		}
		k := copy(dst, c.vals)
		dst, c.vals = dst[k:], c.vals[k:]
	}
	data := array.NewData(typ, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data), true, nil
}

// finish checks that the chunk holds no values past its row group's rows.
func (c *plainCursor) finish() error {
	for len(c.vals) == 0 && c.pages.Next() {
		if dp, ok := c.pages.Page().(file.DataPage); !ok || dp.NumValues() > 0 {
			return fmt.Errorf("the column chunk holds more values than its row group's rows")
		}
	}
	if len(c.vals) > 0 {
		return fmt.Errorf("the column chunk holds more values than its row group's rows")
	}
	return c.pages.Err()
}

// CastTo is a as type typ (a itself, retained, when it is of it), cast
// safely: what a column read from a file becomes in the reader's layout.
// The caller releases it.
func CastTo(ctx context.Context, a arrow.Array, typ arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(a.DataType(), typ) {
		a.Retain()
		return a, nil
	}
	return compute.CastArray(ctx, a, compute.SafeCastOptions(typ))
}

// releaseAll releases the arrays of as that are set.
func releaseAll(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}
