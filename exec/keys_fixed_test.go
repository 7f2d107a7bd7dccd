package exec

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Encode's path for one integer-like column writes the bytes and hashes
// the RowKeys format defines: a tag byte 1, the value little endian, and
// HashKey of that. Sliced arrays read from their offset.
func TestEncodeOneFixedColumn(t *testing.T) {
	mem := hjMem(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint64,
		arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Timestamp_us} {
		bld := array.NewBuilder(mem, typ)
		var vals []uint64
		for range 1000 {
			v := rng.Uint64()
			if rng.IntN(4) == 0 {
				v = uint64(rng.IntN(3)) - 1 // -1, 0, 1
			}
			switch b := bld.(type) {
			case *array.Int64Builder:
				b.Append(int64(v))
			case *array.Int32Builder:
				b.Append(int32(v))
				v = uint64(uint32(v))
			case *array.Uint64Builder:
				b.Append(v)
			case *array.Date32Builder:
				b.Append(arrow.Date32(v))
				v = uint64(uint32(v))
			case *array.TimestampBuilder:
				b.Append(arrow.Timestamp(v))
			}
			vals = append(vals, v)
		}
		whole := bld.NewArray()
		bld.Release()
		sliced := array.NewSlice(whole, 37, 900)
		enc, err := NewKeyEncoder([]arrow.DataType{typ})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			arr  arrow.Array
			vals []uint64
		}{{whole, vals}, {sliced, vals[37:900]}} {
			var rk RowKeys
			if err := enc.Encode([]arrow.Array{c.arr}, &rk); err != nil {
				t.Fatal(err)
			}
			w := enc.Width() - 1
			for r, v := range c.vals {
				want := make([]byte, 1+w)
				want[0] = 1
				for i := range w {
					want[1+i] = byte(v >> (8 * i))
				}
				if got := rk.Key(r); !slices.Equal(got, want) || rk.Hashes[r] != HashKey(want) || rk.Null[r] {
					t.Fatalf("%s row %d: key %x hash %x, want %x hash %x", typ, r, got, rk.Hashes[r], want, HashKey(want))
				}
			}
		}
		sliced.Release()
		whole.Release()
	}
}
