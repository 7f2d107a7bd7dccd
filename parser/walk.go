package parser

// Inspect walks the AST rooted at n in depth-first, source order. It calls
// f(node) for each node; if f returns false, the node's children are
// skipped. Nil children are not visited.
func Inspect(n Node, f func(Node) bool) {
	if n == nil || isNilNode(n) || !f(n) {
		return
	}
	for _, c := range Children(n) {
		Inspect(c, f)
	}
}

// isNilNode catches typed nil pointers stored in an interface.
func isNilNode(n Node) bool {
	switch x := n.(type) {
	case *Query:
		return x == nil
	case *With:
		return x == nil
	case *Alias:
		return x == nil
	case *AsOf:
		return x == nil
	case *WindowSpec:
		return x == nil
	case *Frame:
		return x == nil
	case *FrameBound:
		return x == nil
	case *TableName:
		return x == nil
	case *TypeName:
		return x == nil
	}
	return false
}

// nodes builds a child list, skipping nil interface values.
type nodes []Node

func (ns *nodes) add(xs ...Node) {
	for _, x := range xs {
		if x != nil && !isNilNode(x) {
			*ns = append(*ns, x)
		}
	}
}

func (ns *nodes) expr(e Expr) {
	if e != nil {
		*ns = append(*ns, e)
	}
}

func (ns *nodes) exprs(list []Expr) {
	for _, e := range list {
		ns.expr(e)
	}
}

func (ns *nodes) order(list []*OrderItem) {
	for _, o := range list {
		*ns = append(*ns, o)
	}
}

func (ns *nodes) items(list []*SelectItem) {
	for _, it := range list {
		*ns = append(*ns, it)
	}
}

func (ns *nodes) tables(list []TableExpr) {
	for _, t := range list {
		if t != nil {
			*ns = append(*ns, t)
		}
	}
}

func (ns *nodes) sets(list []*SetClause) {
	for _, s := range list {
		*ns = append(*ns, s)
	}
}

func (ns *nodes) with(w *With) {
	if w != nil {
		*ns = append(*ns, w)
	}
}

// Children returns the direct child nodes of n in source order. Identifiers
// and names are leaves inside their node and are not returned.
func Children(n Node) []Node {
	var c nodes
	switch x := n.(type) {
	case *TypedLiteral:
		c.add(x.Type)
	case *IntervalLiteral:
		c.expr(x.Value)
	case *Star:
		for _, r := range x.Replace {
			c.add(r)
		}
	case *ReplaceItem:
		c.expr(x.Expr)
	case *UnaryExpr:
		c.expr(x.X)
	case *BinaryExpr:
		c.expr(x.L)
		c.expr(x.R)
	case *IsExpr:
		c.expr(x.X)
		c.expr(x.From)
	case *BetweenExpr:
		c.expr(x.X)
		c.expr(x.Lo)
		c.expr(x.Hi)
	case *InExpr:
		c.expr(x.X)
		c.exprs(x.List)
		c.add(x.Query)
	case *LikeExpr:
		c.expr(x.X)
		c.expr(x.Pattern)
		c.expr(x.Escape)
	case *CaseExpr:
		c.expr(x.Operand)
		for _, w := range x.Whens {
			c.add(w)
		}
		c.expr(x.Else)
	case *When:
		c.expr(x.Cond)
		c.expr(x.Result)
	case *Exists:
		c.add(x.Query)
	case *SubqueryExpr:
		c.add(x.Query)
	case *Quantified:
		c.expr(x.X)
		c.add(x.Query)
		c.expr(x.Array)
	case *ArraySubquery:
		c.add(x.Query)
	case *GroupingSets:
		for _, set := range x.Sets {
			c.exprs(set)
		}
	case *Cast:
		c.expr(x.X)
		c.add(x.Type)
	case *Extract:
		c.expr(x.X)
	case *FuncCall:
		c.exprs(x.Args)
		c.order(x.OrderBy)
		c.order(x.WithinGroup)
		c.expr(x.Filter)
		c.add(x.Over)
	case *NamedArg:
		c.expr(x.Value)
	case *WindowSpec:
		c.exprs(x.PartitionBy)
		c.order(x.OrderBy)
		c.add(x.Frame)
	case *Frame:
		c.add(x.Start, x.End)
	case *FrameBound:
		c.expr(x.Offset)
	case *ArrayExpr:
		c.exprs(x.Elems)
	case *Subscript:
		c.expr(x.X)
		c.expr(x.Index)
	case *StructExpr:
		for _, f := range x.Fields {
			c.expr(f.Value)
		}
	case *FieldAccess:
		c.expr(x.X)
	case *MapExpr:
		c.exprs(x.Keys)
		c.exprs(x.Values)
	case *RowExpr:
		c.exprs(x.Elems)
	case *OrderItem:
		c.expr(x.Expr)
	case *TypeName:
		for _, f := range x.Fields {
			c.add(f.Type)
		}
		for _, e := range x.Elem {
			c.add(e)
		}

	case *Query:
		c.with(x.With)
		c.add(x.Body)
		c.order(x.OrderBy)
		c.expr(x.Limit)
		c.expr(x.Offset)
	case *With:
		for _, cte := range x.CTEs {
			c.add(cte)
		}
	case *CTE:
		c.add(x.Query)
		c.add(x.DML)
	case *Select:
		c.exprs(x.DistinctOn)
		c.items(x.Items)
		c.tables(x.From)
		c.expr(x.Where)
		c.exprs(x.GroupBy)
		c.expr(x.Having)
		for _, w := range x.Windows {
			c.add(w)
		}
		c.expr(x.Qualify)
	case *SelectItem:
		c.expr(x.Expr)
	case *NamedWindow:
		c.add(x.Spec)
	case *SetOp:
		c.add(x.Left, x.Right)
	case *Values:
		for _, row := range x.Rows {
			c.exprs(row)
		}
	case *TableName:
		c.add(x.AsOf)
	case *AsOf:
		c.expr(x.Value)
	case *TableFunc:
		c.exprs(x.Args)
	case *SubqueryRef:
		c.add(x.Query)
	case *Join:
		c.add(x.Left, x.Right)
		c.expr(x.On)
	case *ParenTable:
		c.add(x.Table)

	case *Insert:
		c.with(x.With)
		c.add(x.Source)
		if x.OnConflict != nil {
			for _, sc := range x.OnConflict.Set {
				c.add(sc)
			}
			c.expr(x.OnConflict.Where)
		}
		c.items(x.Returning)
	case *SetClause:
		c.expr(x.Value)
	case *Update:
		c.with(x.With)
		c.add(x.Table)
		c.sets(x.Set)
		c.tables(x.From)
		c.expr(x.Where)
		c.items(x.Returning)
	case *Delete:
		c.with(x.With)
		c.add(x.Table)
		c.tables(x.Using)
		c.expr(x.Where)
		c.items(x.Returning)
	case *Merge:
		c.with(x.With)
		c.add(x.Source)
		c.expr(x.On)
		for _, cl := range x.Clauses {
			c.add(cl)
		}
		c.items(x.Returning)
	case *MergeClause:
		c.expr(x.Cond)
		c.add(x.Action)
	case *MergeUpdate:
		c.sets(x.Set)
	case *MergeInsert:
		c.exprs(x.Values)

	case *CreateTable:
		for _, col := range x.Columns {
			c.add(col)
		}
		for _, f := range x.PartitionBy {
			c.add(f)
		}
		for _, pr := range x.Properties {
			c.add(pr)
		}
		for _, k := range x.Constraints {
			c.add(k)
		}
		c.add(x.AsQuery, x.Clone)
	case *ColumnDef:
		c.add(x.Type)
		c.expr(x.Default)
		for _, k := range x.Constraints {
			c.add(k)
		}
	case *Constraint:
		c.expr(x.Check)
	case *AddConstraint:
		c.add(x.Constraint)
	case *Property:
		c.expr(x.Value)
	case *AlterTable:
		for _, a := range x.Actions {
			c.add(a)
		}
	case *AddColumn:
		c.add(x.Column)
	case *AlterColumnType:
		c.add(x.Type)
	case *AlterColumnDefault:
		if x.Default != nil {
			c.add(x.Default)
		}
	case *SetProperties:
		for _, pr := range x.Properties {
			c.add(pr)
		}
	case *ExecuteProcedure:
		c.exprs(x.Args)
	case *Call:
		c.exprs(x.Args)
	case *Explain:
		c.add(x.Stmt)
	case *Copy:
		c.add(x.Query)
		c.add(x.DML)
		for _, o := range x.Options {
			c.add(o)
		}
	case *CopyOption:
		c.expr(x.Value)
	case *SetVar:
		c.exprs(x.Values)
	}
	return c
}
