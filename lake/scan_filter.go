package lake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/exec"
)

// filteredScan runs Table.Scan with a Filter through the engine's own
// table scan, which plans and prunes soundly (scan.PlanFilter,
// scan.ReadFilter), and evaluates the filter itself above it. Handing the
// filter to iceberg-go's reader instead lost rows: it skips row groups
// holding as many NULLs as values in a filtered column, and panics on
// some decimal comparisons.
func (t *Table) filteredScan(ctx context.Context, cfg scanConfig) (array.RecordReader, error) {
	full := t.Schema()
	cols := cfg.columns
	if len(cols) == 0 {
		for _, f := range full.Fields() {
			cols = append(cols, f.Name)
		}
	}
	bound, err := iceberg.BindExpr(t.icebergSchema(), cfg.filter, false /* caseSensitive */)
	if err != nil {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("scan %s: filter %s: %w", t.Name(), cfg.filter, err)}
	}
	read := slices.Clone(cols)
	for _, c := range filterColumns(bound) {
		if !slices.ContainsFunc(read, func(r string) bool { return strings.EqualFold(r, c) }) {
			read = append(read, c)
		}
	}
	fields := make([]arrow.Field, len(read))
	for i, c := range read {
		idx := fieldIndex(full, c)
		if idx < 0 {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("scan %s: column %q does not exist; the columns are %s", t.Name(), c, columnList(t.icebergSchema()))}
		}
		fields[i] = full.Field(idx)
		read[i] = fields[i].Name
	}
	schema := arrow.NewSchema(fields, nil)
	pred, err := filterExpr(bound, schema)
	if err != nil {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("scan %s: filter %s: %w", t.Name(), cfg.filter, err)}
	}
	ts, err := exec.NewTableScan(t.Name(), t.tbl, t.snap, read, schema, cfg.filter)
	if err != nil {
		return nil, err
	}
	var op exec.Operator
	if op, err = exec.NewFilter(ts, pred, nil); err != nil {
		return nil, err
	}
	if len(read) > len(cols) {
		exprs := make([]exec.Expr, len(cols))
		for i := range cols {
			exprs[i] = &exec.Column{Index: i, Type: fields[i].Type, Name: read[i]}
		}
		if op, err = exec.NewProject(op, exprs, read[:len(cols)], nil); err != nil {
			return nil, err
		}
	}
	if cfg.limit >= 0 {
		if op, err = exec.NewLimit(op, cfg.limit, 0); err != nil {
			return nil, err
		}
	}
	if err := op.Open(ctx); err != nil {
		op.Close()
		return nil, translate(fmt.Errorf("scan %s: %w", t.Name(), err))
	}
	return newOpReader(ctx, op, op.Schema()), nil
}

// filterColumns lists the columns of a bound filter.
func filterColumns(bound iceberg.BooleanExpression) []string {
	var out []string
	v := &exprVisitor{leaf: func(p iceberg.BoundPredicate) (exec.Expr, error) {
		out = append(out, p.Ref().Field().Name)
		return nil, nil
	}}
	iceberg.VisitExpr(bound, iceberg.BooleanExprVisitor[exec.Expr](v))
	return out
}

// filterExpr compiles a bound Iceberg filter into an engine expression
// over batches of schema, with SQL's comparison semantics (NULL never
// matches, as in iceberg-go's own evaluation).
func filterExpr(bound iceberg.BooleanExpression, schema *arrow.Schema) (exec.Expr, error) {
	v := &exprVisitor{}
	v.leaf = func(p iceberg.BoundPredicate) (exec.Expr, error) { return predicate(p, schema) }
	e, err := iceberg.VisitExpr(bound, iceberg.BooleanExprVisitor[exec.Expr](v))
	if err == nil {
		err = v.err
	}
	if err != nil {
		return nil, err
	}
	return exec.NewCall("is_true", e)
}

type exprVisitor struct {
	leaf func(iceberg.BoundPredicate) (exec.Expr, error)
	err  error
}

func (v *exprVisitor) fail(err error) exec.Expr {
	if v.err == nil {
		v.err = err
	}
	l, _ := exec.NewLiteral(false)
	return l
}

func (v *exprVisitor) call(name string, args ...exec.Expr) exec.Expr {
	for _, a := range args {
		if a == nil {
			return nil // filterColumns: nothing is built
		}
	}
	e, err := exec.NewCall(name, args...)
	if err != nil {
		return v.fail(err)
	}
	return e
}

func (v *exprVisitor) VisitTrue() exec.Expr {
	l, _ := exec.NewLiteral(true)
	return l
}

func (v *exprVisitor) VisitFalse() exec.Expr {
	l, _ := exec.NewLiteral(false)
	return l
}

func (v *exprVisitor) VisitNot(c exec.Expr) exec.Expr    { return v.call("not", c) }
func (v *exprVisitor) VisitAnd(l, r exec.Expr) exec.Expr { return v.call("and", l, r) }
func (v *exprVisitor) VisitOr(l, r exec.Expr) exec.Expr  { return v.call("or", l, r) }
func (v *exprVisitor) VisitUnbound(iceberg.UnboundPredicate) exec.Expr {
	return v.fail(errors.New("the filter is not bound (broken invariant)"))
}

func (v *exprVisitor) VisitBound(p iceberg.BoundPredicate) exec.Expr {
	e, err := v.leaf(p)
	if err != nil {
		return v.fail(err)
	}
	return e
}

// fieldIndex is the index of schema's column name, matched exactly or
// else ignoring case (Filter binds case-insensitively), or -1.
func fieldIndex(schema *arrow.Schema, name string) int {
	if idx := schema.FieldIndices(name); len(idx) > 0 {
		return idx[0]
	}
	for i, f := range schema.Fields() {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// predicate compiles one leaf: a column compared with literals.
func predicate(p iceberg.BoundPredicate, schema *arrow.Schema) (exec.Expr, error) {
	name := p.Ref().Field().Name
	idx := fieldIndex(schema, name)
	if idx < 0 {
		return nil, fmt.Errorf("column %q is not a top-level column", name)
	}
	col := &exec.Column{Index: idx, Type: schema.Field(idx).Type, Name: schema.Field(idx).Name}
	ops := map[iceberg.Operation]string{
		iceberg.OpEQ: "=", iceberg.OpNEQ: "<>", iceberg.OpLT: "<", iceberg.OpLTEQ: "<=", iceberg.OpGT: ">", iceberg.OpGTEQ: ">=",
	}
	switch op := p.Op(); op {
	case iceberg.OpIsNull:
		return exec.NewCall("is_null", col)
	case iceberg.OpNotNull:
		return exec.NewCall("is_not_null", col)
	case iceberg.OpEQ, iceberg.OpNEQ, iceberg.OpLT, iceberg.OpLTEQ, iceberg.OpGT, iceberg.OpGTEQ, iceberg.OpStartsWith, iceberg.OpNotStartsWith:
		lp, ok := p.(iceberg.BoundLiteralPredicate)
		if !ok {
			return nil, fmt.Errorf("predicate %s has no literal", p)
		}
		l, err := literalOf(lp.Literal(), col.Type)
		if err != nil {
			return nil, err
		}
		switch op {
		case iceberg.OpStartsWith:
			return exec.NewCall("starts_with", col, l)
		case iceberg.OpNotStartsWith:
			s, err := exec.NewCall("starts_with", col, l)
			if err != nil {
				return nil, err
			}
			return exec.NewCall("not", s)
		}
		return exec.NewCall(ops[op], col, l)
	case iceberg.OpIn, iceberg.OpNotIn:
		sp, ok := p.(iceberg.BoundSetPredicate)
		if !ok {
			return nil, fmt.Errorf("predicate %s has no literal set", p)
		}
		var list []exec.Expr
		for _, l := range sp.Literals().Members() {
			e, err := literalOf(l, col.Type)
			if err != nil {
				return nil, err
			}
			list = append(list, e)
		}
		return exec.NewInList(col, list, op == iceberg.OpNotIn)
	}
	return nil, fmt.Errorf("predicate %s is not supported in a scan filter", p)
}

// literalOf turns an Iceberg literal into an engine literal of type to.
func literalOf(l iceberg.Literal, to arrow.DataType) (exec.Expr, error) {
	var e exec.Expr
	var err error
	switch v := l.Any().(type) {
	case iceberg.Date:
		e, err = exec.NewLiteral(arrow.Date32(v))
	case iceberg.Timestamp:
		tt := &arrow.TimestampType{Unit: arrow.Microsecond}
		if ts, ok := to.(*arrow.TimestampType); ok {
			tt = ts
		}
		e = &exec.Literal{Value: scalar.NewTimestampScalar(arrow.Timestamp(v), tt)}
	case iceberg.Decimal:
		e, err = exec.NewDecimalLiteral(l.String())
	case bool, int32, int64, float32, float64, string, []byte:
		e, err = exec.NewLiteral(v)
	default:
		return nil, fmt.Errorf("a literal of type %s is not supported in a scan filter", l.Type())
	}
	if err != nil {
		return nil, err
	}
	if dt := e.DataType(); !arrow.TypeEqual(dt, to) {
		return exec.NewCast(e, to, false)
	}
	return e, nil
}
