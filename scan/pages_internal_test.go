package scan

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// FixedWidth takes a column page by page only where the Arrow values'
// bytes are the file's: the same width, the same time unit, signed.
func TestFixedWidth(t *testing.T) {
	leaf := func(typ parquet.Type, lt schema.LogicalType, rep parquet.Repetition) *schema.Column {
		t.Helper()
		n, err := schema.NewPrimitiveNodeLogical("c", rep, lt, typ, -1, 1)
		if err != nil {
			t.Fatal(err)
		}
		root, err := schema.NewGroupNode("schema", parquet.Repetitions.Repeated, schema.FieldList{n}, -1)
		if err != nil {
			t.Fatal(err)
		}
		return schema.NewSchema(root).Column(0)
	}
	opt, req, rep := parquet.Repetitions.Optional, parquet.Repetitions.Required, parquet.Repetitions.Repeated
	none := schema.NoLogicalType{}
	for _, tc := range []struct {
		typ  arrow.DataType
		col  *schema.Column
		want int
	}{
		{arrow.PrimitiveTypes.Float64, leaf(parquet.Types.Double, none, opt), 8},
		{arrow.PrimitiveTypes.Float64, leaf(parquet.Types.Double, none, req), 8},
		{arrow.PrimitiveTypes.Float32, leaf(parquet.Types.Float, none, opt), 4},
		{arrow.PrimitiveTypes.Int64, leaf(parquet.Types.Int64, schema.NewIntLogicalType(64, true), opt), 8},
		{arrow.PrimitiveTypes.Int32, leaf(parquet.Types.Int32, schema.NewIntLogicalType(32, true), opt), 4},
		{arrow.FixedWidthTypes.Date32, leaf(parquet.Types.Int32, schema.DateLogicalType{}, opt), 4},
		{arrow.FixedWidthTypes.Timestamp_us, leaf(parquet.Types.Int64, schema.NewTimestampLogicalType(false, schema.TimeUnitMicros), opt), 8},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, leaf(parquet.Types.Int64, schema.NewTimestampLogicalType(true, schema.TimeUnitMicros), opt), 8},
		{arrow.FixedWidthTypes.Timestamp_ns, leaf(parquet.Types.Int64, schema.NewTimestampLogicalType(false, schema.TimeUnitNanos), opt), 8},
		{arrow.FixedWidthTypes.Time64us, leaf(parquet.Types.Int64, schema.NewTimeLogicalType(false, schema.TimeUnitMicros), opt), 8},
		// another unit, another width, unsigned, repeated, a float in a double
		{arrow.FixedWidthTypes.Timestamp_us, leaf(parquet.Types.Int64, schema.NewTimestampLogicalType(false, schema.TimeUnitMillis), opt), 0},
		{arrow.FixedWidthTypes.Timestamp_ms, leaf(parquet.Types.Int64, schema.NewTimestampLogicalType(false, schema.TimeUnitMillis), opt), 0},
		{arrow.FixedWidthTypes.Timestamp_s, leaf(parquet.Types.Int64, schema.NewTimestampLogicalType(false, schema.TimeUnitMillis), opt), 0},
		{arrow.PrimitiveTypes.Int16, leaf(parquet.Types.Int32, schema.NewIntLogicalType(16, true), opt), 0},
		{arrow.PrimitiveTypes.Uint32, leaf(parquet.Types.Int32, schema.NewIntLogicalType(32, false), opt), 0},
		{arrow.PrimitiveTypes.Int64, leaf(parquet.Types.Int64, schema.NewIntLogicalType(64, false), opt), 0},
		{arrow.PrimitiveTypes.Int64, leaf(parquet.Types.Int64, none, rep), 0},
		{arrow.PrimitiveTypes.Float32, leaf(parquet.Types.Double, none, opt), 0},
		{&arrow.Decimal128Type{Precision: 10, Scale: 2}, leaf(parquet.Types.Int64, schema.NewDecimalLogicalType(10, 2), opt), 0},
	} {
		if got := FixedWidth(tc.typ, tc.col); got != tc.want {
			t.Errorf("%s as %s: width %d, want %d", tc.typ, tc.col, got, tc.want)
		}
	}
}

// AllDefined reads definition levels of bit width 1 in both of the
// hybrid's run kinds, and says no to a 0, a short run or bad bytes.
func TestAllDefined(t *testing.T) {
	for _, tc := range []struct {
		rle  []byte
		n    int
		want bool
	}{
		{[]byte{10 << 1, 1}, 10, true},                // RLE run of ten 1s
		{[]byte{10 << 1, 1}, 9, true},                 // longer than needed
		{[]byte{10 << 1, 1}, 11, false},               // too short
		{[]byte{10 << 1, 0}, 10, false},               // ten 0s
		{[]byte{2<<1 | 1, 0xff, 0x0f}, 12, true},      // bit-packed: 8 + 4 set
		{[]byte{2<<1 | 1, 0xff, 0x0b}, 12, false},     // the 11th is 0
		{[]byte{2<<1 | 1, 0xff, 0x0f}, 13, false},     // the 13th is 0
		{[]byte{1<<1 | 1, 0xff, 4 << 1, 1}, 12, true}, // bit-packed then RLE
		{[]byte{2<<1 | 1, 0xff}, 12, false},           // truncated
		{[]byte{}, 1, false},
		{[]byte{0}, 1, false}, // an empty run never ends
		{nil, 0, true},
	} {
		if got := AllDefined(tc.rle, tc.n); got != tc.want {
			t.Errorf("AllDefined(%v, %d) = %v, want %v", tc.rle, tc.n, got, tc.want)
		}
	}
}

// PlainValues takes a page's values only where it is a data page of
// PLAIN values of the width asked for, and its levels say every row is
// defined, whatever its header says, for both page versions.
func TestPlainValues(t *testing.T) {
	vals := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12} // three INT32s
	v2 := func(levels []byte, nulls int32) file.DataPage {
		data := append(append([]byte(nil), levels...), vals...)
		return file.NewDataPageV2(memory.NewBufferBytes(data), 3, nulls, 3, parquet.Encodings.Plain, int32(len(levels)), 0, int32(len(data)), false)
	}
	v1 := func(levels []byte) file.DataPage {
		var data []byte
		if levels != nil {
			data = append([]byte{byte(len(levels)), 0, 0, 0}, levels...)
		}
		data = append(data, vals...)
		return file.NewDataPageV1(memory.NewBufferBytes(data), 3, parquet.Encodings.Plain, parquet.Encodings.RLE, parquet.Encodings.RLE, int32(len(data)))
	}
	for _, tc := range []struct {
		name     string
		page     file.DataPage
		optional bool
		ok       bool
	}{
		{"v2, all defined", v2([]byte{3 << 1, 1}, 0), true, true},
		{"v2, required", v2(nil, 0), false, true},
		{"v2, a NULL in the header", v2([]byte{3 << 1, 1}, 1), true, false},
		{"v2, a NULL in the levels only", v2([]byte{1<<1 | 1, 0b101}, 0), true, false},
		{"v2, levels too short", v2([]byte{2 << 1, 1}, 0), true, false},
		{"v2, no levels for an optional column", v2(nil, 0), true, false},
		{"v1, all defined", v1([]byte{3 << 1, 1}), true, true},
		{"v1, required", v1(nil), false, true},
		{"v1, a NULL in the levels", v1([]byte{1<<1 | 1, 0b011}), true, false},
	} {
		got, n, ok := PlainValues(tc.page, tc.optional, 4)
		if ok != tc.ok || ok && (string(got) != string(vals) || n != 3) {
			t.Errorf("%s: values %v (ok %v), want ok %v", tc.name, got, ok, tc.ok)
		}
	}
	// not three values of 8 bytes; not PLAIN; not a data page
	if _, _, ok := PlainValues(v2([]byte{3 << 1, 1}, 0), true, 8); ok {
		t.Error("12 bytes taken for three values of 8 bytes")
	}
	delta := file.NewDataPageV2(memory.NewBufferBytes(append([]byte{3 << 1, 1}, vals...)), 3, 0, 3, parquet.Encodings.DeltaBinaryPacked, 2, 0, 14, false)
	if _, _, ok := PlainValues(delta, true, 4); ok {
		t.Error("a DELTA_BINARY_PACKED page taken as PLAIN values")
	}
	dict := file.NewDictionaryPage(memory.NewBufferBytes(vals), 3, parquet.Encodings.Plain)
	if _, _, ok := PlainValues(dict, true, 4); ok {
		t.Error("a dictionary page taken as a data page")
	}
}
