package plan

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/scan"
)

// optimize rewrites a bound plan: predicates move down to the scans
// (where iceberg-go prunes files with them), scans read only the columns
// used, and aggregates that manifests can answer are answered there.
func optimize(b *binder, n Node) Node {
	n = pushdown(b, n)
	pruneColumns(n)
	n = metadataAnswers(b, n)
	return n
}

// pushdown moves Filter conjuncts as far down as they stay correct.
func pushdown(b *binder, n Node) Node {
	switch x := n.(type) {
	case *Filter:
		in := x.Input
		cs := conjuncts(x.Pred)
		if f, ok := in.(*Filter); ok {
			return pushdown(b, &Filter{Input: f.Input, Pred: andConj(append(conjuncts(f.Pred), cs...))})
		}
		switch y := in.(type) {
		case *Project:
			// through a projection (a derived table, a CTE, a USING join):
			// rewrite the predicate over the projection's input
			subst := map[ColumnID]Expr{}
			for i, c := range y.Cols {
				subst[c.ID] = y.Exprs[i]
			}
			var below, above []Expr
			for _, c := range cs {
				if r, ok := substitute(c, subst); ok {
					below = append(below, r)
				} else {
					above = append(above, c)
				}
			}
			if len(below) > 0 {
				y.Input = pushdown(b, &Filter{Input: y.Input, Pred: andConj(below)})
			} else {
				y.Input = pushdown(b, y.Input)
			}
			if len(above) > 0 {
				return &Filter{Input: y, Pred: andConj(above)}
			}
			return y
		case *Sort:
			y.Input = pushdown(b, &Filter{Input: y.Input, Pred: x.Pred})
			return y
		case *Aggregate:
			// a conjunct over group keys only filters whole groups: it
			// can filter the rows before they are grouped (an
			// incremental_by_time window over a GROUP BY day model then
			// reaches the scan). Not for a global aggregate, which yields
			// a row even from no rows.
			if len(y.GroupBy) == 0 {
				break
			}
			subst := map[ColumnID]Expr{}
			for i, c := range y.Groups {
				subst[c.ID] = y.GroupBy[i]
			}
			keys := idSet(y.Groups)
			var below, above []Expr
			for _, c := range cs {
				if refsOnly(c, keys) {
					if r, ok := substitute(c, subst); ok {
						below = append(below, r)
						continue
					}
				}
				above = append(above, c)
			}
			if len(below) == 0 {
				break
			}
			y.Input = pushdown(b, &Filter{Input: y.Input, Pred: andConj(below)})
			if len(above) > 0 {
				return &Filter{Input: y, Pred: andConj(above)}
			}
			return y
		case *Join:
			return pushIntoJoin(b, y, cs)
		case *Scan:
			y.Filters = append(y.Filters, cs...)
			y.Pushed = icebergFilter(y)
			var rest []Expr
			for _, c := range cs {
				if e := exactFilter(y, c); e != nil {
					y.Exact = append(y.Exact, c)
					y.ExactPushed = andIceberg(y.ExactPushed, e)
				} else {
					rest = append(rest, c)
				}
			}
			if len(rest) == 0 {
				return y
			}
			return &Filter{Input: y, Pred: andConj(rest)}
		}
		x.Input = pushdown(b, in)
		return x
	case *Join:
		if x.Kind == exec.JoinInner && x.On != nil {
			// push single-side ON conjuncts of an inner join into its inputs
			return pushIntoJoin(b, &Join{Kind: x.Kind, Left: x.Left, Right: x.Right}, conjuncts(x.On))
		}
		falseOn(x)
		x.Left, x.Right = pushdown(b, x.Left), pushdown(b, x.Right)
		return x
	}
	setChildren(n, func(c Node) Node { return pushdown(b, c) })
	return n
}

func idSet(cols []Column) map[ColumnID]bool {
	s := make(map[ColumnID]bool, len(cols))
	for _, c := range cols {
		s[c.ID] = true
	}
	return s
}

// falseOn: when j's ON is constantly FALSE (x AND FALSE folds so) or
// NULL, no pair matches, so the side whose rows only match reads
// nothing, rather than every pair being tried.
func falseOn(j *Join) {
	if j.On == nil || j.Kind == exec.JoinFull {
		return
	}
	for _, c := range conjuncts(j.On) {
		k, v, ok := constBool(c)
		// (a NULL pair makes a mark NULL, and NOT IN's row go)
		nullAware := j.Kind == exec.JoinMark || j.Kind == exec.JoinNullAwareAnti
		if ok && !v && !(k.IsNull() && nullAware) {
			if j.Kind == exec.JoinRight {
				j.Left = &Filter{Input: j.Left, Pred: k}
			} else {
				j.Right = &Filter{Input: j.Right, Pred: k}
			}
			return
		}
	}
}

// pushIntoJoin distributes conjuncts over a join.
func pushIntoJoin(b *binder, j *Join, cs []Expr) Node {
	lset, rset := idSet(j.Left.Columns()), idSet(j.Right.Columns())
	var toLeft, toRight, toOn, keep []Expr
	for _, c := range cs {
		_, volatile := c.(*Func)
		volatile = volatile && c.(*Func).Volatile
		switch {
		case volatile:
			keep = append(keep, c)
		case refsOnly(c, lset) && (j.Kind == exec.JoinInner || j.Kind == exec.JoinLeft || j.Kind == exec.JoinSemi || j.Kind == exec.JoinAnti || j.Kind == exec.JoinNullAwareAnti || j.Kind == exec.JoinMark):
			toLeft = append(toLeft, c)
		case refsOnly(c, rset) && (j.Kind == exec.JoinInner || j.Kind == exec.JoinRight):
			toRight = append(toRight, c)
		case j.Kind == exec.JoinInner:
			toOn = append(toOn, c)
		default:
			keep = append(keep, c)
		}
	}
	if len(toLeft) > 0 {
		j.Left = &Filter{Input: j.Left, Pred: andConj(toLeft)}
	}
	if len(toRight) > 0 {
		j.Right = &Filter{Input: j.Right, Pred: andConj(toRight)}
	}
	if len(toOn) > 0 {
		if j.On != nil {
			toOn = append(conjuncts(j.On), toOn...)
		}
		j.On = andConj(toOn)
	}
	falseOn(j)
	j.Left, j.Right = pushdown(b, j.Left), pushdown(b, j.Right)
	if len(keep) > 0 {
		return &Filter{Input: j, Pred: andConj(keep)}
	}
	return j
}

// setChildren replaces n's children with f(child).
func setChildren(n Node, f func(Node) Node) {
	switch x := n.(type) {
	case *Filter:
		x.Input = f(x.Input)
	case *Project:
		x.Input = f(x.Input)
	case *Join:
		x.Left, x.Right = f(x.Left), f(x.Right)
	case *Aggregate:
		x.Input = f(x.Input)
	case *Window:
		x.Input = f(x.Input)
	case *Unnest:
		x.Input = f(x.Input)
	case *Sort:
		x.Input = f(x.Input)
	case *Limit:
		x.Input = f(x.Input)
	case *Distinct:
		x.Input = f(x.Input)
	case *SetOp:
		x.Left, x.Right = f(x.Left), f(x.Right)
	}
}

// pruneColumns drops the outputs of projections nothing above uses and
// narrows every scan to the columns still referenced. INVARIANT: a scan
// and a projection keep at least one column; the root's columns, and every
// input column of a Distinct, SetOp or RecursiveCTE (whose rows are
// compared or matched by position), are kept.
func pruneColumns(root Node) {
	used := idSet(root.Columns())
	for {
		before := len(used)
		var collect func(Node)
		collect = func(n Node) {
			switch x := n.(type) {
			case *Project:
				for i, c := range x.Cols {
					if used[c.ID] {
						exprCols(x.Exprs[i], used)
					}
				}
			default:
				for _, e := range nodeExprs(n) {
					exprCols(e, used)
				}
			}
			switch n.(type) {
			case *Distinct, *SetOp, *RecursiveCTE:
				for _, c := range n.Children() {
					for _, col := range c.Columns() {
						used[col.ID] = true
					}
				}
			}
			for _, c := range n.Children() {
				collect(c)
			}
		}
		collect(root)
		if len(used) == before {
			break
		}
	}
	var prune func(Node)
	prune = func(n Node) {
		switch x := n.(type) {
		case *Scan:
			var cols []Column
			for _, c := range x.All {
				if used[c.ID] {
					cols = append(cols, c)
				}
			}
			x.CountOnly = len(cols) == 0
			if x.CountOnly {
				cols = []Column{x.All[0]}
			}
			x.Cols = cols
		case *Project:
			var exprs []Expr
			var cols []Column
			for i, c := range x.Cols {
				if used[c.ID] {
					exprs = append(exprs, x.Exprs[i])
					cols = append(cols, c)
				}
			}
			if len(cols) == 0 && len(x.Cols) > 0 {
				exprs, cols = x.Exprs[:1], x.Cols[:1]
			}
			// the kept expressions' inputs stay: a projection kept only
			// by the rule above (count(*) over nested derived tables)
			// must find its column below, which collect did not mark
			for _, e := range exprs {
				exprCols(e, used)
			}
			x.Exprs, x.Cols = exprs, cols
		}
		for _, c := range n.Children() {
			prune(c)
		}
	}
	prune(root)
}

// icebergFilter converts the scan's conjuncts that iceberg-go can prune
// with. Only forms whose Iceberg meaning matches SQL's are converted: a
// comparison or IN of a column with non-NULL constants, IS [NOT] NULL, and
// AND/OR of those. (Iceberg's != and NOT IN match NULLs; SQL's do not.)
func icebergFilter(s *Scan) iceberg.BooleanExpression {
	var parts []iceberg.BooleanExpression
	for _, c := range s.Filters {
		if e := toIceberg(s, c); e != nil {
			parts = append(parts, e)
		}
	}
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	return iceberg.NewAnd(parts[0], parts[1], parts[2:]...)
}

// exactFilter is the Iceberg form of conjunct c when the scan can apply
// it exactly, so that no Filter above the scan need test it: a predicate,
// or AND/OR of predicates, on string columns, each =, <, <=, >, >=, IN
// (of non-NULL constants), IS NULL or IS NOT NULL, which mean in Iceberg
// what they mean in SQL (text compares by its bytes in both). nil for
// anything else. The scan evaluates it on dictionaries where it can
// (scan/dictread.go).
func exactFilter(s *Scan, c Expr) iceberg.BooleanExpression {
	if e := exactNegated(s, c); e != nil {
		return e
	}
	if f, ok := c.(*Func); ok && f.Name == "like" && len(f.Args) == 2 {
		return exactPrefix(s, f)
	}
	if !whole(s, c) {
		return nil
	}
	e := toIceberg(s, c)
	if e == nil {
		return nil
	}
	if ok, err := iceberg.VisitExpr(e, exactVisitor{s}); err != nil || !ok {
		return nil
	}
	return e
}

// whole reports whether toIceberg converts every part of e. Of an AND
// with a side it cannot convert it keeps the other side, which lets more
// rows through: sound for pruning, not exact. `a = 'x' OR (b IN ('y',
// NULL) AND c IS NULL)` became `a = 'x' OR c IS NULL`, and with it taken
// as exact the rows where c is NULL came back.
func whole(s *Scan, e Expr) bool {
	if f, ok := e.(*Func); ok && (f.Name == "and" || f.Name == "or") {
		for _, a := range f.Args {
			if !whole(s, a) {
				return false
			}
		}
		return true
	}
	return toIceberg(s, e) != nil
}

// exactNegated is the exact form of c, a text column <> or NOT IN
// non-NULL constants, for the scan alone: c IS NOT NULL AND the Iceberg
// predicate, since Iceberg's != and NOT IN let a NULL through and SQL's do
// not. It is not part of the pruning filter (icebergFilter leaves these
// out). nil for anything else.
func exactNegated(s *Scan, c Expr) iceberg.BooleanExpression {
	f, ok := c.(*Func)
	if !ok || len(f.Args) < 2 || f.Name != "<>" && f.Name != "not_in" {
		return nil
	}
	col, rest := f.Args[0], f.Args[1:]
	if _, isCol := col.(*ColRef); !isCol && f.Name == "<>" {
		col, rest = f.Args[1], f.Args[:1]
	}
	name, typ, ok := fieldOf(s, col)
	if !ok || typ.ID() != arrow.STRING || len(rest) > maxExactNegatedSet {
		return nil
	}
	var lits []iceberg.Literal
	for _, a := range rest {
		l, ok := icebergLiteral(a, typ)
		if !ok {
			return nil // a NULL among them, or not a constant
		}
		lits = append(lits, l)
	}
	ref := iceberg.Reference(name)
	var p iceberg.BooleanExpression
	if f.Name == "<>" {
		p = iceberg.LiteralPredicate(iceberg.OpNEQ, ref, lits[0])
	} else {
		p = iceberg.SetPredicate(iceberg.OpNotIn, ref, lits)
	}
	return iceberg.NewAnd(p, iceberg.NotNull(ref))
}

// exactPrefix is the exact form of f, a text column LIKE a constant
// pattern that is a prefix followed by one % (no _, %, or backslash, the
// escape character, in the prefix): Iceberg's STARTS WITH, which no NULL
// passes, as none is LIKE anything. For the scan alone, as exactNegated's.
// nil for anything else.
func exactPrefix(s *Scan, f *Func) iceberg.BooleanExpression {
	name, typ, ok := fieldOf(s, f.Args[0])
	if !ok || typ.ID() != arrow.STRING {
		return nil
	}
	lit, ok := icebergLiteral(f.Args[1], typ)
	if !ok {
		return nil
	}
	pat, ok := lit.Any().(string)
	if !ok {
		return nil
	}
	prefix, ok := strings.CutSuffix(pat, "%")
	if !ok || strings.ContainsAny(prefix, `%_\`) {
		return nil
	}
	return iceberg.LiteralPredicate(iceberg.OpStartsWith, iceberg.Reference(name), iceberg.NewLiteral(prefix))
}

// maxExactNegatedSet bounds a NOT IN list the scan applies itself: a
// longer one is left to the Filter above the scan.
const maxExactNegatedSet = 1000

// exactVisitor reports whether an expression holds only what exactFilter
// accepts.
type exactVisitor struct{ s *Scan }

func (exactVisitor) VisitTrue() bool                        { return true }
func (exactVisitor) VisitFalse() bool                       { return true }
func (exactVisitor) VisitNot(bool) bool                     { return false }
func (exactVisitor) VisitAnd(l, r bool) bool                { return l && r }
func (exactVisitor) VisitOr(l, r bool) bool                 { return l && r }
func (exactVisitor) VisitBound(iceberg.BoundPredicate) bool { return false }

func (v exactVisitor) VisitUnbound(p iceberg.UnboundPredicate) bool {
	switch p.Op() {
	case iceberg.OpEQ, iceberg.OpLT, iceberg.OpLTEQ, iceberg.OpGT, iceberg.OpGTEQ, iceberg.OpIn, iceberg.OpIsNull, iceberg.OpNotNull:
	default:
		return false
	}
	ref, ok := p.Term().(iceberg.Reference)
	if !ok {
		return false
	}
	for i, a := range v.s.All {
		if v.s.Fields[i] == string(ref) {
			return a.Type.ID() == arrow.STRING
		}
	}
	return false
}

// andIceberg is a AND b, where a may be nil.
func andIceberg(a, b iceberg.BooleanExpression) iceberg.BooleanExpression {
	if a == nil {
		return b
	}
	return iceberg.NewAnd(a, b)
}

var icebergOps = map[string]iceberg.Operation{
	"=": iceberg.OpEQ, "<": iceberg.OpLT, "<=": iceberg.OpLTEQ, ">": iceberg.OpGT, ">=": iceberg.OpGTEQ,
}

var flipped = map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

func fieldOf(s *Scan, e Expr) (string, arrow.DataType, bool) {
	name, typ, ok := fieldOfStats(s, e)
	if !ok || promoted(s, name) {
		return "", nil, false
	}
	return name, typ, true
}

// fieldOfStats is fieldOf for readers of the statistics that decode the
// bounds themselves (boundLiteral), which a widened column does not stop.
func fieldOfStats(s *Scan, e Expr) (string, arrow.DataType, bool) {
	c, ok := e.(*ColRef)
	if !ok {
		return "", nil, false
	}
	for i, a := range s.All {
		if a.ID == c.ID {
			return s.Fields[i], a.Type, true
		}
	}
	return "", nil, false
}

// boundLiteral decodes a data file's lower or upper bound of a column of
// type t. A file written before ALTER TABLE widened the column from
// integer to bigint holds a 4-byte bound, read as the narrower type.
func boundLiteral(t iceberg.Type, raw []byte) (iceberg.Literal, error) {
	if _, ok := t.(iceberg.Int64Type); ok && len(raw) == 4 {
		return iceberg.LiteralFromBytes(iceberg.PrimitiveTypes.Int32, raw)
	}
	return iceberg.LiteralFromBytes(t, raw)
}

// promoted reports whether the column's type was widened by ALTER TABLE:
// older data files then hold statistics of the narrower type, which
// iceberg-go's pruning cannot decode, so filters on it are not pushed.
func promoted(s *Scan, name string) bool {
	if s.Table == nil {
		return false
	}
	meta := s.Table.Table.Metadata()
	cur, ok := meta.CurrentSchema().FindFieldByName(name)
	if !ok {
		return true
	}
	for _, sch := range meta.Schemas() {
		if f, ok := sch.FindFieldByID(cur.ID); ok && !f.Type.Equals(cur.Type) {
			return true
		}
	}
	return false
}

func toIceberg(s *Scan, e Expr) iceberg.BooleanExpression {
	f, ok := e.(*Func)
	if !ok {
		return nil
	}
	switch f.Name {
	case "and":
		l, r := toIceberg(s, f.Args[0]), toIceberg(s, f.Args[1])
		switch {
		case l != nil && r != nil:
			return iceberg.NewAnd(l, r)
		case l != nil:
			return l
		}
		return r
	case "or":
		return orToIceberg(s, f)
	case "is_null", "is_not_null":
		name, _, ok := fieldOf(s, f.Args[0])
		if !ok {
			return nil
		}
		if f.Name == "is_null" {
			return iceberg.IsNull(iceberg.Reference(name))
		}
		return iceberg.NotNull(iceberg.Reference(name))
	case "=", "<", "<=", ">", ">=":
		if p := dayCastRange(s, f); p != nil {
			return p
		}
		op := f.Name
		col, k := f.Args[0], f.Args[1]
		if _, isCol := col.(*ColRef); !isCol {
			col, k, op = k, col, flipped[op]
		}
		name, typ, ok := fieldOf(s, col)
		if !ok || !pushableOn(typ, op) {
			return nil
		}
		lit, ok := icebergLiteral(k, typ)
		if !ok {
			return nil
		}
		return iceberg.LiteralPredicate(icebergOps[op], iceberg.Reference(name), lit)
	case "between":
		name, typ, ok := fieldOf(s, f.Args[0])
		if !ok || !pushableOn(typ, "between") {
			return nil
		}
		lo, ok1 := icebergLiteral(f.Args[1], typ)
		hi, ok2 := icebergLiteral(f.Args[2], typ)
		if !ok1 || !ok2 {
			return nil
		}
		return iceberg.NewAnd(iceberg.LiteralPredicate(iceberg.OpGTEQ, iceberg.Reference(name), lo),
			iceberg.LiteralPredicate(iceberg.OpLTEQ, iceberg.Reference(name), hi))
	case "in":
		name, typ, ok := fieldOf(s, f.Args[0])
		if !ok || !pushableOn(typ, "in") {
			return nil
		}
		var lits []iceberg.Literal
		for _, a := range f.Args[1:] {
			l, ok := icebergLiteral(a, typ)
			if !ok {
				return nil
			}
			lits = append(lits, l)
		}
		if len(lits) > maxPushedSetSize {
			return nil // see maxPushedSetSize
		}
		return mergeinto.InFilter(iceberg.Reference(name), lits)
	}
	return nil
}

// pushableOn reports whether a predicate op ("=", "<", …, "between",
// "in") on a column of type typ may go to iceberg-go, which also filters
// rows with it, through Arrow compute. For a boolean column only an
// equality may: Arrow has no ordering of booleans (<, BETWEEN failed),
// and iceberg-go's row filter dropped rows of a boolean IN set (c IN
// (true, false) kept one of two TRUE rows).
func pushableOn(typ arrow.DataType, op string) bool {
	return typ.ID() != arrow.BOOL || op == "="
}

// maxPushedSetSize bounds an IN list handed to iceberg-go, which binds
// and evaluates the set again for every file it plans (1,000,000 values
// took 20 s on 10 files); a longer list is left to skade's Filter above
// the scan, which builds its set once.
const maxPushedSetSize = 4096

// maxPushedDisjuncts bounds the predicates an OR hands iceberg-go after
// merging: iceberg-go also filters rows with the expression, at a cost
// that grows faster than its size; skade's own Filter stays above the
// scan, so a larger OR is only not used for pruning.
const maxPushedDisjuncts = 256

// orToIceberg converts a chain of ORs: every disjunct must convert.
// Equalities and IN lists on one column merge into one IN (so that
// k = 1 OR k = 2 OR … is one set predicate), and the rest are combined as
// a balanced tree.
func orToIceberg(s *Scan, f *Func) iceberg.BooleanExpression {
	var disjuncts []Expr
	stack := []Expr{f}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if g, ok := e.(*Func); ok && g.Name == "or" {
			stack = append(stack, g.Args[1], g.Args[0])
			continue
		}
		disjuncts = append(disjuncts, e)
	}
	sets := map[string][]iceberg.Literal{}
	var order []string
	var rest []iceberg.BooleanExpression
	// addSet takes col = k or col IN (k, …) into its column's set
	addSet := func(g *Func) bool {
		col, ks := g.Args[0], g.Args[1:]
		if g.Name == "=" {
			if _, isCol := col.(*ColRef); !isCol {
				col, ks = g.Args[1], g.Args[:1]
			}
		}
		name, typ, ok := fieldOf(s, col)
		if !ok || !pushableOn(typ, "in") {
			return false
		}
		var lits []iceberg.Literal
		for _, k := range ks {
			l, ok := icebergLiteral(k, typ)
			if !ok {
				return false
			}
			lits = append(lits, l)
		}
		if _, seen := sets[name]; !seen {
			order = append(order, name)
		}
		sets[name] = append(sets[name], lits...)
		return true
	}
	for _, d := range disjuncts {
		if g, ok := d.(*Func); ok && (g.Name == "=" && dayCastRange(s, g) == nil || g.Name == "in") && addSet(g) {
			continue
		}
		p := toIceberg(s, d)
		if p == nil {
			return nil
		}
		rest = append(rest, p)
	}
	for _, name := range order {
		lits := dedupeLiterals(sets[name])
		if len(lits) > maxPushedSetSize {
			return nil
		}
		if len(lits) == 1 {
			rest = append(rest, iceberg.LiteralPredicate(iceberg.OpEQ, iceberg.Reference(name), lits[0]))
			continue
		}
		rest = append(rest, mergeinto.InFilter(iceberg.Reference(name), lits))
	}
	if len(rest) > maxPushedDisjuncts {
		return nil
	}
	var tree func(ps []iceberg.BooleanExpression) iceberg.BooleanExpression
	tree = func(ps []iceberg.BooleanExpression) iceberg.BooleanExpression {
		if len(ps) == 1 {
			return ps[0]
		}
		m := len(ps) / 2
		return iceberg.NewOr(tree(ps[:m]), tree(ps[m:]))
	}
	return tree(rest)
}

// dedupeLiterals drops repeated literals, keeping the first of each.
func dedupeLiterals(lits []iceberg.Literal) []iceberg.Literal {
	seen := map[string]bool{}
	var out []iceberg.Literal
	for _, l := range lits {
		k := l.String()
		if !seen[k] {
			seen[k] = true
			out = append(out, l)
		}
	}
	return out
}

// dayCastRange turns CAST(ts AS DATE) <op> D, ts a TIMESTAMP column
// (without time zone), into the range of ts it means, which prunes files:
// the cast floors to the day, so CAST(ts AS DATE) >= D is ts >= D 00:00
// and CAST(ts AS DATE) <= D is ts < D+1 00:00. This is the shape of an
// incremental_by_time window over a model that groups by the day.
func dayCastRange(s *Scan, f *Func) iceberg.BooleanExpression {
	op := f.Name
	x, k := f.Args[0], f.Args[1]
	if _, isConst := x.(*Const); isConst {
		x, k, op = k, x, flipped[op]
	}
	cast, ok := x.(*Func)
	if !ok || cast.Name != "cast" || len(cast.Args) != 1 || cast.Typ.ID() != arrow.DATE32 {
		return nil
	}
	name, typ, ok := fieldOf(s, cast.Args[0])
	if !ok {
		return nil
	}
	if ts, ok := typ.(*arrow.TimestampType); !ok || ts.TimeZone != "" || ts.Unit != arrow.Microsecond {
		return nil
	}
	c, ok := k.(*Const)
	if !ok || c.IsNull() {
		return nil
	}
	d, ok := c.Lit.Value.(*scalar.Date32)
	if !ok {
		return nil
	}
	const dayMicros = 86_400_000_000
	day := int64(d.Value) * dayMicros
	at := func(o iceberg.Operation, v int64) iceberg.BooleanExpression {
		return iceberg.LiteralPredicate(o, iceberg.Reference(name), iceberg.NewLiteral(iceberg.Timestamp(v)))
	}
	switch op {
	case ">=":
		return at(iceberg.OpGTEQ, day)
	case ">":
		return at(iceberg.OpGTEQ, day+dayMicros)
	case "<":
		return at(iceberg.OpLT, day)
	case "<=":
		return at(iceberg.OpLT, day+dayMicros)
	case "=":
		return iceberg.NewAnd(at(iceberg.OpGTEQ, day), at(iceberg.OpLT, day+dayMicros))
	}
	return nil
}

// icebergLiteral converts a non-NULL constant to the column's type when
// the SQL comparison happens in that type.
func icebergLiteral(e Expr, colType arrow.DataType) (iceberg.Literal, bool) {
	c, ok := e.(*Const)
	if !ok || c.IsNull() {
		return nil, false
	}
	lit := c.Lit
	if !arrow.TypeEqual(lit.DataType(), colType) {
		if !exactInto(lit.DataType(), colType) {
			return nil, false
		}
		cast, err := exec.NewCast(lit, colType, false)
		if err != nil {
			return nil, false
		}
		l, ok := cast.(*exec.Literal)
		if !ok {
			return nil, false
		}
		lit = l
	}
	switch v := lit.Value.(type) {
	case *scalar.Boolean:
		return iceberg.NewLiteral(v.Value), true
	case *scalar.Int8:
		return iceberg.NewLiteral(int32(v.Value)), true
	case *scalar.Int16:
		return iceberg.NewLiteral(int32(v.Value)), true
	case *scalar.Int32:
		return iceberg.NewLiteral(v.Value), true
	case *scalar.Int64:
		return iceberg.NewLiteral(v.Value), true
	case *scalar.Float32:
		// NaN equals itself in SQL (as in Postgres), but no file's
		// bounds hold it: pruning by them dropped the NaN rows
		return iceberg.NewLiteral(v.Value), !math.IsNaN(float64(v.Value))
	case *scalar.Float64:
		return iceberg.NewLiteral(v.Value), !math.IsNaN(v.Value)
	case *scalar.String:
		return iceberg.NewLiteral(v.String()), true
	case *scalar.Date32:
		return iceberg.NewLiteral(iceberg.Date(v.Value)), true
	case *scalar.Timestamp:
		return iceberg.NewLiteral(iceberg.Timestamp(v.Value)), true
	}
	return nil, false
}

// exactInto reports whether comparing a constant of type from with a
// column of type to happens in to's type (so the constant may be
// converted): integers into a wider-or-equal integer column (a narrower
// column is compared in the constant's type, but its range check is
// exact too), a string literal into anything.
func exactInto(from, to arrow.DataType) bool {
	isInt := func(t arrow.DataType) bool {
		switch t.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
			return true
		}
		return false
	}
	switch {
	case from.ID() == arrow.STRING:
		return to.ID() != arrow.STRING
	case isInt(from) && isInt(to):
		return bitWidth(from) <= bitWidth(to)
	case from.ID() == arrow.DATE32 && to.ID() == arrow.TIMESTAMP:
		return true
	case to.ID() == arrow.FLOAT64 || to.ID() == arrow.FLOAT32:
		// an integer or numeric constant against a float column is
		// compared as a float (floats rank above both), converted as
		// the comparison converts it
		switch from.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DECIMAL128, arrow.DECIMAL256, arrow.FLOAT32:
			c, err := exec.CommonType(from, to)
			return err == nil && arrow.TypeEqual(c, to)
		}
	}
	return false
}

func bitWidth(t arrow.DataType) int {
	if fw, ok := t.(arrow.FixedWidthDataType); ok {
		return fw.BitWidth()
	}
	return 0
}

// metadataAnswers replaces count(*), count(col), min(col) and max(col)
// over an unfiltered scan of a table without delete files by values read
// from the snapshot summary and the manifests' column statistics: no data
// file is read. min and max are answered for integer, date and timestamp
// columns only (string bounds may be truncated, floats may hold NaN).
func metadataAnswers(b *binder, n Node) Node {
	agg, ok := n.(*Aggregate)
	if !ok {
		setChildren(n, func(c Node) Node { return metadataAnswers(b, c) })
		return n
	}
	s, ok := agg.Input.(*Scan)
	if !ok || len(agg.GroupBy) > 0 || len(s.Filters) > 0 || len(agg.Aggs) == 0 {
		setChildren(n, func(c Node) Node { return metadataAnswers(b, c) })
		return n
	}
	needStats := false
	for _, a := range agg.Aggs {
		if a.Filter != nil || a.Distinct && a.Name != "min" && a.Name != "max" {
			return n
		}
		switch {
		case a.Name == "count" && len(a.Args) == 0:
		case (a.Name == "count" || a.Name == "min" || a.Name == "max") && len(a.Args) == 1:
			if _, ok := a.Args[0].(*ColRef); !ok {
				return n
			}
			needStats = true
		default:
			return n
		}
	}
	var count int64
	st := &fileStats{} // a table without a snapshot has no files
	if s.Snap != nil {
		p := s.Snap.Summary
		if p == nil {
			return n
		}
		for _, k := range []string{"total-delete-files", "total-position-deletes", "total-equality-deletes"} {
			if v, ok := p.Properties[k]; ok && v != "0" {
				return n
			}
		}
		v, err := strconv.ParseInt(p.Properties["total-records"], 10, 64)
		if err != nil {
			return n
		}
		count = v
		if needStats {
			if st = readStats(b, s); st == nil {
				return n
			}
		}
	}
	m := &MetadataAnswer{Table: s.Table.Name}
	for _, a := range agg.Aggs {
		var lit *exec.Literal
		switch {
		case len(a.Args) == 0:
			lit, _ = exec.NewLiteral(count)
		default:
			name, typ, ok := fieldOfStats(s, a.Args[0])
			if !ok {
				return n
			}
			v, ok := st.answer(s, name, typ, a.Name, count)
			if !ok {
				return n
			}
			lit = v
		}
		m.Row = append(m.Row, &Const{Lit: lit})
		m.Cols = append(m.Cols, a.Col)
	}
	return m
}

// fileStats are the live data files of a snapshot.
type fileStats struct {
	files []iceberg.DataFile
}

func readStats(b *binder, s *Scan) *fileStats {
	fs, err := s.Table.Table.FS(b.ctx)
	if err != nil {
		return nil
	}
	manifests, err := s.Snap.Manifests(fs)
	if err != nil {
		return nil
	}
	st := &fileStats{}
	for _, mf := range manifests {
		if mf.ManifestContent() != iceberg.ManifestContentData {
			return nil
		}
		for e, err := range mf.Entries(fs, true /* discardDeleted */) {
			if err != nil {
				return nil
			}
			st.files = append(st.files, e.DataFile())
		}
	}
	return st
}

// answer computes count(col), min(col) or max(col) from the statistics.
func (st *fileStats) answer(s *Scan, name string, typ arrow.DataType, fn string, total int64) (*exec.Literal, bool) {
	schema := s.Table.Table.Metadata().CurrentSchema()
	f, ok := schema.FindFieldByName(name)
	if !ok {
		return nil, false
	}
	if fn == "count" {
		nulls := int64(0)
		for _, df := range st.files {
			n, ok := df.NullValueCounts()[f.ID]
			if !ok {
				return nil, false
			}
			nulls += n
		}
		l, _ := exec.NewLiteral(total - nulls)
		return l, true
	}
	switch f.Type.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType:
	default:
		return nil, false
	}
	var best int64
	found := false
	for _, df := range st.files {
		nulls, okN := df.NullValueCounts()[f.ID]
		if okN && nulls == df.Count() {
			continue // all NULL: contributes nothing
		}
		bounds := df.LowerBoundValues()
		if fn == "max" {
			bounds = df.UpperBoundValues()
		}
		raw, ok := bounds[f.ID]
		if !ok {
			return nil, false
		}
		lit, err := boundLiteral(f.Type, raw)
		if err != nil {
			return nil, false
		}
		v, ok := scan.LiteralInt(lit)
		if !ok {
			return nil, false
		}
		if !found || (fn == "min" && v < best) || (fn == "max" && v > best) {
			best, found = v, true
		}
	}
	if !found {
		return exec.NewNullLiteral(typ), true
	}
	var sc scalar.Scalar
	switch typ.ID() {
	case arrow.INT32:
		sc = scalar.NewInt32Scalar(int32(best))
	case arrow.INT64:
		sc = scalar.NewInt64Scalar(best)
	case arrow.DATE32:
		sc = scalar.NewDate32Scalar(arrow.Date32(best))
	case arrow.TIMESTAMP:
		sc = scalar.NewTimestampScalar(arrow.Timestamp(best), typ)
	default:
		return nil, false
	}
	return &exec.Literal{Value: sc}, true
}

// substitute replaces column references by expressions; ok is false when
// the result would evaluate something volatile more than once.
func substitute(e Expr, subst map[ColumnID]Expr) (Expr, bool) {
	switch x := e.(type) {
	case *ColRef:
		r, ok := subst[x.ID]
		if !ok {
			return x, true
		}
		if f, isFunc := r.(*Func); isFunc && f.Volatile {
			return nil, false
		}
		return r, true
	case *Func:
		if x.Volatile {
			return nil, false
		}
		args := make([]Expr, len(x.Args))
		changed := false
		for i, a := range x.Args {
			r, ok := substitute(a, subst)
			if !ok {
				return nil, false
			}
			args[i] = r
			changed = changed || r != a
		}
		if !changed {
			return x, true
		}
		return &Func{Name: x.Name, Args: args, Typ: x.Typ, build: x.build}, true
	}
	return e, true
}
