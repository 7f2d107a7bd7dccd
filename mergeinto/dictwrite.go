package mergeinto

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// columnsWriter writes top-level columns of primitive types through
// arrow-go's column writers as pqarrow does, but for the string columns
// given as dictionary arrays over one dictionary (dictChunks, or a
// directFile's stringDict). pqarrow finds the dictionary values each
// chunk of those uses, for the statistics, with compute.Unique over its
// indices: a hash per row, which took 8% of a spread copy-on-write
// MERGE's CPU and 7% of an INSERT of four such columns. Here they are
// marked in a slice of the dictionary's size (dictColumnWriter), and the
// dictionary is put in the encoder once. The files come out byte for
// byte as pqarrow writes them (TestWriteRowGroupFileMatchesPqarrow,
// TestBufferedFileWriterMatchesPqarrow), but for bounds that are exact
// where pqarrow's are wider: its distinct-indices pass counts a NULL as
// a value, and when that makes the count the dictionary's length it
// takes every dictionary value as used.
type columnsWriter struct {
	fw     *file.Writer
	fields []arrow.Field
	actx   context.Context
	mem    memory.Allocator
	dws    []dictColumnWriter // per column, of the current row group
	defs   []int16            // scratch
	direct int                // dictionary chunks written here, not by pqarrow
}

// newColumnsWriter starts a Parquet file of sc on w, with sc's metadata
// as its key-value metadata (as pqarrow.NewFileWriter does).
func newColumnsWriter(ctx context.Context, w io.Writer, sc *arrow.Schema, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties) (*columnsWriter, error) {
	psc, err := pqarrow.ToParquet(sc, props, aprops)
	if err != nil {
		return nil, err
	}
	kv := make(metadata.KeyValueMetadata, 0)
	md := sc.Metadata()
	for i := range md.Len() {
		kv.Append(md.Keys()[i], md.Values()[i])
	}
	fw, err := file.NewParquetWriterWithError(w, psc.Root(), file.WithWriterProps(props), file.WithWriteMetadata(kv))
	if err != nil {
		return nil, err
	}
	return &columnsWriter{fw: fw, fields: sc.Fields(), actx: pqarrow.NewArrowWriteContext(ctx, &aprops),
		mem: props.Allocator(), dws: make([]dictColumnWriter, sc.NumFields())}, nil
}

// writeColumn writes a, rows of column k, to cw, that column's writer
// in the current row group.
func (c *columnsWriter) writeColumn(k int, cw file.ColumnChunkWriter, a arrow.Array) error {
	f := c.fields[k]
	if cw.LevelInfo().DefLevel > 1 || cw.LevelInfo().RepLevel > 0 {
		return fmt.Errorf("column %s is nested (broken invariant)", f.Name)
	}
	c.defs = flatDefLevels(c.defs, a, cw.LevelInfo().DefLevel)
	dw := &c.dws[k]
	if dw.cw != cw { // a new row group
		*dw = dictColumnWriter{cw: cw, mem: c.mem, used: dw.used}
	}
	var err error
	if d, ok := a.(*array.Dictionary); ok && dw.take(d) {
		err = dw.write(d, c.defs)
		c.direct++
	} else {
		err = pqarrow.WriteArrowToColumn(c.actx, cw, a, c.defs, nil, f.Nullable)
	}
	if err != nil {
		return fmt.Errorf("column %s: %w", f.Name, err)
	}
	return nil
}

// writeRowGroupFile writes cols (one chunked column per field of sc, rows
// rows each, every field a top-level column of a primitive type) as a
// Parquet file of one row group, as pqarrow's WriteTable writes it (see
// columnsWriter). direct counts the chunks written without pqarrow.
func writeRowGroupFile(ctx context.Context, w io.Writer, sc *arrow.Schema, cols []*arrow.Chunked, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties) (direct int, err error) {
	// an empty key-value list, as pqarrow writes it (no Arrow schema)
	c, err := newColumnsWriter(ctx, w, arrow.NewSchema(sc.Fields(), nil), props, aprops)
	if err != nil {
		return 0, err
	}
	err = func() error {
		rgw, err := c.fw.AppendRowGroupChecked()
		if err != nil {
			return err
		}
		for k := range sc.Fields() {
			cw, err := rgw.NextColumn()
			if err != nil {
				return err
			}
			for _, a := range cols[k].Chunks() {
				if err := c.writeColumn(k, cw, a); err != nil {
					return err
				}
			}
		}
		return rgw.Close()
	}()
	if cerr := c.fw.Close(); err == nil {
		err = cerr
	}
	return c.direct, err
}

// bufferedFileWriter is pqarrow.FileWriter's buffered row groups
// (WriteBuffered, NewBufferedRowGroupChecked) over a columnsWriter: the
// direct writer's files.
type bufferedFileWriter struct {
	*columnsWriter
	rgw    file.BufferedRowGroupWriter
	closed bool
}

func newBufferedFileWriter(ctx context.Context, w io.Writer, sc *arrow.Schema, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties) (*bufferedFileWriter, error) {
	c, err := newColumnsWriter(ctx, w, sc, props, aprops)
	if err != nil {
		return nil, err
	}
	return &bufferedFileWriter{columnsWriter: c}, nil
}

// NewBufferedRowGroupChecked closes the open row group and starts another.
func (b *bufferedFileWriter) NewBufferedRowGroupChecked() error {
	if b.rgw != nil {
		if err := b.rgw.Close(); err != nil {
			return err
		}
	}
	rgw, err := b.fw.AppendBufferedRowGroupChecked()
	if err != nil {
		return err
	}
	b.rgw = rgw
	return nil
}

// RowGroupTotalBytesWritten is the bytes written (flushed) into the open
// row group.
func (b *bufferedFileWriter) RowGroupTotalBytesWritten() int64 {
	if b.rgw != nil {
		return b.rgw.TotalBytesWritten()
	}
	return 0
}

// WriteBuffered adds rec to the open row group, starting new ones where
// rec would take it past the maximum row group length, as pqarrow's
// WriteBuffered does.
func (b *bufferedFileWriter) WriteBuffered(rec arrow.RecordBatch) error {
	if b.closed {
		return fmt.Errorf("WriteBuffered called on a closed file writer")
	}
	maxRows := b.fw.Properties().MaxRowGroupLength()
	cur := 0
	if b.rgw != nil {
		var err error
		if cur, err = b.rgw.NumRows(); err != nil {
			return err
		}
	} else if err := b.NewBufferedRowGroupChecked(); err != nil {
		return err
	}
	n := rec.NumRows()
	for off, size := int64(0), min(maxRows-int64(cur), n); ; {
		if err := b.writeRange(rec, off, size); err != nil {
			return err
		}
		if off+size >= n {
			return nil
		}
		if err := b.NewBufferedRowGroupChecked(); err != nil {
			return err
		}
		off += size
		size = min(maxRows, n-off)
	}
}

// writeRange writes rows off..off+size of rec to the open row group
// (none: nothing, as pqarrow).
func (b *bufferedFileWriter) writeRange(rec arrow.RecordBatch, off, size int64) error {
	if size == 0 {
		return nil
	}
	for k, col := range rec.Columns() {
		cw, err := b.rgw.Column(k)
		if err != nil {
			return err
		}
		a := col
		if off != 0 || size != int64(col.Len()) {
			a = array.NewSlice(col, off, off+size)
			defer a.Release()
		}
		if err := b.writeColumn(k, cw, a); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the open row group and the file.
func (b *bufferedFileWriter) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.rgw != nil {
		if err := b.rgw.Close(); err != nil {
			return err
		}
	}
	return b.fw.Close()
}

// FileMetadata is the file's metadata, once closed.
func (b *bufferedFileWriter) FileMetadata() (*metadata.FileMetaData, error) {
	return b.fw.FileMetadata()
}

// flatDefLevels returns the definition levels of c, a top-level column
// whose maximum level is maxDef (0 or 1), in buf: nil for a required
// column, else 1 for each value and 0 for each NULL.
func flatDefLevels(buf []int16, c arrow.Array, maxDef int16) []int16 {
	if maxDef == 0 {
		return nil
	}
	n := c.Len()
	if cap(buf) < n {
		buf = make([]int16, n)
	}
	buf = buf[:n]
	if c.NullN() == 0 {
		// doubling copies of a run of ones
		if n > 0 {
			buf[0] = 1
			for i := 1; i < n; i *= 2 {
				copy(buf[i:], buf[:i])
			}
		}
		return buf
	}
	for i := range buf {
		if c.IsNull(i) {
			buf[i] = 0
		} else {
			buf[i] = 1
		}
	}
	return buf
}

// dictPutter is the dictionary encoder's side arrow-go's pqarrow uses to
// seed it with an Arrow dictionary.
type dictPutter interface {
	PutDictionary(arrow.Array) error
	NumEntries() int
	PreservedDictionary() arrow.Array
}

// dictColumnWriter writes one column chunk's dictionary chunks.
type dictColumnWriter struct {
	cw   file.ColumnChunkWriter
	mem  memory.Allocator
	dict arrow.Array // the dictionary put in the encoder; nil until then
	off  bool        // the column is not (or no longer) dictionary encoded
	used []bool      // scratch: the dictionary values a chunk uses
}

// take reports whether d is written here: its values are strings, the
// column is dictionary encoded, and d's dictionary is the one put in the
// encoder (or becomes it). Otherwise pqarrow writes d, as it would.
func (dw *dictColumnWriter) take(d *array.Dictionary) bool {
	if dw.off || d.Dictionary().DataType().ID() != arrow.STRING || d.Indices().DataType().ID() != arrow.INT32 {
		return false
	}
	enc, ok := dw.cw.CurrentEncoder().(dictPutter)
	if !ok || dw.cw.CurrentEncoder().Encoding() != parquet.Encodings.PlainDict {
		dw.off = true
		return false
	}
	if dw.dict == nil {
		if enc.PreservedDictionary() != nil || enc.NumEntries() != 0 {
			dw.off = true // pqarrow seeded it already
			return false
		}
		if err := enc.PutDictionary(d.Dictionary()); err != nil || enc.NumEntries() != d.Dictionary().Len() {
			// a repeated value: the encoder's memo and the indices
			// disagree; pqarrow falls back to plain encoding then
			dw.cw.FallbackToPlain()
			dw.off = true
			return false
		}
		dw.dict = d.Dictionary()
		return true
	}
	return array.Equal(dw.dict, d.Dictionary())
}

// write writes d's indices, after the page statistics of the values they
// use, as pqarrow's writeDictionaryArrow does.
func (dw *dictColumnWriter) write(d *array.Dictionary, defs []int16) error {
	idx := d.Indices().(*array.Int32)
	nonNull := idx.Len() - idx.NullN()
	if st := dw.cw.PageStatistics(); st != nil {
		ref, err := dw.referenced(idx)
		if err != nil {
			return err
		}
		st.IncNulls(int64(max(len(defs)-nonNull, 0)))
		st.IncNumValues(int64(nonNull))
		err = st.UpdateFromArrow(ref, false)
		ref.Release()
		if err != nil {
			return err
		}
	}
	return dw.cw.WriteDictIndices(idx, defs, nil)
}

// referenced returns the dictionary values idx uses, in dictionary order.
func (dw *dictColumnWriter) referenced(idx *array.Int32) (arrow.Array, error) {
	n := dw.dict.Len()
	if cap(dw.used) < n {
		dw.used = make([]bool, n)
	}
	used := dw.used[:n]
	clear(used)
	nulls := idx.NullN() > 0
	for i, k := range idx.Int32Values() {
		if nulls && idx.IsNull(i) {
			continue
		}
		if k < 0 || int(k) >= n {
			return nil, fmt.Errorf("a dictionary index %d past %d values (broken invariant)", k, n)
		}
		used[k] = true
	}
	all := true
	for _, u := range used {
		all = all && u
	}
	if all {
		dw.dict.Retain()
		return dw.dict, nil
	}
	strs := dw.dict.(*array.String)
	var vals []string
	for k, u := range used {
		if u {
			vals = append(vals, strs.Value(k))
		}
	}
	return stringArray(dw.mem, vals), nil
}
