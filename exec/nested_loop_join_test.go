package exec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestNestedLoopJoin(t *testing.T) {
	ls := hjSchema("a:i64")
	rs := hjSchema("b:i64")
	left := [][]any{{1}, {2}, {nil}, {5}}
	right := [][]any{{2}, {3}, {nil}}
	// a < b, NULL when either is NULL.
	less := &hjPred{name: "a < b", f: func(b arrow.RecordBatch, r int) (bool, bool) {
		x, y := b.Column(0), b.Column(1)
		if x.IsNull(r) || y.IsNull(r) {
			return false, false
		}
		return x.ValueStr(r) < y.ValueStr(r), true
	}}
	cases := []struct {
		name  string
		kind  JoinKind
		pred  Expr
		left  [][]any
		right [][]any
		want  []string
	}{
		{"cross", JoinInner, nil, left, right, []string{
			"1|2", "1|3", "1|NULL", "2|2", "2|3", "2|NULL", "NULL|2", "NULL|3", "NULL|NULL", "5|2", "5|3", "5|NULL"}},
		{"cross empty right", JoinInner, nil, left, nil, nil},
		{"inner", JoinInner, less, left, right, []string{"1|2", "1|3", "2|3"}},
		{"left", JoinLeft, less, left, right, []string{"1|2", "1|3", "2|3", "NULL|NULL", "5|NULL"}},
		{"right", JoinRight, less, left, right, []string{"1|2", "1|3", "2|3", "NULL|NULL"}},
		{"full", JoinFull, less, left, right, []string{"1|2", "1|3", "2|3", "NULL|NULL", "5|NULL", "NULL|NULL"}},
		{"full empty left", JoinFull, less, nil, right, []string{"NULL|2", "NULL|3", "NULL|NULL"}},
		{"semi", JoinSemi, less, left, right, []string{"1", "2"}},
		{"anti", JoinAnti, less, left, right, []string{"NULL", "5"}},
		{"semi no predicate", JoinSemi, nil, left, right, []string{"1", "2", "NULL", "5"}},
		{"anti empty right", JoinAnti, less, left, nil, []string{"1", "2", "NULL", "5"}},
	}
	for _, tc := range cases {
		for _, buildLeft := range []bool{false, true} {
			name := tc.name
			if buildLeft {
				name += "/build left"
			}
			t.Run(name, func(t *testing.T) {
				mem := hjMem(t)
				budget := NewBudget(0)
				j, err := NewNestedLoopJoin(tc.kind, hjSrc(t, mem, ls, tc.left), hjSrc(t, mem, rs, tc.right[:min(1, len(tc.right))], tc.right[min(1, len(tc.right)):]),
					tc.pred, HashOptions{Mem: mem, BuildLeft: buildLeft, BatchSize: 2, Budget: budget})
				if err != nil {
					t.Fatal(err)
				}
				got, err := hjRun(t, j)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(hjSorted(got), hjSorted(tc.want)) {
					t.Errorf("%s: got %q, want %q", j, hjSorted(got), hjSorted(tc.want))
				}
				if budget.Used() != 0 {
					t.Errorf("budget holds %d", budget.Used())
				}
			})
		}
	}
}

func TestNestedLoopJoinErrors(t *testing.T) {
	l, r := &hjTestSource{schema: hjSchema("a:i64")}, &hjTestSource{schema: hjSchema("b:i64")}
	if _, err := NewNestedLoopJoin(JoinMark, l, r, nil, HashOptions{}); err == nil ||
		!strings.HasPrefix(err.Error(), "nested loop join: a mark join needs a predicate and builds the right side") {
		t.Errorf("got %v", err)
	}
	mem := hjMem(t)
	var rows [][]any
	for i := 0; i < 10000; i++ {
		rows = append(rows, []any{i})
	}
	j, err := NewNestedLoopJoin(JoinInner, hjSrc(t, mem, l.schema, rows), hjSrc(t, mem, r.schema, rows), nil,
		HashOptions{Mem: mem, Budget: NewBudget(16 << 10)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hjRun(t, j); !errors.Is(err, ErrMemoryLimit) ||
		!strings.Contains(err.Error(), "nested loop join build side needs more than the statement memory limit of 16 KiB") {
		t.Errorf("got %v", err)
	}
}
