package mergeinto

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// Fixed-width patches. A sparse patch's SET column of a fixed-width type
// (INT32, INT64, FLOAT, DOUBLE, and the dates, times and timestamps
// stored in them) whose data pages are all PLAIN and hold no NULL, and
// whose new values hold none either, is patched page by page: each page
// is decompressed, the updated rows' values are written over the stored
// ones in its bytes (PLAIN is the values' little-endian bytes, one after
// another), and the page is compressed again with the table's codec and
// written with the statistics arrow-go's column writer would give it.
// No value becomes an Arrow array on the way, nor goes through arrow-go's
// encoder: in a spread MERGE setting a double, that was a tenth of the
// CPU (BENCHMARKS.md, session 33). The pages keep the file's boundaries;
// their levels (all defined) are written anew for the table's page
// version.
//
// A column that does not qualify, or whose pages turn out not to (a
// dictionary page, another encoding, a NULL), goes the way of the others
// (pqarrow read, overlay, arrow-go writer): fixedPatch says no before
// anything of it is kept.

// TestHookFixed, when set (by tests only), is called with the rows of
// each column chunk a sparse patch re-encodes page by page.
var TestHookFixed func(rows int64)

// pagedChunk is one SET column of a patch, re-encoded page by page
// (here, or dictpatch.go): a Parquet file's bytes (raw) whose footer
// (meta) has one row group of that one column.
type pagedChunk struct {
	raw  []byte
	meta *metadata.FileMetaData
}

// fixedWidth is the byte width of leaf's values when a sparse patch may
// re-encode its pages in place for a column of type typ (see above): the
// same bytes in the Arrow array and the file, no repetition, at most one
// level of definition, and signed statistics; 0 otherwise.
func fixedWidth(typ arrow.DataType, leaf *schema.Column) int {
	if leaf.MaxRepetitionLevel() != 0 || leaf.MaxDefinitionLevel() > 1 || leaf.SortOrder() != schema.SortSIGNED {
		return 0
	}
	unit := func(u arrow.TimeUnit) bool {
		var lu schema.TimeUnitType
		switch lt := leaf.LogicalType().(type) {
		case schema.TimestampLogicalType:
			lu = lt.TimeUnit()
		case schema.TimeLogicalType:
			lu = lt.TimeUnit()
		default:
			return false
		}
		return u == arrow.Microsecond && lu == schema.TimeUnitMicros || u == arrow.Nanosecond && lu == schema.TimeUnitNanos
	}
	switch leaf.PhysicalType() {
	case parquet.Types.Int32:
		if id := typ.ID(); id == arrow.INT32 || id == arrow.DATE32 {
			return 4
		}
	case parquet.Types.Int64:
		switch t := typ.(type) {
		case *arrow.Int64Type:
			return 8
		case *arrow.TimestampType:
			if unit(t.Unit) {
				return 8
			}
		case *arrow.Time64Type:
			if unit(t.Unit) {
				return 8
			}
		}
	case parquet.Types.Float:
		if typ.ID() == arrow.FLOAT32 {
			return 4
		}
	case parquet.Types.Double:
		if typ.ID() == arrow.FLOAT64 {
			return 8
		}
	}
	return 0
}

// fixedScratch is what fixedPatch encodes a page in: its body (levels
// and values), compressed values, a V2 page's levels and compressed
// values, and an aligned copy of its values. Pooled: zeroing fresh ones
// took 7% of the patches' CPU in a spread MERGE.
type fixedScratch struct {
	body, compressed bytes.Buffer
	combined         []byte
	typed            []uint64
}

var fixedScratches = sync.Pool{New: func() any { return new(fixedScratch) }}

// pagedSchema is the schema of a file of column descr alone, as the file
// has it; nil where it cannot be made so.
func pagedSchema(descr *schema.Column) *schema.Schema {
	node, ok := descr.SchemaNode().(*schema.PrimitiveNode)
	if !ok {
		return nil
	}
	col, err := schema.NewPrimitiveNodeLogical(node.Name(), node.RepetitionType(), node.LogicalType(), node.PhysicalType(), node.TypeLength(), node.FieldID())
	if err != nil {
		return nil
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Repeated, schema.FieldList{col}, -1)
	if err != nil {
		return nil
	}
	sch := schema.NewSchema(root)
	if !sameStorage(sch.Column(0).SchemaNode(), node) {
		return nil
	}
	return sch
}

// byteSink is a bytes.Buffer that tells where it is, as arrow-go's page
// writer needs.
type byteSink struct{ bytes.Buffer }

func (s *byteSink) Tell() int64 { return int64(s.Len()) }

// fixedPatch re-encodes column leaf of row group g of the file pr reads
// (rows rows) page by page, with the values vals (of width bytes each,
// no NULL) over the rows at (ascending, of the group); ok is false, and
// nothing kept, where the chunk does not qualify (see above). props are
// the table's writer settings.
func fixedPatch(pr *file.Reader, g, leaf int, rows int64, at []int32, vals arrow.Array, width int, props *parquet.WriterProperties, mem memory.Allocator) (_ pagedChunk, ok bool, err error) {
	descr := pr.MetaData().Schema.Column(leaf)
	if vals.NullN() > 0 || vals.Len() != len(at) || fixedWidth(vals.DataType(), descr) != width || width == 0 {
		return pagedChunk{}, false, nil
	}
	if vb := vals.Data().Buffers(); len(vb) < 2 || vb[1] == nil || vb[1].Len() < (vals.Data().Offset()+vals.Len())*width {
		return pagedChunk{}, false, nil
	}
	newVals := vals.Data().Buffers()[1].Bytes()[vals.Data().Offset()*width:]
	cm, err := pr.MetaData().RowGroup(g).ColumnChunk(leaf)
	if err != nil {
		return pagedChunk{}, false, err
	}
	if cm.HasDictionaryPage() || cm.NumValues() != rows {
		return pagedChunk{}, false, nil
	}
	if st, err := cm.Statistics(); err == nil && st != nil && st.HasNullCount() && st.NullCount() > 0 {
		return pagedChunk{}, false, nil
	}
	pages, err := pr.RowGroup(g).GetColumnPageReader(leaf)
	if err != nil {
		return pagedChunk{}, false, err
	}
	defer pages.Close()

	// the patch file: one row group of this one column, as the file has it
	sch := pagedSchema(descr)
	if sch == nil {
		return pagedChunk{}, false, nil
	}
	out := sch.Column(0)
	fb := metadata.NewFileMetadataBuilder(sch, props, nil)
	rgb := fb.AppendRowGroup()
	ccb := rgb.NextColumnChunk()
	var sink byteSink
	sink.Grow(int(min(cm.TotalCompressedSize()+cm.TotalCompressedSize()/4+64<<10, 1<<30)))
	sink.WriteString("PAR1")
	codec := props.CompressionFor(out.Path())
	pw, err := file.NewPageWriter(&sink, codec, props.CompressionLevelFor(out.Path()), ccb, 0, 0, mem, false, nil, nil)
	if err != nil {
		return pagedChunk{}, false, err
	}
	stats := props.StatisticsEnabledFor(out.Path()) && out.SortOrder() != schema.SortUNKNOWN
	var chunkStats, pageStats metadata.TypedStatistics
	if stats {
		chunkStats = metadata.NewStatistics(out, mem)
		pageStats = metadata.NewStatistics(out, mem)
	}
	maxStats := int(props.MaxStatsSizeFor(out.Path()))
	v2 := props.DataPageVersion() == parquet.DataPageV2
	optional := descr.MaxDefinitionLevel() == 1

	sc := fixedScratches.Get().(*fixedScratch)
	defer fixedScratches.Put(sc)
	body, compressed := &sc.body, &sc.compressed
	var lo int64 // the group's row the page starts at
	u := 0       // the next update
	for pages.Next() {
		dp, isData := pages.Page().(file.DataPage)
		if !isData || parquet.Encoding(dp.Encoding()) != parquet.Encodings.Plain {
			return pagedChunk{}, false, nil
		}
		n := int64(dp.NumValues())
		values, good := plainValues(dp, optional)
		if !good || int64(len(values)) != n*int64(width) || lo+n > rows {
			return pagedChunk{}, false, nil
		}
		for ; u < len(at) && int64(at[u]) < lo+n; u++ {
			r := int64(at[u]) - lo
			if r < 0 {
				return pagedChunk{}, false, fmt.Errorf("an update of row %d before the page from row %d (broken invariant)", at[u], lo)
			}
			copy(values[r*int64(width):(r+1)*int64(width)], newVals[u*width:(u+1)*width])
		}
		// the page's levels, as the table's page version has them
		body.Reset()
		var levels int
		if optional {
			var lv [binary.MaxVarintLen64 + 1]byte
			k := binary.PutUvarint(lv[:], uint64(n)<<1) // one RLE run of n ones
			lv[k] = 1
			k++
			if !v2 {
				var l [4]byte
				binary.LittleEndian.PutUint32(l[:], uint32(k))
				body.Write(l[:])
			}
			body.Write(lv[:k])
			levels = body.Len()
		}
		body.Write(values)
		var enc metadata.EncodedStatistics
		if stats {
			if cap(sc.typed) < int(n)*width/8+1 {
				sc.typed = make([]uint64, int(n)*width/8+1)
			}
			typed := sc.typed[:cap(sc.typed)]
			aligned := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(typed))), len(typed)*8)[:len(values)]
			copy(aligned, values)
			if err := updateStats(pageStats, aligned, int(n)); err != nil {
				return pagedChunk{}, false, err
			}
			if enc, err = pageStats.Encode(); err != nil {
				return pagedChunk{}, false, err
			}
			enc.ApplyStatSizeLimits(maxStats)
			enc.Signed = out.SortOrder() == schema.SortSIGNED
			chunkStats.Merge(pageStats)
			pageStats.Reset()
		}
		var page file.DataPage
		if v2 {
			data := body.Bytes()
			if pw.HasCompressor() {
				compressed.Reset()
				c := pw.Compress(compressed, body.Bytes()[levels:])
				sc.combined = append(append(sc.combined[:0], body.Bytes()[:levels]...), c...)
				data = sc.combined
			}
			page = file.NewDataPageV2WithStats(memory.NewBufferBytes(data), int32(n), 0, int32(n), parquet.Encodings.Plain,
				int32(levels), 0, int32(body.Len()), pw.HasCompressor(), enc)
		} else {
			data := body.Bytes()
			if pw.HasCompressor() {
				compressed.Reset()
				data = pw.Compress(compressed, body.Bytes())
			}
			page = file.NewDataPageV1WithStats(memory.NewBufferBytes(data), int32(n), parquet.Encodings.Plain,
				parquet.Encodings.RLE, parquet.Encodings.RLE, int32(body.Len()), enc)
		}
		_, err := pw.WriteDataPage(page)
		page.Release()
		if err != nil {
			return pagedChunk{}, false, err
		}
		lo += n
	}
	if err := pages.Err(); err != nil {
		return pagedChunk{}, false, err
	}
	if lo != rows || u != len(at) {
		return pagedChunk{}, false, fmt.Errorf("pages of %d rows and %d of %d updates in a row group of %d rows (broken invariant)", lo, u, len(at), rows)
	}
	if stats && rows > 0 {
		enc, err := chunkStats.Encode()
		if err != nil {
			return pagedChunk{}, false, err
		}
		enc.ApplyStatSizeLimits(maxStats)
		enc.Signed = out.SortOrder() == schema.SortSIGNED
		if enc.IsSet() {
			ccb.SetStats(enc)
		}
	}
	if err := pw.Close(false /* dictionary */, false /* fallback */); err != nil {
		return pagedChunk{}, false, err
	}
	rgb.SetNumRows(int(rows))
	if err := rgb.Finish(0, 0); err != nil {
		return pagedChunk{}, false, err
	}
	fm, err := fb.Finish()
	if err != nil {
		return pagedChunk{}, false, err
	}
	if codec != compress.Codecs.Uncompressed && !pw.HasCompressor() {
		return pagedChunk{}, false, fmt.Errorf("no %s compressor (broken invariant)", codec)
	}
	return pagedChunk{raw: sink.Bytes(), meta: fm}, true, nil
}

// plainValues are the PLAIN values of data page dp, decompressed, when
// every value is defined (optional: the column's values have one level
// of definition); good is false otherwise, or when the levels are encoded
// another way than RLE.
func plainValues(dp file.DataPage, optional bool) (values []byte, good bool) {
	data := dp.Data()
	n := int(dp.NumValues())
	switch p := dp.(type) {
	case *file.DataPageV2:
		if p.NumNulls() != 0 || p.RepetitionLevelByteLen() != 0 || int(p.DefinitionLevelByteLen()) > len(data) ||
			p.NumRows() != p.NumValues() {
			return nil, false
		}
		k := int(p.DefinitionLevelByteLen())
		if optional && !allDefined(data[:k], n) || !optional && k != 0 {
			return nil, false
		}
		return data[k:], true
	case *file.DataPageV1:
		if !optional {
			return data, true
		}
		if p.DefinitionLevelEncoding() != parquet.Encodings.RLE || len(data) < 4 {
			return nil, false
		}
		k := int(binary.LittleEndian.Uint32(data))
		if k < 0 || k > len(data)-4 || !allDefined(data[4:4+k], n) {
			return nil, false
		}
		return data[4+k:], true
	}
	return nil, false
}

// allDefined reports whether rle, definition levels of bit width 1 in
// Parquet's RLE/bit-packed hybrid, holds at least n levels, the first n
// all 1.
func allDefined(rle []byte, n int) bool {
	for n > 0 {
		h, k := binary.Uvarint(rle)
		if k <= 0 || h == 0 {
			return false
		}
		rle = rle[k:]
		if h&1 == 0 { // a run of one value, in one byte
			if len(rle) < 1 || rle[0] != 1 {
				return false
			}
			rle = rle[1:]
			n -= int(min(h>>1, uint64(n)))
			continue
		}
		// groups of 8 levels bit-packed, one byte a group
		groups := h >> 1
		if groups > uint64(len(rle)) {
			return false
		}
		for _, b := range rle[:groups] {
			want := byte(0xff)
			if n < 8 {
				want = byte(1)<<n - 1
			}
			if b&want != want {
				return false
			}
			n -= min(8, n)
		}
		rle = rle[groups:]
	}
	return true
}

// updateStats adds the n values of a page (values, little-endian, in an
// aligned buffer) to s.
func updateStats(s metadata.TypedStatistics, values []byte, n int) error {
	p := unsafe.Pointer(unsafe.SliceData(values))
	switch st := s.(type) {
	case *metadata.Int32Statistics:
		st.Update(unsafe.Slice((*int32)(p), n), 0)
	case *metadata.Int64Statistics:
		st.Update(unsafe.Slice((*int64)(p), n), 0)
	case *metadata.Float32Statistics:
		st.Update(unsafe.Slice((*float32)(p), n), 0)
	case *metadata.Float64Statistics:
		st.Update(unsafe.Slice((*float64)(p), n), 0)
	default:
		return fmt.Errorf("statistics of type %T for a fixed-width column (broken invariant)", s)
	}
	return nil
}
