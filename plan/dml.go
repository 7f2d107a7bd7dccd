package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/parser"
)

// TargetColumn is one column of a write target.
type TargetColumn struct {
	Name     string
	Type     arrow.DataType
	Required bool
	// Default is the column's DEFAULT as SQL text, "" for none.
	Default string
}

// TargetColumns lists a table's current columns with canonical types.
func TargetColumns(ref *TableRef) ([]TargetColumn, error) {
	isch := ref.Table.Metadata().CurrentSchema()
	asch, err := table.SchemaToArrowSchema(isch, nil, false, false)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", ref.Name, err)
	}
	out := make([]TargetColumn, len(asch.Fields()))
	props := ref.Table.Metadata().Properties()
	for i, f := range asch.Fields() {
		out[i] = TargetColumn{Name: f.Name, Type: canonical(f.Type), Required: isch.Fields()[i].Required, Default: columnDefault(props, f.Name)}
	}
	return out, nil
}

// CanonicalType is the type the engine computes on for a column of Arrow
// type dt read from an Iceberg schema (DESCRIBE of a view).
func CanonicalType(dt arrow.DataType) arrow.DataType { return canonical(dt) }

// notNull fails a batch that holds a NULL: NOT NULL enforcement.
type notNull struct {
	arg        exec.Expr
	col, table string
}

func (n *notNull) DataType() arrow.DataType { return n.arg.DataType() }
func (n *notNull) Unwrap() exec.Expr        { return n.arg }
func (n *notNull) String() string           { return n.arg.String() }
func (n *notNull) Eval(ec *exec.EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	a, err := n.arg.Eval(ec, batch)
	if err != nil {
		return nil, err
	}
	if a.NullN() > 0 {
		a.Release()
		return nil, fmt.Errorf("null value in column %q of relation %q violates not-null constraint", n.col, n.table)
	}
	return a, nil
}

// assign converts e to a target column's type as an INSERT or UPDATE
// does: implicit casts, numeric-to-numeric and anything-to-text casts,
// and string constants to any type.
func (b *binder) assign(e Expr, col TargetColumn, tableName string, pos parser.Pos) (Expr, error) {
	to := col.Type
	var out Expr
	switch {
	case arrow.TypeEqual(e.Type(), to):
		out = e
	default:
		if x, err := b.coerce(e, to); err == nil {
			out = x
			break
		}
		from := e.Type()
		_, isConst := e.(*Const)
		// PostgreSQL's assignment casts: among numbers, to text, from a
		// quoted constant, and among date, timestamp and timestamptz
		// (in the session's time zone, UTC): the scd strategy sets a
		// TIMESTAMP column to now()
		if isNumericType(from) && isNumericType(to) || to.ID() == arrow.STRING || (isConst && from.ID() == arrow.STRING) ||
			isDateTimeType(from) && isDateTimeType(to) || nestedAssign(from, to) {
			x, err := b.newFunc("cast", []Expr{e}, func(a []exec.Expr) (exec.Expr, error) { return exec.NewCast(a[0], to, false) })
			if err != nil {
				return nil, errorf(pos, "column %q is of type %s: %v", col.Name, exec.TypeName(to), err)
			}
			out = x
			break
		}
		return nil, errorf(pos, "column %q is of type %s but expression is of type %s; rewrite or cast the expression", col.Name, exec.TypeName(to), exec.TypeName(from))
	}
	if !col.Required {
		return out, nil
	}
	// (a described statement's parameters bind as NULLs: no error yet)
	if c, ok := out.(*Const); ok && c.IsNull() && b.paramTypes == nil {
		return nil, errorf(pos, "null value in column %q of relation %q violates not-null constraint", col.Name, tableName)
	}
	name, tbl := col.Name, tableName
	return &Func{Name: "not_null", Args: []Expr{out}, Typ: out.Type(),
		build: func(a []exec.Expr) (exec.Expr, error) { return &notNull{arg: a[0], col: name, table: tbl}, nil }}, nil
}

func isDateTimeType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.DATE32, arrow.TIMESTAMP:
		return true
	}
	return false
}

func isNumericType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
		return true
	}
	return false
}

// Insert plans INSERT's source as rows of exactly the target's columns,
// in table order, with the target's types.
func (p *Planner) Insert(ctx context.Context, ins *parser.Insert, target *TableRef) (*Plan, error) {
	b := p.binder(ctx)
	cols, err := TargetColumns(target)
	if err != nil {
		return nil, err
	}
	// which target column each source column feeds
	var dest []int
	if len(ins.Columns) > 0 {
		seen := map[int]bool{}
		for _, c := range ins.Columns {
			idx := -1
			for i, tc := range cols {
				if sameName(c, tc.Name) {
					idx = i
				}
			}
			if idx < 0 {
				names := make([]string, len(cols))
				for i, tc := range cols {
					names[i] = tc.Name
				}
				return nil, errorf(c.Pos, "column %q of relation %q does not exist%s", c.Name, target.Name, didYouMean(c.Name, names))
			}
			if seen[idx] {
				return nil, errorf(c.Pos, "column %q specified more than once", c.Name)
			}
			seen[idx] = true
			dest = append(dest, idx)
		}
	}
	var src Node
	if ins.DefaultValues {
		src = &OneRow{}
	} else {
		q := ins.Source
		if ins.With != nil && q.With == nil {
			q = &parser.Query{Pos: q.Pos, With: ins.With, Body: q.Body, OrderBy: q.OrderBy, Limit: q.Limit, Offset: q.Offset}
		}
		if v, ok := q.Body.(*parser.Values); ok && q.With == nil && len(q.OrderBy) == 0 && q.Limit == nil && q.Offset == nil {
			src, err = b.insertValues(v, cols, dest, target.Name)
			if err != nil {
				return nil, err
			}
			return &Plan{b: b, Root: sortedForWrite(target.Table.Metadata(), src)}, nil
		}
		if src, err = b.bindQuery(q, nil); err != nil {
			return nil, err
		}
	}
	scols := src.Columns()
	if ins.ByName {
		dest = nil
		for _, sc := range scols {
			idx := -1
			for i, tc := range cols {
				if strings.EqualFold(sc.Name, tc.Name) {
					idx = i
				}
			}
			if idx < 0 {
				return nil, errorf(ins.Pos, "column %q of relation %q does not exist", sc.Name, target.Name)
			}
			dest = append(dest, idx)
		}
	}
	if dest == nil {
		if len(scols) > len(cols) {
			return nil, errorf(ins.Pos, "INSERT has more expressions than target columns")
		}
		for i := range scols {
			dest = append(dest, i)
		}
	}
	if len(scols) > len(dest) {
		return nil, errorf(ins.Pos, "INSERT has more expressions than target columns")
	}
	if len(scols) < len(dest) && !ins.DefaultValues {
		return nil, errorf(ins.Pos, "INSERT has more target columns than expressions")
	}
	proj := &Project{Input: src}
	for i, tc := range cols {
		e, err := b.defaultValue(tc)
		if err != nil {
			return nil, atPos(ins.Pos, err)
		}
		for k, d := range dest {
			if d == i && k < len(scols) {
				e = &ColRef{ID: scols[k].ID, Typ: scols[k].Type, Name: scols[k].Name}
			}
		}
		x, err := b.assign(e, tc, target.Name, ins.Pos)
		if err != nil {
			return nil, err
		}
		proj.Exprs = append(proj.Exprs, x)
		proj.Cols = append(proj.Cols, b.newCol(tc.Name, "", tc.Type, !tc.Required))
	}
	return &Plan{b: b, Root: sortedForWrite(target.Table.Metadata(), proj)}, nil
}

// sortedForWrite puts an INSERT's rows in the table's declared sort order
// (ALTER TABLE … WRITE ORDERED BY), so that the files it writes each hold
// a narrow range of the keys, whose statistics then prune scans, DELETEs
// and MERGEs. An identity key and an order-preserving transform (year,
// month, day, hour, truncate) sort by their source column, which orders
// by the transform as well; the keys end at the first one that does not
// preserve order (bucket, void), since what follows it could not narrow
// the files. The sort spills past the memory budget like any other.
func sortedForWrite(meta table.Metadata, root Node) Node {
	cols := root.Columns()
	var keys []SortKey
	for _, k := range mergeinto.WriteOrder(meta) {
		idx := -1
		for i, c := range cols {
			if c.Name == k.Column {
				idx = i
			}
		}
		if idx < 0 {
			break
		}
		c := cols[idx]
		keys = append(keys, SortKey{Expr: &ColRef{ID: c.ID, Typ: c.Type, Name: c.Name}, Desc: k.Desc, NullsFirst: k.NullsFirst})
	}
	if len(keys) == 0 {
		return root
	}
	return &Sort{Input: root, Keys: keys}
}

// insertValues binds INSERT … VALUES so that each value takes its target
// column's type directly (a quoted constant becomes a date, a number).
func (b *binder) insertValues(v *parser.Values, cols []TargetColumn, dest []int, tableName string) (Node, error) {
	if dest == nil {
		for i := range cols {
			dest = append(dest, i)
		}
	}
	sc := newScope(nil, nil)
	out := &Values{}
	for _, tc := range cols {
		out.Cols = append(out.Cols, b.newCol(tc.Name, "", tc.Type, !tc.Required))
	}
	for _, r := range v.Rows {
		if len(r) > len(dest) {
			return nil, errorf(v.Pos, "INSERT has more expressions than target columns")
		}
		if len(r) < len(dest) {
			return nil, errorf(v.Pos, "INSERT has more target columns than expressions")
		}
		row := make([]Expr, len(cols))
		for i, tc := range cols {
			d, err := b.defaultValue(tc)
			if err != nil {
				return nil, atPos(v.Pos, err)
			}
			row[i] = d
		}
		for k, e := range r {
			if _, isDef := e.(*parser.Default); isDef {
				continue
			}
			x, err := b.bindExpr(e, &exprCtx{sc: sc, clause: "VALUES"})
			if err != nil {
				return nil, err
			}
			row[dest[k]] = x
		}
		for i, tc := range cols {
			x, err := b.assign(row[i], tc, tableName, v.Pos)
			if err != nil {
				return nil, err
			}
			row[i] = x
		}
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

// Rewrite is the row-level part of a DELETE or UPDATE: for each row of a
// data file, whether the statement matches it and, for UPDATE, its new
// values.
type Rewrite struct {
	// Pushed prunes the files that cannot hold a matching row.
	Pushed iceberg.BooleanExpression
	// Columns are the target's columns in table order.
	Columns []TargetColumn
	b       *binder
	root    Node
	input   exec.Operator
	strict  []strictPred
	// every: there is no WHERE, so every row matches (AllMatch)
	every bool
	// inclusive are the conjuncts that exclude row groups by their
	// statistics (rowGroupFilter), ordered whether root keeps the
	// file's row order
	inclusive []strictPred
	ordered   bool
	// once are the parts of root that run for the first file only.
	once []*Once
	// keys are its `col IN (subquery)` conditions that exclude files.
	keys []*keySet
	// KeepsOld: after the target's columns come their stored values
	// again (an UPDATE whose RETURNING reads old.*).
	KeepsOld bool
	// Set are the target columns an UPDATE's SET assigns, ascending.
	Set []int
	// Lineage: the target keeps row lineage (mergeinto.TracksLineage);
	// each row's mergeinto.LineageColumns come right before its position,
	// in the input and the output alike.
	Lineage bool
}

// Operator evaluates the rewrite over input, which yields the target's
// columns in table order, with Lineage the row's lineage columns, and
// then each row's position (BIGINT; see exec.RowPosition). Output: a boolean "match" column (TRUE when the
// WHERE clause holds), then the target's columns: the new values of
// matched rows for UPDATE, the stored values otherwise; with KeepsOld
// the stored values of every column again; with Lineage, the row's
// lineage columns; last, the row's position, unchanged. The output need not come in input order (a
// correlated subquery's join reorders rows): the position says which row
// each output row is.
func (r *Rewrite) Operator(input exec.Operator) (exec.Operator, error) {
	r.input = input
	return r.b.build(r.root)
}

// RowPositionColumn names the row position a Rewrite carries.
const RowPositionColumn = "_skade_row_position"

// RowRewrite binds DELETE's or UPDATE's WHERE and SET over target.
//
// using, for DELETE … USING, lists more tables: a target row matches when
// some combination of their rows satisfies WHERE, which must relate the
// target to them by equalities.
func (p *Planner) RowRewrite(ctx context.Context, target *TableRef, alias parser.Ident, where parser.Expr, set []*parser.SetClause, using []parser.TableExpr) (*Rewrite, error) {
	return p.rowRewrite(ctx, target, alias, where, set, using, false, false)
}

// rowRewrite is RowRewrite. Its uncorrelated subqueries are init plans:
// run right after binding (so that their values prune files), except with
// explain, which runs nothing and shows them under the plan.
func (p *Planner) rowRewrite(ctx context.Context, target *TableRef, alias parser.Ident, where parser.Expr, set []*parser.SetClause, using []parser.TableExpr, explain, keepOld bool) (*Rewrite, error) {
	b := p.binder(ctx)
	cols, err := TargetColumns(target)
	if err != nil {
		return nil, err
	}
	rw := &Rewrite{Columns: cols, b: b, KeepsOld: keepOld, Lineage: mergeinto.TracksLineage(target.Table)}
	qual := target.Ident[len(target.Ident)-1]
	if !alias.Empty() {
		qual = identName(alias)
	}
	src := &SourceScan{Name: target.Name}
	for _, c := range cols {
		src.Cols = append(src.Cols, b.newCol(c.Name, qual, c.Type, !c.Required))
	}
	// The lineage and the position are no columns of the table: outside
	// every scope.
	var lineage []Column
	if rw.Lineage {
		for _, name := range mergeinto.LineageColumns {
			lineage = append(lineage, b.newCol(name, "", tInt64, true))
		}
		src.Cols = append(src.Cols, lineage...)
	}
	pos := b.newCol(RowPositionColumn, "", tInt64, false)
	src.Cols = append(src.Cols, pos)
	own := src.Cols[:len(cols)]
	src.Open = func() (exec.Operator, error) {
		if rw.input == nil {
			return nil, fmt.Errorf("plan: rewrite input missing (planner bug)")
		}
		in := rw.input
		rw.input = nil
		return in, nil
	}
	sc := newScope(own, nil)
	var marks []*Join
	ec := &exprCtx{sc: sc, clause: "WHERE", marks: &marks, filterIn: filterIns(where)}
	var match, pred Expr
	if where == nil && len(using) > 0 {
		// DELETE … USING s (UPDATE … FROM s) without WHERE: a row matches
		// when s has a row, as in PostgreSQL; not every row whatever s
		// holds
		where = &parser.Literal{Pos: using[0].Position(), Kind: parser.LitBool, Value: "true"}
	}
	if where == nil {
		rw.every = true
		l, _ := exec.NewLiteral(true)
		match = constLit(l)
	} else {
		if containsAggregate(where) {
			return nil, errorf(where.Position(), "aggregate functions are not allowed in WHERE")
		}
		var un Node
		if len(using) > 0 {
			var usc *scope
			var err error
			if un, usc, err = b.bindFromList(using, nil); err != nil {
				return nil, err
			}
			joined := newScope(own, nil)
			if err := joined.merge(usc, using[0].Position()); err != nil {
				return nil, err
			}
			ec.sc = joined
		}
		var err error
		pred, err = b.bindExpr(where, ec)
		if err != nil {
			return nil, err
		}
		if err := checkBool(pred, where.Position(), "WHERE"); err != nil {
			return nil, err
		}
		if !explain {
			// the optimizer rule, applied before the pushdown it feeds
			if pred, err = b.foldExpr(pred); err != nil {
				return nil, err
			}
		}
		if un != nil {
			if pred, err = b.usingMark(src, un, pred, &marks, where.Position()); err != nil {
				return nil, err
			}
		}
		fake := &Scan{Table: target, All: own}
		for _, c := range cols {
			fake.Fields = append(fake.Fields, c.Name)
		}
		ids := idSet(own)
		for _, c := range conjuncts(pred) {
			if refsOnly(c, ids) {
				fake.Filters = append(fake.Filters, c)
			}
		}
		rw.Pushed = icebergFilter(fake)
		if _, v, ok := constBool(pred); ok && !v {
			// WHERE … AND FALSE: no row matches, so no file is read
			rw.Pushed = iceberg.AlwaysFalse{}
		}
		if len(marks) == 0 {
			rw.strict, _ = strictForm(fake, pred)
		}
		rw.inclusive = inclusiveForm(fake, pred)
		if match, err = b.call(where.Position(), "is_true", pred); err != nil {
			return nil, err
		}
	}
	values := make([]Expr, len(cols))
	for i, c := range own {
		values[i] = &ColRef{ID: c.ID, Typ: c.Type, Name: c.Name}
	}
	setSeen := map[int]bool{}
	uc := &exprCtx{sc: sc, clause: "UPDATE", marks: &marks}
	for _, s := range set {
		name := s.Column.Last()
		if len(s.Column) > 1 && !strings.EqualFold(identName(s.Column[0]), qual) {
			return nil, errorf(s.Pos, "column reference %s does not name the target table %q", s.Column, qual)
		}
		idx := -1
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name
			if sameName(name, c.Name) {
				idx = i
			}
		}
		if idx < 0 {
			return nil, errorf(s.Pos, "column %q of relation %q does not exist%s", name.Name, target.Name, didYouMean(name.Name, names))
		}
		if setSeen[idx] {
			return nil, errorf(s.Pos, "multiple assignments to same column %q", name.Name)
		}
		setSeen[idx] = true
		rw.Set = append(rw.Set, idx)
		var v Expr
		if _, isDef := s.Value.(*parser.Default); isDef {
			if v, err = b.defaultValue(cols[idx]); err != nil {
				return nil, atPos(s.Pos, err)
			}
		} else if v, err = b.bindExpr(s.Value, uc); err != nil {
			return nil, err
		}
		if v, err = b.assign(v, cols[idx], target.Name, s.Pos); err != nil {
			return nil, err
		}
		old := values[idx]
		values[idx], err = b.newFunc("case", []Expr{match, v, old}, func(a []exec.Expr) (exec.Expr, error) {
			return exec.NewCase([]exec.When{{Cond: a[0], Then: a[1]}}, a[2])
		})
		if err != nil {
			return nil, atPos(s.Pos, err)
		}
	}
	slices.Sort(rw.Set)
	node := applyMarks(src, marks)
	exprs := append([]Expr{match}, values...)
	if keepOld {
		// the stored values too, for RETURNING old.*
		for _, c := range own {
			exprs = append(exprs, &ColRef{ID: c.ID, Typ: c.Type, Name: c.Name})
		}
	}
	for _, c := range lineage {
		exprs = append(exprs, &ColRef{ID: c.ID, Typ: c.Type, Name: c.Name})
	}
	exprs = append(exprs, &ColRef{ID: pos.ID, Typ: pos.Type, Name: pos.Name})
	proj := &Project{Input: node, Exprs: exprs}
	proj.Cols = append(proj.Cols, b.newCol("match", "", tBool, false))
	for _, c := range cols {
		proj.Cols = append(proj.Cols, b.newCol(c.Name, "", c.Type, !c.Required))
	}
	if keepOld {
		for _, c := range cols {
			proj.Cols = append(proj.Cols, b.newCol("old."+c.Name, "", c.Type, true))
		}
	}
	for _, c := range lineage {
		proj.Cols = append(proj.Cols, b.newCol(c.Name, "", tInt64, true))
	}
	proj.Cols = append(proj.Cols, b.newCol(RowPositionColumn, "", tInt64, false))
	if !explain {
		if err := b.foldInits(proj); err != nil {
			return nil, err
		}
	}
	rw.root = optimize(b, proj)
	rw.ordered = rowWise(rw.root)
	rw.once = onceSubtrees(rw.root, src)
	if pred != nil {
		rw.keys = keySets(rw.root, pred, src, target)
	}
	return rw, nil
}

// Explain renders the rewrite's logical plan (over one data file).
func (r *Rewrite) Explain() string { return explainLogical(r.root) }

// Returning is a bound RETURNING list of INSERT, UPDATE or DELETE,
// evaluated over the affected rows laid out as the target's columns, then
// the row before the statement (old.*, PostgreSQL 18: NULL for an INSERT)
// and after it (new.*: NULL for a DELETE).
type Returning struct {
	b        *binder
	exprs    []Expr
	cols     []Column
	in       []Column
	old, new []Column
}

// UsesOld reports whether the list reads old.* columns: an UPDATE then
// carries each changed row's old values (Rewrite.KeepsOld).
func (r *Returning) UsesOld() bool {
	set := idSet(r.old)
	for _, e := range r.exprs {
		uses := false
		walkExpr(e, func(x Expr) {
			if c, ok := x.(*ColRef); ok && set[c.ID] {
				uses = true
			}
		})
		if uses {
			return true
		}
	}
	return false
}

// Schema is the RETURNING rows' schema.
func (r *Returning) Schema() *arrow.Schema { return schemaOf(r.cols) }

// Operator evaluates the list over rows: the target's columns in table
// order (types as TargetColumns), then the old row's and the new row's,
// likewise.
func (r *Returning) Operator(rows exec.Operator) (exec.Operator, error) {
	exprs, err := compileAll(r.exprs, layoutOf(append(append(append([]Column(nil), r.in...), r.old...), r.new...)))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(r.cols))
	for i, c := range r.cols {
		names[i] = c.Name
	}
	p, err := exec.NewProject(rows, exprs, names, r.b.opts.Mem)
	if err != nil {
		return nil, err
	}
	p.SetNow(r.b.now)
	return p, nil
}

// BindReturning binds a RETURNING list over target's columns.
func (p *Planner) BindReturning(ctx context.Context, target *TableRef, alias parser.Ident, items []*parser.SelectItem) (*Returning, error) {
	b := p.binder(ctx)
	cols, err := TargetColumns(target)
	if err != nil {
		return nil, err
	}
	qual := target.Ident[len(target.Ident)-1]
	if !alias.Empty() {
		qual = identName(alias)
	}
	r := &Returning{b: b}
	for _, c := range cols {
		r.in = append(r.in, b.newCol(c.Name, qual, c.Type, !c.Required))
		r.old = append(r.old, b.newCol(c.Name, "old", c.Type, true))
		r.new = append(r.new, b.newCol(c.Name, "new", c.Type, true))
	}
	sc := newScope(r.in, nil)
	addOldNew(sc, r.old, r.new)
	expanded, err := b.expandItems(items, sc)
	if err != nil {
		return nil, err
	}
	for _, it := range expanded {
		x := it.bound
		if x == nil {
			if x, err = b.bindExpr(it.ast, &exprCtx{sc: sc, clause: "RETURNING"}); err != nil {
				return nil, err
			}
		}
		r.exprs = append(r.exprs, x)
		r.cols = append(r.cols, b.newCol(it.name, "", x.Type(), true))
	}
	return r, nil
}

// usingMark rewrites DELETE … USING's predicate over the target and the
// USING relation into one over the target alone: the conjuncts on the
// USING relation filter it, the equalities between the two become a mark
// join, and a row matches when it has a mark and the target's own
// conjuncts hold.
func (b *binder) usingMark(src Node, un Node, pred Expr, marks *[]*Join, pos parser.Pos) (Expr, error) {
	tset, uset := idSet(src.Columns()), idSet(un.Columns())
	var own, other, cross []Expr
	for _, c := range conjuncts(pred) {
		switch {
		case refsOnly(c, tset):
			own = append(own, c)
		case refsOnly(c, uset):
			other = append(other, c)
		default:
			f, ok := c.(*Func)
			if !ok || f.Name != "=" || !((refsOnly(f.Args[0], tset) && refsOnly(f.Args[1], uset)) || (refsOnly(f.Args[0], uset) && refsOnly(f.Args[1], tset))) {
				return nil, errorf(pos, "DELETE … USING needs WHERE to relate the target to the USING tables by equalities (target.col = other.col); %s is not one", c)
			}
			cross = append(cross, c)
		}
	}
	if len(cross) == 0 {
		return nil, errorf(pos, "DELETE … USING needs WHERE to relate the target to the USING tables by at least one equality")
	}
	if len(other) > 0 {
		un = &Filter{Input: un, Pred: andConj(other)}
	}
	mark := b.newCol("mark", "", tBool, true)
	*marks = append(*marks, &Join{Kind: exec.JoinMark, Right: un, On: andConj(cross), Mark: &mark})
	f, _ := exec.NewLiteral(false)
	has, err := b.coalesce(&ColRef{ID: mark.ID, Typ: tBool, Name: "using"}, constLit(f))
	if err != nil {
		return nil, err
	}
	return andAll(b, append([]Expr{has}, own...)), nil
}

// addOldNew adds RETURNING's relations old and new (PostgreSQL 18) to sc:
// reachable only qualified (old.x), left out of a bare *, and not added
// where sc already has a relation of that name, which keeps it.
func addOldNew(sc *scope, old, new []Column) {
	for _, side := range [][]Column{old, new} {
		ssc := newScope(side, nil)
		for i := range ssc.cols {
			ssc.cols[i].hidden = true
		}
		_ = sc.merge(ssc, parser.Pos{}) // a clash keeps the user's relation
	}
}

// refuseDMLWith refuses a data-modifying WITH entry where the binder
// meets one: lake runs those before it binds the SELECT they top.
func refuseDMLWith(c *parser.CTE) error {
	if c.DML == nil {
		return nil
	}
	return errorf(c.Pos, "WITH %s AS (%s …): a data-modifying WITH is supported only at the top of a SELECT statement", identName(c.Name), StatementKind(c.DML))
}

// nestedAssign: a struct assigns to a struct, and an array to an array,
// when their fields or elements do (as an assignment casts them).
func nestedAssign(from, to arrow.DataType) bool {
	switch {
	case from.ID() == arrow.STRUCT && to.ID() == arrow.STRUCT, from.ID() == arrow.MAP && to.ID() == arrow.MAP:
		return true
	case from.ID() == arrow.LIST && to.ID() == arrow.LIST:
		f, t := from.(*arrow.ListType).Elem(), to.(*arrow.ListType).Elem()
		return nestedAssign(f, t) || isNumericType(f) && isNumericType(t) || t.ID() == arrow.STRING || isDateTimeType(f) && isDateTimeType(t)
	}
	return false
}
