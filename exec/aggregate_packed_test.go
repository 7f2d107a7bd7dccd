package exec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestHashAggregateCodedPackedKeys groups by a text key and an integer
// key. Where the text key may be coded (SetCodedKeys) and comes as
// dictionary arrays mixed with plain ones (the first batches plain in
// one round, so that coding starts later and re-keys its groups), the
// groups must be what plain batches give through the generic path: the
// same groups, in the same order unless something spilled. The integer
// key's range drifts batch by batch and the text key's codes grow (the
// packing chooses new bits and bases), and some batches hold values far
// apart (they go the usual way).
func TestHashAggregateCodedPackedKeys(t *testing.T) {
	schema := hjSchema("g:str", "v:i32", "f:f64")
	for _, tc := range []struct {
		name       string
		n, keys    int
		budget     int64
		wide       bool // some batches span too wide to pack
		packed     bool // some batches must pack (with 20,000 keys, few can)
		plainFirst int  // batches that come plain before any dictionary
	}{
		{"few keys", 40000, 12, 0, false, true, 0},
		{"few keys, plain first", 40000, 12, 0, false, true, 3},
		{"few keys, wide batches", 40000, 12, 0, true, true, 0},
		{"many keys, spilling", 60000, 20000, 3 << 20, false, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(43, uint64(tc.keys)))
			rows := make([][]any, tc.n)
			for i := range rows {
				// more keys as rows go by (the codes need more bits)
				var g any = fmt.Sprintf("key %d", rng.IntN(1+i*tc.keys/tc.n))
				if rng.IntN(50) == 0 {
					g = nil
				}
				// a range that drifts down every 5,000 rows (the packing
				// changes its base)
				var v any = 100 - i/5000*4 + rng.IntN(10)
				switch {
				case rng.IntN(20) == 0:
					v = nil
				case tc.wide && i%9000 < 2:
					v = 1 << 29
				}
				rows[i] = []any{g, v, float64(rng.IntN(4000)) / 4}
			}
			aggs := func() []*Aggregate {
				v, f := hjCol(schema, 1), hjCol(schema, 2)
				return []*Aggregate{
					haMust(t, "count", nil, false, nil, nil),
					haMust(t, "sum", []Expr{v}, false, nil, nil),
					haMust(t, "sum", []Expr{f}, false, nil, nil),
					haMust(t, "max", []Expr{f}, false, nil, nil),
				}
			}
			mem := hjMem(t)
			run := func(batches []arrow.RecordBatch, coded bool, budget *Budget) ([]string, map[string]int64) {
				t.Helper()
				h, err := NewHashAggregate(&hjTestSource{schema: schema, batches: batches}, []Expr{hjCol(schema, 0), hjCol(schema, 1)}, aggs(),
					HashOptions{Mem: mem, Budget: budget, SpillDir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				if coded {
					if err := h.SetCodedKeys([]int{0}); err != nil {
						t.Fatal(err)
					}
				}
				got, err := hjRun(t, h)
				if err != nil {
					t.Fatal(err)
				}
				if budget != nil && budget.Used() != 0 {
					t.Errorf("the budget holds %d bytes after Close", budget.Used())
				}
				return got, h.Metrics().Extra()
			}
			var plain []arrow.RecordBatch
			for rest := rows; len(rest) > 0; {
				k := min(len(rest), 2048)
				plain = append(plain, hjBatch(t, mem, schema, rest[:k]...))
				rest = rest[k:]
			}
			want, wm := run(plain, false, nil)
			if wm["coded_keys"] != 0 || wm["packed_batches"] != 0 {
				t.Fatalf("text keys without SetCodedKeys were coded or packed: %v", wm)
			}
			if len(want) < min(tc.keys, 12)*10 {
				t.Fatalf("%d groups", len(want))
			}
			for round := range 2 {
				var forms [4]int
				var batches []arrow.RecordBatch
				if tc.plainFirst > 0 {
					for i := range tc.plainFirst {
						batches = append(batches, hjBatch(t, mem, schema, rows[i*2048:(i+1)*2048]...))
					}
					rest := rows[tc.plainFirst*2048:]
					batches = append(batches, haDictBatches(t, rng, mem, schema, rest, &forms)...)
				} else {
					batches = haDictBatches(t, rng, mem, schema, rows, &forms)
				}
				var budget *Budget
				if tc.budget > 0 {
					budget = NewBudget(tc.budget)
				}
				got, m := run(batches, true, budget)
				if m["coded_keys"] != 1 {
					t.Fatalf("round %d: the text key was not coded: %v", round, m)
				}
				if tc.packed && m["packed_batches"] == 0 {
					t.Fatalf("round %d: %d of %d batches packed: %v", round, m["packed_batches"], len(batches), m)
				}
				if tc.wide && m["packed_batches"] >= int64(len(batches)) {
					t.Fatalf("round %d: every batch packed, though some span too wide: %v", round, m)
				}
				haWantGroups(t, round, forms, tc.budget, m, got, want)
			}
		})
	}
}

// TestHashAggregatePackedIntKeys groups by two integer keys of narrow
// ranges, with NULLs, through the packed map, and requires what the same
// rows give grouped by the same keys and a text key of one value (which
// no packing takes): near zero, and at both ends of the int64 range.
func TestHashAggregatePackedIntKeys(t *testing.T) {
	schema := hjSchema("a:i64", "b:i32", "s:str")
	for _, off := range []int{-20, math.MaxInt64 - 60, math.MinInt64} {
		rng := rand.New(rand.NewPCG(44, 2))
		rows := make([][]any, 30000)
		for i := range rows {
			var a, b any = off + rng.IntN(50), rng.IntN(30) + 1000
			if rng.IntN(30) == 0 {
				a = nil
			}
			if rng.IntN(40) == 0 {
				b = nil
			}
			rows[i] = []any{a, b, "one"}
		}
		mem := hjMem(t)
		run := func(keys []Expr) ([]string, map[string]int64) {
			var batches []arrow.RecordBatch
			for rest := rows; len(rest) > 0; {
				k := min(len(rest), 1+rng.IntN(3000))
				batches = append(batches, hjBatch(t, mem, schema, rest[:k]...))
				rest = rest[k:]
			}
			aggs := []*Aggregate{haMust(t, "count", nil, false, nil, nil), haMust(t, "min", []Expr{hjCol(schema, 0)}, false, nil, nil)}
			h, err := NewHashAggregate(&hjTestSource{schema: schema, batches: batches}, keys, aggs, HashOptions{Mem: mem})
			if err != nil {
				t.Fatal(err)
			}
			got, err := hjRun(t, h)
			if err != nil {
				t.Fatal(err)
			}
			return got, h.Metrics().Extra()
		}
		got, m := run([]Expr{hjCol(schema, 0), hjCol(schema, 1)})
		if m["packed_batches"] == 0 {
			t.Fatalf("a from %d: nothing packed: %v", off, m)
		}
		want, wm := run([]Expr{hjCol(schema, 0), hjCol(schema, 1), hjCol(schema, 2)})
		if wm["packed_batches"] != 0 {
			t.Fatalf("a text key packed: %v", wm)
		}
		if len(want) < 1000 {
			t.Fatalf("%d groups", len(want))
		}
		for i := range want {
			// drop the text key's column from the reference
			want[i] = haDropField(want[i], 2)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("a from %d: %d groups, want %d; first differing: %s", off, len(got), len(want), firstDiff(got, want))
		}
	}
}

// haDropField drops field i of a row as hjRows writes it.
func haDropField(row string, i int) string {
	fs := strings.Split(row, "|")
	return strings.Join(slices.Delete(fs, i, i+1), "|")
}
