package plan

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/scan"
)

// keySet is a top-level `col IN (subquery)` condition of a DELETE or
// UPDATE whose subquery runs once (Once): a row can match only if its col
// lies between the least and the greatest key the subquery returns, so a
// data file whose statistics put col outside that range holds no match
// and is not read. This is the shape of the merge strategy's fallback
// (DELETE … WHERE key IN (SELECT key FROM (<query>))) and of full_merge's
// and scd's key tests: with keys that grow over time (order ids, event
// times) a run's slice touches only the newest files.
type keySet struct {
	field iceberg.NestedField
	once  *Once
	col   int // the key's column in once's rows
	// lo and hi are the key range once computed; empty when the
	// subquery returned no non-NULL key (no row can match).
	done, known, empty bool
	lo, hi             int64
}

// keySets finds the keySets of a rewrite: mark joins onto a Once whose
// mark is a top-level conjunct of pred and whose condition is one
// equality between an integer, date or timestamp column of the target and
// a column of the subquery.
func keySets(root Node, pred Expr, src *SourceScan, target *TableRef) []*keySet {
	top := map[ColumnID]bool{}
	for _, c := range conjuncts(pred) {
		if r, ok := c.(*ColRef); ok {
			top[r.ID] = true
		}
	}
	if len(top) == 0 {
		return nil
	}
	schema := target.Table.Metadata().CurrentSchema()
	var out []*keySet
	var walk func(Node)
	walk = func(n Node) {
		if j, ok := n.(*Join); ok && j.Kind == exec.JoinMark && j.Mark != nil && top[j.Mark.ID] && j.Residual == nil {
			if k := keySetOf(j, src, schema); k != nil {
				out = append(out, k)
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(root)
	return out
}

func keySetOf(j *Join, src *SourceScan, schema *iceberg.Schema) *keySet {
	once, ok := j.Right.(*Once)
	if !ok {
		return nil
	}
	eq, ok := j.On.(*Func)
	if !ok || eq.Name != "=" || len(eq.Args) != 2 {
		return nil
	}
	l, r := intCol(eq.Args[0]), intCol(eq.Args[1])
	if l == nil || r == nil {
		return nil
	}
	if !idSet(src.Cols)[l.ID] {
		l, r = r, l
	}
	var srcCol *Column
	for i := range src.Cols {
		if src.Cols[i].ID == l.ID {
			srcCol = &src.Cols[i]
		}
	}
	col := -1
	for i, c := range once.Columns() {
		if c.ID == r.ID {
			col = i
		}
	}
	if srcCol == nil || col < 0 {
		return nil
	}
	f, ok := schema.FindFieldByName(srcCol.Name)
	if !ok {
		return nil
	}
	switch f.Type.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType:
	default:
		return nil
	}
	return &keySet{field: f, once: once, col: col}
}

// intCol is the column e reads, through a cast between integer types
// (which keeps order and value); nil for anything else.
func intCol(e Expr) *ColRef {
	if f, ok := e.(*Func); ok && (f.Name == "cast" || f.Name == "coerce") && len(f.Args) == 1 && isIntType(f.Typ) && isIntType(f.Args[0].Type()) {
		e = f.Args[0]
	}
	c, _ := e.(*ColRef)
	return c
}

func isIntType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return true
	}
	return false
}

// compute runs the subquery (once; the rows stay for the rewrite) and
// reads its key range. known is false when the rows could not be kept.
func (k *keySet) compute(b *binder) error {
	if k.done {
		return nil
	}
	k.done = true
	op, err := k.once.operator(b)
	if err != nil {
		return err
	}
	op.Close()
	if !k.once.done {
		return nil // over the memory budget: not kept, no range
	}
	k.known, k.empty = true, true
	for _, rec := range k.once.rows {
		col := rec.Column(k.col)
		for i := 0; i < col.Len(); i++ {
			if col.IsNull(i) {
				continue
			}
			v, ok := intValue(col, i)
			if !ok {
				k.known = false
				return nil
			}
			if k.empty || v < k.lo {
				k.lo = v
			}
			if k.empty || v > k.hi {
				k.hi = v
			}
			k.empty = false
		}
	}
	return nil
}

func intValue(a arrow.Array, i int) (int64, bool) {
	switch c := a.(type) {
	case *array.Int8:
		return int64(c.Value(i)), true
	case *array.Int16:
		return int64(c.Value(i)), true
	case *array.Int32:
		return int64(c.Value(i)), true
	case *array.Int64:
		return c.Value(i), true
	case *array.Date32:
		return int64(c.Value(i)), true
	case *array.Timestamp:
		if c.DataType().(*arrow.TimestampType).Unit != arrow.Microsecond {
			return 0, false
		}
		return int64(c.Value(i)), true
	}
	return 0, false
}

// excludes reports whether df's statistics put every key outside the
// range (or the subquery returned no key at all).
func (k *keySet) excludes(df iceberg.DataFile) bool {
	if !k.known {
		return false
	}
	if k.empty {
		return true
	}
	if n, ok := df.NullValueCounts()[k.field.ID]; ok && n == df.Count() {
		return true // every key NULL: none is IN anything
	}
	lb, ok1 := df.LowerBoundValues()[k.field.ID]
	ub, ok2 := df.UpperBoundValues()[k.field.ID]
	if !ok1 || !ok2 {
		return false
	}
	lo, err1 := boundLiteral(k.field.Type, lb)
	hi, err2 := boundLiteral(k.field.Type, ub)
	if err1 != nil || err2 != nil {
		return false
	}
	l, ok1 := scan.LiteralInt(lo)
	h, ok2 := scan.LiteralInt(hi)
	if !ok1 || !ok2 {
		return false
	}
	return h < k.lo || l > k.hi
}

// Excludes reports whether the statement's `key IN (subquery)` conditions
// prove that no row of df matches, by the subquery's key range and df's
// statistics; it runs the subquery (once) to know. A file it excludes
// need not be read.
func (r *Rewrite) Excludes(df iceberg.DataFile) (bool, error) {
	for _, k := range r.keys {
		if err := k.compute(r.b); err != nil {
			return false, err
		}
		if k.excludes(df) {
			return true, nil
		}
	}
	return false, nil
}
