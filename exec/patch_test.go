package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Patch against rows built value by value: each patchable type,
// with and without NULLs on either side, on sliced base arrays (an offset
// into their buffers), replacing the first and last rows, runs of
// neighbours, empty strings, and no row at all.
func TestPatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	types := []arrow.DataType{
		arrow.BinaryTypes.String, arrow.BinaryTypes.Binary,
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
		arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Timestamp_us, &arrow.Decimal128Type{Precision: 20, Scale: 2},
	}
	rng := rand.New(rand.NewPCG(7, 11))
	// value i of a column, as a builder appends it (NULL when null)
	appendVal := func(b array.Builder, i int, null bool) {
		if null {
			b.AppendNull()
			return
		}
		switch b := b.(type) {
		case *array.StringBuilder:
			b.Append(fmt.Sprintf("%0*d", i%4, i)) // i%4 == 0: the empty string
		case *array.BinaryBuilder:
			b.Append([]byte(fmt.Sprintf("b%d", i)))
		case *array.Int8Builder:
			b.Append(int8(i))
		case *array.Int16Builder:
			b.Append(int16(i))
		case *array.Int32Builder:
			b.Append(int32(i))
		case *array.Int64Builder:
			b.Append(int64(i) << 33)
		case *array.Uint64Builder:
			b.Append(uint64(i) * 3)
		case *array.Float32Builder:
			b.Append(float32(i) / 4)
		case *array.Float64Builder:
			b.Append(float64(i) / 8)
		case *array.Date32Builder:
			b.Append(arrow.Date32(i))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(i))
		case *array.Decimal128Builder:
			b.Append(decimal128.FromI64(int64(i) * 1001))
		default:
			t.Fatalf("no value for %T", b)
		}
	}
	for _, typ := range types {
		for _, tc := range []struct {
			name              string
			baseNull, valNull bool
			rows              []int32
		}{
			{"none", false, false, nil},
			{"ends", false, false, []int32{0, 39}},
			{"run", true, false, []int32{5, 6, 7, 8}},
			{"scattered, NULL values", false, true, []int32{1, 9, 10, 22, 31, 38}},
			{"all", true, true, nil},
		} {
			t.Run(fmt.Sprintf("%s/%s", typ, tc.name), func(t *testing.T) {
				const n, off = 40, 3
				rows := tc.rows
				if tc.name == "all" {
					for r := range int32(n) {
						rows = append(rows, r)
					}
				}
				baseNull := make([]bool, n+off)
				bb := array.NewBuilder(mem, typ)
				for i := range n + off {
					baseNull[i] = tc.baseNull && rng.IntN(3) == 0
					appendVal(bb, i, baseNull[i])
				}
				whole := bb.NewArray()
				bb.Release()
				base := array.NewSlice(whole, off, off+n)
				whole.Release()
				defer base.Release()
				vb := array.NewBuilder(mem, typ)
				valNull := make([]bool, len(rows))
				for k := range rows {
					valNull[k] = tc.valNull && k%2 == 1
					appendVal(vb, 1000+k, valNull[k])
				}
				vals := vb.NewArray()
				vb.Release()
				defer vals.Release()
				// the expected column, value by value
				eb := array.NewBuilder(mem, typ)
				k := 0
				for r := range n {
					if k < len(rows) && int(rows[k]) == r {
						appendVal(eb, 1000+k, valNull[k])
						k++
						continue
					}
					appendVal(eb, r+off, baseNull[r+off])
				}
				want := eb.NewArray()
				eb.Release()
				defer want.Release()
				got, ok := Patch(mem, base, rows, vals)
				if !ok {
					t.Fatal("Patch declined a small column")
				}
				defer got.Release()
				if !array.Equal(got, want) {
					t.Fatalf("patched:\n%v\nwant:\n%v", got, want)
				}
				if got.NullN() != want.NullN() {
					t.Fatalf("%d NULLs, want %d", got.NullN(), want.NullN())
				}
			})
		}
	}
}
