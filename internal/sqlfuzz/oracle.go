package sqlfuzz

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Select is a generated query in parts, so that the oracles can rebuild
// it with a partitioning predicate or an aggregate around it.
type Select struct {
	Distinct bool
	Items    []Item
	From     From
	Where    string
	GroupBy  []string
	Having   string
}

// SQL renders q with extra ANDed to its WHERE clause (when not "") and
// having in place of its HAVING clause (when not "").
func (q Select) SQL(extra, having string) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	if q.Distinct {
		b.WriteString("DISTINCT ")
	}
	b.WriteString(join(q.Items))
	b.WriteString(" FROM ")
	b.WriteString(q.From.SQL)
	w := q.Where
	switch {
	case w != "" && extra != "":
		w = "(" + w + ") AND " + extra
	case extra != "":
		w = extra
	}
	if w != "" {
		b.WriteString(" WHERE " + w)
	}
	if len(q.GroupBy) > 0 {
		b.WriteString(" GROUP BY " + strings.Join(q.GroupBy, ", "))
	}
	if having == "" {
		having = q.Having
	}
	if having != "" {
		b.WriteString(" HAVING " + having)
	}
	return b.String()
}

// Finding is a mismatch: what ran and how the answers differ.
type Finding struct {
	Seed    uint64
	Oracle  string
	Setup   []string
	Queries []string
	Detail  string
}

func (f Finding) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, oracle %s: %s\n-- setup\n", f.Seed, f.Oracle, f.Detail)
	for _, s := range f.Setup {
		b.WriteString(s + ";\n")
	}
	b.WriteString("-- queries\n")
	for _, q := range f.Queries {
		b.WriteString(q + ";\n")
	}
	return b.String()
}

// Report is what one or more seeds checked and found.
type Report struct {
	Checks  map[string]int // oracle -> comparisons made
	Skipped map[string]int // why a check was skipped -> how often
	// Examples holds the first statement skipped for each reason.
	Examples map[string]string
	Findings []Finding
}

func newReport() *Report {
	return &Report{Checks: map[string]int{}, Skipped: map[string]int{}, Examples: map[string]string{}}
}

// Add merges o into r.
func (r *Report) Add(o *Report) {
	for k, v := range o.Checks {
		r.Checks[k] += v
	}
	for k, v := range o.Skipped {
		r.Skipped[k] += v
	}
	for k, v := range o.Examples {
		if _, ok := r.Examples[k]; !ok {
			r.Examples[k] = v
		}
	}
	r.Findings = append(r.Findings, o.Findings...)
}

// Summary lists the checks made and the most frequent reasons for
// skipping.
func (r *Report) Summary() string {
	var b strings.Builder
	var keys []string
	for k := range r.Checks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %d checks\n", k, r.Checks[k])
	}
	type kv struct {
		k string
		v int
	}
	var sk []kv
	for k, v := range r.Skipped {
		sk = append(sk, kv{k, v})
	}
	sort.Slice(sk, func(i, j int) bool { return sk[i].v > sk[j].v || (sk[i].v == sk[j].v && sk[i].k < sk[j].k) })
	for i, e := range sk {
		if i == 15 {
			fmt.Fprintf(&b, "… %d more reasons\n", len(sk)-i)
			break
		}
		fmt.Fprintf(&b, "skipped %d× %s\n", e.v, e.k)
		if ex := r.Examples[e.k]; ex != "" && strings.Contains(e.k, "skade") {
			fmt.Fprintf(&b, "    e.g. %s\n", ex)
		}
	}
	return b.String()
}

// TableDefaults are the table properties a seed's lake gives every
// table: format version, write modes, and small row groups and splits so
// that multi-row-group and multi-split reads happen at fuzzing sizes.
func TableDefaults(seed uint64) map[string]string {
	g := NewGen(seed ^ 0x5eed)
	p := map[string]string{}
	if g.chance(40) {
		p["format-version"] = "3"
	}
	if g.chance(50) {
		for _, k := range []string{"write.delete.mode", "write.update.mode", "write.merge.mode"} {
			p[k] = "merge-on-read"
		}
	}
	if g.chance(50) {
		p["write.parquet.row-group-limit"] = fmt.Sprint(1 + g.n(3))
		p["read.split.target-size"] = "1"
	}
	return p
}

// Partitioning picks, for some tables of s, the PARTITIONED BY clause
// skade's copy of the table gets (identity, truncate or bucket of one
// column; PostgreSQL's copy has none, as partitioning changes no answer),
// so that writes go through the partitioned writer and reads prune by
// partition values. It draws from a stream of its own, so a seed's schema
// and queries are what they were without it.
func Partitioning(seed uint64, s *Schema) map[string]string {
	g := NewGen(seed ^ 0x9a57)
	out := map[string]string{}
	for _, t := range s.Tables {
		if !g.chance(40) {
			continue
		}
		c := t.Cols[g.n(len(t.Cols))]
		switch c.Type {
		case Text:
			out[t.Name] = []string{c.Name, "truncate(1, " + c.Name + ")", "bucket(3, " + c.Name + ")"}[g.n(3)]
		case Int, BigInt:
			out[t.Name] = []string{c.Name, "bucket(3, " + c.Name + ")", "truncate(10, " + c.Name + ")"}[g.n(3)]
		case Bool:
			out[t.Name] = c.Name
		}
	}
	return out
}

// skadeSetup is s's setup as skade runs it: each partitioned table's
// CREATE TABLE with its PARTITIONED BY clause.
func skadeSetup(s *Schema, parts map[string]string) []string {
	out := make([]string, len(s.Setup))
	for i, st := range s.Setup {
		out[i] = st
		for name, clause := range parts {
			if strings.HasPrefix(st, "CREATE TABLE "+name+" (") {
				out[i] = st + " PARTITIONED BY (" + clause + ")"
			}
		}
	}
	return out
}

// Run generates the schema of seed, sets it up in skade (and in pg, when
// not nil, in a schema of its own) and checks queries queries against
// the oracles: ternary logic partitioning (TLP) of WHERE, DISTINCT,
// GROUP BY, HAVING and aggregates, non-optimizing reference engine
// construction (NoREC), and PostgreSQL's answers.
func Run(ctx context.Context, seed uint64, sk Engine, pg Engine, queries int) *Report {
	r := &run{ctx: ctx, seed: seed, g: NewGen(seed), sk: sk, pg: pg, rep: newReport()}
	r.schema = r.g.Schema()
	r.skSetup = skadeSetup(r.schema, Partitioning(seed, r.schema))
	if !r.setup() {
		return r.rep
	}
	for range queries {
		r.one()
	}
	return r.rep
}

type run struct {
	ctx    context.Context
	seed   uint64
	g      *Gen
	sk, pg Engine
	schema *Schema
	// skSetup is schema.Setup as skade runs it (skadeSetup)
	skSetup []string
	rep     *Report
}

func (r *run) find(oracle, detail string, queries ...string) {
	r.rep.Findings = append(r.rep.Findings, Finding{Seed: r.seed, Oracle: oracle, Setup: r.skSetup, Queries: queries, Detail: detail})
}

// skip records why a check was not made, by the error's first line with
// numbers and quoted text masked, so that reasons group.
func (r *run) skip(what string, err error, stmt ...string) {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	msg = posRE.ReplaceAllString(msg, "(line ?, column ?)")
	if len(msg) > 120 {
		msg = msg[:120]
	}
	key := what + ": " + msg
	r.rep.Skipped[key]++
	if _, ok := r.rep.Examples[key]; !ok && len(stmt) > 0 {
		r.rep.Examples[key] = stmt[0]
	}
}

var posRE = regexp.MustCompile(`\(line \d+, column \d+\)`)

// setup runs the schema's statements in both engines. A statement
// PostgreSQL refuses ends the seed (the generator strayed outside what
// the two share); one only skade refuses is a finding.
func (r *run) setup() bool {
	if r.pg != nil {
		for _, s := range []string{"DROP SCHEMA IF EXISTS fz CASCADE", "CREATE SCHEMA fz", "SET search_path = fz"} {
			if err := r.pg.Exec(r.ctx, s); err != nil {
				r.skip("postgres setup", err)
				return false
			}
		}
	}
	for i, s := range r.schema.Setup {
		var pgErr error
		if r.pg != nil {
			pgErr = r.pg.Exec(r.ctx, s)
		}
		skErr := r.sk.Exec(r.ctx, r.skSetup[i])
		switch {
		case r.pg == nil:
			if skErr != nil {
				// a failed statement changes nothing; go on without it
				r.skip("setup", skErr)
			}
		case pgErr == nil && skErr == nil:
			if w, _, _ := strings.Cut(s, " "); w != "CREATE" && (w != "INSERT" || !strings.Contains(s, " VALUES (")) {
				r.rep.Checks["postgres "+strings.ToLower(w)]++ // compared below, with the tables
			}
		case pgErr == nil && refused(skErr):
			r.skip("skade refused setup", skErr, r.skSetup[i])
			return false
		case pgErr == nil:
			r.find("postgres", "skade failed a setup statement PostgreSQL ran: "+skErr.Error(), r.skSetup[:i+1]...)
			return false
		case skErr != nil:
			// both refused it, so both tables are unchanged
			r.skip("setup refused by both", pgErr)
		case pgCode(pgErr) == "21000":
			r.find("postgres", "skade ran a statement PostgreSQL refused ("+pgErr.Error()+")", r.skSetup[:i+1]...)
			return false
		default:
			r.skip("postgres refused setup", pgErr)
			return false
		}
	}
	if r.pg != nil {
		n := len(r.rep.Findings)
		for _, t := range r.schema.Tables {
			r.compareWithPG("SELECT * FROM " + t.Name)
		}
		if len(r.rep.Findings) > n {
			return false // the tables differ: every query would
		}
	}
	return true
}

// one generates a query and checks it against an oracle picked at
// random.
func (r *run) one() {
	g := r.g
	g.alias = 0
	f := g.from()
	q := Select{From: f, Items: g.items(f.Scope, 1+g.n(3))}
	if g.chance(50) {
		q.Where = g.pred(f.Scope, 3)
	}
	p := g.pred(f.Scope, 3)
	k := g.n(12)
	switch k {
	case 0, 1, 2:
		r.tlp("tlp-where", q, p, false)
	case 3:
		q.Distinct = true
		r.tlp("tlp-distinct", q, p, true)
	case 4:
		q.GroupBy = groupKeys(g, f.Scope, &q)
		r.tlp("tlp-group-by", q, p, true)
	case 5:
		q.GroupBy = groupKeys(g, f.Scope, &q)
		q.Items = append(q.Items, Item{"count(*)", BigInt})
		r.tlpHaving(q, g.havingPred(f.Scope))
	case 6, 7:
		r.tlpAggregate(q, p)
	case 8, 9:
		r.norec(q, p)
	default:
		if r.pg == nil {
			r.tlp("tlp-where", q, p, false)
			return
		}
		r.compareWithPG(r.pgQuery(q))
	}
	if r.pg != nil && k != 10 && k != 11 && g.chance(50) {
		// the oracle's base query, against PostgreSQL too
		r.compareWithPG(q.SQL("", ""))
	}
}

// groupKeys replaces q's items by one or two grouping expressions and
// returns them.
func groupKeys(g *Gen, sc *Scope, q *Select) []string {
	// PostgreSQL reads a constant in GROUP BY as a position (or refuses
	// it): keys read a column
	q.Items = nil
	for range 1 + g.n(2) {
		t := sc.Cols[g.n(len(sc.Cols))].Type
		q.Items = append(q.Items, Item{g.ownExpr(t, &Scope{Cols: sc.Cols}), t})
	}
	var keys []string
	for _, it := range q.Items {
		keys = append(keys, it.SQL)
	}
	return keys
}

// havingPred is a predicate over aggregates of the group.
func (g *Gen) havingPred(sc *Scope) string {
	var aggs []string
	for range 1 + g.n(2) {
		switch g.n(4) {
		case 0:
			aggs = append(aggs, fmt.Sprintf("(count(*) %s %d)", []string{">", "<=", "="}[g.n(3)], g.n(4)))
		case 1:
			if c := g.ref(Int, sc); c != "" {
				aggs = append(aggs, fmt.Sprintf("(sum(%s) %s %s)", c, []string{">", "<", "<>"}[g.n(3)], g.literal(Int)))
				continue
			}
			aggs = append(aggs, "(count(*) > 1)")
		case 2:
			t := []Type{Int, BigInt, Text, Real}[g.n(4)] // PostgreSQL has no max(boolean)
			aggs = append(aggs, fmt.Sprintf("(%s(%s) %s %s)", []string{"min", "max"}[g.n(2)], g.expr(t, sc, 1), []string{"=", "<", ">=", "IS DISTINCT FROM"}[g.n(4)], g.literal(t)))
		default:
			aggs = append(aggs, fmt.Sprintf("(count(%s) > %d)", g.expr(g.anyType(), sc, 1), g.n(3)))
		}
	}
	return strings.Join(aggs, []string{" AND ", " OR "}[g.n(2)])
}

// tlp checks that q's rows are the (multiset or, with set, plain) union
// of q's rows where p is true, false and NULL.
func (r *run) tlp(name string, q Select, p string, set bool) {
	base := q.SQL("", "")
	op := " UNION ALL "
	if set {
		op = " UNION "
	}
	parts := q.SQL("("+p+")", "") + op + q.SQL("(NOT ("+p+"))", "") + op + q.SQL("(("+p+") IS NULL)", "")
	r.compareSelf(name, base, parts)
}

// tlpHaving partitions the groups of q by a HAVING predicate.
func (r *run) tlpHaving(q Select, h string) {
	q.Having = ""
	base := q.SQL("", "")
	parts := q.SQL("", "("+h+")") + " UNION ALL " + q.SQL("", "(NOT ("+h+"))") + " UNION ALL " + q.SQL("", "(("+h+") IS NULL)")
	r.compareSelf("tlp-having", base, parts)
}

// tlpAggregate checks MIN, MAX, SUM and COUNT of the whole against the
// same aggregate of the three partitions' aggregates.
func (r *run) tlpAggregate(q Select, p string) {
	g := r.g
	var agg, outer string
	var arg string
	switch g.n(5) {
	case 0:
		agg, outer, arg = "count", "sum", "*"
	case 1:
		agg, outer = "count", "sum"
		arg = g.expr(g.anyType(), q.From.Scope, 2)
	case 2:
		agg, outer = "sum", "sum"
		arg = g.expr([]Type{Int, BigInt, Real}[g.n(3)], q.From.Scope, 2)
	default:
		agg = []string{"min", "max"}[g.n(2)]
		outer = agg
		arg = g.expr(g.cmpType(), q.From.Scope, 2)
	}
	q.Items = []Item{{fmt.Sprintf("%s(%s)", agg, arg), BigInt}}
	base := q.SQL("", "")
	q.Items[0].SQL += " AS x"
	parts := q.SQL("("+p+")", "") + " UNION ALL " + q.SQL("(NOT ("+p+"))", "") + " UNION ALL " + q.SQL("(("+p+") IS NULL)", "")
	r.compareSelf("tlp-aggregate", base, fmt.Sprintf("SELECT %s(x) FROM (%s) AS u", outer, parts))
}

// norec checks a filter's row count against counting the rows whose
// predicate, evaluated as a value, is true: the planner cannot push or
// rewrite the second form's predicate.
func (r *run) norec(q Select, p string) {
	q.Items = []Item{{"count(*)", BigInt}}
	opt := q.SQL("("+p+")", "")
	q.Items = []Item{{"COALESCE(sum(CASE WHEN " + p + " THEN 1 ELSE 0 END), 0)", BigInt}}
	ref := q.SQL("", "")
	r.compareSelf("norec", opt, ref)
}

// pgQuery is a query for the PostgreSQL oracle alone: the plain query,
// a grouped one, a window over it, or a set operation.
func (r *run) pgQuery(q Select) string {
	g := r.g
	sc := q.From.Scope
	switch g.n(6) {
	case 5:
		// a total order over the select list makes LIMIT's rows
		// determined (ties are equal rows)
		var keys []string
		for i := range q.Items {
			keys = append(keys, fmt.Sprintf("%d%s", i+1, []string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST"}[g.n(4)]))
		}
		return fmt.Sprintf("%s ORDER BY %s LIMIT %d", q.SQL("", ""), strings.Join(keys, ", "), g.n(6))
	case 0:
		q.GroupBy = groupKeys(g, sc, &q)
		arg := g.expr([]Type{Int, BigInt, Real}[g.n(3)], sc, 1)
		agg := fmt.Sprintf("%s(%s)", []string{"sum", "avg", "count", "min", "max"}[g.n(5)], arg)
		switch g.n(5) {
		case 0:
			agg = fmt.Sprintf("count(DISTINCT %s)", g.expr(g.anyType(), sc, 1))
		case 1:
			x := g.expr(Text, sc, 1)
			agg = fmt.Sprintf("string_agg(%s, ',' ORDER BY %s)", x, x)
		case 2:
			agg = fmt.Sprintf("%s(%s)", []string{"bool_and", "bool_or"}[g.n(2)], g.pred(sc, 1))
		}
		q.Items = append(q.Items, Item{agg, Real})
		if g.chance(40) {
			q.Having = g.havingPred(sc)
		}
		return q.SQL("", "")
	case 1:
		part := g.expr(g.anyType(), sc, 1)
		ord := g.expr(g.cmpType(), sc, 1)
		dir := []string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST"}[g.n(4)]
		fn := []string{"rank()", "dense_rank()", "count(*)", "sum(" + g.expr(Int, sc, 1) + ")", "max(" + g.expr(Text, sc, 1) + ")", "min(" + g.expr(Int, sc, 1) + ")"}[g.n(6)]
		over := "PARTITION BY " + part
		if fn == "rank()" || fn == "dense_rank()" || g.chance(70) {
			// without ORDER BY the frame is the whole partition
			over += " ORDER BY " + ord + dir
		}
		q.Items = append(q.Items, Item{fmt.Sprintf("%s OVER (%s)", fn, over), BigInt})
		return q.SQL("", "")
	case 2:
		// a set operation of two queries with the same column types
		o := Select{From: g.from()}
		for _, it := range q.Items {
			o.Items = append(o.Items, Item{g.expr(it.Type, o.From.Scope, 2), it.Type})
		}
		if g.chance(50) {
			o.Where = g.pred(o.From.Scope, 2)
		}
		op := []string{"UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"}[g.n(6)]
		return "(" + q.SQL("", "") + ") " + op + " (" + o.SQL("", "") + ")"
	case 3:
		q.Distinct = true
		return q.SQL("", "")
	default:
		return q.SQL("", "")
	}
}

// compareSelf runs two queries that must give the same rows in skade.
// An error in either skips the check: PostgreSQL, where it runs, tells
// whether the query was valid.
func (r *run) compareSelf(oracle, a, b string) {
	ra, err := r.sk.Query(r.ctx, a)
	if err != nil {
		r.skip(oracle+" base (skade)", err, a)
		if r.pg != nil {
			r.compareWithPG(a)
		}
		return
	}
	rb, err := r.sk.Query(r.ctx, b)
	if err != nil {
		r.skip(oracle+" partitioned (skade)", err, b)
		if r.pg != nil {
			r.compareWithPG(b)
		}
		return
	}
	r.rep.Checks[oracle]++
	if d := diff(ra, rb); d != "" {
		r.find(oracle, d, a, b)
	}
}

// refused reports whether err is skade declining a query it knows it
// cannot plan yet (docs/sql.md, "Known gaps"), as opposed to failing one
// it accepted.
func refused(err error) bool {
	return err != nil && strings.Contains(err.Error(), "not supported")
}

// compareWithPG runs a query in both engines. PostgreSQL's error skips
// it; skade's error where PostgreSQL answered, or a different answer, is
// a finding.
func (r *run) compareWithPG(sql string) {
	want, err := r.pg.Query(r.ctx, sql)
	if err != nil {
		r.skip("postgres refused ("+pgCode(err)+")", err)
		// a failed query leaves no transaction to roll back in
		// autocommit; nothing to clean up
		return
	}
	got, err := r.sk.Query(r.ctx, sql)
	if refused(err) {
		r.skip("skade refused", err, sql)
		return
	}
	r.rep.Checks["postgres"]++
	if err != nil {
		r.find("postgres", "skade failed where PostgreSQL answered: "+err.Error(), sql)
		return
	}
	if d := diff(got, want); d != "" {
		r.find("postgres", "skade (first) and PostgreSQL (second) differ: "+d, sql)
	}
}
