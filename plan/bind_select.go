package plan

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
)

// bindQuery binds a query; outer is the enclosing query's scope for a
// subquery, nil at the top.
func (b *binder) bindQuery(q *parser.Query, outer *scope) (Node, error) {
	if q.With != nil {
		saved := len(b.ctes)
		defer func() { b.ctes = b.ctes[:saved] }()
		seen := map[string]bool{}
		for _, c := range q.With.CTEs {
			name := identName(c.Name)
			if seen[name] {
				return nil, errorf(c.Name.Pos, "WITH query name %q specified more than once", name)
			}
			if err := refuseDMLWith(c); err != nil {
				return nil, err
			}
			seen[name] = true
			b.ctes = append(b.ctes, &cteDef{name: name, cols: c.Columns, query: c.Query, recursive: q.With.Recursive, outer: outer})
		}
	}
	var node Node
	var err error
	orderBy := q.OrderBy
	var all *parser.OrderItem
	if len(orderBy) > 0 {
		if _, ok := orderBy[0].Expr.(*parser.AllColumns); ok {
			if len(orderBy) > 1 {
				return nil, errorf(orderBy[1].Pos, "ORDER BY ALL takes no other sort keys")
			}
			all, orderBy = orderBy[0], nil
		}
	}
	if sel, ok := q.Body.(*parser.Select); ok && hasGroupingSets(sel) {
		node, err = b.bindGroupingSets(sel, orderBy, outer)
		if err != nil {
			return nil, err
		}
	} else if sel, ok := q.Body.(*parser.Select); ok {
		node, err = b.bindSelect(sel, orderBy, outer)
		if err != nil {
			return nil, err
		}
	} else {
		node, err = b.bindBody(q.Body, outer)
		if err != nil {
			return nil, err
		}
		if len(orderBy) > 0 {
			node, err = b.orderOutputs(node, orderBy, outer)
			if err != nil {
				return nil, err
			}
		}
	}
	if all != nil {
		// every output column, left to right, in the one direction;
		// NULLs last ascending and first descending, as PostgreSQL sorts
		st := &Sort{Input: node}
		for _, c := range node.Columns() {
			nullsFirst := all.Desc
			switch all.Nulls {
			case parser.NullsFirst:
				nullsFirst = true
			case parser.NullsLast:
				nullsFirst = false
			}
			st.Keys = append(st.Keys, SortKey{Expr: colRef(c), Desc: all.Desc, NullsFirst: nullsFirst})
		}
		node = st
	}
	if q.WithTies {
		return nil, errorf(q.Pos, "FETCH … WITH TIES is not supported yet")
	}
	if q.Limit != nil || q.Offset != nil {
		lim := &Limit{Input: node, Limit: -1}
		if q.Limit != nil {
			v, null, err := b.constInt(q.Limit, "LIMIT")
			if err != nil {
				return nil, err
			}
			if !null {
				if v < 0 {
					return nil, errorf(q.Limit.Position(), "LIMIT must not be negative")
				}
				lim.Limit = v
			}
		}
		if q.Offset != nil {
			v, null, err := b.constInt(q.Offset, "OFFSET")
			if err != nil {
				return nil, err
			}
			if v < 0 {
				return nil, errorf(q.Offset.Position(), "OFFSET must not be negative")
			}
			if !null {
				lim.Offset = v
			}
		}
		node = lim
	}
	return node, nil
}

// bindBody binds a query body without its own ORDER BY.
func (b *binder) bindBody(body parser.QueryBody, outer *scope) (Node, error) {
	switch body := body.(type) {
	case *parser.Select:
		return b.bindSelect(body, nil, outer)
	case *parser.Query:
		return b.bindQuery(body, outer)
	case *parser.Values:
		return b.bindValues(body, outer)
	case *parser.SetOp:
		return b.bindSetOp(body, outer)
	}
	return nil, errorf(body.Position(), "unsupported query body %T", body)
}

// orderOutputs sorts a set operation or VALUES by its output columns.
func (b *binder) orderOutputs(node Node, items []*parser.OrderItem, outer *scope) (Node, error) {
	sc := newScope(node.Columns(), outer)
	var keys []SortKey
	for _, o := range items {
		if lit, ok := o.Expr.(*parser.Literal); ok && lit.Kind == parser.LitInteger {
			cols := node.Columns()
			k, err := ordinal(lit, len(cols), "ORDER BY")
			if err != nil {
				return nil, err
			}
			c := cols[k]
			keys = append(keys, sortKey(&ColRef{ID: c.ID, Typ: c.Type, Name: c.Name}, o))
			continue
		}
		x, err := b.bindExpr(o.Expr, &exprCtx{sc: sc, clause: "ORDER BY"})
		if err != nil {
			return nil, err
		}
		keys = append(keys, sortKey(x, o))
	}
	return &Sort{Input: node, Keys: keys}, nil
}

func ordinal(lit *parser.Literal, n int, clause string) (int, error) {
	k := 0
	for _, c := range lit.Value {
		k = k*10 + int(c-'0')
		if k > n {
			break
		}
	}
	if k < 1 || k > n {
		return 0, errorf(lit.Pos, "%s position %s is not in select list", clause, lit.Value)
	}
	return k - 1, nil
}

// unknownAsNull types string literals as unknown for a common type.
func unknownAsNull(es []Expr) []arrow.DataType {
	ts := make([]arrow.DataType, len(es))
	for i, e := range es {
		ts[i] = e.Type()
		if c, ok := e.(*Const); ok && c.Type().ID() == arrow.STRING {
			ts[i] = arrow.Null
		}
	}
	return ts
}

// coerce converts e to type to as an implicit cast.
func (b *binder) coerce(e Expr, to arrow.DataType) (Expr, error) {
	if arrow.TypeEqual(e.Type(), to) {
		return e, nil
	}
	return b.newFunc("coerce", []Expr{e}, func(a []exec.Expr) (exec.Expr, error) { return exec.Coerce(a[0], to) })
}

func (b *binder) bindValues(v *parser.Values, outer *scope) (Node, error) {
	if len(v.Rows) == 0 || len(v.Rows[0]) == 0 {
		return nil, errorf(v.Pos, "VALUES needs at least one row of at least one value")
	}
	sc := newScope(nil, outer)
	rows := make([][]Expr, len(v.Rows))
	width := -1
	for i, r := range v.Rows {
		if width >= 0 && len(r) != width {
			return nil, errorf(v.Pos, "VALUES lists must all be the same length")
		}
		width = len(r)
		xs, err := b.bindExprs(r, &exprCtx{sc: sc, clause: "VALUES"})
		if err != nil {
			return nil, err
		}
		rows[i] = xs
	}
	cols := make([]Column, width)
	for j := 0; j < width; j++ {
		col := make([]Expr, len(rows))
		for i := range rows {
			col[i] = rows[i][j]
		}
		t, err := exec.CommonTypeFor("VALUES", unknownAsNull(col)...)
		if err != nil {
			return nil, atPos(v.Pos, err)
		}
		nullable := false
		for i := range rows {
			x, err := b.coerce(rows[i][j], t)
			if err != nil {
				return nil, atPos(v.Pos, err)
			}
			rows[i][j] = x
			if c, ok := x.(*Const); !ok || c.IsNull() {
				nullable = true
			}
		}
		cols[j] = b.newCol("column"+itoa(j+1), "", t, nullable)
	}
	return &Values{Rows: rows, Cols: cols}, nil
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func (b *binder) bindSetOp(s *parser.SetOp, outer *scope) (Node, error) {
	l, err := b.bindBody(s.Left, outer)
	if err != nil {
		return nil, err
	}
	r, err := b.bindBody(s.Right, outer)
	if err != nil {
		return nil, err
	}
	return b.setOpNode(s.Op.String(), s.All, l, r, s.Pos)
}

// setOpNode combines l and r by the set operation opName (UNION, EXCEPT,
// INTERSECT), their columns cast to the common types.
func (b *binder) setOpNode(opName string, all bool, l, r Node, pos parser.Pos) (Node, error) {
	op := strings.ToLower(opName)
	lc, rc := l.Columns(), r.Columns()
	if len(lc) != len(rc) {
		return nil, errorf(pos, "each %s query must have the same number of columns", opName)
	}
	types := make([]arrow.DataType, len(lc))
	for i := range lc {
		t, err := exec.CommonTypeFor(opName, lc[i].Type, rc[i].Type)
		if err != nil {
			return nil, atPos(pos, err)
		}
		types[i] = t
	}
	l, err := b.castColumns(l, types)
	if err != nil {
		return nil, atPos(pos, err)
	}
	r, err = b.castColumns(r, types)
	if err != nil {
		return nil, atPos(pos, err)
	}
	cols := make([]Column, len(lc))
	for i := range lc {
		cols[i] = b.newCol(lc[i].Name, "", types[i], true)
	}
	return &SetOp{Op: op, All: all, Left: l, Right: r, Cols: cols}, nil
}

// castColumns projects n so that its columns have the given types.
func (b *binder) castColumns(n Node, types []arrow.DataType) (Node, error) {
	cols := n.Columns()
	same := true
	for i, c := range cols {
		if !arrow.TypeEqual(c.Type, types[i]) {
			same = false
		}
	}
	if same {
		return n, nil
	}
	p := &Project{Input: n}
	for i, c := range cols {
		x, err := b.coerce(&ColRef{ID: c.ID, Typ: c.Type, Name: c.Name}, types[i])
		if err != nil {
			return nil, err
		}
		p.Exprs = append(p.Exprs, x)
		p.Cols = append(p.Cols, b.newCol(c.Name, "", types[i], true))
	}
	return p, nil
}

// selItem is one output of a select list after * expansion.
type selItem struct {
	ast   parser.Expr // nil for a column from *
	bound Expr        // set for a column from *
	name  string
}

func (b *binder) expandItems(items []*parser.SelectItem, sc *scope) ([]selItem, error) {
	var out []selItem
	for _, it := range items {
		star, ok := it.Expr.(*parser.Star)
		if !ok {
			name := identName(it.Alias)
			if it.Alias.Empty() {
				name = deriveName(it.Expr)
			}
			out = append(out, selItem{ast: it.Expr, name: name})
			continue
		}
		excluded := map[string]bool{}
		for _, x := range star.Exclude {
			excluded[strings.ToLower(x.Name)] = true
		}
		replaced := map[string]*parser.ReplaceItem{}
		for _, r := range star.Replace {
			replaced[strings.ToLower(r.Name.Name)] = r
		}
		n := 0
		var table string
		if len(star.Table) > 0 {
			table = identName(star.Table.Last())
			if !sc.hasTable(star.Table.Last()) {
				return nil, errorf(star.Pos, "missing FROM-clause entry for table %q", table)
			}
		}
		seen := map[string]bool{}
		for _, c := range sc.cols {
			if table == "" && c.hidden || c.meta {
				continue
			}
			if table != "" && !strings.EqualFold(c.Table, table) {
				continue
			}
			lname := strings.ToLower(c.Name)
			if excluded[lname] {
				seen[lname] = true
				continue
			}
			n++
			if r, ok := replaced[lname]; ok {
				seen[lname] = true
				out = append(out, selItem{ast: r.Expr, name: c.Name})
				continue
			}
			out = append(out, selItem{bound: &ColRef{ID: c.ID, Typ: c.Type, Name: displayCol(c.Column)}, name: c.Name})
		}
		for _, x := range star.Exclude {
			if !seen[strings.ToLower(x.Name)] {
				return nil, errorf(x.Pos, "column %q in EXCLUDE list not found", x.Name)
			}
		}
		for _, r := range star.Replace {
			if !seen[strings.ToLower(r.Name.Name)] {
				return nil, errorf(r.Pos, "column %q in REPLACE list not found", r.Name.Name)
			}
		}
		if n == 0 && len(sc.cols) == 0 {
			return nil, errorf(star.Pos, "SELECT * with no tables specified is not valid")
		}
	}
	return out, nil
}

// deriveName names an unaliased select item as Postgres does.
func deriveName(e parser.Expr) string {
	switch e := e.(type) {
	case *parser.ColumnRef:
		return identName(e.Name.Last())
	case *parser.FuncCall:
		return strings.ToLower(e.Name.Last().Name)
	case *parser.Cast:
		if n := deriveName(e.X); n != "?column?" {
			return n
		}
		return strings.ToLower(e.Type.Name)
	case *parser.Extract:
		return "extract"
	case *parser.CaseExpr:
		return "case"
	case *parser.Exists:
		return "exists"
	case *parser.ArrayExpr, *parser.ArraySubquery:
		return "array"
	case *parser.Subscript:
		if lit, ok := e.Index.(*parser.Literal); ok && lit.Kind == parser.LitString {
			return lit.Value // s['a']: a struct's field
		}
		return deriveName(e.X)
	case *parser.FieldAccess:
		return e.Field.Name
	case *parser.SubqueryExpr:
		if sel, ok := e.Query.Body.(*parser.Select); ok && len(sel.Items) == 1 {
			if sel.Items[0].Alias.Empty() {
				return deriveName(sel.Items[0].Expr)
			}
			return identName(sel.Items[0].Alias)
		}
	}
	return "?column?"
}

func (b *binder) bindSelect(sel *parser.Select, orderBy []*parser.OrderItem, outer *scope) (Node, error) {
	inits := len(b.inits)
	n, err := b.bindSelectOnce(sel, orderBy, outer)
	if err != nil && b.forceAgg[sel] {
		// a subquery's aggregate of this query's columns makes it an
		// aggregating query (outerLevelAggregate): bound again as one
		b.inits = b.inits[:inits]
		n, err = b.bindSelectOnce(sel, orderBy, outer)
		delete(b.forceAgg, sel)
	}
	if b.outerAggIn[sel] && (err != nil || b.aggOnlyOuter[sel]) {
		// its aggregates belong to an enclosing query: it does not
		// aggregate itself, as SQL has it (SELECT (SELECT count(o.x) FROM
		// t) FROM o gives one row per t row, for each o group)
		delete(b.outerAggIn, sel)
		delete(b.aggOnlyOuter, sel)
		if b.noAgg == nil {
			b.noAgg = map[*parser.Select]bool{}
		}
		b.noAgg[sel] = true
		mark := len(b.inits)
		n2, err2 := b.bindSelectOnce(sel, orderBy, outer)
		delete(b.noAgg, sel)
		if err2 == nil {
			return n2, nil
		}
		b.inits = b.inits[:mark]
		if err == nil {
			return nil, err2
		}
	}
	return n, err
}

func (b *binder) bindSelectOnce(sel *parser.Select, orderBy []*parser.OrderItem, outer *scope) (Node, error) {
	orig := sel
	sel, orderBy, srf, err := b.srfSelect(sel, orderBy)
	if err != nil {
		return nil, err
	}
	// the select list's unnest calls read the hidden FROM item's columns
	savedSRF := b.srfCols
	defer func() { b.srfCols = savedSRF }()
	b.srfCols = srf
	// named windows (WINDOW w AS (…)) are visible to this SELECT only
	savedWindows := b.windows
	defer func() { b.windows = savedWindows }()
	b.windows = map[string]*parser.WindowSpec{}
	for _, w := range sel.Windows {
		name := identName(w.Name)
		if _, dup := b.windows[name]; dup {
			return nil, errorf(w.Pos, "window %q is already defined", name)
		}
		spec, err := b.resolveWindow(w.Spec)
		if err != nil {
			return nil, err
		}
		b.windows[name] = spec
	}
	var input Node
	var sc *scope
	if len(sel.From) == 0 {
		input, sc = &OneRow{}, newScope(nil, outer)
	} else {
		var err error
		input, sc, err = b.bindFromList(sel.From, outer)
		if err != nil {
			return nil, err
		}
		for i := range sc.cols {
			if sc.cols[i].Table == srfQualifier {
				sc.cols[i].hidden = true // a select-list unnest's: not in *
			}
		}
	}
	if sel.Where != nil {
		var err error
		input, err = b.bindWhere(input, sc, sel.Where)
		if err != nil {
			return nil, err
		}
	}
	items, err := b.expandItems(sel.Items, sc)
	if err != nil {
		return nil, err
	}
	branch := b.groupingBranches[sel]
	ownAgg := len(sel.GroupBy) > 0 || sel.GroupByAll || sel.Having != nil || branch != nil || b.forceAgg[orig]
	isAgg := ownAgg
	if b.selOf == nil {
		b.selOf = map[*scope]*parser.Select{}
	}
	b.selOf[sc] = orig
	defer delete(b.selOf, sc)
	for _, it := range items {
		if it.ast != nil && containsAggregate(it.ast) {
			isAgg = true
		}
	}
	for _, o := range orderBy {
		if containsAggregate(o.Expr) {
			isAgg = true
		}
	}
	if b.noAgg[orig] && !ownAgg {
		isAgg = false
	}
	var preMarks, postMarks []*Join
	win := &winState{}
	ec := &exprCtx{sc: sc, clause: "SELECT", win: win, marks: &postMarks}
	var ag *aggState
	var groupExprs []Expr
	var groupCols []Column
	if isAgg {
		ag = &aggState{input: sc, groups: map[string]*ColRef{}, groupIDs: map[ColumnID]*ColRef{}, aggKeys: map[string]*ColRef{}, marks: &preMarks, sets: branch}
		gctx := &exprCtx{sc: sc, clause: "GROUP BY", marks: &preMarks}
		addGroup := func(key string, x Expr, name string) {
			if _, dup := ag.groups[key]; dup && key != "" {
				return
			}
			if c, ok := x.(*ColRef); ok {
				// GROUP BY t.b, b (or an expression that folds to b):
				// the key already grouped by
				if prev, dup := ag.groupIDs[c.ID]; dup {
					if key != "" {
						ag.groups[key] = prev
					}
					return
				}
			}
			col := b.newCol(name, "", x.Type(), true)
			ref := &ColRef{ID: col.ID, Typ: col.Type, Name: x.String()}
			if key != "" {
				ag.groups[key] = ref
			}
			if c, ok := x.(*ColRef); ok {
				ag.groupIDs[c.ID] = ref
			}
			groupExprs = append(groupExprs, x)
			groupCols = append(groupCols, col)
		}
		bindItem := func(it selItem) error {
			if it.bound != nil {
				addGroup("", it.bound, it.name)
				return nil
			}
			if containsAggregate(it.ast) {
				return errorf(it.ast.Position(), "aggregate functions are not allowed in GROUP BY")
			}
			x, err := b.bindExpr(it.ast, gctx)
			if err != nil {
				return err
			}
			addGroup(it.ast.String(), x, it.name)
			return nil
		}
		if sel.GroupByAll {
			for _, it := range items {
				if it.ast != nil && containsAggregate(it.ast) {
					continue
				}
				if err := bindItem(it); err != nil {
					return nil, err
				}
			}
		}
		for _, g := range sel.GroupBy {
			if lit, ok := g.(*parser.Literal); ok && lit.Kind == parser.LitInteger {
				k, err := ordinal(lit, len(items), "GROUP BY")
				if err != nil {
					return nil, err
				}
				if err := bindItem(items[k]); err != nil {
					return nil, err
				}
				continue
			}
			if containsAggregate(g) {
				return nil, errorf(g.Position(), "aggregate functions are not allowed in GROUP BY")
			}
			// a bare name may be a select alias (Postgres allows it when no
			// input column has the name)
			if cr, ok := g.(*parser.ColumnRef); ok && len(cr.Name) == 1 {
				if _, err := b.resolve(sc, cr); err != nil {
					found := false
					for _, it := range items {
						if it.ast != nil && sameName(cr.Name[0], it.name) {
							if err := bindItem(it); err != nil {
								return nil, err
							}
							found = true
							break
						}
					}
					if found {
						continue
					}
					return nil, err
				}
			}
			x, err := b.bindExpr(g, gctx)
			if err != nil {
				return nil, err
			}
			addGroup(g.String(), x, deriveName(g))
		}
		ec.agg = ag
		if b.aggOf == nil {
			b.aggOf = map[*scope]*aggState{}
		}
		b.aggOf[sc] = ag
		defer delete(b.aggOf, sc)
	}
	// select list
	outExprs := make([]Expr, len(items))
	for i, it := range items {
		if it.bound != nil {
			x := it.bound
			if ag != nil {
				c := x.(*ColRef)
				g, ok := ag.groupIDs[c.ID]
				if !ok {
					return nil, errorf(sel.Pos, "column %q must appear in the GROUP BY clause or be used in an aggregate function", c.Name)
				}
				x = g
			}
			outExprs[i] = x
			continue
		}
		x, err := b.bindExpr(it.ast, ec)
		if err != nil {
			return nil, err
		}
		outExprs[i] = x
	}
	var qualify Expr
	if sel.Qualify != nil {
		qc := *ec
		qc.clause = "QUALIFY"
		x, err := b.bindExpr(sel.Qualify, &qc)
		if err != nil {
			return nil, err
		}
		if err := checkBool(x, sel.Qualify.Position(), "QUALIFY"); err != nil {
			return nil, err
		}
		qualify = x
	}
	var having Expr
	if sel.Having != nil {
		x, err := b.bindExpr(sel.Having, &exprCtx{sc: sc, agg: ag, clause: "HAVING", marks: &postMarks})
		if err != nil {
			return nil, err
		}
		having = x
	}
	// ORDER BY: an output (ordinal or alias), else an expression over the
	// input, computed as a hidden column.
	type orderRef struct {
		out  int // index in outputs, or -1
		expr Expr
		item *parser.OrderItem
	}
	var orders []orderRef
	for _, o := range orderBy {
		if lit, ok := o.Expr.(*parser.Literal); ok && lit.Kind == parser.LitInteger {
			k, err := ordinal(lit, len(items), "ORDER BY")
			if err != nil {
				return nil, err
			}
			orders = append(orders, orderRef{out: k, item: o})
			continue
		}
		if cr, ok := o.Expr.(*parser.ColumnRef); ok && len(cr.Name) == 1 {
			match := -1
			for i, it := range items {
				if sameName(cr.Name[0], it.name) && (it.ast == nil || !isPlainColumn(it.ast) || true) {
					if match >= 0 && !sameExpr(items[match], it) {
						return nil, errorf(cr.Pos, "ORDER BY %q is ambiguous", cr.Name[0].Name)
					}
					if match < 0 {
						match = i
					}
				}
			}
			if match >= 0 {
				orders = append(orders, orderRef{out: match, item: o})
				continue
			}
		}
		oc := *ec
		oc.clause = "ORDER BY"
		x, err := b.bindExpr(o.Expr, &oc)
		if err != nil {
			return nil, err
		}
		idx := -1
		for i, it := range items {
			if it.ast != nil && it.ast.String() == o.Expr.String() {
				idx = i
			}
		}
		orders = append(orders, orderRef{out: idx, expr: x, item: o})
	}

	// assemble
	node := input
	if ag != nil {
		node = applyMarks(node, preMarks)
		node = &Aggregate{Input: node, GroupBy: groupExprs, Groups: groupCols, Aggs: ag.aggs}
		if !ownAgg && len(ag.aggs) == 0 && b.outerAggIn[orig] {
			if b.aggOnlyOuter == nil {
				b.aggOnlyOuter = map[*parser.Select]bool{}
			}
			b.aggOnlyOuter[orig] = true
		}
	}
	node = applyMarks(node, postMarks)
	if having != nil {
		node = &Filter{Input: node, Pred: having}
	}
	// DISTINCT ON (keys): the first row of each key group in ORDER BY
	// order, as row_number() OVER (PARTITION BY keys ORDER BY …) = 1
	var distinctOn Expr
	if len(sel.DistinctOn) > 0 {
		dc := *ec
		dc.clause = "DISTINCT ON"
		dc.win = nil
		var keys []Expr
		for _, k := range sel.DistinctOn {
			if lit, ok := k.(*parser.Literal); ok && lit.Kind == parser.LitInteger {
				i, err := ordinal(lit, len(items), "DISTINCT ON")
				if err != nil {
					return nil, err
				}
				keys = append(keys, outExprs[i])
				continue
			}
			x, err := b.bindExpr(k, &dc)
			if err != nil {
				return nil, err
			}
			keys = append(keys, x)
		}
		var order []SortKey
		for _, o := range orders {
			x := o.expr
			if o.out >= 0 {
				x = outExprs[o.out]
			}
			order = append(order, sortKey(x, o.item))
		}
		col := b.newCol("row_number", "", tInt64, false)
		win.funcs = append(win.funcs, &WindowCall{Name: "row_number", PartitionBy: keys, OrderBy: order, Col: col})
		one, _ := exec.NewLiteral(int64(1))
		eq, err := b.call(sel.Pos, "=", &ColRef{ID: col.ID, Typ: col.Type, Name: "row_number"}, constLit(one))
		if err != nil {
			return nil, err
		}
		distinctOn = eq
	}
	if len(win.funcs) > 0 {
		node = &Window{Input: node, Funcs: win.funcs}
	}
	if qualify != nil {
		node = &Filter{Input: node, Pred: qualify}
	}
	if distinctOn != nil {
		node = &Filter{Input: node, Pred: distinctOn}
	}
	proj := &Project{Input: node}
	for i, x := range outExprs {
		proj.Exprs = append(proj.Exprs, x)
		proj.Cols = append(proj.Cols, b.newCol(items[i].name, "", x.Type(), true))
	}
	var keys []SortKey
	hidden := 0
	for _, o := range orders {
		if o.out >= 0 {
			c := proj.Cols[o.out]
			keys = append(keys, sortKey(&ColRef{ID: c.ID, Typ: c.Type, Name: c.Name}, o.item))
			continue
		}
		if sel.Distinct && len(sel.DistinctOn) == 0 {
			return nil, errorf(o.item.Pos, "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
		}
		c := b.newCol(o.expr.String(), "", o.expr.Type(), true)
		proj.Exprs = append(proj.Exprs, o.expr)
		proj.Cols = append(proj.Cols, c)
		hidden++
		keys = append(keys, sortKey(&ColRef{ID: c.ID, Typ: c.Type, Name: c.Name}, o.item))
	}
	node = proj
	if sel.Distinct && len(sel.DistinctOn) == 0 {
		node = &Distinct{Input: node}
	}
	if len(keys) > 0 {
		node = &Sort{Input: node, Keys: keys}
	}
	if hidden > 0 {
		final := &Project{Input: node}
		for _, c := range proj.Cols[:len(items)] {
			final.Exprs = append(final.Exprs, &ColRef{ID: c.ID, Typ: c.Type, Name: c.Name})
			final.Cols = append(final.Cols, b.newCol(c.Name, "", c.Type, true))
		}
		node = final
	}
	return node, nil
}

func isPlainColumn(e parser.Expr) bool {
	_, ok := e.(*parser.ColumnRef)
	return ok
}

func sameExpr(a, b selItem) bool {
	if a.ast != nil && b.ast != nil {
		return a.ast.String() == b.ast.String()
	}
	return false
}

// applyMarks stacks pending mark joins onto input.
func applyMarks(input Node, marks []*Join) Node {
	for _, j := range marks {
		switch {
		case j.Left != nil:
		default:
			j.Left = input
			input = j
		}
	}
	return input
}
