package mergeinto

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/skadedb/skade/scan"
)

// Dictionary pages patched. A sparse patch's string SET column whose
// chunk is dictionary-encoded throughout (a dictionary page, then data
// pages of dictionary indices) is patched page by page as well: the
// dictionary keeps its values, the new ones appended; each data page's
// definition levels and indices are decoded (Parquet's RLE/bit-packed
// hybrid), the updated rows' indices (or NULLs) put in place, and the
// page encoded again, with the bit width the grown dictionary needs, and
// the statistics of the dictionary values it uses, as the column writer
// gives them (dictColumnWriter). No string is made or hashed but the new
// values'. Where the dictionary or a new value is the empty string (see
// stringDict.encode), repeats a value, or would grow past limit, the
// column goes the way of the others (patchDict and arrow-go's writer).
// In a spread MERGE setting a status column, reading it through pqarrow
// and writing it through arrow-go's writer took a tenth of the CPU
// (BENCHMARKS.md, session 33).

// TestHookDictPaged, when set (by tests only), is called with the rows of
// each dictionary-encoded column chunk a sparse patch re-encodes page by
// page.
var TestHookDictPaged func(rows int64)

// dictPatch re-encodes string column leaf of row group g of the file pr
// reads (rows rows) page by page, with vals over the rows at (ascending,
// of the group); ok is false, and nothing kept, where the chunk or the
// values do not qualify (see above).
func dictPatch(pr *file.Reader, g, leaf int, rows int64, at []int32, vals *array.String, limit int64, props *parquet.WriterProperties, mem memory.Allocator) (_ pagedChunk, ok bool, err error) {
	descr := pr.MetaData().Schema.Column(leaf)
	if vals.Len() != len(at) || descr.PhysicalType() != parquet.Types.ByteArray || descr.MaxRepetitionLevel() != 0 ||
		descr.MaxDefinitionLevel() > 1 || descr.SortOrder() != schema.SortUNSIGNED {
		return pagedChunk{}, false, nil
	}
	if _, isString := descr.LogicalType().(schema.StringLogicalType); !isString {
		return pagedChunk{}, false, nil
	}
	cm, err := pr.MetaData().RowGroup(g).ColumnChunk(leaf)
	if err != nil {
		return pagedChunk{}, false, err
	}
	if !cm.HasDictionaryPage() || cm.NumValues() != rows {
		return pagedChunk{}, false, nil
	}
	pages, err := pr.RowGroup(g).GetColumnPageReader(leaf)
	if err != nil {
		return pagedChunk{}, false, err
	}
	defer pages.Close()
	if !pages.Next() {
		return pagedChunk{}, false, pages.Err()
	}
	dp, isDict := pages.Page().(*file.DictionaryPage)
	if !isDict || (parquet.Encoding(dp.Encoding()) != parquet.Encodings.Plain && parquet.Encoding(dp.Encoding()) != parquet.Encodings.PlainDict) {
		return pagedChunk{}, false, nil
	}
	// the dictionary: PLAIN byte arrays, each after its length
	dict := append([]byte(nil), dp.Data()...) // the page's buffer is the reader's
	entries := int(dp.NumValues())
	grow := newDictGrowth(entries, limit)
	var offs []int32 // where each value starts in dict (after its length)
	for pos := 0; len(offs) < entries; {
		if pos+4 > len(dict) {
			return pagedChunk{}, false, nil
		}
		l := int(binary.LittleEndian.Uint32(dict[pos:]))
		if l > len(dict)-pos-4 || !grow.have(string(dict[pos+4:pos+4+l])) {
			return pagedChunk{}, false, nil
		}
		offs = append(offs, int32(pos+4))
		pos += 4 + l
	}
	// the updates' indices (-1: NULL), new values appended
	newIdx := make([]int32, len(at))
	optional := descr.MaxDefinitionLevel() == 1
	for k := range at {
		if vals.IsNull(k) {
			if !optional {
				return pagedChunk{}, false, nil
			}
			newIdx[k] = -1
			continue
		}
		v := vals.Value(k)
		i, added, ok := grow.of(v)
		if !ok {
			return pagedChunk{}, false, nil
		}
		if added {
			var l [4]byte
			binary.LittleEndian.PutUint32(l[:], uint32(len(v)))
			dict = append(append(dict, l[:]...), v...)
			offs = append(offs, int32(len(dict)-len(v)))
		}
		newIdx[k] = i
	}
	n := len(grow.index)
	value := func(i int32) []byte {
		start := offs[i]
		return dict[start : start+int32(binary.LittleEndian.Uint32(dict[start-4:]))]
	}

	pf, ok, err := newPageFile(descr, cm.TotalCompressedSize()+int64(len(dict)), props, mem)
	if !ok {
		return pagedChunk{}, false, err
	}
	defer pf.release()
	if _, err := pf.pw.WriteDictionaryPage(file.NewDictionaryPage(memory.NewBufferBytes(dict), int32(n), props.DictionaryPageEncoding())); err != nil {
		return pagedChunk{}, false, err
	}
	width := max(1, bits.Len(uint(n-1)))
	used := make([]bool, n)

	sc := dictScratches.Get().(*dictScratch)
	defer dictScratches.Put(sc)
	var lo int64 // the group's row the page starts at
	u := 0       // the next update
	for pages.Next() {
		page, isData := pages.Page().(file.DataPage)
		if !isData {
			return pagedChunk{}, false, nil
		}
		if enc := parquet.Encoding(page.Encoding()); enc != parquet.Encodings.RLEDict && enc != parquet.Encodings.PlainDict {
			return pagedChunk{}, false, nil
		}
		rowsIn := int(page.NumValues())
		if lo+int64(rowsIn) > rows {
			return pagedChunk{}, false, nil
		}
		var good bool
		if sc.levels, sc.idx, sc.decoded, good = dictIndices(page, optional, entries, sc.levels, sc.idx, sc.decoded); !good {
			return pagedChunk{}, false, nil
		}
		levels, idx := sc.levels, sc.idx
		for ; u < len(at) && int64(at[u]) < lo+int64(rowsIn); u++ {
			r := int64(at[u]) - lo
			if r < 0 {
				return pagedChunk{}, false, fmt.Errorf("an update of row %d before the page from row %d (broken invariant)", at[u], lo)
			}
			idx[r] = newIdx[u]
		}
		nulls := 0
		clear(used)
		for r, i := range idx {
			if i < 0 {
				levels[r] = 0
				nulls++
				continue
			}
			levels[r] = 1
			used[i] = true
		}
		// the page: levels, then the bit width and the non-NULL indices
		var defs func([]byte) []byte
		if optional {
			defs = func(b []byte) []byte { return hybridEncode(b, levels, 1) }
		}
		body, lvl := pf.pageBody(defs)
		body = append(body, byte(width))
		nonNull := idx
		if nulls > 0 {
			nonNull = sc.decoded[:0] // decoded is done with
			for _, i := range idx {
				if i >= 0 {
					nonNull = append(nonNull, i)
				}
			}
			sc.decoded = nonNull
		}
		body = hybridEncode(body, nonNull, width)
		if pf.pageStats != nil {
			// the dictionary values the page uses, as dictColumnWriter
			// gives them
			bld := array.NewStringBuilder(mem)
			for i, on := range used {
				if on {
					bld.BinaryBuilder.Append(value(int32(i)))
				}
			}
			ref := bld.NewArray()
			bld.Release()
			pf.pageStats.IncNulls(int64(nulls))
			pf.pageStats.IncNumValues(int64(rowsIn - nulls))
			err := pf.pageStats.UpdateFromArrow(ref, false)
			ref.Release()
			if err != nil {
				return pagedChunk{}, false, err
			}
		}
		if err := pf.writePage(body, lvl, rowsIn, nulls, props.DictionaryIndexEncoding()); err != nil {
			return pagedChunk{}, false, err
		}
		lo += int64(rowsIn)
	}
	pc, err := pf.finish(pages, rows, lo, u, len(at), true /* dictionary */)
	return pc, err == nil, err
}

// dictGrowth is a string dictionary as dictPatch and patchDict grow it:
// its values' indices, and the bytes it takes (each value's length and 4,
// as a PLAIN dictionary page stores it), which new values may not take
// past limit, nor its entries past maxDictEntries. Neither takes the
// empty string (whose statistics arrow-go's dictionary path would skip;
// see stringDict.encode) nor a dictionary that repeats a value.
type dictGrowth struct {
	index       map[string]int32
	size, limit int64
}

func newDictGrowth(entries int, limit int64) *dictGrowth {
	return &dictGrowth{index: make(map[string]int32, entries), limit: limit}
}

// have records the dictionary's next value; false where it is the empty
// string or a repeat.
func (d *dictGrowth) have(v string) bool {
	if _, dup := d.index[v]; dup || v == "" {
		return false
	}
	d.index[v] = int32(len(d.index))
	d.size += int64(len(v)) + 4
	return true
}

// of is v's index, v appended where the dictionary lacks it (added); ok
// is false where v is the empty string or the dictionary would grow past
// its limits. The map keeps v: the caller keeps it alive while d is used.
func (d *dictGrowth) of(v string) (i int32, added, ok bool) {
	if v == "" {
		return 0, false, false
	}
	if i, have := d.index[v]; have {
		return i, false, true
	}
	d.size += int64(len(v)) + 4
	if d.size > d.limit || len(d.index) >= maxDictEntries {
		return 0, false, false
	}
	i = int32(len(d.index))
	d.index[v] = i
	return i, true, true
}

// dictScratch is what dictPatch decodes and encodes a page in, pooled
// as fixedScratch is.
type dictScratch struct {
	levels, idx, decoded []int32
}

var dictScratches = sync.Pool{New: func() any { return new(dictScratch) }}

// dictIndices decodes data page p of dictionary indices (into entries
// values) into levels (0 or 1 a row) and idx (a row's index, -1 for a
// NULL), through decoded (the non-NULL rows' indices), reusing the room
// of all three; good is false where the page is encoded otherwise than
// this reads (levels not RLE, an index out of range).
func dictIndices(p file.DataPage, optional bool, entries int, levels, idx, decoded []int32) (_, _, _ []int32, good bool) {
	n := int(p.NumValues())
	levels, idx, decoded = slices.Grow(levels[:0], n), slices.Grow(idx[:0], n), decoded[:0]
	defs, vals, ok := scan.PageRegions(p, optional)
	if !ok {
		return levels, idx, decoded, false
	}
	if optional {
		if levels, ok = hybridDecode(defs, 1, n, levels); !ok {
			return levels, idx, decoded, false
		}
	} else {
		levels = levels[:n]
		for i := range levels {
			levels[i] = 1
		}
	}
	defined := 0 // hybridDecode of width 1 gives 0 or 1
	for _, l := range levels {
		defined += int(l)
	}
	if defined > 0 {
		if len(vals) < 1 || vals[0] > 32 {
			return levels, idx, decoded, false
		}
		if decoded, ok = hybridDecode(vals[1:], int(vals[0]), defined, decoded); !ok {
			return levels, idx, decoded, false
		}
	}
	idx = idx[:n]
	j := 0
	for r, l := range levels {
		if l == 0 {
			idx[r] = -1
			continue
		}
		i := decoded[j]
		j++
		if i < 0 || int(i) >= entries {
			return levels, idx, decoded, false
		}
		idx[r] = i
	}
	return levels, idx, decoded, true
}

// hybridDecode appends the first n values of rle, Parquet's RLE/bit-packed
// hybrid of bit width w, to out; ok is false where rle holds fewer or is
// broken.
func hybridDecode(rle []byte, w, n int, out []int32) (_ []int32, ok bool) {
	if w < 0 || w > 32 {
		return out, false
	}
	want := len(out) + n
	vb := (w + 7) / 8
	for len(out) < want {
		h, k := binary.Uvarint(rle)
		if k <= 0 || h>>1 == 0 || h>>1 > 1<<31 {
			return out, false
		}
		rle = rle[k:]
		if h&1 == 0 { // a run of one value
			if len(rle) < vb {
				return out, false
			}
			var v uint32
			for i := range vb {
				v |= uint32(rle[i]) << (8 * i)
			}
			if w < 32 && v>>w != 0 {
				return out, false
			}
			rle = rle[vb:]
			c := min(int(h>>1), want-len(out))
			at := len(out)
			out = slices.Grow(out, c)[:at+c]
			for i := range out[at:] {
				out[at+i] = int32(v)
			}
			continue
		}
		groups := int(h >> 1)
		if groups*w > len(rle) {
			return out, false
		}
		packed := rle[:groups*w]
		rle = rle[groups*w:]
		count := min(groups*8, want-len(out))
		out = slices.Grow(out, count)
		for i := range count {
			bit := i * w
			var v uint64
			for b := 0; b < w; {
				byt := packed[(bit+b)/8]
				off := (bit + b) % 8
				take := min(8-off, w-b)
				v |= uint64(byt>>off&(1<<take-1)) << b
				b += take
			}
			out = append(out, int32(uint32(v)))
		}
	}
	return out, true
}

// hybridEncode appends vals (each < 1<<w) in Parquet's RLE/bit-packed
// hybrid of bit width w to dst: a run of eight or more equal values (or
// the last values, all equal) as one RLE run, the rest bit-packed in
// groups of eight, the last group padded with zeros.
func hybridEncode(dst []byte, vals []int32, w int) []byte {
	runAt := func(i int) int { // the equal values from i on, up to 8
		j := i + 1
		for j < len(vals) && j-i < 8 && vals[j] == vals[i] {
			j++
		}
		return j - i
	}
	for i := 0; i < len(vals); {
		if r := runAt(i); r >= 8 || i+r == len(vals) {
			j := i + r
			for j < len(vals) && vals[j] == vals[i] {
				j++
			}
			dst = binary.AppendUvarint(dst, uint64(j-i)<<1)
			for b := 0; b < (w+7)/8; b++ {
				dst = append(dst, byte(uint32(vals[i])>>(8*b)))
			}
			i = j
			continue
		}
		start := i
		for i < len(vals) && (i == start || runAt(i) < 8) {
			i = min(i+8, len(vals))
		}
		groups := (i - start + 7) / 8
		dst = binary.AppendUvarint(dst, uint64(groups)<<1|1)
		base := len(dst)
		dst = append(dst, make([]byte, groups*w)...)
		for k, v := range vals[start:i] {
			bit := k * w
			for b := 0; b < w; {
				off := (bit + b) % 8
				take := min(8-off, w-b)
				dst[base+(bit+b)/8] |= byte(uint32(v)>>b&(1<<take-1)) << off
				b += take
			}
		}
	}
	return dst
}
