package exec

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/google/uuid"
)

// TestMinMaxTypes runs min, max and any_value over every orderable
// canonical type, with NULLs and two batches.
func TestMinMaxTypes(t *testing.T) {
	cases := []struct {
		typ      string
		vals     []any
		min, max string
	}{
		{"i8", []any{3, nil, -2, 7}, "-2", "7"},
		{"i16", []any{3, nil, -2, 7}, "-2", "7"},
		{"i64", []any{3, nil, -2, 7}, "-2", "7"},
		{"f32", []any{1.5, nil, -0.5, 2.0}, "-0.5", "2"},
		{"f64", []any{1.5, nil, 0.0 / htZero(), 2.0}, "1.5", "NaN"},
		{"dec", []any{"1.10", nil, "-3.25", "2.00"}, "-3.25", "2"},
		{"str", []any{"b", nil, "ab", "c"}, "ab", "c"},
		{"bin", []any{"b", nil, "ab", "c"}, "YWI=", "Yw=="}, // base64 of ab, c
		{"bool", []any{true, nil, false, true}, "false", "true"},
		{"date", []any{10, nil, 3, 7}, "1970-01-04", "1970-01-11"},
		{"ts", []any{10, nil, 3, 7}, "1970-01-01T00:00:00.000003", "1970-01-01T00:00:00.00001"},
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			mem := hjMem(t)
			s := hjSchema("v:" + tc.typ)
			var rows [][]any
			for _, v := range tc.vals {
				rows = append(rows, []any{v})
			}
			v := hjCol(s, 0)
			aggs := []*Aggregate{
				haMust(t, "min", []Expr{v}, false, nil, nil),
				haMust(t, "max", []Expr{v}, false, nil, nil),
				haMust(t, "any_value", []Expr{v}, false, nil, nil),
				haMust(t, "array_agg", []Expr{v}, false, nil, nil),
			}
			h, err := NewHashAggregate(hjSrc(t, mem, s, rows[:2], rows[2:]), nil, aggs, HashOptions{Mem: mem})
			if err != nil {
				t.Fatal(err)
			}
			got, err := hjRun(t, h)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("got %q", got)
			}
			parts := strings.SplitN(got[0], "|", 4)
			if parts[0] != tc.min || parts[1] != tc.max {
				t.Errorf("min|max = %s|%s, want %s|%s", parts[0], parts[1], tc.min, tc.max)
			}
			if parts[2] == "NULL" || !strings.HasPrefix(parts[3], "[") {
				t.Errorf("any_value %s, array_agg %s", parts[2], parts[3])
			}
			if !arrow.TypeEqual(h.Schema().Field(0).Type, s.Field(0).Type) {
				t.Errorf("min type %s", h.Schema().Field(0).Type)
			}
		})
	}
}

func htZero() float64 { return 0 }

func TestMinMaxUUID(t *testing.T) {
	mem := hjMem(t)
	b := extensions.NewUUIDBuilder(mem)
	u1, u2 := uuid.MustParse("00000000-0000-0000-0000-000000000002"), uuid.MustParse("ffffffff-0000-0000-0000-000000000001")
	b.Append(u2)
	b.AppendNull()
	b.Append(u1)
	col := b.NewArray()
	b.Release()
	s := arrow.NewSchema([]arrow.Field{{Name: "u", Type: col.DataType(), Nullable: true}}, nil)
	batch := array.NewRecordBatch(s, []arrow.Array{col}, 3)
	col.Release()
	src := &hjTestSource{schema: s, batches: []arrow.RecordBatch{batch}}
	u := hjCol(s, 0)
	h, err := NewHashAggregate(src, []Expr{u}, []*Aggregate{
		haMust(t, "min", []Expr{u}, false, nil, nil),
		haMust(t, "count", []Expr{u}, true, nil, nil),
	}, HashOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	got, err := hjRun(t, h)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{u2.String() + "|" + u2.String() + "|1", "NULL|NULL|0", u1.String() + "|" + u1.String() + "|1"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestHashOperatorsCancel(t *testing.T) {
	mem := hjMem(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ops := []Operator{}
	mk := func() *hjTestSource { return hjSrc(t, mem, hjLeftSchema, hjLeftRows) }
	hj, _ := NewHashJoin(JoinInner, mk(), mk(), []Expr{hjCol(hjLeftSchema, 0)}, []Expr{hjCol(hjLeftSchema, 0)}, nil, HashOptions{Mem: mem})
	nl, _ := NewNestedLoopJoin(JoinInner, mk(), mk(), nil, HashOptions{Mem: mem})
	ha, _ := NewHashAggregate(mk(), nil, []*Aggregate{haMust(t, "count", nil, false, nil, nil)}, HashOptions{Mem: mem})
	di, _ := NewDistinct(mk(), HashOptions{Mem: mem})
	so, _ := NewSetOp(SetExcept, mk(), mk(), HashOptions{Mem: mem})
	ua, _ := NewUnionAll(mk(), mk())
	ops = append(ops, hj, nl, ha, di, so, ua)
	for _, op := range ops {
		_, err := Drain(ctx, op)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: got %v, want context.Canceled", op, err)
		}
	}
}

func TestHashOperatorsExplain(t *testing.T) {
	l, r := &hjTestSource{schema: hjLeftSchema}, &hjTestSource{schema: hjRightSchema}
	pred := &hjPred{name: "lv < rv"}
	hj, _ := NewHashJoin(JoinLeft, l, r, []Expr{hjCol(hjLeftSchema, 0)}, []Expr{hjCol(hjRightSchema, 0)}, pred, HashOptions{BuildLeft: true})
	nl, _ := NewNestedLoopJoin(JoinInner, l, r, nil, HashOptions{})
	nl2, _ := NewNestedLoopJoin(JoinFull, l, r, pred, HashOptions{})
	ha, _ := NewHashAggregate(l, []Expr{hjCol(hjLeftSchema, 1)}, []*Aggregate{
		haMust(t, "count", nil, false, nil, nil),
		haMust(t, "string_agg", []Expr{hjCol(hjLeftSchema, 1), haLit(",")}, true, pred,
			[]SortKey{{Expr: hjCol(hjLeftSchema, 1), Descending: true, NullsFirst: true}}),
	}, HashOptions{})
	di, _ := NewDistinct(l, HashOptions{})
	so, _ := NewSetOp(SetIntersectAll, l, r, HashOptions{})
	ua, _ := NewUnionAll(l, r)
	want := []string{
		"HashJoin left on [id = id] filter lv < rv build left",
		"NestedLoopJoin cross",
		"NestedLoopJoin full on lv < rv",
		"HashAggregate group by [lv] [count(*), string_agg(DISTINCT lv, ',' ORDER BY lv DESC NULLS FIRST) FILTER (WHERE lv < rv)]",
		"Distinct",
		"SetOp intersect all",
		"UnionAll",
	}
	for i, op := range []Operator{hj, nl, nl2, ha, di, so, ua} {
		if got := op.String(); got != want[i] {
			t.Errorf("got %q, want %q", got, want[i])
		}
	}
	if got := Explain(hj, false); got != want[0]+"\n  TestSource\n  TestSource\n" {
		t.Errorf("Explain: %q", got)
	}
}

// TestHashOperatorsCloseMidStream stops every operator after its first
// batch: Close must release everything (the checked allocator and the
// budget end at zero) and be idempotent.
func TestHashOperatorsCloseMidStream(t *testing.T) {
	mem := hjMem(t)
	budget := NewBudget(0)
	opts := HashOptions{Mem: mem, Budget: budget, BatchSize: 1}
	var rows [][]any
	for i := 0; i < 50; i++ {
		rows = append(rows, []any{i % 7, "v"})
	}
	mk := func() *hjTestSource { return hjSrc(t, mem, hjLeftSchema, rows[:20], rows[20:]) }
	k := []Expr{hjCol(hjLeftSchema, 0)}
	hj, _ := NewHashJoin(JoinFull, mk(), mk(), k, k, nil, opts)
	mark, _ := NewHashJoin(JoinMark, mk(), mk(), k, k, nil, opts)
	nl, _ := NewNestedLoopJoin(JoinLeft, mk(), mk(), nil, opts)
	ha, _ := NewHashAggregate(mk(), k, []*Aggregate{
		haMust(t, "string_agg", []Expr{hjCol(hjLeftSchema, 1), haLit(",")}, false, nil, nil),
		haMust(t, "count", []Expr{hjCol(hjLeftSchema, 1)}, true, nil, nil),
	}, opts)
	di, _ := NewDistinct(mk(), opts)
	so, _ := NewSetOp(SetIntersectAll, mk(), mk(), opts)
	ua, _ := NewUnionAll(mk(), mk())
	for _, op := range []Operator{hj, mark, nl, ha, di, so, ua} {
		ctx := context.Background()
		if err := op.Open(ctx); err != nil {
			t.Fatal(err)
		}
		b, err := op.Next(ctx)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		b.Release()
		if err := op.Close(); err != nil {
			t.Fatal(err)
		}
		if err := op.Close(); err != nil {
			t.Fatal(err)
		}
		if budget.Used() != 0 {
			t.Errorf("%s: budget holds %d after Close", op, budget.Used())
		}
	}
}
