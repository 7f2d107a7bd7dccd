package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
)

// TestHashTableOracle inserts random keys, fixed and variable width, and
// checks ids against a Go map, across many growths.
func TestHashTableOracle(t *testing.T) {
	for _, width := range []int{0, 5, 9, 17} {
		t.Run(fmt.Sprintf("width %d", width), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(width)))
			ht := NewHashTable(width, 0)
			oracle := map[string]int32{}
			var order []string
			for i := 0; i < 200000; i++ {
				var key []byte
				if width > 0 {
					var b [8]byte
					binary.LittleEndian.PutUint64(b[:], rng.Uint64N(50000))
					key = make([]byte, width)
					copy(key[width-min(width, 8):], b[:]) // varies the last bytes too
				} else {
					key = []byte(fmt.Sprint(rng.IntN(50000)))[:1+rng.IntN(3)]
					key = append(key, make([]byte, rng.IntN(3))...)
				}
				h := HashKey(key)
				want, seen := oracle[string(key)]
				if i%3 == 0 {
					id, ok := ht.Find(key, h)
					if ok != seen || (ok && id != want) {
						t.Fatalf("Find(%x) = %d,%v; want %d,%v", key, id, ok, want, seen)
					}
					continue
				}
				id, isNew := ht.FindOrInsert(key, h)
				if isNew == seen {
					t.Fatalf("FindOrInsert(%x) isNew=%v, oracle seen=%v", key, isNew, seen)
				}
				if !seen {
					want = int32(len(order))
					oracle[string(key)] = want
					order = append(order, string(key))
				}
				if id != want {
					t.Fatalf("FindOrInsert(%x) = %d, want %d", key, id, want)
				}
			}
			if ht.Len() != len(oracle) {
				t.Fatalf("Len %d, oracle %d", ht.Len(), len(oracle))
			}
			for id, k := range order {
				if string(ht.Key(int32(id))) != k {
					t.Fatalf("Key(%d) = %x, want %x", id, ht.Key(int32(id)), k)
				}
			}
			if ht.Bytes() <= 0 {
				t.Error("Bytes should be positive")
			}
		})
	}
}

// TestHashTableCollisions gives every key the same hash: equality must
// still be decided by the key bytes.
func TestHashTableCollisions(t *testing.T) {
	ht := NewHashTable(0, 0)
	for i := 0; i < 500; i++ {
		id, isNew := ht.FindOrInsert([]byte(fmt.Sprint(i)), 42)
		if !isNew || id != int32(i) {
			t.Fatalf("insert %d: id %d new %v", i, id, isNew)
		}
	}
	for i := 0; i < 500; i++ {
		if id, ok := ht.Find([]byte(fmt.Sprint(i)), 42); !ok || id != int32(i) {
			t.Fatalf("find %d: %d %v", i, id, ok)
		}
	}
	if _, ok := ht.Find([]byte("nope"), 42); ok {
		t.Fatal("found an absent key")
	}
}

// TestKeyEncoding checks that keys are equal exactly when the values are
// equal under grouping semantics, for every canonical type, and that the
// encoding does not depend on whether a batch has NULLs.
func TestKeyEncoding(t *testing.T) {
	mem := hjMem(t)
	u1, u2 := uuid.MustParse("00000000-0000-0000-0000-000000000001"), uuid.MustParse("00000000-0000-0000-0000-000000000002")
	uuidArr := func(vals ...any) arrow.Array {
		b := extensions.NewUUIDBuilder(mem)
		defer b.Release()
		for _, v := range vals {
			if v == nil {
				b.AppendNull()
			} else {
				b.Append(v.(uuid.UUID))
			}
		}
		return b.NewArray()
	}
	cases := []struct {
		typ  string
		vals []any // rows; rows i and j must encode equal iff groups[i] == groups[j]
		grp  []int
	}{
		{"i64", []any{1, nil, 1, 0, nil}, []int{0, 1, 0, 2, 1}},
		{"i8", []any{-1, 0, nil, -1}, []int{0, 1, 2, 0}},
		{"f64", []any{0.0, math.Copysign(0, -1), math.NaN(), -math.NaN(), nil, 1.5}, []int{0, 0, 1, 1, 2, 3}},
		{"str", []any{"", nil, "a", "", "a"}, []int{0, 1, 2, 0, 2}},
		{"bin", []any{"", nil, "\x00", ""}, []int{0, 1, 2, 0}},
		{"bool", []any{true, false, nil, true}, []int{0, 1, 2, 0}},
		{"dec", []any{"1.00", "1.01", nil, "1.00"}, []int{0, 1, 2, 0}},
		{"date", []any{1, 2, nil, 1}, []int{0, 1, 2, 0}},
		{"ts", []any{1, 2, nil, 1}, []int{0, 1, 2, 0}},
		{"uuid", []any{u1, u2, nil, u1}, []int{0, 1, 2, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			var col arrow.Array
			if tc.typ == "uuid" {
				col = uuidArr(tc.vals...)
			} else {
				s := hjSchema("k:" + tc.typ)
				rows := make([][]any, len(tc.vals))
				for i, v := range tc.vals {
					rows[i] = []any{v}
				}
				b := hjBatch(t, mem, s, rows...)
				col = b.Column(0)
				col.Retain()
				b.Release()
			}
			defer col.Release()
			// A string column next to it makes the variable-width path run too.
			sb := array.NewStringBuilder(mem)
			for range tc.vals {
				sb.Append("k")
			}
			strCol := sb.NewArray()
			sb.Release()
			defer strCol.Release()
			for _, cols := range [][]arrow.Array{{col}, {col, strCol}} {
				enc, err := NewKeyEncoder([]arrow.DataType{cols[0].DataType(), arrow.BinaryTypes.String}[:len(cols)])
				if err != nil {
					t.Fatal(err)
				}
				var k RowKeys
				if err := enc.Encode(cols, &k); err != nil {
					t.Fatal(err)
				}
				for i := range tc.vals {
					if k.Null[i] != (tc.vals[i] == nil) {
						t.Errorf("row %d: Null = %v", i, k.Null[i])
					}
					for j := range tc.vals {
						eq := string(k.Key(i)) == string(k.Key(j))
						if eq != (tc.grp[i] == tc.grp[j]) {
							t.Errorf("rows %d and %d (%v, %v): keys equal = %v", i, j, tc.vals[i], tc.vals[j], eq)
						}
						if eq && k.Hashes[i] != k.Hashes[j] {
							t.Errorf("rows %d and %d: equal keys, different hashes", i, j)
						}
					}
				}
				// The same value encodes the same in a batch without NULLs.
				single := array.NewSlice(cols[0], 0, 1)
				var k1 RowKeys
				one := []arrow.Array{single}
				if len(cols) == 2 {
					s2 := array.NewSlice(cols[1], 0, 1)
					defer s2.Release()
					one = append(one, s2)
				}
				if err := enc.Encode(one, &k1); err != nil {
					t.Fatal(err)
				}
				single.Release()
				if !slices.Equal(k1.Key(0), k.Key(0)) {
					t.Errorf("row 0 alone encodes %x, in its batch %x", k1.Key(0), k.Key(0))
				}
			}
		})
	}
}

func TestKeyEncodingNullType(t *testing.T) {
	// An untyped NULL column (SELECT NULL ... GROUP BY 1) is one group.
	mem := hjMem(t)
	nulls := array.NewNull(3)
	defer nulls.Release()
	s := hjSchema("k:i64")
	b := hjBatch(t, mem, s, []any{1}, []any{1}, []any{2})
	defer b.Release()
	for _, cols := range [][]arrow.Array{{nulls}, {nulls, b.Column(0)}, {b.Column(0), nulls}} {
		ts := make([]arrow.DataType, len(cols))
		for i, c := range cols {
			ts[i] = c.DataType()
		}
		enc, err := NewKeyEncoder(ts)
		if err != nil {
			t.Fatal(err)
		}
		var k RowKeys
		if err := enc.Encode(cols, &k); err != nil {
			t.Fatal(err)
		}
		if !k.Null[0] || string(k.Key(0)) != string(k.Key(1)) || (len(cols) == 2) != (string(k.Key(0)) != string(k.Key(2))) {
			t.Errorf("%v: keys %x %x %x", ts, k.Key(0), k.Key(1), k.Key(2))
		}
	}
}

func TestKeyEncoderErrors(t *testing.T) {
	_, err := NewKeyEncoder([]arrow.DataType{arrow.ListOf(arrow.BinaryTypes.StringView)})
	if err == nil || err.Error() != "exec: type string_view cannot be used as a grouping or join key" {
		t.Fatalf("got %v", err)
	}
	enc, _ := NewKeyEncoder([]arrow.DataType{arrow.PrimitiveTypes.Int64})
	mem := memory.NewGoAllocator()
	b := array.NewInt32Builder(mem)
	b.Append(1)
	a := b.NewArray()
	defer a.Release()
	var k RowKeys
	if err := enc.Encode([]arrow.Array{a}, &k); err == nil {
		t.Fatal("encoding an int32 column as int64 should fail")
	}
}

func TestJoinTableChains(t *testing.T) {
	mem := hjMem(t)
	s := hjSchema("k:i64")
	b := hjBatch(t, mem, s, []any{1}, []any{2}, []any{1}, []any{nil}, []any{1})
	defer b.Release()
	enc, _ := NewKeyEncoder([]arrow.DataType{arrow.PrimitiveTypes.Int64})
	var k RowKeys
	if err := enc.Encode(b.Columns(), &k); err != nil {
		t.Fatal(err)
	}
	jt := NewJoinTable(enc.Width(), 0)
	jt.AddRows(&k)
	jt.AddRows(&k) // rows 5..9
	if jt.Rows() != 10 || jt.NullKeyRows() != 2 || jt.Len() != 2 {
		t.Fatalf("rows %d nulls %d groups %d", jt.Rows(), jt.NullKeyRows(), jt.Len())
	}
	groups := make([]int32, k.N)
	jt.Probe(&k, groups)
	var chain []int32
	for r := jt.First(groups[0]); r >= 0; r = jt.Next(r) {
		chain = append(chain, r)
	}
	if want := []int32{0, 2, 4, 5, 7, 9}; !slices.Equal(chain, want) || jt.Count(groups[0]) != 6 {
		t.Errorf("chain of key 1 = %v (count %d), want %v", chain, jt.Count(groups[0]), want)
	}
	if groups[3] != -1 || jt.First(groups[3]) != -1 || jt.Count(-1) != 0 {
		t.Errorf("a NULL probe key must match nothing, got group %d", groups[3])
	}
	jt.SetMatched(2)
	jt.SetMatched(9)
	un, next := jt.AppendUnmatched(nil, 0, 100)
	if want := []int32{0, 1, 3, 4, 5, 6, 7, 8}; !slices.Equal(un, want) || next != 10 {
		t.Errorf("unmatched %v next %d", un, next)
	}
	m, _ := jt.AppendMatched(nil, 0, 1)
	if !slices.Equal(m, []int32{2}) || !jt.Matched(9) || jt.Matched(8) {
		t.Errorf("matched %v", m)
	}
}
