package scan

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// String columns read page by page. A plain read (plain.go) takes a
// STRING or BINARY column too: a BYTE_ARRAY leaf whose pages are
// dictionary indices (RLE_DICTIONARY, PLAIN_DICTIONARY) into the chunk's
// dictionary page, or PLAIN byte arrays, every value defined. skade writes
// its string columns dictionary-encoded. pqarrow decodes each page's
// definition levels, then appends every value to a BinaryBuilder one call
// at a time: for a 10M-row table's one string column that was more CPU
// than its two fixed-width columns together (BENCHMARKS.md, session 39).
// Here a page's indices are decoded in one loop and the values gathered
// into the batch's offsets and bytes, the bytes' length counted first.
// Anything else (a page of another encoding, a NULL, an index past the
// dictionary, a second dictionary page) sends the rest of the row group
// through pqarrow, as a fixed-width page does.

// maxStringPage bounds the bytes a string page or dictionary page may
// claim to decompress to in a plain read; a larger page is left to
// pqarrow.
const maxStringPage = 256 << 20

// wordSlack is the size of a word copied whole in nextStrings.
const wordSlack = 8

// stringColumn reports whether a column of Arrow type typ is read page by
// page from the file's leaf: STRING or BINARY from a BYTE_ARRAY leaf at
// most optional, annotated as a string or not at all (the bytes are the
// values either way, as pqarrow reads them).
func stringColumn(typ arrow.DataType, leaf *schema.Column) bool {
	if id := typ.ID(); id != arrow.STRING && id != arrow.BINARY {
		return false
	}
	if leaf.PhysicalType() != parquet.Types.ByteArray || leaf.MaxRepetitionLevel() != 0 || leaf.MaxDefinitionLevel() > 1 {
		return false
	}
	switch leaf.LogicalType().(type) {
	case nil, schema.NoLogicalType, schema.StringLogicalType:
		return true
	}
	return false
}

// stringPages is the string state of a plainCursor over a BYTE_ARRAY
// chunk: the chunk's dictionary, and what is left of the page being
// taken (its indices, or its PLAIN byte arrays).
type stringPages struct {
	dict    []byte   // the dictionary page, decompressed
	starts  []uint32 // each dictionary value's bytes: dict[starts[i]:ends[i]]
	ends    []uint32
	hasDict bool
	idx     []uint32 // the page's indices not yet taken (a dictionary page)
	idxBuf  []uint32
	plain   []byte // the page's PLAIN byte arrays not yet taken
	held    int64  // the page's values not yet taken
	// dictMean is the dictionary's mean value length, perValue the
	// page's (stringRows)
	dictMean, perValue float64
	indexed            bool // the page holds dictionary indices (idx), not PLAIN values
	// dictArr is the dictionary as an array of the column's type, made
	// for the first batch returned as a dictionary array (nextDict) and
	// shared by every such batch of the chunk
	dictArr arrow.Array
}

// putPlain copies the page's next PLAIN byte array into data from byte
// at on (room made for the batch's first upTo values) and returns where
// it ends; false where the page's bytes do not hold one.
func (s *stringPages) putPlain(data *memory.Buffer, at int64, upTo int, room func(need int64, upTo int) bool) (int64, bool) {
	p := s.plain
	if len(p) < 4 {
		return 0, false
	}
	l := binary.LittleEndian.Uint32(p)
	if uint64(l) > uint64(len(p)-4) || !room(at+int64(l), upTo) {
		return 0, false
	}
	at += int64(copy(data.Buf()[at:], p[4:4+l]))
	s.plain = p[4+l:]
	return at, true
}

// idsBytes is the bytes of the dictionary values ids name; ok is false
// where one is past the dictionary.
func (s *stringPages) idsBytes(ids []uint32) (total int64, ok bool) {
	nd := uint32(len(s.starts))
	for _, id := range ids {
		if id >= nd {
			return 0, false
		}
		total += int64(s.ends[id] - s.starts[id])
	}
	return total, true
}

// putValue copies dictionary value id into buf at at and returns where
// it ends; a value of at most a word is copied as one word, so buf needs
// wordSlack bytes of room past it (the dictionary has as many bytes of
// padding past its last value).
func (s *stringPages) putValue(buf []byte, at int64, id uint32) int64 {
	st, en := s.starts[id], s.ends[id]
	if en-st <= wordSlack {
		binary.LittleEndian.PutUint64(buf[at:], binary.LittleEndian.Uint64(s.dict[st:]))
		return at + int64(en-st)
	}
	return at + int64(copy(buf[at:], s.dict[st:en]))
}

// gatherNulls takes the next len(out) rows of the page being taken, which
// has a NULL (c.valid), into data from byte at on, setting each row's
// end offset in out (a NULL's is its start); filled is the batch's rows
// filled, for room. It returns where the bytes end; ok is false where
// the page's values do not add up (the caller falls back).
func (c *plainCursor) gatherNulls(out []int32, data *memory.Buffer, at int64, filled int, room func(need int64, upTo int) bool) (int64, bool) {
	s := c.str
	k := len(out)
	kv := validCount(c.valid, c.validAt, k)
	if s.indexed {
		if kv > len(s.idx) {
			return 0, false
		}
		ids := s.idx[:kv]
		total, ok := s.idsBytes(ids)
		if !ok || !room(at+total+wordSlack, filled+k) {
			return 0, false
		}
		buf := data.Buf()
		j := 0
		for r := range k {
			if bitutil.BitIsSet(c.valid, c.validAt+r) {
				at = s.putValue(buf, at, ids[j])
				j++
			}
			out[r] = int32(at)
		}
		s.idx = s.idx[kv:]
		return at, true
	}
	for r := range k {
		if bitutil.BitIsSet(c.valid, c.validAt+r) {
			var ok bool
			if at, ok = s.putPlain(data, at, filled+r+1, room); !ok {
				return 0, false
			}
		}
		out[r] = int32(at)
	}
	return at, true
}

// plainStringBatch is about the most bytes of string values a batch of a
// plain read holds (stringRows; a variable for tests). A batch of a
// table's usual rows (131,071) of 1 kB strings held 131 MB, and a scan
// of a 400 MB table of them peaked at 0.75–0.9 GB of RSS (BENCHMARKS.md,
// session 40). 6 MB, with the sixteenth nextStrings reserves past its
// estimate, stays inside the BufferPool's 8 MB class.
var plainStringBatch = 6 << 20

// stringRows bounds n, the rows of a plain read's next batch, so that
// its string columns (the cursors with string state) hold about
// plainStringBatch bytes of values, judged by each column's current
// page: the dictionary's mean value length, or the PLAIN page's. It
// walks to a column's next page where the one being taken is done (as
// the batch's read would): ok is false, with bad that column, where that
// page is not what a plain read takes, or err is not nil.
func stringRows(curs []plainCursor, n int64) (rows int64, bad int, ok bool, err error) {
	var per float64
	for i := range curs {
		s := curs[i].str
		if s == nil {
			continue
		}
		if s.held == 0 {
			if ok, err := curs[i].stringPage(); err != nil || !ok {
				return 0, i, false, err
			}
		}
		per += s.perValue
	}
	if per*float64(n) <= float64(plainStringBatch) {
		return n, -1, true, nil
	}
	return max(int64(float64(plainStringBatch)/per), 1), -1, true, nil
}

// nextStrings returns the chunk's next n values as a STRING or BINARY
// array (typ); ok is false where a page is not what a plain read takes.
func (c *plainCursor) nextStrings(n int, typ arrow.DataType, mem memory.Allocator) (a arrow.Array, ok bool, err error) {
	s := c.str
	var nb nullBits
	defer nb.release()
	filled := 0
	var ids []int32 // the dictionary phase's indices (nextDict)
	if c.col.dict {
		var idBuf *memory.Buffer
		if idBuf, filled, ok, err = c.nextDict(n, &nb, mem); err != nil || !ok {
			return nil, false, err
		}
		defer idBuf.Release()
		ids = arrow.Int32Traits.CastFromBytes(idBuf.Bytes())[:filled]
		if filled == n {
			return c.dictArray(typ, idBuf, n, &nb, mem), true, nil
		}
	}
	offBuf := writeOnlyBuffer(mem, (n+1)*4, 0)
	defer offBuf.Release()
	offs := arrow.Int32Traits.CastFromBytes(offBuf.Bytes())
	offs[0] = 0
	data := memory.NewResizableBuffer(mem)
	defer data.Release()
	// room makes data hold at least need bytes, the bytes of the batch's
	// first upTo values: where it grows, to what the batch's n values
	// would take at that rate, and a sixteenth more. Doubling from
	// nothing copied a batch of long strings (131,071 values of 1 kB) a
	// dozen times over, and left it up to twice its size.
	room := func(need int64, upTo int) bool {
		if need > math.MaxInt32 {
			return false // past int32 offsets: pqarrow's to split
		}
		if int(need) > data.Cap() {
			est := need * int64(n) / int64(max(upTo, 1))
			data.Reserve(int(min(max(need, est+est/16, 256), math.MaxInt32)))
		}
		return true
	}
	var at int64
	if filled > 0 {
		// a PLAIN page came after the batch's first filled rows, taken as
		// indices: their values go first
		var total int64
		for r, id := range ids {
			if nb.buf == nil || bitutil.BitIsSet(nb.bits, r) {
				total += int64(s.ends[id] - s.starts[id])
			}
		}
		if !room(total+wordSlack, filled) {
			return nil, false, nil
		}
		buf := data.Buf()
		for r, id := range ids {
			if nb.buf == nil || bitutil.BitIsSet(nb.bits, r) {
				at = s.putValue(buf, at, uint32(id))
			}
			offs[r+1] = int32(at)
		}
	}
	for filled < n {
		if s.held == 0 {
			if ok, err := c.stringPage(); err != nil || !ok {
				return nil, false, err
			}
			continue
		}
		k := int(min(s.held, int64(n-filled)))
		out := offs[filled+1 : filled+1+k]
		if c.valid != nil {
			// a page with a NULL: row by row
			nb.start(mem, n, filled)
			var ok bool
			if at, ok = c.gatherNulls(out, data, at, filled, room); !ok {
				return nil, false, nil
			}
			nb.put(filled, c.valid, c.validAt, k)
			c.validAt += k
		} else if s.indexed {
			ids := s.idx[:k]
			total, ok := s.idsBytes(ids)
			// wordSlack bytes of room past the values: a value of at
			// most a word is copied as one word (the dictionary has as
			// many bytes of padding past its last value)
			if !ok || !room(at+total+wordSlack, filled+k) {
				return nil, false, nil // (an index past the dictionary: pqarrow reports it)
			}
			buf := data.Buf()
			for j, id := range ids {
				at = s.putValue(buf, at, id)
				out[j] = int32(at)
			}
			s.idx = s.idx[k:]
		} else {
			for j := range k {
				var ok bool
				if at, ok = s.putPlain(data, at, filled+j+1, room); !ok {
					return nil, false, nil
				}
				out[j] = int32(at)
			}
		}
		if c.valid == nil {
			nb.put(filled, nil, 0, k)
		}
		s.held -= int64(k)
		filled += k
	}
	data.ResizeNoShrink(int(at))
	valid, nulls := nb.take(n)
	if valid != nil {
		defer valid.Release()
	}
	d := array.NewData(typ, n, []*memory.Buffer{valid, offBuf, data}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d), true, nil
}

// nextDict takes up to the chunk's next n values as dictionary indices
// (into the int32 buffer it returns, which the caller releases), their
// validity into nb, while the pages are dictionary indices; filled is how
// many it took, fewer than n where a PLAIN page came (nextStrings gathers
// the rest). ok is false where a page is not what a plain read takes.
//
// A column asked for as a dictionary (plainColumn.dict) is one a GROUP
// BY groups by: the aggregate maps each dictionary value to its group
// once, not each row's bytes (exec.HashAggregate).
func (c *plainCursor) nextDict(n int, nb *nullBits, mem memory.Allocator) (idBuf *memory.Buffer, filled int, ok bool, err error) {
	s := c.str
	idBuf = writeOnlyBuffer(mem, n*4, 0)
	ids := arrow.Int32Traits.CastFromBytes(idBuf.Bytes())
	fail := func(err error) (*memory.Buffer, int, bool, error) {
		idBuf.Release()
		return nil, 0, false, err
	}
	for filled < n {
		if s.held == 0 {
			if ok, err := c.stringPage(); err != nil || !ok {
				return fail(err)
			}
			continue
		}
		if !s.indexed {
			break
		}
		k := int(min(s.held, int64(n-filled)))
		out := ids[filled : filled+k]
		nd := uint32(len(s.starts))
		if c.valid != nil {
			nb.start(mem, n, filled)
			kv := validCount(c.valid, c.validAt, k)
			if kv > len(s.idx) {
				return fail(nil)
			}
			j := 0
			for r := range k {
				out[r] = 0 // a NULL's index: any valid one
				if bitutil.BitIsSet(c.valid, c.validAt+r) {
					id := s.idx[j]
					if id >= nd {
						return fail(nil) // (pqarrow reports it)
					}
					out[r] = int32(id)
					j++
				}
			}
			nb.put(filled, c.valid, c.validAt, k)
			c.validAt += k
			s.idx = s.idx[kv:]
		} else {
			for r, id := range s.idx[:k] {
				if id >= nd {
					return fail(nil)
				}
				out[r] = int32(id)
			}
			nb.put(filled, nil, 0, k)
			s.idx = s.idx[k:]
		}
		s.held -= int64(k)
		filled += k
	}
	return idBuf, filled, true, nil
}

// dictArray is a batch of n rows taken as indices (idBuf, validity in nb)
// as a dictionary array of the chunk's dictionary, whose values are of
// type typ.
func (c *plainCursor) dictArray(typ arrow.DataType, idBuf *memory.Buffer, n int, nb *nullBits, mem memory.Allocator) arrow.Array {
	s := c.str
	if s.dictArr == nil {
		// the values contiguous, as an array of typ holds them
		k := len(s.starts)
		offs := make([]int32, k+1)
		var data []byte
		for i := range k {
			data = append(data, s.dict[s.starts[i]:s.ends[i]]...)
			offs[i+1] = int32(len(data))
		}
		d := array.NewData(typ, k, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs)), memory.NewBufferBytes(data)}, nil, 0, 0)
		s.dictArr = array.MakeFromData(d)
		d.Release()
	}
	valid, nulls := nb.take(n)
	if valid != nil {
		defer valid.Release()
	}
	d := array.NewDataWithDictionary(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: typ}, n, []*memory.Buffer{valid, idBuf}, nulls, 0, s.dictArr.Data().(*array.Data))
	defer d.Release()
	return array.MakeFromData(d)
}

// stringPage walks to the chunk's next data page and makes it the one
// being taken, reading the dictionary page on the way; ok is false where
// a page is not what a plain read takes (the caller falls back).
func (c *plainCursor) stringPage() (ok bool, err error) {
	s := c.str
	for {
		h, body, more, err := c.nextPage()
		if err != nil || !more {
			return false, nil
		}
		switch h.typ {
		case pageDictionary:
			if s.hasDict || h.encoding != int32(parquet.Encodings.Plain) && h.encoding != int32(parquet.Encodings.PlainDict) {
				return false, nil
			}
			raw, ok, err := c.pageBytes(h.uncompressed, body)
			if err != nil || !ok {
				return false, err
			}
			// a copy of its own (the data pages after it reuse scratch),
			// with wordSlack bytes of padding
			if s.starts, s.ends, ok = byteArrays(raw, int(h.numValues), s.starts, s.ends); !ok {
				return false, nil
			}
			s.dict = append(append(s.dict[:0], raw...), make([]byte, wordSlack)...)
			s.hasDict = true
			if k := len(s.starts); k > 0 {
				s.dictMean = float64(len(raw)-4*k) / float64(k)
			}
			continue
		case pageData, pageDataV2:
		default:
			return false, nil
		}
		if int64(h.numValues) > c.left || h.numValues < 0 {
			return false, nil
		}
		defined := int(h.numValues)
		c.valid = nil
		var vals []byte
		if c.mayHoldNulls(h) {
			if vals, defined, ok, err = c.nullLevels(h, body); err != nil || !ok {
				return false, err
			}
		} else if vals, ok, err = c.stringValues(h, body); err != nil || !ok {
			return false, err
		}
		s.idx, s.plain, s.indexed = nil, nil, false
		switch h.encoding {
		case int32(parquet.Encodings.Plain):
			s.plain = vals
			s.perValue = float64(len(vals)-4*defined) / float64(max(defined, 1))
		case int32(parquet.Encodings.RLEDict), int32(parquet.Encodings.PlainDict):
			if !s.hasDict || len(vals) < 1 || vals[0] > 32 {
				return false, nil
			}
			if s.idxBuf, ok = decodeIndices(vals[1:], int(vals[0]), defined, s.idxBuf); !ok {
				return false, nil
			}
			s.idx, s.indexed = s.idxBuf, true
			s.perValue = s.dictMean
		default:
			return false, nil
		}
		s.held = int64(h.numValues)
		c.left -= int64(h.numValues)
		if s.held > 0 {
			return true, nil
		}
	}
}

// stringValues is the values' bytes of data page h (body as stored),
// decompressed, past its definition levels; ok is false where the page is
// not one whose values are all defined.
func (c *plainCursor) stringValues(h pageHeader, body []byte) (vals []byte, ok bool, err error) {
	optional := c.col.optional
	if h.typ == pageDataV2 {
		k, ok := c.allDefinedV2(h, body)
		if !ok || k > int64(h.uncompressed) {
			return nil, false, nil
		}
		if !h.valuesCompressed {
			return body[k:], int64(len(body)) == int64(h.uncompressed), nil
		}
		return c.pageBytes(h.uncompressed-int32(k), body[k:])
	}
	if optional && h.defLevelEncoding != int32(parquet.Encodings.RLE) {
		return nil, false, nil
	}
	data, ok, err := c.pageBytes(h.uncompressed, body)
	if err != nil || !ok || !optional {
		return data, ok, err
	}
	vals, ok = allDefinedV1(h, data)
	return vals, ok, nil
}

// pageBytes is a page's body decompressed to its size bytes (into
// scratch), or body itself when the chunk is not compressed; ok is false
// where size is past maxStringPage or does not match an uncompressed
// body.
func (c *plainCursor) pageBytes(size int32, body []byte) ([]byte, bool, error) {
	if size < 0 || size > maxStringPage {
		return nil, false, nil
	}
	if c.codec == nil {
		return body, len(body) == int(size), nil
	}
	out, err := c.scratchPage(size, body)
	return out, err == nil, err
}

// byteArrays finds n PLAIN byte arrays (a 4-byte little-endian length,
// then the bytes) in b, appending where each one's bytes start and end;
// false where b does not hold exactly them.
func byteArrays(b []byte, n int, starts, ends []uint32) ([]uint32, []uint32, bool) {
	if n < 0 || n > len(b)/4 || len(b) > math.MaxUint32 {
		return starts, ends, false
	}
	starts, ends = starts[:0], ends[:0]
	at := 0
	for range n {
		if len(b)-at < 4 {
			return starts, ends, false
		}
		l := binary.LittleEndian.Uint32(b[at:])
		if uint64(l) > uint64(len(b)-at-4) {
			return starts, ends, false
		}
		starts = append(starts, uint32(at+4))
		at += 4 + int(l)
		ends = append(ends, uint32(at))
	}
	return starts, ends, at == len(b)
}

// decodeIndices decodes n values of bit width width from b, Parquet's
// RLE/bit-packed hybrid without a length prefix (a dictionary page's
// indices), into out (reused); false where b does not hold them.
func decodeIndices(b []byte, width, n int, out []uint32) ([]uint32, bool) {
	if cap(out) < n {
		out = make([]uint32, 0, n)
	}
	out = out[:0]
	byteW := (width + 7) / 8
	mask := uint64(1)<<width - 1
	for len(out) < n {
		h, k := binary.Uvarint(b)
		if k <= 0 {
			return out, false
		}
		b = b[k:]
		if h&1 == 0 {
			// a run of one value, in byteW bytes
			count := h >> 1
			if count == 0 || len(b) < byteW {
				return out, false
			}
			var v uint64
			for i := range byteW {
				v |= uint64(b[i]) << (8 * i)
			}
			if v > mask {
				return out, false
			}
			b = b[byteW:]
			m := int(min(count, uint64(n-len(out))))
			for range m {
				out = append(out, uint32(v))
			}
			continue
		}
		// groups of 8 values, width bytes a group
		groups := h >> 1
		if groups == 0 || width > 0 && groups > uint64(len(b)) {
			// (a group of width bytes: more groups than bytes cannot be)
			return out, false
		}
		m := min(int(min(groups, uint64(n)))*8, n-len(out))
		need := (m*width + 7) / 8
		if need > len(b) {
			return out, false
		}
		var acc uint64
		bits, p := 0, 0
		for range m {
			for bits < width {
				acc |= uint64(b[p]) << bits
				p++
				bits += 8
			}
			out = append(out, uint32(acc&mask))
			acc >>= width
			bits -= width
		}
		if width > 0 {
			b = b[min(int(groups)*width, len(b)):]
		}
	}
	return out, true
}
