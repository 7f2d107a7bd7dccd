package plan

import (
	"fmt"

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
// applies to rows written after it is set; it never fills rows already
// there, which is why ADD COLUMN … DEFAULT is refused.

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

// checkDefault binds a DEFAULT expression for column col (no column
// references, assignable to its type) and returns its canonical text.
func (b *binder) checkDefault(e parser.Expr, col TargetColumn, table string) (string, error) {
	x, err := b.bindExpr(e, &exprCtx{sc: newScope(nil, nil), clause: "DEFAULT"})
	if err != nil {
		return "", err
	}
	if _, err := b.assign(x, col, table, e.Position()); err != nil {
		return "", err
	}
	return e.String(), nil
}

// dictionaryProperty is the dictionary-encoding property of column col
// (snapshot.DictionaryFor), which follows the column like its DEFAULT.
func dictionaryProperty(col string) string {
	k, _ := snapshot.DictionaryFor(col)
	return k
}
