package exec

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSealedFilter builds tables large enough for Seal to build its
// filter (short keys in slots, and strings in the arena), probes present,
// absent and NULL keys through it, and checks every answer against a Go
// map; an insert after Seal must turn the filter off.
func TestSealedFilter(t *testing.T) {
	const n = 300_000 // keys 0, 2, 4, ...: the slots pass htTouchMin
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String} {
		t.Run(typ.String(), func(t *testing.T) {
			enc, err := NewKeyEncoder([]arrow.DataType{typ})
			if err != nil {
				t.Fatal(err)
			}
			column := func(vals []int, nulls bool) arrow.Array {
				var b array.Builder
				if typ.ID() == arrow.INT64 {
					ib := array.NewInt64Builder(memory.DefaultAllocator)
					for i, v := range vals {
						if nulls && i%97 == 0 {
							ib.AppendNull()
						} else {
							ib.Append(int64(v))
						}
					}
					b = ib
				} else {
					sb := array.NewStringBuilder(memory.DefaultAllocator)
					for i, v := range vals {
						if nulls && i%97 == 0 {
							sb.AppendNull()
						} else {
							sb.Append(fmt.Sprintf("key-%d", v))
						}
					}
					b = sb
				}
				defer b.Release()
				return b.NewArray()
			}
			keys := func(vals []int, nulls bool) *RowKeys {
				c := column(vals, nulls)
				defer c.Release()
				var rk RowKeys
				if err := enc.Encode([]arrow.Array{c}, &rk); err != nil {
					t.Fatal(err)
				}
				return &rk
			}
			build := make([]int, n)
			for i := range build {
				build[i] = 2 * i
			}
			jt := NewJoinTable(enc.Width(), n)
			jt.AddRows(keys(build, false))
			jt.Seal()
			if jt.filter == nil {
				t.Fatalf("Seal built no filter for %d keys in %d slots", n, jt.numSlots())
			}
			// probe 0..2n+999: every other key present, plus NULLs
			probe := make([]int, 2*n+1000)
			for i := range probe {
				probe[i] = i
			}
			check := func(pk *RowKeys, extra int) {
				t.Helper()
				ids := make([]int32, pk.N)
				jt.Probe(pk, ids)
				passed := 0
				for r, id := range ids {
					v := probe[r]
					switch {
					case pk.Null[r]:
						if id != -1 {
							t.Fatalf("NULL key of row %d matched group %d", r, id)
						}
					case v%2 == 0 && v < 2*n:
						if id != int32(v/2) {
							t.Fatalf("key %d: group %d, want %d", v, id, v/2)
						}
					case v == extra:
						if id < 0 {
							t.Fatalf("key %d inserted after Seal not found", v)
						}
					default:
						if id != -1 {
							t.Fatalf("absent key %d matched group %d", v, id)
						}
					}
					if id >= 0 {
						passed++
					}
				}
				if passed == 0 {
					t.Fatal("nothing matched")
				}
			}
			pk := keys(probe, true)
			check(pk, -1)
			if len(pk.sel) == 0 || len(pk.sel) > pk.N*3/5 {
				t.Fatalf("the filter passed %d of %d probes; half are absent", len(pk.sel), pk.N)
			}
			// an insert after Seal: the filter no longer covers every key
			extra := 2*n + 1
			jt.AddRows(keys([]int{extra}, false))
			check(keys(probe, true), extra)
		})
	}
}
