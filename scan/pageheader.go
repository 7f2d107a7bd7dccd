package scan

import (
	"errors"
	"fmt"
)

// Parquet page headers, read from a column chunk's bytes. A plain read
// (plain.go) walks a chunk's pages itself, so that it can decompress each
// page's values straight into the batch that returns them: arrow-go's page
// reader decompresses into a buffer of its own, and its values were then
// copied once more (BENCHMARKS.md, session 38). A page header is a thrift
// struct in the compact protocol; this reads the fields a plain read
// needs and skips the rest (statistics, CRC, index pages' fields), so a
// header from any writer parses. Bytes that are not such a header give an
// error, never a panic or an unbounded allocation.

// Page types (parquet.thrift PageType).
const (
	pageData       = 0
	pageIndex      = 1
	pageDictionary = 2
	pageDataV2     = 3
)

// pageHeader is what a plain read needs of a page header.
type pageHeader struct {
	typ          int32
	uncompressed int32 // uncompressed_page_size: a V2 page's levels and values
	compressed   int32 // compressed_page_size: the bytes after the header
	// the data page header (V1 or V2), or a dictionary page's
	// (num_values, encoding)
	numValues, numNulls, numRows int32
	encoding                     int32
	defLevelEncoding             int32 // V1 only
	defLen, repLen               int32 // V2 only: the levels' bytes, not compressed
	valuesCompressed             bool  // V2 only: is_compressed (default true)
	hasData                      bool  // a data_page_header or data_page_header_v2 was read
}

var errPageHeader = errors.New("malformed page header")

// thrift compact protocol types
const (
	ctBoolTrue  = 1
	ctBoolFalse = 2
	ctByte      = 3
	ctI16       = 4
	ctI32       = 5
	ctI64       = 6
	ctDouble    = 7
	ctBinary    = 8
	ctList      = 9
	ctSet       = 10
	ctMap       = 11
	ctStruct    = 12
)

// maxThriftDepth bounds nested structs and containers, as thrift's own
// readers do.
const maxThriftDepth = 64

// compactReader reads thrift compact protocol values from b; the first
// error sticks and every later read returns zero.
type compactReader struct {
	b   []byte
	pos int
	err error
}

func (r *compactReader) fail() {
	if r.err == nil {
		r.err = errPageHeader
	}
}

func (r *compactReader) byte1() byte {
	if r.err != nil || r.pos >= len(r.b) {
		r.fail()
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *compactReader) uvarint() uint64 {
	var x uint64
	for s := uint(0); s < 70; s += 7 {
		c := r.byte1()
		if r.err != nil {
			return 0
		}
		x |= uint64(c&0x7f) << s
		if c < 0x80 {
			return x
		}
	}
	r.fail()
	return 0
}

func (r *compactReader) zigzag() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// i32 reads a zigzag varint that must fit an int32.
func (r *compactReader) i32() int32 {
	v := r.zigzag()
	if v != int64(int32(v)) {
		r.fail()
		return 0
	}
	return int32(v)
}

// advance skips n bytes.
func (r *compactReader) advance(n uint64) {
	if r.err != nil || n > uint64(len(r.b)-r.pos) {
		r.fail()
		return
	}
	r.pos += int(n)
}

// skip skips one value of compact type typ.
func (r *compactReader) skip(typ byte, depth int) {
	if depth > maxThriftDepth {
		r.fail()
		return
	}
	switch typ {
	case ctBoolTrue, ctBoolFalse: // a field's value is in its header
	case ctByte:
		r.byte1()
	case ctI16, ctI32, ctI64:
		r.uvarint()
	case ctDouble:
		r.advance(8)
	case ctBinary:
		r.advance(r.uvarint())
	case ctList, ctSet:
		h := r.byte1()
		n, et := uint64(h>>4), h&0x0f
		if n == 15 {
			n = r.uvarint()
		}
		for i := uint64(0); i < n && r.err == nil; i++ {
			if et == ctBoolTrue || et == ctBoolFalse {
				r.byte1() // an element bool is a byte of its own
			} else {
				r.skip(et, depth+1)
			}
		}
	case ctMap:
		n := r.uvarint()
		if n == 0 {
			return
		}
		kv := r.byte1()
		for i := uint64(0); i < n && r.err == nil; i++ {
			for _, t := range [2]byte{kv >> 4, kv & 0x0f} {
				if t == ctBoolTrue || t == ctBoolFalse {
					r.byte1()
				} else {
					r.skip(t, depth+1)
				}
			}
		}
	case ctStruct:
		r.fields(depth+1, func(int16, byte) bool { return false })
	default:
		r.fail()
	}
}

// fields reads a struct's fields up to its stop byte, calling f with each
// field's id and type; f reports whether it read the value, which is
// skipped otherwise.
func (r *compactReader) fields(depth int, f func(id int16, typ byte) bool) {
	if depth > maxThriftDepth {
		r.fail()
		return
	}
	var last int16
	for r.err == nil {
		h := r.byte1()
		if r.err != nil || h == 0 {
			return
		}
		typ := h & 0x0f
		id := last + int16(h>>4)
		if h>>4 == 0 {
			v := r.zigzag()
			if v != int64(int16(v)) {
				r.fail()
				return
			}
			id = int16(v)
		}
		last = id
		if !f(id, typ) {
			r.skip(typ, depth)
		}
	}
}

// readPageHeader reads the page header at the start of b, returning it and
// its length in bytes.
func readPageHeader(b []byte) (h pageHeader, n int, err error) {
	r := &compactReader{b: b}
	h.valuesCompressed = true
	var seen uint8
	r.fields(0, func(id int16, typ byte) bool {
		switch {
		case id == 1 && typ == ctI32:
			h.typ, seen = r.i32(), seen|1
		case id == 2 && typ == ctI32:
			h.uncompressed, seen = r.i32(), seen|2
		case id == 3 && typ == ctI32:
			h.compressed, seen = r.i32(), seen|4
		case (id == 5 || id == 7) && typ == ctStruct:
			// DataPageHeader, or DictionaryPageHeader: the same first two
			// fields (num_values, encoding); a dictionary's third is
			// is_sorted, a bool, skipped
			if id == 5 {
				h.hasData = true
			}
			r.fields(1, func(id int16, typ byte) bool {
				switch {
				case id == 1 && typ == ctI32:
					h.numValues = r.i32()
				case id == 2 && typ == ctI32:
					h.encoding = r.i32()
				case id == 3 && typ == ctI32:
					h.defLevelEncoding = r.i32()
				default:
					return false
				}
				return true
			})
		case id == 8 && typ == ctStruct: // DataPageHeaderV2
			h.hasData = true
			r.fields(1, func(id int16, typ byte) bool {
				switch {
				case id == 1 && typ == ctI32:
					h.numValues = r.i32()
				case id == 2 && typ == ctI32:
					h.numNulls = r.i32()
				case id == 3 && typ == ctI32:
					h.numRows = r.i32()
				case id == 4 && typ == ctI32:
					h.encoding = r.i32()
				case id == 5 && typ == ctI32:
					h.defLen = r.i32()
				case id == 6 && typ == ctI32:
					h.repLen = r.i32()
				case id == 7 && (typ == ctBoolTrue || typ == ctBoolFalse):
					h.valuesCompressed = typ == ctBoolTrue
				default:
					return false
				}
				return true
			})
		default:
			return false
		}
		return true
	})
	if r.err != nil {
		return pageHeader{}, 0, r.err
	}
	if seen != 7 || h.uncompressed < 0 || h.compressed < 0 || h.numValues < 0 || h.numNulls < 0 || h.numRows < 0 || h.defLen < 0 || h.repLen < 0 {
		return pageHeader{}, 0, fmt.Errorf("%w: a required field is missing or negative", errPageHeader)
	}
	return h, r.pos, nil
}
