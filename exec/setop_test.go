package exec

import (
	"slices"
	"strings"
	"testing"
)

var (
	soSchema = hjSchema("a:i64", "b:str")
	soLeft   = [][]any{{1, "x"}, {1, "x"}, {1, "x"}, {2, nil}, {2, nil}, {nil, nil}, {3, "z"}}
	soRight  = [][]any{{1, "x"}, {2, nil}, {nil, nil}, {nil, nil}, {4, "w"}}
)

func TestSetOps(t *testing.T) {
	cases := []struct {
		kind SetOpKind
		want []string
	}{
		{SetUnion, []string{"1|x", "2|NULL", "NULL|NULL", "3|z", "4|w"}},
		{SetExcept, []string{"3|z"}},
		{SetExceptAll, []string{"1|x", "1|x", "2|NULL", "3|z"}},
		{SetIntersect, []string{"1|x", "2|NULL", "NULL|NULL"}},
		{SetIntersectAll, []string{"1|x", "2|NULL", "NULL|NULL"}},
	}
	for _, tc := range cases {
		for _, split := range []int{1, 3} {
			t.Run(tc.kind.String(), func(t *testing.T) {
				mem := hjMem(t)
				left := hjSrc(t, mem, soSchema, soLeft[:split], soLeft[split:])
				right := hjSrc(t, mem, hjSchema("c:i64", "d:str"), soRight[:split], soRight[split:])
				budget := NewBudget(0)
				op, err := NewSetOp(tc.kind, left, right, HashOptions{Mem: mem, Budget: budget})
				if err != nil {
					t.Fatal(err)
				}
				got, err := hjRun(t, op)
				if err != nil {
					t.Fatal(err)
				}
				// Output follows left (then right) input order.
				if !slices.Equal(got, tc.want) {
					t.Errorf("got %q, want %q", got, tc.want)
				}
				if budget.Used() != 0 {
					t.Errorf("budget holds %d", budget.Used())
				}
				if op.Schema().Field(0).Name != "a" {
					t.Errorf("output names come from the left: %s", op.Schema())
				}
			})
		}
	}
}

func TestSetOpErrors(t *testing.T) {
	l := &hjTestSource{schema: soSchema}
	_, err := NewSetOp(SetExcept, l, &hjTestSource{schema: hjSchema("a:i64")}, HashOptions{})
	if want := "each except query must have the same number of columns: input 2 has 1, the first has 2"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
	_, err = NewSetOp(SetUnion, l, &hjTestSource{schema: hjSchema("a:i64", "b:i64")}, HashOptions{})
	if want := "union types text and bigint cannot be matched in column 2 (b)"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
	_, err = NewUnionAll(l, &hjTestSource{schema: hjSchema("a:i32", "b:str")})
	if want := "union all types bigint and integer cannot be matched in column 1 (a)"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestDistinct(t *testing.T) {
	mem := hjMem(t)
	rows := append(append([][]any{}, soLeft...), soRight...)
	budget := NewBudget(0)
	d, err := NewDistinct(hjSrc(t, mem, soSchema, rows[:2], rows[2:5], rows[5:]), HashOptions{Mem: mem, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	got, err := hjRun(t, d)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1|x", "2|NULL", "NULL|NULL", "3|z", "4|w"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if budget.Used() != 0 || budget.Peak() == 0 {
		t.Errorf("budget used %d peak %d", budget.Used(), budget.Peak())
	}
}

func TestDistinctBudget(t *testing.T) {
	mem := hjMem(t)
	var rows [][]any
	for i := 0; i < 10000; i++ {
		rows = append(rows, []any{i, "v"})
	}
	d, err := NewDistinct(hjSrc(t, mem, soSchema, rows), HashOptions{Mem: mem, Budget: NewBudget(32 << 10)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = hjRun(t, d)
	if want := "memory limit exceeded: distinct (rows seen) needs more than the statement memory limit of 32 KiB"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestUnionAll(t *testing.T) {
	mem := hjMem(t)
	a := hjSrc(t, mem, soSchema, soLeft[:2])
	b := hjSrc(t, mem, hjSchema("c:i64", "d:str"))
	c := hjSrc(t, mem, hjSchema("c:i64", "d:str"), soRight[:1], soRight[1:2])
	u, err := NewUnionAll(a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := hjRun(t, u)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1|x", "1|x", "1|x", "2|NULL"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
