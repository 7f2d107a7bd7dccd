package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// haSpillCase builds rows of (g text, k bigint, v integer, s text) with
// about groups distinct (g, k) pairs, NULL keys and values among them.
// contiguous puts each group's rows next to each other.
func haSpillRows(rng *rand.Rand, n, groups int, contiguous bool) [][]any {
	rows := make([][]any, n)
	for i := range rows {
		gi := rng.IntN(groups)
		if contiguous {
			gi = i * groups / n
		}
		var g any = "g" + strconv.Itoa(gi%7)
		if gi%13 == 0 {
			g = nil
		}
		var k any = gi
		if gi%17 == 0 {
			k = nil
		}
		var v any
		if rng.IntN(6) > 0 {
			v = rng.IntN(2001) - 1000
		}
		var s any = strconv.Itoa(rng.IntN(50))
		if rng.IntN(9) == 0 {
			s = nil
		}
		rows[i] = []any{g, k, v, s}
	}
	return rows
}

func haSpillBatches(rng *rand.Rand, rows [][]any) [][][]any {
	var parts [][][]any
	for rest := rows; len(rest) > 0; {
		k := 1 + rng.IntN(min(len(rest), 3000))
		parts = append(parts, rest[:k])
		rest = rest[k:]
	}
	return parts
}

// haSpillRun aggregates rows with the given budget (nil: unlimited) and
// returns the rows, the metrics and the error.
func haSpillRun(t *testing.T, parts [][][]any, aggs func() []*Aggregate, budget *Budget, dir string) ([]string, map[string]int64, error) {
	t.Helper()
	mem := hjMem(t)
	s := hjSchema("g:str", "k:i64", "v:i32", "s:str")
	h, err := NewHashAggregate(hjSrc(t, mem, s, parts...), []Expr{hjCol(s, 0), hjCol(s, 1)}, aggs(),
		HashOptions{Mem: mem, Budget: budget, SpillDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	got, err := hjRun(t, h)
	if budget != nil && budget.Used() != 0 {
		t.Errorf("budget holds %d bytes after Close", budget.Used())
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("%d spill files left in %s", len(left), dir)
	}
	return got, h.Metrics().Extra(), err
}

func haFixedAggs(t *testing.T) func() []*Aggregate {
	s := hjSchema("g:str", "k:i64", "v:i32", "s:str")
	v, str := hjCol(s, 2), hjCol(s, 3)
	pos := &hjPred{name: "v > 0", f: func(b arrow.RecordBatch, r int) (bool, bool) {
		x, ok := hjStr(b, 2, r)
		if !ok {
			return false, false
		}
		n, _ := strconv.Atoi(x)
		return n > 0, true
	}}
	return func() []*Aggregate {
		return []*Aggregate{
			haMust(t, "count", nil, false, nil, nil),
			haMust(t, "count", []Expr{v}, false, pos, nil),
			haMust(t, "sum", []Expr{v}, false, nil, nil),
			haMust(t, "avg", []Expr{v}, false, nil, nil),
			haMust(t, "min", []Expr{v}, false, nil, nil),
			haMust(t, "max", []Expr{str}, false, nil, nil),
		}
	}
}

func haGrowingAggs(t *testing.T) func() []*Aggregate {
	s := hjSchema("g:str", "k:i64", "v:i32", "s:str")
	v, str := hjCol(s, 2), hjCol(s, 3)
	return func() []*Aggregate {
		return []*Aggregate{
			haMust(t, "count", []Expr{str}, true, nil, nil),
			// No ORDER BY: the result depends on input order, which
			// spilling must keep within a group.
			haMust(t, "string_agg", []Expr{str, haLit(",")}, false, nil, nil),
			haMust(t, "array_agg", []Expr{v}, false, nil, []SortKey{{Expr: v, Descending: true, NullsFirst: true}}),
			haMust(t, "any_value", []Expr{str}, false, nil, nil),
			haMust(t, "sum", []Expr{v}, false, nil, nil),
		}
	}
}

// TestHashAggregateSpill runs grouped aggregates under budgets small
// enough to spill once and to spill partitions again, and compares the
// groups with an unlimited run of the same input: the same rows, no files
// left, the budget back to zero.
func TestHashAggregateSpill(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 5))
	for _, tc := range []struct {
		name       string
		n, groups  int
		contiguous bool
		aggs       func() []*Aggregate
		budget     int64
		fanOutBits int  // 0: the default
		wantLevels bool // expect partitions to spill again
	}{
		{"fixed state, random order", 60000, 20000, false, haFixedAggs(t), 3 << 20, 0, false},
		{"fixed state, two-way partitions spill again", 120000, 60000, false, haFixedAggs(t), 2 << 20, 1, true},
		{"growing state, contiguous groups", 60000, 15000, true, haGrowingAggs(t), 3 << 20, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fanOutBits > 0 {
				old := haFanOutBits
				haFanOutBits = tc.fanOutBits
				defer func() { haFanOutBits = old }()
			}
			rows := haSpillRows(rng, tc.n, tc.groups, tc.contiguous)
			parts := haSpillBatches(rng, rows)
			want, _, err := haSpillRun(t, parts, tc.aggs, nil, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			got, m, err := haSpillRun(t, parts, tc.aggs, NewBudget(tc.budget), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if m["spilled_rows"] == 0 {
				t.Fatalf("nothing spilled under %d bytes: %v", tc.budget, m)
			}
			if tc.wantLevels && m["spills"] < 2 {
				t.Errorf("no partition spilled again: %v", m)
			}
			if int(m["groups"]) != len(want) {
				t.Errorf("groups metric %d, want %d", m["groups"], len(want))
			}
			if !slices.Equal(hjSorted(got), hjSorted(want)) {
				t.Fatalf("spilled result differs: %d rows, want %d", len(got), len(want))
			}
		})
	}
}

// TestHashAggregateSpillGrowingState: when the groups kept in memory grow
// past the budget while spilling (string_agg over groups whose rows keep
// coming), the statement fails with ErrMemoryLimit; it never answers wrong.
func TestHashAggregateSpillGrowingState(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	rows := haSpillRows(rng, 60000, 3000, false)
	parts := haSpillBatches(rng, rows)
	want, _, err := haSpillRun(t, parts, haGrowingAggs(t), nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := haSpillRun(t, parts, haGrowingAggs(t), NewBudget(2<<20), t.TempDir())
	switch {
	case errors.Is(err, ErrMemoryLimit):
	case err != nil:
		t.Fatal(err)
	case !slices.Equal(hjSorted(got), hjSorted(want)):
		t.Fatal("spilled result differs")
	}
}

// TestHashAggregateSpillDisabled keeps the old behaviour on request: an
// exhausted budget is an error naming the limit.
func TestHashAggregateSpillDisabled(t *testing.T) {
	mem := hjMem(t)
	s := hjSchema("k:i64")
	var rows [][]any
	for i := 0; i < 20000; i++ {
		rows = append(rows, []any{i})
	}
	budget := NewBudget(100 << 10)
	h, err := NewHashAggregate(hjSrc(t, mem, s, rows), []Expr{hjCol(s, 0)},
		[]*Aggregate{haMust(t, "count", nil, false, nil, nil)}, HashOptions{Mem: mem, Budget: budget, DisableSpill: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = hjRun(t, h)
	if !errors.Is(err, ErrMemoryLimit) || !strings.Contains(err.Error(), "hash aggregate state needs more than the statement memory limit of 100 KiB") {
		t.Fatalf("got %v", err)
	}
	if budget.Used() != 0 {
		t.Errorf("budget holds %d after Close", budget.Used())
	}
}

// TestHashAggregateSpillCancel stops a spilling aggregate half-way (the
// context is cancelled once partitions exist) and checks that Close
// removes every spill file and returns the budget.
func TestHashAggregateSpillCancel(t *testing.T) {
	for _, stopAt := range []int{3, 12} { // while writing; while reading partitions
		t.Run(fmt.Sprint(stopAt), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(stopAt)))
			mem := hjMem(t)
			dir := t.TempDir()
			s := hjSchema("g:str", "k:i64", "v:i32", "s:str")
			parts := haSpillBatches(rng, haSpillRows(rng, 60000, 30000, false))
			src := &haCancelSource{hjTestSource: hjSrc(t, mem, s, parts...)}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			src.after, src.cancel = stopAt, cancel
			budget := NewBudget(2 << 20)
			h, err := NewHashAggregate(src, []Expr{hjCol(s, 0), hjCol(s, 1)}, haFixedAggs(t)(),
				HashOptions{Mem: mem, Budget: budget, SpillDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Open(ctx); err != nil {
				t.Fatal(err)
			}
			var runErr error
			for {
				b, err := h.Next(ctx)
				if err != nil {
					runErr = err
					break
				}
				b.Release()
			}
			if !errors.Is(runErr, context.Canceled) {
				t.Errorf("got %v, want context.Canceled", runErr)
			}
			if err := h.Close(); err != nil {
				t.Fatal(err)
			}
			if budget.Used() != 0 {
				t.Errorf("budget holds %d after Close", budget.Used())
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Errorf("%d spill files left", len(left))
			}
		})
	}
}

// haCancelSource cancels the statement after a number of batches.
type haCancelSource struct {
	*hjTestSource
	after  int
	seen   int
	cancel func()
}

func (s *haCancelSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	s.seen++
	if s.seen == s.after {
		s.cancel()
	}
	return s.hjTestSource.Next(ctx)
}
