package plan

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/parser"
)

// exprCtx is what binding an expression may use.
type exprCtx struct {
	sc *scope
	// agg, when set, binds after aggregation: group expressions and
	// aggregate calls become columns of the Aggregate node.
	agg *aggState
	// win, when set, collects window functions.
	win *winState
	// clause names the clause for messages ("WHERE", "GROUP BY").
	clause string
	// marks, when set, collects mark joins for IN (subquery) tests; the
	// caller joins them onto its input before using the expression.
	marks *[]*Join
	// inOnce runs an uncorrelated IN (subquery) once, as = ANY (ARRAY
	// (subquery)), rather than as a mark join: in a MERGE clause, whose
	// mark joins would run once per batch of joined rows.
	inOnce bool
	// mergeAction allows merge_action() (MERGE … RETURNING).
	mergeAction bool
	// filterIn holds the positive (a, b, …) IN (subquery) tests that are
	// top-level AND conditions of a filter, where a NULL result acts as
	// FALSE: only there is the multi-column mark join exact (see
	// bindRowInSubquery).
	filterIn map[*parser.InExpr]bool
}

// aggState is the post-aggregation view of a SELECT.
type aggState struct {
	input    *scope
	groups   map[string]*ColRef   // by the group expression's SQL text
	groupIDs map[ColumnID]*ColRef // bare grouped columns, by input ID
	aggs     []*AggCall
	aggKeys  map[string]*ColRef
	marks    *[]*Join
	// sets, in one branch of GROUP BY GROUPING SETS/ROLLUP/CUBE, says
	// which grouping expressions this branch does not group by (NULL here)
	sets *groupingBranch
	// outerAggs are the aggregates subqueries gave this query (their
	// columns, which the subqueries read as outer references)
	outerAggs map[ColumnID]bool
}

// winState collects window functions.
type winState struct {
	funcs []*WindowCall
}

var aggregateNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range exec.AggregateNames {
		m[n] = true
	}
	return m
}()

func isAggregateCall(f *parser.FuncCall) bool {
	return f.Over == nil && f.OverName.Empty() && len(f.Name) == 1 && aggregateNames[strings.ToLower(f.Name[0].Name)]
}

// containsAggregate reports whether e calls an aggregate outside any
// subquery.
func containsAggregate(n parser.Node) bool { return findCall(n, isAggregateCall) != nil }

// findCall returns a call in n, outside any subquery, that is reports
// true for, or nil.
func findCall(n parser.Node, is func(*parser.FuncCall) bool) *parser.FuncCall {
	var found *parser.FuncCall
	parser.Inspect(n, func(x parser.Node) bool {
		switch x := x.(type) {
		case *parser.Query:
			return false
		case *parser.FuncCall:
			if is(x) {
				found = x
			}
		}
		return found == nil
	})
	return found
}

func (b *binder) call(pos parser.Pos, name string, args ...Expr) (Expr, error) {
	e, err := b.newFunc(name, args, func(a []exec.Expr) (exec.Expr, error) { return exec.NewCall(name, a...) })
	return e, atPos(pos, err)
}

func constLit(l *exec.Literal) *Const { return &Const{Lit: l} }

// bindExpr binds a scalar expression.
func (b *binder) bindExpr(e parser.Expr, ec *exprCtx) (Expr, error) {
	if ec.agg != nil {
		if _, isLit := e.(*parser.Literal); !isLit {
			if g, ok := ec.agg.groups[e.String()]; ok {
				return g, nil
			}
			if ec.agg.sets != nil && ec.agg.sets.nulled[e.String()] {
				// a grouping expression this branch does not group by
				x, err := b.bindExpr(e, &exprCtx{sc: ec.agg.input, clause: ec.clause})
				if err != nil {
					return nil, err
				}
				return constLit(exec.NewNullLiteral(x.Type())), nil
			}
		}
	}
	switch e := e.(type) {
	case *parser.Literal:
		return bindLiteral(e)
	case *parser.TypedLiteral:
		to, err := ArrowType(e.Type)
		if err != nil {
			return nil, err
		}
		lit, err := exec.NewLiteral(e.Value)
		if err != nil {
			return nil, atPos(e.Pos, err)
		}
		c, err := exec.NewCast(lit, to, false)
		if err != nil {
			return nil, atPos(e.Pos, err)
		}
		v, err := evalConst(b.ctx, b.now, c)
		if err != nil {
			return nil, atPos(e.Pos, err)
		}
		return constLit(v), nil
	case *parser.IntervalLiteral:
		var text string
		switch v := e.Value.(type) {
		case *parser.Literal:
			text = v.Value
		default:
			x, err := b.bindExpr(e.Value, ec)
			if err != nil {
				return nil, err
			}
			if e.Unit == "" {
				return nil, errorf(e.Pos, "INTERVAL needs a constant string")
			}
			// INTERVAL (expr) DAY: multiply a one-unit interval.
			unit, err := b.intervalConst(e.Pos, "1 "+e.Unit)
			if err != nil {
				return nil, err
			}
			return b.call(e.Pos, "*", x, unit)
		}
		if e.Unit != "" {
			text += " " + e.Unit
		}
		return b.intervalConst(e.Pos, text)
	case *parser.Param:
		if b.paramTypes != nil {
			if e.Index < 1 || e.Index > len(b.paramTypes) {
				return nil, errorf(e.Pos, "there is no parameter $%d; the statement declares %d", e.Index, len(b.paramTypes))
			}
			i := e.Index - 1
			lit := exec.NewNullLiteral(arrow.Null)
			lit.Probe = func(t arrow.DataType) {
				if b.paramTypes[i] == nil && t.ID() != arrow.NULL {
					b.paramTypes[i] = t
				}
			}
			return constLit(lit), nil
		}
		if e.Index < 1 || e.Index > len(b.params) {
			return nil, errorf(e.Pos, "there is no parameter $%d; the statement was given %d arguments", e.Index, len(b.params))
		}
		if err := exec.CheckParam(b.params[e.Index-1]); err != nil {
			return nil, errorf(e.Pos, "parameter $%d: %v", e.Index, err)
		}
		lit, err := exec.NewLiteral(b.params[e.Index-1])
		if err != nil {
			return nil, errorf(e.Pos, "parameter $%d: a Go %T cannot be a SQL value; pass bool, integers, floats, string, []byte, time.Time or nil", e.Index, b.params[e.Index-1])
		}
		return constLit(lit), nil
	case *parser.ColumnRef:
		if ec.agg != nil {
			c, err := b.resolve(ec.agg.input, e)
			if err != nil {
				return nil, err
			}
			if g, ok := ec.agg.groupIDs[c.ID]; ok {
				return g, nil
			}
			if isOuter(ec.agg.input, c.ID) {
				return c, nil
			}
			return nil, errorf(e.Pos, "column %q must appear in the GROUP BY clause or be used in an aggregate function", c.Name)
		}
		x, err := b.resolve(ec.sc, e)
		if err != nil && len(e.Name) > 1 {
			if fx, ok, ferr := b.structPath(e, ec); ok {
				return fx, ferr
			}
		}
		return x, err
	case *parser.Star:
		return nil, errorf(e.Pos, "* is only allowed in a select list or count(*)")
	case *parser.UnaryExpr:
		x, err := b.bindExpr(e.X, ec)
		if err != nil {
			return nil, err
		}
		switch e.Op {
		case parser.OpNeg:
			// as in Postgres, -2147483648 is the negation of a bigint
			return b.call(e.Pos, "negate", x)
		case parser.OpPlus:
			return x, nil
		case parser.OpNot:
			return b.call(e.Pos, "not", x)
		}
		return nil, errorf(e.Pos, "operator %s is not supported", e.Op)
	case *parser.BinaryExpr:
		return b.bindBinary(e, ec)
	case *parser.IsExpr:
		if x, ok := rowIs(e); ok {
			return b.bindExpr(x, ec)
		}
		x, err := b.bindExpr(e.X, ec)
		if err != nil {
			return nil, err
		}
		var name string
		switch e.Test {
		case parser.IsNull, parser.IsUnknown:
			name = "is_null"
			if e.Not {
				name = "is_not_null"
			}
		case parser.IsTrue:
			name = "is_true"
			if e.Not {
				name = "is_not_true"
			}
		case parser.IsFalse:
			name = "is_false"
			if e.Not {
				name = "is_not_false"
			}
		case parser.IsDistinctFrom:
			y, err := b.bindExpr(e.From, ec)
			if err != nil {
				return nil, err
			}
			name = "is_distinct_from"
			if e.Not {
				name = "is_not_distinct_from"
			}
			return b.call(e.Pos, name, x, y)
		}
		return b.call(e.Pos, name, x)
	case *parser.BetweenExpr:
		args, err := b.bindExprs([]parser.Expr{e.X, e.Lo, e.Hi}, ec)
		if err != nil {
			return nil, err
		}
		if e.Symmetric {
			lo, err := b.newFunc("least", args[1:], func(a []exec.Expr) (exec.Expr, error) { return exec.NewLeast(a...) })
			if err != nil {
				return nil, atPos(e.Pos, err)
			}
			hi, err := b.newFunc("greatest", args[1:], func(a []exec.Expr) (exec.Expr, error) { return exec.NewGreatest(a...) })
			if err != nil {
				return nil, atPos(e.Pos, err)
			}
			args = []Expr{args[0], lo, hi}
		}
		not := e.Not
		bname := "between"
		if not {
			bname = "not_between"
		}
		r, err := b.newFunc(bname, args, func(a []exec.Expr) (exec.Expr, error) { return exec.NewBetween(a[0], a[1], a[2], not) })
		return r, atPos(e.Pos, err)
	case *parser.InExpr:
		if e.Query != nil {
			return b.bindInSubquery(e, ec)
		}
		args, err := b.bindExprs(append([]parser.Expr{e.X}, e.List...), ec)
		if err != nil {
			return nil, err
		}
		not := e.Not
		if _, row := e.X.(*parser.RowExpr); len(args) == 2 && !row {
			// x IN (y) is x = y, as PostgreSQL parses it: a join on it
			// then hashes, and a scan pushes it down
			op := "="
			if not {
				op = "<>"
			}
			if r, err := b.call(e.Pos, op, args[0], args[1]); err == nil {
				return r, nil
			}
		}
		iname := "in"
		if not {
			iname = "not_in"
		}
		r, err := b.newFunc(iname, args, func(a []exec.Expr) (exec.Expr, error) { return exec.NewInList(a[0], a[1:], not) })
		return r, atPos(e.Pos, err)
	case *parser.LikeExpr:
		x, err := b.bindExpr(e.X, ec)
		if err != nil {
			return nil, err
		}
		p, err := b.bindExpr(e.Pattern, ec)
		if err != nil {
			return nil, err
		}
		if e.Escape != nil {
			return nil, errorf(e.Escape.Position(), "LIKE … ESCAPE is not supported yet; the escape character is backslash")
		}
		name := "like"
		if e.ILike {
			name = "ilike"
		}
		if e.Not {
			name = "not_" + name
		}
		return b.call(e.Pos, name, x, p)
	case *parser.CaseExpr:
		return b.bindCase(e, ec)
	case *parser.Exists:
		return b.bindExistsValue(e, ec)
	case *parser.SubqueryExpr:
		return b.bindScalarSubquery(e, ec)
	case *parser.Quantified:
		return b.bindQuantified(e, ec)
	case *parser.ArraySubquery:
		return b.bindArraySubquery(e, ec)
	case *parser.ArrayExpr:
		return b.bindArrayExpr(e, ec)
	case *parser.Subscript:
		return b.bindSubscript(e, ec)
	case *parser.StructExpr:
		return b.bindStructExpr(e, ec)
	case *parser.FieldAccess:
		return b.bindFieldAccess(e, ec)
	case *parser.MapExpr:
		keys, err := b.bindArrayExpr(&parser.ArrayExpr{Pos: e.Pos, Elems: e.Keys}, ec)
		if err != nil {
			return nil, err
		}
		vals, err := b.bindArrayExpr(&parser.ArrayExpr{Pos: e.Pos, Elems: e.Values}, ec)
		if err != nil {
			return nil, err
		}
		return b.call(e.Pos, "map", keys, vals)
	case *parser.Cast:
		x, err := b.bindExpr(e.X, ec)
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(e.Type.Name, "REGCLASS") {
			if c, ok := x.(*Const); ok && c.Lit.Value.IsValid() && c.Type().ID() == arrow.STRING {
				return b.bindRegClass(e.Pos, c.Lit.Value.String())
			}
		}
		to, err := ArrowType(e.Type)
		if err != nil {
			return nil, err
		}
		try := e.Try
		r, err := b.newFunc("cast", []Expr{x}, func(a []exec.Expr) (exec.Expr, error) { return exec.NewCast(a[0], to, try) })
		return r, atPos(e.Pos, err)
	case *parser.Extract:
		x, err := b.bindExpr(e.X, ec)
		if err != nil {
			return nil, err
		}
		lit, _ := exec.NewLiteral(strings.ToLower(e.Field))
		return b.call(e.Pos, "extract", constLit(lit), x)
	case *parser.FuncCall:
		return b.bindFuncCall(e, ec)
	case *parser.NamedArg:
		return nil, errorf(e.Pos, "named argument %s is only allowed in table functions", e.Name.Name)
	case *parser.Default:
		return nil, errorf(e.Pos, "DEFAULT is not allowed here")
	case *parser.AllColumns:
		return nil, errorf(e.Pos, "ALL is only allowed as a query's ORDER BY ALL")
	}
	return nil, errorf(e.Position(), "%s is not supported yet", describeNode(e))
}

func describeNode(n parser.Node) string {
	switch n.(type) {
	case *parser.ArrayExpr:
		return "an array constructor"
	case *parser.Subscript:
		return "subscripting"
	case *parser.RowExpr:
		return "a row constructor"
	}
	return fmt.Sprintf("%T", n)
}

// isOuter reports whether id belongs to an enclosing scope of sc.
func isOuter(sc *scope, id ColumnID) bool {
	for _, c := range sc.cols {
		if c.ID == id {
			return false
		}
	}
	return true
}

func (b *binder) bindExprs(es []parser.Expr, ec *exprCtx) ([]Expr, error) {
	out := make([]Expr, len(es))
	for i, e := range es {
		x, err := b.bindExpr(e, ec)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func (b *binder) intervalConst(pos parser.Pos, text string) (Expr, error) {
	lit, _ := exec.NewLiteral(text)
	c, err := exec.NewCast(lit, arrow.FixedWidthTypes.MonthDayNanoInterval, false)
	if err != nil {
		return nil, atPos(pos, err)
	}
	v, err := evalConst(b.ctx, b.now, c)
	if err != nil {
		return nil, atPos(pos, err)
	}
	return constLit(v), nil
}

func bindLiteral(e *parser.Literal) (Expr, error) {
	switch e.Kind {
	case parser.LitNull:
		return constLit(exec.NewNullLiteral(arrow.Null)), nil
	case parser.LitBool:
		l, _ := exec.NewLiteral(e.Value == "true")
		return constLit(l), nil
	case parser.LitInteger:
		if v, err := strconv.ParseInt(e.Value, 10, 64); err == nil {
			l, _ := exec.NewLiteral(int(v))
			return constLit(l), nil
		}
		l, err := exec.NewDecimalLiteral(e.Value)
		if err != nil {
			return nil, errorf(e.Pos, "integer constant %s is out of range: %v", parser.Abbrev(e.Value), err)
		}
		return constLit(l), nil
	case parser.LitDecimal:
		l, err := exec.NewDecimalLiteral(e.Value)
		if err != nil {
			// too many digits for DECIMAL(38): fall back to double
			f, ferr := strconv.ParseFloat(e.Value, 64)
			if ferr != nil {
				return nil, errorf(e.Pos, "numeric constant %s: %v", parser.Abbrev(e.Value), err)
			}
			l, _ = exec.NewLiteral(f)
		}
		return constLit(l), nil
	case parser.LitFloat:
		f, err := strconv.ParseFloat(e.Value, 64)
		if err != nil {
			if _, ok := new(big.Float).SetString(e.Value); !ok {
				return nil, errorf(e.Pos, "invalid number %s", e.Value)
			}
			return nil, errorf(e.Pos, "number %s is out of range for type double precision", e.Value)
		}
		l, _ := exec.NewLiteral(f)
		return constLit(l), nil
	case parser.LitString:
		l, _ := exec.NewLiteral(e.Value)
		return constLit(l), nil
	}
	return nil, errorf(e.Pos, "unknown literal")
}

var binaryOps = map[parser.BinaryOp]string{
	parser.OpOr: "or", parser.OpAnd: "and", parser.OpEq: "=", parser.OpNe: "<>", parser.OpLt: "<",
	parser.OpLe: "<=", parser.OpGt: ">", parser.OpGe: ">=", parser.OpConcat: "||", parser.OpAdd: "+",
	parser.OpSub: "-", parser.OpMul: "*", parser.OpDiv: "/", parser.OpMod: "%", parser.OpPow: "power",
}

func (b *binder) bindBinary(e *parser.BinaryExpr, ec *exprCtx) (Expr, error) {
	if x, ok, err := b.bindRowCompare(e.Pos, e.Op, e.L, e.R, ec); ok {
		return x, err
	}
	name, ok := binaryOps[e.Op]
	if !ok {
		switch e.Op {
		case parser.OpRegex:
			name = "regexp_matches"
		case parser.OpNotRegex, parser.OpIRegex, parser.OpNotIRegex:
			name = e.Op.String()
		default:
			return nil, errorf(e.Pos, "operator %s is not supported yet", e.Op)
		}
	}
	l, err := b.bindExpr(e.L, ec)
	if err != nil {
		return nil, err
	}
	r, err := b.bindExpr(e.R, ec)
	if err != nil {
		return nil, err
	}
	return b.call(e.Pos, name, l, r)
}

func (b *binder) bindCase(e *parser.CaseExpr, ec *exprCtx) (Expr, error) {
	var args []Expr
	var operand Expr
	if e.Operand != nil {
		x, err := b.bindExpr(e.Operand, ec)
		if err != nil {
			return nil, err
		}
		operand = x
	}
	for _, w := range e.Whens {
		c, err := b.bindExpr(w.Cond, ec)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			c, err = b.call(w.Pos, "=", operand, c)
			if err != nil {
				return nil, err
			}
		}
		r, err := b.bindExpr(w.Result, ec)
		if err != nil {
			return nil, err
		}
		args = append(args, c, r)
	}
	hasElse := e.Else != nil
	if hasElse {
		x, err := b.bindExpr(e.Else, ec)
		if err != nil {
			return nil, err
		}
		args = append(args, x)
	}
	r, err := b.newFunc("case", args, func(a []exec.Expr) (exec.Expr, error) {
		n := len(a) / 2
		whens := make([]exec.When, n)
		for i := 0; i < n; i++ {
			whens[i] = exec.When{Cond: a[2*i], Then: a[2*i+1]}
		}
		var els exec.Expr
		if hasElse {
			els = a[len(a)-1]
		}
		return exec.NewCase(whens, els)
	})
	return r, atPos(e.Pos, err)
}

func (b *binder) bindFuncCall(e *parser.FuncCall, ec *exprCtx) (Expr, error) {
	if len(e.Name) == 2 && strings.EqualFold(e.Name[0].Name, "pg_catalog") {
		// PostgreSQL's built-in schema, which clients write out
		// (pg_catalog.pg_get_userbyid): skade's functions are its
		e2 := *e
		e2.Name = e.Name[1:]
		e = &e2
	}
	if len(e.Name) != 1 {
		return nil, errorf(e.Pos, "function %s does not exist", e.Name)
	}
	name := strings.ToLower(e.Name[0].Name)
	if col, ok := b.srfCols[e.String()]; ok && isUnnestCall(e) {
		return b.bindExpr(&parser.ColumnRef{Pos: e.Pos, Name: parser.Name{{Pos: e.Pos, Name: srfQualifier, Quoted: true}, {Pos: e.Pos, Name: col, Quoted: true}}}, ec)
	}
	if name == "grouping" && e.Over == nil {
		return b.bindGrouping(e, ec)
	}
	if err := withinGroupOf(e, name); err != nil {
		return nil, err
	}
	if _, ok := orderedSetNames[name]; ok {
		x, err := orderedSetCall(e, name)
		if err != nil {
			return nil, err
		}
		return b.bindExpr(x, ec)
	}
	if e.Over != nil || !e.OverName.Empty() {
		return b.bindWindowCall(e, name, ec)
	}
	if aggregateNames[name] {
		return b.bindAggregate(e, name, ec)
	}
	if v, ok := b.sessionFunc(name); ok && len(e.Args) == 0 {
		l, err := exec.NewLiteral(v)
		if err != nil {
			return nil, atPos(e.Pos, err)
		}
		return constLit(l), nil
	}
	if name == "merge_action" {
		if !ec.mergeAction || len(e.Args) > 0 {
			return nil, errorf(e.Pos, "merge_action() is only allowed, without arguments, in MERGE … RETURNING")
		}
		return &Func{Name: name, Typ: tString, render: fixedRender("merge_action()"), Volatile: true,
			build: func([]exec.Expr) (exec.Expr, error) { return mergeinto.MergeAction{}, nil }}, nil
	}
	if e.Distinct || e.Filter != nil || len(e.OrderBy) > 0 || e.Star {
		return nil, errorf(e.Pos, "%s is not an aggregate function; DISTINCT, FILTER, ORDER BY and * apply to aggregates only", name)
	}
	switch name {
	case "struct_pack", "row":
		return b.bindStructFunc(e, name, ec)
	case "struct_extract":
		if len(e.Args) == 2 {
			if lit, ok := e.Args[1].(*parser.Literal); ok && lit.Kind == parser.LitString {
				x, err := b.bindExpr(e.Args[0], ec)
				if err != nil {
					return nil, err
				}
				return b.fieldOf(e.Pos, x, parser.Ident{Pos: lit.Pos, Name: lit.Value, Quoted: true})
			}
		}
		return nil, errorf(e.Pos, "struct_extract takes a struct and a field name in quotes: struct_extract(s, 'a')")
	}
	for _, a := range e.Args {
		if na, ok := a.(*parser.NamedArg); ok {
			return nil, errorf(na.Pos, "function %s takes no named arguments", name)
		}
	}
	args, err := b.bindExprs(e.Args, ec)
	if err != nil {
		return nil, err
	}
	var build func(a []exec.Expr) (exec.Expr, error)
	switch name {
	case "coalesce":
		build = func(a []exec.Expr) (exec.Expr, error) { return exec.NewCoalesce(a...) }
	case "nullif":
		if len(args) != 2 {
			return nil, errorf(e.Pos, "nullif takes 2 arguments, got %d", len(args))
		}
		build = func(a []exec.Expr) (exec.Expr, error) { return exec.NewNullIf(a[0], a[1]) }
	case "greatest":
		build = func(a []exec.Expr) (exec.Expr, error) { return exec.NewGreatest(a...) }
	case "least":
		build = func(a []exec.Expr) (exec.Expr, error) { return exec.NewLeast(a...) }
	case "current_timestamp", "localtimestamp", "transaction_timestamp", "statement_timestamp":
		name = "now"
		fallthrough
	default:
		n := name
		build = func(a []exec.Expr) (exec.Expr, error) { return exec.NewCall(n, a...) }
	}
	r, err := b.newFunc(name, args, build)
	return r, atPos(e.Pos, err)
}

func (b *binder) bindAggregate(e *parser.FuncCall, name string, ec *exprCtx) (Expr, error) {
	if ec.agg == nil && ec.sc != nil && ec.sc.parent != nil && !e.Star {
		// a subquery's clause that does not aggregate may still hold an
		// aggregate of an enclosing query's columns
		inits := len(b.inits)
		args, err := b.bindExprs(e.Args, &exprCtx{sc: ec.sc, clause: "aggregate function calls"})
		b.inits = b.inits[:inits]
		if err == nil && outerAggregate(args, ec.sc) {
			if ref, ok := b.outerLevelAggregate(e, name, args, ec.sc); ok {
				return ref, nil
			}
		}
	}
	if ec.agg == nil {
		clause := ec.clause
		if clause == "" {
			clause = "this context"
		}
		return nil, errorf(e.Pos, "aggregate functions are not allowed in %s", clause)
	}
	if key := e.String(); ec.agg.aggKeys[key] != nil {
		return ec.agg.aggKeys[key], nil
	}
	in := &exprCtx{sc: ec.agg.input, clause: "aggregate function calls", marks: ec.agg.marks}
	var args []Expr
	if !e.Star {
		var err error
		args, err = b.bindExprs(e.Args, in)
		if err != nil {
			return nil, err
		}
	} else if name != "count" {
		return nil, errorf(e.Pos, "%s(*) is not allowed; only count(*)", name)
	}
	if outerAggregate(args, ec.agg.input) {
		// SQL gives such an aggregate to the enclosing query (SELECT
		// (SELECT max(o.x) FROM t) FROM o aggregates o); computing it
		// over the subquery's rows would answer differently
		if ref, ok := b.outerLevelAggregate(e, name, args, ec.agg.input); ok {
			return ref, nil
		}
		return nil, errorf(e.Pos, "%s reads only columns of an enclosing query, which makes it that query's aggregate; that is only supported in the select list, HAVING and ORDER BY of a query whose columns it reads: aggregate in the enclosing query instead", e.String())
	}
	var filter Expr
	if e.Filter != nil {
		f, err := b.bindExpr(e.Filter, &exprCtx{sc: ec.agg.input, clause: "FILTER", marks: ec.agg.marks})
		if err != nil {
			return nil, err
		}
		filter = f
	}
	var order []SortKey
	for _, o := range e.OrderBy {
		x, err := b.bindExpr(o.Expr, in)
		if err != nil {
			return nil, err
		}
		order = append(order, sortKey(x, o))
	}
	// check the call now, with placeholders
	ph := placeholders(args)
	var fph exec.Expr
	if filter != nil {
		fph = &exec.Column{Index: len(args), Type: filter.Type()}
	}
	var oph []exec.SortKey
	for i, k := range order {
		oph = append(oph, exec.SortKey{Expr: &exec.Column{Index: len(args) + 1 + i, Type: k.Expr.Type()}, Descending: k.Desc, NullsFirst: k.NullsFirst})
	}
	agg, err := exec.NewAggregate(name, ph, e.Distinct, fph, oph)
	if err != nil {
		return nil, atPos(e.Pos, err)
	}
	col := b.newCol(e.String(), "", agg.DataType(), agg.Nullable())
	ec.agg.aggs = append(ec.agg.aggs, &AggCall{Name: name, Args: args, Distinct: e.Distinct, Filter: filter, OrderBy: order, Col: col})
	ref := &ColRef{ID: col.ID, Typ: col.Type, Name: col.Name}
	ec.agg.aggKeys[e.String()] = ref
	return ref, nil
}

// outerAggregate reports whether an aggregate's arguments reference
// columns, and all of them columns of queries enclosing the one whose
// input is sc. (A column of neither, such as a subquery's result, counts
// as the query's own.)
func outerAggregate(args []Expr, sc *scope) bool {
	if sc == nil || sc.parent == nil {
		return false
	}
	used := map[ColumnID]bool{}
	for _, a := range args {
		exprCols(a, used)
	}
	if len(used) == 0 {
		return false
	}
	outer := map[ColumnID]bool{}
	for s := sc.parent; s != nil; s = s.parent {
		for _, c := range s.cols {
			outer[c.ID] = true
		}
	}
	for id := range used {
		if !outer[id] {
			return false
		}
	}
	return true
}

// outerLevelAggregate binds e, an aggregate in a subquery whose arguments
// read only columns of one enclosing query, as that query's aggregate, as
// SQL has it: the enclosing query computes it (over its own rows, per
// group), and the subquery reads its value as an outer reference, through
// a hidden column of the enclosing query's input scope. When that query
// does not aggregate yet it is marked to be bound again as one (forceAgg),
// and ok is false, as it is where no select list, HAVING or ORDER BY of
// that query is being bound.
//
// in is the scope of the subquery the aggregate is written in; that
// query is marked (outerAggIn) so that, if it aggregated only because of
// such aggregates, it is bound again as a query that does not aggregate.
func (b *binder) outerLevelAggregate(e *parser.FuncCall, name string, args []Expr, in *scope) (*ColRef, bool) {
	used := map[ColumnID]bool{}
	for _, a := range args {
		exprCols(a, used)
	}
	var owner *scope
	for s := in.parent; s != nil && owner == nil; s = s.parent {
		for _, c := range s.cols {
			if used[c.ID] {
				owner = s
				break
			}
		}
	}
	if owner == nil {
		return nil, false
	}
	own := map[ColumnID]bool{}
	for _, c := range owner.cols {
		own[c.ID] = true
	}
	for id := range used {
		if !own[id] {
			return nil, false // columns of several enclosing queries
		}
	}
	ag := b.aggOf[owner]
	if ag == nil {
		if sel := b.selOf[owner]; sel != nil && !b.forceAgg[sel] {
			if b.forceAgg == nil {
				b.forceAgg = map[*parser.Select]bool{}
			}
			b.forceAgg[sel] = true
		}
		return nil, false
	}
	x, err := b.bindAggregate(e, name, &exprCtx{sc: owner, agg: ag, clause: "SELECT", marks: ag.marks})
	if err != nil {
		return nil, false
	}
	ref, ok := x.(*ColRef)
	if !ok {
		return nil, false
	}
	if ag.outerAggs == nil {
		ag.outerAggs = map[ColumnID]bool{}
	}
	if !ag.outerAggs[ref.ID] {
		ag.outerAggs[ref.ID] = true
		owner.cols = append(owner.cols, scopeCol{Column: Column{ID: ref.ID, Name: outerAggName, Type: ref.Typ, Nullable: true}, hidden: true})
	}
	if sel := b.selOf[in]; sel != nil {
		if b.outerAggIn == nil {
			b.outerAggIn = map[*parser.Select]bool{}
		}
		b.outerAggIn[sel] = true
	}
	return ref, true
}

// outerAggName names the hidden scope columns outerLevelAggregate adds,
// a name no query can write.
const outerAggName = "#aggregate"

func sortKey(x Expr, o *parser.OrderItem) SortKey {
	k := SortKey{Expr: x, Desc: o.Desc}
	switch o.Nulls {
	case parser.NullsFirst:
		k.NullsFirst = true
	case parser.NullsLast:
		k.NullsFirst = false
	default:
		k.NullsFirst = o.Desc // Postgres: NULLs are larger than every value
	}
	return k
}

// sessionFunc is the value of a function that reports on the session:
// current_user and its kin, current_database(), current_schema() and
// version() and pg_backend_pid(), from the session's settings (the
// PostgreSQL server sets session_authorization, current_database,
// server_version and pg_backend_pid; 0 without one).
func (b *binder) sessionFunc(name string) (any, bool) {
	get := func(key, def string) string {
		if v, ok := b.settings[key]; ok && v != "" {
			return v
		}
		return def
	}
	switch name {
	case "current_user", "session_user", "user", "current_role":
		return get("session_authorization", "skade"), true
	case "current_database", "current_catalog":
		return get("current_database", "skade"), true
	case "current_schema":
		return "main", true
	case "pg_backend_pid":
		if v, err := strconv.ParseInt(b.settings["pg_backend_pid"], 10, 64); err == nil {
			return v, true
		}
		return int64(0), true
	case "version":
		if v, ok := b.settings["server_version"]; ok {
			return "PostgreSQL " + v + ", an Iceberg lakehouse", true
		}
		return "skade, an Iceberg lakehouse", true
	}
	return "", false
}

// RelationOIDs is what a Catalog implements to resolve a relation name to
// its OID, for 'name'::regclass (PostgreSQL clients' catalog queries).
type RelationOIDs interface {
	RelationOID(name string) (int64, bool)
}

// bindRegClass is 'name'::regclass: the relation's OID as the catalog
// gives it.
func (b *binder) bindRegClass(pos parser.Pos, name string) (Expr, error) {
	if r, ok := b.cat.(RelationOIDs); ok {
		if oid, ok := r.RelationOID(strings.ToLower(strings.Trim(name, `"`))); ok {
			l, _ := exec.NewLiteral(oid)
			return constLit(l), nil
		}
	}
	return nil, &Error{Pos: pos, Msg: fmt.Sprintf("relation %q does not exist", name), Err: errRelationNotFound}
}

var errRelationNotFound = errors.New("relation not found")
