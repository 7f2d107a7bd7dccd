package plan

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
)

// binder holds the state of binding one statement.
type binder struct {
	ctx context.Context
	cat Catalog
	// viewDepth counts the views being bound, one inside another.
	viewDepth int
	now       time.Time
	nextID    ColumnID
	opts      Options
	// ctes are the WITH definitions in force, innermost last.
	ctes []*cteDef
	// pinned, when set, pins every table read to a snapshot (a read-only
	// table handle's SQL).
	pinned map[string]int64
	// windows are the current SELECT's named windows (WINDOW w AS …).
	windows map[string]*parser.WindowSpec
	// split, while a parallel copy of a scan chain is built, holds the
	// data files that copy reads.
	split []table.FileScanTask
	// params are the values of $1, $2, … (and ?).
	params []any
	// paramTypes: the statement is being described (Planner.ParamTypes).
	paramTypes []arrow.DataType
	// settings are the session's variables (Planner.Settings).
	settings map[string]string
	// groupingBranches marks the SELECTs bindGroupingSets made, one per
	// grouping set
	groupingBranches map[*parser.Select]*groupingBranch
	// subqueries counts the expression subqueries being bound around the
	// current point (a recursive CTE's self-reference must not be in one).
	subqueries int
	// srfCols maps the text of each unnest call in the select list being
	// bound to the hidden column that holds its elements (srfSelect)
	srfCols map[string]string
	// subplans are the MERGE clause subplans (clauseSubplan), for their
	// names and EXPLAIN
	subplans []*clauseSubplan
	// inits are the uncorrelated scalar and EXISTS subqueries bound so
	// far: init plans, which the optimizer (foldInits) runs, never the
	// binder.
	inits []*InitPlan
	// aggOf is the aggregation of each SELECT whose select list, HAVING
	// or ORDER BY is being bound, by its input scope: an aggregate in a
	// subquery there that reads only that query's columns is its
	// aggregate (outerLevelAggregate). selOf is each SELECT by its input
	// scope, and forceAgg the SELECTs such an aggregate makes aggregates.
	aggOf    map[*scope]*aggState
	selOf    map[*scope]*parser.Select
	forceAgg map[*parser.Select]bool
	// outerAggIn are the SELECTs that hold such an aggregate, aggOnlyOuter
	// those among them that aggregated only because of them (no GROUP BY,
	// HAVING or aggregate of their own), and noAgg those bound again as
	// queries that do not aggregate.
	outerAggIn   map[*parser.Select]bool
	aggOnlyOuter map[*parser.Select]bool
	noAgg        map[*parser.Select]bool
}

type cteDef struct {
	name    string
	cols    []parser.Ident
	query   *parser.Query
	binding bool // being bound: a self-reference is recursion
	// recursive is set for WITH RECURSIVE; work while its recursive term
	// is bound, where a self-reference reads the working table.
	recursive bool
	work      *workTable
	// outer is the scope around the WITH: a CTE of a correlated subquery
	// may read the enclosing query's columns, as the subquery may
	outer *scope
}

func (b *binder) newID() ColumnID {
	b.nextID++
	return b.nextID
}

// newCol makes a fresh column.
func (b *binder) newCol(name, tbl string, typ arrow.DataType, nullable bool) Column {
	return Column{ID: b.newID(), Name: name, Table: tbl, Type: typ, Nullable: nullable}
}

// scopeCol is a column visible to name resolution.
type scopeCol struct {
	Column
	// hidden columns are reachable only qualified (the right-hand copy of
	// a USING column) and are left out of *.
	hidden bool
	// meta columns are a table's metadata columns (row lineage's _row_id
	// and _last_updated_sequence_number): reachable by name, qualified or
	// not, and left out of * and t.*, as Spark and Trino have them.
	meta bool
}

// scope is the set of columns a clause can name.
type scope struct {
	cols   []scopeCol
	parent *scope // the enclosing query, for correlated references
}

func newScope(cols []Column, parent *scope) *scope {
	sc := &scope{parent: parent}
	for _, c := range cols {
		sc.cols = append(sc.cols, scopeCol{Column: c})
	}
	return sc
}

// identName folds an unquoted identifier to lower case, as Postgres does.
func identName(id parser.Ident) string {
	if id.Quoted {
		return id.Name
	}
	return strings.ToLower(id.Name)
}

func nameParts(n parser.Name) []string {
	out := make([]string, len(n))
	for i, id := range n {
		out[i] = identName(id)
	}
	return out
}

func sameName(want parser.Ident, have string) bool {
	if want.Quoted {
		return want.Name == have
	}
	return strings.EqualFold(want.Name, have)
}

// resolve finds a column by (qualifier, name) in sc or an enclosing scope.
func (b *binder) resolve(sc *scope, ref *parser.ColumnRef) (*ColRef, error) {
	parts := ref.Name
	var qual parser.Ident
	var name parser.Ident
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		qual, name = parts[0], parts[1]
	case 3:
		// schema.table.col: the schema part is checked by table lookup;
		// columns are qualified by table name or alias here.
		qual, name = parts[1], parts[2]
	default:
		return nil, errorf(ref.Pos, "column reference %s has too many dotted parts", ref.Name)
	}
	for s, depth := sc, 0; s != nil; s, depth = s.parent, depth+1 {
		var found []scopeCol
		qualSeen := false
		for _, c := range s.cols {
			if !qual.Empty() {
				if !sameName(qual, c.Table) {
					continue
				}
				qualSeen = true
			} else if c.hidden {
				continue
			}
			if sameName(name, c.Name) {
				dup := false
				for _, f := range found {
					if f.ID == c.ID {
						dup = true
					}
				}
				if !dup {
					found = append(found, c)
				}
			}
		}
		if len(found) > 1 {
			return nil, errorf(ref.Pos, "column reference %q is ambiguous; qualify it with a table name", ref.Name.String())
		}
		if len(found) == 1 {
			c := found[0]
			return &ColRef{ID: c.ID, Typ: c.Type, Name: displayCol(c.Column)}, nil
		}
		if !qual.Empty() && qualSeen && depth == 0 {
			return nil, errorf(ref.Pos, "column %q not found in table %q%s", name.Name, identName(qual), didYouMean(name.Name, sc.namesOf(identName(qual))))
		}
	}
	if !qual.Empty() {
		if !sc.hasTable(qual) {
			return nil, errorf(ref.Pos, "missing FROM-clause entry for table %q", identName(qual))
		}
	}
	// tables an unqualified name can reach (not RETURNING's old and new)
	var tables []string
	for _, c := range sc.cols {
		if c.Table != "" && !c.hidden && !slices.Contains(tables, c.Table) {
			tables = append(tables, c.Table)
		}
	}
	if len(tables) == 1 {
		return nil, errorf(ref.Pos, "column %q not found in table %q%s", name.Name, tables[0], didYouMean(name.Name, sc.namesOf("")))
	}
	return nil, errorf(ref.Pos, "column %q does not exist%s", name.Name, didYouMean(name.Name, sc.namesOf("")))
}

func displayCol(c Column) string {
	if c.Table != "" {
		return c.Table + "." + c.Name
	}
	return c.Name
}

func (sc *scope) namesOf(table string) []string {
	var out []string
	for _, c := range sc.cols {
		if table == "" || strings.EqualFold(c.Table, table) {
			out = append(out, c.Name)
		}
	}
	return out
}

func (sc *scope) hasTable(q parser.Ident) bool {
	for s := sc; s != nil; s = s.parent {
		for _, c := range s.cols {
			if sameName(q, c.Table) {
				return true
			}
		}
	}
	return false
}

func (sc *scope) tables() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range sc.cols {
		if c.Table != "" && !seen[c.Table] {
			seen[c.Table] = true
			out = append(out, c.Table)
		}
	}
	return out
}

// constInt evaluates a constant integer expression (LIMIT, OFFSET, a
// time-travel version).
func (b *binder) constValue(e parser.Expr, what string) (*exec.Literal, error) {
	sc := newScope(nil, nil)
	x, err := b.bindExpr(e, &exprCtx{sc: sc, clause: what})
	if err != nil {
		return nil, err
	}
	// A subquery here is needed now, to plan with: run it.
	if x, err = b.foldExpr(x); err != nil {
		return nil, err
	}
	c, ok := x.(*Const)
	if !ok {
		return nil, errorf(e.Position(), "argument of %s must be a constant", what)
	}
	return c.Lit, nil
}

func (b *binder) constInt(e parser.Expr, what string) (int64, bool, error) {
	lit, err := b.constValue(e, what)
	if err != nil {
		return 0, false, err
	}
	if !lit.Value.IsValid() {
		return 0, true, nil
	}
	c, err := exec.NewCast(lit, tInt64, false)
	if err != nil {
		return 0, false, errorf(e.Position(), "argument of %s must be an integer, not type %s", what, exec.TypeName(lit.DataType()))
	}
	v, err := evalConst(b.ctx, b.now, c)
	if err != nil {
		return 0, false, atPos(e.Position(), err)
	}
	iv, ok := v.Value.(*scalar.Int64)
	if !ok || !iv.IsValid() {
		return 0, true, nil
	}
	return iv.Value, false, nil
}
