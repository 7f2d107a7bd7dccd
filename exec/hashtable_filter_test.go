package exec

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSealedFilter builds tables large enough for Seal to build its
// filter (short keys in slots, and strings in the arena), probes present,
// absent and NULL keys through it, and checks every answer against a Go
// map; an insert after Seal must turn the filter off. Integer keys of a
// few narrow ranges get the dense filter, which must pass no absent key,
// at both ends of the integer range too; spread ones get the Bloom
// filter, as do keys that would leave one key in each bitmap block.
func TestSealedFilter(t *testing.T) {
	const n = 300_000 // keys f(0), f(2), f(4), ...: the slots pass htTouchMin
	cases := []struct {
		name  string
		typ   arrow.DataType
		f     func(v int) int64 // the key of probe value v
		dense bool
	}{
		{"int64-around-zero", arrow.PrimitiveTypes.Int64, func(v int) int64 { return int64(v) - n }, true},
		{"int64-top", arrow.PrimitiveTypes.Int64, func(v int) int64 { return math.MaxInt64 - int64(v) }, true},
		{"int64-bottom", arrow.PrimitiveTypes.Int64, func(v int) int64 { return math.MinInt64 + int64(v) }, true},
		{"int64-clusters", arrow.PrimitiveTypes.Int64, func(v int) int64 { return int64(v%1000) + int64(v/1000)*1_000_000 }, true},
		{"int64-spread", arrow.PrimitiveTypes.Int64, func(v int) int64 { return int64(v) * 1_000_003 }, false},
		{"int64-one-per-block", arrow.PrimitiveTypes.Int64, func(v int) int64 { return int64(v) * 2000 }, false},
		{"int32-around-zero", arrow.PrimitiveTypes.Int32, func(v int) int64 { return int64(v) - n }, true},
		{"int32-bottom", arrow.PrimitiveTypes.Int32, func(v int) int64 { return math.MinInt32 + int64(v) }, true},
		{"int32-spread", arrow.PrimitiveTypes.Int32, func(v int) int64 { return int64(v) * 7001 }, false},
		{"string", arrow.BinaryTypes.String, func(v int) int64 { return int64(v) }, false},
	}
	for _, tc := range cases {
		typ := tc.typ
		t.Run(tc.name, func(t *testing.T) {
			enc, err := NewKeyEncoder([]arrow.DataType{typ})
			if err != nil {
				t.Fatal(err)
			}
			// every 97th row NULL, from row 0
			column := func(vals []int, nulls bool) arrow.Array {
				return filterColumn(typ, vals, tc.f, nulls, 97, 0)
			}
			keys := func(vals []int, nulls bool) *RowKeys {
				return filterKeys(t, enc, column(vals, nulls))
			}
			build := make([]int, n)
			for i := range build {
				build[i] = 2 * i
			}
			jt := NewJoinTable(enc.Width(), n)
			jt.AddRows(keys(build, false))
			jt.Seal()
			switch {
			case tc.dense && jt.dense == nil:
				t.Fatalf("Seal built no dense filter for %d keys of a narrow range", n)
			case !tc.dense && jt.dense != nil:
				t.Fatalf("Seal built a dense filter for %d keys spread wide", n)
			case !tc.dense && jt.filter == nil:
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
			// Probe's path straight from the column must give the same
			// groups, where it applies: integer keys with a dense filter.
			// The column is a slice (an offset into its buffers), as a
			// batch cut from a larger one is; 97 rows before it keep its
			// NULLs where column puts them.
			whole := column(append(make([]int, 97), probe...), true)
			col := array.NewSlice(whole, 97, int64(97+len(probe)))
			whole.Release()
			raw := make([]int32, len(probe))
			applied := jt.probeDenseRaw(enc, []arrow.Array{col}, raw, &RowKeys{})
			col.Release()
			if applied != (tc.dense && typ.ID() != arrow.STRING) {
				t.Fatalf("the raw dense probe applied: %v", applied)
			}
			if applied {
				want := make([]int32, pk.N)
				jt.Probe(pk, want)
				if !slices.Equal(raw, want) {
					t.Fatal("the raw dense probe's groups differ from the encoded probe's")
				}
			}
			present := 0
			for r, v := range probe {
				if !pk.Null[r] && v%2 == 0 && v < 2*n {
					present++
				}
			}
			if tc.dense && len(pk.sel) != present {
				t.Fatalf("the dense filter passed %d of %d probes; %d are present", len(pk.sel), pk.N, present)
			}
			if len(pk.sel) < present || len(pk.sel) > pk.N*3/5 {
				t.Fatalf("the filter passed %d of %d probes; %d are present", len(pk.sel), pk.N, present)
			}
			// an insert after Seal: the filter no longer covers every key
			extra := 2*n + 1
			jt.AddRows(keys([]int{extra}, false))
			check(keys(probe, true), extra)
		})
	}
}

// TestSmallTableFilter: a table that gets no dense filter (keys spread
// wide, strings) gets the Bloom filter though its slots are few, and its
// probes answer as a Go map does: present, absent and NULL keys. A probe
// of present keys alone rests the filter for htFilterRest batches, whose
// probes answer the same, and the next probe goes through it again.
func TestSmallTableFilter(t *testing.T) {
	for _, n := range []int{1, 10, 4096, 50_000} {
		for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String} {
			enc, err := NewKeyEncoder([]arrow.DataType{typ})
			if err != nil {
				t.Fatal(err)
			}
			spread := func(v int) int64 { return int64(v) * 1_000_003 }
			keys := func(vals []int, nulls bool) *RowKeys {
				return filterKeys(t, enc, filterColumn(typ, vals, spread, nulls, 31, 5))
			}
			// build keys 0, 2, 4, …; every 31st probe row from row 5 is NULL
			build := make([]int, n)
			for i := range build {
				build[i] = 2 * i
			}
			bk := keys(build, false)
			jt := NewJoinTable(enc.Width(), n)
			jt.AddRows(bk)
			jt.Seal()
			what := fmt.Sprintf("%s, %d keys", typ, n)
			// one integer key is a narrow range: the dense filter
			if dense := typ.ID() == arrow.INT64 && n == 1; (jt.dense != nil) != dense {
				t.Fatalf("%s: dense filter %v, want %v", what, jt.dense != nil, dense)
			}
			if want := jt.dense == nil; (jt.filter != nil) != want {
				t.Fatalf("%s in %d slots: filter %v, want %v", what, jt.numSlots(), jt.filter != nil, want)
			}
			probe := make([]int, 2*n+1000)
			for i := range probe {
				probe[i] = i
			}
			pk := keys(probe, true)
			ids := make([]int32, pk.N)
			jt.Probe(pk, ids)
			if skip := atomic.LoadInt32(&jt.filterSkip); skip != 0 {
				t.Fatalf("%s: a probe that mostly missed left the filter resting for %d batches", what, skip)
			}
			checkProbe(t, what, probe, pk, ids, n)
			if jt.filter == nil {
				continue
			}
			// a probe of present keys alone rests the filter for
			// htFilterRest batches; the probes meanwhile answer the same
			// without it, and the one after them goes through it again
			hits := keys(build, false)
			hitIDs := make([]int32, hits.N)
			jt.Probe(hits, hitIDs)
			for r, id := range hitIDs {
				if id != int32(r) {
					t.Fatalf("%s: present key %d: group %d", what, build[r], id)
				}
			}
			for k := htFilterRest; k >= 0; k-- {
				if skip := atomic.LoadInt32(&jt.filterSkip); skip != int32(k) {
					t.Fatalf("%s: the filter rests %d more batches, want %d", what, skip, k)
				}
				clear(ids)
				jt.Probe(pk, ids)
				checkProbe(t, fmt.Sprintf("%s, %d batches to rest", what, k), probe, pk, ids, n)
			}
			if skip := atomic.LoadInt32(&jt.filterSkip); skip != 0 {
				t.Fatalf("%s: after its rest the filter rests %d batches more", what, skip)
			}
		}
	}
}

// checkProbe requires ids, the groups of probe's keys pk in a table of keys 0,
// 2, …, 2(n-1), to be each present key's, and -1 for absent and NULL ones.
func checkProbe(t *testing.T, what string, probe []int, pk *RowKeys, ids []int32, n int) {
	t.Helper()
	matched := 0
	for r, id := range ids {
		v := probe[r]
		switch {
		case pk.Null[r]:
			if id != -1 {
				t.Fatalf("%s: NULL key of row %d matched group %d", what, r, id)
			}
		case v%2 == 0 && v < 2*n:
			if id != int32(v/2) {
				t.Fatalf("%s: key %d: group %d, want %d", what, v, id, v/2)
			}
			matched++
		default:
			if id != -1 {
				t.Fatalf("%s: absent key %d matched group %d", what, v, id)
			}
		}
	}
	if matched == 0 {
		t.Fatalf("%s: nothing matched", what)
	}
}

// BenchmarkSmallTableProbe probes a 1,000-key table (spread keys, so no
// dense filter) with batches of present keys and of absent ones, with
// Seal's small-table filter and without it (removed after Seal). Run:
// go test -run '^$' -bench SmallTableProbe -count 5 ./exec/
func BenchmarkSmallTableProbe(b *testing.B) {
	enc, err := NewKeyEncoder([]arrow.DataType{arrow.PrimitiveTypes.Int64})
	if err != nil {
		b.Fatal(err)
	}
	keys := func(vals []int64) *RowKeys {
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		defer ib.Release()
		ib.AppendValues(vals, nil)
		c := ib.NewArray()
		defer c.Release()
		var rk RowKeys
		if err := enc.Encode([]arrow.Array{c}, &rk); err != nil {
			b.Fatal(err)
		}
		return &rk
	}
	for _, n := range []int{1000, 50_000, 300_000} {
		build := make([]int64, n)
		for i := range build {
			build[i] = int64(i) * 1_000_003
		}
		for _, present := range []bool{true, false} {
			probe := make([]int64, 4096)
			for i := range probe {
				if present {
					probe[i] = int64((i*7919)%n) * 1_000_003
				} else {
					probe[i] = int64(i)*7 + 1
				}
			}
			pk := keys(probe)
			for _, filtered := range []bool{true, false} {
				jt := NewJoinTable(enc.Width(), n)
				jt.AddRows(keys(build))
				jt.Seal()
				if jt.filter == nil || jt.dense != nil {
					b.Fatal("no small-table filter")
				}
				if !filtered {
					jt.filter = nil
				}
				ids := make([]int32, pk.N)
				name := fmt.Sprintf("%d/", n) + map[bool]string{true: "present", false: "absent"}[present] + map[bool]string{true: "/filter", false: "/none"}[filtered]
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						jt.Probe(pk, ids)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*pk.N), "ns/row")
				})
			}
		}
	}
}

// filterColumn is a column of typ holding f(v) for each v of vals (as
// "key-<f(v)>" for strings), NULL at every every-th row from row from
// when nulls.
func filterColumn(typ arrow.DataType, vals []int, f func(int) int64, nulls bool, every, from int) arrow.Array {
	null := func(i int) bool { return nulls && i%every == from }
	var b array.Builder
	switch typ.ID() {
	case arrow.INT64:
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		for i, v := range vals {
			if null(i) {
				ib.AppendNull()
			} else {
				ib.Append(f(v))
			}
		}
		b = ib
	case arrow.INT32:
		ib := array.NewInt32Builder(memory.DefaultAllocator)
		for i, v := range vals {
			if null(i) {
				ib.AppendNull()
			} else {
				ib.Append(int32(f(v)))
			}
		}
		b = ib
	default:
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for i, v := range vals {
			if null(i) {
				sb.AppendNull()
			} else {
				sb.Append(fmt.Sprintf("key-%d", f(v)))
			}
		}
		b = sb
	}
	defer b.Release()
	return b.NewArray()
}

// filterKeys encodes column c with enc and releases c.
func filterKeys(tb testing.TB, enc *KeyEncoder, c arrow.Array) *RowKeys {
	tb.Helper()
	defer c.Release()
	var rk RowKeys
	if err := enc.Encode([]arrow.Array{c}, &rk); err != nil {
		tb.Fatal(err)
	}
	return &rk
}
