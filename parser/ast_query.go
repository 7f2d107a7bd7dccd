package parser

// Query is a complete query: optional WITH, a body, and the ORDER BY /
// LIMIT / OFFSET that apply to the body as a whole. A SELECT statement is a
// *Query; so are subqueries, CTE bodies and INSERT sources.
type Query struct {
	Pos
	With     *With
	Body     QueryBody
	OrderBy  []*OrderItem
	Limit    Expr // nil when absent (or LIMIT ALL); FETCH FIRST n ROWS ONLY sets it too
	Offset   Expr
	WithTies bool // FETCH FIRST n ROWS WITH TIES
}

// QueryBody is what a Query orders and limits: a *Select, a *SetOp, a
// *Values, or a parenthesised *Query that has its own ORDER BY/LIMIT/WITH.
type QueryBody interface {
	Node
	bodyNode()
}

// With is a WITH [RECURSIVE] list of common table expressions.
type With struct {
	Pos
	Recursive bool
	CTEs      []*CTE
}

// CTE is one name [(cols)] AS [[NOT] MATERIALIZED] (query).
type CTE struct {
	Pos
	Name         Ident
	Columns      []Ident
	Materialized string // "", "MATERIALIZED" or "NOT MATERIALIZED"
	Query        *Query
	// DML is a data-modifying CTE's statement (INSERT, UPDATE, DELETE or
	// MERGE with RETURNING); Query is then nil.
	DML Stmt
}

// Select is one SELECT … FROM … WHERE … GROUP BY … HAVING … block.
type Select struct {
	Pos
	Distinct   bool
	DistinctOn []Expr // DISTINCT ON (…); implies Distinct
	Items      []*SelectItem
	From       []TableExpr // comma-separated items; joins nest inside one item
	Where      Expr
	GroupBy    []Expr // expressions or ordinals (integer Literals)
	GroupByAll bool   // GROUP BY ALL
	Having     Expr
	Windows    []*NamedWindow
	Qualify    Expr
}

// SelectItem is one entry of a select list or RETURNING list. Expr may be a
// *Star.
type SelectItem struct {
	Pos
	Expr  Expr
	Alias Ident // empty when none
}

// NamedWindow is one WINDOW name AS (spec) definition.
type NamedWindow struct {
	Pos
	Name Ident
	Spec *WindowSpec
}

// SetOpKind is UNION, EXCEPT or INTERSECT.
type SetOpKind uint8

// Set operations.
const (
	Union SetOpKind = iota + 1
	Except
	Intersect
)

// String returns the keyword.
func (k SetOpKind) String() string {
	switch k {
	case Union:
		return "UNION"
	case Except:
		return "EXCEPT"
	case Intersect:
		return "INTERSECT"
	}
	return "?"
}

// SetOp is Left UNION|EXCEPT|INTERSECT [ALL] Right. INTERSECT binds tighter
// than UNION and EXCEPT, as in PostgreSQL.
type SetOp struct {
	Pos
	Op          SetOpKind
	All         bool
	Left, Right QueryBody
}

// Values is VALUES (…), (…): each row a list of expressions.
type Values struct {
	Pos
	Rows [][]Expr
}

// OrderItem is one ORDER BY entry.
type OrderItem struct {
	Pos
	Expr  Expr
	Desc  bool
	Nulls NullsOrder
}

// NullsOrder is the NULLS FIRST/LAST choice of an OrderItem.
type NullsOrder uint8

// Null orderings; NullsDefault means not written.
const (
	NullsDefault NullsOrder = iota
	NullsFirst
	NullsLast
)

// Alias is AS name [(col, …)] on a FROM item.
type Alias struct {
	Pos
	Name    Ident
	Columns []Ident
}

// TableName is a named table in FROM, optionally pinned to a snapshot
// (time travel) and aliased.
type TableName struct {
	Pos
	Name  Name
	AsOf  *AsOf
	Alias *Alias
}

// AsOfKind says what an AsOf pins: a snapshot id or a point in time.
type AsOfKind uint8

// Time-travel kinds.
const (
	AsOfVersion AsOfKind = iota + 1
	AsOfTimestamp
)

// AsOf is time travel: FOR VERSION AS OF v, FOR TIMESTAMP AS OF ts (Trino,
// Spark without FOR) or AT (VERSION => v) / AT (TIMESTAMP => ts) (DuckDB).
// All spellings produce the same node.
type AsOf struct {
	Pos
	Kind  AsOfKind
	Value Expr
}

// TableFunc is a table-valued function in FROM: read_csv('f.csv', header =
// true). Args may contain *NamedArg.
type TableFunc struct {
	Pos
	Name       Name
	Args       []Expr
	Ordinality bool // WITH ORDINALITY
	Alias      *Alias
}

// SubqueryRef is a parenthesised query in FROM (including (VALUES …)),
// with an optional alias and LATERAL.
type SubqueryRef struct {
	Pos
	Lateral bool
	Query   *Query
	Alias   *Alias
}

// JoinKind is the kind of a Join.
type JoinKind uint8

// Join kinds. LEFT/RIGHT/FULL OUTER are the same as without OUTER.
const (
	InnerJoin JoinKind = iota + 1
	LeftJoin
	RightJoin
	FullJoin
	CrossJoin
)

// Join is Left [NATURAL] kind JOIN Right [ON On | USING (Using)].
type Join struct {
	Pos
	Kind        JoinKind
	Natural     bool
	Left, Right TableExpr
	On          Expr
	Using       []Ident
}

// ParenTable is a parenthesised join: (a JOIN b ON …) [AS x].
type ParenTable struct {
	Pos
	Table TableExpr
	Alias *Alias
}

func (*Query) stmtNode()  {}
func (*Query) bodyNode()  {}
func (*Select) bodyNode() {}
func (*SetOp) bodyNode()  {}
func (*Values) bodyNode() {}

func (*TableName) tableNode()   {}
func (*TableFunc) tableNode()   {}
func (*SubqueryRef) tableNode() {}
func (*Join) tableNode()        {}
func (*ParenTable) tableNode()  {}
