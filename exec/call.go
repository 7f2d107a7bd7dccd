package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// This file resolves function and operator calls. Each concept file
// registers its functions in an init func; NewCall picks the first
// overload that accepts the argument types and returns a typed Call whose
// kernel was chosen once, at bind time, so Eval does no type dispatch.

// kernel computes a call over evaluated arguments, each n rows long. It
// owns nothing: the Call releases the arguments.
type kernel func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error)

// Call is a resolved function or operator application.
type Call struct {
	// Name is the function or operator name, lower case ("+", "lower").
	Name string
	Args []Expr
	typ  arrow.DataType
	fn   kernel
	// form decides how String renders the call.
	form callForm
	// skip marks arguments the kernel does not read (bit i = Args[i]),
	// typically a constant compiled at bind time such as a LIKE pattern;
	// Eval passes nil for them instead of materialising a column.
	skip uint64
	// eval, when set, replaces argument-then-kernel evaluation for calls
	// that must not evaluate every argument on every row (AND and OR
	// short-circuit, as Postgres does).
	eval func(c *Call, ec *EvalContext, batch arrow.RecordBatch) (arrow.Array, error)
}

type callForm uint8

const (
	formFunc    callForm = iota // name(a, b)
	formInfix                   // (a name b)
	formPrefix                  // (name a)
	formPostfix                 // (a name)
)

var _ Expr = (*Call)(nil)

func (c *Call) DataType() arrow.DataType { return c.typ }

func (c *Call) Eval(ec *EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	if c.eval != nil {
		return c.eval(c, ec, batch)
	}
	args := make([]arrow.Array, len(c.Args))
	defer releaseAll(args)
	for i, a := range c.Args {
		if c.skip&(1<<i) != 0 {
			continue
		}
		v, err := a.Eval(ec, batch)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return c.fn(ec, args, int(batch.NumRows()))
}

func (c *Call) String() string {
	switch c.form {
	case formInfix:
		return "(" + c.Args[0].String() + " " + opDisplay(c.Name) + " " + c.Args[1].String() + ")"
	case formPrefix:
		return "(" + opDisplay(c.Name) + " " + c.Args[0].String() + ")"
	case formPostfix:
		return "(" + c.Args[0].String() + " " + opDisplay(c.Name) + ")"
	}
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = a.String()
	}
	return c.Name + "(" + strings.Join(parts, ", ") + ")"
}

// opDisplay renders an operator name as SQL.
func opDisplay(name string) string {
	switch name {
	case "negate":
		return "-"
	case "and", "or", "not", "like", "ilike":
		return strings.ToUpper(name)
	case "not_like":
		return "NOT LIKE"
	case "not_ilike":
		return "NOT ILIKE"
	case "is_null":
		return "IS NULL"
	case "is_not_null":
		return "IS NOT NULL"
	case "is_true":
		return "IS TRUE"
	case "is_false":
		return "IS FALSE"
	case "is_not_true":
		return "IS NOT TRUE"
	case "is_not_false":
		return "IS NOT FALSE"
	case "is_distinct_from":
		return "IS DISTINCT FROM"
	case "is_not_distinct_from":
		return "IS NOT DISTINCT FROM"
	}
	return name
}

func newCall(name string, typ arrow.DataType, fn kernel, form callForm, args ...Expr) *Call {
	return &Call{Name: name, Args: args, typ: typ, fn: fn, form: form}
}

// skipping marks arguments the kernel ignores; see Call.skip.
func (c *Call) skipping(idx ...int) *Call {
	for _, i := range idx {
		c.skip |= 1 << i
	}
	return c
}

// errNoMatch tells NewCall that an overload does not accept the argument
// types, so it should try the next one.
var errNoMatch = errors.New("no matching overload")

// overload builds a call if it accepts the argument types, or returns
// errNoMatch.
type overload func(name string, args []Expr) (Expr, error)

var (
	functions = map[string][]overload{}
	operators = map[string]bool{}
)

// register adds overloads for a function name.
func register(name string, fs ...overload) {
	functions[name] = append(functions[name], fs...)
}

// registerOp adds overloads for an operator name.
func registerOp(name string, fs ...overload) {
	operators[name] = true
	register(name, fs...)
}

// NewCall resolves a function or operator by name and argument types,
// inserting implicit casts, and returns a typed expression. Operators are
// named + - * / % negate = <> < <= > >= and or not || like ilike not_like
// not_ilike is_null is_not_null is_true is_false is_not_true is_not_false
// is_distinct_from is_not_distinct_from.
func NewCall(name string, args ...Expr) (Expr, error) {
	lname := strings.ToLower(name)
	for i, a := range args {
		if a == nil {
			return nil, fmt.Errorf("exec: %s: argument %d is nil (planner bug)", lname, i+1)
		}
	}
	fs, ok := functions[lname]
	if !ok {
		msg := fmt.Sprintf("function %s(%s) does not exist", lname, typeNames(exprTypes(args, false)))
		if s := suggestFunction(lname); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return nil, errors.New(msg)
	}
	for _, f := range fs {
		e, err := f(lname, args)
		if err == nil {
			return e, nil
		}
		if !errors.Is(err, errNoMatch) {
			return nil, err
		}
	}
	return nil, noSuchCall(lname, args)
}

// noSuchCall is the error for a known name applied to the wrong types.
func noSuchCall(name string, args []Expr) error {
	ts := exprTypes(args, false)
	if operators[name] {
		op := opDisplay(name)
		switch len(ts) {
		case 1:
			return fmt.Errorf("operator does not exist: %s %s; add an explicit cast", op, TypeName(ts[0]))
		case 2:
			return fmt.Errorf("operator does not exist: %s %s %s; add an explicit cast", TypeName(ts[0]), op, TypeName(ts[1]))
		}
	}
	return fmt.Errorf("function %s(%s) does not exist; add explicit casts to the arguments", name, typeNames(ts))
}

// FunctionNames lists the registered function names (operators excluded),
// sorted; the binder and shell use it for completion and suggestions.
func FunctionNames() []string {
	out := make([]string, 0, len(functions))
	for n := range functions {
		if !operators[n] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// suggestFunction returns the registered function name closest to name,
// or "" when nothing is close.
func suggestFunction(name string) string {
	best, bestD := "", 1<<30
	for _, n := range FunctionNames() {
		d := levenshtein(name, n)
		if d < bestD {
			best, bestD = n, d
		}
	}
	if bestD > max(2, len(name)/3) {
		return ""
	}
	return best
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// foldConstant evaluates an argument-free expression (a cast of a literal,
// say) once and returns it as a Literal, so that errors in constants are
// reported at bind time, as Postgres reports them at parse time.
func foldConstant(e Expr) (*Literal, error) { return foldConstantWith(nil, e) }

// foldConstantWith is foldConstant with the caller's context (for Now).
func foldConstantWith(ec *EvalContext, e Expr) (*Literal, error) {
	if ec == nil {
		ec = NewEvalContext(context.Background())
	}
	batch := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer batch.Release()
	arr, err := e.Eval(ec, batch)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	s, err := scalar.GetScalar(arr, 0)
	if err != nil {
		return nil, err
	}
	return &Literal{Value: s}, nil
}

// sig is a fixed-signature overload: each argument is coerced implicitly
// to its parameter type, or the overload does not match.
func sig(params []arrow.DataType, ret arrow.DataType, fn kernel) overload {
	return func(name string, args []Expr) (Expr, error) {
		if len(args) != len(params) {
			return nil, errNoMatch
		}
		cargs := make([]Expr, len(args))
		for i, a := range args {
			if !canImplicit(a.DataType(), params[i]) && !isUnknownLiteral(a) {
				return nil, errNoMatch
			}
			c, err := Coerce(a, params[i])
			if err != nil {
				return nil, err
			}
			cargs[i] = c
		}
		return newCall(name, ret, fn, formFunc, cargs...), nil
	}
}

// types is shorthand for a parameter list.
func types(ts ...arrow.DataType) []arrow.DataType { return ts }

// literalValue returns e's value when e is a non-NULL literal.
func literalValue(e Expr) (scalar.Scalar, bool) {
	l, ok := e.(*Literal)
	if !ok || !l.Value.IsValid() {
		return nil, false
	}
	return l.Value, true
}
