package exec

import (
	"sync/atomic"
	"testing"
	"time"
)

// Join table arrays kept between statements.
//
// A large join build (a MERGE's 1.1M source keys) allocates tens of
// megabytes of slots. Taken from the Go heap they come zeroed by the
// runtime, or fresh from the kernel when the heap's scavenger returned
// their pages in between, and then every 4 KiB page faults on its first
// write (retained says what that costs). htSlots keeps the slot
// arrays of released tables, up to htPoolMaxBytes, for htPoolIdle; a
// table that takes one clears it on another core while it partitions
// its keys (JoinTable.addPartitioned). The same build's partitioned keys
// (htPartEntry, as many as the build's rows) are scratch that every
// build writes whole before it reads them; htEntries keeps those. The
// table's row lists and key arena, which it fills by append, go to
// htInts and htArena.
//
// Pooling turns a use of a table after JoinBuild.Release, harmless
// before, into reading another table's slots. Under go test every
// returned slot array first has one slot in four set to htPoison, a
// slot no table writes, and every returned row list is filled with
// htPoisonRow, so that such a use finds garbage rows and the tests'
// answers go wrong (as scan.BufferPool poisons the buffers it takes
// back).

const (
	htPoolMaxBytes = 64 << 20
	htPoolIdle     = 30 * time.Second
)

var (
	htSlots   = newRetained[htSlot](htPoolMaxBytes, htPoolIdle)
	htEntries = newRetained[htPartEntry](htPoolMaxBytes/2, htPoolIdle)
	// a table's row lists (head, tail, count, next) and key arena
	htInts  = newRetained[int32](htPoolMaxBytes/2, htPoolIdle)
	htArena = newRetained[byte](htPoolMaxBytes/4, htPoolIdle)
)

// htPoolOff turns the pools off (SetJoinPooling).
var htPoolOff atomic.Bool

// SetJoinPooling turns the keeping of join arrays between statements on
// (the default) or off for the process; off drops what is kept. A program
// short of memory, or one that runs a large join rarely, may want it off.
func SetJoinPooling(on bool) {
	htPoolOff.Store(!on)
	if !on {
		DropPooled()
	}
}

// htPoisonRow is what a pooled row list holds under go test: a row
// number beyond any table's.
var htPoisonRow int32 = 0x5A5A5A5A

// htPoison is what a pooled array holds under go test: an occupied slot
// whose row number is beyond any table's.
var htPoison = htSlot{k0: 0xA5A5A5A5A5A5A5A5, k1: 0xA5A5A5A5, id: 0xA5A5A5A5}

// takeSlots returns a pooled array of exactly n slots, or nil.
func takeSlots(n int) []htSlot {
	return htSlots.take(func(s []htSlot) bool { return len(s) == n })
}

// keepSlots returns s to the pool; arrays too small to be worth it are
// left to the garbage collector.
func keepSlots(s []htSlot) {
	if htPoolOff.Load() || len(s) < htTouchMin {
		return
	}
	if testing.Testing() {
		for i := range s {
			if i%4 == 0 { // not all: a table at its full load still has empty slots
				s[i] = htPoison
			}
		}
	}
	htSlots.keep(s)
}

// DropPooled drops the join arrays kept between statements; the next
// large build allocates its own. lake.Lake.Close calls it, so that a
// program done with its lake gets that memory back at the next GC.
func DropPooled() {
	htSlots.empty()
	htEntries.empty()
	htInts.empty()
	htArena.empty()
}

// PooledBytes is the memory the join arrays kept between statements
// hold.
func PooledBytes() int64 {
	var total int64
	for _, held := range []func() (int, int64){htSlots.held, htEntries.held, htInts.held, htArena.held} {
		_, b := held()
		total += b
	}
	return total
}

// takeList returns an empty slice of capacity n at least: from r where
// it holds one of n to 2n, else a new one.
func takeList[E any](r *retained[E], n int) []E {
	if s := r.take(func(s []E) bool { return cap(s) >= n && cap(s) <= 2*n }); s != nil {
		return s[:0]
	}
	return make([]E, 0, n)
}

// keepList returns s to r when it is as large as a partitioned build's
// arrays, first overwritten with *poison under go test when poison is
// not nil.
func keepList[E any](r *retained[E], s []E, poison *E) {
	if htPoolOff.Load() || cap(s) < htTouchMin {
		return
	}
	if poison != nil && testing.Testing() {
		s = s[:cap(s)]
		for i := range s {
			s[i] = *poison
		}
	}
	r.keep(s)
}
