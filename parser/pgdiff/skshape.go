package pgdiff

import (
	"strconv"
	"strings"

	"github.com/skadedb/skade/parser"
)

// skIdent folds an unquoted identifier as PostgreSQL does.
func skIdent(id parser.Ident) string {
	if id.Quoted {
		return id.Name
	}
	return strings.ToLower(id.Name)
}

func skName(n parser.Name) string {
	parts := make([]string, len(n))
	for i, id := range n {
		parts[i] = skIdent(id)
	}
	return strings.Join(parts, ".")
}

func skIdents(ids []parser.Ident) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = skIdent(id)
	}
	return out
}

// SkadeShape normalises one statement of skade's AST.
func SkadeShape(s parser.Stmt) string {
	switch x := s.(type) {
	case *parser.Query:
		return skQuery(x)
	case *parser.Insert:
		src := ""
		if x.Source != nil {
			src = skQuery(x.Source)
		}
		return sx("insert", skName(x.Table), skWith(x.With), list("cols", skIdents(x.Columns)), src,
			flagIf("default-values", x.DefaultValues), list("returning", skItems(x.Returning)))
	case *parser.Update:
		return sx("update", skWith(x.With), skTable(x.Table), list("set", skSets(x.Set)),
			list("from", skTables(x.From)), opt("where", skExpr(x.Where)), list("returning", skItems(x.Returning)))
	case *parser.Delete:
		return sx("delete", skWith(x.With), skTable(x.Table), list("using", skTables(x.Using)),
			opt("where", skExpr(x.Where)), list("returning", skItems(x.Returning)))
	case *parser.Merge:
		var cl []string
		for _, c := range x.Clauses {
			cl = append(cl, skMergeClause(c))
		}
		return sx("merge", skWith(x.With), skName(x.Target), opt("alias", skIdent(x.TargetAlias)),
			opt("using", skTableExpr(x.Source)), opt("on", skExpr(x.On)), list("when", cl),
			list("returning", skItems(x.Returning)))
	case *parser.Truncate:
		var ts []string
		for _, n := range x.Tables {
			ts = append(ts, skName(n))
		}
		return sx("truncate", ts...)
	case *parser.CreateTable:
		var cols, props []string
		for _, c := range x.Columns {
			cols = append(cols, skColumn(c))
		}
		for _, c := range x.Constraints {
			cols = append(cols, skConstraint(c, true))
		}
		for _, p := range x.Properties {
			props = append(props, strings.ToLower(p.Key))
		}
		as := ""
		if x.AsQuery != nil {
			as = skQuery(x.AsQuery)
		}
		return sx("create-table", skName(x.Name), flagIf("if-not-exists", x.IfNotExists),
			list("cols", cols), list("with", props), opt("as", as))
	case *parser.DropTable:
		var ns []string
		for _, n := range x.Names {
			ns = append(ns, skName(n))
		}
		return sx("drop-table", flagIf("if-exists", x.IfExists), list("names", ns), flagIf("cascade", x.Cascade))
	case *parser.CreateSchema:
		return sx("create-schema", skName(x.Name), flagIf("if-not-exists", x.IfNotExists))
	case *parser.DropSchema:
		return sx("drop-schema", flagIf("if-exists", x.IfExists), skName(x.Name), flagIf("cascade", x.Cascade))
	case *parser.AlterTable:
		var acts []string
		for _, a := range x.Actions {
			acts = append(acts, skAlter(a))
		}
		return sx("alter-table", skName(x.Name), flagIf("if-exists", x.IfExists), list("do", acts))
	case *parser.Begin:
		return sx("begin")
	case *parser.Commit:
		return sx("commit")
	case *parser.Rollback:
		return sx("rollback")
	case *parser.Explain:
		return sx("explain", flagIf("analyze", x.Analyze), SkadeShape(x.Stmt))
	case *parser.ShowTables:
		return sx("show", "tables", skName(x.From))
	case *parser.Show:
		if x.All {
			return sx("show", "all")
		}
		return sx("show", skName(x.Name))
	case *parser.Copy:
		var opts []string
		for _, o := range x.Options {
			opts = append(opts, strings.ToLower(o.Name))
		}
		q := ""
		if x.Query != nil {
			q = skQuery(x.Query)
		}
		return sx("copy", skName(x.Table), list("cols", skIdents(x.Columns)), q, flagIf("to", x.To),
			quoteStr(x.File), list("opts", opts))
	case *parser.SetVar:
		if len(x.Values) == 1 {
			if _, ok := x.Values[0].(*parser.Default); ok {
				return sx("set", skName(x.Name), flagIf("local", x.Local), "default")
			}
		}
		var vs []string
		for _, v := range x.Values {
			// PostgreSQL turns a bare word value into a string constant.
			if c, ok := v.(*parser.ColumnRef); ok && len(c.Name) == 1 {
				vs = append(vs, sx("str", quoteStr(skIdent(c.Name[0]))))
				continue
			}
			// … and so is TRUE/FALSE (gram.y's opt_boolean_or_string).
			if l, ok := v.(*parser.Literal); ok && l.Kind == parser.LitBool {
				vs = append(vs, sx("str", quoteStr(l.Value)))
				continue
			}
			vs = append(vs, skExpr(v))
		}
		return sx("set", skName(x.Name), flagIf("local", x.Local), list("to", vs))
	case *parser.Describe:
		return sx("describe", skName(x.Table))
	}
	return sx("unknown")
}

func skWith(w *parser.With) string {
	if w == nil {
		return ""
	}
	var ctes []string
	for _, c := range w.CTEs {
		ctes = append(ctes, sx("cte", skIdent(c.Name), list("cols", skIdents(c.Columns)), c.Materialized, skQuery(c.Query)))
	}
	return list("with", append([]string{flagIf("recursive", w.Recursive)}, ctes...))
}

// skQuery merges a Query's ORDER BY / LIMIT into its body's node, as
// PostgreSQL's SelectStmt does.
func skQuery(q *parser.Query) string {
	var order []string
	for _, o := range q.OrderBy {
		order = append(order, skOrder(o))
	}
	tail := []string{list("order", order), opt("limit", skExpr(q.Limit)), opt("offset", skExpr(q.Offset)), flagIf("with-ties", q.WithTies)}
	return skBody(q.Body, skWith(q.With), tail)
}

func skBody(b parser.QueryBody, with string, tail []string) string {
	switch x := b.(type) {
	case *parser.Select:
		var items, group, wins []string
		for _, it := range x.Items {
			items = append(items, skItem(it))
		}
		for _, g := range x.GroupBy {
			group = append(group, skExpr(g))
		}
		for _, w := range x.Windows {
			wins = append(wins, skIdent(w.Name))
		}
		distinct := ""
		if x.Distinct {
			distinct = "distinct"
			if x.DistinctOn != nil {
				distinct = list("distinct-on", skExprs(x.DistinctOn))
			}
		}
		args := []string{with, distinct, list("items", items), list("from", skTables(x.From)),
			opt("where", skExpr(x.Where)), list("group", group), opt("having", skExpr(x.Having)), list("window", wins)}
		return sx("select", append(args, tail...)...)
	case *parser.SetOp:
		args := []string{with, strings.ToLower(x.Op.String()), flagIf("all", x.All), skBody(x.Left, "", nil), skBody(x.Right, "", nil)}
		return sx("setop", append(args, tail...)...)
	case *parser.Values:
		var rows []string
		for _, r := range x.Rows {
			rows = append(rows, sx("row", skExprs(r)...))
		}
		return sx("values", append([]string{with, list("rows", rows)}, tail...)...)
	case *parser.Query:
		if with == "" && allEmpty(tail) {
			return skQuery(x)
		}
		return sx("nested", append([]string{with, skQuery(x)}, tail...)...)
	}
	return sx("unknown-body")
}

func allEmpty(ss []string) bool {
	for _, s := range ss {
		if s != "" {
			return false
		}
	}
	return true
}

func skItem(it *parser.SelectItem) string {
	return sx("item", skExpr(it.Expr), opt("as", skIdent(it.Alias)))
}

func skItems(items []*parser.SelectItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, skItem(it))
	}
	return out
}

func skOrder(o *parser.OrderItem) string {
	nulls := ""
	switch o.Nulls {
	case parser.NullsFirst:
		nulls = "nulls-first"
	case parser.NullsLast:
		nulls = "nulls-last"
	}
	return sx("sort", skExpr(o.Expr), flagIf("desc", o.Desc), nulls)
}

func skAlias(a *parser.Alias) string {
	if a == nil {
		return ""
	}
	return sx("alias", skIdent(a.Name), list("cols", skIdents(a.Columns)))
}

func skTables(ts []parser.TableExpr) []string {
	var out []string
	for _, t := range ts {
		out = append(out, skTableExpr(t))
	}
	return out
}

func skTable(t *parser.TableName) string {
	return sx("table", skName(t.Name), skAlias(t.Alias))
}

func skTableExpr(t parser.TableExpr) string {
	switch x := t.(type) {
	case *parser.TableName:
		return skTable(x)
	case *parser.TableFunc:
		return sx("func-table", sx("fn", skName(x.Name), list("args", skExprs(x.Args))), skAlias(x.Alias))
	case *parser.SubqueryRef:
		return sx("subquery", flagIf("lateral", x.Lateral), skQuery(x.Query), skAlias(x.Alias))
	case *parser.Join:
		kind := map[parser.JoinKind]string{parser.InnerJoin: "inner", parser.CrossJoin: "inner",
			parser.LeftJoin: "left", parser.RightJoin: "right", parser.FullJoin: "full"}[x.Kind]
		return sx("join", kind, flagIf("natural", x.Natural), skTableExpr(x.Left), skTableExpr(x.Right),
			opt("on", skExpr(x.On)), list("using", skIdents(x.Using)))
	case *parser.ParenTable:
		inner := skTableExpr(x.Table)
		if x.Alias == nil {
			return inner
		}
		// PostgreSQL puts the alias on the JoinExpr itself.
		return strings.TrimSuffix(inner, ")") + " " + skAlias(x.Alias) + ")"
	}
	return sx("unknown-table")
}

func skSets(list []*parser.SetClause) []string {
	var out []string
	for _, s := range list {
		out = append(out, sx("set", skName(s.Column), skExpr(s.Value)))
	}
	return out
}

func skMergeClause(c *parser.MergeClause) string {
	kind := map[parser.MatchKind]string{parser.Matched: "matched", parser.NotMatchedByTarget: "not-matched",
		parser.NotMatchedBySource: "not-matched-by-source"}[c.Kind]
	action := ""
	switch a := c.Action.(type) {
	case *parser.MergeUpdate:
		action = sx("update", flagIf("star", a.Star), list("set", skSets(a.Set)))
	case *parser.MergeDelete:
		action = sx("delete")
	case *parser.MergeInsert:
		action = sx("insert", flagIf("star", a.Star), list("cols", skIdents(a.Columns)), list("values", skExprs(a.Values)))
	case *parser.MergeDoNothing:
		action = sx("nothing")
	}
	return sx("when", kind, opt("and", skExpr(c.Cond)), action)
}

func skColumn(c *parser.ColumnDef) string {
	var cons []string
	for _, k := range c.Constraints {
		cons = append(cons, skConstraint(k, false))
	}
	return sx("col", skIdent(c.Name), skType(c.Type), flagIf("not-null", c.NotNull),
		opt("default", skExpr(c.Default)), flagIf("pk", c.PrimaryKey), list("constraints", cons))
}

func skConstraint(c *parser.Constraint, table bool) string {
	kind := map[parser.ConstraintKind]string{parser.ConstraintCheck: "check", parser.ConstraintUnique: "unique", parser.ConstraintPrimaryKey: "primary-key"}[c.Kind]
	var keys []string
	if table {
		keys = skIdents(c.Columns)
	}
	check := ""
	if c.Check != nil {
		check = skExpr(c.Check)
	}
	return sx("constraint", opt("name", skIdent(c.Name)), kind, opt("check", check), list("keys", keys))
}

func skType(t *parser.TypeName) string {
	s := canonType(t.Name)
	if t.Params != nil {
		var ps []string
		for _, p := range t.Params {
			ps = append(ps, strconv.Itoa(p))
		}
		s += "(" + strings.Join(ps, ",") + ")"
	}
	return s + strings.Repeat("[]", t.ArrayDims)
}

func skAlter(a parser.AlterAction) string {
	switch x := a.(type) {
	case *parser.AddColumn:
		return sx("add", flagIf("if-not-exists", x.IfNotExists), skColumn(x.Column))
	case *parser.DropColumn:
		return sx("drop", flagIf("if-exists", x.IfExists), skIdent(x.Name))
	case *parser.AddConstraint:
		return sx("add", skConstraint(x.Constraint, true))
	case *parser.DropConstraint:
		return sx("drop-constraint", flagIf("if-exists", x.IfExists), skIdent(x.Name))
	case *parser.RenameColumn:
		return sx("rename-column", skIdent(x.Old), skIdent(x.New))
	case *parser.AlterColumnType:
		return sx("type", skIdent(x.Column), skType(x.Type))
	case *parser.AlterColumnNotNull:
		return sx("not-null", skIdent(x.Column), flagIf("set", x.Set))
	case *parser.SetProperties:
		var ks []string
		for _, p := range x.Properties {
			ks = append(ks, strings.ToLower(p.Key))
		}
		return sx("set-props", ks...)
	case *parser.RenameTable:
		return sx("rename-to", skName(x.NewName))
	case *parser.ExecuteProcedure:
		return sx("execute", skIdent(x.Procedure))
	}
	return sx("unknown-action")
}

func skExprs(es []parser.Expr) []string {
	var out []string
	for _, e := range es {
		out = append(out, skExpr(e))
	}
	return out
}

// flatten collects the operands of a chain of one boolean operator, as
// gram.y does for AND and OR.
func flatten(e parser.Expr, op parser.BinaryOp, out []string) []string {
	if b, ok := e.(*parser.BinaryExpr); ok && b.Op == op {
		out = flatten(b.L, op, out)
		return flatten(b.R, op, out)
	}
	return append(out, skExpr(e))
}

func skExpr(e parser.Expr) string {
	switch x := e.(type) {
	case nil:
		return ""
	case *parser.Literal:
		switch x.Kind {
		case parser.LitNull:
			return sx("null")
		case parser.LitBool:
			return sx("bool", x.Value)
		case parser.LitInteger:
			return intConst(x.Value)
		case parser.LitDecimal, parser.LitFloat:
			return sx("num", x.Value)
		case parser.LitString:
			return sx("str", quoteStr(x.Value))
		}
	case *parser.TypedLiteral:
		return sx("cast", skType(x.Type), sx("str", quoteStr(x.Value)))
	case *parser.IntervalLiteral:
		return sx("cast", "INTERVAL", skExpr(x.Value))
	case *parser.Param:
		return sx("param", strconv.Itoa(x.Index))
	case *parser.ColumnRef:
		return sx("col", skName(x.Name))
	case *parser.Star:
		return sx("star", skName(x.Table))
	case *parser.UnaryExpr:
		switch x.Op {
		case parser.OpNot:
			return sx("not", skExpr(x.X))
		case parser.OpNeg:
			return sx("neg", skExpr(x.X))
		case parser.OpPlus:
			return sx("pos", skExpr(x.X))
		case parser.OpBitNot:
			return sx("prefix", "~", skExpr(x.X))
		}
	case *parser.BinaryExpr:
		switch x.Op {
		case parser.OpAnd:
			return sx("and", flatten(x, parser.OpAnd, nil)...)
		case parser.OpOr:
			return sx("or", flatten(x, parser.OpOr, nil)...)
		}
		return sx("op", x.Op.String(), skExpr(x.L), skExpr(x.R))
	case *parser.IsExpr:
		switch x.Test {
		case parser.IsNull:
			if x.Not {
				return sx("is-not-null", skExpr(x.X))
			}
			return sx("is-null", skExpr(x.X))
		case parser.IsDistinctFrom:
			if x.Not {
				return sx("not-distinct", skExpr(x.X), skExpr(x.From))
			}
			return sx("distinct", skExpr(x.X), skExpr(x.From))
		}
		t := map[parser.IsTest]string{parser.IsTrue: "true", parser.IsFalse: "false", parser.IsUnknown: "unknown"}[x.Test]
		return sx("is", flagIf("not", x.Not), t, skExpr(x.X))
	case *parser.BetweenExpr:
		return sx("between", flagIf("not", x.Not), flagIf("symmetric", x.Symmetric), skExpr(x.X), skExpr(x.Lo), skExpr(x.Hi))
	case *parser.InExpr:
		if x.Query != nil {
			in := sx("in-subquery", skExpr(x.X), skQuery(x.Query))
			if x.Not {
				return sx("not", in)
			}
			return in
		}
		return sx("in", flagIf("not", x.Not), skExpr(x.X), list("list", skExprs(x.List)))
	case *parser.LikeExpr:
		return sx("like", flagIf("not", x.Not), flagIf("ilike", x.ILike), skExpr(x.X), skExpr(x.Pattern), opt("escape", skExpr(x.Escape)))
	case *parser.CaseExpr:
		var whens []string
		for _, w := range x.Whens {
			whens = append(whens, sx("when", skExpr(w.Cond), skExpr(w.Result)))
		}
		return sx("case", opt("arg", skExpr(x.Operand)), list("whens", whens), opt("else", skExpr(x.Else)))
	case *parser.Exists:
		return sx("exists", skQuery(x.Query))
	case *parser.SubqueryExpr:
		return sx("subquery", skQuery(x.Query))
	case *parser.Cast:
		return sx("cast", skType(x.Type), skExpr(x.X))
	case *parser.Extract:
		return sx("fn", "extract", list("args", []string{sx("str", quoteStr(strings.ToLower(x.Field))), skExpr(x.X)}))
	case *parser.FuncCall:
		name := skName(x.Name)
		switch name {
		case "coalesce", "nullif", "greatest", "least":
			return sx("fn", name, list("args", skExprs(x.Args)))
		}
		over := ""
		if x.Over != nil {
			var order []string
			for _, o := range x.Over.OrderBy {
				order = append(order, skOrder(o))
			}
			over = sx("over", skIdent(x.Over.Ref), list("partition", skExprs(x.Over.PartitionBy)),
				list("order", order), flagIf("frame", x.Over.Frame != nil))
		} else if !x.OverName.Empty() {
			over = sx("over-name", skIdent(x.OverName))
		}
		var order []string
		for _, o := range x.OrderBy {
			order = append(order, skOrder(o))
		}
		return sx("fn", name, flagIf("distinct", x.Distinct), flagIf("star", x.Star), list("args", skExprs(x.Args)),
			list("order", order), opt("filter", skExpr(x.Filter)), over)
	case *parser.NamedArg:
		return sx("named", skIdent(x.Name), skExpr(x.Value))
	case *parser.ArrayExpr:
		return sx("array", skExprs(x.Elems)...)
	case *parser.Subscript:
		return sx("subscript", skExpr(x.X), skExpr(x.Index))
	case *parser.Default:
		return sx("default")
	case *parser.RowExpr:
		return sx("row", skExprs(x.Elems)...)
	}
	return sx("unknown-expr")
}
