package parser

import "strings"

// exprPrec is the precedence of e as an operand: the deparser wraps an
// operand in parentheses when its precedence is below what its position
// requires, which is exactly when re-parsing would otherwise regroup it.
func exprPrec(e Expr) int {
	switch x := e.(type) {
	case *BinaryExpr:
		return binaryPrec(x.Op)
	case *UnaryExpr:
		if x.Op == OpNot {
			return precNot
		}
		return precUnary
	case *IsExpr:
		return precIs
	case *BetweenExpr, *InExpr, *LikeExpr:
		return precIn
	case *Literal:
		if strings.HasPrefix(x.Value, "-") {
			return precUnary
		}
	case *Subscript, *FieldAccess:
		return precPostfix
	}
	return precPrimary
}

// exprP writes e, parenthesised if its precedence is below min.
func (w *writer) exprP(e Expr, min int) {
	if exprPrec(e) < min {
		w.WriteByte('(')
		e.format(w)
		w.WriteByte(')')
		return
	}
	e.format(w)
}

func (w *writer) exprs(list []Expr) {
	for i, e := range list {
		if i > 0 {
			w.WriteString(", ")
		}
		e.format(w)
	}
}

func (x *Literal) format(w *writer) {
	switch x.Kind {
	case LitNull:
		w.WriteString("NULL")
	case LitBool:
		w.WriteString(strings.ToUpper(x.Value))
	case LitString:
		w.stringLit(x.Value)
	default:
		w.WriteString(x.Value)
	}
}

func (x *TypedLiteral) format(w *writer) {
	w.typeName(x.Type)
	w.WriteByte(' ')
	w.stringLit(x.Value)
}

func (x *IntervalLiteral) format(w *writer) {
	w.WriteString("INTERVAL ")
	if lit, ok := x.Value.(*Literal); ok && (lit.Kind == LitString ||
		(lit.Kind == LitInteger || lit.Kind == LitDecimal) && !strings.HasPrefix(lit.Value, "-")) {
		lit.format(w)
	} else {
		w.WriteByte('(')
		x.Value.format(w)
		w.WriteByte(')')
	}
	if x.Unit != "" {
		w.s(" ", x.Unit)
	}
}

func (x *Param) format(w *writer) {
	if x.Positional {
		w.WriteByte('?')
		return
	}
	w.WriteByte('$')
	w.WriteString(itoa(x.Index))
}

func (x *ColumnRef) format(w *writer) { w.name(x.Name) }

func (x *Star) format(w *writer) {
	if len(x.Table) > 0 {
		w.name(x.Table)
		w.WriteByte('.')
	}
	w.WriteByte('*')
	if x.Exclude != nil {
		w.WriteString(" EXCLUDE (")
		w.idents(x.Exclude)
		w.WriteByte(')')
	}
	if x.Replace != nil {
		w.WriteString(" REPLACE (")
		for i, r := range x.Replace {
			if i > 0 {
				w.WriteString(", ")
			}
			r.format(w)
		}
		w.WriteByte(')')
	}
}

func (x *ReplaceItem) format(w *writer) {
	x.Expr.format(w)
	w.WriteString(" AS ")
	w.ident(x.Name)
}

func (x *UnaryExpr) format(w *writer) {
	switch x.Op {
	case OpNot:
		w.WriteString("NOT ")
		w.exprP(x.X, precNot)
	default:
		w.WriteString(x.Op.String())
		// "- -x", not "--x", which would start a comment.
		switch y := x.X.(type) {
		case *UnaryExpr:
			if y.Op == OpNeg {
				w.WriteByte(' ')
			}
		case *Literal:
			if strings.HasPrefix(y.Value, "-") {
				w.WriteByte(' ')
			}
		}
		w.exprP(x.X, precUnary)
	}
}

func (x *BinaryExpr) format(w *writer) {
	prec := binaryPrec(x.Op)
	if prec == precCmp {
		w.exprP(x.L, prec+1) // comparisons do not chain
	} else {
		w.exprP(x.L, prec)
	}
	w.s(" ", x.Op.String(), " ")
	w.exprP(x.R, prec+1)
}

func (x *IsExpr) format(w *writer) {
	w.exprP(x.X, precIs+1)
	w.WriteString(" IS ")
	if x.Not {
		w.WriteString("NOT ")
	}
	switch x.Test {
	case IsNull:
		w.WriteString("NULL")
	case IsTrue:
		w.WriteString("TRUE")
	case IsFalse:
		w.WriteString("FALSE")
	case IsUnknown:
		w.WriteString("UNKNOWN")
	case IsDistinctFrom:
		w.WriteString("DISTINCT FROM ")
		w.exprP(x.From, precIs+1)
	}
}

func (x *BetweenExpr) format(w *writer) {
	w.exprP(x.X, precIn+1)
	if x.Not {
		w.WriteString(" NOT")
	}
	w.WriteString(" BETWEEN ")
	if x.Symmetric {
		w.WriteString("SYMMETRIC ")
	}
	w.exprP(x.Lo, precOther)
	w.WriteString(" AND ")
	w.exprP(x.Hi, precOther)
}

func (x *InExpr) format(w *writer) {
	w.exprP(x.X, precIn+1)
	if x.Not {
		w.WriteString(" NOT")
	}
	w.WriteString(" IN (")
	if x.Query != nil {
		x.Query.format(w)
	} else {
		w.exprs(x.List)
	}
	w.WriteByte(')')
}

func (x *LikeExpr) format(w *writer) {
	w.exprP(x.X, precIn+1)
	if x.Not {
		w.WriteString(" NOT")
	}
	if x.ILike {
		w.WriteString(" ILIKE ")
	} else {
		w.WriteString(" LIKE ")
	}
	w.exprP(x.Pattern, precOther)
	if x.Escape != nil {
		w.WriteString(" ESCAPE ")
		w.exprP(x.Escape, precOther)
	}
}

func (x *CaseExpr) format(w *writer) {
	w.WriteString("CASE")
	if x.Operand != nil {
		w.WriteByte(' ')
		x.Operand.format(w)
	}
	for _, wh := range x.Whens {
		w.WriteByte(' ')
		wh.format(w)
	}
	if x.Else != nil {
		w.WriteString(" ELSE ")
		x.Else.format(w)
	}
	w.WriteString(" END")
}

func (x *When) format(w *writer) {
	w.WriteString("WHEN ")
	x.Cond.format(w)
	w.WriteString(" THEN ")
	x.Result.format(w)
}

func (x *Exists) format(w *writer) {
	w.WriteString("EXISTS (")
	x.Query.format(w)
	w.WriteByte(')')
}

func (x *Quantified) format(w *writer) {
	w.exprP(x.X, precCmp+1)
	w.WriteString(" " + x.Op.String())
	if x.All {
		w.WriteString(" ALL (")
	} else {
		w.WriteString(" ANY (")
	}
	if x.Query != nil {
		x.Query.format(w)
	} else {
		x.Array.format(w)
	}
	w.WriteByte(')')
}

func (x *AllColumns) format(w *writer) { w.WriteString("ALL") }

func (x *GroupingSets) format(w *writer) {
	w.WriteString(x.Kind + " (")
	for i, set := range x.Sets {
		if i > 0 {
			w.WriteString(", ")
		}
		if x.Kind == "GROUPING SETS" || len(set) != 1 {
			w.WriteByte('(')
			w.exprs(set)
			w.WriteByte(')')
			continue
		}
		set[0].format(w)
	}
	w.WriteByte(')')
}

func (x *ArraySubquery) format(w *writer) {
	w.WriteString("ARRAY(")
	x.Query.format(w)
	w.WriteByte(')')
}

func (x *SubqueryExpr) format(w *writer) {
	w.WriteByte('(')
	x.Query.format(w)
	w.WriteByte(')')
}

func (x *Cast) format(w *writer) {
	if x.Try {
		w.WriteString("TRY_CAST(")
	} else {
		w.WriteString("CAST(")
	}
	x.X.format(w)
	w.WriteString(" AS ")
	w.typeName(x.Type)
	w.WriteByte(')')
}

func (x *Extract) format(w *writer) {
	w.WriteString("EXTRACT(")
	if isPlainUpper(x.Field) {
		w.WriteString(x.Field)
	} else {
		w.stringLit(x.Field)
	}
	w.WriteString(" FROM ")
	x.X.format(w)
	w.WriteByte(')')
}

func isPlainUpper(s string) bool {
	if s == "" || isReserved(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func (x *FuncCall) format(w *writer) {
	w.name(x.Name)
	if x.NoParens {
		return
	}
	w.WriteByte('(')
	switch {
	case x.Star:
		w.WriteByte('*')
	default:
		if x.Distinct {
			w.WriteString("DISTINCT ")
		}
		w.exprs(x.Args)
		if x.OrderBy != nil {
			w.WriteString(" ORDER BY ")
			w.orderItems(x.OrderBy)
		}
	}
	w.WriteByte(')')
	if x.WithinGroup != nil {
		w.WriteString(" WITHIN GROUP (ORDER BY ")
		w.orderItems(x.WithinGroup)
		w.WriteByte(')')
	}
	if x.Filter != nil {
		w.WriteString(" FILTER (WHERE ")
		x.Filter.format(w)
		w.WriteByte(')')
	}
	if x.Over != nil {
		w.WriteString(" OVER ")
		x.Over.format(w)
	} else if !x.OverName.Empty() {
		w.WriteString(" OVER ")
		w.ident(x.OverName)
	}
}

func (x *NamedArg) format(w *writer) {
	w.ident(x.Name)
	w.WriteString(" => ")
	x.Value.format(w)
}

func (x *WindowSpec) format(w *writer) {
	w.WriteByte('(')
	sep := ""
	if !x.Ref.Empty() {
		w.ident(x.Ref)
		sep = " "
	}
	if x.PartitionBy != nil {
		w.s(sep, "PARTITION BY ")
		w.exprs(x.PartitionBy)
		sep = " "
	}
	if x.OrderBy != nil {
		w.s(sep, "ORDER BY ")
		w.orderItems(x.OrderBy)
		sep = " "
	}
	if x.Frame != nil {
		w.WriteString(sep)
		x.Frame.format(w)
	}
	w.WriteByte(')')
}

func (x *Frame) format(w *writer) {
	switch x.Unit {
	case FrameRows:
		w.WriteString("ROWS ")
	case FrameRange:
		w.WriteString("RANGE ")
	case FrameGroups:
		w.WriteString("GROUPS ")
	}
	if x.End != nil {
		w.WriteString("BETWEEN ")
		x.Start.format(w)
		w.WriteString(" AND ")
		x.End.format(w)
	} else {
		x.Start.format(w)
	}
	if x.Exclude != "" {
		w.s(" EXCLUDE ", x.Exclude)
	}
}

func (x *FrameBound) format(w *writer) {
	switch x.Kind {
	case UnboundedPreceding:
		w.WriteString("UNBOUNDED PRECEDING")
	case UnboundedFollowing:
		w.WriteString("UNBOUNDED FOLLOWING")
	case CurrentRow:
		w.WriteString("CURRENT ROW")
	case Preceding:
		w.exprP(x.Offset, precOther)
		w.WriteString(" PRECEDING")
	case Following:
		w.exprP(x.Offset, precOther)
		w.WriteString(" FOLLOWING")
	}
}

func (x *ArrayExpr) format(w *writer) {
	w.WriteString("ARRAY[")
	w.exprs(x.Elems)
	w.WriteByte(']')
}

func (x *Subscript) format(w *writer) {
	w.exprP(x.X, precPostfix)
	w.WriteByte('[')
	x.Index.format(w)
	w.WriteByte(']')
}

func (x *StructExpr) format(w *writer) {
	w.WriteByte('{')
	for i, f := range x.Fields {
		if i > 0 {
			w.WriteString(", ")
		}
		w.stringLit(f.Name.Name)
		w.WriteString(": ")
		f.Value.format(w)
	}
	w.WriteByte('}')
}

func (x *MapExpr) format(w *writer) {
	w.WriteString("MAP {")
	for i := range x.Keys {
		if i > 0 {
			w.WriteString(", ")
		}
		x.Keys[i].format(w)
		w.WriteString(": ")
		x.Values[i].format(w)
	}
	w.WriteByte('}')
}

func (x *FieldAccess) format(w *writer) {
	// always parenthesised: a bare name before the dot would read back
	// as a qualified column reference
	w.WriteByte('(')
	x.X.format(w)
	w.WriteString(").")
	w.ident(x.Field)
}

func (x *Default) format(w *writer) { w.WriteString("DEFAULT") }

func (x *RowExpr) format(w *writer) {
	w.WriteByte('(')
	w.exprs(x.Elems)
	w.WriteByte(')')
}

func (w *writer) orderItems(items []*OrderItem) {
	for i, it := range items {
		if i > 0 {
			w.WriteString(", ")
		}
		it.format(w)
	}
}

func (x *OrderItem) format(w *writer) {
	x.Expr.format(w)
	if x.Desc {
		w.WriteString(" DESC")
	}
	switch x.Nulls {
	case NullsFirst:
		w.WriteString(" NULLS FIRST")
	case NullsLast:
		w.WriteString(" NULLS LAST")
	}
}

// String methods: canonical SQL for each expression node.

func (x *Literal) String() string         { return str(x) }
func (x *TypedLiteral) String() string    { return str(x) }
func (x *IntervalLiteral) String() string { return str(x) }
func (x *Param) String() string           { return str(x) }
func (x *ColumnRef) String() string       { return str(x) }
func (x *Star) String() string            { return str(x) }
func (x *ReplaceItem) String() string     { return str(x) }
func (x *UnaryExpr) String() string       { return str(x) }
func (x *BinaryExpr) String() string      { return str(x) }
func (x *IsExpr) String() string          { return str(x) }
func (x *BetweenExpr) String() string     { return str(x) }
func (x *InExpr) String() string          { return str(x) }
func (x *LikeExpr) String() string        { return str(x) }
func (x *CaseExpr) String() string        { return str(x) }
func (x *When) String() string            { return str(x) }
func (x *Exists) String() string          { return str(x) }
func (x *SubqueryExpr) String() string    { return str(x) }
func (x *Quantified) String() string      { return str(x) }
func (x *ArraySubquery) String() string   { return str(x) }
func (x *AllColumns) String() string      { return str(x) }
func (x *GroupingSets) String() string    { return str(x) }
func (x *Cast) String() string            { return str(x) }
func (x *Extract) String() string         { return str(x) }
func (x *FuncCall) String() string        { return str(x) }
func (x *NamedArg) String() string        { return str(x) }
func (x *WindowSpec) String() string      { return str(x) }
func (x *Frame) String() string           { return str(x) }
func (x *FrameBound) String() string      { return str(x) }
func (x *ArrayExpr) String() string       { return str(x) }
func (x *Subscript) String() string       { return str(x) }
func (x *StructExpr) String() string      { return str(x) }
func (x *FieldAccess) String() string     { return str(x) }
func (x *MapExpr) String() string         { return str(x) }
func (x *Default) String() string         { return str(x) }
func (x *RowExpr) String() string         { return str(x) }
func (x *OrderItem) String() string       { return str(x) }
