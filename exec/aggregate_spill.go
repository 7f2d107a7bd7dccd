package exec

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// haFanOutBits is how many bits of the key hash choose a spill partition:
// one spilling HashAggregate writes 1<<haFanOutBits partitions. A variable
// so that tests can make partitions spill again on small inputs.
var haFanOutBits = 4

// haHashBits bounds the hash bits partitioning may use: the hash table's
// slot index takes the top ones.
const haHashBits = 40

// haMaxLevel is how often a partition may spill again: each level uses
// further bits of the hash.
func haMaxLevel() int { return haHashBits / haFanOutBits }

// haBufSize is each partition writer's buffer.
const haBufSize = 64 << 10

// haSpill writes the rows of the groups a HashAggregate has no room for
// to 1<<haFanOutBits partition files, Arrow IPC streams of the input's
// schema, chosen by the hash bits above haFanOutBits·level.
//
// INVARIANT: every file created is either handed out by finish or removed
// by abort; a HashAggregate reaches one of them on every path (Close calls
// abort).
type haSpill struct {
	dir    string
	schema *arrow.Schema
	mem    memory.Allocator
	level  int
	bits   int
	parts  []*haPartWriter
	rows   int64
	idx    [][]int32
}

type haPartWriter struct {
	f    *os.File
	bw   *bufio.Writer
	w    *ipc.Writer
	rows int64
}

// haPartition is one finished partition file.
type haPartition struct {
	path string
	rows int64
}

func (p haPartition) remove() error {
	if err := os.Remove(p.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// startSpill switches h to spilling: from now on only the groups it holds
// are aggregated in memory.
func (h *HashAggregate) startSpill() error {
	dir := h.opts.SpillDir
	if dir == "" {
		dir = os.TempDir()
	}
	n := 1 << haFanOutBits
	h.spill = &haSpill{dir: dir, schema: h.input.Schema(), mem: h.opts.Mem, level: h.level, bits: haFanOutBits,
		parts: make([]*haPartWriter, n), idx: make([][]int32, n)}
	h.metrics.Inc("spills", 1)
	// The partition writers' buffers are what spilling adds.
	h.res.force(h.stateBytes())
	return nil
}

// haSpillBytes is the memory the partition writers hold.
func haSpillBytes() int64 { return int64(1<<haFanOutBits) * haBufSize }

// spillBatch folds the rows of groups held in memory into their states and
// writes every other row to its partition.
func (h *HashAggregate) spillBatch(ctx context.Context, b arrow.RecordBatch, keys *RowKeys, ids []int32, sel, base *[]bool) error {
	n := len(ids)
	h.table.FindRows(keys, ids, false /* skipNull */)
	*base = htGrow(*base, n)
	in := (*base)[:n]
	sp := h.spill
	for p := range sp.idx {
		sp.idx[p] = sp.idx[p][:0]
	}
	shift, mask := uint(sp.bits*sp.level), uint64(1)<<sp.bits-1
	held := 0
	for r, id := range ids {
		if id >= 0 {
			in[r] = true
			held++
			continue
		}
		in[r] = false
		// Fold absent rows into group 0 harmlessly: states index by id
		// even for unselected rows in some loops.
		ids[r] = 0
		p := (keys.Hashes[r] >> shift) & mask
		sp.idx[p] = append(sp.idx[p], int32(r))
	}
	if held > 0 {
		if err := h.updateAll(b, ids, sel, in); err != nil {
			return err
		}
	}
	for p, idx := range sp.idx {
		if len(idx) == 0 {
			continue
		}
		if err := sp.write(ctx, h, p, b, idx); err != nil {
			return err
		}
	}
	if held > 0 {
		if err := h.res.setTo(h.stateBytes()); err != nil {
			return fmt.Errorf("%w (the groups kept in memory while spilling outgrew it: DISTINCT, string_agg, array_agg or min/max of text grow with the rows of each group)", err)
		}
	}
	return nil
}

// write appends rows idx of b to partition p.
func (sp *haSpill) write(ctx context.Context, h *HashAggregate, p int, b arrow.RecordBatch, idx []int32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	pw := sp.parts[p]
	if pw == nil {
		f, err := os.CreateTemp(sp.dir, "skade-aggregate-*.arrows")
		if err != nil {
			return fmt.Errorf("hash aggregate: spill to %s: %w; set a spill directory with room, or raise the memory limit", sp.dir, err)
		}
		bw := bufio.NewWriterSize(f, haBufSize)
		pw = &haPartWriter{f: f, bw: bw, w: ipc.NewWriter(bw, ipc.WithSchema(sp.schema), ipc.WithAllocator(sp.mem))}
		sp.parts[p] = pw
	}
	cols, err := htTakeColumns(h.cctx, b.Columns(), idx)
	if err != nil {
		return err
	}
	rb := array.NewRecordBatch(sp.schema, cols, int64(len(idx)))
	htReleaseArrays(cols)
	err = pw.w.Write(rb)
	rb.Release()
	if err != nil {
		return fmt.Errorf("hash aggregate: write spill file %s: %w", pw.f.Name(), err)
	}
	pw.rows += int64(len(idx))
	sp.rows += int64(len(idx))
	h.metrics.Inc("spilled_rows", int64(len(idx)))
	return nil
}

// finish closes every partition file and returns the non-empty ones. On
// error every file is removed.
func (sp *haSpill) finish() ([]haPartition, error) {
	var out []haPartition
	var errs []error
	for i, pw := range sp.parts {
		if pw == nil {
			continue
		}
		sp.parts[i] = nil
		err := pw.w.Close()
		if err == nil {
			err = pw.bw.Flush()
		}
		if cerr := pw.f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("hash aggregate: write spill file %s: %w", pw.f.Name(), err))
			os.Remove(pw.f.Name())
			continue
		}
		out = append(out, haPartition{path: pw.f.Name(), rows: pw.rows})
	}
	if len(errs) > 0 {
		for _, p := range out {
			p.remove()
		}
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// abort closes and removes every partition file.
func (sp *haSpill) abort() error {
	var errs []error
	for i, pw := range sp.parts {
		if pw == nil {
			continue
		}
		sp.parts[i] = nil
		pw.w.Close()
		pw.f.Close()
		if err := os.Remove(pw.f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// haSpillSource reads one partition file back, and removes it on Close.
type haSpillSource struct {
	part    haPartition
	schema  *arrow.Schema
	mem     memory.Allocator
	f       *os.File
	r       *ipc.Reader
	metrics Metrics
}

func newHASpillSource(p haPartition, schema *arrow.Schema, mem memory.Allocator) *haSpillSource {
	return &haSpillSource{part: p, schema: schema, mem: mem}
}

func (s *haSpillSource) Schema() *arrow.Schema { return s.schema }
func (s *haSpillSource) Children() []Operator  { return nil }
func (s *haSpillSource) Metrics() *Metrics     { return &s.metrics }
func (s *haSpillSource) String() string        { return "AggregateSpillPartition" }

func (s *haSpillSource) Open(context.Context) error {
	f, err := os.Open(s.part.path)
	if err != nil {
		return fmt.Errorf("hash aggregate: read spill file: %w", err)
	}
	s.f = f
	r, err := ipc.NewReader(bufio.NewReaderSize(f, 1<<20), ipc.WithAllocator(s.mem), ipc.WithSchema(s.schema))
	if err != nil {
		return fmt.Errorf("hash aggregate: read spill file %s: %w", s.part.path, err)
	}
	s.r = r
	return nil
}

func (s *haSpillSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.r == nil {
		return nil, io.EOF
	}
	for s.r.Next() {
		b := s.r.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		b.Retain()
		return b, nil
	}
	if err := s.r.Err(); err != nil && err != io.EOF {
		return nil, fmt.Errorf("hash aggregate: read spill file %s: %w", s.part.path, err)
	}
	return nil, io.EOF
}

func (s *haSpillSource) Close() error {
	if s.r != nil {
		s.r.Release()
		s.r = nil
	}
	var errs []error
	if s.f != nil {
		errs = append(errs, s.f.Close())
		s.f = nil
	}
	errs = append(errs, s.part.remove())
	return errors.Join(errs...)
}
