package exec

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

var haSchema = hjSchema("g:str", "i:i32", "b:i64", "f:f64", "d:dec", "s:str", "flag:bool", "ts:ts")

var haRows = [][]any{
	{"a", 1, 10, 1.5, "1.10", "x", true, 100},
	{"a", 2, nil, 2.5, "2.20", "y", false, 200},
	{"b", nil, 30, nil, nil, nil, nil, nil},
	{nil, 4, 40, 4.0, "4.00", "z", true, 50},
	{"a", 2, 20, nil, "3.30", "w", true, 300},
}

func haMust(t *testing.T, name string, args []Expr, distinct bool, filter Expr, orderBy []SortKey) *Aggregate {
	t.Helper()
	a, err := NewAggregate(name, args, distinct, filter, orderBy)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func haCol(name string) *Column {
	i := haSchema.FieldIndices(name)[0]
	return hjCol(haSchema, i)
}

func haLit(s string) Expr { return &Literal{Value: scalar.NewStringScalar(s)} }

func TestHashAggregate(t *testing.T) {
	flag := haCol("flag")
	aggs := func(t *testing.T) []*Aggregate {
		return []*Aggregate{
			haMust(t, "count", nil, false, nil, nil),
			haMust(t, "count", []Expr{haCol("i")}, false, nil, nil),
			haMust(t, "count", []Expr{haCol("i")}, true, nil, nil),
			haMust(t, "sum", []Expr{haCol("i")}, false, nil, nil),
			haMust(t, "sum", []Expr{haCol("b")}, false, nil, nil),
			haMust(t, "sum", []Expr{haCol("f")}, false, nil, nil),
			haMust(t, "sum", []Expr{haCol("d")}, false, nil, nil),
			haMust(t, "avg", []Expr{haCol("i")}, false, nil, nil),
			haMust(t, "avg", []Expr{haCol("d")}, false, nil, nil),
			haMust(t, "min", []Expr{haCol("s")}, false, nil, nil),
			haMust(t, "max", []Expr{haCol("s")}, false, nil, nil),
			haMust(t, "min", []Expr{haCol("ts")}, false, nil, nil),
			haMust(t, "max", []Expr{haCol("d")}, false, nil, nil),
			haMust(t, "bool_and", []Expr{flag}, false, nil, nil),
			haMust(t, "bool_or", []Expr{flag}, false, nil, nil),
			haMust(t, "string_agg", []Expr{haCol("s"), haLit(",")}, false, nil, []SortKey{{Expr: haCol("s"), Descending: true}}),
			haMust(t, "array_agg", []Expr{haCol("i")}, false, nil, []SortKey{{Expr: haCol("i")}}),
			haMust(t, "any_value", []Expr{haCol("s")}, false, nil, nil),
			haMust(t, "sum", []Expr{haCol("i")}, false, flag, nil),
			haMust(t, "count", []Expr{haCol("i")}, true, flag, nil),
			haMust(t, "max", []Expr{flag}, false, nil, nil),
		}
	}
	// Columns: g, count(*), count(i), count(DISTINCT i), sum(i), sum(b),
	// sum(f), sum(d), avg(i), avg(d), min(s), max(s), min(ts), max(d),
	// bool_and, bool_or, string_agg, array_agg, any_value, sum FILTER,
	// count(DISTINCT) FILTER, max(flag).
	want := []string{
		"a|3|3|2|5|30|4|6.6|1.6666666666666667|2.2|w|y|1970-01-01T00:00:00.0001|3.3|false|true|y,x,w|[1,2,2]|x|3|2|true",
		"b|1|0|0|NULL|30|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|[null]|NULL|NULL|0|NULL",
		"NULL|1|1|1|4|40|4|4|4|4|z|z|1970-01-01T00:00:00.00005|4|true|true|z|[4]|z|4|1|true",
	}
	for _, batchSize := range []int{0, 1} {
		t.Run(fmt.Sprintf("batch size %d", batchSize), func(t *testing.T) {
			mem := hjMem(t)
			src := hjSrc(t, mem, haSchema, haRows[:2], haRows[2:])
			budget := NewBudget(0)
			h, err := NewHashAggregate(src, []Expr{haCol("g")}, aggs(t), HashOptions{Mem: mem, Budget: budget, BatchSize: batchSize})
			if err != nil {
				t.Fatal(err)
			}
			got, err := hjRun(t, h)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if budget.Used() != 0 || budget.Peak() == 0 {
				t.Errorf("budget used %d peak %d", budget.Used(), budget.Peak())
			}
			if g := h.Metrics().Extra()["groups"]; g != 3 {
				t.Errorf("groups metric %d", g)
			}
		})
	}
}

func TestHashAggregateEmptyInput(t *testing.T) {
	mk := func(t *testing.T) []*Aggregate {
		return []*Aggregate{
			haMust(t, "count", nil, false, nil, nil),
			haMust(t, "count", []Expr{haCol("i")}, true, nil, nil),
			haMust(t, "sum", []Expr{haCol("i")}, false, nil, nil),
			haMust(t, "avg", []Expr{haCol("d")}, false, nil, nil),
			haMust(t, "min", []Expr{haCol("s")}, false, nil, nil),
			haMust(t, "string_agg", []Expr{haCol("s"), haLit(",")}, false, nil, nil),
			haMust(t, "array_agg", []Expr{haCol("i")}, false, nil, nil),
			haMust(t, "bool_and", []Expr{haCol("flag")}, false, nil, nil),
			haMust(t, "any_value", []Expr{haCol("ts")}, false, nil, nil),
		}
	}
	t.Run("no group by", func(t *testing.T) {
		mem := hjMem(t)
		h, err := NewHashAggregate(hjSrc(t, mem, haSchema), nil, mk(t), HashOptions{Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		got, err := hjRun(t, h)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"0|0|NULL|NULL|NULL|NULL|NULL|NULL|NULL"}; !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
		if f := h.Schema().Field(0); f.Nullable || f.Name != "count(*)" {
			t.Errorf("count(*) field %v", f)
		}
	})
	t.Run("group by", func(t *testing.T) {
		mem := hjMem(t)
		h, err := NewHashAggregate(hjSrc(t, mem, haSchema), []Expr{haCol("g")}, mk(t), HashOptions{Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		got, err := hjRun(t, h)
		if err != nil || len(got) != 0 {
			t.Errorf("got %q, %v; want no rows", got, err)
		}
	})
	t.Run("all filtered", func(t *testing.T) {
		mem := hjMem(t)
		never := &hjPred{name: "false", f: func(arrow.RecordBatch, int) (bool, bool) { return false, true }}
		aggs := []*Aggregate{
			haMust(t, "count", nil, false, never, nil),
			haMust(t, "sum", []Expr{haCol("b")}, false, never, nil),
		}
		h, err := NewHashAggregate(hjSrc(t, mem, haSchema, haRows), nil, aggs, HashOptions{Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		got, err := hjRun(t, h)
		if err != nil || !slices.Equal(got, []string{"0|NULL"}) {
			t.Errorf("got %q, %v", got, err)
		}
	})
}

func TestHashAggregateGroupByManyTypes(t *testing.T) {
	// Group by NULL-able keys of several types: NULLs form one group.
	mem := hjMem(t)
	s := hjSchema("k1:i64", "k2:str", "k3:dec", "k4:bool", "k5:date")
	var rows [][]any
	for i := 0; i < 1000; i++ {
		var k1, k2, k3, k4, k5 any = i % 3, fmt.Sprint(i % 2), fmt.Sprintf("%d.5", i%2), i%2 == 0, i % 3
		if i%5 == 0 {
			k1, k2, k3, k4, k5 = nil, nil, nil, nil, nil
		}
		rows = append(rows, []any{k1, k2, k3, k4, k5})
	}
	var keys []Expr
	for i := 0; i < 5; i++ {
		keys = append(keys, hjCol(s, i))
	}
	h, err := NewHashAggregate(hjSrc(t, mem, s, rows[:333], rows[333:]), keys,
		[]*Aggregate{haMust(t, "count", nil, false, nil, nil)}, HashOptions{Mem: mem, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	got, err := hjRun(t, h)
	if err != nil {
		t.Fatal(err)
	}
	oracle := map[string]int{}
	var order []string
	for _, r := range rows {
		k := fmt.Sprint(r)
		if oracle[k] == 0 {
			order = append(order, k)
		}
		oracle[k]++
	}
	if len(got) != len(order) {
		t.Fatalf("got %d groups, want %d: %q", len(got), len(order), got)
	}
	total := 0
	for _, g := range got {
		var n int
		fmt.Sscan(g[strings.LastIndex(g, "|")+1:], &n)
		total += n
	}
	if total != 1000 {
		t.Errorf("counts add up to %d", total)
	}
}

func TestStringAggOrderBy(t *testing.T) {
	mem := hjMem(t)
	s := hjSchema("g:i64", "v:str", "k:i64", "sep:str")
	rows := [][]any{{1, "c", 3, "-"}, {1, "a", nil, "+"}, {1, "b", 2, "-"}, {1, nil, 1, "-"}, {2, "z", 1, "-"}, {1, "d", 2, "-"}}
	cases := []struct {
		key  SortKey
		want string
	}{
		{SortKey{Expr: hjCol(s, 2)}, "b-d-c+a"},                                     // NULLS LAST, ties keep input order
		{SortKey{Expr: hjCol(s, 2), Descending: true, NullsFirst: true}, "a-c-b-d"}, // first element has no separator
		{SortKey{Expr: hjCol(s, 1), Descending: true}, "d-c-b+a"},
	}
	for _, tc := range cases {
		t.Run(tc.key.String(), func(t *testing.T) {
			a := haMust(t, "string_agg", []Expr{hjCol(s, 1), hjCol(s, 3)}, false, nil, []SortKey{tc.key})
			h, err := NewHashAggregate(hjSrc(t, mem, s, rows[:3], rows[3:]), []Expr{hjCol(s, 0)}, []*Aggregate{a}, HashOptions{Mem: mem})
			if err != nil {
				t.Fatal(err)
			}
			got, err := hjRun(t, h)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"1|" + tc.want, "2|z"}; !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestAggregateDistinctSum(t *testing.T) {
	mem := hjMem(t)
	s := hjSchema("v:i64", "f:f64")
	rows := [][]any{{1, 1.0}, {1, 1.0}, {2, math.Copysign(0, -1)}, {nil, 0.0}, {2, nil}}
	aggs := []*Aggregate{
		haMust(t, "sum", []Expr{hjCol(s, 0)}, true, nil, nil),
		haMust(t, "count", []Expr{hjCol(s, 1)}, true, nil, nil),
		haMust(t, "array_agg", []Expr{hjCol(s, 0)}, true, nil, []SortKey{{Expr: hjCol(s, 0)}}),
	}
	h, err := NewHashAggregate(hjSrc(t, mem, s, rows[:2], rows[2:]), nil, aggs, HashOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	got, err := hjRun(t, h)
	if err != nil {
		t.Fatal(err)
	}
	// count(DISTINCT f): 1.0 and 0.0 (= -0.0).
	if want := []string{"3|2|[1,2,null]"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestAggregateOverflow(t *testing.T) {
	mem := hjMem(t)
	s := hjSchema("d:dec38")
	big := "99999999999999999999999999999999999999"
	a := haMust(t, "sum", []Expr{hjCol(s, 0)}, false, nil, nil)
	h, err := NewHashAggregate(hjSrc(t, mem, s, [][]any{{big}}, [][]any{{big}}), nil, []*Aggregate{a}, HashOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	_, err = hjRun(t, h)
	want := "sum(d): numeric field overflow: the sum does not fit in decimal(38,0); cast the argument to double to sum it approximately"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestNewAggregateErrors(t *testing.T) {
	cases := []struct {
		name     string
		args     []Expr
		distinct bool
		filter   Expr
		want     string
	}{
		{"sum", []Expr{haCol("s")}, false, nil, "function sum(text) does not exist; no aggregate matches the argument types, you might need an explicit cast"},
		{"avg", []Expr{haCol("flag")}, false, nil, "function avg(boolean) does not exist"},
		{"bool_and", []Expr{haCol("i")}, false, nil, "function bool_and(integer) does not exist"},
		{"string_agg", []Expr{haCol("s")}, false, nil, "function string_agg(text) does not exist"},
		{"median", []Expr{haCol("b")}, false, nil, "function median(bigint) does not exist; known aggregates are any_value, array_agg, avg"},
		{"count", nil, true, nil, "count(DISTINCT *) is not allowed"},
		{"count", nil, false, haCol("i"), "argument of FILTER must be type boolean, not type integer"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			_, err := NewAggregate(tc.name, tc.args, tc.distinct, tc.filter, nil)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %v, want prefix %q", err, tc.want)
			}
		})
	}
	a := haMust(t, "SUM", []Expr{haCol("i")}, false, nil, nil)
	if a.DataType().ID() != arrow.INT64 || a.String() != "sum(i)" {
		t.Errorf("sum(integer): %s %s", a.DataType(), a)
	}
	if a := haMust(t, "sum", []Expr{haCol("b")}, false, nil, nil); a.DataType().String() != "decimal(38, 0)" {
		t.Errorf("sum(bigint) is %s", a.DataType())
	}
	if a := haMust(t, "avg", []Expr{haCol("d")}, false, nil, nil); a.DataType().String() != "decimal(38, 6)" {
		t.Errorf("avg(decimal(18,2)) is %s", a.DataType())
	}
}

// TestSumFloatOneGroupNulls: sum and avg of a double column with NULLs
// and no GROUP BY read the validity bits in place; sliced arrays (an
// offset that is not a multiple of 8) add the same values in the same
// order as the per-row path with two groups. A REAL column in two
// groups, sliced, sums each group's defined values.
func TestSumFloatOneGroupNulls(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(40, 3))
	b := array.NewFloat64Builder(mem)
	for i := range 1000 {
		if rng.IntN(4) == 0 {
			b.AppendNull()
		} else {
			b.Append(float64(i)*0.1 + 1e10*float64(i%3))
		}
	}
	whole := b.NewFloat64Array()
	b.Release()
	defer whole.Release()
	one, two := &htSumFloat{mem: mem}, &htSumFloat{mem: mem}
	one.resize(1)
	two.resize(2)
	var want float64
	var cnt int64
	for _, cut := range [][2]int64{{0, 1000}, {3, 700}, {13, 14}, {701, 1000}} {
		a := array.NewSlice(whole, cut[0], cut[1])
		n := int(a.Len())
		// every row in group 0: of one group (the in-place path), and of
		// two (the per-row path)
		ones, twos := make([]int32, n), make([]int32, n)
		for r := range n {
			if a.IsValid(r) {
				want += a.(*array.Float64).Value(r)
				cnt++
			}
		}
		if err := one.update(context.Background(), ones, []arrow.Array{a}, nil); err != nil {
			t.Fatal(err)
		}
		if err := two.update(context.Background(), twos, []arrow.Array{a}, nil); err != nil {
			t.Fatal(err)
		}
		a.Release()
	}
	if one.sums[0] != want || one.cnt[0] != cnt || two.sums[0] != want || two.cnt[0] != cnt {
		t.Fatalf("one group: sum %v of %d; per row: %v of %d; want %v of %d", one.sums[0], one.cnt[0], two.sums[0], two.cnt[0], want, cnt)
	}
	// REAL, rows in two groups by parity, sliced
	b32 := array.NewFloat32Builder(mem)
	for i := range 1000 {
		if rng.IntN(3) == 0 {
			b32.AppendNull()
		} else {
			b32.Append(float32(i) / 4)
		}
	}
	whole32 := b32.NewFloat32Array()
	b32.Release()
	defer whole32.Release()
	grouped := &htSumFloat{mem: mem}
	grouped.resize(2)
	var want2 [2]float64
	var cnt2 [2]int64
	for _, cut := range [][2]int64{{5, 998}, {0, 1}, {17, 30}} {
		a := array.NewSlice(whole32, cut[0], cut[1])
		ids := make([]int32, a.Len())
		for r := range ids {
			ids[r] = int32(r % 2)
			if a.IsValid(r) {
				want2[r%2] += float64(a.(*array.Float32).Value(r))
				cnt2[r%2]++
			}
		}
		if err := grouped.update(context.Background(), ids, []arrow.Array{a}, nil); err != nil {
			t.Fatal(err)
		}
		a.Release()
	}
	if grouped.sums[0] != want2[0] || grouped.sums[1] != want2[1] || grouped.cnt[0] != cnt2[0] || grouped.cnt[1] != cnt2[1] {
		t.Fatalf("two groups: sums %v of %v, want %v of %v", grouped.sums[:2], grouped.cnt[:2], want2, cnt2)
	}
}

// TestSumCountRunsOfGroups: sum, avg and count over batches whose groups
// come in runs (htRunsOfIDs: their state kept in registers through a
// run) and at random (a row at a time) give what adding row by row in
// order gives, bit for bit, over sliced arrays, with NULLs (the row path)
// and without.
func TestSumCountRunsOfGroups(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(41, 8))
	const groups = 5
	sum, cstar, cval := &htSumFloat{mem: mem}, &htCount{mem: mem, star: true}, &htCount{mem: mem}
	for _, st := range []htAggState{sum, cstar, cval} {
		st.resize(groups)
	}
	var want [groups]float64
	var wantN, wantV [groups]int64
	var runs, rows int
	for batch := range 40 {
		n := 1 + rng.IntN(3000)
		fb := array.NewFloat64Builder(mem)
		nulls := batch%4 == 3
		for range n + 7 {
			if nulls && rng.IntN(5) == 0 {
				fb.AppendNull()
			} else {
				fb.Append(rng.Float64()*1e6 - 3e5)
			}
		}
		whole := fb.NewFloat64Array()
		fb.Release()
		a := array.NewSlice(whole, 7, int64(n+7)).(*array.Float64)
		whole.Release()
		ids := make([]int32, n)
		clustered := batch%2 == 0
		for r := 0; r < n; {
			g := int32(rng.IntN(groups))
			k := 1
			if clustered {
				k = 1 + rng.IntN(60)
			}
			for ; k > 0 && r < n; k-- {
				ids[r] = g
				r++
			}
		}
		if htRunsOfIDs(ids) {
			runs++
		}
		rows += n
		for r, g := range ids {
			wantN[g]++
			if a.IsValid(r) {
				want[g] += a.Value(r)
				wantV[g]++
			}
		}
		for _, st := range []htAggState{sum, cval} {
			if err := st.update(context.Background(), ids, []arrow.Array{a}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := cstar.update(context.Background(), ids, nil, nil); err != nil {
			t.Fatal(err)
		}
		a.Release()
	}
	if runs == 0 || runs == 40 {
		t.Fatalf("%d of 40 batches in runs; want some of each", runs)
	}
	for g := range groups {
		if sum.sums[g] != want[g] || sum.cnt[g] != wantV[g] || cstar.counts[g] != wantN[g] || cval.counts[g] != wantV[g] {
			t.Fatalf("group %d: sum %v of %d, count(*) %d, count(x) %d; want %v of %d, %d, %d", g, sum.sums[g], sum.cnt[g], cstar.counts[g], cval.counts[g], want[g], wantV[g], wantN[g], wantV[g])
		}
	}
}
