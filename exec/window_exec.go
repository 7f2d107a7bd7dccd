package exec

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// WindowOptions configures a Window.
type WindowOptions struct {
	// Budget accounts the input Window holds; nil is unlimited. Window
	// does not spill: a budget too small for the input is an error
	// wrapping ErrMemoryLimit.
	Budget *Budget
	// Mem allocates results; nil means the default allocator.
	Mem memory.Allocator
}

// Window appends one column per window function to its input rows.
//
// It reads its whole input (accounted in the Budget), sorts row positions
// by each distinct PARTITION BY/ORDER BY, computes the functions, and
// emits the input batches in their ORIGINAL order and batching, each with
// the function columns appended. SQL does not promise that order; a query
// that needs one sorts on top.
type Window struct {
	child   Operator
	funcs   []*WindowFunc
	schema  *arrow.Schema
	opts    WindowOptions
	ec      *EvalContext
	metrics Metrics

	prepared bool
	batches  []arrow.RecordBatch
	base     []int // global position of each batch's first row
	n        int
	held     []arrow.Array // evaluated expressions, released on Close
	reserved int64
	results  []*winResult
	pos      int
}

var _ Operator = (*Window)(nil)

// NewWindow computes funcs over child; names are the output names of the
// function columns, appended after the child's columns.
func NewWindow(child Operator, funcs []*WindowFunc, names []string, opts WindowOptions) (*Window, error) {
	if child == nil {
		return nil, fmt.Errorf("exec: window: nil child (planner bug)")
	}
	if len(funcs) == 0 || len(funcs) != len(names) {
		return nil, fmt.Errorf("exec: window: %d functions and %d names (planner bug)", len(funcs), len(names))
	}
	fields := slices.Clone(child.Schema().Fields())
	for i, f := range funcs {
		if f == nil || f.typ == nil {
			return nil, fmt.Errorf("exec: window: function %d was not built by NewWindowFunc (planner bug)", i)
		}
		fields = append(fields, arrow.Field{Name: names[i], Type: f.typ, Nullable: true})
	}
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	return &Window{child: child, funcs: funcs, schema: arrow.NewSchema(fields, nil), opts: opts}, nil
}

func (w *Window) Schema() *arrow.Schema { return w.schema }

// Funcs returns the window functions, in output column order.
func (w *Window) Funcs() []*WindowFunc { return w.funcs }

func (w *Window) Children() []Operator { return []Operator{w.child} }

func (w *Window) Metrics() *Metrics { return &w.metrics }

func (w *Window) String() string {
	parts := make([]string, len(w.funcs))
	for i, f := range w.funcs {
		parts[i] = f.String()
	}
	return "Window [" + strings.Join(parts, ", ") + "]"
}

func (w *Window) Open(ctx context.Context) error {
	start := time.Now()
	defer w.metrics.Add(nil, start)
	w.ec = newOpEvalContext(ctx, w.opts.Mem, time.Time{})
	return w.child.Open(ctx)
}

func (w *Window) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !w.prepared {
		w.prepared = true
		if err := w.prepare(ctx); err != nil {
			w.release()
			return nil, err
		}
	}
	if w.pos >= len(w.batches) {
		w.release()
		w.metrics.Add(nil, start)
		return nil, io.EOF
	}
	b := w.batches[w.pos]
	lo := w.base[w.pos]
	hi := lo + int(b.NumRows())
	w.pos++
	cols := slices.Clone(b.Columns())
	for _, c := range cols {
		c.Retain()
	}
	for _, r := range w.results {
		a, err := r.build(w.opts.Mem, lo, hi)
		if err != nil {
			releaseArrays(cols)
			return nil, err
		}
		cols = append(cols, a)
	}
	out := array.NewRecordBatch(w.schema, cols, b.NumRows())
	releaseArrays(cols)
	w.metrics.Add(out, start)
	return out, nil
}

func (w *Window) reserve(n int64) error {
	if err := w.opts.Budget.Reserve(n, "the window function input"); err != nil {
		return fmt.Errorf("window: %w", err)
	}
	w.reserved += n
	return nil
}

// release lets go of everything held.
func (w *Window) release() {
	for _, b := range w.batches {
		b.Release()
	}
	w.batches = nil
	releaseArrays(w.held)
	w.held = nil
	for _, r := range w.results {
		r.release()
	}
	w.results = nil
	w.opts.Budget.Release(w.reserved)
	w.reserved = 0
}

func (w *Window) Close() error {
	w.release()
	return w.child.Close()
}

// prepare reads the input and computes every function.
func (w *Window) prepare(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := w.child.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := checkBatchSchema(w.child.Schema(), b); err != nil {
			b.Release()
			return fmt.Errorf("exec: window input: %w", err)
		}
		if err := w.reserve(BatchBytes(b)); err != nil {
			b.Release()
			return err
		}
		w.batches = append(w.batches, b)
		w.base = append(w.base, w.n)
		w.n += int(b.NumRows())
	}
	if w.n == 0 {
		return nil
	}
	if int64(w.n) > 1<<31-1 {
		return fmt.Errorf("window: more than 2^31 rows in one window input is not supported")
	}
	specs := map[string]*winSpec{}
	for _, f := range w.funcs {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := f.partitionOrderKey()
		sp := specs[key]
		if sp == nil {
			var err error
			if sp, err = w.newSpec(f); err != nil {
				return err
			}
			specs[key] = sp
		}
		r, err := w.compute(f, sp)
		if r != nil {
			w.results = append(w.results, r) // even on error: release frees it
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// partitionOrderKey identifies the sort a function needs.
func (f *WindowFunc) partitionOrderKey() string {
	g := *f
	g.Frame = nil
	return g.spec()
}

// evalAll evaluates e over every input batch; the arrays are held until
// Close.
func (w *Window) evalAll(e Expr) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(w.batches))
	for i, b := range w.batches {
		a, err := e.Eval(w.ec, b)
		if err != nil {
			return nil, err
		}
		w.held = append(w.held, a)
		if int64(a.Len()) != b.NumRows() {
			return nil, fmt.Errorf("exec: window: %s returned %d rows for a batch of %d (planner bug)", e, a.Len(), b.NumRows())
		}
		if err := w.reserve(ArrayDataBytes(a.Data())); err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// winSpec is the input sorted for one PARTITION BY / ORDER BY.
type winSpec struct {
	ord       []skRef // sorted positions -> rows
	partStart []int32 // per sorted position: its partition's first position
	partEnd   []int32 // ... and one past its last
	peerStart []int32 // per sorted position: first position of its peer group
	peerEnd   []int32
	orderArrs []arrow.Array // the single ORDER BY key per batch (for RANGE offsets)
	rangeVals *winRangeVals // built on first use
	// peer groups numbered across the input (GROUPS frames), built on
	// first use: group[i] is position i's, groupStart/End[g] its bounds
	group                []int32
	groupStart, groupEnd []int32
}

func (w *Window) newSpec(f *WindowFunc) (*winSpec, error) {
	np, no := len(f.PartitionBy), len(f.OrderBy)
	if err := w.reserve(int64(w.n) * 48); err != nil { // positions, bounds, sort entries
		return nil, err
	}
	var types []arrow.DataType
	var orders []skOrder
	perKey := make([][]arrow.Array, 0, np+no)
	for _, p := range f.PartitionBy {
		arrs, err := w.evalAll(p)
		if err != nil {
			return nil, err
		}
		perKey = append(perKey, arrs)
		types = append(types, p.DataType())
		orders = append(orders, skOrder{})
	}
	for _, k := range f.OrderBy {
		arrs, err := w.evalAll(k.Expr)
		if err != nil {
			return nil, err
		}
		perKey = append(perKey, arrs)
		types = append(types, k.Expr.DataType())
		orders = append(orders, skOrder{desc: k.Descending, nullsFirst: k.NullsFirst})
	}
	keys, err := newSkRowKeys(types, orders)
	if err != nil {
		return nil, err
	}
	sp := &winSpec{ord: make([]skRef, 0, w.n)}
	if no == 1 {
		sp.orderArrs = perKey[np]
	}
	cols := make([]arrow.Array, np+no)
	for b, batch := range w.batches {
		for k := range cols {
			cols[k] = perKey[k][b]
		}
		keys.add(cols)
		for r := range int32(batch.NumRows()) {
			sp.ord = append(sp.ord, skRef{int32(b), r})
		}
	}
	if np+no > 0 {
		keys.sortStable(sp.ord)
	}
	n := len(sp.ord)
	sp.partStart, sp.partEnd = make([]int32, n), make([]int32, n)
	sp.peerStart, sp.peerEnd = make([]int32, n), make([]int32, n)
	ps, qs := 0, 0
	for i := 1; i <= n; i++ {
		newPart := i == n || keys.compareRange(sp.ord[i-1], sp.ord[i], 0, np) != 0
		newPeer := newPart || keys.compareRange(sp.ord[i-1], sp.ord[i], np, np+no) != 0
		if newPeer {
			for j := qs; j < i; j++ {
				sp.peerStart[j], sp.peerEnd[j] = int32(qs), int32(i)
			}
			qs = i
		}
		if newPart {
			for j := ps; j < i; j++ {
				sp.partStart[j], sp.partEnd[j] = int32(ps), int32(i)
			}
			ps = i
		}
	}
	return sp, nil
}

// winFrame is a function's frame with offsets resolved.
type winFrame struct {
	unit       FrameUnit
	start, end FrameBoundKind
	sn, en     int64       // ROWS and GROUPS offsets
	sr, er     winRangeKey // RANGE offsets
	exclude    FrameExclude
}

func (f *WindowFunc) resolveFrame() winFrame {
	fr := f.Frame
	if fr == nil {
		if len(f.OrderBy) > 0 {
			return winFrame{unit: FrameRange, start: UnboundedPreceding, end: CurrentRow}
		}
		return winFrame{unit: FrameRows, start: UnboundedPreceding, end: UnboundedFollowing}
	}
	out := winFrame{unit: fr.Unit, start: fr.Start.Kind, end: fr.End.Kind, exclude: fr.Exclude}
	offsets := func(b FrameBound, which string) (int64, winRangeKey) {
		if b.Kind != OffsetPreceding && b.Kind != OffsetFollowing {
			return 0, winRangeKey{}
		}
		if fr.Unit == FrameRows || fr.Unit == FrameGroups {
			n, _ := winScalarInt(b.Offset)
			return n, winRangeKey{}
		}
		k, _ := newWinRangeKey(f.OrderBy[0].Expr.DataType(), b.Offset, which) // checked in NewWindowFunc
		return 0, k
	}
	out.sn, out.sr = offsets(fr.Start, "starting")
	out.en, out.er = offsets(fr.End, "ending")
	return out
}

// frameAt returns the frame [lo, hi) of sorted position i.
func (sp *winSpec) frameAt(fr *winFrame, i int, f *WindowFunc) (int, int) {
	ps, pe := int(sp.partStart[i]), int(sp.partEnd[i])
	var lo, hi int
	if fr.unit == FrameGroups {
		return sp.groupsFrame(fr, i)
	}
	if fr.unit == FrameRange && (fr.start == OffsetPreceding || fr.start == OffsetFollowing ||
		fr.end == OffsetPreceding || fr.end == OffsetFollowing) {
		return sp.rangeFrame(fr, i, f)
	}
	switch fr.start {
	case UnboundedPreceding:
		lo = ps
	case CurrentRow:
		lo = i
		if fr.unit == FrameRange {
			lo = int(sp.peerStart[i])
		}
	case OffsetPreceding:
		lo = ps
		if int64(i-ps) > fr.sn {
			lo = i - int(fr.sn)
		}
	case OffsetFollowing:
		lo = pe
		if int64(pe-i) > fr.sn {
			lo = i + int(fr.sn)
		}
	}
	switch fr.end {
	case UnboundedFollowing:
		hi = pe
	case CurrentRow:
		hi = i + 1
		if fr.unit == FrameRange {
			hi = int(sp.peerEnd[i])
		}
	case OffsetPreceding:
		hi = ps
		if int64(i-ps) >= fr.en {
			hi = i - int(fr.en) + 1
		}
	case OffsetFollowing:
		hi = pe
		if int64(pe-i-1) > fr.en {
			hi = i + int(fr.en) + 1
		}
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

// groupsFrame resolves a GROUPS frame: its bounds count peer groups from
// the current row's, within the partition.
func (sp *winSpec) groupsFrame(fr *winFrame, i int) (int, int) {
	if sp.group == nil {
		n := len(sp.ord)
		sp.group = make([]int32, n)
		g := int32(-1)
		for j := 0; j < n; j++ {
			if j == 0 || sp.peerStart[j] == int32(j) {
				g++
				sp.groupStart = append(sp.groupStart, int32(j))
				sp.groupEnd = append(sp.groupEnd, sp.peerEnd[j])
			}
			sp.group[j] = g
		}
	}
	ps, pe := int(sp.partStart[i]), int(sp.partEnd[i])
	first, last := int64(sp.group[ps]), int64(sp.group[pe-1])
	cur := int64(sp.group[i])
	var lo, hi int
	switch fr.start {
	case UnboundedPreceding:
		lo = ps
	case CurrentRow:
		lo = int(sp.peerStart[i])
	case OffsetPreceding:
		lo = int(sp.groupStart[max(first, cur-fr.sn)])
	case OffsetFollowing:
		if g := cur + fr.sn; g <= last {
			lo = int(sp.groupStart[g])
		} else {
			lo = pe
		}
	}
	switch fr.end {
	case UnboundedFollowing:
		hi = pe
	case CurrentRow:
		hi = int(sp.peerEnd[i])
	case OffsetPreceding:
		if g := cur - fr.en; g >= first {
			hi = int(sp.groupEnd[g])
		} else {
			hi = ps
		}
	case OffsetFollowing:
		hi = int(sp.groupEnd[min(last, cur+fr.en)])
	}
	return lo, max(lo, hi)
}

// excluded returns the positions EXCLUDE leaves out of row i's frame: the
// range [a, b), minus position i itself when keepSelf (EXCLUDE TIES). An
// empty range excludes nothing.
func (sp *winSpec) excluded(fr *winFrame, i int) (a, b int, keepSelf bool) {
	switch fr.exclude {
	case ExcludeCurrentRow:
		return i, i + 1, false
	case ExcludeGroup:
		return int(sp.peerStart[i]), int(sp.peerEnd[i]), false
	case ExcludeTies:
		return int(sp.peerStart[i]), int(sp.peerEnd[i]), true
	}
	return 0, 0, false
}

// frameRows calls f for each position of row i's frame [lo, hi) that
// EXCLUDE keeps.
func (sp *winSpec) frameRows(fr *winFrame, i, lo, hi int, f func(j int)) {
	kept := sp.keeps(fr, i)
	for j := lo; j < hi; j++ {
		if kept(j) {
			f(j)
		}
	}
}

// keeps reports, for row i, whether EXCLUDE keeps position j.
func (sp *winSpec) keeps(fr *winFrame, i int) func(j int) bool {
	a, b, keepSelf := sp.excluded(fr, i)
	return func(j int) bool { return j < a || j >= b || keepSelf && j == i }
}

// exclusions calls f for each position EXCLUDE takes out of row i's frame
// [lo, hi).
func (sp *winSpec) exclusions(fr *winFrame, i, lo, hi int, f func(j int)) {
	a, b, keep := sp.excluded(fr, i)
	for j := max(a, lo); j < min(b, hi); j++ {
		if !(keep && j == i) {
			f(j)
		}
	}
}

// nthKept returns the k-th (0-based, from the end when fromEnd) position
// of row i's frame [lo, hi) that EXCLUDE keeps, or -1.
func (sp *winSpec) nthKept(fr *winFrame, i, lo, hi, k int, fromEnd bool) int {
	kept := sp.keeps(fr, i)
	if fromEnd {
		for j := hi - 1; j >= lo; j-- {
			if kept(j) {
				if k == 0 {
					return j
				}
				k--
			}
		}
		return -1
	}
	for j := lo; j < hi; j++ {
		if kept(j) {
			if k == 0 {
				return j
			}
			k--
		}
	}
	return -1
}

// rangeFrame resolves a RANGE frame with an offset bound.
func (sp *winSpec) rangeFrame(fr *winFrame, i int, f *WindowFunc) (int, int) {
	if sp.rangeVals == nil {
		k := f.OrderBy[0]
		sp.rangeVals = newWinRangeVals(k.Expr.DataType(), !k.Descending, sp.orderArrs, sp.ord)
	}
	v := sp.rangeVals
	ps, pe := int(sp.partStart[i]), int(sp.partEnd[i])
	if !v.ok[i] {
		// A NULL key's offset bounds are its peers, the other NULLs.
		lo, hi := int(sp.peerStart[i]), int(sp.peerEnd[i])
		if fr.start == UnboundedPreceding {
			lo = ps
		}
		if fr.end == UnboundedFollowing {
			hi = pe
		}
		return lo, max(lo, hi)
	}
	// The non-NULL keys are contiguous: NULLs sort to one end.
	ns, ne := ps, pe
	if !v.ok[ps] {
		ns = int(sp.peerEnd[ps])
	}
	if !v.ok[pe-1] {
		ne = int(sp.peerStart[pe-1])
	}
	var lo, hi int
	switch fr.start {
	case UnboundedPreceding:
		lo = ps
	case CurrentRow:
		lo = int(sp.peerStart[i])
	case OffsetPreceding:
		lo = v.bound(ns, ne, i, fr.sr, true, false)
	case OffsetFollowing:
		lo = v.bound(ns, ne, i, fr.sr, false, false)
	}
	switch fr.end {
	case UnboundedFollowing:
		hi = pe
	case CurrentRow:
		hi = int(sp.peerEnd[i])
	case OffsetPreceding:
		hi = v.bound(ns, ne, i, fr.er, true, true)
	case OffsetFollowing:
		hi = v.bound(ns, ne, i, fr.er, false, true)
	}
	return lo, max(lo, hi)
}

// winResult is one function's output for every input row, by global row
// position: numbers, or references to the rows whose value it copies.
type winResult struct {
	typ   arrow.DataType
	ints  []int64
	flts  []float64
	decs  []decimal128.Num
	valid []bool // nil: no NULLs (numeric results)
	refs  []skRef
	srcs  []arrow.Array // what refs point into; srcs[last] is a 1-row NULL
}

func (r *winResult) release() {
	if len(r.srcs) > 0 {
		r.srcs[len(r.srcs)-1].Release() // the NULL row is ours; the rest are held by Window
	}
	r.srcs = nil
}

// build returns the result rows [lo, hi) as an array.
func (r *winResult) build(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	var valid []bool
	if r.valid != nil {
		valid = r.valid[lo:hi]
	}
	switch {
	case r.refs != nil:
		return skGather(mem, r.typ, r.srcs, r.refs[lo:hi])
	case r.ints != nil:
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.AppendValues(r.ints[lo:hi], valid)
		return b.NewArray(), nil
	case r.flts != nil:
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		b.AppendValues(r.flts[lo:hi], valid)
		return b.NewArray(), nil
	case r.decs != nil:
		b := array.NewDecimal128Builder(mem, r.typ.(*arrow.Decimal128Type))
		defer b.Release()
		b.AppendValues(r.decs[lo:hi], valid)
		return b.NewArray(), nil
	}
	return nil, fmt.Errorf("exec: window: empty result (bug)")
}
