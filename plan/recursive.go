package plan

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
)

// workTable is the state a recursive CTE shares with the references to
// itself in its recursive term: the rows of the previous iteration.
type workTable struct {
	schema *arrow.Schema
	rows   []arrow.RecordBatch
	used   bool // the recursive term refers to it
	depth  int  // binder.subqueries where the recursive term is bound
}

// RecursiveCTE is WITH RECURSIVE name AS (anchor UNION [ALL] recursive):
// the anchor's rows, then the recursive term run over the previous
// iteration's rows until it yields none.
type RecursiveCTE struct {
	Name      string
	Anchor    Node
	Recursive Node
	All       bool
	Cols      []Column
	work      *workTable
}

func (r *RecursiveCTE) Columns() []Column { return r.Cols }
func (r *RecursiveCTE) Children() []Node  { return []Node{r.Anchor, r.Recursive} }
func (r *RecursiveCTE) String() string {
	if r.All {
		return "RecursiveCTE " + r.Name + " (union all)"
	}
	return "RecursiveCTE " + r.Name + " (union)"
}

// bindRecursiveCTE binds a self-referencing CTE whose body is
// anchor UNION [ALL] recursive-term.
func (b *binder) bindRecursiveCTE(c *cteDef, pos parser.Pos) (Node, bool, error) {
	so, ok := c.query.Body.(*parser.SetOp)
	if !ok || so.Op != parser.Union || len(c.query.OrderBy) > 0 || c.query.Limit != nil || c.query.Offset != nil {
		return nil, false, nil
	}
	anchor, err := b.bindBody(so.Left, c.outer)
	if err != nil {
		return nil, false, err
	}
	acols := anchor.Columns()
	if len(c.cols) > len(acols) {
		return nil, false, errorf(pos, "WITH query %q has %d columns available but %d columns specified", c.name, len(acols), len(c.cols))
	}
	fields := make([]arrow.Field, len(acols))
	for i, a := range acols {
		name := a.Name
		if i < len(c.cols) {
			name = identName(c.cols[i])
		}
		t := a.Type
		if t.ID() == arrow.NULL {
			t = tString
		}
		fields[i] = arrow.Field{Name: name, Type: t, Nullable: true}
	}
	types := make([]arrow.DataType, len(fields))
	for i, f := range fields {
		types[i] = f.Type
	}
	if anchor, err = b.castColumns(anchor, types); err != nil {
		return nil, false, atPos(pos, err)
	}
	work := &workTable{schema: arrow.NewSchema(fields, nil), depth: b.subqueries}
	c.work = work
	rec, err := b.bindBody(so.Right, c.outer)
	c.work = nil
	if err != nil {
		return nil, false, err
	}
	if !work.used {
		return nil, false, nil // not self-referencing: an ordinary CTE
	}
	rcols := rec.Columns()
	if len(rcols) != len(fields) {
		return nil, false, errorf(pos, "each UNION query must have the same number of columns")
	}
	for i, rc := range rcols {
		if !arrow.TypeEqual(rc.Type, types[i]) {
			if _, err := exec.Coerce(&exec.Column{Type: rc.Type}, types[i]); err != nil {
				return nil, false, errorf(pos, "recursive query %q column %d has type %s in non-recursive term but type %s overall", c.name, i+1, exec.TypeName(types[i]), exec.TypeName(rc.Type))
			}
		}
	}
	if rec, err = b.castColumns(rec, types); err != nil {
		return nil, false, atPos(pos, err)
	}
	out := &RecursiveCTE{Name: c.name, Anchor: anchor, Recursive: rec, All: so.All, work: work}
	for _, f := range fields {
		out.Cols = append(out.Cols, b.newCol(f.Name, "", f.Type, true))
	}
	return out, true, nil
}

// workScan reads the previous iteration's rows. Inside a subquery of the
// recursive term it is refused, as PostgreSQL refuses it: each iteration
// runs the term over the previous iteration's rows only, which a subquery
// reading the whole recursion would not see.
func (b *binder) workScan(c *cteDef, pos parser.Pos) (*SourceScan, error) {
	w := c.work
	if b.subqueries > w.depth {
		return nil, errorf(pos, "recursive reference to query %q must not appear within a subquery", c.name)
	}
	w.used = true
	n := &SourceScan{Name: c.name + " (working table)"}
	for _, f := range w.schema.Fields() {
		n.Cols = append(n.Cols, b.newCol(f.Name, "", f.Type, true))
	}
	n.Open = func() (exec.Operator, error) { return exec.NewValues(w.schema, w.rows) }
	return n, nil
}

// defaultMaxRecursion bounds a recursive CTE's iterations unless the
// max_recursive_iterations setting says otherwise: a runaway recursion
// ends with an error rather than running until memory is gone.
const defaultMaxRecursion = 100000

// recursiveOp runs a RecursiveCTE.
type recursiveOp struct {
	b       *binder
	node    *RecursiveCTE
	schema  *arrow.Schema
	enc     *exec.KeyEncoder
	seen    map[string]struct{}
	cur     exec.Operator
	anchor  bool
	iter    int
	pending []arrow.RecordBatch // this iteration's rows, the next working table
	metrics exec.Metrics
}

func (b *binder) buildRecursive(n *RecursiveCTE) (exec.Operator, error) {
	types := make([]arrow.DataType, len(n.Cols))
	for i, c := range n.Cols {
		types[i] = c.Type
	}
	op := &recursiveOp{b: b, node: n, schema: schemaOf(n.Cols)}
	if !n.All {
		enc, err := exec.NewKeyEncoder(types)
		if err != nil {
			return nil, fmt.Errorf("recursive query %s: %w", n.Name, err)
		}
		op.enc = enc
	}
	return op, nil
}

func (r *recursiveOp) Schema() *arrow.Schema     { return r.schema }
func (r *recursiveOp) Children() []exec.Operator { return nil }
func (r *recursiveOp) Metrics() *exec.Metrics    { return &r.metrics }
func (r *recursiveOp) String() string            { return r.node.String() }

func (r *recursiveOp) Open(ctx context.Context) error {
	r.Close()
	r.seen = map[string]struct{}{}
	r.iter = 0
	op, err := r.b.build(r.node.Anchor)
	if err != nil {
		return err
	}
	if err := op.Open(ctx); err != nil {
		op.Close()
		return err
	}
	r.cur, r.anchor = op, true
	return nil
}

func (r *recursiveOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.cur == nil {
			return nil, io.EOF
		}
		batch, err := r.cur.Next(ctx)
		if err == io.EOF {
			r.cur.Close()
			r.cur = nil
			// the rows of this iteration become the working table
			for _, b := range r.node.work.rows {
				b.Release()
			}
			r.node.work.rows, r.pending = r.pending, nil
			if len(r.node.work.rows) == 0 {
				return nil, io.EOF
			}
			r.iter++
			if max := r.b.maxRecursion(); r.iter > max {
				return nil, fmt.Errorf("recursive query %q did not end after %d iterations; raise SET max_recursive_iterations if it should go on", r.node.Name, max)
			}
			op, err := r.b.build(r.node.Recursive)
			if err != nil {
				return nil, err
			}
			if err := op.Open(ctx); err != nil {
				op.Close()
				return nil, err
			}
			r.cur = op
			continue
		}
		if err != nil {
			return nil, err
		}
		batch = rewrapTo(batch, r.schema)
		if r.enc != nil {
			if batch, err = r.dedupe(ctx, batch); err != nil {
				return nil, err
			}
			if batch == nil {
				continue
			}
		}
		batch.Retain()
		r.pending = append(r.pending, batch)
		r.metrics.Add(batch, start)
		return batch, nil
	}
}

// dedupe drops rows seen before (UNION without ALL).
func (r *recursiveOp) dedupe(ctx context.Context, batch arrow.RecordBatch) (arrow.RecordBatch, error) {
	var keys exec.RowKeys
	if err := r.enc.Encode(batch.Columns(), &keys); err != nil {
		batch.Release()
		return nil, err
	}
	mb := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer mb.Release()
	kept := 0
	for i := 0; i < keys.N; i++ {
		k := string(keys.Key(i))
		if _, dup := r.seen[k]; dup {
			mb.Append(false)
			continue
		}
		r.seen[k] = struct{}{}
		mb.Append(true)
		kept++
	}
	if kept == int(batch.NumRows()) {
		return batch, nil
	}
	defer batch.Release()
	if kept == 0 {
		return nil, nil
	}
	mask := mb.NewArray()
	defer mask.Release()
	return compute.FilterRecordBatch(ctx, batch, mask, compute.DefaultFilterOptions())
}

func (r *recursiveOp) Close() error {
	if r.cur != nil {
		r.cur.Close()
		r.cur = nil
	}
	for _, b := range r.pending {
		b.Release()
	}
	r.pending = nil
	if r.node.work != nil {
		for _, b := range r.node.work.rows {
			b.Release()
		}
		r.node.work.rows = nil
	}
	return nil
}

// rewrapTo gives b schema s (same types, the CTE's column names).
func rewrapTo(b arrow.RecordBatch, s *arrow.Schema) arrow.RecordBatch {
	if b.Schema().Equal(s) {
		return b
	}
	out := array.NewRecordBatch(s, b.Columns(), b.NumRows())
	b.Release()
	return out
}

// maxRecursion is the max_recursive_iterations setting, or the default.
func (b *binder) maxRecursion() int {
	if v, err := strconv.Atoi(strings.TrimSpace(b.settings["max_recursive_iterations"])); err == nil && v > 0 {
		return v
	}
	return defaultMaxRecursion
}
