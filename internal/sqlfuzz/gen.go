package sqlfuzz

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Type is the SQL type of a generated column or expression. The fuzzer
// keeps to types whose semantics skade and PostgreSQL share.
type Type int

const (
	Int Type = iota
	BigInt
	Text
	Bool
	Real
)

var typeNames = [...]string{Int: "INTEGER", BigInt: "BIGINT", Text: "TEXT", Bool: "BOOLEAN", Real: "DOUBLE PRECISION"}

func (t Type) String() string { return typeNames[t] }

// numeric reports whether values of t take part in integer arithmetic.
func (t Type) numeric() bool { return t == Int || t == BigInt }

// Column is one column of a generated table.
type Column struct {
	Name string
	Type Type
}

// Table is a generated table.
type Table struct {
	Name string
	Cols []Column
}

// Schema is a generated database: its tables and the statements that
// create and fill them, in order.
type Schema struct {
	Tables []Table
	Setup  []string
}

// Gen generates schemas and queries from one seed. Everything it returns
// is a pure function of the seed, so a failure is reproduced by its seed.
type Gen struct {
	r      *rand.Rand
	s      *Schema
	alias  int
	nested int // subquery depth
}

// NewGen returns a generator for seed.
func NewGen(seed uint64) *Gen {
	return &Gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (g *Gen) n(k int) int       { return g.r.IntN(k) }
func (g *Gen) chance(p int) bool { return g.r.IntN(100) < p }

// Schema makes two or three tables of one to four columns, with rows
// inserted by several statements (so several data files) and then
// changed by a few UPDATEs and DELETEs (so delete files or rewritten
// files, by the write mode the lake gives the tables).
func (g *Gen) Schema() *Schema {
	s := &Schema{}
	g.s = s
	nt := 2 + g.n(2)
	for i := range nt {
		t := Table{Name: fmt.Sprintf("t%d", i)}
		nc := 1 + g.n(4)
		var defs []string
		for j := range nc {
			c := Column{Name: fmt.Sprintf("c%d", j), Type: Type(g.n(len(typeNames)))}
			if j == 0 && g.chance(60) {
				c.Type = Int // most tables get an integer column to join on
			}
			t.Cols = append(t.Cols, c)
			defs = append(defs, c.Name+" "+c.Type.String())
		}
		s.Tables = append(s.Tables, t)
		s.Setup = append(s.Setup, fmt.Sprintf("CREATE TABLE %s (%s)", t.Name, strings.Join(defs, ", ")))
	}
	for _, t := range s.Tables {
		for range 1 + g.n(4) {
			var rows []string
			for range g.n(6) + 1 {
				var vals []string
				for _, c := range t.Cols {
					vals = append(vals, g.value(c.Type))
				}
				rows = append(rows, "("+strings.Join(vals, ", ")+")")
			}
			s.Setup = append(s.Setup, fmt.Sprintf("INSERT INTO %s VALUES %s", t.Name, strings.Join(rows, ", ")))
		}
	}
	for range g.n(5) {
		t := s.Tables[g.n(len(s.Tables))]
		sc := g.scope(t, "")
		if g.chance(35) {
			s.Setup = append(s.Setup, g.merge(t))
		} else if g.chance(20) {
			s.Setup = append(s.Setup, g.insertSelect(t))
		} else if g.chance(50) {
			c := t.Cols[g.n(len(t.Cols))]
			s.Setup = append(s.Setup, fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s", t.Name, c.Name, g.expr(c.Type, sc, 2), g.expr(Bool, sc, 2)))
		} else {
			s.Setup = append(s.Setup, fmt.Sprintf("DELETE FROM %s WHERE %s", t.Name, g.expr(Bool, sc, 2)))
		}
	}
	return s
}

// merge is a MERGE into t from a derived table over a random table:
// its key k and one value vN per column of t, grouped by k half the time
// (so that no target row matches twice; otherwise PostgreSQL and skade
// must both refuse a doubly matched row).
func (g *Gen) merge(t Table) string {
	src := g.s.Tables[g.n(len(g.s.Tables))]
	ssc := g.scope(src, "ms")
	kc := t.Cols[g.n(len(t.Cols))]
	// the MERGE contract refuses ON keys of different types (a numeric
	// literal is numeric, not double precision): cast the key
	items := []string{fmt.Sprintf("CAST(%s AS %s) AS k", g.ownExpr(kc.Type, ssc), kc.Type)}
	for i, c := range t.Cols {
		items = append(items, fmt.Sprintf("CAST(%s AS %s) AS v%d", g.expr(c.Type, ssc, 1), c.Type, i))
	}
	source := fmt.Sprintf("SELECT %s FROM %s AS ms", strings.Join(items, ", "), src.Name)
	if g.chance(50) {
		source += " WHERE " + g.pred(ssc, 1)
	}
	if g.chance(50) {
		aggs := []string{"k"}
		for i, c := range t.Cols {
			f := []string{"min", "max"}[g.n(2)]
			if c.Type == Bool {
				f = []string{"bool_and", "bool_or"}[g.n(2)]
			}
			aggs = append(aggs, fmt.Sprintf("%s(v%d) AS v%d", f, i, i))
		}
		source = fmt.Sprintf("SELECT %s FROM (%s) AS mg GROUP BY k", strings.Join(aggs, ", "), source)
	}
	both := &Scope{}
	srcOnly := &Scope{Cols: []Ref{{"s.k", kc.Type}}}
	for i, c := range t.Cols {
		both.Cols = append(both.Cols, Ref{"tt." + c.Name, c.Type})
		srcOnly.Cols = append(srcOnly.Cols, Ref{fmt.Sprintf("s.v%d", i), c.Type})
	}
	both.Cols = append(both.Cols, srcOnly.Cols...)
	on := fmt.Sprintf("tt.%s = s.k", kc.Name)
	if g.chance(30) {
		on += " AND " + g.pred(both, 1)
	}
	if g.chance(20) {
		// a conjunct of the source alone: without WHEN NOT MATCHED it
		// filters the source before the join (plan.merge)
		on += " AND " + g.pred(srcOnly, 1)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "MERGE INTO %s AS tt USING (%s) AS s ON %s", t.Name, source, on)
	nc := 1 + g.n(3)
	for i := range nc {
		// only the last clause may go without a condition: PostgreSQL
		// refuses a clause after an unconditional one of its kind
		cond := i < nc-1 || g.chance(50)
		if g.chance(55) {
			b.WriteString(" WHEN MATCHED")
			if cond {
				b.WriteString(" AND " + g.pred(both, 1))
			}
			if g.chance(25) {
				b.WriteString(" THEN DELETE")
				continue
			}
			var sets []string
			for _, c := range t.Cols {
				if len(sets) == 0 || g.chance(40) {
					sets = append(sets, fmt.Sprintf("%s = %s", c.Name, g.expr(c.Type, both, 1)))
				}
			}
			b.WriteString(" THEN UPDATE SET " + strings.Join(sets, ", "))
			continue
		}
		b.WriteString(" WHEN NOT MATCHED")
		if cond {
			b.WriteString(" AND " + g.pred(srcOnly, 1))
		}
		if g.chance(15) {
			b.WriteString(" THEN DO NOTHING")
			continue
		}
		var cols, vals []string
		for i, c := range t.Cols {
			cols = append(cols, c.Name)
			vals = append(vals, fmt.Sprintf("s.v%d", i))
		}
		fmt.Fprintf(&b, " THEN INSERT (%s) VALUES (%s)", strings.Join(cols, ", "), strings.Join(vals, ", "))
	}
	return b.String()
}

// insertSelect is an INSERT … SELECT into t from a random join.
func (g *Gen) insertSelect(t Table) string {
	g.alias = 0
	f := g.from()
	var cols, vals []string
	for _, c := range t.Cols {
		cols = append(cols, c.Name)
		vals = append(vals, fmt.Sprintf("CAST(%s AS %s)", g.expr(c.Type, f.Scope, 2), c.Type))
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", t.Name, strings.Join(cols, ", "), strings.Join(vals, ", "), f.SQL)
	if g.chance(70) {
		q += " WHERE " + g.pred(f.Scope, 2)
	}
	return q
}

// value is a literal of t from a small pool, a quarter of them NULL, so
// that joins and groups collide and three-valued logic is exercised.
func (g *Gen) value(t Type) string {
	if g.chance(25) {
		return "NULL"
	}
	return g.literal(t)
}

func (g *Gen) literal(t Type) string {
	switch t {
	case Int, BigInt:
		return fmt.Sprint(g.n(12) - 3)
	case Text:
		return []string{"''", "'a'", "'b'", "'ab'", "'B'", "' a'", "'a%'", "'ba'"}[g.n(8)]
	case Bool:
		return []string{"TRUE", "FALSE"}[g.n(2)]
	default:
		// quarters: sums are exact in binary floating point in any order
		return fmt.Sprintf("%.2f", float64(g.n(17)-8)/4)
	}
}

// typedNull is a NULL of type t (PostgreSQL types a bare NULL as text
// where context does not tell).
func typedNull(t Type) string { return "CAST(NULL AS " + t.String() + ")" }

// Ref is a column a generated expression may reference.
type Ref struct {
	Expr string // qualified name, a0.c1
	Type Type
}

// Scope is what an expression may reference: the columns of the FROM
// clause it is in, and the outer query's (correlation).
type Scope struct {
	Cols  []Ref
	Outer *Scope
}

func (g *Gen) scope(t Table, alias string) *Scope {
	sc := &Scope{}
	q := t.Name
	if alias != "" {
		q = alias
	}
	for _, c := range t.Cols {
		sc.Cols = append(sc.Cols, Ref{q + "." + c.Name, c.Type})
	}
	return sc
}

// ref picks a column of type t visible in sc (outer scopes too, less
// often), or "" when there is none.
func (g *Gen) ref(t Type, sc *Scope) string {
	var cands []string
	for s, depth := sc, 0; s != nil; s, depth = s.Outer, depth+1 {
		for _, c := range s.Cols {
			if c.Type == t || (t.numeric() && c.Type.numeric()) {
				cands = append(cands, c.Expr)
				if depth == 0 {
					cands = append(cands, c.Expr) // inner columns twice as likely
				}
			}
		}
	}
	if len(cands) == 0 {
		return ""
	}
	return cands[g.n(len(cands))]
}

func (g *Gen) alias1(prefix string) string {
	g.alias++
	return fmt.Sprintf("%s%d", prefix, g.alias)
}

// expr is a random expression of type t over sc, at most depth deep.
func (g *Gen) expr(t Type, sc *Scope, depth int) string {
	if depth <= 0 || g.chance(25) {
		if r := g.ref(t, sc); r != "" && g.chance(75) {
			return r
		}
		if g.chance(8) {
			return typedNull(t)
		}
		return g.literal(t)
	}
	d := depth - 1
	if t == Bool {
		return g.pred(sc, depth)
	}
	// the forms every value type has, then arithmetic, then each type's own
	switch g.n(8) {
	case 0:
		return g.caseExpr(t, sc, d)
	case 1:
		return fmt.Sprintf("COALESCE(%s, %s)", g.expr(t, sc, d), g.expr(t, sc, d))
	case 2:
		if t != Real {
			return g.subqueryOr(t, sc, d)
		}
	}
	if t != Text {
		switch g.n(6) {
		case 0:
			return fmt.Sprintf("(%s + %s)", g.expr(t, sc, d), g.expr(t, sc, d))
		case 1:
			return fmt.Sprintf("(%s - %s)", g.expr(t, sc, d), g.expr(t, sc, d))
		case 2:
			return fmt.Sprintf("abs(%s)", g.expr(t, sc, d))
		}
	}
	switch t {
	case Int, BigInt:
		switch g.n(8) {
		case 0:
			// division and modulo by a non-zero constant (PostgreSQL
			// truncates toward zero; the remainder takes the dividend's
			// sign)
			k := []string{"2", "3", "-2", "5"}[g.n(4)]
			return fmt.Sprintf("(%s %s %s)", g.expr(t, sc, d), []string{"/", "%"}[g.n(2)], k)
		case 1:
			return fmt.Sprintf("%s(%s, %s)", []string{"greatest", "least"}[g.n(2)], g.expr(t, sc, d), g.expr(t, sc, d))
		case 2:
			return fmt.Sprintf("strpos(%s, %s)", g.expr(Text, sc, d), g.expr(Text, sc, d))
		case 3:
			return fmt.Sprintf("(%s * %s)", g.expr(t, sc, d), g.literal(t))
		case 4:
			return fmt.Sprintf("(- %s)", g.expr(t, sc, d))
		case 5:
			return fmt.Sprintf("NULLIF(%s, %s)", g.expr(t, sc, d), g.expr(t, sc, d))
		case 6:
			return fmt.Sprintf("length(%s)", g.expr(Text, sc, d))
		default:
			// PostgreSQL casts booleans to integer only
			return fmt.Sprintf("CAST(%s AS INTEGER)", g.expr(Bool, sc, d))
		}
	case Text:
		switch g.n(8) {
		case 0:
			return fmt.Sprintf("replace(%s, %s, %s)", g.expr(Text, sc, d), g.literal(Text), g.expr(Text, sc, d))
		case 1:
			return fmt.Sprintf("%s(%s)", []string{"trim", "ltrim", "rtrim"}[g.n(3)], g.expr(Text, sc, d))
		case 2:
			return fmt.Sprintf("(%s || %s)", g.expr(Text, sc, d), g.expr(Text, sc, d))
		case 3:
			return fmt.Sprintf("upper(%s)", g.expr(Text, sc, d))
		case 4:
			return fmt.Sprintf("lower(%s)", g.expr(Text, sc, d))
		case 5:
			return fmt.Sprintf("substr(%s, %d, %d)", g.expr(Text, sc, d), 1+g.n(3), g.n(3))
		default:
			return fmt.Sprintf("CAST(%s AS TEXT)", g.expr(Int, sc, d))
		}
	default: // Real
		return fmt.Sprintf("CAST(%s AS DOUBLE PRECISION)", g.expr(Int, sc, d))
	}
}

// subqueryOr is a scalar subquery of type t, or, nested deep enough, an
// expression.
func (g *Gen) subqueryOr(t Type, sc *Scope, d int) string {
	if q := g.scalarSubquery(t, sc); q != "" {
		return q
	}
	return g.expr(t, sc, d)
}

func (g *Gen) caseExpr(t Type, sc *Scope, d int) string {
	if g.chance(30) {
		// simple CASE
		ot := g.anyType()
		return fmt.Sprintf("CASE %s WHEN %s THEN %s ELSE %s END", g.expr(ot, sc, d), g.expr(ot, sc, d), g.expr(t, sc, d), g.expr(t, sc, d))
	}
	var b strings.Builder
	b.WriteString("CASE")
	for range 1 + g.n(2) {
		fmt.Fprintf(&b, " WHEN %s THEN %s", g.pred(sc, d), g.expr(t, sc, d))
	}
	if g.chance(70) {
		fmt.Fprintf(&b, " ELSE %s", g.expr(t, sc, d))
	}
	b.WriteString(" END")
	return b.String()
}

func (g *Gen) anyType() Type {
	return []Type{Int, Int, BigInt, Text, Text, Bool, Real}[g.n(7)]
}

// comparable types: every type compares with itself, integers with each
// other.
func (g *Gen) cmpType() Type { return []Type{Int, Int, BigInt, Text, Text, Bool, Real}[g.n(7)] }

// pred is a random boolean expression.
func (g *Gen) pred(sc *Scope, depth int) string {
	if depth <= 0 || g.chance(15) {
		if r := g.ref(Bool, sc); r != "" && g.chance(30) {
			return r
		}
		return g.cmp(sc, 0)
	}
	d := depth - 1
	switch g.n(14) {
	case 0, 1:
		return fmt.Sprintf("(%s AND %s)", g.pred(sc, d), g.pred(sc, d))
	case 2, 3:
		return fmt.Sprintf("(%s OR %s)", g.pred(sc, d), g.pred(sc, d))
	case 4:
		return fmt.Sprintf("(NOT %s)", g.pred(sc, d))
	case 5:
		return fmt.Sprintf("(%s IS %sNULL)", g.expr(g.anyType(), sc, d), not(g))
	case 6:
		t := g.cmpType()
		return fmt.Sprintf("(%s %sBETWEEN %s AND %s)", g.expr(t, sc, d), not(g), g.expr(t, sc, d), g.expr(t, sc, d))
	case 7:
		t := g.cmpType()
		items := []string{}
		for range 1 + g.n(4) {
			items = append(items, g.expr(t, sc, 0))
		}
		return fmt.Sprintf("(%s %sIN (%s))", g.expr(t, sc, d), not(g), strings.Join(items, ", "))
	case 8:
		pat := []string{"'a%'", "'%a'", "'_'", "'%'", "'a'", "'%b%'", "'_a%'"}[g.n(7)]
		return fmt.Sprintf("(%s %sLIKE %s)", g.expr(Text, sc, d), not(g), pat)
	case 9:
		t := g.cmpType()
		return fmt.Sprintf("(%s IS %sDISTINCT FROM %s)", g.expr(t, sc, d), not(g), g.expr(t, sc, d))
	case 10:
		return fmt.Sprintf("(%s IS %s%s)", g.pred(sc, d), not(g), []string{"TRUE", "FALSE", "UNKNOWN"}[g.n(3)])
	case 11, 12:
		if q := g.subqueryPred(sc); q != "" {
			return q
		}
		return g.cmp(sc, d)
	default:
		return g.cmp(sc, d)
	}
}

func not(g *Gen) string {
	if g.chance(40) {
		return "NOT "
	}
	return ""
}

func (g *Gen) cmp(sc *Scope, d int) string {
	t := g.cmpType()
	op := []string{"=", "<>", "<", "<=", ">", ">="}[g.n(6)]
	return fmt.Sprintf("(%s %s %s)", g.expr(t, sc, d), op, g.expr(t, sc, d))
}

// subTable picks a table for a subquery and gives it a fresh alias.
func (g *Gen) subTable(outer *Scope) (string, *Scope, string) {
	t := g.s.Tables[g.n(len(g.s.Tables))]
	a := g.alias1("s")
	sc := g.scope(t, a)
	sc.Outer = outer
	return g.source(t), sc, a
}

// source is t's name, or now and then a derived table with t's column
// names and types computed from t's rows (uncorrelated, as PostgreSQL
// allows a FROM item without LATERAL).
func (g *Gen) source(t Table) string {
	if g.nested >= 2 || !g.chance(15) {
		return t.Name
	}
	g.nested++
	defer func() { g.nested-- }()
	in := g.alias1("d")
	sc := g.scope(t, in)
	var items []string
	for _, c := range t.Cols {
		items = append(items, fmt.Sprintf("CAST(%s AS %s) AS %s", g.expr(c.Type, sc, 1), c.Type, c.Name))
	}
	q := fmt.Sprintf("(SELECT %s FROM %s AS %s", strings.Join(items, ", "), t.Name, in)
	if g.chance(50) {
		q += " WHERE " + g.pred(sc, 1)
	}
	if g.chance(20) {
		q += " UNION ALL SELECT " + strings.Join(names(t), ", ") + " FROM " + t.Name
	}
	return q + ")"
}

func names(t Table) []string {
	var out []string
	for _, c := range t.Cols {
		out = append(out, c.Name)
	}
	return out
}

// subFrom is a subquery's FROM item (subTable) and, usually, a WHERE
// clause (" WHERE …") over it and the outer scope.
func (g *Gen) subFrom(outer *Scope) (src string, sc *Scope, alias, where string) {
	src, sc, alias = g.subTable(outer)
	if g.chance(85) {
		where = " WHERE " + g.pred(sc, 2)
	}
	return src, sc, alias, where
}

// subqueryPred is EXISTS, IN or a quantified comparison over a subquery
// that is correlated with the enclosing scope more often than not.
func (g *Gen) subqueryPred(outer *Scope) string {
	if g.nested >= 2 {
		return ""
	}
	g.nested++
	defer func() { g.nested-- }()
	src, sc, a, where := g.subFrom(outer)
	switch g.n(4) {
	case 0, 1:
		return fmt.Sprintf("(%sEXISTS (SELECT 1 FROM %s AS %s%s))", not(g), src, a, where)
	case 2:
		ct := g.cmpType()
		sub := fmt.Sprintf("SELECT %s FROM %s AS %s%s", g.expr(ct, sc, 1), src, a, where)
		if g.chance(20) {
			// a set operation inside IN
			src2, sc2, a2 := g.subTable(outer)
			sub += fmt.Sprintf(" %s SELECT %s FROM %s AS %s", []string{"UNION", "UNION ALL", "EXCEPT", "INTERSECT"}[g.n(4)], g.expr(ct, sc2, 1), src2, a2)
		}
		return fmt.Sprintf("(%s %sIN (%s))", g.expr(ct, outer, 1), not(g), sub)
	default:
		ct := g.cmpType()
		op := []string{"=", "<>", "<", ">="}[g.n(4)]
		q := []string{"ANY", "ALL", "SOME"}[g.n(3)]
		return fmt.Sprintf("(%s %s %s (SELECT %s FROM %s AS %s%s))", g.expr(ct, outer, 1), op, q, g.expr(ct, sc, 1), src, a, where)
	}
}

// scalarSubquery is an aggregate over a (usually correlated) subquery,
// which returns exactly one row, or "" when nesting is deep enough.
func (g *Gen) scalarSubquery(t Type, outer *Scope) string {
	if g.nested >= 2 {
		return ""
	}
	g.nested++
	defer func() { g.nested-- }()
	src, sc, a, where := g.subFrom(outer)
	// an aggregate's argument reads the subquery's own columns: one over
	// outer columns only would be the outer query's aggregate (which
	// skade refuses)
	own := &Scope{Cols: sc.Cols}
	var sel string
	switch {
	case t == BigInt && g.chance(50):
		sel = "count(*)"
	case t.numeric() && g.chance(30):
		sel = fmt.Sprintf("sum(%s)", g.ownExpr(Int, own))
		if t == Int {
			sel = "CAST(" + sel + " AS INTEGER)"
		}
	default:
		sel = fmt.Sprintf("%s(%s)", []string{"min", "max"}[g.n(2)], g.ownExpr(t, own))
	}
	return fmt.Sprintf("(SELECT %s FROM %s AS %s%s)", sel, src, a, where)
}

// ownExpr is an expression of type t that reads at least one column of
// sc when sc has one of a type it can use.
func (g *Gen) ownExpr(t Type, sc *Scope) string {
	for range 8 {
		e := g.expr(t, sc, 1)
		for _, c := range sc.Cols {
			if strings.Contains(e, c.Expr) {
				return e
			}
		}
	}
	if r := g.ref(t, sc); r != "" {
		return r
	}
	return g.expr(t, sc, 1)
}

// From is a FROM clause and the scope it makes.
type From struct {
	SQL   string
	Scope *Scope
}

// from is one table, or two or three joined by INNER, LEFT, RIGHT, FULL
// or CROSS joins.
func (g *Gen) from() From {
	t := g.s.Tables[g.n(len(g.s.Tables))]
	a := g.alias1("a")
	sc := g.scope(t, a)
	sql := fmt.Sprintf("%s AS %s", g.source(t), a)
	for range g.n(3) {
		if g.chance(40) {
			break
		}
		t2 := g.s.Tables[g.n(len(g.s.Tables))]
		a2 := g.alias1("a")
		sc2 := g.scope(t2, a2)
		src2 := g.source(t2)
		both := &Scope{Cols: append(append([]Ref{}, sc.Cols...), sc2.Cols...)}
		switch k := g.n(5); k {
		case 0:
			sql += fmt.Sprintf(" CROSS JOIN %s AS %s", src2, a2)
		case 1:
			// PostgreSQL runs FULL JOIN only on hash- or merge-joinable
			// conditions: an equality of two columns
			l, r := sameTypedPair(g, sc, sc2)
			if l == "" {
				sql += fmt.Sprintf(" CROSS JOIN %s AS %s", src2, a2)
			} else {
				sql += fmt.Sprintf(" FULL JOIN %s AS %s ON %s = %s", src2, a2, l, r)
			}
		default:
			kind := []string{"", "JOIN", "LEFT JOIN", "RIGHT JOIN", "JOIN"}[k]
			on := g.pred(both, 2)
			if l, r := sameTypedPair(g, sc, sc2); l != "" && g.chance(60) {
				on = fmt.Sprintf("(%s = %s)", l, r)
				if g.chance(40) {
					on += " AND " + g.pred(both, 1)
				}
			}
			sql += fmt.Sprintf(" %s %s AS %s ON %s", kind, src2, a2, on)
		}
		sc = both
	}
	return From{sql, sc}
}

// sameTypedPair is an equi-join pair of columns, one from each side, or
// "" when their types never match.
func sameTypedPair(g *Gen, l, r *Scope) (string, string) {
	var pairs [][2]string
	for _, a := range l.Cols {
		for _, b := range r.Cols {
			if a.Type == b.Type || (a.Type.numeric() && b.Type.numeric()) {
				pairs = append(pairs, [2]string{a.Expr, b.Expr})
			}
		}
	}
	if len(pairs) == 0 {
		return "", ""
	}
	p := pairs[g.n(len(pairs))]
	return p[0], p[1]
}

// Item is one select-list expression with its type.
type Item struct {
	SQL  string
	Type Type
}

func (g *Gen) items(sc *Scope, n int) []Item {
	var out []Item
	for range n {
		t := g.anyType()
		out = append(out, Item{g.expr(t, sc, 2), t})
	}
	return out
}

func join(items []Item) string {
	var s []string
	for _, it := range items {
		s = append(s, it.SQL)
	}
	return strings.Join(s, ", ")
}
