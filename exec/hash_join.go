package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
)

// JoinKind is the kind of a join. Left and right refer to the operator's
// inputs, not to which side is built.
type JoinKind uint8

const (
	// JoinInner emits matching pairs.
	JoinInner JoinKind = iota
	// JoinLeft also emits unmatched left rows, right columns NULL.
	JoinLeft
	// JoinRight also emits unmatched right rows, left columns NULL.
	JoinRight
	// JoinFull emits unmatched rows of both sides.
	JoinFull
	// JoinSemi emits each left row that has a match, once (EXISTS, IN).
	JoinSemi
	// JoinAnti emits each left row that has no match (NOT EXISTS).
	JoinAnti
	// JoinMark emits every left row plus a boolean column "mark", the
	// value of "left_key IN (SELECT right_key ...)".
	//
	// Without a residual the keys are the IN keys: TRUE when the row has
	// a match; else NULL when the right side is non-empty and either the
	// row's key or some right key has a NULL; else FALSE.
	//
	// With a residual (correlated IN: the keys are the correlation
	// columns, compared plainly, and the residual holds the IN comparison,
	// e.g. x = y, in three-valued logic) the mark is the OR over the
	// candidate rows of the residual: TRUE if any is TRUE, else NULL if
	// any is NULL, else FALSE (also when there is no candidate).
	JoinMark
	// JoinNullAwareAnti is the anti join of NOT IN; it keeps the left rows
	// whose mark (as JoinMark computes it) would be FALSE. Without a
	// residual: no row at all when the right side has a NULL key; a left
	// row with a NULL key only when the right side is empty; otherwise the
	// left rows without a match. With a residual: the rows for which no
	// candidate's residual is TRUE or NULL.
	JoinNullAwareAnti
)

func (k JoinKind) String() string {
	switch k {
	case JoinInner:
		return "inner"
	case JoinLeft:
		return "left"
	case JoinRight:
		return "right"
	case JoinFull:
		return "full"
	case JoinSemi:
		return "semi"
	case JoinAnti:
		return "anti"
	case JoinMark:
		return "mark"
	case JoinNullAwareAnti:
		return "null-aware anti"
	}
	return fmt.Sprintf("JoinKind(%d)", uint8(k))
}

// emitsPairs reports whether the kind outputs joined rows.
func (k JoinKind) emitsPairs() bool { return k <= JoinFull }

// HashJoin joins two inputs on equal keys, building a JoinTable on one
// side (the right unless HashOptions.BuildLeft) and streaming the other
// batch by batch.
//
// Output: left columns then right columns, the outer side's fields made
// nullable; Semi, Anti and NullAwareAnti output the left columns only;
// Mark outputs the left columns plus a nullable boolean "mark".
//
// The residual, if any, is evaluated on each candidate pair (left columns
// then right columns); a pair whose residual is not TRUE does not count as
// a match, so a row whose candidates all fail it is unmatched for outer,
// semi and anti joins.
//
// NULL keys never match. Semi, anti, mark and null-aware anti joins with
// BuildLeft unset output left rows in probe order; the others emit
// unmatched build rows after the probe side ends.
type HashJoin struct {
	joinCore
	leftKeys, rightKeys []Expr
}

var _ Operator = (*HashJoin)(nil)

// NewHashJoin returns a hash join of left and right on leftKeys[i] =
// rightKeys[i]. Key types must be equal pairwise (the binder casts first);
// residual, when non-nil, must be boolean. Mark and NullAwareAnti build the
// right side; a residual changes how they treat NULLs (see JoinMark).
func NewHashJoin(kind JoinKind, left, right Operator, leftKeys, rightKeys []Expr, residual Expr, opts HashOptions) (*HashJoin, error) {
	if len(leftKeys) == 0 || len(leftKeys) != len(rightKeys) {
		return nil, fmt.Errorf("hash join: needs the same non-zero number of left and right keys, got %d and %d (planner bug)", len(leftKeys), len(rightKeys))
	}
	for i := range leftKeys {
		lt, rt := leftKeys[i].DataType(), rightKeys[i].DataType()
		if !arrow.TypeEqual(lt, rt) {
			return nil, fmt.Errorf("hash join: key %d compares %s with %s; cast one side to the other's type first (planner bug)", i+1, lt, rt)
		}
		if _, err := htKeyValueWidth(lt); err != nil {
			return nil, fmt.Errorf("hash join: key %d: %w", i+1, err)
		}
	}
	if (kind == JoinMark || kind == JoinNullAwareAnti) && opts.BuildLeft {
		return nil, fmt.Errorf("hash join: a %s join builds the right side (planner bug)", kind)
	}
	j := &HashJoin{leftKeys: leftKeys, rightKeys: rightKeys}
	if err := j.joinCore.init("hash join", kind, left, right, residual, opts); err != nil {
		return nil, err
	}
	enc, err := NewKeyEncoder(htExprTypes(leftKeys))
	if err != nil {
		return nil, fmt.Errorf("hash join: %w", err)
	}
	if opts.NullSafeKeys {
		if kind != JoinInner && kind != JoinLeft && kind != JoinMark {
			return nil, fmt.Errorf("hash join: NULL-safe keys in a %s join (planner bug)", kind)
		}
		enc.nullSafe = true
	}
	j.enc = enc
	if opts.BuildLeft {
		j.buildKeys, j.probeKeys = leftKeys, rightKeys
	} else {
		j.buildKeys, j.probeKeys = rightKeys, leftKeys
	}
	return j, nil
}

func (j *HashJoin) String() string {
	s := fmt.Sprintf("HashJoin %s on [", j.kind)
	for i := range j.leftKeys {
		if i > 0 {
			s += ", "
		}
		s += j.leftKeys[i].String() + " = " + j.rightKeys[i].String()
	}
	s += "]"
	if j.residual != nil {
		s += " filter " + j.residual.String()
	}
	if j.opts.BuildLeft {
		s += " build left"
	}
	return s
}

// joinCore is the probe machinery HashJoin and NestedLoopJoin share: a
// materialized build side, a streamed probe side, candidate pairs (from
// hash chains, or every build row for a nested loop), the residual, and
// matched tracking on both sides.
type joinCore struct {
	name        string
	kind        JoinKind
	left, right Operator
	residual    Expr
	opts        HashOptions
	schema      *arrow.Schema
	pairSchema  *arrow.Schema // left fields then right fields, as output
	metrics     Metrics

	// Hash join only; nil for a nested loop join.
	enc                  *KeyEncoder
	buildKeys, probeKeys []Expr
	table                *JoinTable

	jb        *JoinBuild
	build     []arrow.Array // jb.Columns
	buildRows int
	bmatched  []uint64

	cctx context.Context
	ec   *EvalContext

	built, probeDone, finished bool
	err                        error
	pb                         arrow.RecordBatch
	pkeys                      RowKeys
	pgroups                    []int32
	pi                         int
	pcur                       int32 // next build row of row pi; htPairStart before the first
	pmatched                   []bool
	pnull                      []bool // a candidate's residual was NULL (mark joins)
	pairP, pairB, idx          []int32
	unmatchedFrom              int32
	out                        []arrow.RecordBatch
	// buildOnly: the residual of a semi, anti or mark join reads only
	// build columns and calls nothing volatile, so its outcome for a
	// probe row depends only on the row's candidates, its hash group (all
	// build rows for a nested loop): groupOutcome keeps each group's,
	// found at the group's first probe row. A correlated x = ANY (q) or
	// EXISTS whose test does not read the outer row then costs a group's
	// rows once, not once per probe row (a fuzzer query ran 148M pairs).
	buildOnly    bool
	groupOutcome map[int32]groupOutcome
}

// groupOutcome is what a group's candidates give a probe row of a semi,
// anti or mark join: a TRUE residual, else whether one was NULL.
type groupOutcome struct{ matched, null bool }

const htPairStart = -2

func (c *joinCore) init(name string, kind JoinKind, left, right Operator, residual Expr, opts HashOptions) error {
	if left == nil || right == nil {
		return fmt.Errorf("%s: missing input (planner bug)", name)
	}
	if kind > JoinNullAwareAnti {
		return fmt.Errorf("%s: unknown join kind %d (planner bug)", name, kind)
	}
	if residual != nil && residual.DataType().ID() != arrow.BOOL {
		return fmt.Errorf("%s: join condition %s is %s, not boolean (planner bug)", name, residual, residual.DataType())
	}
	c.name, c.kind, c.left, c.right, c.residual = name, kind, left, right, residual
	c.opts = opts.withDefaults()
	if residual != nil && !c.opts.BuildLeft && (kind == JoinSemi || kind == JoinAnti || kind == JoinMark || kind == JoinNullAwareAnti) {
		cols, volatile := usedColumns(residual)
		probeCols := len(left.Schema().Fields())
		c.buildOnly = cols != nil && !volatile
		for _, i := range cols {
			c.buildOnly = c.buildOnly && i >= probeCols
		}
	}
	lf, rf := left.Schema().Fields(), right.Schema().Fields()
	if kind == JoinRight || kind == JoinFull {
		lf = htNullableFields(lf)
	}
	if kind == JoinLeft || kind == JoinFull {
		rf = htNullableFields(rf)
	}
	c.pairSchema = arrow.NewSchema(append(append([]arrow.Field{}, lf...), rf...), nil)
	switch kind {
	case JoinSemi, JoinAnti, JoinNullAwareAnti:
		c.schema = left.Schema()
	case JoinMark:
		c.schema = arrow.NewSchema(append(append([]arrow.Field{}, left.Schema().Fields()...),
			arrow.Field{Name: "mark", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}), nil)
	default:
		c.schema = c.pairSchema
	}
	return nil
}

func (c *joinCore) Schema() *arrow.Schema { return c.schema }
func (c *joinCore) Children() []Operator  { return []Operator{c.left, c.right} }
func (c *joinCore) Metrics() *Metrics     { return &c.metrics }

func (c *joinCore) buildOp() Operator {
	if c.opts.BuildLeft {
		return c.left
	}
	return c.right
}

func (c *joinCore) probeOp() Operator {
	if c.opts.BuildLeft {
		return c.right
	}
	return c.left
}

// probeOuter: unmatched probe rows are emitted with NULL build columns.
func (c *joinCore) probeOuter() bool {
	return c.kind == JoinFull || (c.kind == JoinLeft && !c.opts.BuildLeft) || (c.kind == JoinRight && c.opts.BuildLeft)
}

// buildOuter: unmatched build rows are emitted after the probe side ends.
func (c *joinCore) buildOuter() bool {
	return c.kind == JoinFull || (c.kind == JoinRight && !c.opts.BuildLeft) || (c.kind == JoinLeft && c.opts.BuildLeft)
}

// probeFiltered: the kind outputs probe rows by their matched flag.
func (c *joinCore) probeFiltered() bool {
	return !c.opts.BuildLeft && (c.kind == JoinSemi || c.kind == JoinAnti || c.kind == JoinMark || c.kind == JoinNullAwareAnti)
}

func (c *joinCore) Open(ctx context.Context) error {
	start := time.Now()
	defer func() { c.metrics.Elapsed.Add(int64(time.Since(start))) }()
	c.cctx = compute.WithAllocator(ctx, c.opts.Mem)
	c.ec = c.opts.evalContext(ctx)
	if err := c.left.Open(ctx); err != nil {
		return err
	}
	return c.right.Open(ctx)
}

func (c *joinCore) Close() error {
	if c.jb != nil {
		c.jb.Release()
		c.jb = nil
	}
	c.build = nil
	if c.pb != nil {
		c.pb.Release()
		c.pb = nil
	}
	htReleaseBatches(c.out)
	c.out = nil
	c.table = nil
	err1 := c.left.Close()
	err2 := c.right.Close()
	return errors.Join(err1, err2)
}

func (c *joinCore) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	for len(c.out) == 0 {
		if c.err != nil {
			return nil, c.err
		}
		if c.finished {
			c.metrics.Add(nil, start)
			return nil, io.EOF
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := c.step(ctx); err != nil {
			// The state may be half updated: every later call fails too.
			c.err = err
		}
	}
	b := c.out[0]
	c.out[0] = nil
	c.out = c.out[1:]
	c.metrics.Add(b, start)
	return b, nil
}

func (c *joinCore) emit(b arrow.RecordBatch) {
	if b.NumRows() == 0 {
		b.Release()
		return
	}
	c.out = append(c.out, b)
}

// materialize drains the build side into a JoinBuild.
func (c *joinCore) materialize(ctx context.Context) error {
	jb, err := BuildJoin(ctx, c.buildOp(), c.buildKeys, c.opts, c.name+" build side")
	if err != nil {
		return err
	}
	c.jb = jb
	c.build, c.table, c.buildRows = jb.Columns, jb.Table, jb.Rows
	c.bmatched = make([]uint64, (c.buildRows+63)/64)
	if err := jb.Reserve(int64(len(c.bmatched)) * 8); err != nil {
		return err
	}
	c.metrics.Set("build_rows", int64(c.buildRows))
	return nil
}

func (c *joinCore) step(ctx context.Context) error {
	if !c.built {
		c.built = true
		if err := c.materialize(ctx); err != nil {
			return err
		}
		if c.buildRows == 0 && !c.probeOuter() && !(c.probeFiltered() && c.kind != JoinSemi) {
			c.finished = true // nothing can match
			return nil
		}
		if c.kind == JoinNullAwareAnti && c.residual == nil && c.table != nil && c.table.NullKeyRows() > 0 {
			c.finished = true // x NOT IN (..., NULL) is never true
			return nil
		}
	}
	if c.probeDone {
		return c.emitBuildSide()
	}
	if c.pb == nil {
		b, err := c.probeOp().Next(ctx)
		if err == io.EOF {
			c.probeDone = true
			return nil
		}
		if err != nil {
			return err
		}
		if b.NumRows() == 0 {
			b.Release()
			return nil
		}
		if err := c.startProbe(b); err != nil {
			return err
		}
	}
	n := int(c.pb.NumRows())
	switch {
	case c.residual == nil && c.probeFiltered():
		// Matches need no evaluation: a row matches when its group exists.
		for i := 0; i < n; i++ {
			c.pmatched[i] = c.first(i) >= 0
		}
		c.pi = n
	case c.buildOnly:
		for ; c.pi < n; c.pi++ {
			o, err := c.outcome(c.pi)
			if err != nil {
				return err
			}
			c.pmatched[c.pi], c.pnull[c.pi] = o.matched, o.null
		}
	default:
		c.fillPairs()
		if len(c.pairP) > 0 {
			if err := c.processPairs(); err != nil {
				return err
			}
		}
	}
	if c.pi >= n {
		err := c.finishProbe()
		c.pb.Release()
		c.pb = nil
		return err
	}
	return nil
}

// outcome is the group outcome of probe row i (buildOnly), evaluated on
// the group's candidates with row i on the probe side the first time the
// group is probed, and stopping at the first TRUE.
func (c *joinCore) outcome(i int) (groupOutcome, error) {
	var g int32
	if c.table != nil {
		g = c.pgroups[i]
	}
	if o, ok := c.groupOutcome[g]; ok {
		return o, nil
	}
	var o groupOutcome
	r := c.first(i)
	for r >= 0 && !o.matched {
		c.pairP, c.pairB = c.pairP[:0], c.pairB[:0]
		for ; r >= 0 && len(c.pairB) < c.opts.BatchSize; r = c.nextCandidate(r) {
			c.pairP = append(c.pairP, int32(i))
			c.pairB = append(c.pairB, r)
		}
		cols, err := c.pairColumns(c.pairP, c.pairB)
		if err != nil {
			return o, err
		}
		joined := htNewBatch(c.pairSchema, cols, len(c.pairB))
		m, err := c.residualMask(joined)
		joined.Release()
		if err != nil {
			return o, err
		}
		for k := 0; k < m.Len(); k++ {
			switch {
			case m.IsNull(k):
				o.null = true
			case m.Value(k):
				o.matched = true
			}
		}
		m.Release()
	}
	if c.groupOutcome == nil {
		c.groupOutcome = map[int32]groupOutcome{}
	}
	c.groupOutcome[g] = o
	return o, nil
}

func (c *joinCore) startProbe(b arrow.RecordBatch) error {
	c.pb = b
	n := int(b.NumRows())
	c.pi, c.pcur = 0, htPairStart
	c.pmatched = htGrow(c.pmatched, n)
	clear(c.pmatched)
	c.pnull = htGrow(c.pnull, n)
	clear(c.pnull)
	if c.table == nil {
		return nil
	}
	cols, err := htEvalExprs(c.ec, c.probeKeys, b)
	if err != nil {
		return err
	}
	err = c.enc.Encode(cols, &c.pkeys)
	htReleaseArrays(cols)
	if err != nil {
		return err
	}
	c.pgroups = htGrow(c.pgroups, n)
	c.table.Probe(&c.pkeys, c.pgroups)
	return nil
}

// first is the first candidate build row of probe row i, or -1.
func (c *joinCore) first(i int) int32 {
	if c.table != nil {
		return c.table.First(c.pgroups[i])
	}
	if c.buildRows > 0 {
		return 0
	}
	return -1
}

func (c *joinCore) nextCandidate(r int32) int32 {
	if c.table != nil {
		return c.table.Next(r)
	}
	if int(r)+1 < c.buildRows {
		return r + 1
	}
	return -1
}

// fillPairs collects up to BatchSize candidate pairs, resuming at (pi, pcur).
func (c *joinCore) fillPairs() {
	c.pairP, c.pairB = c.pairP[:0], c.pairB[:0]
	n := int(c.pb.NumRows())
	for c.pi < n && len(c.pairP) < c.opts.BatchSize {
		if c.pcur == htPairStart {
			c.pcur = c.first(c.pi)
		}
		for c.pcur >= 0 && len(c.pairP) < c.opts.BatchSize {
			c.pairP = append(c.pairP, int32(c.pi))
			c.pairB = append(c.pairB, c.pcur)
			c.pcur = c.nextCandidate(c.pcur)
		}
		if c.pcur < 0 {
			c.pi++
			c.pcur = htPairStart
		}
	}
}

// pairColumns gathers the candidate pairs' columns, left then right.
func (c *joinCore) pairColumns(pairP, pairB []int32) ([]arrow.Array, error) {
	pcols, err := htTakeColumns(c.cctx, c.pb.Columns(), pairP)
	if err != nil {
		return nil, err
	}
	bcols, err := htTakeColumns(c.cctx, c.build, pairB)
	if err != nil {
		htReleaseArrays(pcols)
		return nil, err
	}
	if c.opts.BuildLeft {
		return append(bcols, pcols...), nil
	}
	return append(pcols, bcols...), nil
}

func (c *joinCore) setBuildMatched(r int32) { c.bmatched[r>>6] |= 1 << (uint(r) & 63) }

// residualMask evaluates the residual on a batch of joined pairs: one
// boolean per pair. The caller releases it.
func (c *joinCore) residualMask(joined arrow.RecordBatch) (*array.Boolean, error) {
	mask, err := c.residual.Eval(c.ec, joined)
	if err != nil {
		return nil, err
	}
	m, ok := mask.(*array.Boolean)
	if !ok || m.Len() != int(joined.NumRows()) {
		mask.Release()
		return nil, fmt.Errorf("%s: join condition %s returned %s of %d rows (bug)", c.name, c.residual, mask.DataType(), mask.Len())
	}
	return m, nil
}

func (c *joinCore) processPairs() error {
	np := len(c.pairP)
	var cols []arrow.Array
	if c.residual != nil || c.kind.emitsPairs() {
		var err error
		if cols, err = c.pairColumns(c.pairP, c.pairB); err != nil {
			return err
		}
	}
	var joined arrow.RecordBatch
	if cols != nil {
		joined = htNewBatch(c.pairSchema, cols, np)
		defer joined.Release()
	}
	passP, passB := c.pairP, c.pairB
	if c.residual != nil {
		m, err := c.residualMask(joined)
		if err != nil {
			return err
		}
		c.idx = c.idx[:0]
		k := 0
		nullAware := c.kind == JoinMark || c.kind == JoinNullAwareAnti
		for i := 0; i < np; i++ {
			if nullAware && m.IsNull(i) {
				c.pnull[c.pairP[i]] = true
			}
			if m.IsValid(i) && m.Value(i) {
				c.idx = append(c.idx, int32(i))
				c.pairP[k], c.pairB[k] = c.pairP[i], c.pairB[i]
				k++
			}
		}
		m.Release()
		passP, passB = c.pairP[:k], c.pairB[:k]
	}
	for i := range passP {
		c.pmatched[passP[i]] = true
		c.setBuildMatched(passB[i])
	}
	if !c.kind.emitsPairs() || len(passP) == 0 {
		return nil
	}
	if len(passP) == np {
		joined.Retain()
		c.emit(joined)
		return nil
	}
	out, err := htTakeColumns(c.cctx, joined.Columns(), c.idx)
	if err != nil {
		return err
	}
	c.emit(htNewBatch(c.schema, out, len(c.idx)))
	return nil
}

// finishProbe emits what depends on a whole probe batch having been
// matched: unmatched rows of an outer probe side, or the rows of a semi,
// anti or mark join.
func (c *joinCore) finishProbe() error {
	n := int(c.pb.NumRows())
	switch {
	case c.probeOuter():
		c.idx = c.idx[:0]
		for i := 0; i < n; i++ {
			if !c.pmatched[i] {
				c.idx = append(c.idx, int32(i))
			}
		}
		if len(c.idx) == 0 {
			return nil
		}
		pcols, err := htTakeColumns(c.cctx, c.pb.Columns(), c.idx)
		if err != nil {
			return err
		}
		bfields := c.buildOp().Schema().Fields()
		nulls := htNullColumns(c.opts.Mem, bfields, len(c.idx))
		var cols []arrow.Array
		if c.opts.BuildLeft {
			cols = append(nulls, pcols...)
		} else {
			cols = append(pcols, nulls...)
		}
		c.emit(htNewBatch(c.schema, cols, len(c.idx)))
	case c.kind == JoinMark:
		bld := array.NewBooleanBuilder(c.opts.Mem)
		defer bld.Release()
		bld.Reserve(n)
		buildHasNull := c.table != nil && c.table.NullKeyRows() > 0
		for i := 0; i < n; i++ {
			switch {
			case c.pmatched[i]:
				bld.UnsafeAppend(true)
			case c.residual != nil:
				if c.pnull[i] {
					bld.UnsafeAppendBoolToBitmap(false)
				} else {
					bld.UnsafeAppend(false)
				}
			case c.buildRows > 0 && (buildHasNull || (c.pkeys.AnyNull && c.pkeys.Null[i])):
				bld.UnsafeAppendBoolToBitmap(false)
			default:
				bld.UnsafeAppend(false)
			}
		}
		cols := make([]arrow.Array, 0, c.pb.NumCols()+1)
		for _, col := range c.pb.Columns() {
			col.Retain()
			cols = append(cols, col)
		}
		cols = append(cols, bld.NewArray())
		c.emit(htNewBatch(c.schema, cols, n))
	case c.probeFiltered():
		c.idx = c.idx[:0]
		for i := 0; i < n; i++ {
			keep := c.pmatched[i]
			switch c.kind {
			case JoinAnti:
				keep = !keep
			case JoinNullAwareAnti:
				if c.residual != nil {
					keep = !keep && !c.pnull[i]
				} else {
					keep = !keep && !(c.buildRows > 0 && c.pkeys.AnyNull && c.pkeys.Null[i])
				}
			}
			if keep {
				c.idx = append(c.idx, int32(i))
			}
		}
		if len(c.idx) == n {
			c.pb.Retain()
			c.emit(c.pb)
			return nil
		}
		if len(c.idx) == 0 {
			return nil
		}
		cols, err := htTakeColumns(c.cctx, c.pb.Columns(), c.idx)
		if err != nil {
			return err
		}
		c.emit(htNewBatch(c.schema, cols, len(c.idx)))
	}
	return nil
}

// emitBuildSide emits, after the probe side ended, one batch of unmatched
// build rows (outer joins) or of build rows selected by matched (semi and
// anti joins that build the left side), then finishes.
func (c *joinCore) emitBuildSide() error {
	var want bool
	switch {
	case c.buildOuter():
		want = false
	case c.opts.BuildLeft && c.kind == JoinSemi:
		want = true
	case c.opts.BuildLeft && c.kind == JoinAnti:
		want = false
	default:
		c.finished = true
		return nil
	}
	if int(c.unmatchedFrom) >= c.buildRows {
		c.finished = true
		return nil
	}
	c.idx, c.unmatchedFrom = htAppendBits(c.idx[:0], c.bmatched, c.unmatchedFrom, int32(c.buildRows), c.opts.BatchSize, want)
	if len(c.idx) == 0 {
		return nil
	}
	bcols, err := htTakeColumns(c.cctx, c.build, c.idx)
	if err != nil {
		return err
	}
	if !c.buildOuter() {
		c.emit(htNewBatch(c.schema, bcols, len(c.idx)))
		return nil
	}
	nulls := htNullColumns(c.opts.Mem, c.probeOp().Schema().Fields(), len(c.idx))
	var cols []arrow.Array
	if c.opts.BuildLeft {
		cols = append(bcols, nulls...)
	} else {
		cols = append(nulls, bcols...)
	}
	c.emit(htNewBatch(c.schema, cols, len(c.idx)))
	return nil
}
