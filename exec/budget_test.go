package exec

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// budgetTestSpiller holds n reserved bytes and gives them back when
// asked, unless busy.
type budgetTestSpiller struct {
	b     *Budget
	n     int64
	busy  bool
	asked int
}

func (s *budgetTestSpiller) spillHeld() int64 {
	s.asked++
	if s.busy || s.n == 0 {
		return 0
	}
	n := s.n
	s.b.Release(n)
	s.n = 0
	return n
}

// TestBudgetReclaim: a claim past the limit asks the spillers, in turn,
// until it fits; a busy or empty spiller frees nothing; a spiller removed
// is not asked; without enough room the claim fails and claims nothing.
func TestBudgetReclaim(t *testing.T) {
	b := NewBudget(1000)
	busy := &budgetTestSpiller{b: b, n: 300, busy: true}
	small := &budgetTestSpiller{b: b, n: 100}
	big := &budgetTestSpiller{b: b, n: 500}
	for _, s := range []*budgetTestSpiller{busy, small, big} {
		if err := b.Reserve(s.n, "held"); err != nil {
			t.Fatal(err)
		}
	}
	removeBusy := b.addSpiller(busy)
	b.addSpiller(small)
	removeBig := b.addSpiller(big)
	if err := b.Reserve(50, "fits"); err != nil {
		t.Fatal(err)
	}
	if busy.asked+small.asked+big.asked != 0 {
		t.Fatal("a claim within the limit asked the spillers")
	}
	// 950 used: 400 more needs the small and the big spiller's room
	if err := b.Reserve(400, "more"); err != nil {
		t.Fatal(err)
	}
	if busy.asked != 1 || small.asked != 1 || big.asked != 1 || small.n != 0 || big.n != 0 {
		t.Fatalf("asked busy %d small %d big %d; small holds %d, big %d", busy.asked, small.asked, big.asked, small.n, big.n)
	}
	if got := b.Used(); got != 300+50+400 {
		t.Fatalf("used %d, want 750", got)
	}
	removeBig()
	big.n = 200
	if err := b.Reserve(200, "big again"); err != nil {
		t.Fatal(err)
	}
	removeBusy()
	err := b.Reserve(100, "too much")
	if !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("claim past the limit with nothing to spill: %v", err)
	}
	if big.asked != 1 || busy.asked != 1 {
		t.Fatalf("removed spillers were asked: big %d, busy %d", big.asked, busy.asked)
	}
	if got := b.Used(); got != 950 {
		t.Fatalf("a failed claim changed the budget: used %d, want 950", got)
	}
	// an unlimited budget registers nothing
	u := NewBudget(0)
	u.addSpiller(big)()
	if len(u.spillers) != 0 {
		t.Fatal("an unlimited budget kept a spiller")
	}
}

// TestSortSpillsForAggregateBelow: an ORDER BY over a GROUP BY under one
// small budget. The aggregate spills and then emits its partitions one by
// one while the Sort above keeps their groups; each partition's
// aggregate needs room the Sort holds, which the Sort now writes out when
// asked. Before, the partitions' aggregates spilled again and again until
// they failed with a memory-limit error. The rows must be those of the
// unlimited run, in the same order, with no file left and the budget back
// to zero.
func TestSortSpillsForAggregateBelow(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 1))
	parts := haSpillBatches(rng, haSpillRows(rng, 80000, 30000, false))
	s := hjSchema("g:str", "k:i64", "v:i32", "s:str")
	run := func(budget *Budget) ([]string, map[string]int64, map[string]int64, error) {
		mem := hjMem(t)
		dir := t.TempDir()
		h, err := NewHashAggregate(hjSrc(t, mem, s, parts...), []Expr{hjCol(s, 0), hjCol(s, 1)}, haFixedAggs(t)(),
			HashOptions{Mem: mem, Budget: budget, SpillDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		out := h.Schema()
		keys := []SortKey{{Expr: hjCol(out, 0)}, {Expr: hjCol(out, 1), Descending: true}}
		srt, err := NewSort(h, keys, SortOptions{Mem: mem, Budget: budget, SpillDir: dir, BatchRows: 1000})
		if err != nil {
			t.Fatal(err)
		}
		got, err := hjRun(t, srt)
		if budget != nil && budget.Used() != 0 {
			t.Errorf("budget holds %d bytes after Close", budget.Used())
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("%d spill files left in %s", len(left), dir)
		}
		return got, h.Metrics().Extra(), srt.Metrics().Extra(), err
	}
	want, _, _, err := run(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, hm, sm, err := run(NewBudget(3 << 20))
	if err != nil {
		t.Fatal(err)
	}
	if hm["spilled_rows"] == 0 || sm["spills_for_others"] == 0 {
		t.Fatalf("the budget forced no spill for the aggregate: aggregate %v, sort %v", hm, sm)
	}
	if len(got) != len(want) || !slices.Equal(got, want) {
		t.Fatalf("%d rows, want %d, or another order", len(got), len(want))
	}
}

// TestBudgetReclaimConcurrent: claims from several goroutines while a
// Sort reads its input and may be asked to spill from any of them. Run
// with -race; every claim made must be released at the end.
func TestBudgetReclaimConcurrent(t *testing.T) {
	mem := opsTestMem(t)
	rows := sortTestRandomRows(rand.New(rand.NewPCG(45, 2)), 20000)
	keys := []SortKey{sortTestKey(3, false, false), sortTestKey(2, true, true)}
	budget := NewBudget(96 << 10)
	dir := t.TempDir()
	// every tenth input batch also waits for a claim of the whole budget
	// from another goroutine: the sort holds rows then (at least the
	// batch before), so it is asked to spill them across goroutines
	// however the random claims below are scheduled
	in := &budgetTestHook{Operator: opsTestValues(t, mem, sortTestSchema, rows, 500), every: 10, hook: func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			if budget.Reserve(budget.Limit(), "other claim") == nil {
				budget.Release(budget.Limit())
			}
		}()
		<-done
	}}
	srt, err := NewSort(in, keys, SortOptions{Budget: budget, SpillDir: dir, Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if budget.Reserve(24<<10, "other claim") == nil {
					budget.Release(24 << 10)
				}
			}
		}()
	}
	got := opsTestRows(t, srt)
	close(stop)
	wg.Wait()
	if !sortTestEqual(got, sortTestOracle(rows, keys)) {
		t.Fatal("sort asked to spill by other claims differs from the oracle")
	}
	if srt.Metrics().Extra()["spills_for_others"] == 0 {
		t.Fatal("no other claim made the sort spill")
	}
	if budget.Used() != 0 {
		t.Fatalf("budget holds %d bytes", budget.Used())
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("spill files left behind: %v", left)
	}
}

// budgetTestHook calls hook before every every-th batch it passes on.
type budgetTestHook struct {
	Operator
	every, n int
	hook     func()
}

func (h *budgetTestHook) Next(ctx context.Context) (arrow.RecordBatch, error) {
	h.n++
	if h.n%h.every == 0 {
		h.hook()
	}
	return h.Operator.Next(ctx)
}
