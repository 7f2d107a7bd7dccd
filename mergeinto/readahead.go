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
	pos    int64 // the file position of b's first row
	view   bool  // groups is a view of the file's (keyed), not recycled
}

// feed is one file's batches, in order.
//
// A copy-on-write file's worker first works out its layout (rw, the
// file's copy-on-write state); ready is set once it has, and from then on
// the apply loop owns rw. A file the layout lets be read key columns
// first (keyed) is read that way (readKeyFirst): its batches are the row
// groups with a hit, each at its position, and bytes what was read.
type feed struct {
	task  table.FileScanTask
	items []probed
	done  bool
	err   error
	ready bool
	rw    *fileRewrite
	keyed bool
	hit   bool // keyed: a key found a source row (else the file stays)
	bytes int64
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
// copy-on-write merge that writes whole rows: its writers' encoding
// already keeps the cores busy, and reading ahead only held more memory
// and was slower (BENCHMARKS.md). A copy-on-write merge that may patch row
// groups (one that only updates) encodes no more than its SET columns,
// so its workers read ahead (each file key columns first where the
// direct read would, readKeyFirst).
func (m *merger) readAheadWorkers(files int) int {
	if m.rw != nil || files < 2 {
		return 0
	}
	if readAheadWorkersSet >= 0 {
		return min(readAheadWorkersSet, files) // a test's, in any mode
	}
	if m.readColumns() == nil && !m.patching() {
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
	if !m.mor {
		// what the workers' copy-on-write layouts read, made before
		// they start
		m.patching()
		m.openKeyScan()
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
		probe := func(b arrow.RecordBatch) ([]int32, error) { return pr.Probe(ec, b, m.p.probeKeys) }
		// add queues b (which the caller keeps) for the apply loop
		add := func(it probed) (bool, error) {
			it.b.Retain()
			it.size = exec.BatchBytes(it.b)
			ra.mu.Lock()
			defer ra.mu.Unlock()
			if !it.view {
				groups := it.groups
				it.groups = nil
				if k := len(ra.free); k > 0 {
					it.groups, ra.free = ra.free[k-1], ra.free[:k-1]
				}
				it.groups = append(it.groups[:0], groups...)
			}
			for i != ra.head && ra.bytes+it.size > readAheadBytes && !ra.stopped {
				ra.cond.Wait()
			}
			if ra.stopped {
				it.b.Release()
				return false, errReadAheadStopped
			}
			f.items = append(f.items, it)
			ra.bytes += it.size
			ra.cond.Broadcast()
			return true, nil
		}
		var err error
		var rw *fileRewrite
		if !m.mor {
			rw = m.newFileRewrite(ctx, f.task)
		}
		if rw != nil && m.keyFirst(rw) {
			var bytes int64
			var hit bool
			hit, err = m.readKeyFirst(ctx, f.task, rw, probe, &bytes, func(b arrow.RecordBatch, groups []int32, pos int64) error {
				ra.publish(f, rw, true)
				_, err := add(probed{b: b, groups: groups, pos: pos, view: true})
				return err
			})
			ra.mu.Lock()
			f.keyed, f.hit, f.bytes = true, hit, bytes
			ra.mu.Unlock()
		} else {
			ra.publish(f, rw, false)
			err = m.readTask(ctx, f.task, func(b arrow.RecordBatch) (bool, error) {
				groups, err := probe(b)
				if err != nil {
					return false, m.probeError(err)
				}
				return add(probed{b: b, groups: groups})
			})
		}
		ra.mu.Lock()
		f.ready, f.rw = true, rw
		f.done, f.err = true, err
		ra.cond.Broadcast()
		ra.mu.Unlock()
	}
}

// publish hands f's copy-on-write state to the apply loop, once: the
// worker has made its last change to it.
func (ra *readAhead) publish(f *feed, rw *fileRewrite, keyed bool) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if !f.ready {
		f.ready, f.rw, f.keyed = true, rw, keyed
		ra.cond.Broadcast()
	}
}

// layout waits until file i's worker has worked out its layout, and
// returns its copy-on-write state (nil where the worker made none) and
// whether it is read key columns first.
func (ra *readAhead) layout(i int) (rw *fileRewrite, keyed bool) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	f := ra.onFile(i)
	for !f.ready {
		ra.cond.Wait()
	}
	return f.rw, f.keyed
}

// keyedRead takes file i's batches, read key columns first, from its
// worker and applies them to rw; hit is false when no key found a source
// row.
func (ra *readAhead) keyedRead(ctx context.Context, i int, rw *fileRewrite) (hit bool, err error) {
	for {
		it, ok, err := ra.take(i)
		if !ok {
			if err != nil {
				return false, err
			}
			break
		}
		err = rw.applyAt(ctx, it.b, it.groups, it.pos)
		it.b.Release()
		ra.done(it)
		if err != nil {
			return false, err
		}
	}
	f := ra.feeds[i] // done: the worker no longer writes it
	ra.m.res.Metrics.BytesRead += f.bytes
	return f.hit, nil
}

var errReadAheadStopped = errors.New("merge read-ahead stopped")

// take returns file i's next batch, which the caller owns, or ok false
// at its end (with the error that ended the read, if one did). The apply
// loop calls it for file 0, 1, ... in turn.
func (ra *readAhead) take(i int) (it probed, ok bool, err error) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	f := ra.onFile(i)
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

// onFile moves the apply loop to file i, waking the worker held back
// for it, and returns its feed; ra.mu is held.
func (ra *readAhead) onFile(i int) *feed {
	if ra.head != i {
		ra.head = i
		ra.cond.Broadcast()
	}
	return ra.feeds[i]
}

// done gives back the groups of a batch take returned.
func (ra *readAhead) done(it probed) {
	if it.view {
		return
	}
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
