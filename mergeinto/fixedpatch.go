package mergeinto

import (
	"encoding/binary"
	"fmt"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/skadedb/skade/scan"
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

// fixedScratch is an aligned copy of a page's values, for the
// statistics; pooled as pageScratch.
type fixedScratch struct {
	typed []uint64
}

var fixedScratches = sync.Pool{New: func() any { return new(fixedScratch) }}

// fixedPatch re-encodes column leaf of row group g of the file pr reads
// (rows rows) page by page, with the values vals (of width bytes each,
// no NULL) over the rows at (ascending, of the group); ok is false, and
// nothing kept, where the chunk does not qualify (see above). props are
// the table's writer settings.
func fixedPatch(pr *file.Reader, g, leaf int, rows int64, at []int32, vals arrow.Array, width int, props *parquet.WriterProperties, mem memory.Allocator) (_ pagedChunk, ok bool, err error) {
	descr := pr.MetaData().Schema.Column(leaf)
	if vals.NullN() > 0 || vals.Len() != len(at) || scan.FixedWidth(vals.DataType(), descr) != width || width == 0 {
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

	pf, ok, err := newPageFile(descr, cm.TotalCompressedSize(), props, mem)
	if !ok {
		return pagedChunk{}, false, err
	}
	defer pf.release()
	optional := descr.MaxDefinitionLevel() == 1
	sc := fixedScratches.Get().(*fixedScratch)
	defer fixedScratches.Put(sc)
	var lo int64 // the group's row the page starts at
	u := 0       // the next update
	for pages.Next() {
		values, nv, good := scan.PlainValues(pages.Page(), optional, width)
		n := int64(nv)
		if !good || lo+n > rows {
			return pagedChunk{}, false, nil
		}
		for ; u < len(at) && int64(at[u]) < lo+n; u++ {
			r := int64(at[u]) - lo
			if r < 0 {
				return pagedChunk{}, false, fmt.Errorf("an update of row %d before the page from row %d (broken invariant)", at[u], lo)
			}
			copy(values[r*int64(width):(r+1)*int64(width)], newVals[u*width:(u+1)*width])
		}
		// the page's levels (one RLE run of n ones), then its values
		var ones func([]byte) []byte
		if optional {
			ones = func(b []byte) []byte { return append(binary.AppendUvarint(b, uint64(n)<<1), 1) }
		}
		body, levels := pf.pageBody(ones)
		body = append(body, values...)
		if pf.pageStats != nil {
			if cap(sc.typed) < int(n)*width/8+1 {
				sc.typed = make([]uint64, int(n)*width/8+1)
			}
			typed := sc.typed[:cap(sc.typed)]
			aligned := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(typed))), len(typed)*8)[:len(values)]
			copy(aligned, values)
			if err := updateStats(pf.pageStats, aligned, int(n)); err != nil {
				return pagedChunk{}, false, err
			}
		}
		if err := pf.writePage(body, levels, int(n), 0, parquet.Encodings.Plain); err != nil {
			return pagedChunk{}, false, err
		}
		lo += n
	}
	pc, err := pf.finish(pages, rows, lo, u, len(at), false /* dictionary */)
	return pc, err == nil, err
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
