package exec

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/scan"
)

// DefaultBatchRows is the number of rows per output batch of the blocking
// operators (Sort, Window).
const DefaultBatchRows = 8192

// skTopNMaxRows is the largest LIMIT+OFFSET Sort serves with a bounded
// heap; beyond it a full sort, which can spill, is the safer plan. (A
// variable so that tests can force the full sort.)
var skTopNMaxRows int64 = 1 << 20

// SortOptions configures a Sort.
type SortOptions struct {
	// Limit, when > 0, keeps only the first Limit rows after Offset: a
	// top-N that holds O(Limit+Offset) rows instead of the whole input.
	// 0 means no limit (LIMIT 0 belongs in a Limit operator, which never
	// pulls its child).
	Limit int64
	// Offset rows are skipped before the first row is returned.
	Offset int64
	// Budget accounts the rows a full sort (or top-N) holds; nil is
	// unlimited. After spilling, the merge holds one batch per run (at most
	// skMaxFanIn runs) outside the budget.
	Budget *Budget
	// SpillDir is where sorted runs go when the budget is exhausted;
	// "" means os.TempDir().
	SpillDir string
	// DisableSpill makes an exhausted budget an error (wrapping
	// ErrMemoryLimit) instead of a spill.
	DisableSpill bool
	// BatchRows is the size of output batches; 0 means DefaultBatchRows.
	BatchRows int
	// Mem allocates output and spill buffers; nil means the default.
	Mem memory.Allocator
}

// Sort orders its input by keys (ORDER BY). It is stable: rows with
// equal keys keep their input order.
//
// With a Limit it keeps a bounded heap (top-N). Otherwise it holds its
// input in memory, accounted in the Budget; when the budget would be
// exceeded it writes the rows held so far as a sorted run to an Arrow IPC
// file under SpillDir and starts again, and at the end merges the runs.
// Spill files are removed on Close, whatever happened before.
type Sort struct {
	child     Operator
	keys      []SortKey
	opts      SortOptions
	schema    *arrow.Schema // the child's: Sort only reorders
	extSchema *arrow.Schema // child columns + evaluated non-column keys
	keyCols   []int         // column of each key in the extended batch
	extra     []Expr        // keys that are not plain columns
	orders    []skOrder
	keyTypes  []arrow.DataType

	ec       *EvalContext
	prepared bool
	done     bool
	store    *skStore
	sorted   []skRef // emission order of store rows
	pos      int
	end      int
	spill    *skSpill
	merger   *skMerger
	toSkip   int64 // rows of OFFSET still to skip (merge path)
	left     int64 // rows still to return (merge path); < 0 unlimited
	metrics  Metrics
	// mu guards the store while the input is read: the budget may ask
	// for its rows to be spilled (spillHeld) from within the input, or
	// from another goroutine's claim. consumeCtx, the statement's, is set
	// while it may.
	mu         sync.Mutex
	consumeCtx context.Context
	spillErr   error // a spill the budget asked for failed
	// top, when not nil, hears the worst value of the first key a top-N
	// holds (SetTopBound)
	top *scan.TopBound
}

// SetTopBound makes a top-N (a Limit within skTopNMaxRows) tell tb, once
// it holds its rows, the worst value of its first key among them, so that
// a table scan below leaves out the files none of whose rows can enter
// (scan.TopBound). The first key must be a column of an integer-like
// type (INT, BIGINT, DATE, TIMESTAMP); tb takes the key's direction and
// NULLs order. It reports false, doing nothing, otherwise.
func (s *Sort) SetTopBound(tb *scan.TopBound) bool {
	if !s.useTopN() || tb == nil {
		return false
	}
	if _, ok := s.keys[0].Expr.(*Column); !ok {
		return false
	}
	switch s.keyTypes[0].ID() {
	case arrow.INT32, arrow.DATE32, arrow.INT64, arrow.TIMESTAMP, arrow.FLOAT32, arrow.FLOAT64:
	default:
		return false
	}
	tb.Desc, tb.NullsFirst = s.keys[0].Descending, s.keys[0].NullsFirst
	s.top = tb
	return true
}

// publishTop tells the top bound the worst value of the first key the
// full heap holds (row r of the store's batch b).
func (s *Sort) publishTop(st *skStore, b, r int32) {
	col := st.batches[b].Column(s.keyCols[0])
	if col.IsNull(int(r)) {
		return
	}
	switch c := col.(type) {
	case *array.Int32:
		s.top.Set(int64(c.Value(int(r))))
	case *array.Date32:
		s.top.Set(int64(c.Value(int(r))))
	case *array.Int64:
		s.top.Set(c.Value(int(r)))
	case *array.Timestamp:
		s.top.Set(int64(c.Value(int(r))))
	case *array.Float64:
		s.top.Set(scan.FloatKey(c.Value(int(r))))
	case *array.Float32:
		s.top.Set(scan.FloatKey(float64(c.Value(int(r)))))
	}
}

var _ Operator = (*Sort)(nil)

// NewSort sorts child by keys. Every key must have an orderable type.
func NewSort(child Operator, keys []SortKey, opts SortOptions) (*Sort, error) {
	if child == nil {
		return nil, fmt.Errorf("exec: sort: nil child (planner bug)")
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("exec: sort: no sort keys (planner bug)")
	}
	if opts.Limit < 0 || opts.Offset < 0 {
		return nil, fmt.Errorf("exec: sort: negative limit %d or offset %d (planner bug)", opts.Limit, opts.Offset)
	}
	if opts.BatchRows <= 0 {
		opts.BatchRows = DefaultBatchRows
	}
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	if opts.SpillDir == "" {
		opts.SpillDir = os.TempDir()
	}
	s := &Sort{child: child, keys: keys, opts: opts, schema: child.Schema()}
	fields := slices.Clone(s.schema.Fields())
	for i, k := range keys {
		if k.Expr == nil {
			return nil, fmt.Errorf("exec: sort: key %d has no expression (planner bug)", i)
		}
		dt := k.Expr.DataType()
		if err := skKeyTypeSupported(dt); err != nil {
			return nil, fmt.Errorf("ORDER BY %s: %w", k.Expr, err)
		}
		if c, ok := k.Expr.(*Column); ok && c.Index >= 0 && c.Index < len(s.schema.Fields()) &&
			arrow.TypeEqual(s.schema.Field(c.Index).Type, dt) {
			s.keyCols = append(s.keyCols, c.Index)
		} else {
			s.keyCols = append(s.keyCols, len(fields))
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("__sort_key_%d", i), Type: dt, Nullable: true})
			s.extra = append(s.extra, k.Expr)
		}
		s.orders = append(s.orders, skOrder{desc: k.Descending, nullsFirst: k.NullsFirst})
		s.keyTypes = append(s.keyTypes, dt)
	}
	s.extSchema = arrow.NewSchema(fields, nil)
	return s, nil
}

func (s *Sort) Schema() *arrow.Schema { return s.schema }

// Keys returns the sort keys.
func (s *Sort) Keys() []SortKey { return s.keys }

// Options returns the options the Sort was built with (defaults filled in).
func (s *Sort) Options() SortOptions { return s.opts }

func (s *Sort) Children() []Operator { return []Operator{s.child} }

func (s *Sort) Metrics() *Metrics { return &s.metrics }

func (s *Sort) String() string {
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = k.String()
	}
	var sb strings.Builder
	if s.useTopN() {
		fmt.Fprintf(&sb, "TopN %d", s.opts.Limit)
	} else {
		sb.WriteString("Sort")
		if s.opts.Limit > 0 {
			fmt.Fprintf(&sb, " limit=%d", s.opts.Limit)
		}
	}
	if s.opts.Offset > 0 {
		fmt.Fprintf(&sb, " offset=%d", s.opts.Offset)
	}
	sb.WriteString(" [" + strings.Join(parts, ", ") + "]")
	return sb.String()
}

func (s *Sort) useTopN() bool {
	// No Limit+Offset: it may overflow.
	return s.opts.Limit > 0 && s.opts.Limit <= skTopNMaxRows && s.opts.Offset <= skTopNMaxRows-s.opts.Limit
}

func (s *Sort) Open(ctx context.Context) error {
	start := time.Now()
	defer s.metrics.Add(nil, start)
	s.ec = newOpEvalContext(ctx, s.opts.Mem, time.Time{})
	return s.child.Open(ctx)
}

func (s *Sort) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.prepared {
		s.prepared = true
		var err error
		if s.useTopN() {
			err = s.consumeTopN(ctx)
		} else {
			err = s.consumeAll(ctx)
		}
		if err != nil {
			s.done = true
			s.releaseAll()
			return nil, err
		}
	}
	if s.done {
		return nil, io.EOF
	}
	var out arrow.RecordBatch
	var err error
	if s.merger != nil {
		out, err = s.nextMerged(ctx)
	} else {
		out, err = s.nextSorted()
	}
	if err != nil {
		s.done = true
		s.releaseAll()
		if err != io.EOF {
			return nil, err
		}
		s.metrics.Add(nil, start)
		return nil, io.EOF
	}
	s.metrics.Add(out, start)
	return out, nil
}

// extend evaluates the non-column keys of b and appends them as columns.
func (s *Sort) extend(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(s.extra) == 0 {
		b.Retain()
		return b, nil
	}
	cols := slices.Clone(b.Columns())
	for _, c := range cols {
		c.Retain()
	}
	for _, e := range s.extra {
		a, err := e.Eval(s.ec, b)
		if err == nil && int64(a.Len()) != b.NumRows() {
			a.Release()
			err = fmt.Errorf("exec: sort: key %s returned %d rows for a batch of %d (planner bug)", e, a.Len(), b.NumRows())
		}
		if err != nil {
			releaseArrays(cols)
			return nil, err
		}
		cols = append(cols, a)
	}
	out := array.NewRecordBatch(s.extSchema, cols, b.NumRows())
	releaseArrays(cols)
	return out, nil
}

// pull returns the child's next batch with keys evaluated, or io.EOF.
func (s *Sort) pull(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := s.child.Next(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Release()
	if err := checkBatchSchema(s.schema, b); err != nil {
		return nil, fmt.Errorf("exec: sort input: %w", err)
	}
	return s.extend(b)
}

// skRowBytes is what sorting holds per row beside the row's batch: its
// skRef (8 bytes) and, while sortStable runs, two skSortEntry (24 bytes
// each: the entries and their scratch copy).
const skRowBytes = 8 + 2*24

// consumeAll reads the whole input, spilling sorted runs when the budget
// runs out, and leaves either s.sorted or s.merger ready to emit.
func (s *Sort) consumeAll(ctx context.Context) error {
	s.store = newSkStore(s)
	if err := s.readInput(ctx); err != nil {
		return err
	}
	if s.spill == nil {
		s.sorted = s.store.sortedRefs()
		s.pos = int(min(s.opts.Offset, int64(len(s.sorted))))
		s.end = len(s.sorted)
		if s.opts.Limit > 0 && s.opts.Limit < int64(s.end-s.pos) {
			s.end = s.pos + int(s.opts.Limit)
		}
		return nil
	}
	if s.store.rows > 0 {
		if err := s.spillStore(ctx); err != nil {
			return err
		}
	}
	s.store.reset()
	m, err := s.spill.merge(ctx, s)
	if err != nil {
		return err
	}
	s.merger = m
	s.toSkip = s.opts.Offset
	s.left = -1
	if s.opts.Limit > 0 {
		s.left = s.opts.Limit
	}
	return nil
}

// readInput reads the whole input into the store, spilling sorted runs
// when the budget runs out or another operator's claim asks for the room.
func (s *Sort) readInput(ctx context.Context) error {
	if !s.opts.DisableSpill {
		s.mu.Lock()
		s.consumeCtx = ctx
		s.mu.Unlock()
		remove := s.opts.Budget.addSpiller(s)
		defer func() {
			remove()
			// (on every return: a claim that listed the sort before it
			// was removed must find it no longer reading)
			s.mu.Lock()
			s.consumeCtx = nil
			s.mu.Unlock()
		}()
	}
	for {
		b, err := s.pull(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		s.mu.Lock()
		err = s.take(ctx, b)
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spillErr
}

// take adds input batch b to the store (taking it over), spilling the
// rows held first when the budget has no room for it. s.mu is held.
func (s *Sort) take(ctx context.Context, b arrow.RecordBatch) error {
	if s.spillErr != nil {
		b.Release()
		return s.spillErr
	}
	need := BatchBytes(b) + skRowBytes*b.NumRows()
	if err := s.opts.Budget.Reserve(need, "ORDER BY"); err != nil {
		if s.opts.DisableSpill {
			b.Release()
			return fmt.Errorf("sort: %w", err)
		}
		if s.store.rows > 0 {
			if err := s.spillStore(ctx); err != nil {
				b.Release()
				return err
			}
		}
		if err := s.opts.Budget.Reserve(need, "ORDER BY"); err != nil {
			// One batch alone is over the budget: it goes straight
			// to its own run without being accounted.
			s.store.add(b, 0)
			return s.spillStore(ctx)
		}
	}
	s.store.add(b, need)
	return nil
}

// spillHeld writes the rows the store holds as a sorted run when another
// operator's claim on the budget needs the room (Budget.reclaim). It
// gives up, returning 0, when the sort is busy with its store: its own
// claim is then what asks, and take spills by itself.
func (s *Sort) spillHeld() int64 {
	if !s.mu.TryLock() {
		return 0
	}
	defer s.mu.Unlock()
	if s.consumeCtx == nil || s.spillErr != nil || s.store == nil || s.store.rows == 0 {
		return 0
	}
	var held int64
	for _, n := range s.store.reserved {
		held += n
	}
	if err := s.spillStore(s.consumeCtx); err != nil {
		s.spillErr = err
		return 0
	}
	s.metrics.Inc("spills_for_others", 1)
	return held
}

// spillStore writes the rows held as one sorted run and empties the store.
func (s *Sort) spillStore(ctx context.Context) error {
	if s.spill == nil {
		s.spill = newSkSpill(s.opts.SpillDir, s.extSchema, s.opts.Mem)
	}
	refs := s.store.sortedRefs()
	if err := s.spill.writeRun(ctx, s.store.batches, refs, s.opts.BatchRows); err != nil {
		return err
	}
	s.metrics.Inc("spilled_rows", int64(len(refs)))
	s.metrics.Set("spill_files", int64(len(s.spill.paths)))
	s.metrics.Set("spilled_bytes", s.spill.bytes)
	s.store.reset()
	return nil
}

// nextSorted emits the next chunk of s.sorted from the store.
func (s *Sort) nextSorted() (arrow.RecordBatch, error) {
	if s.pos >= s.end {
		return nil, io.EOF
	}
	hi := min(s.end, s.pos+s.opts.BatchRows)
	out, err := skGatherBatch(s.opts.Mem, s.schema, s.store.batches, s.sorted[s.pos:hi])
	if err != nil {
		return nil, err
	}
	s.pos = hi
	return out, nil
}

func (s *Sort) nextMerged(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if s.left == 0 {
			return nil, io.EOF
		}
		want := int64(s.opts.BatchRows)
		if s.toSkip > 0 {
			want = min(s.toSkip, want)
		} else if s.left > 0 {
			want = min(s.left, want)
		}
		b, err := s.merger.next(ctx, int(want))
		if err != nil {
			return nil, err
		}
		if s.toSkip > 0 {
			s.toSkip -= b.NumRows()
			b.Release()
			continue
		}
		if s.left > 0 {
			s.left -= b.NumRows()
		}
		return b, nil
	}
}

// releaseAll lets go of every row held and removes spill files.
func (s *Sort) releaseAll() error {
	if s.store != nil {
		s.store.reset()
	}
	s.sorted = nil
	var err error
	if s.merger != nil {
		err = s.merger.close()
		s.merger = nil
	}
	if s.spill != nil {
		if rerr := s.spill.removeAll(); err == nil {
			err = rerr
		}
		s.spill = nil
	}
	return err
}

func (s *Sort) Close() error {
	err := s.releaseAll()
	if cerr := s.child.Close(); err == nil {
		err = cerr
	}
	return err
}

// skStore holds extended batches and their sort keys, with their budget
// reservation.
type skStore struct {
	s        *Sort
	batches  []arrow.RecordBatch
	reserved []int64
	keys     *skRowKeys
	rows     int64
}

func newSkStore(s *Sort) *skStore {
	keys, err := newSkRowKeys(s.keyTypes, s.orders)
	if err != nil {
		panic("exec: sort key types were validated in NewSort: " + err.Error())
	}
	return &skStore{s: s, keys: keys}
}

// add takes over b, whose reservation of n bytes the store now owns.
func (st *skStore) add(b arrow.RecordBatch, n int64) {
	cols := make([]arrow.Array, len(st.s.keyCols))
	for i, c := range st.s.keyCols {
		cols[i] = b.Column(c)
	}
	st.batches = append(st.batches, b)
	st.reserved = append(st.reserved, n)
	st.keys.add(cols)
	st.rows += b.NumRows()
}

// truncate releases the batches from n on.
func (st *skStore) truncate(n int) {
	for i := n; i < len(st.batches); i++ {
		st.rows -= st.batches[i].NumRows()
		st.batches[i].Release()
		st.s.opts.Budget.Release(st.reserved[i])
	}
	clear(st.batches[n:])
	st.batches = st.batches[:n]
	st.reserved = st.reserved[:n]
	st.keys.truncate(n)
}

func (st *skStore) reset() { st.truncate(0) }

// sortedRefs returns every row held, in key order, ties in input order.
func (st *skStore) sortedRefs() []skRef {
	refs := make([]skRef, 0, st.rows)
	for b, batch := range st.batches {
		for r := range int32(batch.NumRows()) {
			refs = append(refs, skRef{int32(b), r})
		}
	}
	st.keys.sortStable(refs)
	return refs
}
