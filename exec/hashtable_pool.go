package exec

import (
	"testing"
	"time"
)

// Slot arrays and partitioned keys kept between statements.
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
// build writes whole before it reads them; htEntries keeps those.
//
// Pooling turns a use of a table after JoinBuild.Release, harmless
// before, into reading another table's slots. Under go test every
// returned array first has one slot in four set to htPoison, a slot no
// table writes, so that such a use finds garbage rows and the tests'
// answers go wrong (as scan.BufferPool poisons the buffers it takes
// back).

const (
	htPoolMaxBytes = 64 << 20
	htPoolIdle     = 30 * time.Second
)

var (
	htSlots   = newRetained[htSlot](htPoolMaxBytes, htPoolIdle)
	htEntries = newRetained[htPartEntry](htPoolMaxBytes/2, htPoolIdle)
)

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
	if len(s) < htTouchMin {
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

// takeEntries returns n entries, pooled where the pool holds an array of
// n to 2n; their contents are whatever the last build left.
func takeEntries(n int) []htPartEntry {
	if e := htEntries.take(func(e []htPartEntry) bool { return cap(e) >= n && cap(e) <= 2*n }); e != nil {
		return e[:n]
	}
	return make([]htPartEntry, n)
}

// keepEntries returns e to the pool when it is as large as a partitioned
// build's slots at the least.
func keepEntries(e []htPartEntry) {
	if cap(e) >= htTouchMin {
		htEntries.keep(e)
	}
}

// DropPooled drops the join arrays kept between statements; the next
// large build allocates its own. lake.Lake.Close calls it, so that a
// program done with its lake gets that memory back at the next GC.
func DropPooled() {
	htSlots.empty()
	htEntries.empty()
}

// PooledBytes is the memory the join arrays kept between statements
// hold.
func PooledBytes() int64 {
	_, s := htSlots.held()
	_, e := htEntries.held()
	return s + e
}
