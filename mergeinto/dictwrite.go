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

// writeRowGroupFile writes cols (one chunked column per field of sc, rows
// rows each, every field a top-level column of a primitive type) as a
// Parquet file of one row group, as pqarrow's WriteTable would, but for
// the string columns given as dictionary chunks over one dictionary
// (dictChunks). pqarrow finds the dictionary values each chunk uses, for
// the statistics, with compute.Unique over its indices (a hash per row,
// which took 8% of a spread copy-on-write MERGE's CPU); here they are
// marked in a slice of the dictionary's size, and the dictionary is put
// in the encoder once. Pages, encodings and statistics come out as
// pqarrow writes them (TestWriteRowGroupFileMatchesPqarrow). direct
// counts the chunks written here rather than by pqarrow.
func writeRowGroupFile(ctx context.Context, w io.Writer, sc *arrow.Schema, cols []*arrow.Chunked, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties) (direct int, err error) {
	psc, err := pqarrow.ToParquet(sc, props, aprops)
	if err != nil {
		return 0, err
	}
	// an empty key-value list, as pqarrow writes it (no Arrow schema)
	fw, err := file.NewParquetWriterWithError(w, psc.Root(), file.WithWriterProps(props), file.WithWriteMetadata(make(metadata.KeyValueMetadata, 0)))
	if err != nil {
		return 0, err
	}
	actx := pqarrow.NewArrowWriteContext(ctx, &aprops)
	err = func() error {
		rgw, err := fw.AppendRowGroupChecked()
		if err != nil {
			return err
		}
		var defs []int16
		for k, f := range sc.Fields() {
			cw, err := rgw.NextColumn()
			if err != nil {
				return err
			}
			if cw.LevelInfo().DefLevel > 1 || cw.LevelInfo().RepLevel > 0 {
				return fmt.Errorf("column %s is nested (broken invariant)", f.Name)
			}
			dw := dictColumnWriter{cw: cw, mem: props.Allocator()}
			for _, c := range cols[k].Chunks() {
				defs = flatDefLevels(defs, c, cw.LevelInfo().DefLevel)
				if d, ok := c.(*array.Dictionary); ok && dw.take(d) {
					err = dw.write(d, defs)
					direct++
				} else {
					err = pqarrow.WriteArrowToColumn(actx, cw, c, defs, nil, f.Nullable)
				}
				if err != nil {
					return fmt.Errorf("column %s: %w", f.Name, err)
				}
			}
		}
		return rgw.Close()
	}()
	if cerr := fw.Close(); err == nil {
		err = cerr
	}
	return direct, err
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
	nulls := c.NullN() > 0
	for i := range buf {
		if nulls && c.IsNull(i) {
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
	b := array.NewStringBuilder(dw.mem)
	defer b.Release()
	for k, u := range used {
		if u {
			b.Append(strs.Value(k))
		}
	}
	return b.NewArray(), nil
}
