package exec

import (
	"sync"
	"time"
	"unsafe"
)

// retained keeps large freed slices alive between statements, for the
// next statement to reuse.
//
// Memory the Go heap frees is returned to the kernel by the runtime's
// scavenger once the heap shrinks (after a statement, and after any idle
// time), and the next statement's allocations fault it in again, page by
// page. On this project's VMs a page fault costs about 13 µs (3.4 ms a
// MB), and a 10M-row MERGE run after the heap was returned took more than
// twice as long as one run back to back (BENCHMARKS.md, "Join tables kept
// between statements"). sync.Pool does not help: every GC empties it. A retained
// holds its slices as live objects, so their pages stay mapped, up to
// max bytes in all, and drops them all once nothing has taken or kept one
// for idle (as an allocator's decay returns memory after a while).
//
// What a retained holds counts in no Budget: a budget bounds what a
// statement holds, and these belong to no statement.
type retained[E any] struct {
	mu    sync.Mutex
	free  [][]E // most recently kept last
	bytes int64
	max   int64
	idle  time.Duration
	used  time.Time
	timer *time.Timer
}

// newRetained returns an empty retained of at most maxBytes, emptied
// after idle without use.
func newRetained[E any](maxBytes int64, idle time.Duration) *retained[E] {
	return &retained[E]{max: maxBytes, idle: idle}
}

func sizeOf[E any](s []E) int64 {
	var e E
	return int64(cap(s)) * int64(unsafe.Sizeof(e))
}

// take removes and returns the most recently kept slice fit accepts, or
// nil. The slice holds what its last user left in it.
func (r *retained[E]) take(fit func([]E) bool) []E {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.free) - 1; i >= 0; i-- {
		if s := r.free[i]; fit(s) {
			r.free = append(r.free[:i], r.free[i+1:]...)
			r.bytes -= sizeOf(s)
			r.used = time.Now()
			return s
		}
	}
	return nil
}

// keep holds s (whole, to its capacity) for a later take, dropping the
// slices kept longest to stay within the bound. It reports false, and
// keeps nothing, when s alone exceeds it.
func (r *retained[E]) keep(s []E) bool {
	b := sizeOf(s)
	if b > r.max || b == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.free) > 0 && r.bytes+b > r.max {
		r.bytes -= sizeOf(r.free[0])
		r.free[0] = nil
		r.free = r.free[1:]
	}
	r.free = append(r.free, s[:cap(s)])
	r.bytes += b
	r.used = time.Now()
	if r.timer == nil {
		r.timer = time.AfterFunc(r.idle, r.expire)
	}
	return true
}

// expire empties r when it has been idle for r.idle, else looks again
// when that time will have passed.
func (r *retained[E]) expire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if idle := time.Since(r.used); idle < r.idle && len(r.free) > 0 {
		r.timer = time.AfterFunc(r.idle-idle, r.expire)
		return
	}
	r.timer = nil
	r.drop()
}

// empty empties r.
func (r *retained[E]) empty() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drop()
}

func (r *retained[E]) drop() {
	clear(r.free)
	r.free, r.bytes = nil, 0
}

// held returns how many slices r holds and their bytes.
func (r *retained[E]) held() (slices int, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.free), r.bytes
}
