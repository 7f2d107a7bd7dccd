package exec

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	_ "github.com/apache/arrow-go/v18/arrow/extensions" // UUID must round-trip through spill files
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// skSpill owns the sorted runs one Sort wrote to disk. Each run is an
// Arrow IPC stream of batches of the extended schema (input columns plus
// evaluated keys), in key order.
//
// INVARIANT: every file in paths is removed by removeAll, which Sort.Close
// always reaches; a run that failed half-way is removed at once.
type skSpill struct {
	dir    string
	schema *arrow.Schema
	mem    memory.Allocator
	paths  []string
	bytes  int64
}

func newSkSpill(dir string, schema *arrow.Schema, mem memory.Allocator) *skSpill {
	return &skSpill{dir: dir, schema: schema, mem: mem}
}

// skRunWriter writes one run file.
type skRunWriter struct {
	f  *os.File
	bw *bufio.Writer
	w  *ipc.Writer
}

func (sp *skSpill) newRunWriter() (*skRunWriter, error) {
	f, err := os.CreateTemp(sp.dir, "skade-sort-*.arrows")
	if err != nil {
		return nil, fmt.Errorf("sort: spill to %s: %w; set a spill directory with room, or raise the memory limit", sp.dir, err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	return &skRunWriter{f: f, bw: bw, w: ipc.NewWriter(bw, ipc.WithSchema(sp.schema), ipc.WithAllocator(sp.mem))}, nil
}

func (rw *skRunWriter) write(b arrow.RecordBatch) error {
	if err := rw.w.Write(b); err != nil {
		return fmt.Errorf("sort: write spill file %s: %w", rw.f.Name(), err)
	}
	return nil
}

// finish closes the run and records it; abort removes it instead.
func (rw *skRunWriter) finish(sp *skSpill) error {
	err := rw.w.Close()
	if err == nil {
		err = rw.bw.Flush()
	}
	if err == nil {
		if st, serr := rw.f.Stat(); serr == nil {
			sp.bytes += st.Size()
		}
	}
	if cerr := rw.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(rw.f.Name())
		return fmt.Errorf("sort: write spill file %s: %w", rw.f.Name(), err)
	}
	sp.paths = append(sp.paths, rw.f.Name())
	return nil
}

func (rw *skRunWriter) abort() {
	rw.w.Close()
	rw.f.Close()
	os.Remove(rw.f.Name())
}

// writeRun writes rows refs of batches, in that order, as a new run.
func (sp *skSpill) writeRun(ctx context.Context, batches []arrow.RecordBatch, refs []skRef, batchRows int) error {
	rw, err := sp.newRunWriter()
	if err != nil {
		return err
	}
	for lo := 0; lo < len(refs); lo += batchRows {
		if err := ctx.Err(); err != nil {
			rw.abort()
			return err
		}
		hi := min(lo+batchRows, len(refs))
		b, err := skGatherBatch(sp.mem, sp.schema, batches, refs[lo:hi])
		if err != nil {
			rw.abort()
			return err
		}
		err = rw.write(b)
		b.Release()
		if err != nil {
			rw.abort()
			return err
		}
	}
	return rw.finish(sp)
}

// skMaxFanIn bounds the runs merged at once (open files, one batch each).
var skMaxFanIn = 64

// reduceRuns merges consecutive groups of runs into single runs until at
// most skMaxFanIn remain. Groups are consecutive so that a merged run still
// precedes the runs of later input, which keeps ties in input order.
func (sp *skSpill) reduceRuns(ctx context.Context, s *Sort) error {
	for len(sp.paths) > skMaxFanIn {
		old := sp.paths
		sp.paths = nil
		for lo := 0; lo < len(old); lo += skMaxFanIn {
			group := old[lo:min(lo+skMaxFanIn, len(old))]
			if len(group) == 1 {
				sp.paths = append(sp.paths, group[0])
				continue
			}
			if err := sp.mergeInto(ctx, s, group); err != nil {
				sp.paths = append(sp.paths, old[lo:]...) // removeAll still finds them
				return err
			}
			for _, p := range group {
				os.Remove(p)
			}
		}
	}
	return nil
}

// mergeInto merges the runs in group into one new run.
func (sp *skSpill) mergeInto(ctx context.Context, s *Sort, group []string) error {
	m, err := sp.openMerger(s, group, sp.schema)
	if err != nil {
		return err
	}
	defer m.close()
	rw, err := sp.newRunWriter()
	if err != nil {
		return err
	}
	for {
		b, err := m.next(ctx, s.opts.BatchRows)
		if err == io.EOF {
			return rw.finish(sp)
		}
		if err == nil {
			err = rw.write(b)
			b.Release()
		}
		if err != nil {
			rw.abort()
			return err
		}
	}
}

// removeAll deletes every run file.
func (sp *skSpill) removeAll() error {
	var errs []error
	for _, p := range sp.paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	sp.paths = nil
	return errors.Join(errs...)
}

// merge opens every run for the final k-way merge.
func (sp *skSpill) merge(ctx context.Context, s *Sort) (*skMerger, error) {
	if err := sp.reduceRuns(ctx, s); err != nil {
		return nil, err
	}
	return sp.openMerger(s, sp.paths, s.schema)
}

// openMerger opens paths for a k-way merge whose batches have the columns
// of out (a prefix of the run schema).
func (sp *skSpill) openMerger(s *Sort, paths []string, out *arrow.Schema) (*skMerger, error) {
	keys, err := newSkRowKeys(s.keyTypes, s.orders)
	if err != nil {
		return nil, err
	}
	m := &skMerger{out: out, mem: sp.mem, keys: keys, keyCols: s.keyCols}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			m.close()
			return nil, fmt.Errorf("sort: read spill file: %w", err)
		}
		run := &skRun{f: f}
		m.runs = append(m.runs, run)
		r, err := ipc.NewReader(bufio.NewReaderSize(f, 1<<20), ipc.WithAllocator(sp.mem))
		if err != nil {
			m.close()
			return nil, fmt.Errorf("sort: read spill file %s: %w", p, err)
		}
		run.r = r
		if err := m.load(run); err != nil {
			m.close()
			return nil, err
		}
		if !run.done {
			m.heap = append(m.heap, len(m.runs)-1)
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m, nil
}

// skRun is one spill file being read.
type skRun struct {
	f    *os.File
	r    *ipc.Reader
	bi   int32 // index of the current batch in skMerger.batches
	pos  int32
	n    int32
	done bool
}

// skMerger merges sorted runs. Ties go to the earlier run, which holds
// earlier input, so the merge keeps the sort stable.
type skMerger struct {
	out     *arrow.Schema
	mem     memory.Allocator
	runs    []*skRun
	keys    *skRowKeys
	keyCols []int
	batches []arrow.RecordBatch // every batch loaded; nil once released
	heap    []int               // run indices, smallest current row on top
	pending []int32             // batches to release after the next gather
}

// load makes the run's next non-empty batch current, or marks it done.
func (m *skMerger) load(run *skRun) error {
	for run.r.Next() {
		b := run.r.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		b.Retain()
		cols := make([]arrow.Array, len(m.keyCols))
		for i, c := range m.keyCols {
			cols[i] = b.Column(c)
		}
		m.keys.add(cols)
		m.batches = append(m.batches, b)
		run.bi, run.pos, run.n = int32(len(m.batches)-1), 0, int32(b.NumRows())
		return nil
	}
	run.done = true
	if err := run.r.Err(); err != nil && err != io.EOF {
		return fmt.Errorf("sort: read spill file %s: %w", run.f.Name(), err)
	}
	return nil
}

func (m *skMerger) less(i, j int) bool {
	a, b := m.runs[i], m.runs[j]
	if c := m.keys.compare(skRef{a.bi, a.pos}, skRef{b.bi, b.pos}); c != 0 {
		return c < 0
	}
	return i < j
}

func (m *skMerger) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			c = r
		}
		if !m.less(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// next returns up to want merged rows, or io.EOF when the runs are spent.
func (m *skMerger) next(ctx context.Context, want int) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	refs := make([]skRef, 0, want)
	for len(refs) < want && len(m.heap) > 0 {
		run := m.runs[m.heap[0]]
		refs = append(refs, skRef{run.bi, run.pos})
		run.pos++
		if run.pos == run.n {
			m.pending = append(m.pending, run.bi)
			if err := m.load(run); err != nil {
				return nil, err
			}
			if run.done {
				last := len(m.heap) - 1
				m.heap[0] = m.heap[last]
				m.heap = m.heap[:last]
			}
		}
		m.down(0)
	}
	if len(refs) == 0 {
		return nil, io.EOF
	}
	out, err := skGatherBatch(m.mem, m.out, m.batches, refs)
	for _, bi := range m.pending {
		m.batches[bi].Release()
		m.batches[bi] = nil
		m.keys.drop(int(bi))
	}
	m.pending = m.pending[:0]
	return out, err
}

// close releases every batch and closes every file (Sort removes them).
func (m *skMerger) close() error {
	for i, b := range m.batches {
		if b != nil {
			b.Release()
			m.batches[i] = nil
		}
	}
	var errs []error
	for _, run := range m.runs {
		if run.r != nil {
			run.r.Release()
		}
		if err := run.f.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	m.runs = nil
	m.heap = nil
	return errors.Join(errs...)
}
