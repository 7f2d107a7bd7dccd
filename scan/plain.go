package scan

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"iter"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Plain reads. A file read by a scan that applies no row filter itself
// (none, or one only for pruning) and no limit, whose every column read
// is fixed-width (FixedWidth: the Arrow values' bytes are the file's) in
// PLAIN pages, or a STRING or BINARY column in dictionary-encoded or
// PLAIN pages (plainstrings.go), without NULLs, is read here page by
// page instead of through iceberg-go's scan. Each column chunk is read in
// one piece and its pages walked here (pageheader.go); a fixed-width page
// that lies wholly inside the batch being made is decompressed straight
// into that batch's buffer, so its values are written once and copied
// never. pqarrow decodes each page's definition levels into int16s, turns
// them into a validity bitmap and copies the values through its decoder
// into a growing buffer: for a PLAIN BIGINT without NULLs that cost a
// third as much again as decompressing its pages (BENCHMARKS.md, session
// 34); arrow-go's page reader, which this used until session 38,
// decompresses into a buffer of its own, from which the values were
// copied (a query's scan read through it was no faster than pqarrow's).
//
// The callers are a MERGE's own reads (mergeinto's plainread.go) and a
// query's scan (plainquery.go, which may leave row groups out by their
// statistics, plainprune.go): the rows of the row groups read are all
// returned. A file qualifies (plainColumns) when it has no delete files
// (or they are applied by the caller, on the file read whole), each
// column read is a top-level leaf of the file with the field's id, and no
// chunk of it has statistics that count a NULL, or (a fixed-width column)
// a dictionary page or an encoding other than PLAIN for its values. A
// page that still turns out otherwise (a file without statistics), or a
// chunk whose bytes are not pages, sends the rest of its row group
// through pqarrow (plainFallback); nothing read before it is read twice.

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
		if _, ok := f.Type.(iceberg.PrimitiveType); !ok || !plainType(schema.Field(i).Type) {
			return nil // decided without opening the file
		}
	}
	if countsNulls(task.File, ids) {
		return nil
	}
	src, err := fsys.Open(task.File.FilePath())
	if err != nil {
		return nil // the scan reports it
	}
	// pqarrow's buffers, where a row group falls back to it, from mem
	opts := []file.ReadOption{file.WithReadProps(parquet.NewReaderProperties(mem))}
	if meta != nil {
		opts = append(opts, file.WithMetadata(meta))
	}
	pr, err := file.NewParquetReader(src, opts...)
	if err != nil {
		src.Close()
		return nil
	}
	cols := plainColumns(pr.MetaData(), schema, ids, task.File.Count(), false)
	if cols == nil {
		pr.Close()
		src.Close()
		return nil
	}
	st, err := src.Stat()
	if err != nil {
		pr.Close()
		src.Close()
		return nil
	}
	seq := plainBatches(ctx, pr, src, st.Size(), schema, cols, batchRows, mem)
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

// ReadPlainDeleted is ReadPlain for a file whose deletes are position
// delete files or a deletion vector (no equality delete): the file is
// read page by page, whole, and the positions are dropped here as a
// query's scan drops them (deleteIndex, deleteFilter), where iceberg-go's
// reader looked each row up in a map of the deleted positions, or
// filtered by a mask. nil when the task has other deletes or the file
// does not qualify.
func ReadPlainDeleted(ctx context.Context, fsys iceio.IO, task table.FileScanTask, meta *metadata.FileMetaData, proj *iceberg.Schema, batchRows int, mem memory.Allocator) iter.Seq2[arrow.RecordBatch, error] {
	if len(task.DeleteFiles)+len(task.DeletionVectorFiles) == 0 || len(task.EqualityDeleteFiles) > 0 {
		return nil
	}
	x := newDeleteIndex(fsys, mem, nil, nil)
	if !x.accept(task) {
		return nil
	}
	raw := task
	raw.DeleteFiles, raw.DeletionVectorFiles = nil, nil
	seq := ReadPlain(ctx, fsys, raw, meta, proj, batchRows, mem)
	if seq == nil {
		return nil
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		fd, err := x.forTask(ctx, task)
		if err != nil {
			yield(nil, err)
			return
		}
		filter := &deleteFilter{fd: fd}
		for b, err := range seq {
			if err != nil {
				yield(nil, err)
				return
			}
			// not owned: a row group pqarrow read may share its buffers
			if b, err = filter.apply(ctx, mem, b, false); err != nil {
				yield(nil, err)
				return
			}
			if b.NumRows() == 0 {
				b.Release()
				continue
			}
			if !yield(b, nil) {
				return
			}
		}
		if filter.next != task.File.Count() {
			yield(nil, fmt.Errorf("data file %s: read %d rows, its metadata says %d; deletes cannot be applied by position", task.File.FilePath(), filter.next, task.File.Count()))
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

// plainType reports whether a plain read may take a column of Arrow type
// t: fixed-width, or STRING or BINARY (plainstrings.go).
func plainType(t arrow.DataType) bool {
	return fixedWidthType(t) > 0 || t.ID() == arrow.STRING || t.ID() == arrow.BINARY
}

// TestPlainReadOff, when set (by tests only), turns plain reads off, for
// a test to compare them with iceberg-go's scan of the same files.
var TestPlainReadOff atomic.Bool

// TestHookPlainRead, when set (by tests only), is called with the rows of
// each row group read page by page, and with -1 for each row group whose
// rest went through pqarrow.
var TestHookPlainRead func(rows int64)

// plainColumn is one column of a plain read: its leaf in the file, the
// byte width of its values (0: a STRING or BINARY column,
// plainstrings.go), and whether it is optional (one level of definition).
type plainColumn struct {
	leaf     int
	width    int
	optional bool
	nulls    bool // an optional column whose NULLs the read takes (plainnulls.go)
	// dict: a string column whose batches may come as dictionary arrays
	// (Int32 indices) while its pages are dictionary indices (nextDict)
	dict bool
}

// plainColumns plans the plain read of schema's fields (field ids ids)
// from a file with footer meta and rows rows; nil unless the file
// qualifies (see above). With nulls, its optional columns' NULLs are
// taken (a query's read); without, a chunk whose statistics count one
// refuses the file (MERGE's reads).
func plainColumns(meta *metadata.FileMetaData, schema *arrow.Schema, ids []int, rows int64, nulls bool) []plainColumn {
	if meta == nil || schema.NumFields() == 0 || len(ids) != schema.NumFields() ||
		meta.IsSetEncryptionAlgorithm() || meta.FileDecryptor != nil || meta.NumRows != rows {
		return nil
	}
	out := make([]plainColumn, len(ids))
	for i, id := range ids {
		if id == iceberg.RowIDFieldID || id == iceberg.LastUpdatedSequenceNumberFieldID {
			return nil // iceberg-go fills their NULLs from the file's lineage
		}
		leaf := TopLeaf(meta.Schema, id)
		if leaf < 0 {
			return nil // not in the file: a NULL or a default, the scan's to give
		}
		col := meta.Schema.Column(leaf)
		w := FixedWidth(schema.Field(i).Type, col)
		if w == 0 && !stringColumn(schema.Field(i).Type, col) {
			return nil
		}
		for g := range meta.NumRowGroups() {
			cc, err := meta.RowGroup(g).ColumnChunk(leaf)
			if err != nil || w > 0 && cc.HasDictionaryPage() || cc.CryptoMetadata() != nil {
				return nil
			}
			for _, e := range cc.Encodings() {
				switch e {
				case parquet.Encodings.Plain, parquet.Encodings.RLE, parquet.Encodings.BitPacked:
				case parquet.Encodings.RLEDict, parquet.Encodings.PlainDict:
					if w > 0 {
						return nil
					}
				default:
					return nil
				}
			}
			if set, err := cc.StatsSet(); err == nil && set && !nulls {
				if st, err := cc.Statistics(); err == nil && st != nil && st.HasNullCount() && st.NullCount() > 0 {
					return nil
				}
			}
		}
		opt := col.MaxDefinitionLevel() == 1
		out[i] = plainColumn{leaf: leaf, width: w, optional: opt, nulls: opt && nulls}
	}
	return out
}

// countsNulls reports whether df's metrics count a NULL in a column of
// ids: such a file is left to the scan without being opened.
func countsNulls(df iceberg.DataFile, ids []int) bool {
	for _, id := range ids {
		if n, ok := df.NullValueCounts()[id]; ok && n > 0 {
			return true
		}
	}
	return false
}

// plainFile is a Parquet file read page by page: its reader pr (pqarrow
// reads a row group through it where a page does not qualify), its bytes
// src (size of them), the columns read (cols, one per field of schema),
// and their scratch buffers, kept from one row group to the next.
type plainFile struct {
	pr      *file.Reader
	src     io.ReaderAt
	size    int64
	schema  *arrow.Schema
	cols    []plainColumn
	scratch [][]byte
}

func newPlainFile(pr *file.Reader, src io.ReaderAt, size int64, schema *arrow.Schema, cols []plainColumn) *plainFile {
	return &plainFile{pr: pr, src: src, size: size, schema: schema, cols: cols, scratch: make([][]byte, len(cols))}
}

// readGroup reads row group g page by page (plainGroup: batches of size
// rows, or one page's up to most), handing each batch to yield, and
// where a page does not qualify the rest of the group through pqarrow
// (plainFallback), handing those to fellBack; false when either said
// stop or was given an error.
func (p *plainFile) readGroup(ctx context.Context, g int, size, most int64, mem memory.Allocator, yield, fellBack func(arrow.RecordBatch, error) bool) bool {
	done, fell, more := plainGroup(ctx, p.pr.MetaData().RowGroup(g), p.src, p.size, g, p.schema, p.cols, size, most, mem, p.scratch, yield)
	if !more || !fell {
		return more
	}
	if TestHookPlainRead != nil {
		TestHookPlainRead(-1)
	}
	return plainFallback(ctx, p.pr, p.schema, p.cols, g, done, size, mem, fellBack)
}

// plainBatches reads every row group of pr (the file src, size bytes),
// as cols plan it (one per field of schema), in batches of at most size
// rows of schema, allocated from mem.
func plainBatches(ctx context.Context, pr *file.Reader, src io.ReaderAt, fileSize int64, schema *arrow.Schema, cols []plainColumn, size int, mem memory.Allocator) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		size := int64(max(size, 1))
		p := newPlainFile(pr, src, fileSize, schema, cols)
		for g := range pr.NumRowGroups() {
			if !p.readGroup(ctx, g, size, size, mem, yield, yield) {
				return
			}
		}
	}
}

// plainGroup reads row group g (rg) page by page as plainBatches does,
// yielding each batch; done are the rows it yielded. A batch holds at
// most size rows, or one page of the first column's up to most rows
// where that page alone holds more. scratch holds each column's scratch
// buffer, kept from one row group to the next. fell is true where
// a page was not PLAIN values every one defined, or its chunk could not
// be walked: the rest of the group is the caller's to read another way.
// more is false where yield said stop or an error was yielded.
func plainGroup(ctx context.Context, rg *metadata.RowGroupMetaData, src io.ReaderAt, fileSize int64, g int, schema *arrow.Schema, cols []plainColumn, size, most int64, mem memory.Allocator, scratch [][]byte, yield func(arrow.RecordBatch, error) bool) (done int64, fell, more bool) {
	curs := make([]plainCursor, len(cols))
	for i := range curs {
		curs[i].scratch = scratch[i]
	}
	defer func() {
		for i := range curs {
			scratch[i] = curs[i].scratch
			curs[i].release()
		}
	}()
	fail := func(i int, err error) (int64, bool, bool) {
		yield(nil, fmt.Errorf("row group %d, column %s: %w", g, schema.Field(i).Name, err))
		return done, false, false
	}
	for i, c := range cols {
		ok, err := curs[i].open(rg, c, src, fileSize, mem)
		if err != nil {
			return fail(i, err)
		}
		if !ok {
			return done, true, true
		}
	}
	rows := rg.NumRows()
	for done < rows {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return done, false, false
		}
		n := min(size, rows-done)
		if k := curs[0].pageAligned(n, min(most, rows-done)); k > 0 {
			// whole pages of the first column: each is decompressed
			// straight into the batch, none through scratch
			n = min(k, rows-done)
		}
		// long strings make fewer rows a batch
		n, bad, ok, err := stringRows(curs, n)
		if err != nil {
			return fail(bad, err)
		}
		if !ok {
			return done, true, true
		}
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
		b := array.NewRecordBatch(BatchSchema(schema, arrs), arrs, n)
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

// plainCursor reads one column chunk's PLAIN values page by page. It
// walks the chunk's bytes itself (readPageHeader), read in one piece, and
// decompresses a page that lies wholly inside the batch being made
// straight into that batch's buffer; only a page a batch ends inside
// goes through scratch.
type plainCursor struct {
	col     plainColumn
	chunk   []byte // the chunk's pages not yet walked
	buf     *memory.Buffer
	codec   compress.Codec // nil: the pages are stored uncompressed
	scratch []byte         // a page decompressed whole
	vals    []byte         // the current page's values not yet taken (in scratch)
	left    int64          // the row group's values not yet in a page walked
	str     *stringPages   // a string column's dictionary and page (width 0)
	// valid, where the page being taken has a NULL, is its rows'
	// validity from bit validAt (the next row's: of vals' first slot, or
	// a string page's next value); validBuf holds it (nullLevels), and
	// slots are what a fixed-width page is spread into (nullPage)
	valid    []byte
	validAt  int
	validBuf []byte
	slots    []byte
}

// open reads column chunk c.leaf of row group rg from src (fileSize
// bytes); ok is false where the chunk cannot be walked page by page (the
// caller reads the group another way).
func (c *plainCursor) open(rg *metadata.RowGroupMetaData, col plainColumn, src io.ReaderAt, fileSize int64, mem memory.Allocator) (ok bool, err error) {
	c.col, c.left = col, rg.NumRows()
	cc, err := rg.ColumnChunk(col.leaf)
	if err != nil {
		return false, nil
	}
	off, n := cc.DataPageOffset(), cc.TotalCompressedSize()
	if cc.HasDictionaryPage() {
		// a string column's chunk starts at its dictionary page
		if col.width > 0 || cc.DictionaryPageOffset() <= 0 || cc.DictionaryPageOffset() > off {
			return false, nil
		}
		off = cc.DictionaryPageOffset()
	}
	if off < 0 || n <= 0 || off > fileSize || n > fileSize-off {
		return false, nil
	}
	if col.width == 0 {
		c.str = &stringPages{}
	}
	if cc.Compression() != compress.Codecs.Uncompressed {
		if c.codec, err = compress.GetCodec(cc.Compression()); err != nil {
			return false, nil
		}
	}
	c.buf = writeOnlyBuffer(mem, int(n), 0) // every byte is read into below
	c.chunk = c.buf.Bytes()
	if got, err := src.ReadAt(c.chunk, off); got != len(c.chunk) {
		// (a ReaderAt may say io.EOF with every byte read)
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return false, fmt.Errorf("reading its %d bytes at %d: %w", n, off, err)
	}
	return true, nil
}

// release returns the chunk's buffer.
func (c *plainCursor) release() {
	if c.buf != nil {
		c.buf.Release()
		c.buf = nil
	}
	if c.str != nil && c.str.dictArr != nil {
		c.str.dictArr.Release()
		c.str.dictArr = nil
	}
	c.chunk, c.vals = nil, nil
}

// nextPage is the chunk's next page that is not an index page: its header
// and its bytes as stored. ok is false at the chunk's end; an error where
// the bytes left are not a page.
func (c *plainCursor) nextPage() (h pageHeader, body []byte, ok bool, err error) {
	for len(c.chunk) > 0 {
		if h, body, c.chunk, err = splitPage(c.chunk); err != nil {
			return h, nil, false, err
		}
		if h.typ != pageIndex {
			return h, body, true, nil
		}
	}
	return pageHeader{}, nil, false, nil
}

// splitPage cuts the page at the start of b (a chunk's pages): its
// header, its bytes as stored, and the bytes after it; an error where b
// does not start with a page that fits in it.
func splitPage(b []byte) (h pageHeader, body, rest []byte, err error) {
	h, k, err := readPageHeader(b)
	if err != nil {
		return h, nil, nil, err
	}
	if int64(h.compressed) > int64(len(b)-k) {
		return h, nil, nil, fmt.Errorf("%w: a page of %d bytes where %d are left", errPageHeader, h.compressed, len(b)-k)
	}
	return h, b[k : k+int(h.compressed)], b[k+int(h.compressed):], nil
}

// pageAligned is how many of the chunk's next values, at most limit,
// end where a page does: whole pages, or where the next page alone holds
// more than limit values, that page's when they are at most most; 0
// where the pages ahead cannot be told.
func (c *plainCursor) pageAligned(limit, most int64) int64 {
	acc := c.held()
	if acc >= limit {
		return limit // the rest of a page a batch ended inside
	}
	rest := c.chunk
	for acc < limit && len(rest) > 0 {
		h, _, after, err := splitPage(rest)
		if err != nil {
			break
		}
		rest = after
		if h.typ == pageIndex || h.typ == pageDictionary {
			continue
		}
		if h.typ != pageData && h.typ != pageDataV2 {
			break
		}
		next := acc + int64(h.numValues)
		if next > limit {
			if acc == 0 && next <= most {
				return next
			}
			break
		}
		acc = next
	}
	return acc
}

// values writes the values of data page h (body as stored) into out,
// which is exactly as long as they are; ok is false where the page is not
// PLAIN values of the column's width, every one defined.
func (c *plainCursor) values(h pageHeader, body, out []byte) (ok bool, err error) {
	optional := c.col.optional
	switch h.typ {
	case pageDataV2:
		k, ok := c.allDefinedV2(h, body)
		if !ok || int64(h.uncompressed)-k != int64(len(out)) {
			return false, nil
		}
		vals := body[k:]
		if c.codec == nil || !h.valuesCompressed {
			if len(vals) != len(out) {
				return false, nil
			}
			copy(out, vals)
			return true, nil
		}
		return true, c.decompress(out, vals)
	case pageData:
		if int(h.uncompressed) < len(out) {
			return false, nil
		}
		if !optional && int(h.uncompressed) == len(out) {
			if c.codec == nil {
				if len(body) != len(out) {
					return false, nil
				}
				copy(out, body)
				return true, nil
			}
			return true, c.decompress(out, body)
		}
		if h.defLevelEncoding != int32(parquet.Encodings.RLE) && optional ||
			int64(h.uncompressed) > int64(len(out))+int64(h.numValues)+68 {
			// levels of other encodings, or more bytes than the values
			// and a byte a level (and a length): not a page to trust
			return false, nil
		}
		data := body
		if c.codec != nil {
			var err error
			if data, err = c.scratchPage(h.uncompressed, body); err != nil {
				return false, err
			}
		}
		if optional {
			if data, ok = allDefinedV1(h, data); !ok {
				return false, nil
			}
		}
		if len(data) != len(out) {
			return false, nil
		}
		copy(out, data)
		return true, nil
	}
	return false, nil
}

// allDefinedV2 checks that V2 data page h (body as stored) holds
// unrepeated values, every one defined, and returns the length of its
// levels (the values follow them); ok is false otherwise.
func (c *plainCursor) allDefinedV2(h pageHeader, body []byte) (k int64, ok bool) {
	k = int64(h.defLen) + int64(h.repLen)
	if h.repLen != 0 || h.numNulls != 0 || h.numRows != h.numValues || k > int64(len(body)) ||
		!c.col.optional && h.defLen != 0 || c.col.optional && !AllDefined(body[:h.defLen], int(h.numValues)) {
		return 0, false
	}
	return k, true
}

// allDefinedV1 returns the values of data, an optional column's V1 data
// page h decompressed, past its definition levels (a 4-byte length, then
// RLE); ok is false unless every one of its values is defined.
func allDefinedV1(h pageHeader, data []byte) (vals []byte, ok bool) {
	if len(data) < 4 {
		return nil, false
	}
	n := int64(binary.LittleEndian.Uint32(data))
	if n > int64(len(data)-4) || !AllDefined(data[4:4+n], int(h.numValues)) {
		return nil, false
	}
	return data[4+n:], true
}

// scratchPage decompresses body, a page of size bytes uncompressed, into
// the cursor's scratch buffer (grown to size and decodeSlack bytes past
// it), and returns those bytes.
func (c *plainCursor) scratchPage(size int32, body []byte) ([]byte, error) {
	out := c.scratchOf(int(size))
	if err := c.decompress(out, body); err != nil {
		return nil, err
	}
	return out, nil
}

// scratchOf is the first n bytes of the cursor's scratch buffer, grown to
// hold them and decodeSlack bytes past them.
func (c *plainCursor) scratchOf(n int) []byte {
	if cap(c.scratch) < n+decodeSlack {
		c.scratch = make([]byte, n+decodeSlack)
	}
	return c.scratch[:n]
}

// writeOnlyBuffer is a buffer of n bytes from mem, with room bytes of
// capacity past them, for a caller that writes every one of the n before
// anything reads them: from a BufferPool without the zeroing.
func writeOnlyBuffer(mem memory.Allocator, n, room int) *memory.Buffer {
	if p, ok := mem.(*BufferPool); ok {
		return memory.NewBufferWithAllocator(p.AllocateUninit(n + room)[:n], p)
	}
	b := memory.NewResizableBuffer(mem)
	b.Reserve(n + room)
	b.Resize(n)
	return b
}

// decodeSlack is how many bytes past a page's values the buffer it is
// decompressed into holds: klauspost's zstd decoder copies in 16-byte
// blocks, and with fewer than 32 bytes of room past a block it decodes
// that block with its slower exact copies (BENCHMARKS.md, session 38).
const decodeSlack = 64

// decompress decodes src, which must hold exactly len(out) bytes, into
// out. The bytes of out's capacity past its length may be overwritten:
// they are the next page's, decompressed after it, or slack.
func (c *plainCursor) decompress(out, src []byte) error {
	got, err := compress.Decode(c.codec, out, src)
	if err != nil {
		return fmt.Errorf("decompressing a page: %w", err)
	}
	if len(got) != len(out) {
		return fmt.Errorf("a page decompressed to %d bytes, its header says %d", len(got), len(out))
	}
	if len(out) > 0 && &got[0] != &out[0] {
		copy(out, got)
	}
	return nil
}

// next returns the chunk's next n values as an array of type typ; ok is
// false when a page is not PLAIN values every one defined (the caller
// reads the rest of the row group another way).
func (c *plainCursor) next(n int, typ arrow.DataType, mem memory.Allocator) (a arrow.Array, ok bool, err error) {
	w := c.col.width
	if w == 0 {
		return c.nextStrings(n, typ, mem)
	}
	// every byte is written below before the array is made; decodeSlack
	// bytes past the values are room the decompressor may write into
	buf := writeOnlyBuffer(mem, n*w, decodeSlack)
	defer buf.Release()
	var nb nullBits
	defer nb.release()
	dst := buf.Bytes()
	for len(dst) > 0 {
		at := n - len(dst)/w // the batch's rows filled
		if len(c.vals) > 0 {
			if c.valid != nil {
				nb.start(mem, n, at)
			}
			k := copy(dst, c.vals)
			nb.put(at, c.valid, c.validAt, k/w)
			c.validAt += k / w
			dst, c.vals = dst[k:], c.vals[k:]
			continue
		}
		c.valid = nil
		h, body, more, err := c.nextPage()
		if err != nil || !more {
			// a chunk that ends short, or bytes that are not a page: what
			// pqarrow makes of them is the answer
			return nil, false, nil
		}
		if h.typ != pageData && h.typ != pageDataV2 || h.encoding != int32(parquet.Encodings.Plain) {
			return nil, false, nil
		}
		if c.mayHoldNulls(h) {
			// a page that has (V2) or may have (V1) a NULL: its values
			// spread into their rows, straight into the batch where the
			// page fits (the header parser refuses negative counts)
			size := int(h.numValues) * w
			var into []byte
			if size <= len(dst) {
				into = dst[:size]
			}
			direct, ok, err := c.nullPage(h, body, into)
			if err != nil || !ok {
				return nil, false, err
			}
			if direct {
				if c.valid != nil {
					nb.start(mem, n, at)
				}
				nb.put(at, c.valid, 0, int(h.numValues))
				c.valid = nil
				dst = dst[size:]
			}
			continue
		}
		size := int64(h.numValues) * int64(w)
		if size <= int64(len(dst)) {
			if ok, err := c.values(h, body, dst[:size]); err != nil || !ok {
				return nil, false, err
			}
			nb.put(at, nil, 0, int(h.numValues))
			c.left -= int64(h.numValues)
			dst = dst[size:]
			continue
		}
		if size > c.left*int64(w) || size > int64(h.uncompressed) {
			// more values than the row group has left, or than the page's
			// bytes: pqarrow reports it
			return nil, false, nil
		}
		vals := c.scratchOf(int(size))
		if ok, err := c.values(h, body, vals); err != nil || !ok {
			return nil, false, err
		}
		c.left -= int64(h.numValues)
		k := copy(dst, vals)
		nb.put(at, nil, 0, k/w)
		dst, c.vals = dst[k:], vals[k:]
	}
	valid, nulls := nb.take(n)
	if valid != nil {
		defer valid.Release()
	}
	data := array.NewData(typ, n, []*memory.Buffer{valid, buf}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), true, nil
}

// finish checks that the chunk's last page held no values past its row
// group's rows. What follows that page is not walked: arrow-go's page
// reader stops at the chunk's value count too, and a chunk's length may
// run past its pages (old parquet-mr writers; arrow-go pads it).
func (c *plainCursor) finish() error {
	if extra := c.held(); extra > 0 {
		return fmt.Errorf("the column chunk's pages hold %d values more than its row group's rows", extra)
	}
	return nil
}

// held is how many values of the page being taken are left.
func (c *plainCursor) held() int64 {
	if c.col.width == 0 {
		if c.str == nil {
			return 0
		}
		return c.str.held
	}
	return int64(len(c.vals) / c.col.width)
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

// BatchSchema is schema with each field of a column in arrs that is a
// dictionary array (plainColumn.dict, ReadSpec.Dict) typed as it: schema
// itself where none is.
func BatchSchema(schema *arrow.Schema, arrs []arrow.Array) *arrow.Schema {
	var fields []arrow.Field
	for i, a := range arrs {
		if a.DataType().ID() != arrow.DICTIONARY {
			continue
		}
		if fields == nil {
			fields = slices.Clone(schema.Fields())
		}
		fields[i].Type = a.DataType()
	}
	if fields == nil {
		return schema
	}
	md := schema.Metadata()
	return arrow.NewSchema(fields, &md)
}
