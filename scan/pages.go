package scan

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// Parquet data pages taken apart by hand: what a plain read (plain.go)
// and mergeinto's page-by-page patches need of a page, where arrow-go's
// decoders are internal to it.

// TopLeaf is the index of the leaf column of s that is the top-level,
// unrepeated column with field id id; -1 when s has none.
func TopLeaf(s *schema.Schema, id int) int {
	for k := range s.NumColumns() {
		if c := s.Column(k); c.SchemaNode().FieldID() == int32(id) && len(c.ColumnPath()) == 1 && c.MaxRepetitionLevel() == 0 {
			return k
		}
	}
	return -1
}

// FixedWidth is the byte width of leaf's values where they are the bytes
// of an Arrow array of type typ, for reading and patching a column page
// by page (plain.go; mergeinto's fixed-width patches): the same bytes in
// the Arrow array and the file, no repetition, at most one level of
// definition, and signed statistics; 0 otherwise.
func FixedWidth(typ arrow.DataType, leaf *schema.Column) int {
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

// PageRegions splits data page p, decompressed, into its definition
// levels (Parquet's RLE/bit-packed hybrid of bit width 1; none for a
// required column, optional false) and its values; ok is false where p
// has repetition levels, a V1 page's levels are encoded otherwise than
// RLE, or the lengths do not fit.
func PageRegions(p file.DataPage, optional bool) (levels, values []byte, ok bool) {
	data := p.Data()
	switch dp := p.(type) {
	case *file.DataPageV2:
		k := int(dp.DefinitionLevelByteLen())
		if dp.RepetitionLevelByteLen() != 0 || k < 0 || k > len(data) || dp.NumRows() != dp.NumValues() || !optional && k != 0 {
			return nil, nil, false
		}
		return data[:k], data[k:], true
	case *file.DataPageV1:
		if !optional {
			return nil, data, true
		}
		if dp.DefinitionLevelEncoding() != parquet.Encodings.RLE || len(data) < 4 {
			return nil, nil, false
		}
		k := int(binary.LittleEndian.Uint32(data))
		if k > len(data)-4 {
			return nil, nil, false
		}
		return data[4 : 4+k], data[4+k:], true
	}
	return nil, nil, false
}

// PlainValues are the values of page p, decompressed, and how many there
// are, when p is a data page of PLAIN values width bytes each, every one
// defined (optional: the column's values have one level of definition);
// good is false otherwise, or when the levels are encoded another way
// than RLE.
func PlainValues(p file.Page, optional bool, width int) (values []byte, n int, good bool) {
	dp, isData := p.(file.DataPage)
	if !isData || parquet.Encoding(dp.Encoding()) != parquet.Encodings.Plain {
		return nil, 0, false
	}
	n = int(dp.NumValues())
	levels, values, ok := PageRegions(dp, optional)
	if v2, isV2 := dp.(*file.DataPageV2); !ok || isV2 && v2.NumNulls() != 0 || optional && !AllDefined(levels, n) || len(values) != n*width {
		return nil, 0, false
	}
	return values, n, true
}

// AllDefined reports whether rle, definition levels of bit width 1 in
// Parquet's RLE/bit-packed hybrid, holds at least n levels, the first n
// all 1.
func AllDefined(rle []byte, n int) bool {
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
