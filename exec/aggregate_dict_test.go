package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// haDictBatches cuts rows (g text, v int, f double) into batches and
// gives each batch's g one of four forms: a plain array; a dictionary
// array with a dictionary of its own (entries shuffled, some unused, one
// repeated); one with the previous dictionary array's dictionary (the
// same data, as a scan's batches of one row group share it); and one with
// int16 indices (not taken by the fast path). forms counts them.
func haDictBatches(t *testing.T, rng *rand.Rand, mem memory.Allocator, schema *arrow.Schema, rows [][]any, forms *[4]int) []arrow.RecordBatch {
	t.Helper()
	var out []arrow.RecordBatch
	var last arrow.Array // the last dictionary of every value made, shared by batches of form 2
	var all []string     // every value of g
	seenAll := map[string]bool{}
	for _, r := range rows {
		if r[0] != nil && !seenAll[r[0].(string)] {
			seenAll[r[0].(string)] = true
			all = append(all, r[0].(string))
		}
	}
	defer func() {
		if last != nil {
			last.Release()
		}
	}()
	for rest := rows; len(rest) > 0; {
		k := 1 + rng.IntN(min(len(rest), 2500))
		part := rest[:k]
		rest = rest[k:]
		plain := hjBatch(t, mem, schema, part...)
		form := rng.IntN(4)
		if form == 2 && last == nil {
			form = 1
		}
		forms[form]++
		if form == 0 {
			out = append(out, plain)
			continue
		}
		g := plain.Column(0).(*array.String)
		var dict arrow.Array
		if form == 2 {
			dict = last
			dict.Retain()
		} else {
			// the batch's values (or, every other time, every value),
			// shuffled, an unused value and a repeated one
			seen := map[string]bool{}
			var vals []string
			if form == 1 && rng.IntN(2) == 0 {
				vals = slices.Clone(all)
				form = -1 // a dictionary a batch of form 2 may share
			}
			for i := range g.Len() {
				if g.IsValid(i) && !seen[g.Value(i)] && form != -1 {
					seen[g.Value(i)] = true
					vals = append(vals, g.Value(i))
				}
			}
			vals = append(vals, "never used "+fmt.Sprint(rng.IntN(1000)))
			if len(vals) > 1 {
				vals = append(vals, vals[0])
			}
			rng.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
			sb := array.NewStringBuilder(mem)
			sb.AppendValues(vals, nil)
			dict = sb.NewArray()
			sb.Release()
		}
		d := dict.(*array.String)
		where := map[string][]int{}
		for i := range d.Len() {
			where[d.Value(i)] = append(where[d.Value(i)], i)
		}
		// each row's index: any entry holding its value, as Int16 (form
		// 3) or Int32
		indexType := arrow.DataType(arrow.PrimitiveTypes.Int32)
		if form == 3 {
			indexType = arrow.PrimitiveTypes.Int16
		}
		ib := array.NewBuilder(mem, indexType)
		for i := range g.Len() {
			if g.IsNull(i) {
				ib.AppendNull()
				continue
			}
			w := where[g.Value(i)]
			if len(w) == 0 {
				t.Fatalf("value %q missing from the shared dictionary", g.Value(i))
			}
			k := w[rng.IntN(len(w))]
			if form == 3 {
				ib.(*array.Int16Builder).Append(int16(k))
			} else {
				ib.(*array.Int32Builder).Append(int32(k))
			}
		}
		idx := ib.NewArray()
		ib.Release()
		dt := &arrow.DictionaryType{IndexType: idx.DataType(), ValueType: arrow.BinaryTypes.String}
		da := array.NewDictionaryArray(dt, idx, dict)
		idx.Release()
		if form == -1 {
			if last != nil {
				last.Release()
			}
			last = dict // kept for batches of form 2
		} else {
			dict.Release()
		}
		cols := []arrow.Array{da, plain.Column(1), plain.Column(2)}
		fields := slices.Clone(schema.Fields())
		fields[0].Type = dt
		out = append(out, array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, plain.NumRows()))
		da.Release()
		plain.Release()
	}
	return out
}

// TestHashAggregateDictionaryKeys groups rows whose key comes as
// dictionary arrays (TableScan.SetDictionary), mixed with plain arrays,
// and requires what the same rows give as plain arrays: the same groups in
// the same order (first appearance), NULL a group of its own. Under a
// budget small enough to spill, the batches the fast path cannot reserve
// for are decoded and spill as plain rows. No memory or budget is left.
func TestHashAggregateDictionaryKeys(t *testing.T) {
	schema := hjSchema("g:str", "v:i32", "f:f64")
	for _, tc := range []struct {
		name   string
		n      int
		keys   int
		budget int64
	}{
		{"few keys", 30000, 40, 0},
		{"many keys, spilling", 60000, 20000, 3 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(41, uint64(tc.keys)))
			rows := make([][]any, tc.n)
			for i := range rows {
				var g any = fmt.Sprintf("key %d %s", rng.IntN(tc.keys), strings.Repeat("x", rng.IntN(3)*9))
				if rng.IntN(50) == 0 {
					g = nil
				}
				var v any = rng.IntN(1000) - 500
				if rng.IntN(10) == 0 {
					v = nil
				}
				// multiples of 1/4: sums exact in any order
				rows[i] = []any{g, v, float64(rng.IntN(4000)) / 4}
			}
			aggs := func() []*Aggregate {
				v, f := hjCol(schema, 1), hjCol(schema, 2)
				return []*Aggregate{
					haMust(t, "count", nil, false, nil, nil),
					haMust(t, "count", []Expr{v}, false, nil, nil),
					haMust(t, "sum", []Expr{v}, false, nil, nil),
					haMust(t, "sum", []Expr{f}, false, nil, nil),
					haMust(t, "min", []Expr{v}, false, nil, nil),
					haMust(t, "avg", []Expr{f}, false, nil, nil),
				}
			}
			run := func(batches []arrow.RecordBatch, mem memory.Allocator, budget *Budget) ([]string, map[string]int64) {
				return haRunGrouped(t, mem, schema, batches, aggs(), budget)
			}
			mem := hjMem(t)
			var plain []arrow.RecordBatch
			for rest := rows; len(rest) > 0; {
				k := min(len(rest), 4096)
				plain = append(plain, hjBatch(t, mem, schema, rest[:k]...))
				rest = rest[k:]
			}
			want, _ := run(plain, mem, nil)
			if len(want) < min(tc.keys, 30) {
				t.Fatalf("%d groups", len(want))
			}
			var byDict, total int64 // batches grouped by dictionary, in all
			defer func() {
				if !t.Failed() && (byDict == 0 || byDict >= total) {
					t.Fatalf("%d of %d batches grouped by dictionary; want some, not all", byDict, total)
				}
			}()
			for round := range 3 {
				var forms [4]int
				batches := haDictBatches(t, rng, mem, schema, rows, &forms)
				if forms[1] == 0 || forms[2] == 0 || forms[3] == 0 {
					t.Fatalf("round %d: batch forms %v: want some of each", round, forms)
				}
				var budget *Budget
				if tc.budget > 0 {
					budget = NewBudget(tc.budget)
				}
				got, m := run(batches, mem, budget)
				byDict += m["dictionary_batches"]
				total += int64(len(batches))
				haWantGroups(t, round, forms, tc.budget, m, got, want)
			}
		})
	}
}

// haRunGrouped aggregates batches (a source of schema) grouped by column
// 0 with aggs, and returns the groups and the aggregate's counters; a
// budget given must hold nothing after Close.
func haRunGrouped(t *testing.T, mem memory.Allocator, schema *arrow.Schema, batches []arrow.RecordBatch, aggs []*Aggregate, budget *Budget) ([]string, map[string]int64) {
	t.Helper()
	h, err := NewHashAggregate(&hjTestSource{schema: schema, batches: batches}, []Expr{hjCol(schema, 0)}, aggs,
		HashOptions{Mem: mem, Budget: budget, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
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

// haWantGroups requires the groups got to be want: in the same order, or,
// under a budget (where something must have spilled, by the aggregate's
// counters m), in any order.
func haWantGroups(t *testing.T, round int, forms [4]int, budget int64, m map[string]int64, got, want []string) {
	t.Helper()
	if budget > 0 {
		if m["spilled_rows"] == 0 {
			t.Fatalf("round %d: nothing spilled under %d bytes: %v", round, budget, m)
		}
		// after a spill, groups come in another order
		got, want = hjSorted(got), hjSorted(want)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("round %d (forms %v): %d groups, want %d; first differing: %s", round, forms, len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("row %d: got %s, want %s", i, got[i], want[i])
		}
	}
	return "one is a prefix of the other"
}

// TestGatherDictionary: a Filter over batches with a dictionary column
// (TableScan.SetDictionary under an aggregate with a WHERE) gathers its
// indices and keeps the dictionary (skGatherDict); sources with
// dictionaries of their own are gathered the general way. Either way the
// rows kept are the values selected, NULLs included, from sliced arrays.
func TestGatherDictionary(t *testing.T) {
	mem := hjMem(t)
	mk := func(vals []string, idx []int32, valid []bool) *array.Dictionary {
		sb := array.NewStringBuilder(mem)
		sb.AppendValues(vals, nil)
		dict := sb.NewArray()
		sb.Release()
		ib := array.NewInt32Builder(mem)
		ib.AppendValues(idx, valid)
		ia := ib.NewArray()
		ib.Release()
		d := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, ia, dict)
		ia.Release()
		dict.Release()
		return d
	}
	a := mk([]string{"x", "y", "z"}, []int32{9, 0, 1, 2, 2, 0, 1}, []bool{true, true, true, false, true, true, true})
	defer a.Release()
	sliced := array.NewSlice(a, 1, 7).(*array.Dictionary) // x y NULL z x y
	defer sliced.Release()
	// the same dictionary, other indices
	ib := array.NewInt32Builder(mem)
	ib.AppendValues([]int32{2, 1}, nil)
	bIdx := ib.NewArray()
	ib.Release()
	b := array.NewDictionaryArray(a.DataType().(*arrow.DictionaryType), bIdx, a.Dictionary())
	bIdx.Release()
	defer b.Release()
	other := mk([]string{"p", "q"}, []int32{1, 0}, nil)
	defer other.Release()
	decoded := func(c arrow.Array) []string {
		d := c.(*array.Dictionary)
		var out []string
		for i := range d.Len() {
			if d.IsNull(i) {
				out = append(out, "NULL")
			} else {
				out = append(out, d.Dictionary().(*array.String).Value(d.GetValueIndex(i)))
			}
		}
		return out
	}
	for _, tc := range []struct {
		srcs []arrow.Array
		refs []skRef
		want []string
		same bool // the dictionary kept
	}{
		{[]arrow.Array{sliced}, []skRef{{0, 0}, {0, 2}, {0, 3}, {0, 5}}, []string{"x", "NULL", "z", "y"}, true},
		{[]arrow.Array{sliced, b}, []skRef{{1, 0}, {0, 1}, {1, 1}}, []string{"z", "y", "y"}, true},
		{[]arrow.Array{sliced, other}, []skRef{{1, 0}, {0, 2}, {0, 4}, {1, 1}}, []string{"q", "NULL", "x", "p"}, false},
	} {
		got, err := skGather(mem, a.DataType(), tc.srcs, tc.refs)
		if err != nil {
			t.Fatal(err)
		}
		if g := decoded(got); !slices.Equal(g, tc.want) {
			t.Fatalf("gathered %v, want %v", g, tc.want)
		}
		if same := got.(*array.Dictionary).Dictionary().Data() == a.Dictionary().Data(); same != tc.same {
			t.Fatalf("%v: dictionary kept %v, want %v", tc.want, same, tc.same)
		}
		got.Release()
	}
}

// TestHashAggregateDictionaryBudget: the maps the aggregate keeps of the
// dictionaries it saw (each entry's key, its group, the dictionary kept
// alive) count against the budget: a batch of 10 rows with a dictionary
// of 100,000 long entries reserves their megabytes, not just its groups'.
func TestHashAggregateDictionaryBudget(t *testing.T) {
	mem := hjMem(t)
	schema := hjSchema("g:str")
	sb := array.NewStringBuilder(mem)
	for i := range 100_000 {
		sb.Append(fmt.Sprintf("a long dictionary entry %08d", i))
	}
	dict := sb.NewArray()
	sb.Release()
	ib := array.NewInt32Builder(mem)
	for i := range 10 {
		ib.Append(int32(i * 7))
	}
	idx := ib.NewArray()
	ib.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	da := array.NewDictionaryArray(dt, idx, dict)
	idx.Release()
	dict.Release()
	b := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "g", Type: dt, Nullable: true}}, nil), []arrow.Array{da}, 10)
	da.Release()
	budget := NewBudget(0)
	// the budget held between batches: after the first, before the end
	src := &budgetProbe{hjTestSource: &hjTestSource{schema: schema, batches: []arrow.RecordBatch{b}}, budget: budget}
	h, err := NewHashAggregate(src, []Expr{hjCol(schema, 0)},
		[]*Aggregate{haMust(t, "count", nil, false, nil, nil)}, HashOptions{Mem: mem, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	got, err := hjRun(t, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || got[1] != "a long dictionary entry 00000007|1" {
		t.Fatalf("groups %v", got)
	}
	if m := h.Metrics().Extra(); m["dictionary_batches"] != 1 {
		t.Fatalf("metrics %v: want the batch taken by dictionary", m)
	}
	if src.held < 3<<20 || budget.Used() != 0 {
		t.Fatalf("budget held %d after the batch, %d after Close: want the dictionary's map (over 3 MB) held, then nothing", src.held, budget.Used())
	}
}

// budgetProbe is a source that records what the budget holds when the
// batch after its first is asked for.
type budgetProbe struct {
	*hjTestSource
	budget *Budget
	calls  int
	held   int64
}

func (p *budgetProbe) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if p.calls++; p.calls == 2 {
		p.held = p.budget.Used()
	}
	return p.hjTestSource.Next(ctx)
}
