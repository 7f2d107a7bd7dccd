package exec

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/scan"
)

// ErrMemoryLimit is wrapped by every error that reports a statement
// outgrowing its memory budget.
var ErrMemoryLimit = errors.New("memory limit exceeded")

// Budget bounds the memory one statement may hold in the places where it
// must hold data: join build sides, aggregate state, sort buffers and
// MERGE's source hash table. Streaming operators do not reserve.
//
// INVARIANT: every Reserve that succeeds is matched by a Release of the
// same size when the memory is let go, so that Used returns to zero at the
// end of a statement.
//
// An operator that can write what it holds to disk (a Sort reading its
// input) registers as a spiller while it can. A claim that would pass the
// limit first asks the spillers to write out what they hold, and fails
// only if that frees too little: without it, a Sort above a spilling
// aggregate held the whole budget while the aggregate's spilled
// partitions found none.
type Budget struct {
	limit int64
	used  atomic.Int64
	peak  atomic.Int64

	mu       sync.Mutex
	spillers []spiller
}

// spiller is an operator holding reserved memory that it can write to
// disk when another claim needs the room.
type spiller interface {
	// spillHeld writes out what the operator holds and releases its
	// reservation, returning the bytes released. It returns 0 when it
	// holds nothing it can write, or is busy (it must never wait for the
	// operator: the claim may come from within its own input).
	spillHeld() int64
}

// addSpiller registers sp until the returned function is called.
func (b *Budget) addSpiller(sp spiller) (remove func()) {
	if b == nil || b.limit <= 0 {
		return func() {}
	}
	b.mu.Lock()
	b.spillers = append(b.spillers, sp)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for i, x := range b.spillers {
			if x == sp {
				b.spillers = append(b.spillers[:i], b.spillers[i+1:]...)
				return
			}
		}
	}
}

// reclaim asks the spillers to write out what they hold until n more
// bytes fit, and reports whether they do.
func (b *Budget) reclaim(n int64) bool {
	b.mu.Lock()
	sps := append([]spiller(nil), b.spillers...)
	b.mu.Unlock()
	for _, sp := range sps {
		if sp.spillHeld() > 0 && b.used.Load()+n <= b.limit {
			return true
		}
	}
	return false
}

// NewBudget returns a budget of limit bytes; limit <= 0 means unlimited.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Reserve claims n bytes for what (e.g. "hash join build side"). When the
// claim would pass the limit it asks the spillers for room; when they
// free too little it claims nothing and returns an error that wraps
// ErrMemoryLimit and names the limit.
func (b *Budget) Reserve(n int64, what string) error {
	if b == nil {
		return nil
	}
	for reclaimed := false; ; reclaimed = true {
		u := b.used.Add(n)
		if b.limit <= 0 || u <= b.limit {
			b.notePeak(u)
			return nil
		}
		b.used.Add(-n)
		if reclaimed || !b.reclaim(n) {
			return fmt.Errorf("%w: %s needs more than the statement memory limit of %s; raise it with SET memory_limit = '…', or reduce the input (filter it, or split the statement)",
				ErrMemoryLimit, what, FormatBytes(b.limit))
		}
	}
}

// force claims n bytes (or returns -n) whatever the limit: memory an
// operator already holds and must count.
func (b *Budget) force(n int64) {
	if b != nil {
		b.notePeak(b.used.Add(n))
	}
}

func (b *Budget) notePeak(u int64) {
	for {
		p := b.peak.Load()
		if u <= p || b.peak.CompareAndSwap(p, u) {
			return
		}
	}
}

// Release returns n bytes to the budget.
func (b *Budget) Release(n int64) {
	if b != nil {
		b.used.Add(-n)
	}
}

// Limit is the budget in bytes; 0 means unlimited.
func (b *Budget) Limit() int64 {
	if b == nil || b.limit < 0 {
		return 0
	}
	return b.limit
}

// Used is the number of bytes currently reserved.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// Peak is the largest number of bytes reserved at once.
func (b *Budget) Peak() int64 {
	if b == nil {
		return 0
	}
	return b.peak.Load()
}

// FormatBytes renders n with a binary unit, e.g. "512 MiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %ciB", int64(v), "KMGTPE"[exp])
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[exp])
}

// BatchBytes estimates the memory a batch holds, for Budget accounting: the
// sizes of the buffers it references. A slice of a buffer counts at the
// buffer's full size, and a buffer shared by two columns counts twice;
// both over-estimate, the safe direction for a budget.
func BatchBytes(b arrow.RecordBatch) int64 { return scan.BatchBytes(b) }

// ArraysBytes is BatchBytes for loose arrays.
func ArraysBytes(cols []arrow.Array) int64 {
	var n int64
	for _, c := range cols {
		n += ArrayDataBytes(c.Data())
	}
	return n
}

// ArrayDataBytes is the size of the buffers d, its children and its
// dictionary reference (scan.DataBytes).
func ArrayDataBytes(d arrow.ArrayData) int64 { return scan.DataBytes(d) }
