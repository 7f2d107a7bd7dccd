package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/skadedb/skade/exec"
)

// ColumnID identifies one column of one relation instance in a statement.
type ColumnID int

// Expr is a bound scalar expression. Columns are referred to by ID;
// Compile turns an Expr into an exec.Expr for a given input layout.
type Expr interface {
	Type() arrow.DataType
	String() string
}

// ColRef reads a column.
type ColRef struct {
	ID   ColumnID
	Typ  arrow.DataType
	Name string
}

func (c *ColRef) Type() arrow.DataType { return c.Typ }
func (c *ColRef) String() string {
	if c.Name != "" {
		return c.Name
	}
	return fmt.Sprintf("#%d", c.ID)
}

// Const is a typed constant.
type Const struct{ Lit *exec.Literal }

func (c *Const) Type() arrow.DataType { return c.Lit.DataType() }
func (c *Const) String() string       { return c.Lit.String() }

// IsNull reports whether the constant is NULL.
func (c *Const) IsNull() bool { return !c.Lit.Value.IsValid() }

// Func is any computed expression: a function or operator call, a CASE,
// a cast, an IN list. Build makes the exec expression from compiled
// arguments; it was run once at bind time, with placeholder arguments of
// the same types, to check the call and compute its type.
type Func struct {
	Name     string
	Args     []Expr
	Typ      arrow.DataType
	Volatile bool
	build    func(args []exec.Expr) (exec.Expr, error)
	// render caches the exec rendering, for EXPLAIN: computed when asked,
	// because each call's text holds its arguments' (a chain of 50,000
	// ORs would otherwise hold 50,000 ever longer strings)
	render *string
}

func (f *Func) Type() arrow.DataType { return f.Typ }

// fixedRender is a constant rendering for a Func.
func fixedRender(s string) *string { return &s }
func (f *Func) String() string {
	if f.render != nil {
		return *f.render
	}
	if f.build != nil {
		if e, err := f.build(namedPlaceholders(f.Args)); err == nil {
			s := e.String()
			f.render = &s
			return s
		}
	}
	parts := make([]string, len(f.Args))
	for i, a := range f.Args {
		parts[i] = a.String()
	}
	return f.Name + "(" + strings.Join(parts, ", ") + ")"
}

// placeholders stands in for args when checking a call at bind time.
// Constants stay constants: exec treats a string literal as a value of
// unknown type that adapts to its context, as Postgres does.
func placeholders(args []Expr) []exec.Expr {
	out := make([]exec.Expr, len(args))
	for i, a := range args {
		if c, ok := a.(*Const); ok {
			out[i] = c.Lit
			continue
		}
		out[i] = &exec.Column{Index: i, Type: a.Type()}
	}
	return out
}

// namedPlaceholders are placeholders named by their arguments' SQL, to
// render a call.
func namedPlaceholders(args []Expr) []exec.Expr {
	out := placeholders(args)
	for i, a := range args {
		if c, ok := out[i].(*exec.Column); ok {
			c.Name = a.String()
		}
	}
	return out
}

// newFunc checks a call by building it once over placeholders, and folds
// it to a constant when every argument is constant.
// coalesce is COALESCE(args...).
func (b *binder) coalesce(args ...Expr) (Expr, error) {
	return b.newFunc("coalesce", args, func(a []exec.Expr) (exec.Expr, error) { return exec.NewCoalesce(a...) })
}

func (b *binder) newFunc(name string, args []Expr, build func([]exec.Expr) (exec.Expr, error)) (Expr, error) {
	if name == "and" || name == "or" {
		// an untyped NULL operand is a boolean NULL: split into
		// conjuncts, it must still be one
		for i, a := range args {
			if boolNull(a) != a {
				args = slices.Clone(args)
				args[i] = boolNull(a)
			}
		}
	}
	e, err := build(placeholders(args))
	if err != nil {
		return nil, err
	}
	f := &Func{Name: name, Args: args, Typ: e.DataType(), build: build}
	if folded, ok := b.fold(f, e); ok {
		return folded, nil
	}
	return f, nil
}

// volatileFuncs are never folded.
var volatileFuncs = map[string]bool{"random": true, "gen_random_uuid": true, "uuid": true, "error": true}

// fold evaluates a call whose arguments are all constants. A call that
// fails is left for run time: under CASE it may never be evaluated.
func (b *binder) fold(f *Func, e exec.Expr) (Expr, bool) {
	if volatileFuncs[f.Name] {
		f.Volatile = true
		return nil, false
	}
	if x, ok := absorbed(f); ok {
		return x, true
	}
	for _, a := range f.Args {
		if _, ok := a.(*Const); !ok {
			return nil, false
		}
	}
	lit, err := evalConst(b.ctx, b.now, e)
	if err != nil {
		return nil, false
	}
	return &Const{Lit: lit}, true
}

// constBool reports whether e is a boolean constant (or an untyped
// NULL), and its value: v is false for NULL too, which a WHERE or ON
// treats as FALSE (c.IsNull() tells them apart).
func constBool(e Expr) (c *Const, v bool, ok bool) {
	c, ok = e.(*Const)
	if !ok {
		return nil, false, false
	}
	if c.IsNull() {
		return c, false, true
	}
	b, ok := c.Lit.Value.(*scalar.Boolean)
	if !ok {
		return nil, false, false
	}
	return c, b.Value, true
}

// boolNull is x, or a BOOLEAN NULL when x is an untyped NULL.
func boolNull(x Expr) Expr {
	if c, ok := x.(*Const); ok && c.Type().ID() == arrow.NULL {
		return &Const{Lit: exec.NewNullLiteral(tBool)}
	}
	return x
}

// absorbed folds x AND FALSE to FALSE and x OR TRUE to TRUE, whatever x
// is, as PostgreSQL's planner does: three-valued logic gives that answer
// for every value of x, NULL included. x is then never evaluated, so a
// correlated subquery or an error inside it goes with it; that is what
// lets the correlation of a subquery whose WHERE is constantly false
// vanish, and the subquery run once. x AND TRUE and x OR FALSE are x.
func absorbed(f *Func) (Expr, bool) {
	var absorbing bool
	switch f.Name {
	case "and":
		absorbing = false
	case "or":
		absorbing = true
	default:
		return nil, false
	}
	if len(f.Args) != 2 || !arrow.TypeEqual(f.Typ, arrow.FixedWidthTypes.Boolean) {
		return nil, false
	}
	for i, a := range f.Args {
		c, v, ok := constBool(a)
		if !ok || c.IsNull() {
			continue
		}
		if v == absorbing {
			return c, true
		}
		if other := f.Args[1-i]; arrow.TypeEqual(other.Type(), arrow.FixedWidthTypes.Boolean) {
			return other, true
		}
	}
	return nil, false
}

// oneRow is a batch of one row and no columns, to evaluate constants on.
var oneRowSchema = arrow.NewSchema(nil, nil)

func oneRowBatch() arrow.RecordBatch { return array.NewRecordBatch(oneRowSchema, nil, 1) }

// evalConst evaluates an expression without column references.
func evalConst(ctx context.Context, now time.Time, e exec.Expr) (*exec.Literal, error) {
	if l, ok := e.(*exec.Literal); ok {
		return l, nil
	}
	batch := oneRowBatch()
	defer batch.Release()
	ec := &exec.EvalContext{Ctx: ctx, Mem: memory.DefaultAllocator, Now: now}
	arr, err := e.Eval(ec, batch)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	s, err := scalar.GetScalar(arr, 0)
	if err != nil {
		return nil, err
	}
	if !s.IsValid() {
		return exec.NewNullLiteral(e.DataType()), nil
	}
	return &exec.Literal{Value: s}, nil
}

// layout maps column IDs to positions of an input batch.
type layout struct {
	pos   map[ColumnID]int
	types []arrow.DataType
}

func layoutOf(cols []Column) *layout {
	l := &layout{pos: make(map[ColumnID]int, len(cols)), types: make([]arrow.DataType, len(cols))}
	for i, c := range cols {
		l.pos[c.ID] = i
		l.types[i] = c.Type
	}
	return l
}

// compile turns e into an exec expression over batches laid out as l.
func compile(e Expr, l *layout) (exec.Expr, error) {
	switch e := e.(type) {
	case *ColRef:
		i, ok := l.pos[e.ID]
		if !ok {
			return nil, fmt.Errorf("plan: column %s (#%d) is not in the input (planner bug)", e.Name, e.ID)
		}
		return &exec.Column{Index: i, Type: l.types[i], Name: e.Name}, nil
	case *Const:
		return e.Lit, nil
	case *InitPlan:
		if e.value != nil {
			return e.value.Lit, nil
		}
		return &initPlanExpr{ip: e}, nil
	case *mergeSubplan:
		return e.b.newClauseSubplan(e.X, e.Marks, e.joined, e.explain)
	case *Func:
		args := make([]exec.Expr, len(e.Args))
		for i, a := range e.Args {
			c, err := compile(a, l)
			if err != nil {
				return nil, err
			}
			args[i] = c
		}
		return e.build(args)
	}
	return nil, fmt.Errorf("plan: cannot compile %T (planner bug)", e)
}

// walkExpr calls f on e and every expression under it.
func walkExpr(e Expr, f func(Expr)) {
	f(e)
	if fn, ok := e.(*Func); ok {
		for _, a := range fn.Args {
			walkExpr(a, f)
		}
	}
}

// exprCols adds the IDs e references to set.
func exprCols(e Expr, set map[ColumnID]bool) {
	walkExpr(e, func(x Expr) {
		if c, ok := x.(*ColRef); ok {
			set[c.ID] = true
		}
	})
}

// refsOnly reports whether every column e references is in set.
func refsOnly(e Expr, set map[ColumnID]bool) bool {
	ok := true
	walkExpr(e, func(x Expr) {
		if c, isCol := x.(*ColRef); isCol && !set[c.ID] {
			ok = false
		}
	})
	return ok
}

// conjuncts splits an AND tree.
func conjuncts(e Expr) []Expr {
	if f, ok := e.(*Func); ok && f.Name == "and" && len(f.Args) == 2 {
		return append(conjuncts(f.Args[0]), conjuncts(f.Args[1])...)
	}
	return []Expr{e}
}
