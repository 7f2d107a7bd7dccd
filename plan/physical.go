package plan

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/skadedb/skade/exec"
)

// Options configure physical planning.
type Options struct {
	// Budget bounds join build sides, aggregate state and sort buffers.
	Budget *exec.Budget
	// SpillDir is where sorts and aggregates spill; "" is the system temp dir.
	SpillDir string
	// Mem allocates batches; nil is the default allocator.
	Mem memory.Allocator
	// ParallelScans splits a scan chain (Filters and Projects over a table
	// scan) into one copy per core under an Exchange. Off by default: it
	// measured slower at 10M rows (BENCHMARKS.md), since iceberg-go already
	// reads a scan's files concurrently.
	ParallelScans bool
}

// physical optimizes n and builds its operator tree.
func (b *binder) physical(n Node) (exec.Operator, error) {
	if err := b.foldInits(n); err != nil {
		return nil, err
	}
	n = optimize(b, n)
	return b.build(n)
}

func (b *binder) hashOpts() exec.HashOptions {
	return exec.HashOptions{Mem: b.opts.Mem, Budget: b.opts.Budget, Now: b.now, SpillDir: b.opts.SpillDir}
}

func schemaOf(cols []Column) *arrow.Schema {
	fs := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fs[i] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: true}
	}
	return arrow.NewSchema(fs, nil)
}

func compileAll(es []Expr, l *layout) ([]exec.Expr, error) {
	out := make([]exec.Expr, len(es))
	for i, e := range es {
		c, err := compile(e, l)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

func (b *binder) sortKeys(keys []SortKey, l *layout) ([]exec.SortKey, error) {
	out := make([]exec.SortKey, len(keys))
	for i, k := range keys {
		e, err := compile(k.Expr, l)
		if err != nil {
			return nil, err
		}
		out[i] = exec.SortKey{Expr: e, Descending: k.Desc, NullsFirst: k.NullsFirst}
	}
	return out, nil
}

// scanFields are the Iceberg names and Arrow schema a Scan reads.
func scanFields(n *Scan) ([]string, *arrow.Schema) {
	fields := make([]string, len(n.Cols))
	fs := make([]arrow.Field, len(n.Cols))
	for i, c := range n.Cols {
		for j, a := range n.All {
			if a.ID == c.ID {
				fields[i] = n.Fields[j]
			}
		}
		fs[i] = arrow.Field{Name: fields[i], Type: c.Type, Nullable: true}
	}
	return fields, arrow.NewSchema(fs, nil)
}

// build makes the operator for n. INVARIANT: it outputs n.Columns().
func (b *binder) build(n Node) (exec.Operator, error) {
	if op, ok, err := b.parallel(n); ok || err != nil {
		return op, err
	}
	return b.buildSerial(n)
}

// buildSerial is build without splitting scans.
func (b *binder) buildSerial(n Node) (exec.Operator, error) {
	switch n := n.(type) {
	case *Scan:
		fields, schema := scanFields(n)
		var ts *exec.TableScan
		var err error
		if b.split != nil {
			ts, err = exec.NewFileScan(n.Table.Name, n.Table.Table, n.Snap, fields, schema, n.Pushed, b.split)
		} else {
			ts, err = exec.NewTableScan(n.Table.Name, n.Table.Table, n.Snap, fields, schema, n.Pushed)
		}
		if err != nil {
			return nil, err
		}
		ts.SetCountOnly(n.CountOnly)
		if n.ExactPushed == nil {
			return ts, nil
		}
		// the columns the exact filter tests that the scan does not return
		var only []string
		for _, c := range n.Exact {
			used := map[ColumnID]bool{}
			exprCols(c, used)
			for i, a := range n.All {
				if used[a.ID] && !slices.Contains(fields, n.Fields[i]) && !slices.Contains(only, n.Fields[i]) {
					only = append(only, n.Fields[i])
				}
			}
		}
		ts.SetExact(n.ExactPushed, only)
		return ts, nil
	case *SourceScan:
		op, err := n.Open()
		if err != nil {
			return nil, err
		}
		if op.Schema().NumFields() != len(n.Cols) {
			op.Close()
			return nil, fmt.Errorf("source %s: its schema changed since the statement was bound", n.Name)
		}
		return op, nil
	case *MetadataAnswer:
		return b.valuesOp([][]Expr{n.Row}, n.Cols)
	case *DelimScan:
		if n.state == nil {
			return nil, fmt.Errorf("plan: a DelimScan outside its dependent join (planner bug)")
		}
		return exec.NewDelimScan(n.state), nil
	case *Unnest:
		in, err := b.build(n.Input)
		if err != nil {
			return nil, err
		}
		args, err := compileAll(n.Args, layoutOf(n.Input.Columns()))
		if err != nil {
			in.Close()
			return nil, err
		}
		names := []string{n.Col.Name}
		for _, c := range n.More {
			names = append(names, c.Name)
		}
		op, err := exec.NewUnnest(in, n.Func, args, names, n.Ord != nil, n.Outer, b.hashOpts())
		if err != nil {
			in.Close()
			return nil, err
		}
		return op, nil
	case *Once:
		return n.operator(b)
	case *OneRow:
		return b.oneRow()
	case *RecursiveCTE:
		return b.buildRecursive(n)
	case *Values:
		return b.valuesOp(n.Rows, n.Cols)
	case *Filter:
		in, err := b.buildChainInput(n.Input)
		if err != nil {
			return nil, err
		}
		pred, err := compile(n.Pred, layoutOf(n.Input.Columns()))
		if err != nil {
			in.Close()
			return nil, err
		}
		f, err := exec.NewFilter(in, pred, b.opts.Mem)
		if err != nil {
			in.Close()
			return nil, err
		}
		f.SetNow(b.now)
		return f, nil
	case *Project:
		in, err := b.buildChainInput(n.Input)
		if err != nil {
			return nil, err
		}
		return b.projectOver(n, in)
	case *Join:
		return b.buildJoin(n)
	case *Aggregate:
		in, err := b.build(n.Input)
		if err != nil {
			return nil, err
		}
		if col := dictGroupColumn(n); col != "" {
			askDictionary(in, col)
		}
		l := layoutOf(n.Input.Columns())
		groups, err := compileAll(n.GroupBy, l)
		if err != nil {
			in.Close()
			return nil, err
		}
		aggs := make([]*exec.Aggregate, len(n.Aggs))
		for i, a := range n.Aggs {
			args, err := compileAll(a.Args, l)
			if err != nil {
				in.Close()
				return nil, err
			}
			var filter exec.Expr
			if a.Filter != nil {
				if filter, err = compile(a.Filter, l); err != nil {
					in.Close()
					return nil, err
				}
			}
			keys, err := b.sortKeys(a.OrderBy, l)
			if err != nil {
				in.Close()
				return nil, err
			}
			if aggs[i], err = exec.NewAggregate(a.Name, args, a.Distinct, filter, keys); err != nil {
				in.Close()
				return nil, err
			}
		}
		op, err := exec.NewHashAggregate(in, groups, aggs, b.hashOpts())
		if err != nil {
			in.Close()
			return nil, err
		}
		if keys, cols := codedGroupKeys(n); len(keys) > 0 {
			if err := op.SetCodedKeys(keys); err != nil {
				op.Close()
				return nil, err
			}
			askDictionary(in, cols...)
		}
		if col, id := dictDistinctColumn(n); col != "" {
			if i, ok := l.pos[id]; ok {
				askDictionary(in, col)
				op.SetDictDistinct(i)
			}
		}
		return op, nil
	case *Window:
		in, err := b.build(n.Input)
		if err != nil {
			return nil, err
		}
		l := layoutOf(n.Input.Columns())
		funcs := make([]*exec.WindowFunc, len(n.Funcs))
		names := make([]string, len(n.Funcs))
		for i, f := range n.Funcs {
			args, err := compileAll(f.Args, l)
			if err != nil {
				in.Close()
				return nil, err
			}
			part, err := compileAll(f.PartitionBy, l)
			if err != nil {
				in.Close()
				return nil, err
			}
			keys, err := b.sortKeys(f.OrderBy, l)
			if err != nil {
				in.Close()
				return nil, err
			}
			if funcs[i], err = exec.NewWindowFunc(f.Name, args, part, keys, f.Frame); err != nil {
				in.Close()
				return nil, err
			}
			names[i] = f.Col.Name
		}
		op, err := exec.NewWindow(in, funcs, names, exec.WindowOptions{Budget: b.opts.Budget, Mem: b.opts.Mem})
		if err != nil {
			in.Close()
		}
		return op, err
	case *Sort:
		return b.buildSort(n, 0, 0)
	case *Limit:
		if s, ok := n.Input.(*Sort); ok && n.Limit > 0 {
			return b.buildSort(s, n.Limit, n.Offset)
		}
		// a Limit over Projects over a Sort (ORDER BY a column the query
		// does not return): the Projects, one row out per row in, go over
		// the top-N
		var projs []*Project
		under := n.Input
		for p, ok := under.(*Project); ok; p, ok = under.(*Project) {
			projs = append(projs, p)
			under = p.Input
		}
		if s, ok := under.(*Sort); ok && n.Limit > 0 && len(projs) > 0 {
			op, err := b.buildSort(s, n.Limit, n.Offset)
			for i := len(projs) - 1; i >= 0 && err == nil; i-- {
				op, err = b.projectOver(projs[i], op)
			}
			return op, err
		}
		in, err := b.build(n.Input)
		if err != nil {
			return nil, err
		}
		op, err := exec.NewLimit(in, n.Limit, n.Offset)
		if err != nil {
			in.Close()
		}
		return op, err
	case *Distinct:
		in, err := b.build(n.Input)
		if err != nil {
			return nil, err
		}
		op, err := exec.NewDistinct(in, b.hashOpts())
		if err != nil {
			in.Close()
		}
		return op, err
	case *SetOp:
		l, err := b.build(n.Left)
		if err != nil {
			return nil, err
		}
		r, err := b.build(n.Right)
		if err != nil {
			l.Close()
			return nil, err
		}
		var op exec.Operator
		if n.Op == "union" && n.All {
			op, err = exec.NewUnionAll(l, r)
		} else {
			var kind exec.SetOpKind
			kind, err = setOpKind(n.Op, n.All)
			if err == nil {
				op, err = exec.NewSetOp(kind, l, r, b.hashOpts())
			}
		}
		if err != nil {
			l.Close()
			r.Close()
			return nil, err
		}
		return op, nil
	}
	return nil, fmt.Errorf("plan: no operator for %T (planner bug)", n)
}

// projectOver builds Project n over its input built as in (closed on
// failure).
func (b *binder) projectOver(n *Project, in exec.Operator) (exec.Operator, error) {
	exprs, err := compileAll(n.Exprs, layoutOf(n.Input.Columns()))
	if err != nil {
		in.Close()
		return nil, err
	}
	names := make([]string, len(n.Cols))
	for i, c := range n.Cols {
		names[i] = c.Name
	}
	p, err := exec.NewProject(in, exprs, names, b.opts.Mem)
	if err != nil {
		in.Close()
		return nil, err
	}
	p.SetNow(b.now)
	return p, nil
}

func (b *binder) buildSort(s *Sort, limit, offset int64) (exec.Operator, error) {
	in, err := b.build(s.Input)
	if err != nil {
		return nil, err
	}
	keys, err := b.sortKeys(s.Keys, layoutOf(s.Input.Columns()))
	if err != nil {
		in.Close()
		return nil, err
	}
	op, err := exec.NewSort(in, keys, exec.SortOptions{Limit: limit, Offset: offset, Budget: b.opts.Budget, SpillDir: b.opts.SpillDir, Mem: b.opts.Mem})
	if err != nil {
		in.Close()
		return nil, err
	}
	if limit > 0 {
		setTopBound(op, in, keys[0].Expr)
	}
	return op, nil
}

func (b *binder) oneRow() (exec.Operator, error) {
	batch := oneRowBatch()
	defer batch.Release()
	return exec.NewValues(oneRowSchema, []arrow.RecordBatch{batch})
}

// valuesOp evaluates VALUES rows, one projection of a one-row input per
// row, as a union.
func (b *binder) valuesOp(rows [][]Expr, cols []Column) (exec.Operator, error) {
	schema := schemaOf(cols)
	if len(rows) == 0 {
		return exec.NewValues(schema, nil)
	}
	// constant rows are evaluated now into one batch
	allConst := true
	for _, r := range rows {
		for _, e := range r {
			if _, ok := e.(*Const); !ok {
				allConst = false
			}
		}
	}
	if allConst {
		mem := b.opts.Mem
		if mem == nil {
			mem = memory.DefaultAllocator
		}
		arrs := make([]arrow.Array, len(cols))
		for j, c := range cols {
			parts := make([]arrow.Array, len(rows))
			for i, r := range rows {
				lit := r[j].(*Const).Lit
				var err error
				if !lit.Value.IsValid() {
					parts[i] = array.MakeArrayOfNull(mem, c.Type, 1)
				} else if parts[i], err = constArray(lit.Value, mem); err != nil {
					return nil, err
				}
			}
			cat, err := array.Concatenate(parts, mem)
			for _, p := range parts {
				p.Release()
			}
			if err != nil {
				return nil, err
			}
			arrs[j] = cat
			defer cat.Release()
		}
		batch := array.NewRecordBatch(schema, arrs, int64(len(rows)))
		defer batch.Release()
		return exec.NewValues(schema, []arrow.RecordBatch{batch})
	}
	var inputs []exec.Operator
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	for _, r := range rows {
		one, err := b.oneRow()
		if err != nil {
			return nil, err
		}
		exprs, err := compileAll(r, layoutOf(nil))
		if err != nil {
			return nil, err
		}
		p, err := exec.NewProject(one, exprs, names, b.opts.Mem)
		if err != nil {
			return nil, err
		}
		p.SetNow(b.now)
		inputs = append(inputs, p)
	}
	if len(inputs) == 1 {
		return inputs[0], nil
	}
	return exec.NewUnionAll(inputs...)
}

func setOpKind(op string, all bool) (exec.SetOpKind, error) {
	switch {
	case op == "union" && !all:
		return exec.SetUnion, nil
	case op == "except" && !all:
		return exec.SetExcept, nil
	case op == "except":
		return exec.SetExceptAll, nil
	case op == "intersect" && !all:
		return exec.SetIntersect, nil
	case op == "intersect":
		return exec.SetIntersectAll, nil
	}
	return 0, fmt.Errorf("plan: set operation %s all=%v (planner bug)", op, all)
}

// buildDelimJoin builds a dependent join: the right side's DelimScans
// read the distinct outer keys the join computes.
func (b *binder) buildDelimJoin(j *Join) (exec.Operator, error) {
	conj := conjuncts(j.On)
	if len(conj) != j.Delim.N {
		return nil, fmt.Errorf("plan: a dependent join with %d conditions for %d keys (planner bug)", len(conj), j.Delim.N)
	}
	lcols, rcols := j.Left.Columns(), j.Right.Columns()
	var lk, rk []Expr
	for _, c := range conj {
		f, ok := c.(*Func)
		if !ok || f.Name != "is_not_distinct_from" || len(f.Args) != 2 {
			return nil, fmt.Errorf("plan: dependent join condition %s (planner bug)", c)
		}
		lk, rk = append(lk, f.Args[0]), append(rk, f.Args[1])
	}
	names := make([]string, len(lk))
	types := make([]arrow.DataType, len(lk))
	for i, k := range lk {
		names[i], types[i] = fmt.Sprintf("delim%d", i+1), k.Type()
	}
	state := exec.NewDelimState(names, types)
	for _, s := range j.Delim.Scans {
		s.state = state
	}
	left, err := b.build(j.Left)
	if err != nil {
		return nil, err
	}
	right, err := b.build(j.Right)
	if err != nil {
		left.Close()
		return nil, err
	}
	fail := func(err error) (exec.Operator, error) {
		left.Close()
		right.Close()
		return nil, err
	}
	lx, err := compileAll(lk, layoutOf(lcols))
	if err != nil {
		return fail(err)
	}
	rx, err := compileAll(rk, layoutOf(rcols))
	if err != nil {
		return fail(err)
	}
	var res exec.Expr
	if j.Residual != nil {
		if res, err = compile(j.Residual, layoutOf(append(append([]Column(nil), lcols...), rcols...))); err != nil {
			return fail(err)
		}
	}
	op, err := exec.NewDelimJoin(j.Kind, left, right, lx, rx, res, state, b.hashOpts())
	if err != nil {
		return fail(err)
	}
	return op, nil
}

// buildJoin splits ON into equi keys (one side each) and a residual.
func (b *binder) buildJoin(j *Join) (exec.Operator, error) {
	if j.Delim != nil {
		return b.buildDelimJoin(j)
	}
	lcols, rcols := j.Left.Columns(), j.Right.Columns()
	lset, rset := map[ColumnID]bool{}, map[ColumnID]bool{}
	for _, c := range lcols {
		lset[c.ID] = true
	}
	for _, c := range rcols {
		rset[c.ID] = true
	}
	var lkeys, rkeys []Expr
	var residual []Expr
	if j.On != nil {
		for _, c := range conjuncts(j.On) {
			if f, ok := c.(*Func); ok && f.Name == "=" && len(f.Args) == 2 {
				a, bb := f.Args[0], f.Args[1]
				if refsOnly(a, lset) && refsOnly(bb, rset) && !isConst(a) && !isConst(bb) {
					lkeys, rkeys = append(lkeys, a), append(rkeys, bb)
					continue
				}
				if refsOnly(a, rset) && refsOnly(bb, lset) && !isConst(a) && !isConst(bb) {
					lkeys, rkeys = append(lkeys, bb), append(rkeys, a)
					continue
				}
			}
			residual = append(residual, c)
		}
	}
	if j.Residual != nil {
		if j.Kind == exec.JoinMark || j.Kind == exec.JoinNullAwareAnti {
			// ON holds the correlation, which selects the candidate rows
			// in two-valued logic (a NULL selects none, as a NULL hash
			// key does); only the residual, the IN comparison, is three-
			// valued: a NULL there makes the mark NULL
			for i, c := range residual {
				x, err := b.call(parserPos, "is_true", c)
				if err != nil {
					return nil, err
				}
				residual[i] = x
			}
		}
		residual = append(residual, conjuncts(j.Residual)...)
	}
	left, err := b.build(j.Left)
	if err != nil {
		return nil, err
	}
	right, err := b.build(j.Right)
	if err != nil {
		left.Close()
		return nil, err
	}
	fail := func(err error) (exec.Operator, error) {
		left.Close()
		right.Close()
		return nil, err
	}
	both := layoutOf(append(append([]Column(nil), lcols...), rcols...))
	var res exec.Expr
	if len(residual) > 0 {
		if res, err = compile(andConj(residual), both); err != nil {
			return fail(err)
		}
	}
	opts := b.hashOpts()
	if len(lkeys) == 0 {
		if (j.Kind == exec.JoinMark || j.Kind == exec.JoinNullAwareAnti) && res == nil {
			return fail(fmt.Errorf("plan: %s join without a condition (planner bug)", j.Kind))
		}
		if j.Kind == exec.JoinMark || j.Kind == exec.JoinNullAwareAnti {
			opts.BuildLeft = false // the predicate is checked against every row of the right
		}
		if res == nil {
			t, _ := exec.NewLiteral(true)
			res = t
		}
		op, err := exec.NewNestedLoopJoin(j.Kind, left, right, res, opts)
		if err != nil {
			return fail(err)
		}
		return op, nil
	}
	ll, rl := layoutOf(lcols), layoutOf(rcols)
	lk := make([]exec.Expr, len(lkeys))
	rk := make([]exec.Expr, len(rkeys))
	for i := range lkeys {
		t, err := exec.CommonType(lkeys[i].Type(), rkeys[i].Type())
		if err != nil {
			return fail(err)
		}
		if lk[i], err = compile(lkeys[i], ll); err != nil {
			return fail(err)
		}
		if rk[i], err = compile(rkeys[i], rl); err != nil {
			return fail(err)
		}
		if lk[i], err = exec.Coerce(lk[i], t); err != nil {
			return fail(err)
		}
		if rk[i], err = exec.Coerce(rk[i], t); err != nil {
			return fail(err)
		}
	}
	if j.Kind <= exec.JoinFull && estimateRows(j.Left) >= 0 && estimateRows(j.Left) < estimateRows(j.Right) {
		opts.BuildLeft = true // the smaller side builds
	}
	op, err := exec.NewHashJoin(j.Kind, left, right, lk, rk, res, opts)
	if err != nil {
		return fail(err)
	}
	return op, nil
}

func isConst(e Expr) bool {
	_, ok := e.(*Const)
	return ok
}

// estimateRows guesses a node's output rows from table statistics; -1
// when unknown.
func estimateRows(n Node) int64 {
	switch n := n.(type) {
	case *Scan:
		if n.Snap == nil {
			return 0
		}
		if n.Snap.Summary != nil {
			if v, err := strconv.ParseInt(n.Snap.Summary.Properties["total-records"], 10, 64); err == nil {
				if len(n.Filters) > 0 {
					return v / 4
				}
				return v
			}
		}
		return -1
	case *Values:
		return int64(len(n.Rows))
	case *OneRow, *MetadataAnswer:
		return 1
	case *Filter:
		e := estimateRows(n.Input)
		if e > 0 {
			return e / 2
		}
		return e
	case *Limit:
		e := estimateRows(n.Input)
		if n.Limit >= 0 && (e < 0 || n.Limit < e) {
			return n.Limit
		}
		return e
	case *Aggregate:
		if len(n.GroupBy) == 0 {
			return 1
		}
		return estimateRows(n.Input)
	case *Join:
		l, r := estimateRows(n.Left), estimateRows(n.Right)
		if l < 0 || r < 0 {
			return -1
		}
		return max(l, r)
	}
	if len(n.Children()) == 1 {
		return estimateRows(n.Children()[0])
	}
	return -1
}

// constArray makes a one-element array of a scalar, extension types
// (UUID) included.
func constArray(v scalar.Scalar, mem memory.Allocator) (arrow.Array, error) {
	if ext, ok := v.(*scalar.Extension); ok {
		storage, err := scalar.MakeArrayFromScalar(ext.Value, 1, mem)
		if err != nil {
			return nil, err
		}
		defer storage.Release()
		return array.NewExtensionArrayWithStorage(ext.Type.(arrow.ExtensionType), storage), nil
	}
	return scalar.MakeArrayFromScalar(v, 1, mem)
}
