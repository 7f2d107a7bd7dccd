package parser

func (x *Query) format(w *writer) {
	if x.With != nil {
		x.With.format(w)
		w.WriteByte(' ')
	}
	w.body(x.Body, 0)
	if x.OrderBy != nil {
		w.WriteString(" ORDER BY ")
		w.orderItems(x.OrderBy)
	}
	if x.WithTies {
		if x.Offset != nil {
			w.WriteString(" OFFSET ")
			x.Offset.format(w)
			w.WriteString(" ROWS")
		}
		w.WriteString(" FETCH FIRST ")
		w.exprP(x.Limit, precOther)
		w.WriteString(" ROWS WITH TIES")
		return
	}
	if x.Limit != nil {
		w.WriteString(" LIMIT ")
		x.Limit.format(w)
	}
	if x.Offset != nil {
		w.WriteString(" OFFSET ")
		x.Offset.format(w)
	}
}

// setPrec is the binding strength of a query body inside a set operation:
// INTERSECT binds tighter than UNION and EXCEPT.
func setPrec(b QueryBody) int {
	if s, ok := b.(*SetOp); ok {
		if s.Op == Intersect {
			return 2
		}
		return 1
	}
	if _, ok := b.(*Query); ok {
		return 0 // always parenthesised: it carries its own ORDER BY/LIMIT/WITH
	}
	return 3
}

func (w *writer) body(b QueryBody, min int) {
	if setPrec(b) < min || setPrec(b) == 0 {
		w.WriteByte('(')
		b.format(w)
		w.WriteByte(')')
		return
	}
	b.format(w)
}

func (x *SetOp) format(w *writer) {
	p := setPrec(x)
	w.body(x.Left, p)
	w.s(" ", x.Op.String())
	if x.All {
		w.WriteString(" ALL")
	}
	w.WriteByte(' ')
	w.body(x.Right, p+1)
}

func (x *With) format(w *writer) {
	w.WriteString("WITH ")
	if x.Recursive {
		w.WriteString("RECURSIVE ")
	}
	for i, c := range x.CTEs {
		if i > 0 {
			w.WriteString(", ")
		}
		c.format(w)
	}
}

func (x *CTE) format(w *writer) {
	w.ident(x.Name)
	if x.Columns != nil {
		w.WriteString(" (")
		w.idents(x.Columns)
		w.WriteByte(')')
	}
	w.WriteString(" AS ")
	if x.Materialized != "" {
		w.s(x.Materialized, " ")
	}
	w.WriteByte('(')
	if x.DML != nil {
		x.DML.format(w)
	} else {
		x.Query.format(w)
	}
	w.WriteByte(')')
}

func (x *Select) format(w *writer) {
	w.WriteString("SELECT ")
	if x.Distinct {
		w.WriteString("DISTINCT ")
		if x.DistinctOn != nil {
			w.WriteString("ON (")
			w.exprs(x.DistinctOn)
			w.WriteString(") ")
		}
	}
	w.selectItems(x.Items)
	if x.From != nil {
		w.WriteString(" FROM ")
		w.tables(x.From)
	}
	if x.Where != nil {
		w.WriteString(" WHERE ")
		x.Where.format(w)
	}
	if x.GroupByAll {
		w.WriteString(" GROUP BY ALL")
	} else if x.GroupBy != nil {
		w.WriteString(" GROUP BY ")
		w.exprs(x.GroupBy)
	}
	if x.Having != nil {
		w.WriteString(" HAVING ")
		x.Having.format(w)
	}
	if x.Windows != nil {
		w.WriteString(" WINDOW ")
		for i, nw := range x.Windows {
			if i > 0 {
				w.WriteString(", ")
			}
			nw.format(w)
		}
	}
	if x.Qualify != nil {
		w.WriteString(" QUALIFY ")
		x.Qualify.format(w)
	}
}

func (w *writer) selectItems(items []*SelectItem) {
	for i, it := range items {
		if i > 0 {
			w.WriteString(", ")
		}
		it.format(w)
	}
}

func (w *writer) tables(list []TableExpr) {
	for i, t := range list {
		if i > 0 {
			w.WriteString(", ")
		}
		t.format(w)
	}
}

func (x *SelectItem) format(w *writer) {
	x.Expr.format(w)
	if !x.Alias.Empty() {
		w.WriteString(" AS ")
		w.ident(x.Alias)
	}
}

func (x *NamedWindow) format(w *writer) {
	w.ident(x.Name)
	w.WriteString(" AS ")
	x.Spec.format(w)
}

func (x *Values) format(w *writer) {
	w.WriteString("VALUES ")
	for i, row := range x.Rows {
		if i > 0 {
			w.WriteString(", ")
		}
		w.WriteByte('(')
		w.exprs(row)
		w.WriteByte(')')
	}
}

func (x *Alias) format(w *writer) {
	w.WriteString("AS ")
	w.ident(x.Name)
	if x.Columns != nil {
		w.WriteString(" (")
		w.idents(x.Columns)
		w.WriteByte(')')
	}
}

func (w *writer) alias(a *Alias) {
	if a != nil {
		w.WriteByte(' ')
		a.format(w)
	}
}

func (x *TableName) format(w *writer) {
	w.name(x.Name)
	if x.AsOf != nil {
		w.WriteByte(' ')
		x.AsOf.format(w)
	}
	w.alias(x.Alias)
}

func (x *AsOf) format(w *writer) {
	if x.Kind == AsOfVersion {
		w.WriteString("FOR VERSION AS OF ")
	} else {
		w.WriteString("FOR TIMESTAMP AS OF ")
	}
	x.Value.format(w)
}

func (x *TableFunc) format(w *writer) {
	w.name(x.Name)
	w.WriteByte('(')
	for i, a := range x.Args {
		if i > 0 {
			w.WriteString(", ")
		}
		// DuckDB spelling, which the parser turns back into a NamedArg.
		if na, ok := a.(*NamedArg); ok {
			w.ident(na.Name)
			w.WriteString(" = ")
			w.exprP(na.Value, precCmp+1)
			continue
		}
		w.exprP(a, precCmp+1) // a top-level "=" would read back as a named argument
	}
	w.WriteByte(')')
	if x.Ordinality {
		w.WriteString(" WITH ORDINALITY")
	}
	w.alias(x.Alias)
}

func (x *SubqueryRef) format(w *writer) {
	if x.Lateral {
		w.WriteString("LATERAL ")
	}
	w.WriteByte('(')
	x.Query.format(w)
	w.WriteByte(')')
	w.alias(x.Alias)
}

func (x *Join) format(w *writer) {
	x.Left.format(w)
	w.WriteByte(' ')
	if x.Natural {
		w.WriteString("NATURAL ")
	}
	switch x.Kind {
	case InnerJoin:
		w.WriteString("JOIN ")
	case LeftJoin:
		w.WriteString("LEFT JOIN ")
	case RightJoin:
		w.WriteString("RIGHT JOIN ")
	case FullJoin:
		w.WriteString("FULL JOIN ")
	case CrossJoin:
		w.WriteString("CROSS JOIN ")
	}
	if _, ok := x.Right.(*Join); ok {
		w.WriteByte('(')
		x.Right.format(w)
		w.WriteByte(')')
	} else {
		x.Right.format(w)
	}
	if x.On != nil {
		w.WriteString(" ON ")
		x.On.format(w)
	}
	if x.Using != nil {
		w.WriteString(" USING (")
		w.idents(x.Using)
		w.WriteByte(')')
	}
}

func (x *ParenTable) format(w *writer) {
	w.WriteByte('(')
	x.Table.format(w)
	w.WriteByte(')')
	w.alias(x.Alias)
}

func (x *Query) String() string       { return str(x) }
func (x *SetOp) String() string       { return str(x) }
func (x *With) String() string        { return str(x) }
func (x *CTE) String() string         { return str(x) }
func (x *Select) String() string      { return str(x) }
func (x *SelectItem) String() string  { return str(x) }
func (x *NamedWindow) String() string { return str(x) }
func (x *Values) String() string      { return str(x) }
func (x *Alias) String() string       { return str(x) }
func (x *TableName) String() string   { return str(x) }
func (x *AsOf) String() string        { return str(x) }
func (x *TableFunc) String() string   { return str(x) }
func (x *SubqueryRef) String() string { return str(x) }
func (x *Join) String() string        { return str(x) }
func (x *ParenTable) String() string  { return str(x) }
