package plan

import (
	"context"

	"github.com/skadedb/skade/parser"
)

// INSERT … ON CONFLICT, planned as the MERGE it means:
//
//	INSERT INTO t (cols) <source> ON CONFLICT (keys) DO UPDATE SET … WHERE w
//
// is
//
//	MERGE INTO t USING (<source> numbered) AS excluded(cols, …)
//	ON t.k = excluded.k AND …
//	WHEN MATCHED AND w THEN UPDATE SET …
//	WHEN NOT MATCHED THEN INSERT (cols) VALUES (excluded.cols)
//
// skade has no unique indexes: the conflict target names the columns whose
// equal values conflict (or, without one, the table's identifier fields).
// PostgreSQL's rules within one statement are kept: a row with a NULL key
// never conflicts; under DO NOTHING, a proposed row that conflicts with an
// earlier proposed row is skipped (the first one wins); under DO UPDATE it
// is the error "ON CONFLICT DO UPDATE command cannot affect row a second
// time" (21000).

// conflictDup and conflictOrd name the source columns that number the
// proposed rows per key and in input order.
const (
	conflictOrd = "__skade_conflict_ord"
	conflictDup = "__skade_conflict_dup"
)

// onConflictMerge rewrites ins, whose target is ref, as a MERGE.
func (p *Planner) onConflictMerge(ctx context.Context, ins *parser.Insert, ref *TableRef) (*parser.Merge, error) {
	oc := ins.OnConflict
	pos := oc.Pos
	if ins.DefaultValues || ins.Source == nil {
		return nil, errorf(pos, "INSERT … DEFAULT VALUES ON CONFLICT is not supported yet")
	}
	if ins.ByName {
		return nil, errorf(pos, "INSERT … BY NAME … ON CONFLICT is not supported yet; list the columns")
	}
	if !oc.Constraint.Empty() {
		return nil, errorf(pos, "ON CONFLICT ON CONSTRAINT %s: skade has no named constraints; name the conflicting columns: ON CONFLICT (col, …)", identName(oc.Constraint))
	}
	schema := ref.Table.Schema()
	var tableCols []string
	for _, f := range schema.Fields() {
		tableCols = append(tableCols, f.Name)
	}
	cols := tableCols
	if len(ins.Columns) > 0 {
		cols = nil
		for _, c := range ins.Columns {
			cols = append(cols, identName(c))
		}
	}
	// the source's width decides how many columns it fills
	src, err := p.Query(ctx, ins.Source)
	if err != nil {
		return nil, err
	}
	width := len(src.Root.Columns())
	if width > len(cols) {
		return nil, errorf(ins.Source.Pos, "INSERT has more expressions than target columns")
	}
	cols = cols[:width]
	has := map[string]bool{}
	for _, c := range cols {
		has[c] = true
	}
	var keys []string
	for _, k := range oc.Columns {
		keys = append(keys, identName(k))
	}
	if len(keys) == 0 {
		for _, id := range schema.IdentifierFieldIDs {
			if f, ok := schema.FindFieldByID(id); ok {
				keys = append(keys, f.Name)
			}
		}
		if len(keys) == 0 {
			return nil, errorf(pos, "ON CONFLICT needs the conflicting columns: %s has no identifier fields (primary key); write ON CONFLICT (col, …)", ref.Name)
		}
	}
	for _, k := range keys {
		if !has[k] {
			known := false
			for _, c := range tableCols {
				known = known || c == k
			}
			if !known {
				return nil, errorf(pos, "column %q named in ON CONFLICT does not exist in %s", k, ref.Name)
			}
			return nil, errorf(pos, "ON CONFLICT column %q is not among the inserted columns, so no proposed row can conflict on it", k)
		}
	}
	target := ins.Table[len(ins.Table)-1].Name
	if !ins.Alias.Empty() {
		target = identName(ins.Alias)
	}
	id := func(s string) parser.Ident { return parser.Ident{Pos: pos, Name: s, Quoted: true} }
	col := func(tbl, c string) parser.Expr {
		return &parser.ColumnRef{Pos: pos, Name: parser.Name{id(tbl), id(c)}}
	}
	// the proposed rows, numbered in input order and per key
	var items []*parser.SelectItem
	for _, c := range cols {
		items = append(items, &parser.SelectItem{Pos: pos, Expr: col("__skade_proposed", c), Alias: id(c)})
	}
	var part []parser.Expr
	for _, k := range keys {
		part = append(part, col("__skade_numbered", k))
	}
	numbered := &parser.Select{Pos: pos, Items: append(items,
		&parser.SelectItem{Pos: pos, Expr: &parser.FuncCall{Pos: pos, Name: parser.Name{id("row_number")}, Over: &parser.WindowSpec{Pos: pos}}, Alias: id(conflictOrd)}),
		From: []parser.TableExpr{&parser.SubqueryRef{Pos: pos, Query: ins.Source, Alias: aliasOf(pos, "__skade_proposed", cols)}}}
	ranked := &parser.Select{Pos: pos, Items: []*parser.SelectItem{{Pos: pos, Expr: &parser.Star{Pos: pos}},
		{Pos: pos, Expr: &parser.FuncCall{Pos: pos, Name: parser.Name{id("row_number")}, Over: &parser.WindowSpec{Pos: pos, PartitionBy: part,
			OrderBy: []*parser.OrderItem{{Pos: pos, Expr: col("__skade_numbered", conflictOrd)}}}}, Alias: id(conflictDup)}},
		From: []parser.TableExpr{&parser.SubqueryRef{Pos: pos, Query: &parser.Query{Pos: pos, Body: numbered}, Alias: &parser.Alias{Pos: pos, Name: id("__skade_numbered")}}}}
	source := &parser.SubqueryRef{Pos: pos, Query: &parser.Query{Pos: pos, Body: ranked}, Alias: &parser.Alias{Pos: pos, Name: id("excluded")}}

	// only a key's first proposal meets the existing row: a later one is
	// NOT MATCHED, where the clauses below skip it or raise the error
	first := &parser.BinaryExpr{Pos: pos, Op: parser.OpEq, L: col("excluded", conflictDup), R: &parser.Literal{Pos: pos, Kind: parser.LitInteger, Value: "1"}}
	on := []parser.Expr{first}
	var nullKey []parser.Expr
	for _, k := range keys {
		on = append(on, &parser.BinaryExpr{Pos: pos, Op: parser.OpEq, L: col(target, k), R: col("excluded", k)})
		nullKey = append(nullKey, &parser.IsExpr{Pos: pos, X: col("excluded", k), Test: parser.IsNull})
	}
	// a later proposed row with the key of an earlier one (and no NULL in
	// it): the first proposal wins
	later := &parser.BinaryExpr{Pos: pos, Op: parser.OpGt, L: col("excluded", conflictDup), R: &parser.Literal{Pos: pos, Kind: parser.LitInteger, Value: "1"}}
	var dup parser.Expr = later
	for _, n := range nullKey {
		dup = &parser.BinaryExpr{Pos: pos, Op: parser.OpAnd, L: dup, R: &parser.UnaryExpr{Pos: pos, Op: parser.OpNot, X: n}}
	}
	var values []parser.Expr
	var insCols []parser.Ident
	for _, c := range cols {
		values = append(values, col("excluded", c))
		insCols = append(insCols, id(c))
	}
	insert := &parser.MergeInsert{Pos: pos, Columns: insCols, Values: values}
	// RETURNING * is the table's row, not the proposed one beside it
	returning := make([]*parser.SelectItem, len(ins.Returning))
	for i, it := range ins.Returning {
		if st, ok := it.Expr.(*parser.Star); ok && len(st.Table) == 0 {
			q := *st
			q.Table = parser.Name{id(target)}
			it = &parser.SelectItem{Pos: it.Pos, Expr: &q, Alias: it.Alias}
		}
		// an unqualified column is the table's, not the proposal's (the
		// rewrite is idempotent: the statement may be planned again)
		parser.Inspect(it.Expr, func(n parser.Node) bool {
			switch x := n.(type) {
			case *parser.Query:
				return false
			case *parser.ColumnRef:
				if len(x.Name) == 1 {
					x.Name = parser.Name{id(target), x.Name[0]}
				}
			}
			return true
		})
		returning[i] = it
	}
	m := &parser.Merge{Pos: ins.Pos, With: ins.With, Target: ins.Table, TargetAlias: ins.Alias, Source: source,
		On: andAllAST(pos, on), Returning: returning}
	if oc.DoNothing {
		m.Clauses = []*parser.MergeClause{
			{Pos: pos, Kind: parser.NotMatchedByTarget, Cond: notAST(pos, dup), Action: insert},
		}
		return m, nil
	}
	// DO UPDATE: a second proposal for one key is PostgreSQL's error
	twice := &parser.FuncCall{Pos: pos, Name: parser.Name{id("error")}, Args: []parser.Expr{&parser.Literal{Pos: pos, Kind: parser.LitString,
		Value: "ON CONFLICT DO UPDATE command cannot affect row a second time; ensure that no rows proposed for insertion within the same command have duplicate constrained values"}}}
	set := make([]*parser.SetClause, len(oc.Set))
	for i, sc := range oc.Set {
		if len(sc.Column) > 1 {
			return nil, errorf(sc.Pos, "ON CONFLICT DO UPDATE SET takes plain column names, not %s", sc.Column)
		}
		set[i] = sc
	}
	errValues := make([]parser.Expr, len(values))
	for i := range errValues {
		errValues[i] = twice
	}
	m.Clauses = []*parser.MergeClause{
		{Pos: pos, Kind: parser.NotMatchedByTarget, Cond: dup, Action: &parser.MergeInsert{Pos: pos, Columns: insCols, Values: errValues}},
		{Pos: pos, Kind: parser.NotMatchedByTarget, Action: insert},
		{Pos: pos, Kind: parser.Matched, Cond: oc.Where, Action: &parser.MergeUpdate{Pos: pos, Set: set}},
	}
	return m, nil
}

func aliasOf(pos parser.Pos, name string, cols []string) *parser.Alias {
	a := &parser.Alias{Pos: pos, Name: parser.Ident{Pos: pos, Name: name, Quoted: true}}
	for _, c := range cols {
		a.Columns = append(a.Columns, parser.Ident{Pos: pos, Name: c, Quoted: true})
	}
	return a
}

func andAllAST(pos parser.Pos, es []parser.Expr) parser.Expr {
	out := es[0]
	for _, e := range es[1:] {
		out = &parser.BinaryExpr{Pos: pos, Op: parser.OpAnd, L: out, R: e}
	}
	return out
}

func notAST(pos parser.Pos, e parser.Expr) parser.Expr {
	return &parser.UnaryExpr{Pos: pos, Op: parser.OpNot, X: e}
}
