package plan

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/snapshot"
)

// Column defaults. A column's DEFAULT is kept as SQL text in the table
// property DefaultProperty(column), on v2 and v3 tables alike, and bound
// afresh in each statement that needs it: an INSERT that leaves the
// column out, DEFAULT in VALUES, UPDATE SET and MERGE, INSERT … DEFAULT
// VALUES. So now() is the statement's time, as in PostgreSQL. A default
// applies to rows written after it is set. On a v3 table a constant one
// (icebergDefault) is also the field's Iceberg write-default, and ADD
// COLUMN … DEFAULT's its initial-default, which the rows already there
// read; elsewhere ADD COLUMN … DEFAULT is refused.

// defaultPrefix starts the property of a column's DEFAULT.
const defaultPrefix = "skade.column-default."

// DefaultProperty is the table property holding column col's DEFAULT.
func DefaultProperty(col string) string { return defaultPrefix + col }

// columnDefault is the DEFAULT of column col in props, "" for none.
func columnDefault(props iceberg.Properties, col string) string {
	return props[DefaultProperty(col)]
}

// defaultValue is tc's DEFAULT, bound, or NULL when it has none.
func (b *binder) defaultValue(tc TargetColumn) (Expr, error) {
	if tc.Default == "" {
		return constLit(exec.NewNullLiteral(tc.Type)), nil
	}
	e, err := parser.ParseExpr(tc.Default)
	if err != nil {
		return nil, fmt.Errorf("column %q: its DEFAULT %s does not parse: %w", tc.Name, tc.Default, err)
	}
	return b.bindExpr(e, &exprCtx{sc: newScope(nil, nil), clause: "DEFAULT"})
}

// checkDefaultValue binds a DEFAULT expression for column col (no column
// references, assignable to its type) and returns its canonical text and
// the default converted to the column's type (a Const when it is a
// constant).
func (b *binder) checkDefaultValue(e parser.Expr, col TargetColumn, table string) (string, Expr, error) {
	x, err := b.bindExpr(e, &exprCtx{sc: newScope(nil, nil), clause: "DEFAULT"})
	if err != nil {
		return "", nil, err
	}
	v, err := b.assign(x, col, table, e.Position())
	if err != nil {
		return "", nil, err
	}
	return e.String(), v, nil
}

// constantDefault reports whether a DEFAULT expression is the same for
// every row whenever it is written: no function call (now() and the
// like are the statement's time, folded to a constant within one
// statement only).
func constantDefault(e parser.Expr) bool {
	ok := true
	parser.Inspect(e, func(n parser.Node) bool {
		if _, call := n.(*parser.FuncCall); call {
			ok = false
		}
		return ok
	})
	return ok
}

// icebergDefault is a constant, non-NULL DEFAULT v as an Iceberg literal
// of type t, for a v3 table's write-default and initial-default; false
// when v is not such a constant (now(), NULL) or t has no literal here
// (decimal, uuid, binary, dates and times, nested types): those defaults
// stay skade's own (DefaultProperty).
func icebergDefault(v Expr, t iceberg.Type) (iceberg.Literal, bool) {
	c, ok := v.(*Const)
	if !ok || c.IsNull() {
		return nil, false
	}
	var lit iceberg.Literal
	switch s := c.Lit.Value.(type) {
	case *scalar.Boolean:
		lit = iceberg.NewLiteral(s.Value)
	case *scalar.Int32:
		lit = iceberg.NewLiteral(s.Value)
	case *scalar.Int64:
		lit = iceberg.NewLiteral(s.Value)
	case *scalar.Float32:
		lit = iceberg.NewLiteral(s.Value)
	case *scalar.Float64:
		lit = iceberg.NewLiteral(s.Value)
	case *scalar.String:
		lit = iceberg.NewLiteral(string(s.Data()))
	default:
		// dates, times and timestamps too: iceberg-go v0.7.0 writes their
		// defaults as numbers where the spec has ISO strings, which other
		// engines would refuse to read
		return nil, false
	}
	if !lit.Type().Equals(t) {
		return nil, false // (a timestamptz column: iceberg-go's literal is a timestamp's)
	}
	return lit, true
}

// dictionaryProperty is the dictionary-encoding property of column col
// (snapshot.DictionaryFor), which follows the column like its DEFAULT.
func dictionaryProperty(col string) string {
	k, _ := snapshot.DictionaryFor(col)
	return k
}
