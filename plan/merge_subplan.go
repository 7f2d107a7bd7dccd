package plan

import (
	"fmt"
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
//     target, and the clause reads the columns they add (takeMarks in merge.go);
//   - one that reads the target row (a MERGE joins target and source
//     rows itself, in mergeinto) is a clauseSubplan: for each batch of
//     joined rows the clause is evaluated on, its joins run over that
//     batch, as a dependent join runs over its outer rows. A join's
//     side that reads nothing of those rows runs once (Once).

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
	feed.Cols = append(feed.Cols, row)
	feed.Open = s.openFeed
	s.feed = feed
	for _, m := range marks {
		// a join's right side that reads nothing of the rows (the hash
		// side of a decorrelated subquery: its own tables, grouped) is
		// the same for every batch: run it once
		if len(freeCols(m.Right)) == 0 && !containsDelimScan(m.Right) {
			// (its init plans folded and optimized now, as physical
			// would: the optimizer does not look inside a Once)
			if !explain {
				if err := b.foldInits(m.Right); err != nil {
					return nil, err
				}
			}
			m.Right = &Once{Input: optimize(b, m.Right), Per: "batch"}
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

// openFeed yields the batch being evaluated, numbered: its first
// len(at) columns (the joined ones the subplan was bound over; later
// clauses may have added source columns after them) and the row number.
func (s *clauseSubplan) openFeed() (exec.Operator, error) {
	n := len(s.at)
	if int(s.cur.NumCols()) < n {
		return nil, fmt.Errorf("plan: %s reads %d columns of merged rows that have %d (planner bug)", s, n, s.cur.NumCols())
	}
	cols := append(append([]arrow.Array(nil), s.cur.Columns()[:n]...), s.rows)
	fields := make([]arrow.Field, len(cols))
	for i, c := range s.feed.Cols {
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
	defer rb.Release()
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
	batches, err := exec.Drain(ec.Ctx, op)
	if err != nil {
		return nil, nil, err
	}
	defer releaseAll(batches)
	var vals, rows []arrow.Array
	for _, b := range batches {
		vals, rows = append(vals, b.Column(0)), append(rows, b.Column(1))
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

// writeSubplans renders the binder's MERGE clause subplans for EXPLAIN.
func writeSubplans(sb *strings.Builder, b *binder, indent string) {
	for _, s := range b.subplans {
		fmt.Fprintf(sb, "%s%s (a clause's subqueries, run on each batch of joined rows):\n", indent, s)
		for _, l := range strings.Split(strings.TrimRight(explainLogical(s.node), "\n"), "\n") {
			sb.WriteString(indent + "  " + l + "\n")
		}
	}
}
