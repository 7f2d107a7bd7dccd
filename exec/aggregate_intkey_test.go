package exec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// haAsText is b with column 0 replaced by its values as text (ValueStr),
// NULLs kept: the same groups, keyed by strings, which the integer map
// does not take.
func haAsText(t *testing.T, mem memory.Allocator, b arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	c := b.Column(0)
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	for r := range c.Len() {
		if c.IsNull(r) {
			sb.AppendNull()
		} else {
			sb.Append(c.ValueStr(r))
		}
	}
	s := sb.NewArray()
	defer s.Release()
	fields := slices.Clone(b.Schema().Fields())
	fields[0].Type = arrow.BinaryTypes.String
	cols := append([]arrow.Array{s}, b.Columns()[1:]...)
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, b.NumRows())
}

// TestHashAggregateIntegerKeys groups by one integer key through the
// direct map (aggregate_intkey.go) and requires what the same rows give
// keyed by their values as text, which go the usual way: the same groups,
// in the same order (first appearance), with the same results. The
// batches' values drift upward and now and then downward (the map grows
// both ways), hold NULLs, are all NULL, sit at the ends of the type's
// range, or include an outlier too far away for the map (that batch goes
// the usual way, and the next ones through the map again). Under a
// budget small enough to spill, the map stops once the aggregate spills.
// No memory or budget is left.
func TestHashAggregateIntegerKeys(t *testing.T) {
	type tcase struct {
		name     string
		typ      string
		n        int
		val      func(rng *rand.Rand, row int) any // a row's key
		outliers bool                              // some batches go the usual way
		nulls    int                               // the batch of NULL keys only
		budget   int64
	}
	const n = 40000
	cases := []tcase{
		{name: "int64 drifting", typ: "i64", n: n, val: func(rng *rand.Rand, row int) any { return row/7 + rng.IntN(300) - 150 }},
		{name: "int64 outliers", typ: "i64", n: n, outliers: true, val: func(rng *rand.Rand, row int) any {
			if rng.IntN(6000) == 0 {
				return 1 << 40
			}
			return rng.IntN(900) - 450
		}},
		{name: "int64 top of range", typ: "i64", n: n, nulls: 0, val: func(rng *rand.Rand, row int) any { return math.MaxInt64 - rng.IntN(50) }},
		{name: "int64 bottom of range", typ: "i64", n: n, nulls: 1, val: func(rng *rand.Rand, row int) any { return math.MinInt64 + rng.IntN(50) }},
		{name: "int32", typ: "i32", n: n, val: func(rng *rand.Rand, row int) any { return rng.IntN(5000) - 2500 }},
		{name: "int16", typ: "i16", n: n, val: func(rng *rand.Rand, row int) any { return rng.IntN(65536) - 32768 }},
		{name: "int8", typ: "i8", n: n, val: func(rng *rand.Rand, row int) any { return rng.IntN(256) - 128 }},
		{name: "uint8", typ: "u8", n: n, val: func(rng *rand.Rand, row int) any { return rng.IntN(256) }},
		{name: "uint16", typ: "u16", n: n, val: func(rng *rand.Rand, row int) any { return 65535 - rng.IntN(3000) }},
		{name: "uint32 outliers", typ: "u32", n: n, outliers: true, val: func(rng *rand.Rand, row int) any {
			if rng.IntN(6000) == 0 {
				return math.MaxUint32
			}
			return rng.IntN(100)
		}},
		{name: "date", typ: "date", n: n, val: func(rng *rand.Rand, row int) any { return 18000 + row/40 + rng.IntN(30) }},
		{name: "int64 spilling", typ: "i64", n: 80000, budget: 3 << 20, val: func(rng *rand.Rand, row int) any { return rng.IntN(100000) }},
	}
	for i := range cases {
		if cases[i].nulls == 0 && i != 2 {
			cases[i].nulls = 3
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(42, uint64(len(tc.name))))
			schema := hjSchema("g:"+tc.typ, "v:i32", "f:f64")
			rows := make([][]any, tc.n)
			for i := range rows {
				g := tc.val(rng, i)
				if rng.IntN(40) == 0 {
					g = nil
				}
				var v any = rng.IntN(1000) - 500
				if rng.IntN(10) == 0 {
					v = nil
				}
				// multiples of 1/4: sums exact in any order
				rows[i] = []any{g, v, float64(rng.IntN(4000)) / 4}
			}
			mem := hjMem(t)
			var typed, text []arrow.RecordBatch
			for rest, k := rows, 0; len(rest) > 0; k++ {
				m := min(len(rest), 1+rng.IntN(3000))
				part := rest[:m]
				if k == tc.nulls {
					// a batch of NULL keys only
					part = slices.Clone(part)
					for i := range part {
						part[i] = slices.Clone(part[i])
						part[i][0] = nil
					}
				}
				b := hjBatch(t, mem, schema, part...)
				typed = append(typed, b)
				text = append(text, haAsText(t, mem, b))
				rest = rest[m:]
			}
			aggs := func(s *arrow.Schema) []*Aggregate {
				v, f := hjCol(s, 1), hjCol(s, 2)
				return []*Aggregate{
					haMust(t, "count", nil, false, nil, nil),
					haMust(t, "count", []Expr{v}, false, nil, nil),
					haMust(t, "sum", []Expr{v}, false, nil, nil),
					haMust(t, "sum", []Expr{f}, false, nil, nil),
					haMust(t, "max", []Expr{v}, false, nil, nil),
					haMust(t, "avg", []Expr{f}, false, nil, nil),
				}
			}
			run := func(batches []arrow.RecordBatch, budget *Budget) ([]string, map[string]int64) {
				s := batches[0].Schema()
				return haRunGrouped(t, mem, s, batches, aggs(s), budget)
			}
			var budget *Budget
			if tc.budget > 0 {
				budget = NewBudget(tc.budget)
			}
			want, wm := run(text, nil)
			if wm["intkey_batches"] != 0 {
				t.Fatalf("text keys went through the integer map: %v", wm)
			}
			got, m := run(typed, budget)
			if len(want) < 50 {
				t.Fatalf("%d groups", len(want))
			}
			byMap := m["intkey_batches"]
			switch {
			case tc.outliers && (byMap == 0 || byMap >= int64(len(typed))):
				t.Fatalf("%d of %d batches went through the map; want some, not all", byMap, len(typed))
			case !tc.outliers && tc.budget == 0 && byMap != int64(len(typed)):
				t.Fatalf("%d of %d batches went through the map; want all", byMap, len(typed))
			case tc.budget > 0 && (m["spilled_rows"] == 0 || byMap == 0):
				t.Fatalf("under %d bytes: want some batches through the map, then a spill: %v", tc.budget, m)
			}
			if tc.budget > 0 {
				// after a spill, groups come in another order
				got, want = hjSorted(got), hjSorted(want)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d groups, want %d; first differing: %s", len(got), len(want), firstDiff(got, want))
			}
			htReleaseBatches(typed)
			htReleaseBatches(text)
		})
	}
}

// TestIntMapCover: the map covers what it is asked to, keeps the groups it
// held where they were, and refuses a span it cannot hold, at the ends of
// the int64 range too.
func TestIntMapCover(t *testing.T) {
	var m haIntMap
	if _, ok := m.cover(100, 100+haIntMaxSpan); ok {
		t.Fatal("covered a span of haIntMaxSpan+1 values")
	}
	if _, ok := m.cover(100, 110); !ok || m.lo != 100 || len(m.slots) < 11 {
		t.Fatalf("cover(100, 110): lo %d, %d slots", m.lo, len(m.slots))
	}
	m.slots[5] = 7 // value 105
	if _, ok := m.cover(90, 95); !ok || m.lo != 90 || m.slots[105-90] != 7 {
		t.Fatalf("cover(90, 95): lo %d, value 105 holds %d", m.lo, m.slots[105-90])
	}
	if _, ok := m.cover(90, 90+haIntMaxSpan); ok {
		t.Fatal("grew past haIntMaxSpan")
	}
	if m.slots[105-90] != 7 {
		t.Fatal("a refused cover changed the map")
	}
	for _, r := range [][2]int64{{math.MaxInt64 - 10, math.MaxInt64}, {math.MinInt64, math.MinInt64 + 10}} {
		var e haIntMap
		if _, ok := e.cover(r[0], r[1]); !ok || e.lo != r[0] || uint64(len(e.slots)) < uint64(r[1]-r[0])+1 {
			t.Fatalf("cover(%d, %d): lo %d, %d slots", r[0], r[1], e.lo, len(e.slots))
		}
		if e.lo+int64(len(e.slots)-1) < r[1] {
			t.Fatalf("cover(%d, %d) overflowed: the map ends before %d", r[0], r[1], r[1])
		}
	}
	// a map grown with room above still extends downward as far as the
	// values asked for allow
	var d haIntMap
	if _, ok := d.cover(0, 10); !ok || len(d.slots) <= 11 {
		t.Fatalf("cover(0, 10): %d slots, want room above", len(d.slots))
	}
	d.slots[3] = 9
	if _, ok := d.cover(-(haIntMaxSpan - 20), 5); !ok || d.slots[3+haIntMaxSpan-20] != 9 {
		t.Fatalf("cover down to %d refused, or moved value 3's group", -(haIntMaxSpan - 20))
	}
	var w haIntMap
	if _, ok := w.cover(math.MinInt64, math.MaxInt64); ok {
		t.Fatal("covered the whole int64 range")
	}
}
