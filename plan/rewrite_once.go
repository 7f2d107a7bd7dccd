package plan

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/exec"
)

// Once is a part of a DELETE's or UPDATE's per-file plan that does not
// read the file: an IN or EXISTS subquery, a USING table, a decorrelated
// scalar subquery. The rewrite runs once per data file (see Rewrite), and
// without Once every file would run the subquery again: a full_merge's
// DELETE … WHERE key IN (SELECT key FROM (source EXCEPT target)) would
// scan the whole target once per target file, and a subquery over a
// registered reader, which can be read once, would fail on the second
// file. Once runs its input for the first file and hands the rows to the
// others from memory. A MERGE clause's subplan, which runs per batch of
// merged rows, keeps the hash sides of its joins the same way (Per
// "batch").
//
// INVARIANT: Input does not reference the rewrite's per-file source (the
// subplan's merged rows).
type Once struct {
	Input Node
	// Per names what the input would otherwise run for each of; "" is
	// "data file".
	Per string
	// rows are the input's rows once computed; nil before.
	rows   []arrow.RecordBatch
	schema *arrow.Schema
	done   bool
	// reserved is what rows hold of the budget.
	reserved int64
	budget   *exec.Budget
}

func (o *Once) Columns() []Column { return o.Input.Columns() }
func (o *Once) Children() []Node  { return []Node{o.Input} }
func (o *Once) String() string {
	return "Once (computed for the first " + o.per() + ", kept in memory for the others)"
}

func (o *Once) per() string {
	if o.Per == "" {
		return "data file"
	}
	return o.Per
}

// operator returns the rows of o's input, running it on the first call.
// When the rows do not fit the memory budget they are used once and not
// kept: every later call runs the input again.
func (o *Once) operator(b *binder) (exec.Operator, error) {
	if o.done {
		return exec.NewValues(o.schema, o.rows)
	}
	op, err := b.build(o.Input)
	if err != nil {
		return nil, err
	}
	schema := op.Schema()
	rows, err := exec.Drain(b.ctx, op)
	if err != nil {
		return nil, err
	}
	var n int64
	for _, r := range rows {
		n += exec.BatchBytes(r)
	}
	out, err := exec.NewValues(schema, rows)
	if err != nil {
		releaseAll(rows)
		return nil, err
	}
	if b.opts.Budget != nil && b.opts.Budget.Reserve(n, "a subquery's rows, kept for every "+o.per()) != nil {
		releaseAll(rows) // out holds its own references
		return out, nil
	}
	o.rows, o.schema, o.done, o.reserved, o.budget = rows, schema, true, n, b.opts.Budget
	return out, nil
}

// release frees the kept rows.
func (o *Once) release() {
	releaseAll(o.rows)
	o.rows = nil
	if o.budget != nil {
		o.budget.Release(o.reserved)
		o.budget, o.reserved = nil, 0
	}
}

func releaseAll(rows []arrow.RecordBatch) {
	for _, r := range rows {
		r.Release()
	}
}

// onceSubtrees wraps in Once every input of a join or set operation that
// neither contains src, the rewrite's per-file source, nor references its
// columns, nor reads a dependent join's outer rows (DelimScan), and
// returns the Once nodes.
func onceSubtrees(n Node, src Node) []*Once {
	if !contains(n, src) {
		return nil // src was replaced: nothing is known to be independent
	}
	srcCols := idSet(src.Columns())
	var out []*Once
	var walk func(Node)
	walk = func(n Node) {
		switch x := n.(type) {
		case *Join, *SetOp:
			setChildren(x, func(c Node) Node {
				// a DelimScan reads the outer rows of its dependent
				// join, which come from src: such a subtree differs
				// per file
				if contains(c, src) || refsAnyCol(freeCols(c), srcCols) || containsDelimScan(c) {
					walk(c)
					return c
				}
				o := &Once{Input: c}
				out = append(out, o)
				return o
			})
		case *Once:
		default:
			for _, c := range n.Children() {
				walk(c)
			}
		}
	}
	walk(n)
	return out
}

func containsDelimScan(n Node) bool {
	if _, ok := n.(*DelimScan); ok {
		return true
	}
	for _, c := range n.Children() {
		if containsDelimScan(c) {
			return true
		}
	}
	return false
}

func refsAnyCol(cols, set map[ColumnID]bool) bool {
	for c := range cols {
		if set[c] {
			return true
		}
	}
	return false
}

// contains reports whether target is n or one of its descendants.
func contains(n, target Node) bool {
	if n == target {
		return true
	}
	for _, c := range n.Children() {
		if contains(c, target) {
			return true
		}
	}
	return false
}

// Release frees what the rewrite kept across data files (the rows of its
// subqueries). Call it when the statement is done.
func (r *Rewrite) Release() {
	for _, o := range r.once {
		o.release()
	}
	r.once = nil
}
