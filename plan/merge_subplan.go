package plan

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/skadedb/skade/exec"
)

// A MERGE clause (its WHEN condition, an UPDATE SET value, an INSERT
// value) may hold correlated subqueries. They are decorrelated as in a
// SELECT, into joins (marks) onto the rows they are correlated with:
//
//   - a subquery that reads only the source row is a value of that row:
//     its joins go onto the source, once, before the MERGE joins it to the
//     target, and the clause reads the columns they add (mergeSideMarks);
//   - one that reads the target row (a MERGE joins target and source
//     rows itself, in mergeinto) is a clauseSubplan: for each batch of
//     joined rows the clause is evaluated on, its joins run over that
//     batch, as a dependent join runs over its outer rows. The
//     subquery's own inputs are read once per such batch.

// marksRead are the columns the joins a subquery became read from outside
// themselves (the outer row's columns, and earlier marks').
func marksRead(marks []*Join) map[ColumnID]bool {
	used := map[ColumnID]bool{}
	for _, m := range marks {
		for _, e := range nodeExprs(m) {
			exprCols(e, used)
		}
		for id := range freeCols(m.Right) {
			used[id] = true
		}
	}
	return used
}

// mergeSubplan is a MERGE clause expression X whose correlated subqueries
// read the target row and became Marks; it compiles to a clauseSubplan
// over the joined rows, laid out as joined (the target's columns, then
// the source's as they were when X was bound: later clauses may only
// add source columns after them).
type mergeSubplan struct {
	X     Expr
	Marks []*Join

	joined  []Column
	explain bool
	b       *binder
}

func (m *mergeSubplan) Type() arrow.DataType { return m.X.Type() }
func (m *mergeSubplan) String() string       { return m.X.String() }

// clauseSubplan evaluates a MERGE clause expression whose subqueries read
// the target row: for each batch it is given (joined rows, laid out as
// mergeinto joins them), it runs node, whose feed yields that batch with
// a row number, and puts the values back in row order. INVARIANT: node
// gives exactly one row per fed row (the marks are left and mark joins,
// each one row per outer row); anything else is a planner bug, reported.
type clauseSubplan struct {
	b    *binder
	n    int
	node Node // Project [value, row] over the marks over feed
	feed *SourceScan
	at   map[ColumnID]int // each joined column's position in the batch
	row  ColumnID         // the feed's row-number column
	typ  arrow.DataType

	mu   sync.Mutex // one evaluation at a time: node's operators are built per batch
	cur  arrow.RecordBatch
	rows arrow.Array
}

var _ exec.Expr = (*clauseSubplan)(nil)

// newClauseSubplan plans e, whose subqueries became marks reading the
// target row, over batches of joined (the target's columns, then the
// source's).
func (b *binder) newClauseSubplan(e Expr, marks []*Join, joined []Column, explain bool) (*clauseSubplan, error) {
	s := &clauseSubplan{b: b, at: make(map[ColumnID]int, len(joined)), typ: e.Type()}
	b.subplans = append(b.subplans, s)
	s.n = len(b.subplans)
	feed := &SourceScan{Name: fmt.Sprintf("merge rows ($subplan%d)", s.n)}
	for i, c := range joined {
		s.at[c.ID] = i
		feed.Cols = append(feed.Cols, c)
	}
	row := b.newCol("#row", "", arrow.PrimitiveTypes.Int32, false)
	s.row = row.ID
	feed.Cols = append(feed.Cols, row)
	feed.Open = s.openFeed
	s.feed = feed
	for _, m := range marks {
		// a join's right side that reads nothing of the rows (the hash
		// side of a decorrelated subquery: its own tables, grouped) is
		// the same for every batch: run it once
		if len(freeCols(m.Right)) == 0 && !containsDelimScan(m.Right) {
			m.Right = b.keptOnce(m.Right)
		}
	}
	var node Node = &Project{
		Input: applyMarks(feed, marks),
		Exprs: []Expr{e, &ColRef{ID: row.ID, Typ: row.Type, Name: row.Name}},
		Cols:  []Column{b.newCol("value", "", e.Type(), true), b.newCol("#row", "", row.Type, false)},
	}
	if !explain {
		if err := b.foldInits(node); err != nil {
			return nil, err
		}
	}
	s.node = optimize(b, node)
	return s, nil
}

func (s *clauseSubplan) DataType() arrow.DataType { return s.typ }
func (s *clauseSubplan) String() string           { return fmt.Sprintf("$subplan%d", s.n) }

// openFeed yields the batch being evaluated, as the feed's (possibly
// pruned) columns.
func (s *clauseSubplan) openFeed() (exec.Operator, error) {
	cols := make([]arrow.Array, len(s.feed.Cols))
	fields := make([]arrow.Field, len(s.feed.Cols))
	for i, c := range s.feed.Cols {
		if c.ID == s.row {
			cols[i] = s.rows
		} else {
			k, ok := s.at[c.ID]
			if !ok || k >= int(s.cur.NumCols()) {
				return nil, fmt.Errorf("plan: %s reads column %s, which the merged rows lack (planner bug)", s, c.Name)
			}
			cols[i] = s.cur.Column(k)
		}
		fields[i] = arrow.Field{Name: c.Name, Type: cols[i].DataType(), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	batch := array.NewRecordBatch(schema, cols, s.cur.NumRows())
	defer batch.Release()
	return exec.NewValues(schema, []arrow.RecordBatch{batch})
}

func (s *clauseSubplan) Eval(ec *exec.EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := int(batch.NumRows())
	if n == 0 {
		return array.MakeArrayOfNull(ec.Mem, s.typ, 0), nil
	}
	rb := array.NewInt32Builder(ec.Mem)
	rb.Reserve(n)
	for i := range n {
		rb.UnsafeAppend(int32(i))
	}
	s.rows, s.cur = rb.NewArray(), batch
	defer func() {
		s.rows.Release()
		s.rows, s.cur = nil, nil
	}()
	vals, rows, err := s.run(ec)
	if err != nil {
		return nil, err
	}
	defer vals.Release()
	defer rows.Release()
	// perm[i] is the output row of fed row i
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = -1
	}
	rv := rows.(*array.Int32)
	for k := range rv.Len() {
		r := rv.Value(k)
		if r < 0 || int(r) >= n || perm[r] >= 0 {
			return nil, fmt.Errorf("plan: %s gave row %d twice (planner bug)", s, r)
		}
		perm[r] = int32(k)
	}
	if rv.Len() != n {
		return nil, fmt.Errorf("plan: %s gave %d rows for %d (planner bug)", s, rv.Len(), n)
	}
	idx := array.NewInt32Builder(ec.Mem)
	defer idx.Release()
	idx.AppendValues(perm, nil)
	ia := idx.NewArray()
	defer ia.Release()
	return compute.TakeArray(compute.WithAllocator(ec.Ctx, ec.Mem), vals, ia)
}

// run builds and runs node over the current batch: its values and row
// numbers, each concatenated.
func (s *clauseSubplan) run(ec *exec.EvalContext) (arrow.Array, arrow.Array, error) {
	op, err := s.b.build(s.node)
	if err != nil {
		return nil, nil, err
	}
	defer op.Close()
	if err := op.Open(ec.Ctx); err != nil {
		return nil, nil, err
	}
	var vals, rows []arrow.Array
	defer func() {
		for i := range vals {
			vals[i].Release()
			rows[i].Release()
		}
	}()
	for {
		b, err := op.Next(ec.Ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		vals = append(vals, b.Column(0))
		rows = append(rows, b.Column(1))
		b.Column(0).Retain()
		b.Column(1).Retain()
		b.Release()
	}
	if len(vals) == 0 {
		return array.MakeArrayOfNull(ec.Mem, s.typ, 0), array.MakeArrayOfNull(ec.Mem, arrow.PrimitiveTypes.Int32, 0), nil
	}
	v, err := array.Concatenate(vals, ec.Mem)
	if err != nil {
		return nil, nil, err
	}
	r, err := array.Concatenate(rows, ec.Mem)
	if err != nil {
		v.Release()
		return nil, nil, err
	}
	return v, r, nil
}

// keptOnce is n run on first use and its rows kept for every later use,
// for the lifetime of the statement (a clauseSubplan builds its operators
// once per batch). The kept rows hold the statement's memory budget;
// when it has no room for them they are used once and n runs again next
// time, as rewrite's Once does.
func (b *binder) keptOnce(n Node) Node {
	all := n.Columns()
	src := &SourceScan{Name: "kept " + n.String(), Cols: append([]Column(nil), all...)}
	var rows []arrow.RecordBatch
	var schema *arrow.Schema
	done := false
	src.Open = func() (exec.Operator, error) {
		if !done {
			op, err := b.physical(n)
			if err != nil {
				return nil, err
			}
			schema = op.Schema()
			if rows, err = exec.Drain(b.ctx, op); err != nil {
				return nil, err
			}
			var size int64
			for _, r := range rows {
				size += exec.BatchBytes(r)
			}
			done = b.opts.Budget == nil || b.opts.Budget.Reserve(size, "a MERGE clause subquery's rows, kept for every batch") == nil
			if !done {
				defer func() {
					releaseAll(rows)
					rows = nil
				}()
			}
		}
		// the columns the scan still has (pruning may drop some), by id
		pos := make(map[ColumnID]int, len(all))
		for i, c := range all {
			pos[c.ID] = i
		}
		idx := make([]int, len(src.Cols))
		fields := make([]arrow.Field, len(src.Cols))
		for i, c := range src.Cols {
			idx[i] = pos[c.ID]
			fields[i] = schema.Field(idx[i])
		}
		out := arrow.NewSchema(fields, nil)
		batches := make([]arrow.RecordBatch, len(rows))
		for k, r := range rows {
			cols := make([]arrow.Array, len(idx))
			for i, j := range idx {
				cols[i] = r.Column(j)
			}
			batches[k] = array.NewRecordBatch(out, cols, r.NumRows())
		}
		defer func() {
			for _, r := range batches {
				r.Release()
			}
		}()
		return exec.NewValues(out, batches)
	}
	return src
}

// writeSubplans renders the binder's MERGE clause subplans for EXPLAIN.
func writeSubplans(sb *strings.Builder, b *binder, indent string) {
	for _, s := range b.subplans {
		fmt.Fprintf(sb, "%s%s (a clause's subqueries, run on each batch of joined rows):\n", indent, s)
		for _, l := range strings.Split(strings.TrimRight(explainLogical(s.node), "\n"), "\n") {
			sb.WriteString(indent + "  " + l + "\n")
		}
	}
}
