package mergeinto_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/scan"
)

// The differential test: randomized MERGE statements on generated data,
// compared with a plain row-at-a-time reference implementation.
//
// Target (k, g, v, s), source (k, v, s, f); joined columns 0-3 are the
// target's, 4-7 the source's. Values are int64, string or nil.

var (
	dTarget = schemaOf(field("k", i64), field("g", i64), field("v", i64), field("s", str))
	dSource = schemaOf(field("k", i64), field("v", i64), field("s", str), field("f", i64))
	dTypes  = []arrow.DataType{i64, i64, i64, str, i64, i64, str, i64}
)

// rexpr is an expression both as an exec.Expr and as a reference
// evaluator over a joined row.
type rexpr struct {
	text  string
	typ   arrow.DataType
	build func(t *testing.T) exec.Expr
	eval  func(row []any) any
}

func rcol(i int) rexpr {
	return rexpr{fmt.Sprintf("#%d", i), dTypes[i], func(*testing.T) exec.Expr { return col(i, dTypes[i]) }, func(r []any) any { return r[i] }}
}

func rlit(v any) rexpr {
	typ := i64
	if _, ok := v.(string); ok {
		typ = str
	}
	return rexpr{fmt.Sprint(v), typ, func(t *testing.T) exec.Expr { return lit(t, v) }, func([]any) any { return v }}
}

func rnull(typ arrow.DataType) rexpr {
	return rexpr{"NULL", typ, func(*testing.T) exec.Expr { return exec.NewNullLiteral(typ) }, func([]any) any { return nil }}
}

func rcall(op string, typ arrow.DataType, f func(a, b any) any, args ...rexpr) rexpr {
	var texts []string
	for _, a := range args {
		texts = append(texts, a.text)
	}
	return rexpr{
		text: op + "(" + strings.Join(texts, ", ") + ")", typ: typ,
		build: func(t *testing.T) exec.Expr {
			var es []exec.Expr
			for _, a := range args {
				es = append(es, a.build(t))
			}
			return call(t, op, es...)
		},
		eval: func(r []any) any {
			var x, y any
			x = args[0].eval(r)
			if len(args) > 1 {
				y = args[1].eval(r)
			}
			return f(x, y)
		},
	}
}

func strict(f func(a, b any) any) func(a, b any) any {
	return func(a, b any) any {
		if a == nil || b == nil {
			return nil
		}
		return f(a, b)
	}
}

func cmpAny(a, b any) int {
	switch x := a.(type) {
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	}
	panic("bad type")
}

// gen generates random expressions, clause sets and data.
type gen struct{ r *rand.Rand }

func (g gen) intExpr(depth int) rexpr {
	switch g.r.IntN(7) {
	case 0:
		return rlit(int64(g.r.IntN(20) - 5))
	case 1:
		return rcol(2) // t.v
	case 2:
		return rcol(5) // s.v
	case 3:
		return rcol(7) // s.f
	case 4:
		return rcol(1) // t.g
	case 5:
		if depth > 0 {
			return rcall("+", i64, strict(func(a, b any) any { return a.(int64) + b.(int64) }), g.intExpr(depth-1), g.intExpr(depth-1))
		}
		return rnull(i64)
	}
	return rcol(0) // t.k
}

func (g gen) strExpr() rexpr {
	switch g.r.IntN(4) {
	case 0:
		return rcol(3)
	case 1:
		return rcol(6)
	case 2:
		return rlit([]string{"x", "y", "z"}[g.r.IntN(3)])
	}
	return rnull(str)
}

func (g gen) cond(depth int) rexpr {
	k := g.r.IntN(8)
	if depth <= 0 {
		k %= 5
	}
	switch k {
	case 0:
		return rcall(">", bool_, strict(func(a, b any) any { return cmpAny(a, b) > 0 }), g.intExpr(1), g.intExpr(1))
	case 1:
		return rcall("=", bool_, strict(func(a, b any) any { return cmpAny(a, b) == 0 }), g.intExpr(0), g.intExpr(0))
	case 2:
		return rcall("is_null", bool_, func(a, _ any) any { return a == nil }, g.intExpr(0))
	case 3:
		return rcall("=", bool_, strict(func(a, b any) any { return a.(string) == b.(string) }), g.strExpr(), g.strExpr())
	case 4:
		return rcall("<=", bool_, strict(func(a, b any) any { return cmpAny(a, b) <= 0 }), g.intExpr(0), rlit(int64(g.r.IntN(10))))
	case 5:
		return rcall("and", bool_, func(a, b any) any {
			if a == false || b == false {
				return false
			}
			if a == nil || b == nil {
				return nil
			}
			return true
		}, g.cond(depth-1), g.cond(depth-1))
	case 6:
		return rcall("or", bool_, func(a, b any) any {
			if a == true || b == true {
				return true
			}
			if a == nil || b == nil {
				return nil
			}
			return false
		}, g.cond(depth-1), g.cond(depth-1))
	}
	return rcall("not", bool_, func(a, _ any) any {
		if a == nil {
			return nil
		}
		return !a.(bool)
	}, g.cond(depth-1))
}

// rclause is a clause in both forms.
type rclause struct {
	kind   mergeinto.ClauseKind
	cond   *rexpr
	action mergeinto.ActionKind
	set    map[int]rexpr // UPDATE
	values []rexpr       // INSERT
}

func (c rclause) String() string {
	s := c.kind.String()
	if c.cond != nil {
		s += " AND " + c.cond.text
	}
	s += " THEN " + c.action.String()
	for i := 0; i < 4; i++ {
		if e, ok := c.set[i]; ok {
			s += fmt.Sprintf(" #%d=%s", i, e.text)
		}
	}
	for _, v := range c.values {
		s += " " + v.text
	}
	return s
}

func (g gen) clauses() []rclause {
	var out []rclause
	n := 1 + g.r.IntN(4)
	closed := map[mergeinto.ClauseKind]bool{}
	for i := 0; i < n; i++ {
		kind := mergeinto.ClauseKind(g.r.IntN(3))
		if closed[kind] {
			continue
		}
		c := rclause{kind: kind}
		if g.r.IntN(3) > 0 {
			e := g.cond(2)
			c.cond = &e
		} else {
			closed[kind] = true
		}
		switch kind {
		case mergeinto.Matched, mergeinto.NotMatchedBySource:
			switch g.r.IntN(5) {
			case 0:
				c.action = mergeinto.ActionDelete
			case 1:
				c.action = mergeinto.ActionDoNothing
			default:
				c.action = mergeinto.ActionUpdate
				c.set = map[int]rexpr{}
				for len(c.set) == 0 {
					for col := 0; col < 4; col++ {
						if g.r.IntN(3) == 0 {
							if col == 3 {
								c.set[col] = g.strExpr()
							} else {
								c.set[col] = g.intExpr(1)
							}
						}
					}
				}
			}
		case mergeinto.NotMatchedByTarget:
			if g.r.IntN(5) == 0 {
				c.action = mergeinto.ActionDoNothing
			} else {
				c.action = mergeinto.ActionInsert
				c.values = []rexpr{rcol(4), g.intExpr(0), g.intExpr(1), g.strExpr()}
			}
		}
		out = append(out, c)
	}
	return out
}

func (g gen) maybeNull(v any, p int) any {
	if g.r.IntN(p) == 0 {
		return nil
	}
	return v
}

// targetRows are n target rows; v is NULL in about a sixth of them
// unless dense.
func (g gen) targetRows(n int, dense bool) [][]any {
	var rows [][]any
	for i := 0; i < n; i++ {
		v := int64(g.r.IntN(10))
		row := []any{g.maybeNull(int64(g.r.IntN(30)), 12), int64(g.r.IntN(3)), v, g.maybeNull([]string{"x", "y", "z"}[g.r.IntN(3)], 5)}
		if !dense {
			row[2] = g.maybeNull(v, 6)
		}
		rows = append(rows, row)
	}
	return rows
}

func (g gen) sourceRows(n int, dupes bool) [][]any {
	var rows [][]any
	keys := g.r.Perm(40)
	for i := 0; i < n; i++ {
		k := int64(keys[i%len(keys)])
		if dupes && g.r.IntN(3) == 0 {
			k = int64(g.r.IntN(40))
		}
		rows = append(rows, []any{g.maybeNull(k, 10), g.maybeNull(int64(g.r.IntN(10)), 6), g.maybeNull([]string{"x", "y", "z"}[g.r.IntN(3)], 5), int64(g.r.IntN(5))})
	}
	return rows
}

// reference applies the statement row by row. It returns the final rows
// rendered as "k|g|v|s", the count, or errCardinality.
var errCardinality = errors.New("cardinality")

func reference(target, source [][]any, composite bool, on *rexpr, clauses []rclause) ([]string, int64, error) {
	isTrue := func(e *rexpr, row []any) bool { return e == nil || e.eval(row) == true }
	joined := func(t, s []any) []any {
		row := make([]any, 8)
		copy(row, t)
		copy(row[4:], s)
		return row
	}
	nulls := []any{nil, nil, nil, nil}
	hasMatched := false
	for _, c := range clauses {
		hasMatched = hasMatched || c.kind == mergeinto.Matched
	}
	matchedSrc := make([]bool, len(source))
	var out [][]any
	var count int64
	for _, t := range target {
		var ms []int
		for j, s := range source {
			keyEq := t[0] != nil && s[0] != nil && t[0] == s[0]
			if composite { // and t.g = s.f
				keyEq = keyEq && t[1] != nil && s[3] != nil && t[1] == s[3]
			}
			if keyEq && isTrue(on, joined(t, s)) {
				ms = append(ms, j)
				matchedSrc[j] = true
			}
		}
		kind, s := mergeinto.NotMatchedBySource, nulls
		if len(ms) > 0 {
			kind, s = mergeinto.Matched, source[ms[0]]
		}
		if len(ms) > 1 && hasMatched {
			// PostgreSQL's rule: an error only when two source rows
			// would change the row (UPDATE or DELETE, not DO NOTHING)
			acting := 0
			for _, j := range ms {
				for _, c := range clauses {
					if c.kind != mergeinto.Matched || !isTrue(c.cond, joined(t, source[j])) {
						continue
					}
					if c.action == mergeinto.ActionUpdate || c.action == mergeinto.ActionDelete {
						acting++
						s = source[j]
					}
					break
				}
			}
			if acting > 1 {
				return nil, 0, errCardinality
			}
		}
		row := joined(t, s)
		newRow := t
		for _, c := range clauses {
			if c.kind != kind || !isTrue(c.cond, row) {
				continue
			}
			switch c.action {
			case mergeinto.ActionDelete:
				newRow = nil
				count++
			case mergeinto.ActionUpdate:
				newRow = slices.Clone(t)
				for i, e := range c.set {
					newRow[i] = e.eval(row)
				}
				count++
			}
			break
		}
		if newRow != nil {
			out = append(out, newRow)
		}
	}
	for j, s := range source {
		if matchedSrc[j] {
			continue
		}
		row := joined(nulls, s)
		for _, c := range clauses {
			if c.kind != mergeinto.NotMatchedByTarget || !isTrue(c.cond, row) {
				continue
			}
			if c.action == mergeinto.ActionInsert {
				var nr []any
				for _, v := range c.values {
					nr = append(nr, v.eval(row))
				}
				out = append(out, nr)
				count++
			}
			break
		}
	}
	var lines []string
	for _, r := range out {
		var parts []string
		for _, v := range r {
			switch x := v.(type) {
			case nil:
				parts = append(parts, "NULL")
			case int64:
				parts = append(parts, strconv.FormatInt(x, 10))
			case string:
				parts = append(parts, x)
			}
		}
		lines = append(lines, strings.Join(parts, "|"))
	}
	slices.Sort(lines)
	return lines, count, nil
}

func TestDifferential(t *testing.T) {
	bases, perBase := 25, 40 // 1,000 cases
	if testing.Short() {
		bases, perBase = 10, 20
	}
	g := gen{rand.New(rand.NewPCG(20261129, 5))}
	cat, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	outcomes := map[string]int{}
	for b := 0; b < bases; b++ {
		var parts []string
		if b%3 == 1 {
			parts = []string{"g"}
		}
		f := newFixtureIn(t, cat, fmt.Sprintf("d%d", b), dTarget, parts...)
		props := iceberg.Properties{}
		if b%4 == 2 {
			// row groups of 3 rows: the copy, the patch, and the reads
			// key columns first (here and by the read-ahead workers) see
			// files with row groups hit and not
			props[table.ParquetRowGroupLimitKey] = "3"
		}
		// PLAIN integers, and on half of those bases no NULL in v: pages
		// a sparse patch re-encodes in place (fixedpatch.go)
		plain := b%2 == 1 || b%8 == 6
		if plain {
			props["parquet.enable.dictionary"] = "false"
		}
		if len(props) > 0 {
			f.setProperties(props)
		}
		var target [][]any
		var files [][][]any
		for file := 0; file < 1+g.r.IntN(3); file++ {
			rows := g.targetRows(g.r.IntN(15), plain && b%4 < 2)
			if len(rows) > 0 {
				files = append(files, rows)
			}
			target = append(target, rows...)
		}
		if len(files) > 0 {
			f.appendFiles(files...)
		}
		base := f.table()
		for c := 0; c < perBase; c++ {
			cases++
			// The target files are read in turn, or ahead by 1–3 workers,
			// with the read-ahead limit at its default or at one byte
			// (every worker but the apply loop's waits after each batch).
			ra := []struct {
				workers int
				bytes   int64
			}{{0, 0}, {1, 0}, {2, 0}, {3, 1}, {2, 1}}[g.r.IntN(5)]
			source := g.sourceRows(g.r.IntN(20), g.r.IntN(3) == 0)
			clauses := g.clauses()
			// a quarter of the cases only update the rows they match, so
			// that row groups are patched
			patchy := g.r.IntN(4) == 0
			if patchy {
				only := slices.DeleteFunc(slices.Clone(clauses), func(c rclause) bool {
					return c.kind == mergeinto.NotMatchedBySource || c.kind == mergeinto.Matched && c.action == mergeinto.ActionDelete
				})
				if len(only) > 0 {
					clauses = only
				}
			}
			if g.r.IntN(6) == 0 {
				// a sixth only set v or s, from a constant or the source,
				// as a sparse patch takes them (v page by page on plain
				// pages, fixedpatch.go)
				set := map[int]rexpr{}
				if g.r.IntN(2) == 0 {
					set[2] = rlit(int64(g.r.IntN(20) - 5))
					if g.r.IntN(2) == 0 {
						set[2] = rcol(5) // s.v
					}
				} else {
					set[3] = rlit([]string{"x", "w", "new"}[g.r.IntN(3)])
					if g.r.IntN(2) == 0 {
						set[3] = rcol(6) // s.s
					}
				}
				clauses = []rclause{{kind: mergeinto.Matched, action: mergeinto.ActionUpdate, set: set}}
			}
			composite := g.r.IntN(4) == 0
			var on *rexpr
			if g.r.IntN(4) == 0 {
				e := g.cond(1)
				on = &e
			}
			desc := func() string {
				var s []string
				if composite {
					s = append(s, "ON t.k = s.k AND t.g = s.f")
				}
				if on != nil {
					s = append(s, "ON residual "+on.text)
				}
				for _, c := range clauses {
					s = append(s, c.String())
				}
				return fmt.Sprintf("base %d case %d (read-ahead %+v)\n target %v\n source %v\n %s", b, c, ra, target, source, strings.Join(s, "\n "))
			}
			want, wantCount, wantErr := reference(target, source, composite, on, clauses)

			spec := &mergeinto.Spec{Source: values(t, dSource, source...), Keys: []mergeinto.Key{{Target: 0, Source: col(0, i64)}}}
			if composite {
				spec.Keys = append(spec.Keys, mergeinto.Key{Target: 1, Source: col(3, i64)})
			}
			if on != nil {
				spec.On = on.build(t)
			}
			for _, rc := range clauses {
				c := mergeinto.Clause{Kind: rc.kind, Action: mergeinto.Action{Kind: rc.action}}
				if rc.cond != nil {
					c.Cond = rc.cond.build(t)
				}
				for i := 0; i < 4; i++ {
					if e, ok := rc.set[i]; ok {
						c.Action.Set = append(c.Action.Set, set(i, e.build(t)))
					}
				}
				for _, v := range rc.values {
					c.Action.Values = append(c.Action.Values, v.build(t))
				}
				spec.Clauses = append(spec.Clauses, c)
			}
			// On some cases a group's rows and SET columns may hold only a
			// few bytes (a patch gives way, at its start or part way
			// through its group's batches; an unchanged prefix is read
			// again), and on some every patch, or every other one, fails
			// to encode: the fallbacks must keep the updates.
			small := g.r.IntN(5) == 0 || patchy && g.r.IntN(2) == 0
			if small {
				spec.Options.BatchSize = 1 + g.r.IntN(4)
			}
			if g.r.IntN(4) == 0 || small && g.r.IntN(2) == 0 {
				spec.Options.BufferLimit = 1 + int64(g.r.IntN(60))
			}
			var patches, deferred, sparse, fixed, plain atomic.Int64
			mergeinto.TestHookDefer = func() { deferred.Add(1) }
			scan.TestHookPlainRead = func(rows int64) {
				if rows >= 0 {
					plain.Add(1)
				}
			}
			mergeinto.TestHookSparse = func(int64) { sparse.Add(1) }
			mergeinto.TestHookFixed = func(int64) { fixed.Add(1) }
			// and on every fourth case nothing is read narrow, to compare
			restoreN := mergeinto.SetNarrowRead(c%4 != 3)
			failEvery := []int64{0, 0, 0, 1, 2}[g.r.IntN(5)]
			if failEvery > 0 {
				mergeinto.TestHookPatch = func(int64) error {
					if patches.Add(1)%failEvery == 0 {
						return errors.New("injected")
					}
					return nil
				}
			}
			r := f.begin()
			f.spec(r, spec)
			if r.tbl.MetadataLocation() != base.MetadataLocation() {
				t.Fatal("base moved")
			}
			restore := mergeinto.SetReadAhead(ra.workers, ra.bytes)
			// and the inserts, on most cases, by a writer per 2 rows
			restoreW := func() {}
			if c%4 != 0 {
				restoreW = mergeinto.SetInsertRowsPerWriter(2)
			}
			// and on every other case the join table is bounded by the
			// target's key range whatever the source's size
			restoreKR := func() {}
			if c%2 == 1 {
				restoreKR = mergeinto.SetKeyRangeMinRows(0)
			}
			spec.Budget = exec.NewBudget(0) // unlimited, to see that all of it comes back
			res, err := mergeinto.Execute(ctx, spec, r.txn)
			mergeinto.TestHookPatch, mergeinto.TestHookDefer, mergeinto.TestHookSparse, mergeinto.TestHookFixed = nil, nil, nil, nil
			scan.TestHookPlainRead = nil
			restoreN()
			if failEvery > 0 && patches.Load() > 0 {
				outcomes["patches failed"]++
			}
			if err == nil && res.Metrics.ColumnChunksUnread > 0 {
				outcomes["read narrow"]++
			}
			if deferred.Load() > 0 {
				outcomes["narrow groups deferred"]++
			}
			if sparse.Load() > 0 {
				outcomes["sparse patches"]++
				if failEvery > 0 {
					outcomes["sparse patches, some failing"]++
				}
			}
			if fixed.Load() > 0 {
				outcomes["fixed-width pages patched"]++
			}
			if plain.Load() > 0 {
				outcomes["row groups read page by page"]++
			}
			if u := spec.Budget.Used(); u != 0 {
				t.Fatalf("%s\n%d bytes of the budget still held after the statement (error %v)", desc(), u, err)
			}
			restore()
			restoreW()
			restoreKR()
			if wantErr != nil {
				var ce *mergeinto.CardinalityError
				if !errors.As(err, &ce) {
					t.Fatalf("%s\nwant a cardinality error, got %v", desc(), err)
				}
				outcomes["cardinality error"]++
				r.tracker.RemoveCreated()
				continue
			}
			if err != nil {
				t.Fatalf("%s\nerror: %v", desc(), err)
			}
			if res.Metrics.SourceRowsOutside > 0 {
				if c%2 == 0 {
					t.Fatalf("%s\n%d source rows outside the target's key range below the size that asks for it", desc(), res.Metrics.SourceRowsOutside)
				}
				outcomes["source rows outside the target's keys"]++
			}
			var got []string
			if res.Staged {
				scan, err := r.txn.Scan()
				if err != nil {
					t.Fatal(err)
				}
				got = stagedRows(t, scan)
				outcomes["staged"]++
			} else {
				got = tableRows(t, base)
				outcomes["no change"]++
			}
			if err := r.tracker.RemoveCreated(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) || res.Count != wantCount {
				t.Fatalf("%s\n got  %q (count %d)\n want %q (count %d)", desc(), got, res.Count, want, wantCount)
			}
			if res.Staged != (wantCount > 0) {
				t.Fatalf("%s\nstaged %v with count %d", desc(), res.Staged, wantCount)
			}
		}
	}
	t.Logf("%d cases: %v", cases, outcomes)
	// the short run's 200 cases may draw no cardinality error and no
	// deferred group; the full run's 1,000 must cover every outcome
	if (!testing.Short() && (outcomes["cardinality error"] == 0 || outcomes["narrow groups deferred"] == 0)) || outcomes["read narrow"] == 0 || outcomes["sparse patches"] == 0 || outcomes["fixed-width pages patched"] == 0 || outcomes["row groups read page by page"] == 0 || outcomes["staged"] < cases/3 || outcomes["no change"] == 0 || outcomes["source rows outside the target's keys"] < cases/10 || outcomes["patches failed"] == 0 {
		t.Fatalf("the generator is lopsided: %v", outcomes)
	}
}

func stagedRows(t *testing.T, scan *table.Scan) []string {
	t.Helper()
	at, err := scan.ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	var out []string
	for tr.Next() {
		out = append(out, renderRows(tr.RecordBatch())...)
	}
	slices.Sort(out)
	return out
}
