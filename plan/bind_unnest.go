package plan

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
)

// Set-returning functions in FROM over values of the rows before them
// (implicitly LATERAL, as in PostgreSQL) or of an outer query's row:
//
//	FROM t, unnest(t.tags) AS tag
//	FROM t, generate_series(1, t.n) WITH ORDINALITY AS s(i, ord)
//	(SELECT … FROM generate_series(0, array_upper(outer.a, 1)) s …)
//
// They bind to Unnest over the FROM items before them (OneRow for the
// first item). generate_series and range over constants keep their
// source (a SourceScan that needs no input).

// setReturning reports whether name is a set-returning function Unnest
// computes.
func setReturning(name string) bool {
	switch name {
	case "unnest", "generate_series", "range":
		return true
	}
	return false
}

// refsColumns reports whether e names a column (of any scope).
func refsColumns(e parser.Expr) bool {
	found := false
	parser.Inspect(e, func(n parser.Node) bool {
		if _, ok := n.(*parser.ColumnRef); ok {
			found = true
		}
		return !found
	})
	return found
}

// lateralFunc binds t when it is a set-returning function over row
// values (or unnest), over left (nil for the first FROM item) whose
// scope is sc. ok is false when t is not such a function.
func (b *binder) lateralFunc(t *parser.TableFunc, left Node, sc *scope) (Node, *scope, bool, error) {
	name := strings.ToLower(t.Name.Last().Name)
	if !setReturning(name) {
		return nil, nil, false, nil
	}
	byRow := name == "unnest" || t.Ordinality
	for _, a := range t.Args {
		if _, named := a.(*parser.NamedArg); named {
			return nil, nil, false, nil
		}
		byRow = byRow || refsColumns(a)
	}
	if !byRow {
		return nil, nil, false, nil
	}
	args, err := b.bindExprs(t.Args, &exprCtx{sc: sc, clause: "a function in FROM"})
	if err != nil {
		return nil, nil, true, err
	}
	types := make([]arrow.DataType, len(args))
	for i, a := range args {
		types[i] = a.Type()
	}
	vts, err := exec.UnnestTypes(name, types)
	if err != nil {
		return nil, nil, true, errorf(t.Pos, "%s", err.Error())
	}
	if name != "unnest" {
		for i, a := range args {
			if a.Type().ID() != arrow.INT64 {
				x, err := b.newFunc("cast", []Expr{a}, func(e []exec.Expr) (exec.Expr, error) { return exec.NewCast(e[0], tInt64, false) })
				if err != nil {
					return nil, nil, true, atPos(t.Pos, err)
				}
				args[i] = x
			}
		}
	}
	if left == nil {
		left = &OneRow{}
	}
	qual := name
	colName := name
	if t.Alias != nil {
		qual = identName(t.Alias.Name)
		if name != "range" {
			// PostgreSQL: a function of one column names it after its
			// alias (DuckDB's range keeps its column name)
			colName = qual
		}
		if len(vts) > 1 {
			colName = name // several arrays: each column is unnest
		}
		ncols := len(vts)
		if t.Ordinality {
			ncols++
		}
		if len(t.Alias.Columns) > ncols {
			return nil, nil, true, errorf(t.Alias.Pos, "table %q has %d columns available but %d columns specified", qual, ncols, len(t.Alias.Columns))
		}
	}
	// the value columns, named by the alias's column list as far as it goes
	colNames := make([]string, len(vts))
	for i := range vts {
		colNames[i] = colName
		if t.Alias != nil && i < len(t.Alias.Columns) {
			colNames[i] = identName(t.Alias.Columns[i])
		}
	}
	u := &Unnest{Input: left, Func: name, Args: args, Col: b.newCol(colNames[0], qual, vts[0], true)}
	fsc := newScope(nil, sc.parent)
	fsc.cols = append(fsc.cols, scopeCol{Column: u.Col})
	for i := 1; i < len(vts); i++ {
		c := b.newCol(colNames[i], qual, vts[i], true)
		u.More = append(u.More, c)
		fsc.cols = append(fsc.cols, scopeCol{Column: c})
	}
	if t.Ordinality {
		ordName := "ordinality"
		if t.Alias != nil && len(t.Alias.Columns) > len(vts) {
			ordName = identName(t.Alias.Columns[len(vts)])
		}
		ord := b.newCol(ordName, qual, tInt64, false)
		u.Ord = &ord
		fsc.cols = append(fsc.cols, scopeCol{Column: ord})
	}
	return u, fsc, true, nil
}

// lateralJoin binds l JOIN f(…) where f is a set-returning function over
// l's rows: an inner or cross join is the Unnest filtered by ON; a LEFT
// JOIN … ON TRUE keeps a row whose function yields nothing, with NULLs.
func (b *binder) lateralJoin(j *parser.Join, tf *parser.TableFunc, l Node, lsc *scope, outer *scope) (Node, *scope, bool, error) {
	in := newScope(nil, outer)
	in.cols = append(in.cols, lsc.cols...)
	n, fsc, ok, err := b.lateralFunc(tf, l, in)
	if !ok || err != nil {
		return nil, nil, ok, err
	}
	if j.Natural || len(j.Using) > 0 {
		return nil, nil, true, errorf(j.Pos, "NATURAL and USING joins with a set-returning function are not supported yet; use ON")
	}
	sc := newScope(nil, outer)
	sc.cols = append(sc.cols, lsc.cols...)
	if err := sc.merge(fsc, j.Right.Position()); err != nil {
		return nil, nil, true, err
	}
	trueOn := onTrue(j.On)
	switch j.Kind {
	case parser.LeftJoin:
		if !trueOn {
			return nil, nil, true, errorf(j.On.Position(), "LEFT JOIN with a set-returning function supports only ON TRUE yet; filter in WHERE")
		}
		n.(*Unnest).Outer = true
		return n, sc, true, nil
	case parser.RightJoin, parser.FullJoin:
		return nil, nil, true, errorf(j.Pos, "a RIGHT or FULL JOIN with a set-returning function that reads the left side is not possible")
	}
	if trueOn {
		return n, sc, true, nil
	}
	var marks []*Join
	on, err := b.bindExpr(j.On, &exprCtx{sc: sc, clause: "JOIN conditions", marks: &marks})
	if err != nil {
		return nil, nil, true, err
	}
	if len(marks) > 0 {
		return nil, nil, true, errorf(j.On.Position(), "IN (subquery) in a join condition is not supported yet; move it to WHERE")
	}
	if err := checkBool(on, j.On.Position(), "JOIN/ON"); err != nil {
		return nil, nil, true, err
	}
	return &Filter{Input: n, Pred: on}, sc, true, nil
}
