package mergeinto

import (
	"context"
	"errors"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
)

// Read-ahead: a MERGE's candidate files are read (decompressed, decoded,
// conformed) and probed against the source's hash table on worker
// goroutines, while the apply loop takes them file by file, in plan
// order, and applies the clauses. Reading and probing are most of a
// MERGE's work and need nothing but the sealed hash table, which is read
// only; everything that marks or writes (matched source rows, the
// sinks, the metrics) stays on the apply loop, so results do not depend
// on the workers' timing.
//
// INVARIANT: the apply loop sees each file's batches in file order, the
// files in plan order, exactly as a sequential read yields them.
// INVARIANT: batches read ahead of the file the apply loop is on hold at
// most readAheadBytes (reserved in the budget up front); the worker of
// that file is never held back, so the loop always progresses.

// readAheadBytes bounds the batches read ahead of the apply loop;
// readAheadWorkersSet, when not negative, overrides the worker count. Tests
// change both (export_test.go).
var (
	readAheadBytes      int64 = 16 << 20
	readAheadWorkersSet       = -1
)

// probed is one target batch and the source group of each of its rows.
type probed struct {
	b      arrow.RecordBatch
	groups []int32
	size   int64
}

// feed is one file's batches, in order.
type feed struct {
	task  table.FileScanTask
	items []probed
	done  bool
	err   error
}

type readAhead struct {
	m      *merger
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	cond    sync.Cond
	feeds   []*feed
	next    int // the next file a worker takes
	head    int // the file the apply loop is on
	bytes   int64
	stopped bool
	// free holds group slices the apply loop is done with, for the
	// workers to reuse: fresh ones cost page faults and collections.
	free [][]int32
}

// readAheadWorkers is how many goroutines read ahead for a merge over
// files candidate files: one per core, at most 4, at most one per file.
// It is 0 when reading ahead does not apply: a single file, one core, the
// DELETE/UPDATE rewrite path (which reads through its own plan), and a
// merge that reads whole rows. Copy-on-write reads whole rows to rewrite
// them, and its writers' encoding already keeps the cores busy; there,
// reading ahead only held more memory and was slower (BENCHMARKS.md).
func (m *merger) readAheadWorkers(files int) int {
	if m.rw != nil || files < 2 {
		return 0
	}
	if readAheadWorkersSet >= 0 {
		return min(readAheadWorkersSet, files) // a test's, in any mode
	}
	if m.readColumns() == nil {
		return 0
	}
	n := min(runtime.GOMAXPROCS(0), 4, files)
	if n < 2 {
		return 0
	}
	return n
}

// startReadAhead starts workers reading tasks ahead. It returns nil when
// the budget cannot hold the read-ahead; the caller then reads in turn.
func (m *merger) startReadAhead(ctx context.Context, tasks []table.FileScanTask, workers int) *readAhead {
	if m.spec.Budget.Reserve(readAheadBytes, "merge read-ahead") != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	ra := &readAhead{m: m, cancel: cancel, feeds: make([]*feed, len(tasks))}
	ra.cond.L = &ra.mu
	for i, t := range tasks {
		ra.feeds[i] = &feed{task: t}
	}
	for range workers {
		ra.wg.Go(func() { ra.work(ctx) })
	}
	return ra
}

func (ra *readAhead) work(ctx context.Context) {
	m := ra.m
	pr := m.src.NewProber()
	ec := &exec.EvalContext{Ctx: compute.WithAllocator(ctx, m.opts.Mem), Mem: m.opts.Mem, Now: m.opts.Now}
	for {
		ra.mu.Lock()
		i := ra.next
		ra.next++
		stop := ra.stopped
		ra.mu.Unlock()
		if stop || i >= len(ra.feeds) {
			return
		}
		f := ra.feeds[i]
		err := m.readTask(ctx, f.task, func(b arrow.RecordBatch) (bool, error) {
			groups, err := pr.Probe(ec, b, m.p.probeKeys)
			if err != nil {
				return false, m.probeError(err)
			}
			b.Retain()
			it := probed{b: b, size: exec.BatchBytes(b)}
			ra.mu.Lock()
			defer ra.mu.Unlock()
			if k := len(ra.free); k > 0 {
				it.groups, ra.free = ra.free[k-1], ra.free[:k-1]
			}
			it.groups = append(it.groups[:0], groups...)
			for i != ra.head && ra.bytes+it.size > readAheadBytes && !ra.stopped {
				ra.cond.Wait()
			}
			if ra.stopped {
				b.Release()
				return false, errReadAheadStopped
			}
			f.items = append(f.items, it)
			ra.bytes += it.size
			ra.cond.Broadcast()
			return true, nil
		})
		ra.mu.Lock()
		f.done, f.err = true, err
		ra.cond.Broadcast()
		ra.mu.Unlock()
	}
}

var errReadAheadStopped = errors.New("merge read-ahead stopped")

// take returns file i's next batch, which the caller owns, or ok false
// at its end (with the error that ended the read, if one did). The apply
// loop calls it for file 0, 1, ... in turn.
func (ra *readAhead) take(i int) (it probed, ok bool, err error) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if ra.head != i {
		ra.head = i
		ra.cond.Broadcast()
	}
	f := ra.feeds[i]
	for len(f.items) == 0 && !f.done {
		ra.cond.Wait()
	}
	if len(f.items) == 0 {
		return probed{}, false, f.err
	}
	it = f.items[0]
	f.items[0] = probed{}
	f.items = f.items[1:]
	ra.bytes -= it.size
	ra.cond.Broadcast()
	return it, true, nil
}

// done gives back the groups of a batch take returned.
func (ra *readAhead) done(it probed) {
	ra.mu.Lock()
	ra.free = append(ra.free, it.groups)
	ra.mu.Unlock()
}

// stop ends the workers, waits for them and releases what they read that
// nobody took. It is called once, whatever happened.
func (ra *readAhead) stop() {
	ra.mu.Lock()
	ra.stopped = true
	ra.cond.Broadcast()
	ra.mu.Unlock()
	ra.cancel()
	ra.wg.Wait()
	for _, f := range ra.feeds {
		for _, it := range f.items {
			it.b.Release()
		}
		f.items = nil
	}
	ra.m.spec.Budget.Release(readAheadBytes)
}
