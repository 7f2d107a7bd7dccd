package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/scan"
	"github.com/skadedb/skade/snapshot"
)

// bindFromList binds comma-separated FROM items as cross joins.
func (b *binder) bindFromList(items []parser.TableExpr, outer *scope) (Node, *scope, error) {
	var node Node
	sc := newScope(nil, outer)
	for _, it := range items {
		if lat, ok := it.(*parser.SubqueryRef); ok && lat.Lateral && node != nil {
			// LATERAL sees the items before it
			n, isc, on, dep, err := b.bindLateral(lat, sc, outer)
			if err != nil {
				return nil, nil, err
			}
			if dep != nil {
				if node, err = b.dependentLateralJoin(node, n, on, dep, nil, false, lat.Pos); err != nil {
					return nil, nil, err
				}
			} else {
				node = &Join{Kind: exec.JoinInner, Left: node, Right: n, On: on}
			}
			if err := sc.merge(isc, it.Position()); err != nil {
				return nil, nil, err
			}
			continue
		}
		if tf, ok := it.(*parser.TableFunc); ok {
			n, fsc, ok, err := b.lateralFunc(tf, node, sc)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				node = n
				if err := sc.merge(fsc, it.Position()); err != nil {
					return nil, nil, err
				}
				continue
			}
		}
		n, isc, err := b.bindTableExpr(it, outer)
		if err != nil {
			return nil, nil, err
		}
		if node == nil {
			node = n
		} else {
			node = &Join{Kind: exec.JoinInner, Left: node, Right: n}
		}
		if err := sc.merge(isc, it.Position()); err != nil {
			return nil, nil, err
		}
	}
	return node, sc, nil
}

// merge adds other's columns, refusing a table name used twice.
func (sc *scope) merge(other *scope, pos parser.Pos) error {
	have := map[string]bool{}
	for _, t := range sc.tables() {
		have[strings.ToLower(t)] = true
	}
	for _, t := range other.tables() {
		if have[strings.ToLower(t)] {
			return errorf(pos, "table name %q specified more than once; give one of them an alias", t)
		}
	}
	sc.cols = append(sc.cols, other.cols...)
	return nil
}

// aliased renames a relation's qualifier and, optionally, its columns.
func aliased(cols []Column, qual string, alias *parser.Alias, outer *scope) (*scope, error) {
	sc := newScope(nil, outer)
	if alias != nil {
		qual = identName(alias.Name)
		if len(alias.Columns) > len(cols) {
			return nil, errorf(alias.Pos, "table %q has %d columns available but %d columns specified", qual, len(cols), len(alias.Columns))
		}
	}
	for i, c := range cols {
		c.Table = qual
		if alias != nil && i < len(alias.Columns) {
			c.Name = identName(alias.Columns[i])
		}
		sc.cols = append(sc.cols, scopeCol{Column: c})
	}
	return sc, nil
}

func (b *binder) bindTableExpr(t parser.TableExpr, outer *scope) (Node, *scope, error) {
	switch t := t.(type) {
	case *parser.TableName:
		return b.bindTableName(t, outer)
	case *parser.SubqueryRef:
		if t.Lateral {
			if _, _, on, dep, err := b.bindLateral(t, newScope(nil, outer), outer); err != nil || on != nil || dep != nil {
				if err != nil {
					return nil, nil, err
				}
				return nil, nil, errorf(t.Pos, "LATERAL must follow the FROM items it refers to")
			}
		}
		n, err := b.bindQuery(t.Query, outer)
		if err != nil {
			return nil, nil, err
		}
		sc, err := aliased(n.Columns(), "", t.Alias, outer)
		return n, sc, err
	case *parser.TableFunc:
		if n, fsc, ok, err := b.lateralFunc(t, nil, newScope(nil, outer)); ok || err != nil {
			return n, fsc, err
		}
		n, err := b.bindTableFunc(t)
		if err != nil {
			return nil, nil, err
		}
		alias := t.Alias
		if name := strings.ToLower(t.Name.Last().Name); setReturning(name) && name != "range" && alias != nil && len(alias.Columns) == 0 {
			// a function of one column names it after its alias
			alias = &parser.Alias{Pos: alias.Pos, Name: alias.Name, Columns: []parser.Ident{alias.Name}}
		}
		sc, err := aliased(n.Columns(), strings.ToLower(t.Name.Last().Name), alias, outer)
		return n, sc, err
	case *parser.ParenTable:
		n, sc, err := b.bindTableExpr(t.Table, outer)
		if err != nil || t.Alias == nil {
			return n, sc, err
		}
		var cols []Column
		for _, c := range sc.cols {
			cols = append(cols, c.Column)
		}
		sc, err = aliased(cols, "", t.Alias, outer)
		return n, sc, err
	case *parser.Join:
		return b.bindJoin(t, outer)
	}
	return nil, nil, errorf(t.Position(), "unsupported FROM item %T", t)
}

func (b *binder) bindTableName(t *parser.TableName, outer *scope) (Node, *scope, error) {
	parts := nameParts(t.Name)
	if len(parts) == 1 && t.AsOf == nil {
		// CTEs, innermost first
		for i := len(b.ctes) - 1; i >= 0; i-- {
			c := b.ctes[i]
			if c.name != parts[0] {
				continue
			}
			if c.binding {
				if c.work != nil {
					n, err := b.workScan(c, t.Pos)
					if err != nil {
						return nil, nil, err
					}
					sc, err := aliased(n.Columns(), c.name, t.Alias, outer)
					return n, sc, err
				}
				if c.recursive {
					return nil, nil, errorf(t.Pos, "recursive reference to query %q must be in the second term of a UNION [ALL] at the top of its body", c.name)
				}
				return nil, nil, errorf(t.Pos, "common table expression %q refers to itself; write WITH RECURSIVE", c.name)
			}
			c.binding = true
			saved := b.ctes
			var n Node
			var err error
			if c.recursive {
				b.ctes = b.ctes[:i+1] // a recursive CTE sees itself
				var ok bool
				n, ok, err = b.bindRecursiveCTE(c, t.Pos)
				if err == nil && !ok {
					b.ctes = b.ctes[:i]
					n, err = b.bindQuery(c.query, c.outer)
				}
			} else {
				b.ctes = b.ctes[:i] // a CTE sees only the ones before it
				n, err = b.bindQuery(c.query, c.outer)
			}
			b.ctes = saved
			c.binding = false
			if err != nil {
				return nil, nil, err
			}
			var alias *parser.Alias
			if len(c.cols) > 0 {
				alias = &parser.Alias{Name: parser.Ident{Name: c.name, Quoted: true}, Columns: c.cols}
			}
			sc, err := aliased(n.Columns(), c.name, alias, outer)
			if err != nil {
				return nil, nil, err
			}
			if t.Alias != nil {
				var cols []Column
				for _, c := range sc.cols {
					cols = append(cols, c.Column)
				}
				sc, err = aliased(cols, "", t.Alias, outer)
			}
			return n, sc, err
		}
		if src := b.cat.LookupSource(parts[0]); src != nil {
			n := b.sourceNode(parts[0], src)
			sc, err := aliased(n.Columns(), parts[0], t.Alias, outer)
			return n, sc, err
		}
	}
	if len(parts) == 2 && t.AsOf == nil {
		// a system relation such as pg_catalog.pg_class (a front door's)
		if src := b.cat.LookupSource(parts[0] + "." + parts[1]); src != nil {
			n := b.sourceNode(parts[1], src)
			sc, err := aliased(n.Columns(), parts[1], t.Alias, outer)
			return n, sc, err
		}
	}
	if base, suffix, ok := t.Name.MetadataTable(); ok {
		n, err := b.bindMetadataTable(t, nameParts(base), suffix)
		if err != nil {
			return nil, nil, err
		}
		sc, err := aliased(n.Columns(), parts[len(parts)-1], t.Alias, outer)
		return n, sc, err
	}
	if n, sc, ok, err := b.bindView(t, parts, outer); ok || err != nil {
		return n, sc, err
	}
	ref, err := b.cat.LookupTable(b.ctx, parts)
	if err != nil {
		return nil, nil, atPos(t.Pos, err)
	}
	n, err := b.scanNode(ref, t)
	if err != nil {
		return nil, nil, err
	}
	sc, err := aliased(n.Columns(), parts[len(parts)-1], t.Alias, outer)
	if err == nil && mergeinto.TracksLineage(ref.Table) {
		b.lineageColumns(n, sc)
	}
	return n, sc, err
}

// withLineage appends the row-lineage columns to a file scan's Iceberg
// names and read schema, where the caller reads them beside a v3 table's
// columns.
func withLineage(names []string, fields []arrow.Field) ([]string, []arrow.Field) {
	for _, name := range mergeinto.LineageColumns {
		names = append(names, name)
		fields = append(fields, arrow.Field{Name: name, Type: tInt64, Nullable: true})
	}
	return names, fields
}

// lineageColumns adds the row-lineage columns of a v3 table to its scan
// and scope, as metadata columns: read only when a query names them,
// never part of *. iceberg-go's reader fills them, from the file's own
// values or else from its first_row_id and position and its data
// sequence number.
func (b *binder) lineageColumns(n *Scan, sc *scope) {
	qual := ""
	if len(sc.cols) > 0 {
		qual = sc.cols[0].Table
	}
	for _, name := range mergeinto.LineageColumns {
		c := b.newCol(name, "", tInt64, true)
		n.All = append(n.All, c)
		n.Fields = append(n.Fields, name)
		c.Table = qual
		sc.cols = append(sc.cols, scopeCol{Column: c, meta: true})
	}
	n.Cols = n.All
}

// sourceNode reads a registered source.
func (b *binder) sourceNode(name string, src Source) *SourceScan {
	n := &SourceScan{Name: name, Open: src.Operator}
	needCast := false
	for _, f := range src.Schema().Fields() {
		t := canonical(f.Type)
		needCast = needCast || !arrow.TypeEqual(t, f.Type)
		n.Cols = append(n.Cols, b.newCol(f.Name, "", t, f.Nullable))
	}
	if needCast {
		n.Open = func() (exec.Operator, error) {
			op, err := src.Operator()
			if err != nil {
				return nil, err
			}
			return castOperator(op, n.Cols)
		}
	}
	return n
}

// snapshotFor resolves time travel.
func (b *binder) snapshotFor(ref *TableRef, asOf *parser.AsOf) (*table.Snapshot, error) {
	meta := ref.Table.Metadata()
	if asOf == nil {
		if id, ok := b.pinned[ref.Name]; ok {
			return snapshot.ByID(meta, ref.Name, id)
		}
		return ref.Table.CurrentSnapshot(), nil
	}
	lit, err := b.constValue(asOf.Value, "AS OF")
	if err != nil {
		return nil, err
	}
	if !lit.Value.IsValid() {
		return nil, errorf(asOf.Pos, "time travel to NULL; give a snapshot id or a timestamp")
	}
	switch asOf.Kind {
	case parser.AsOfVersion:
		if sv, ok := lit.Value.(*scalar.String); ok {
			// a branch or tag, as Spark reads them: VERSION AS OF 'audit'
			r, err := snapshot.Ref(meta, ref.Name, string(sv.Value.Bytes()))
			if err != nil {
				return nil, atPos(asOf.Pos, err)
			}
			s, err := snapshot.ByID(meta, ref.Name, r.SnapshotID)
			return s, atPos(asOf.Pos, err)
		}
		c, err := exec.NewCast(lit, tInt64, false)
		if err != nil || !isNumericType(lit.DataType()) || lit.DataType().ID() == arrow.FLOAT32 || lit.DataType().ID() == arrow.FLOAT64 {
			return nil, errorf(asOf.Pos, "FOR VERSION AS OF needs a snapshot id (an integer) or a branch or tag name (a string), not type %s", exec.TypeName(lit.DataType()))
		}
		v, err := evalConst(b.ctx, b.now, c)
		if err != nil {
			return nil, atPos(asOf.Pos, err)
		}
		s, err := snapshot.ByID(meta, ref.Name, v.Value.(*scalar.Int64).Value)
		return s, atPos(asOf.Pos, err)
	default:
		c, err := exec.NewCast(lit, tTimestampTZ, false)
		if err != nil {
			return nil, errorf(asOf.Pos, "FOR TIMESTAMP AS OF needs a timestamp, not type %s", exec.TypeName(lit.DataType()))
		}
		v, err := evalConst(b.ctx, b.now, c)
		if err != nil {
			return nil, atPos(asOf.Pos, err)
		}
		us := int64(v.Value.(*scalar.Timestamp).Value)
		s, err := snapshot.AsOf(meta, ref.Name, time.UnixMicro(us))
		return s, atPos(asOf.Pos, err)
	}
}

// SchemaAt is the table's schema as of snap (the current one for nil).
func SchemaAt(tbl *table.Table, snap *table.Snapshot) *iceberg.Schema {
	meta := tbl.Metadata()
	if snap != nil && snap.SchemaID != nil {
		for _, s := range meta.Schemas() {
			if s.ID == *snap.SchemaID {
				return s
			}
		}
	}
	return meta.CurrentSchema()
}

func (b *binder) scanNode(ref *TableRef, t *parser.TableName) (*Scan, error) {
	var asOf *parser.AsOf
	if t != nil {
		asOf = t.AsOf
	}
	snap, err := b.snapshotFor(ref, asOf)
	if err != nil {
		return nil, err
	}
	// the current snapshot reads with the current schema (ALTER TABLE
	// changes it without a new snapshot); time travel with its own
	isch := SchemaAt(ref.Table, snap)
	if cur := ref.Table.CurrentSnapshot(); snap == nil || (cur != nil && cur.SnapshotID == snap.SnapshotID) {
		isch = ref.Table.Metadata().CurrentSchema()
	}
	asch, err := table.SchemaToArrowSchema(isch, nil, false, false)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", ref.Name, err)
	}
	s := &Scan{Table: ref, Snap: snap}
	for i, f := range asch.Fields() {
		c := b.newCol(f.Name, "", canonical(f.Type), !isch.Fields()[i].Required)
		s.All = append(s.All, c)
		s.Fields = append(s.Fields, f.Name)
	}
	s.Cols = s.All
	return s, nil
}

// sideMarks attaches the joins that compute an outer join condition's
// subqueries (marks, in binding order) to the side whose columns each
// reads: a subquery of one side's columns is a value of that side's row,
// computed before the join as WHERE computes it before filtering. It
// reports false, attaching nothing, when one reads both sides.
func sideMarks(join *Join, lsc, rsc *scope, marks []*Join) bool {
	lIDs, rIDs := map[ColumnID]bool{}, map[ColumnID]bool{}
	for _, c := range lsc.cols {
		lIDs[c.ID] = true
	}
	for _, c := range rsc.cols {
		rIDs[c.ID] = true
	}
	var lm, rm []*Join
	for _, m := range marks {
		used := map[ColumnID]bool{}
		for _, e := range nodeExprs(m) {
			exprCols(e, used)
		}
		for id := range freeCols(m.Right) {
			used[id] = true
		}
		usesL, usesR := refsAnyCol(used, lIDs), refsAnyCol(used, rIDs)
		side := lIDs
		switch {
		case usesL && usesR:
			return false
		case usesR:
			rm, side = append(rm, m), rIDs
		default:
			lm = append(lm, m)
		}
		// a later mark may read this one's value
		for _, c := range m.Right.Columns() {
			side[c.ID] = true
		}
		if m.Mark != nil {
			side[m.Mark.ID] = true
		}
	}
	join.Left = applyMarks(join.Left, lm)
	join.Right = applyMarks(join.Right, rm)
	return true
}

// containsQuery reports whether e holds a subquery.
func containsQuery(e parser.Node) bool {
	found := false
	parser.Inspect(e, func(x parser.Node) bool {
		if _, ok := x.(*parser.Query); ok {
			found = true
		}
		return !found
	})
	return found
}

func (b *binder) bindJoin(j *parser.Join, outer *scope) (_ Node, _ *scope, err error) {
	var join *Join
	inits := len(b.inits)
	l, lsc, err := b.bindTableExpr(j.Left, outer)
	if err != nil {
		return nil, nil, err
	}
	if tf, ok := j.Right.(*parser.TableFunc); ok {
		if n, sc, ok, err := b.lateralJoin(j, tf, l, lsc, outer); ok || err != nil {
			return n, sc, err
		}
	}
	var r Node
	var rsc *scope
	var latOn Expr
	var dep *lateralDep
	if lat, ok := j.Right.(*parser.SubqueryRef); ok && lat.Lateral {
		r, rsc, latOn, dep, err = b.bindLateral(lat, lsc, outer)
	} else {
		r, rsc, err = b.bindTableExpr(j.Right, outer)
	}
	if err != nil {
		return nil, nil, err
	}
	if dep != nil {
		return b.bindDependentJoin(j, l, lsc, r, rsc, latOn, dep, outer)
	}
	defer func() {
		// a LATERAL's correlation joins the ON condition
		if latOn != nil && join != nil {
			if join.On == nil {
				join.On = latOn
			} else {
				join.On = andConj([]Expr{join.On, latOn})
			}
		}
	}()
	kind := exec.JoinInner
	switch j.Kind {
	case parser.LeftJoin:
		kind = exec.JoinLeft
	case parser.RightJoin:
		kind = exec.JoinRight
	case parser.FullJoin:
		kind = exec.JoinFull
	}
	join = &Join{Kind: kind, Left: l, Right: r}
	sc := newScope(nil, outer)
	sc.cols = append(sc.cols, lsc.cols...)
	if err := sc.merge(rsc, j.Right.Position()); err != nil {
		return nil, nil, err
	}
	using := j.Using
	if j.Natural {
		using = nil
		for _, lc := range lsc.cols {
			if lc.hidden || lc.meta {
				continue
			}
			for _, rc := range rsc.cols {
				if !rc.hidden && !rc.meta && strings.EqualFold(lc.Name, rc.Name) {
					using = append(using, parser.Ident{Name: lc.Name, Quoted: true, Pos: j.Pos})
				}
			}
		}
		if len(using) == 0 {
			return join, sc, nil // NATURAL JOIN without common columns is a cross join
		}
	}
	if j.On != nil && kind == exec.JoinInner && containsQuery(j.On) {
		// an inner join's condition filters the cross product, so its
		// subqueries plan as WHERE's do (semi, anti and mark joins)
		n, err := b.bindFilter(join, sc, j.On, "JOIN/ON", "JOIN conditions")
		return n, sc, err
	}
	if j.On != nil {
		var marks []*Join
		on, err := b.bindExpr(j.On, &exprCtx{sc: sc, clause: "JOIN conditions", marks: &marks})
		if err != nil {
			return nil, nil, err
		}
		if len(marks) > 0 {
			if !sideMarks(join, lsc, rsc, marks) {
				if lj, ok := lateralOn(j); ok {
					// bound again from the start, as the lateral form
					b.inits = b.inits[:inits]
					return b.bindJoin(lj, outer)
				}
				if j.Kind == parser.RightJoin && !j.Natural && len(j.Using) == 0 {
					// l RIGHT JOIN r is r LEFT JOIN l, columns put back in order
					swapped := &parser.Join{Pos: j.Pos, Kind: parser.LeftJoin, Left: j.Right, Right: j.Left, On: j.On}
					if lj, ok := lateralOn(swapped); ok {
						b.inits = b.inits[:inits]
						return b.bindSwapped(lj, j.Right, outer)
					}
				}
				if !j.Natural && len(j.Using) == 0 && !volatileCall(j.On) {
					b.inits = b.inits[:inits]
					if n, sc, ok, err := b.bindOuterAsUnion(j, outer); ok || err != nil {
						return n, sc, err
					}
				}
				return nil, nil, errorf(j.On.Position(), "a subquery in the condition of an outer join that calls a volatile function and reads columns of both sides is not supported yet; compute it in WHERE or in a derived table")
			}
		}
		if !arrow.TypeEqual(on.Type(), tBool) && on.Type().ID() != arrow.NULL {
			return nil, nil, errorf(j.On.Position(), "argument of JOIN/ON must be type boolean, not type %s", exec.TypeName(on.Type()))
		}
		join.On = boolNull(on)
		return join, sc, nil
	}
	if len(using) == 0 {
		return join, sc, nil
	}
	// USING: equalities, then a projection that shows each USING column
	// once (first), hiding the right-hand copy from unqualified use.
	var conds []Expr
	var merged []Expr
	var mergedCols []Column
	usedL, usedR := map[ColumnID]bool{}, map[ColumnID]bool{}
	for _, u := range using {
		lc, err := findUnique(lsc, u, "left")
		if err != nil {
			return nil, nil, err
		}
		rc, err := findUnique(rsc, u, "right")
		if err != nil {
			return nil, nil, err
		}
		lref := &ColRef{ID: lc.ID, Typ: lc.Type, Name: displayCol(lc.Column)}
		rref := &ColRef{ID: rc.ID, Typ: rc.Type, Name: displayCol(rc.Column)}
		eq, err := b.call(u.Pos, "=", lref, rref)
		if err != nil {
			return nil, nil, err
		}
		conds = append(conds, eq)
		var m Expr = lref
		switch kind {
		case exec.JoinRight:
			m = rref
		case exec.JoinFull:
			m, err = b.coalesce(lref, rref)
			if err != nil {
				return nil, nil, atPos(u.Pos, err)
			}
		}
		merged = append(merged, m)
		mergedCols = append(mergedCols, b.newCol(lc.Name, "", m.Type(), true))
		usedL[lc.ID], usedR[rc.ID] = true, true
	}
	join.On = andAll(b, conds)
	proj := &Project{Input: join}
	out := newScope(nil, outer)
	for i, m := range merged {
		proj.Exprs = append(proj.Exprs, m)
		proj.Cols = append(proj.Cols, mergedCols[i])
		out.cols = append(out.cols, scopeCol{Column: mergedCols[i]})
	}
	for _, c := range join.Columns() {
		proj.Exprs = append(proj.Exprs, &ColRef{ID: c.ID, Typ: c.Type, Name: c.Name})
		proj.Cols = append(proj.Cols, c)
	}
	for _, c := range sc.cols {
		c.hidden = c.hidden || usedL[c.ID] || usedR[c.ID]
		out.cols = append(out.cols, c)
	}
	return proj, out, nil
}

func findUnique(sc *scope, name parser.Ident, side string) (scopeCol, error) {
	var found []scopeCol
	for _, c := range sc.cols {
		if !c.hidden && sameName(name, c.Name) {
			found = append(found, c)
		}
	}
	if len(found) == 0 {
		return scopeCol{}, errorf(name.Pos, "column %q specified in USING clause does not exist in %s table", name.Name, side)
	}
	if len(found) > 1 {
		return scopeCol{}, errorf(name.Pos, "common column name %q appears more than once in %s table", name.Name, side)
	}
	return found[0], nil
}

func andAll(b *binder, es []Expr) Expr {
	if len(es) == 0 {
		return nil
	}
	out := es[0]
	for _, e := range es[1:] {
		x, err := b.call(parser.Pos{}, "and", out, e)
		if err != nil {
			panic(fmt.Sprintf("plan: AND of booleans failed: %v (broken invariant)", err))
		}
		out = x
	}
	return out
}

// tableFuncArgs splits positional and named arguments, binding them as
// constants.
func (b *binder) tableFuncArgs(t *parser.TableFunc) ([]*exec.Literal, map[string]*exec.Literal, error) {
	var pos []*exec.Literal
	named := map[string]*exec.Literal{}
	for _, a := range t.Args {
		if na, ok := a.(*parser.NamedArg); ok {
			v, err := b.constValue(na.Value, strings.ToLower(t.Name.Last().Name))
			if err != nil {
				return nil, nil, err
			}
			named[strings.ToLower(na.Name.Name)] = v
			continue
		}
		v, err := b.constValue(a, strings.ToLower(t.Name.Last().Name))
		if err != nil {
			return nil, nil, err
		}
		pos = append(pos, v)
	}
	return pos, named, nil
}

func litInt(b *binder, l *exec.Literal, pos parser.Pos, fn string) (int64, error) {
	if !l.Value.IsValid() {
		return 0, errorf(pos, "%s: arguments must not be NULL", fn)
	}
	c, err := exec.NewCast(l, tInt64, false)
	if err != nil {
		return 0, errorf(pos, "%s: arguments must be integers, not type %s", fn, exec.TypeName(l.DataType()))
	}
	v, err := evalConst(b.ctx, b.now, c)
	if err != nil {
		return 0, atPos(pos, err)
	}
	return v.Value.(*scalar.Int64).Value, nil
}

func litString(l *exec.Literal, pos parser.Pos, fn string) (string, error) {
	if !l.Value.IsValid() || l.DataType().ID() != arrow.STRING {
		return "", errorf(pos, "%s: the file argument must be a string", fn)
	}
	return l.Value.(*scalar.String).String(), nil
}

func (b *binder) bindTableFunc(t *parser.TableFunc) (Node, error) {
	name := strings.ToLower(t.Name.Last().Name)
	pos, named, err := b.tableFuncArgs(t)
	if err != nil {
		return nil, err
	}
	switch name {
	case "range", "generate_series":
		if len(named) > 0 || len(pos) < 1 || len(pos) > 3 {
			return nil, errorf(t.Pos, "%s takes 1 to 3 positional arguments: (stop), (start, stop) or (start, stop, step)", name)
		}
		if isTimeArg(pos[0]) || (len(pos) > 1 && isTimeArg(pos[1])) {
			return b.timeSeries(name, pos, t.Pos)
		}
		var vals []int64
		for _, l := range pos {
			v, err := litInt(b, l, t.Pos, name)
			if err != nil {
				return nil, err
			}
			vals = append(vals, v)
		}
		start, stop, step := int64(0), vals[0], int64(1)
		if len(vals) >= 2 {
			start, stop = vals[0], vals[1]
		}
		if len(vals) == 3 {
			step = vals[2]
		}
		if len(vals) == 1 && name == "generate_series" {
			return nil, errorf(t.Pos, "generate_series takes (start, stop[, step])")
		}
		col := name
		if name == "range" {
			col = "range"
		}
		if _, err := exec.NewSeries(name, col, start, stop, step, name == "generate_series"); err != nil {
			return nil, atPos(t.Pos, err)
		}
		inclusive := name == "generate_series"
		return &SourceScan{
			Name: fmt.Sprintf("%s(%d, %d, %d)", name, start, stop, step),
			Cols: []Column{b.newCol(col, "", tInt64, false)},
			Open: func() (exec.Operator, error) { return exec.NewSeries(name, col, start, stop, step, inclusive) },
		}, nil
	case "read_csv", "read_csv_auto":
		if len(pos) != 1 {
			return nil, errorf(t.Pos, "read_csv takes one file argument")
		}
		path, err := litString(pos[0], t.Pos, name)
		if err != nil {
			return nil, err
		}
		opts := scan.DefaultCSVOptions()
		for k, v := range named {
			switch k {
			case "header":
				bv, ok := v.Value.(*scalar.Boolean)
				if !ok {
					return nil, errorf(t.Pos, "read_csv: header must be a boolean")
				}
				opts.Header, opts.SniffHeader = bv.Value, false
			case "delim", "sep", "delimiter":
				s, err := litString(v, t.Pos, name)
				if err != nil || len(s) != 1 {
					return nil, errorf(t.Pos, "read_csv: the delimiter must be one character")
				}
				opts.Delimiter = rune(s[0])
			case "quote", "escape":
				s, err := litString(v, t.Pos, name)
				if err != nil || len(s) != 1 || s[0] > 0x7f {
					return nil, errorf(t.Pos, "read_csv: %s must be one ASCII character", k)
				}
				if k == "quote" {
					opts.Quote = rune(s[0])
				} else {
					opts.Escape = rune(s[0])
				}
			case "ignore_errors":
				bv, ok := v.Value.(*scalar.Boolean)
				if !ok {
					return nil, errorf(t.Pos, "read_csv: ignore_errors must be a boolean")
				}
				opts.IgnoreErrors = bv.Value
			default:
				return nil, errorf(t.Pos, "read_csv: unknown option %q; known options are header, delim, quote, escape and ignore_errors", k)
			}
		}
		return b.readerNode(name+"('"+path+"')", func(ctx context.Context) (array.RecordReader, error) {
			o := opts
			if o.IgnoreErrors {
				// the rows skipped go to the session's csv_rejects
				var stmt int64
				if o.Rejects, stmt = scan.CSVRejectsFrom(ctx); o.Rejects != nil {
					o.Rejects.Begin(stmt)
				}
			}
			return scan.OpenCSV(path, o)
		})
	case "pg_get_keywords":
		// PostgreSQL's catalog of keywords, which clients read to know what
		// to quote: skade's reserved words (the others are not keywords)
		if len(pos) > 0 || len(named) > 0 {
			return nil, errorf(t.Pos, "pg_get_keywords takes no arguments")
		}
		v := &Values{Cols: []Column{b.newCol("word", "", tString, false), b.newCol("catcode", "", tString, false),
			b.newCol("barelabel", "", tBool, false), b.newCol("catdesc", "", tString, false), b.newCol("baredesc", "", tString, false)}}
		for _, w := range parser.ReservedWords() {
			row := []any{w, "R", false, "reserved", "requires AS"}
			var exprs []Expr
			for _, x := range row {
				l, _ := exec.NewLiteral(x)
				exprs = append(exprs, constLit(l))
			}
			v.Rows = append(v.Rows, exprs)
		}
		return v, nil
	case "table_changes":
		return b.tableChanges(t, pos, named)
	case "iceberg_scan":
		if len(pos) != 1 || len(named) > 0 {
			return nil, errorf(t.Pos, "iceberg_scan takes one argument: a table's metadata file or directory")
		}
		loc, err := litString(pos[0], t.Pos, name)
		if err != nil {
			return nil, err
		}
		ext, ok := b.cat.(ExternalTables)
		if !ok {
			return nil, errorf(t.Pos, "iceberg_scan is not available here")
		}
		tbl, err := ext.OpenIcebergTable(b.ctx, loc)
		if err != nil {
			return nil, atPos(t.Pos, err)
		}
		return b.scanNode(&TableRef{Name: "iceberg_scan('" + loc + "')", Ident: tbl.Identifier(), Table: tbl}, nil)
	case "read_parquet", "parquet_scan":
		if len(pos) != 1 || len(named) > 0 {
			return nil, errorf(t.Pos, "read_parquet takes one file or glob argument")
		}
		glob, err := litString(pos[0], t.Pos, name)
		if err != nil {
			return nil, err
		}
		return b.readerNode(name+"('"+glob+"')", func(ctx context.Context) (array.RecordReader, error) { return scan.OpenParquet(ctx, glob) })
	}
	return nil, errorf(t.Pos, "table function %s does not exist; the table functions are range, generate_series, read_csv, read_parquet, iceberg_scan and table_changes", name)
}

// readerNode opens the reader once at bind time for its schema, then
// again for each execution.
func (b *binder) readerNode(name string, open func(context.Context) (array.RecordReader, error)) (Node, error) {
	rdr, err := open(b.ctx)
	if err != nil {
		return nil, err
	}
	schema := rdr.Schema()
	rdr.Release()
	n := &SourceScan{Name: name}
	needCast := false
	for _, f := range schema.Fields() {
		t := canonical(f.Type)
		needCast = needCast || !arrow.TypeEqual(t, f.Type)
		n.Cols = append(n.Cols, b.newCol(f.Name, "", t, true))
	}
	ctx := b.ctx
	n.Open = func() (exec.Operator, error) {
		src := exec.NewReaderSource(name, schema, func(context.Context) (array.RecordReader, error) { return open(ctx) })
		if !needCast {
			return src, nil
		}
		return castOperator(src, n.Cols)
	}
	return n, nil
}

// castOperator converts an operator's columns to canonical types
// (LargeString to String, nanosecond timestamps to microseconds, ...).
func castOperator(op exec.Operator, cols []Column) (exec.Operator, error) {
	return &conform{Operator: op, schema: schemaOf(cols)}, nil
}

// conform casts each batch of its input to schema with arrow's compute
// casts, which cover the storage conversions exec's SQL casts do not.
type conform struct {
	exec.Operator
	schema *arrow.Schema
}

func (c *conform) Schema() *arrow.Schema     { return c.schema }
func (c *conform) Children() []exec.Operator { return []exec.Operator{c.Operator} }
func (c *conform) String() string            { return "Conform" }
func (c *conform) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := c.Operator.Next(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Release()
	cols := make([]arrow.Array, b.NumCols())
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, f := range c.schema.Fields() {
		a := b.Column(i)
		if arrow.TypeEqual(a.DataType(), f.Type) {
			a.Retain()
			cols[i] = a
			continue
		}
		opts := compute.SafeCastOptions(f.Type)
		// digits past the microsecond are cut, as Iceberg's writers cut them
		opts.AllowTimeTruncate = true
		if cols[i], err = compute.CastArray(ctx, a, opts); err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
	}
	return array.NewRecordBatch(c.schema, cols, b.NumRows()), nil
}

func (b *binder) bindMetadataTable(t *parser.TableName, base []string, suffix string) (Node, error) {
	ref, err := b.cat.LookupTable(b.ctx, base)
	if err != nil {
		return nil, atPos(t.Pos, err)
	}
	return b.metadataTable(t, ref, strings.ToLower(suffix))
}

func isTimeArg(l *exec.Literal) bool {
	id := l.DataType().ID()
	return id == arrow.TIMESTAMP || id == arrow.DATE32
}

// timeSeries binds range/generate_series over timestamps with an
// interval step.
func (b *binder) timeSeries(name string, pos []*exec.Literal, at parser.Pos) (Node, error) {
	if len(pos) != 3 {
		return nil, errorf(at, "%s over timestamps takes (start, stop, step interval)", name)
	}
	typ := tTimestamp
	for _, l := range pos[:2] {
		if ts, ok := l.DataType().(*arrow.TimestampType); ok && ts.TimeZone != "" {
			typ = tTimestampTZ
		}
	}
	var bounds [2]time.Time
	for i, l := range pos[:2] {
		if !l.Value.IsValid() {
			return nil, errorf(at, "%s: arguments must not be NULL", name)
		}
		c, err := exec.NewCast(l, typ, false)
		if err != nil {
			return nil, errorf(at, "%s: start and stop must both be timestamps: %v", name, err)
		}
		v, err := evalConst(b.ctx, b.now, c)
		if err != nil {
			return nil, atPos(at, err)
		}
		bounds[i] = time.UnixMicro(int64(v.Value.(*scalar.Timestamp).Value)).UTC()
	}
	if !pos[2].Value.IsValid() {
		return nil, errorf(at, "%s: arguments must not be NULL", name)
	}
	iv, ok := pos[2].Value.(*scalar.MonthDayNanoInterval)
	if !ok {
		return nil, errorf(at, "%s over timestamps needs an interval step, not type %s", name, exec.TypeName(pos[2].DataType()))
	}
	inclusive := name == "generate_series"
	if _, err := exec.NewTimeSeries(name, name, bounds[0], bounds[1], iv.Value, inclusive, typ); err != nil {
		return nil, atPos(at, err)
	}
	start, stop, step := bounds[0], bounds[1], iv.Value
	return &SourceScan{
		Name: fmt.Sprintf("%s(%s, %s)", name, start.Format(time.RFC3339), stop.Format(time.RFC3339)),
		Cols: []Column{b.newCol(name, "", typ, false)},
		Open: func() (exec.Operator, error) {
			return exec.NewTimeSeries(name, name, start, stop, step, inclusive, typ)
		},
	}, nil
}

// bindLateral binds LATERAL (subquery) that may refer to the columns of
// left (the FROM items before it). It is decorrelated when the references
// are equalities or other conditions in a WHERE clause over plain rows (no
// aggregation or LIMIT in between): they become the join condition. Other
// shapes (GROUP BY, ORDER BY … LIMIT, DISTINCT, window functions over the
// outer row) become a dependent join (delim.go), returned as dep: the
// caller joins left to n as dep says (dependentLateralJoin).
func (b *binder) bindLateral(t *parser.SubqueryRef, left *scope, outer *scope) (Node, *scope, Expr, *lateralDep, error) {
	lsc := &scope{cols: left.cols, parent: outer}
	n, err := b.bindQuery(t.Query, lsc)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	own := len(n.Columns())
	var on Expr
	var dep *lateralDep
	if free := freeCols(n); len(free) > 0 {
		in, pulled, ok := pullCorrelated(n)
		if ok && len(freeCols(in)) == 0 {
			n, on = in, andConj(pulled)
		} else {
			if n, on, dep, err = b.lateralDependent(n, left, lsc, t.Pos); err != nil {
				return nil, nil, nil, nil, err
			}
		}
	}
	cols := n.Columns()
	if dep != nil && dep.post != nil {
		cols = append(append([]Column(nil), dep.postCols...), cols...)
	}
	sc, err := aliased(cols, "", t.Alias, outer)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	// the extra columns pullCorrelated or the dependent join exposed stay
	// hidden
	// (own: the subquery's columns before either added any, which with
	// SELECT * is all its visible ones)
	visible := min(visibleCols(t, n), own)
	for i := range sc.cols {
		if i >= visible {
			// not even by a qualified name (a hidden column still answers
			// to one): the subquery's own column of that name is meant
			sc.cols[i].hidden = true
			sc.cols[i].Table, sc.cols[i].Name = "", lateralExtra
		}
	}
	return n, sc, on, dep, nil
}

// lateralExtra names the extra columns a lateral subquery's correlation
// exposes, a name no query can write.
const lateralExtra = "#lateral"

// bindDependentJoin binds left JOIN LATERAL (…) r, r a dependent join.
func (b *binder) bindDependentJoin(j *parser.Join, l Node, lsc *scope, r Node, rsc *scope, on Expr, dep *lateralDep, outer *scope) (Node, *scope, error) {
	if j.Kind != parser.InnerJoin && j.Kind != parser.LeftJoin && j.Kind != parser.CrossJoin {
		return nil, nil, errorf(j.Pos, "the combining JOIN type must be INNER or LEFT for a LATERAL reference")
	}
	if j.Natural || len(j.Using) > 0 {
		return nil, nil, errorf(j.Pos, "this LATERAL subquery is not supported yet with NATURAL or USING; join ON its columns")
	}
	sc := newScope(nil, outer)
	sc.cols = append(sc.cols, lsc.cols...)
	if err := sc.merge(rsc, j.Right.Position()); err != nil {
		return nil, nil, err
	}
	var cond Expr
	if !onTrue(j.On) {
		if containsQuery(j.On) {
			return nil, nil, errorf(j.On.Position(), "a subquery in the condition of a join to this LATERAL subquery is not supported yet; compute it in WHERE")
		}
		c, err := b.bindExpr(j.On, &exprCtx{sc: sc, clause: "JOIN conditions"})
		if err != nil {
			return nil, nil, err
		}
		if !arrow.TypeEqual(c.Type(), tBool) && c.Type().ID() != arrow.NULL {
			return nil, nil, errorf(j.On.Position(), "argument of JOIN/ON must be type boolean, not type %s", exec.TypeName(c.Type()))
		}
		cond = c
	}
	if dep.post != nil && cond != nil && j.Kind == parser.LeftJoin {
		return nil, nil, errorf(j.On.Position(), "LEFT JOIN to this LATERAL aggregate supports only ON TRUE yet; it has a row for every left row, so an inner JOIN … ON or a WHERE says the same")
	}
	n, err := b.dependentLateralJoin(l, r, on, dep, cond, j.Kind == parser.LeftJoin, j.Pos)
	if err != nil {
		return nil, nil, err
	}
	return n, sc, nil
}

// lateralDep is a LATERAL subquery planned as a dependent join: left
// join the FROM items before it to the subquery's rows per outer value
// (Delim), and Mark, TRUE on every subquery row, tells the rows that
// matched (an inner LATERAL keeps only those).
type lateralDep struct {
	delim *Delim
	mark  Column
	// post, for an aggregate without GROUP BY, is its select list,
	// computed above the left join as postCols (every outer row has its
	// one row; mark is unset)
	post     []Expr
	postCols []Column
}

// lateralDependent rewrites the LATERAL subquery n, which reads columns of
// left, into a dependent join: n over D, the distinct values of those
// columns, with the columns that carry them and a match marker after n's
// own. on joins them to left's columns.
func (b *binder) lateralDependent(n Node, left, lsc *scope, pos parser.Pos) (Node, Expr, *lateralDep, error) {
	refuse := func(why string) error {
		return errorf(pos, "this LATERAL subquery is not supported yet: %s", why)
	}
	d, ok := b.newDependent(n, lsc)
	if !ok {
		return nil, nil, nil, refuse("it reads a column it cannot see")
	}
	mine := map[ColumnID]bool{}
	for _, c := range left.cols {
		mine[c.ID] = true
	}
	for _, o := range d.outer {
		if !mine[o.ID] {
			return nil, nil, nil, refuse("it reads a column of an enclosing query as well")
		}
	}
	var r Node
	var keys []Column
	dep := &lateralDep{}
	var err error
	if isScalarAgg(stripProject(n)) {
		r, keys, err = b.lateralScalarAgg(d, n, dep)
	} else {
		r, keys, err = b.lateralRows(d, n, dep)
	}
	if err != nil {
		var nd errNotDecorrelated
		if errors.As(err, &nd) {
			return nil, nil, nil, refuse(nd.what)
		}
		return nil, nil, nil, err
	}
	on, delim, err := d.joinOn(keys)
	if err != nil {
		return nil, nil, nil, err
	}
	dep.delim = delim
	return r, on, dep, nil
}

// lateralRows is lateralDependent for a subquery of any number of rows
// per outer row: n over D, its columns then the outer values (keys) and
// the match marker (dep.mark).
func (b *binder) lateralRows(d *dependent, n Node, dep *lateralDep) (Node, []Column, error) {
	q, dc, err := d.push(n)
	if err != nil {
		return nil, nil, err
	}
	cols := append(append([]Column(nil), n.Columns()...), dc...)
	t, _ := exec.NewLiteral(true)
	dep.mark = b.newCol("lateral_match", "", tBool, true)
	return &Project{Input: q, Exprs: append(colRefs(cols), constLit(t)), Cols: append(cols, dep.mark)}, dc, nil
}

// lateralScalarAgg is lateralDependent for an aggregate without GROUP BY,
// which yields one row per outer row even where no row matches: the
// aggregates grouped by the outer values are left joined, and the
// subquery's select list is computed above the join (dep.post), a count
// of no rows coalesced to 0.
func (b *binder) lateralScalarAgg(d *dependent, n Node, dep *lateralDep) (Node, []Column, error) {
	agg := stripProject(n).(*Aggregate)
	exprs, outCols := colRefs(agg.Columns()), agg.Columns()
	if p, ok := n.(*Project); ok {
		exprs, outCols = p.Exprs, p.Cols
	}
	g, keys, subst, err := d.groupScalarAgg(agg)
	if err != nil {
		return nil, nil, err
	}
	dep.post, dep.postCols = make([]Expr, len(exprs)), outCols
	for i, e := range exprs {
		x, ok := substitute(e, subst)
		if !ok {
			return nil, nil, errNotDecorrelated{"its select list cannot be computed above the join"}
		}
		dep.post[i] = x
	}
	return g, keys, nil
}

// onTrue reports whether a join condition is absent or the literal TRUE.
func onTrue(on parser.Expr) bool {
	lit, isLit := on.(*parser.Literal)
	return on == nil || isLit && lit.Kind == parser.LitBool && lit.Value == "true"
}

// dependentLateralJoin joins left to a dependent LATERAL subquery r: a left
// dependent join on the outer values, with cond (the JOIN's ON, or nil)
// checked per pair; an inner join keeps the rows that matched.
func (b *binder) dependentLateralJoin(left, r Node, on Expr, dep *lateralDep, cond Expr, leftJoin bool, pos parser.Pos) (Node, error) {
	join := &Join{Kind: exec.JoinLeft, Left: left, Right: r, On: on, Residual: cond, Delim: dep.delim}
	if dep.post != nil {
		// one row per outer row: the select list over the left join,
		// then the join condition as a filter (refused for LEFT JOIN by
		// the caller unless it is absent)
		join.Residual = nil
		cols := join.Columns()
		var out Node = &Project{Input: join, Exprs: append(colRefs(cols), dep.post...), Cols: append(cols, dep.postCols...)}
		if cond != nil {
			out = &Filter{Input: out, Pred: cond}
		}
		return out, nil
	}
	if leftJoin {
		return join, nil
	}
	matched, err := b.call(pos, "is_not_null", colRef(dep.mark))
	if err != nil {
		return nil, err
	}
	return &Filter{Input: join, Pred: matched}, nil
}

// visibleCols is the number of the subquery's own select-list columns.
func visibleCols(t *parser.SubqueryRef, n Node) int {
	if sel, ok := t.Query.Body.(*parser.Select); ok {
		star := false
		for _, it := range sel.Items {
			if _, isStar := it.Expr.(*parser.Star); isStar {
				star = true
			}
		}
		if !star {
			return len(sel.Items)
		}
	}
	return len(n.Columns())
}

// maxViewDepth bounds views defined over views, which also stops a view
// that (through others) names itself.
const maxViewDepth = 32

// bindView binds a view name as the subquery it stands for, parsed from
// the text the catalog holds and bound afresh (it sees the tables' current
// data, and none of the query's CTEs), its columns named as the view was
// created. ok is false when the name is no view.
func (b *binder) bindView(t *parser.TableName, parts []string, outer *scope) (Node, *scope, bool, error) {
	views, isViews := b.cat.(Views)
	if !isViews {
		return nil, nil, false, nil
	}
	text, cols, ok, err := views.LookupView(b.ctx, parts)
	if err != nil || !ok {
		return nil, nil, ok, atPos(t.Pos, err)
	}
	name := strings.Join(parts, ".")
	if t.AsOf != nil {
		return nil, nil, true, errorf(t.Pos, "view %s cannot be read with time travel; time travel the tables it reads", name)
	}
	if b.viewDepth >= maxViewDepth {
		return nil, nil, true, errorf(t.Pos, "view %s: views nest more than %d deep (does a view name itself?)", name, maxViewDepth)
	}
	stmt, err := parser.ParseOne(text)
	q, isQuery := stmt.(*parser.Query)
	if err != nil || !isQuery {
		return nil, nil, true, errorf(t.Pos, "view %s: its stored query does not parse (%v); recreate it with CREATE OR REPLACE VIEW", name, err)
	}
	saved := b.ctes
	b.ctes = nil
	b.viewDepth++
	n, err := b.bindQuery(q, nil)
	b.viewDepth--
	b.ctes = saved
	if err != nil {
		return nil, nil, true, atPos(t.Pos, fmt.Errorf("view %s: %w", name, err))
	}
	if len(cols) != len(n.Columns()) {
		return nil, nil, true, errorf(t.Pos, "view %s was created with %d columns, and its query now yields %d (a table it reads changed); recreate it with CREATE OR REPLACE VIEW", name, len(cols), len(n.Columns()))
	}
	alias := &parser.Alias{Pos: t.Pos, Name: parser.Ident{Name: parts[len(parts)-1], Quoted: true}}
	for _, c := range cols {
		alias.Columns = append(alias.Columns, parser.Ident{Name: c, Quoted: true})
	}
	sc, err := aliased(n.Columns(), "", alias, outer)
	if err != nil || t.Alias == nil {
		return n, sc, true, err
	}
	var named []Column
	for _, c := range sc.cols {
		named = append(named, c.Column)
	}
	sc, err = aliased(named, "", t.Alias, outer)
	return n, sc, true, err
}

// bindSwapped binds swapped, a LEFT join whose left side is right (the
// right side of the RIGHT join it stands for), and puts the columns of
// the original left side first again.
func (b *binder) bindSwapped(swapped *parser.Join, right parser.TableExpr, outer *scope) (Node, *scope, error) {
	inits := len(b.inits)
	_, rsc, err := b.bindTableExpr(right, outer)
	if err != nil {
		return nil, nil, err
	}
	b.inits = b.inits[:inits]
	nr := len(rsc.cols)
	n, sc, err := b.bindJoin(swapped, outer)
	if err != nil {
		return nil, nil, err
	}
	cols := append(append([]scopeCol(nil), sc.cols[nr:]...), sc.cols[:nr]...)
	proj := &Project{Input: n}
	out := newScope(nil, outer)
	for _, c := range cols {
		proj.Exprs = append(proj.Exprs, &ColRef{ID: c.ID, Typ: c.Type, Name: c.Name})
		proj.Cols = append(proj.Cols, c.Column)
		out.cols = append(out.cols, c)
	}
	return proj, out, nil
}

// bindOuterAsUnion binds j, an outer join l LEFT|RIGHT|FULL JOIN r ON c
// where c holds a subquery that reads both sides and the lateral form
// does not apply, as the union of its parts: the pairs c holds for, then
// (LEFT, FULL) the l rows no r row meets, NULLs for r's columns, then
// (RIGHT, FULL) the r rows no l row meets, NULLs for l's columns:
//
//	l JOIN r ON c
//	UNION ALL SELECT l.*, NULL, … FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE c)
//	UNION ALL SELECT NULL, …, r.* FROM r WHERE NOT EXISTS (SELECT 1 FROM l WHERE c)
//
// c is evaluated by each part, so it must not call a volatile function
// (the caller checks). The join's scope keeps l's and r's visible
// columns, under their names; false (and no error) when the parts'
// columns do not line up, which the caller reports as unsupported.
func (b *binder) bindOuterAsUnion(j *parser.Join, outer *scope) (Node, *scope, bool, error) {
	visible := func(sc *scope) []scopeCol {
		var out []scopeCol
		for _, c := range sc.cols {
			if !c.hidden && !c.meta {
				out = append(out, c)
			}
		}
		return out
	}
	pairs, psc, err := b.bindJoin(&parser.Join{Pos: j.Pos, Kind: parser.InnerJoin, Left: j.Left, Right: j.Right, On: j.On}, outer)
	if err != nil {
		return nil, nil, false, err
	}
	cols := visible(psc) // l's, then r's
	pos := j.On.Position()
	// unmatched binds the rows of side that no row of other meets, with
	// the columns it shows
	unmatched := func(side, other parser.TableExpr) (Node, []scopeCol, error) {
		sub := &parser.SubqueryRef{Pos: side.Position(), Alias: &parser.Alias{Pos: pos, Name: parser.Ident{Pos: pos, Name: unmatchedAlias, Quoted: true}},
			Query: &parser.Query{Pos: pos, Body: &parser.Select{Pos: pos,
				Items: []*parser.SelectItem{{Pos: pos, Expr: &parser.Star{Pos: pos}}},
				From:  []parser.TableExpr{side},
				Where: &parser.UnaryExpr{Pos: pos, Op: parser.OpNot, X: &parser.Exists{Pos: pos, Query: &parser.Query{Pos: pos, Body: &parser.Select{Pos: pos,
					Items: []*parser.SelectItem{{Pos: pos, Expr: &parser.Literal{Pos: pos, Kind: parser.LitInteger, Value: "1"}}},
					From:  []parser.TableExpr{other}, Where: j.On}}}}}}}
		node, sc, err := b.bindTableExpr(sub, outer)
		if err != nil {
			return nil, nil, err
		}
		return node, visible(sc), nil
	}
	// lines reports whether got are the columns cols shows from from on
	lines := func(got []scopeCol, from int) bool {
		if from < 0 || from+len(got) > len(cols) {
			return false
		}
		for i, c := range got {
			want := cols[from+i]
			if !strings.EqualFold(c.Name, want.Name) || !arrow.TypeEqual(c.Type, want.Type) {
				return false
			}
		}
		return true
	}
	var lNode, rNode Node
	var lCols, rCols []scopeCol
	if j.Kind == parser.LeftJoin || j.Kind == parser.FullJoin {
		if lNode, lCols, err = unmatched(j.Left, j.Right); err != nil {
			return nil, nil, false, err
		}
	}
	if j.Kind == parser.RightJoin || j.Kind == parser.FullJoin {
		if rNode, rCols, err = unmatched(j.Right, j.Left); err != nil {
			return nil, nil, false, err
		}
	}
	// where r's columns start among cols: after l's, which a part that
	// reads l shows, or before r's
	nl := len(lCols)
	if lNode == nil {
		nl = len(cols) - len(rCols)
	}
	if lNode != nil && !lines(lCols, 0) || rNode != nil && (!lines(rCols, nl) || nl+len(rCols) != len(cols)) {
		return nil, nil, false, nil
	}
	// part projects node's columns into the union's order: own at from,
	// NULLs elsewhere
	part := func(node Node, own []Column, from int) Node {
		p := &Project{Input: node}
		for i, c := range cols {
			var e Expr
			if i >= from && i < from+len(own) {
				e = colRef(own[i-from])
			} else {
				e = constLit(exec.NewNullLiteral(c.Type))
			}
			p.Exprs, p.Cols = append(p.Exprs, e), append(p.Cols, b.newCol(c.Name, c.Table, c.Type, true))
		}
		return p
	}
	columns := func(sc []scopeCol) []Column {
		out := make([]Column, len(sc))
		for i, c := range sc {
			out[i] = c.Column
		}
		return out
	}
	var u Node = part(pairs, columns(cols), 0)
	union := func(n Node) {
		var uc []Column
		for _, c := range cols {
			uc = append(uc, b.newCol(c.Name, c.Table, c.Type, true))
		}
		u = &SetOp{Op: "union", All: true, Left: u, Right: n, Cols: uc}
	}
	if lNode != nil {
		union(part(lNode, columns(lCols), 0))
	}
	if rNode != nil {
		union(part(rNode, columns(rCols), nl))
	}
	out := newScope(nil, outer)
	for i, c := range u.Columns() {
		out.cols = append(out.cols, scopeCol{Column: Column{ID: c.ID, Name: cols[i].Name, Table: cols[i].Table, Type: c.Type, Nullable: true}})
	}
	return u, out, true, nil
}

// unmatchedAlias names the derived tables bindOuterAsUnion makes, a name
// no query can write.
const unmatchedAlias = "#unmatched"

// volatileCall reports whether e calls a function whose value changes
// from call to call.
func volatileCall(e parser.Node) bool {
	found := false
	parser.Inspect(e, func(x parser.Node) bool {
		if f, ok := x.(*parser.FuncCall); ok && volatileFuncs[strings.ToLower(f.Name.Last().Name)] {
			found = true
		}
		return !found
	})
	return found
}

// lateralOn rewrites l LEFT JOIN r ON c, where c holds a subquery that
// reads both sides, as the same join in its lateral form,
//
//	l LEFT JOIN LATERAL (SELECT * FROM r WHERE c) AS r ON TRUE
//
// whose dependent join plans any correlation: r's rows that meet c for an
// l row are that row's matches, and an l row with none keeps NULLs. r must
// be a table or an aliased subquery, so that the derived table keeps its
// name and columns; false otherwise.
func lateralOn(j *parser.Join) (*parser.Join, bool) {
	if j.Kind != parser.LeftJoin || j.Natural || len(j.Using) > 0 || j.On == nil {
		return nil, false
	}
	var alias parser.Ident
	switch r := j.Right.(type) {
	case *parser.TableName:
		alias = r.Name.Last()
		if r.Alias != nil {
			if len(r.Alias.Columns) > 0 {
				return nil, false
			}
			alias = r.Alias.Name
		}
	case *parser.SubqueryRef:
		if r.Lateral || r.Alias == nil || len(r.Alias.Columns) > 0 {
			return nil, false
		}
		alias = r.Alias.Name
	default:
		return nil, false
	}
	pos := j.On.Position()
	sub := &parser.SubqueryRef{Pos: j.Right.Position(), Lateral: true, Alias: &parser.Alias{Pos: pos, Name: alias},
		Query: &parser.Query{Pos: pos, Body: &parser.Select{Pos: pos,
			Items: []*parser.SelectItem{{Pos: pos, Expr: &parser.Star{Pos: pos}}},
			From:  []parser.TableExpr{j.Right}, Where: j.On}}}
	return &parser.Join{Pos: j.Pos, Kind: parser.LeftJoin, Left: j.Left, Right: sub,
		On: &parser.Literal{Pos: pos, Kind: parser.LitBool, Value: "true"}}, true
}
