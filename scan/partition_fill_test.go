package scan

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// TestConstantArray: each partition value type iceberg-go reads from a
// manifest becomes a column of its Iceberg type's Arrow type; a value of
// the wrong type is an error, not a panic or a wrong column.
func TestConstantArray(t *testing.T) {
	u := uuid.MustParse("0f8fad5b-d9cb-469f-a165-70867728950e")
	cases := []struct {
		typ  iceberg.Type
		v    any
		want string
	}{
		{iceberg.PrimitiveTypes.Bool, true, "true"},
		{iceberg.PrimitiveTypes.Int32, int32(-7), "-7"},
		{iceberg.PrimitiveTypes.Int64, int64(1) << 40, "1099511627776"},
		{iceberg.PrimitiveTypes.Float32, float32(1.5), "1.5"},
		{iceberg.PrimitiveTypes.Float64, 2.25, "2.25"},
		{iceberg.PrimitiveTypes.String, "eu-west", "eu-west"},
		{iceberg.PrimitiveTypes.Binary, []byte("ab"), "YWI="},
		{iceberg.PrimitiveTypes.Date, iceberg.Date(20454), "2026-01-01"},
		{iceberg.PrimitiveTypes.Timestamp, iceberg.Timestamp(1767225600000000), "2026-01-01T00:00:00"},
		{iceberg.PrimitiveTypes.TimestampNs, iceberg.TimestampNano(1767225600000000001), "2026-01-01T00:00:00.000000001"},
		{iceberg.PrimitiveTypes.Time, iceberg.Time(3600_000000), "01:00:00.000000"},
		{iceberg.DecimalTypeOf(9, 2), iceberg.DecimalLiteral{Scale: 2, Val: decimal128.FromI64(-12345)}, "-123.45"},
		{iceberg.FixedTypeOf(3), []byte{1, 2, 3}, "AQID"},
		{iceberg.PrimitiveTypes.UUID, u, u.String()},
		{iceberg.PrimitiveTypes.String, nil, "(null)"},
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	for _, c := range cases {
		dt, err := typeToArrow(c.typ)
		if err != nil {
			t.Fatal(err)
		}
		a, err := ConstantArray(mem, dt, c.v, 3)
		if err != nil {
			t.Fatalf("%s %v: %v", c.typ, c.v, err)
		}
		if a.Len() != 3 || !arrow.TypeEqual(a.DataType(), dt) {
			t.Fatalf("%s: %d rows of %s", c.typ, a.Len(), a.DataType())
		}
		for i := range 3 {
			got := a.ValueStr(i)
			if c.v == nil {
				if !a.IsNull(i) {
					t.Fatalf("%s: NULL made %q", c.typ, got)
				}
				continue
			}
			if got != c.want {
				t.Fatalf("%s: row %d %q, want %q", c.typ, i, got, c.want)
			}
		}
		a.Release()
	}
	for _, bad := range []struct {
		typ iceberg.Type
		v   any
	}{
		{iceberg.PrimitiveTypes.Int32, "x"},
		{iceberg.PrimitiveTypes.String, int64(1)},
		{iceberg.PrimitiveTypes.Timestamp, iceberg.TimestampNano(1)},
		{iceberg.DecimalTypeOf(9, 2), iceberg.DecimalLiteral{Scale: 3, Val: decimal128.FromI64(1)}},
		{iceberg.FixedTypeOf(4), []byte{1}},
	} {
		dt, err := typeToArrow(bad.typ)
		if err != nil {
			t.Fatal(err)
		}
		if a, err := ConstantArray(mem, dt, bad.v, 2); err == nil {
			a.Release()
			t.Fatalf("%s from %#v: no error", bad.typ, bad.v)
		}
	}
}

// typeToArrow is the Arrow type iceberg-go reads t as.
func typeToArrow(t iceberg.Type) (arrow.DataType, error) {
	return table.TypeToArrowType(t, false, false)
}
