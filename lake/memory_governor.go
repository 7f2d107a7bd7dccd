package lake

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// gcGovernor points the Go collector at the running statements' memory
// limits. The limits are enforced by each statement's exec.Budget, which
// counts what operators hold; but the Go heap also holds garbage (by
// default the collector lets the heap grow to twice the live data before
// it runs), so without this a statement under a 512 MB limit measured
// 1.05 GB of RSS. While statements run, the governor sets the runtime's
// soft memory limit (debug.SetMemoryLimit) to the memory in use before the
// first of them started plus, for each, its limit and a sixteenth more
// for what budgets do not count (scan buffers, batches in flight). When
// the last one ends it restores the previous setting.
//
// It never touches a limit the program chose: when GOMEMLIMIT is set, or
// the soft limit was already set when the first statement started, or the
// Lake was opened WithRuntimeMemoryLimit(false), it does nothing. A
// statement without a limit (memory_limit = 0) lifts the soft limit while
// it runs.
type gcGovernor struct {
	mu        sync.Mutex
	active    int   // statements entered and not left
	unlimited int   // of them, those without a limit
	sum       int64 // their limits
	base      int64 // memory in use when the first one entered
	prev      int64 // the soft limit before, restored when the last leaves
	owned     bool  // the governor set the current soft limit
}

var governor gcGovernor

// gcSlackBytes is added once to the soft limit: room for the runtime's
// own structures and goroutine stacks.
const gcSlackBytes = 16 << 20

// enter registers a statement with the given limit (<= 0: none) and
// returns the function that unregisters it; it is safe to call twice.
func (g *gcGovernor) enter(limit int64) (leave func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	g.mu.Lock()
	if g.active == 0 {
		g.prev = debug.SetMemoryLimit(-1)
		if g.prev != math.MaxInt64 {
			// The program set a soft limit; leave it alone.
			g.mu.Unlock()
			return func() {}
		}
		g.base = memoryInUse()
		g.owned = true
	}
	g.active++
	if limit <= 0 {
		g.unlimited++
	} else {
		g.sum += limit
	}
	g.apply()
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.active--
			if limit <= 0 {
				g.unlimited--
			} else {
				g.sum -= limit
			}
			if g.active == 0 {
				debug.SetMemoryLimit(g.prev)
				g.owned = false
				return
			}
			g.apply()
		})
	}
}

// apply sets the soft limit for the statements registered; g.mu is held.
func (g *gcGovernor) apply() {
	if !g.owned {
		return
	}
	if g.unlimited > 0 {
		debug.SetMemoryLimit(math.MaxInt64)
		return
	}
	debug.SetMemoryLimit(g.base + g.sum + g.sum/16 + gcSlackBytes)
}

// memoryInUse is the memory the Go runtime holds for live data now: what
// it has mapped, less what it returned to the OS, free heap spans, and
// heap objects the last collection found dead.
func memoryInUse() int64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	metrics.Read(s)
	for _, x := range s {
		if x.Value.Kind() != metrics.KindUint64 {
			return 0
		}
	}
	total := s[0].Value.Uint64() - s[1].Value.Uint64() - s[2].Value.Uint64()
	objects, live := s[3].Value.Uint64(), s[4].Value.Uint64()
	if live < objects {
		total -= objects - live
	}
	return int64(total)
}
