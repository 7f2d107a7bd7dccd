package exec

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var (
	hjLeftSchema  = hjSchema("id:i64", "lv:str")
	hjRightSchema = hjSchema("id:i64", "rv:str")
	hjLeftRows    = [][]any{{1, "a"}, {2, "b"}, {2, "c"}, {nil, "d"}, {4, "e"}}
	hjRightRows   = [][]any{{2, "x"}, {2, "y"}, {3, "z"}, {nil, "w"}, {1, "v"}}
)

type hjCase struct {
	name       string
	kind       JoinKind
	left       [][]any
	right      [][]any
	residual   Expr
	want       []string
	noBuildLft bool // the kind cannot build the left side
}

func hjCases() []hjCase {
	// lv != 'c' AND rv != 'y'; NULL when either side is NULL.
	residual := &hjPred{name: "lv <> 'c' AND rv <> 'y'", f: func(b arrow.RecordBatch, r int) (bool, bool) {
		lv, ok1 := hjStr(b, 1, r)
		rv, ok2 := hjStr(b, 3, r)
		if !ok1 || !ok2 {
			return false, false
		}
		return lv != "c" && rv != "y", true
	}}
	noNullRight := [][]any{{2, "x"}, {3, "z"}}
	return []hjCase{
		{name: "inner", kind: JoinInner, left: hjLeftRows, right: hjRightRows,
			want: []string{"1|a|1|v", "2|b|2|x", "2|b|2|y", "2|c|2|x", "2|c|2|y"}},
		{name: "left", kind: JoinLeft, left: hjLeftRows, right: hjRightRows,
			want: []string{"1|a|1|v", "2|b|2|x", "2|b|2|y", "2|c|2|x", "2|c|2|y", "4|e|NULL|NULL", "NULL|d|NULL|NULL"}},
		{name: "right", kind: JoinRight, left: hjLeftRows, right: hjRightRows,
			want: []string{"1|a|1|v", "2|b|2|x", "2|b|2|y", "2|c|2|x", "2|c|2|y", "NULL|NULL|3|z", "NULL|NULL|NULL|w"}},
		{name: "full", kind: JoinFull, left: hjLeftRows, right: hjRightRows,
			want: []string{"1|a|1|v", "2|b|2|x", "2|b|2|y", "2|c|2|x", "2|c|2|y", "4|e|NULL|NULL", "NULL|NULL|3|z", "NULL|NULL|NULL|w", "NULL|d|NULL|NULL"}},
		{name: "semi", kind: JoinSemi, left: hjLeftRows, right: hjRightRows,
			want: []string{"1|a", "2|b", "2|c"}},
		{name: "anti", kind: JoinAnti, left: hjLeftRows, right: hjRightRows,
			want: []string{"4|e", "NULL|d"}},
		{name: "mark with NULL build key", kind: JoinMark, left: hjLeftRows, right: hjRightRows, noBuildLft: true,
			want: []string{"1|a|true", "2|b|true", "2|c|true", "4|e|NULL", "NULL|d|NULL"}},
		{name: "mark without NULL build key", kind: JoinMark, left: hjLeftRows, right: noNullRight, noBuildLft: true,
			want: []string{"1|a|false", "2|b|true", "2|c|true", "4|e|false", "NULL|d|NULL"}},
		{name: "mark empty build", kind: JoinMark, left: hjLeftRows, right: nil, noBuildLft: true,
			want: []string{"1|a|false", "2|b|false", "2|c|false", "4|e|false", "NULL|d|false"}},
		{name: "not in with NULL build key", kind: JoinNullAwareAnti, left: hjLeftRows, right: hjRightRows, noBuildLft: true,
			want: nil},
		{name: "not in without NULL build key", kind: JoinNullAwareAnti, left: hjLeftRows, right: noNullRight, noBuildLft: true,
			want: []string{"1|a", "4|e"}},
		{name: "not in empty build", kind: JoinNullAwareAnti, left: hjLeftRows, right: nil, noBuildLft: true,
			want: []string{"1|a", "2|b", "2|c", "4|e", "NULL|d"}},
		{name: "inner empty build", kind: JoinInner, left: hjLeftRows, right: nil, want: nil},
		{name: "inner empty probe", kind: JoinInner, left: nil, right: hjRightRows, want: nil},
		{name: "left empty build", kind: JoinLeft, left: hjLeftRows, right: nil,
			want: []string{"1|a|NULL|NULL", "2|b|NULL|NULL", "2|c|NULL|NULL", "4|e|NULL|NULL", "NULL|d|NULL|NULL"}},
		{name: "right empty probe", kind: JoinRight, left: nil, right: hjRightRows,
			want: []string{"NULL|NULL|1|v", "NULL|NULL|2|x", "NULL|NULL|2|y", "NULL|NULL|3|z", "NULL|NULL|NULL|w"}},
		{name: "full both empty", kind: JoinFull, want: nil},
		{name: "semi empty build", kind: JoinSemi, left: hjLeftRows, want: nil},
		{name: "anti empty build", kind: JoinAnti, left: hjLeftRows,
			want: []string{"1|a", "2|b", "2|c", "4|e", "NULL|d"}},
		{name: "inner residual", kind: JoinInner, left: hjLeftRows, right: hjRightRows, residual: residual,
			want: []string{"1|a|1|v", "2|b|2|x"}},
		{name: "left residual", kind: JoinLeft, left: hjLeftRows, right: hjRightRows, residual: residual,
			want: []string{"1|a|1|v", "2|b|2|x", "2|c|NULL|NULL", "4|e|NULL|NULL", "NULL|d|NULL|NULL"}},
		{name: "right residual", kind: JoinRight, left: hjLeftRows, right: hjRightRows, residual: residual,
			want: []string{"1|a|1|v", "2|b|2|x", "NULL|NULL|2|y", "NULL|NULL|3|z", "NULL|NULL|NULL|w"}},
		{name: "full residual", kind: JoinFull, left: hjLeftRows, right: hjRightRows, residual: residual,
			want: []string{"1|a|1|v", "2|b|2|x", "2|c|NULL|NULL", "4|e|NULL|NULL", "NULL|NULL|2|y", "NULL|NULL|3|z", "NULL|NULL|NULL|w", "NULL|d|NULL|NULL"}},
		{name: "semi residual", kind: JoinSemi, left: hjLeftRows, right: hjRightRows, residual: residual,
			want: []string{"1|a", "2|b"}},
		{name: "anti residual", kind: JoinAnti, left: hjLeftRows, right: hjRightRows, residual: residual,
			want: []string{"2|c", "4|e", "NULL|d"}},
	}
}

func TestHashJoinKinds(t *testing.T) {
	for _, tc := range hjCases() {
		for _, buildLeft := range []bool{false, true} {
			if buildLeft && tc.noBuildLft {
				continue
			}
			for _, batchSize := range []int{0, 2} {
				name := tc.name
				if buildLeft {
					name += "/build left"
				}
				if batchSize > 0 {
					name += "/batch 2"
				}
				t.Run(name, func(t *testing.T) {
					mem := hjMem(t)
					// Split each side into two batches to cross batch boundaries.
					split := func(rows [][]any) ([][]any, [][]any) { h := len(rows) / 2; return rows[:h], rows[h:] }
					l1, l2 := split(tc.left)
					r1, r2 := split(tc.right)
					left := hjSrc(t, mem, hjLeftSchema, l1, l2)
					right := hjSrc(t, mem, hjRightSchema, r1, r2)
					j, err := NewHashJoin(tc.kind, left, right,
						[]Expr{hjCol(hjLeftSchema, 0)}, []Expr{hjCol(hjRightSchema, 0)}, tc.residual,
						HashOptions{Mem: mem, BuildLeft: buildLeft, BatchSize: batchSize, Budget: NewBudget(0)})
					if err != nil {
						t.Fatal(err)
					}
					got, err := hjRun(t, j)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(hjSorted(got), hjSorted(tc.want)) {
						t.Errorf("%s:\n got %q\nwant %q", j, hjSorted(got), hjSorted(tc.want))
					}
				})
			}
		}
	}
}

func TestHashJoinMultiKeyTypes(t *testing.T) {
	mem := hjMem(t)
	ls := hjSchema("s:str", "d:dec", "ts:ts", "b:bool", "f:f64")
	rs := hjSchema("s:str", "d:dec", "ts:ts", "b:bool", "f:f64", "tag:str")
	left := hjSrc(t, mem, ls, [][]any{
		{"x", "1.50", 10, true, 0.0},
		{"x", "1.50", 10, false, 0.0},
		{"", "0.00", 0, true, math.Copysign(0, -1)},
		{nil, "1.00", 1, true, 1.0},
		{"y", nil, 2, true, 2.0},
	})
	right := hjSrc(t, mem, rs, [][]any{
		{"x", "1.50", 10, true, math.Copysign(0, -1), "r1"},
		{"", "0.00", 0, true, 0.0, "r2"},
		{nil, "1.00", 1, true, 1.0, "r3"},
		{"y", nil, 2, true, 2.0, "r4"},
	})
	var lk, rk []Expr
	for i := 0; i < 5; i++ {
		lk = append(lk, hjCol(ls, i))
		rk = append(rk, hjCol(rs, i))
	}
	j, err := NewHashJoin(JoinInner, left, right, lk, rk, nil, HashOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	got, err := hjRun(t, j)
	if err != nil {
		t.Fatal(err)
	}
	// -0.0 joins 0.0; NULL keys never join; the empty string is a value.
	var tags []string
	for _, r := range got {
		tags = append(tags, r[strings.LastIndex(r, "|")+1:])
	}
	slices.Sort(tags)
	if want := []string{"r1", "r2"}; !slices.Equal(tags, want) {
		t.Errorf("got %q, want tags %q", got, want)
	}
}

func TestHashJoinErrors(t *testing.T) {
	mem := memory.NewGoAllocator()
	l := &hjTestSource{schema: hjLeftSchema}
	r := &hjTestSource{schema: hjRightSchema}
	i32 := &Column{Index: 0, Type: arrow.PrimitiveTypes.Int32}
	cases := []struct {
		name string
		make func() error
		want string
	}{
		{"key types", func() error {
			_, err := NewHashJoin(JoinInner, l, r, []Expr{hjCol(hjLeftSchema, 0)}, []Expr{i32}, nil, HashOptions{Mem: mem})
			return err
		}, "hash join: key 1 compares int64 with int32; cast one side to the other's type first"},
		{"no keys", func() error {
			_, err := NewHashJoin(JoinInner, l, r, nil, nil, nil, HashOptions{})
			return err
		}, "hash join: needs the same non-zero number of left and right keys, got 0 and 0"},
		{"residual type", func() error {
			_, err := NewHashJoin(JoinInner, l, r, []Expr{hjCol(hjLeftSchema, 0)}, []Expr{hjCol(hjRightSchema, 0)}, hjCol(hjLeftSchema, 1), HashOptions{})
			return err
		}, "hash join: join condition lv is utf8, not boolean"},
		{"mark build left", func() error {
			_, err := NewHashJoin(JoinMark, l, r, []Expr{hjCol(hjLeftSchema, 0)}, []Expr{hjCol(hjRightSchema, 0)}, nil, HashOptions{BuildLeft: true})
			return err
		}, "hash join: a mark join builds the right side"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.make()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestHashJoinBudget(t *testing.T) {
	mem := hjMem(t)
	var rows [][]any
	for i := 0; i < 5000; i++ {
		rows = append(rows, []any{i, "some payload"})
	}
	left := hjSrc(t, mem, hjLeftSchema, rows)
	right := hjSrc(t, mem, hjRightSchema, rows)
	budget := NewBudget(64 << 10)
	j, err := NewHashJoin(JoinInner, left, right, []Expr{hjCol(hjLeftSchema, 0)}, []Expr{hjCol(hjRightSchema, 0)}, nil,
		HashOptions{Mem: mem, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	_, err = hjRun(t, j)
	if !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("got %v, want ErrMemoryLimit", err)
	}
	want := "memory limit exceeded: hash join build side needs more than the statement memory limit of 64 KiB"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("got %q, want it to contain %q", err, want)
	}
	if budget.Used() != 0 {
		t.Errorf("budget still holds %d bytes after Close", budget.Used())
	}
}

func TestHashJoinLargeDuplicates(t *testing.T) {
	// Many rows per key and a small batch size: output chunking resumes
	// inside a hash chain.
	mem := hjMem(t)
	var l, r [][]any
	for i := 0; i < 300; i++ {
		l = append(l, []any{i % 7, "l"})
		r = append(r, []any{i % 5, "r"})
	}
	budget := NewBudget(0)
	j, err := NewHashJoin(JoinInner, hjSrc(t, mem, hjLeftSchema, l), hjSrc(t, mem, hjRightSchema, r),
		[]Expr{hjCol(hjLeftSchema, 0)}, []Expr{hjCol(hjRightSchema, 0)}, nil, HashOptions{Mem: mem, BatchSize: 100, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	got, err := hjRun(t, j)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := 0; i < 300; i++ {
		for k := 0; k < 300; k++ {
			if i%7 == k%5 {
				want++
			}
		}
	}
	if len(got) != want {
		t.Errorf("got %d rows, want %d", len(got), want)
	}
	if m := j.Metrics(); m.RowsOut.Load() != int64(want) || m.Extra()["build_rows"] != 300 {
		t.Errorf("metrics rows=%d build_rows=%d", m.RowsOut.Load(), m.Extra()["build_rows"])
	}
	if budget.Used() != 0 || budget.Peak() == 0 {
		t.Errorf("budget used %d peak %d", budget.Used(), budget.Peak())
	}
}

func TestHashJoinSourceError(t *testing.T) {
	mem := hjMem(t)
	left := hjSrc(t, mem, hjLeftSchema, hjLeftRows)
	right := hjSrc(t, mem, hjRightSchema, hjRightRows, hjRightRows)
	right.failAt = 2
	j, err := NewHashJoin(JoinInner, left, right, []Expr{hjCol(hjLeftSchema, 0)}, []Expr{hjCol(hjRightSchema, 0)}, nil, HashOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hjRun(t, j); !errors.Is(err, errHJSource) {
		t.Fatalf("got %v", err)
	}
}
