package plan

import (
	"context"
	"fmt"
	"strings"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/snapshot"
)

// Merge binds MERGE INTO into a mergeinto.Spec: the USING relation is
// planned into an operator, ON is split into target-column = source-
// expression keys and a residual, and every WHEN clause is compiled
// against the joined row (the target's columns, then the source's). The
// Spec's Target is the table as this planner's Catalog sees it; the
// caller replaces it by its transaction's staged table before Execute.
//
// modeOp names the operation whose write mode applies (snapshot.WriteMode):
// "merge", or "update" for an UPDATE … FROM, which runs as a MERGE; the
// Spec's Mode is set from the target's properties before it is validated.
func (p *Planner) Merge(ctx context.Context, m *parser.Merge, target *TableRef, modeOp string) (*mergeinto.Spec, error) {
	return p.merge(ctx, m, target, modeOp, false, nil)
}

// merge is Merge. Uncorrelated subqueries are init plans: those of the
// source run before it is optimized (so that their values prune its
// files) and those of the clauses before they compile, unless explain,
// which runs nothing (an unrun init plan compiles to an expression that
// runs it on first use, once). binderOut, when not nil, receives the binder (its
// init plans, for EXPLAIN).
func (p *Planner) merge(ctx context.Context, m *parser.Merge, target *TableRef, modeOp string, explain bool, binderOut **binder) (*mergeinto.Spec, error) {
	b := p.binder(ctx)
	if binderOut != nil {
		*binderOut = b
	}
	if m.With != nil {
		saved := len(b.ctes)
		defer func() { b.ctes = b.ctes[:saved] }()
		for _, c := range m.With.CTEs {
			if err := refuseDMLWith(c); err != nil {
				return nil, err
			}
			b.ctes = append(b.ctes, &cteDef{name: identName(c.Name), cols: c.Columns, query: c.Query})
		}
	}
	tschema, err := mergeinto.TargetSchema(target.Table)
	if err != nil {
		return nil, err
	}
	cols, err := TargetColumns(target)
	if err != nil {
		return nil, err
	}
	qual := target.Ident[len(target.Ident)-1]
	if !m.TargetAlias.Empty() {
		qual = identName(m.TargetAlias)
	}
	tcols := make([]Column, tschema.NumFields())
	for i, f := range tschema.Fields() {
		tcols[i] = b.newCol(f.Name, qual, canonical(f.Type), true)
	}
	src, ssc, err := b.bindTableExpr(m.Source, nil)
	if err != nil {
		return nil, err
	}
	joined := newScope(tcols, nil)
	if err := joined.merge(ssc, m.Source.Position()); err != nil {
		return nil, err
	}
	// ON: each conjunct bound alone, so that one folding to FALSE does
	// not take the key equalities with it
	var onMarks []*Join
	var onParts, srcOnly []Expr
	pushable := sourceFilterable(m.Clauses)
	srcSet := idSet(src.Columns())
	for _, c := range splitAnd(m.On) {
		marked := len(onMarks)
		x, err := b.bindExpr(c, &exprCtx{sc: joined, clause: "ON", marks: &onMarks, inOnce: true})
		if err != nil {
			return nil, err
		}
		if err := checkBool(x, c.Position(), "ON"); err != nil {
			return nil, err
		}
		if pushable && len(onMarks) == marked && !volatileCall(c) && refsOnly(x, srcSet) {
			srcOnly = append(srcOnly, x)
			continue
		}
		onParts = append(onParts, x)
	}
	if len(onParts) == 0 {
		// nothing would be left to relate the two sides: keep them, for
		// the error that names what ON lacks
		onParts, srcOnly = srcOnly, nil
	}
	if len(srcOnly) > 0 {
		// no source row failing them can match, and without a WHEN NOT
		// MATCHED [BY TARGET] clause an unmatched source row does
		// nothing: filter the source first, where the optimizer can
		// push them into its joins (UPDATE … FROM a, b WHERE a.k = b.k)
		src = &Filter{Input: src, Pred: andConj(srcOnly)}
	}
	if !explain {
		if err := b.foldInits(src); err != nil {
			return nil, err
		}
	}
	src = optimize(b, src)
	scols := src.Columns()
	tsc := newScope(tcols, nil)
	// comp compiles a clause expression; its init plans run first (for
	// EXPLAIN they stay, and would run on first use).
	comp := func(e Expr, l *layout) (exec.Expr, error) {
		if !explain {
			var err error
			if e, err = b.foldExpr(e); err != nil {
				return nil, err
			}
		}
		return compile(e, l)
	}
	jl := layoutOf(append(append([]Column(nil), tcols...), scols...))
	sl := layoutOf(scols)
	tset, sset := idSet(tcols), idSet(scols)
	// srcMarked: joins of correlated subqueries reading only the source
	// row were added onto src, whose columns they extend.
	srcMarked := false
	// subCols are the columns those joins added
	subCols := map[ColumnID]bool{}
	// takeMarks places the joins the correlated subqueries of clause
	// expression x became: onto the source when they read none of the
	// target's columns, so that they run once; otherwise x becomes a
	// mergeSubplan, run over the joined rows (merge_subplan.go).
	takeMarks := func(x Expr, marks []*Join) Expr {
		if len(marks) == 0 {
			return x
		}
		if refsAnyCol(marksRead(marks), tset) {
			joinedCols := append(append([]Column(nil), tcols...), scols...)
			return &mergeSubplan{X: x, Marks: marks, joined: joinedCols, explain: explain, b: b}
		}
		src = applyMarks(src, marks)
		srcMarked = true
		scols = src.Columns()
		for _, c := range scols {
			if !sset[c.ID] {
				sset[c.ID], subCols[c.ID] = true, true
			}
		}
		jl = layoutOf(append(append([]Column(nil), tcols...), scols...))
		return x
	}
	// kind is the clause being bound (set in the clause loop below).
	var kind parser.MatchKind
	// bindClause binds a clause's expression. As in PostgreSQL, a WHEN NOT
	// MATCHED [BY TARGET] clause sees only the source and a WHEN NOT
	// MATCHED BY SOURCE clause only the target, so that an unqualified
	// name both sides have (dbt's `INSERT (id) VALUES (id)`) is not
	// ambiguous there; a name only the missing side has still binds, for
	// missingSide to explain.
	bindClause := func(e parser.Expr, clause string) (Expr, error) {
		var only *scope
		switch kind {
		case parser.NotMatchedByTarget:
			only = ssc
		case parser.NotMatchedBySource:
			only = tsc
		}
		bind := func(sc *scope) (Expr, error) {
			var marks []*Join
			x, err := b.bindExpr(e, &exprCtx{sc: sc, clause: clause, marks: &marks, inOnce: true})
			if err != nil {
				return nil, err
			}
			return takeMarks(x, marks), nil
		}
		if only != nil {
			if x, err := bind(only); err == nil {
				return x, nil
			}
		}
		return bind(joined)
	}
	bindBool := func(e parser.Expr, clause string, check func(Expr, parser.Pos) error) (exec.Expr, error) {
		x, err := bindClause(e, clause)
		if err != nil {
			return nil, err
		}
		if err := checkBool(x, e.Position(), clause); err != nil {
			return nil, err
		}
		if err := check(x, e.Position()); err != nil {
			return nil, err
		}
		return comp(x, jl)
	}

	spec := &mergeinto.Spec{Table: target.Name, Target: target.Table, Snapshot: target.Table.CurrentSnapshot(),
		Budget: p.Options.Budget, Options: mergeinto.Options{Mem: p.Options.Mem, Now: b.now}}

	// ON: target.col = <source expression> conjuncts become keys
	on := andConj(onParts)
	// ON's subqueries that read the target row are evaluated on the
	// candidate pairs, with the residual conjuncts that read their values
	var onSub *mergeSubplan
	var onSubCols map[ColumnID]bool
	if len(onMarks) > 0 && refsAnyCol(marksRead(onMarks), tset) {
		onSub = takeMarks(on, onMarks).(*mergeSubplan)
		onSubCols = marksMade(onMarks)
	} else {
		takeMarks(on, onMarks)
	}
	var residual, subResidual []Expr
	for _, c := range conjuncts(on) {
		if f, ok := c.(*Func); ok && f.Name == "=" {
			l, r := f.Args[0], f.Args[1]
			if lc, ok := l.(*ColRef); !ok || !tset[lc.ID] || !refsOnly(r, sset) {
				l, r = r, l
			}
			if lc, ok := l.(*ColRef); ok && tset[lc.ID] && refsOnly(r, sset) && !isConst(r) && !refsAnyExpr(r, onSubCols) {
				ks, err := comp(r, sl)
				if err != nil {
					return nil, err
				}
				spec.Keys = append(spec.Keys, mergeinto.Key{Target: jl.pos[lc.ID], Source: ks})
				continue
			}
		}
		if refsAnyExpr(c, onSubCols) {
			subResidual = append(subResidual, c)
			continue
		}
		residual = append(residual, c)
	}
	if len(subResidual) > 0 {
		onSub.X = andConj(subResidual)
		residual = append(residual, onSub)
	}
	if len(residual) > 0 {
		if spec.On, err = comp(andConj(residual), jl); err != nil {
			return nil, err
		}
	}

	targetIndex := func(n parser.Name, pos parser.Pos) (int, error) {
		name := n.Last()
		if len(n) > 1 && !strings.EqualFold(identName(n[len(n)-2]), qual) {
			return 0, errorf(pos, "column reference %s does not name the MERGE target %q", n, qual)
		}
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name
			if sameName(name, c.Name) {
				return i, nil
			}
		}
		return 0, errorf(pos, "column %q of relation %q does not exist%s", name.Name, target.Name, didYouMean(name.Name, names))
	}
	// starExcept resolves the EXCEPT (cols) of SET * / INSERT * to target
	// column indexes.
	starExcept := func(except []parser.Ident) (map[int]bool, error) {
		skip := map[int]bool{}
		for _, id := range except {
			i, err := targetIndex(parser.Name{id}, id.Pos)
			if err != nil {
				return nil, err
			}
			if skip[i] {
				return nil, errorf(id.Pos, "column %q appears twice in EXCEPT", id.Name)
			}
			skip[i] = true
		}
		return skip, nil
	}
	// sourceByName finds the source column SET * / INSERT * takes for a
	// target column; two of that name would make the choice arbitrary.
	sourceByName := func(name, star string, pos parser.Pos) (*ColRef, bool, error) {
		var found *ColRef
		for _, c := range ssc.cols {
			if !c.hidden && strings.EqualFold(c.Name, name) {
				if found != nil {
					return nil, false, errorf(pos, "%s: the source has more than one column named %q; alias them apart in the USING subquery", star, name)
				}
				found = &ColRef{ID: c.ID, Typ: c.Type, Name: c.Name}
			}
		}
		return found, found != nil, nil
	}
	// A NOT MATCHED [BY TARGET] clause has no target row and a NOT MATCHED
	// BY SOURCE clause no source row; a column of the missing side would
	// read as NULL, silently, so it is refused (as Postgres does).
	var insertBySource bool
	missingSide := func(x Expr, pos parser.Pos) error {
		var set map[ColumnID]bool
		var side, other, what string
		switch kind {
		case parser.NotMatchedBySource:
			if insertBySource {
				// refused by mergeinto.Validate with the guide's words
				return nil
			}
			set, side, other, what = sset, "source", "target", "NOT MATCHED BY SOURCE"
		case parser.NotMatchedByTarget:
			set, side, other, what = tset, "target", "source", "NOT MATCHED"
		default:
			return nil
		}
		var bad *ColRef
		var badSub bool
		var visit func(e Expr)
		visit = func(e Expr) {
			switch y := e.(type) {
			case *ColRef:
				if set[y.ID] && bad == nil {
					bad = y
				}
			case *mergeSubplan:
				badSub = badSub || refsAnyCol(marksRead(y.Marks), set)
				walkExpr(y.X, visit)
			}
		}
		walkExpr(x, visit)
		if bad != nil && subCols[bad.ID] {
			bad, badSub = nil, true
		}
		if bad != nil {
			return errorf(pos, "column %q is a %s column, and a WHEN %s clause has no %s row; use only %s columns there",
				bad.Name, side, what, side, other)
		}
		if badSub {
			return errorf(pos, "a subquery here reads the %s row, and a WHEN %s clause has no %s row; use only %s columns there",
				side, what, side, other)
		}
		return nil
	}
	assignValue := func(x Expr, i int, pos parser.Pos) (exec.Expr, error) {
		if err := missingSide(x, pos); err != nil {
			return nil, err
		}
		v, err := b.assign(x, cols[i], target.Name, pos)
		if err != nil {
			return nil, err
		}
		return comp(v, jl)
	}

	for _, cl := range m.Clauses {
		var c mergeinto.Clause
		kind = cl.Kind
		_, isInsert := cl.Action.(*parser.MergeInsert)
		insertBySource = isInsert && kind == parser.NotMatchedBySource
		switch cl.Kind {
		case parser.Matched:
			c.Kind = mergeinto.Matched
		case parser.NotMatchedByTarget:
			c.Kind = mergeinto.NotMatchedByTarget
		case parser.NotMatchedBySource:
			c.Kind = mergeinto.NotMatchedBySource
		}
		if cl.Cond != nil {
			if c.Cond, err = bindBool(cl.Cond, "WHEN", missingSide); err != nil {
				return nil, err
			}
		}
		switch a := cl.Action.(type) {
		case *parser.MergeDelete:
			c.Action = mergeinto.Delete()
		case *parser.MergeDoNothing:
			c.Action = mergeinto.DoNothing()
		case *parser.MergeUpdate:
			var set []mergeinto.Assignment
			seen := map[int]bool{}
			if a.Star {
				skip, err := starExcept(a.Except)
				if err != nil {
					return nil, err
				}
				for i, tc := range cols {
					if skip[i] {
						continue
					}
					r, ok, err := sourceByName(tc.Name, "UPDATE SET *", a.Pos)
					if err != nil {
						return nil, err
					}
					if ok {
						v, err := assignValue(r, i, a.Pos)
						if err != nil {
							return nil, err
						}
						set = append(set, mergeinto.Assignment{Column: i, Expr: v})
					}
				}
			}
			for _, s := range a.Set {
				i, err := targetIndex(s.Column, s.Pos)
				if err != nil {
					return nil, err
				}
				if seen[i] {
					return nil, errorf(s.Pos, "multiple assignments to same column %q", cols[i].Name)
				}
				seen[i] = true
				var x Expr
				if _, isDef := s.Value.(*parser.Default); isDef {
					if x, err = b.defaultValue(cols[i]); err != nil {
						return nil, atPos(s.Pos, err)
					}
				} else if x, err = bindClause(s.Value, "UPDATE SET"); err != nil {
					return nil, err
				}
				v, err := assignValue(x, i, s.Pos)
				if err != nil {
					return nil, err
				}
				set = append(set, mergeinto.Assignment{Column: i, Expr: v})
			}
			c.Action = mergeinto.Update(set...)
		case *parser.MergeInsert:
			row := make([]Expr, len(cols))
			for i, tc := range cols {
				if row[i], err = b.defaultValue(tc); err != nil {
					return nil, atPos(a.Pos, err)
				}
			}
			switch {
			case a.Star:
				skip, err := starExcept(a.Except)
				if err != nil {
					return nil, err
				}
				for i, tc := range cols {
					if skip[i] {
						continue
					}
					r, ok, err := sourceByName(tc.Name, "INSERT *", a.Pos)
					if err != nil {
						return nil, err
					}
					if ok {
						row[i] = r
					}
				}
			case a.DefaultValues:
			default:
				dest := make([]int, 0, len(cols))
				if len(a.Columns) == 0 {
					for i := range cols {
						dest = append(dest, i)
					}
				} else {
					seen := map[int]bool{}
					for _, id := range a.Columns {
						i, err := targetIndex(parser.Name{id}, id.Pos)
						if err != nil {
							return nil, err
						}
						if seen[i] {
							return nil, errorf(id.Pos, "column %q specified more than once", id.Name)
						}
						seen[i] = true
						dest = append(dest, i)
					}
				}
				if len(a.Values) > len(dest) {
					return nil, errorf(a.Pos, "INSERT has more expressions than target columns")
				}
				if len(a.Values) < len(dest) {
					return nil, errorf(a.Pos, "INSERT has more target columns than expressions")
				}
				for k, e := range a.Values {
					if _, isDef := e.(*parser.Default); isDef {
						continue
					}
					x, err := bindClause(e, "INSERT VALUES")
					if err != nil {
						return nil, err
					}
					row[dest[k]] = x
				}
			}
			values := make([]exec.Expr, len(cols))
			for i := range cols {
				if values[i], err = assignValue(row[i], i, a.Pos); err != nil {
					return nil, err
				}
			}
			c.Action = mergeinto.Insert(values...)
		}
		spec.Clauses = append(spec.Clauses, c)
	}
	if len(m.Returning) > 0 {
		// RETURNING also sees the row before and after the action as
		// old.* and new.* (PostgreSQL 18): NULL old for an insert, NULL
		// new for a delete. A target or source named old or new keeps
		// its name.
		rsc := newScope(nil, nil)
		rsc.cols = append(rsc.cols, joined.cols...)
		var oldCols, newCols []Column
		for _, f := range tschema.Fields() {
			oldCols = append(oldCols, b.newCol(f.Name, "old", canonical(f.Type), true))
			newCols = append(newCols, b.newCol(f.Name, "new", canonical(f.Type), true))
		}
		addOldNew(rsc, oldCols, newCols)
		rl := layoutOf(append(append(append(append([]Column(nil), tcols...), scols...), oldCols...), newCols...))
		items, err := b.expandItems(m.Returning, rsc)
		if err != nil {
			return nil, err
		}
		spec.Returning = []exec.Expr{}
		for _, it := range items {
			x := it.bound
			if x == nil {
				if x, err = b.bindExpr(it.ast, &exprCtx{sc: rsc, clause: "RETURNING", mergeAction: true}); err != nil {
					return nil, err
				}
			}
			c, err := comp(x, rl)
			if err != nil {
				return nil, err
			}
			spec.Returning = append(spec.Returning, c)
			spec.ReturningNames = append(spec.ReturningNames, it.name)
		}
	}
	if srcMarked {
		if !explain {
			if err := b.foldInits(src); err != nil {
				return nil, err
			}
		}
		before := src.Columns()
		src = optimize(b, src)
		if !sameColumnIDs(before, src.Columns()) {
			return nil, fmt.Errorf("plan: merge into %s: the source's columns moved when its subqueries were planned (planner bug)", target.Name)
		}
	}
	op, err := b.build(src)
	if err != nil {
		return nil, err
	}
	spec.Source = op
	if snapshot.WriteMode(target.Table.Properties(), modeOp) == snapshot.ModeMergeOnRead {
		spec.Mode = mergeinto.MergeOnRead
	}
	if err := mergeinto.Validate(spec); err != nil {
		op.Close()
		return nil, err
	}
	return spec, nil
}

// sourceFilterable reports whether a MERGE's ON conjuncts that read
// only the source may filter the source before the join: true unless a
// WHEN NOT MATCHED [BY TARGET] clause acts on the source rows that match
// nothing.
func sourceFilterable(clauses []*parser.MergeClause) bool {
	for _, c := range clauses {
		if c.Kind == parser.NotMatchedByTarget {
			return false
		}
	}
	return true
}

func sameColumnIDs(a, b []Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}

// marksMade are the columns marks add to the rows they join.
func marksMade(marks []*Join) map[ColumnID]bool {
	made := map[ColumnID]bool{}
	for _, m := range marks {
		if m.Mark != nil {
			made[m.Mark.ID] = true
		}
		if m.Kind != exec.JoinMark {
			for _, c := range m.Right.Columns() {
				made[c.ID] = true
			}
		}
	}
	return made
}

// refsAnyExpr reports whether e reads a column of set.
func refsAnyExpr(e Expr, set map[ColumnID]bool) bool {
	if len(set) == 0 {
		return false
	}
	used := map[ColumnID]bool{}
	exprCols(e, used)
	return refsAnyCol(used, set)
}
