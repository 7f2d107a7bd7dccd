package parser

// LitKind classifies a Literal.
type LitKind uint8

// Literal kinds. Numbers keep their source text so no precision is lost
// before the binder picks a type.
const (
	LitNull    LitKind = iota
	LitBool            // Value is "true" or "false"
	LitInteger         // digits only
	LitDecimal         // digits with a point, no exponent: an exact decimal
	LitFloat           // has an exponent: approximate
	LitString          // Value is the decoded string
)

// Literal is a constant: NULL, TRUE/FALSE, a number or a string.
type Literal struct {
	Pos
	Kind  LitKind
	Value string
}

// TypedLiteral is a type name applied to a string: DATE '2024-01-01',
// TIMESTAMP '…', TIMESTAMPTZ '…'.
type TypedLiteral struct {
	Pos
	Type  *TypeName
	Value string
}

// IntervalLiteral is INTERVAL '3 days' (Unit empty) or INTERVAL 3 DAY /
// INTERVAL '3' DAY (Unit holds the upper-case unit).
type IntervalLiteral struct {
	Pos
	Value Expr // a string or number Literal, or a parenthesised expression
	Unit  string
}

// Param is a query parameter: $1 (Index 1) or ? (Positional; Index counts
// the ?s of the statement from 1).
type Param struct {
	Pos
	Index      int
	Positional bool
}

// ColumnRef names a column, optionally qualified: id, t.id, s.t.id.
type ColumnRef struct {
	Pos
	Name Name
}

// Star is * or t.* in a select list, with DuckDB's EXCLUDE (cols) and
// REPLACE (expr AS col, …) modifiers.
type Star struct {
	Pos
	Table   Name // empty for a bare *
	Exclude []Ident
	Replace []*ReplaceItem
}

// ReplaceItem is one "expr AS col" of * REPLACE (…).
type ReplaceItem struct {
	Pos
	Expr Expr
	Name Ident
}

// UnaryOp is a prefix operator.
type UnaryOp uint8

// Prefix operators.
const (
	OpNeg    UnaryOp = iota + 1 // -x
	OpPlus                      // +x
	OpNot                       // NOT x
	OpBitNot                    // ~x
)

// UnaryExpr is a prefix operator applied to an operand.
type UnaryExpr struct {
	Pos
	Op UnaryOp
	X  Expr
}

// BinaryOp is an infix operator.
type BinaryOp uint8

// Infix operators, grouped by PostgreSQL precedence level (see precedence).
const (
	OpOr BinaryOp = iota + 1
	OpAnd
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpConcat   // ||
	OpArrow    // ->
	OpArrow2   // ->>
	OpBitAnd   // &
	OpBitOr    // |
	OpBitXor   // #
	OpShl      // <<
	OpShr      // >>
	OpRegex    // ~
	OpNotRegex // !~
	OpIRegex   // ~*
	OpNotIRegex
	OpContains    // @>
	OpContainedBy // <@
	OpOverlap     // &&
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpMod
	OpPow // ^
)

var binaryOpText = [...]string{
	OpOr: "OR", OpAnd: "AND", OpEq: "=", OpNe: "<>", OpLt: "<", OpLe: "<=",
	OpGt: ">", OpGe: ">=", OpConcat: "||", OpArrow: "->", OpArrow2: "->>",
	OpBitAnd: "&", OpBitOr: "|", OpBitXor: "#", OpShl: "<<", OpShr: ">>",
	OpRegex: "~", OpNotRegex: "!~", OpIRegex: "~*", OpNotIRegex: "!~*",
	OpContains: "@>", OpContainedBy: "<@", OpOverlap: "&&",
	OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpMod: "%", OpPow: "^",
}

// String returns the operator as written in canonical SQL.
func (op BinaryOp) String() string {
	if int(op) < len(binaryOpText) {
		return binaryOpText[op]
	}
	return "?"
}

var unaryOpText = [...]string{OpNeg: "-", OpPlus: "+", OpNot: "NOT", OpBitNot: "~"}

// String returns the operator as written in canonical SQL.
func (op UnaryOp) String() string {
	if int(op) < len(unaryOpText) {
		return unaryOpText[op]
	}
	return "?"
}

// BinaryExpr is L Op R.
type BinaryExpr struct {
	Pos
	Op   BinaryOp
	L, R Expr
}

// IsTest says what an IsExpr tests for.
type IsTest uint8

// IS tests.
const (
	IsNull IsTest = iota + 1
	IsTrue
	IsFalse
	IsUnknown
	IsDistinctFrom // X IS [NOT] DISTINCT FROM From
)

// IsExpr is X IS [NOT] NULL/TRUE/FALSE/UNKNOWN and X IS [NOT] DISTINCT FROM
// From. X ISNULL / X NOTNULL parse to the NULL form.
type IsExpr struct {
	Pos
	X    Expr
	Not  bool
	Test IsTest
	From Expr // only for IsDistinctFrom
}

// BetweenExpr is X [NOT] BETWEEN [SYMMETRIC] Lo AND Hi.
type BetweenExpr struct {
	Pos
	X         Expr
	Not       bool
	Symmetric bool
	Lo, Hi    Expr
}

// InExpr is X [NOT] IN (list) or X [NOT] IN (subquery): exactly one of List
// and Query is set.
type InExpr struct {
	Pos
	X     Expr
	Not   bool
	List  []Expr
	Query *Query
}

// LikeExpr is X [NOT] LIKE|ILIKE Pattern [ESCAPE Escape].
type LikeExpr struct {
	Pos
	X       Expr
	Not     bool
	ILike   bool
	Pattern Expr
	Escape  Expr
}

// CaseExpr is CASE [Operand] WHEN … THEN … [ELSE …] END.
type CaseExpr struct {
	Pos
	Operand Expr // nil for the searched form
	Whens   []*When
	Else    Expr
}

// When is one WHEN Cond THEN Result arm of a CASE.
type When struct {
	Pos
	Cond   Expr
	Result Expr
}

// Exists is [NOT] EXISTS (subquery); NOT EXISTS parses as UnaryExpr{OpNot}.
type Exists struct {
	Pos
	Query *Query
}

// Quantified is X op ANY|SOME|ALL (subquery) or X op ANY|ALL (array):
// exactly one of Query and Array is set. Op is a comparison operator. SOME
// is ANY.
type Quantified struct {
	Pos
	X     Expr
	Op    BinaryOp
	All   bool
	Query *Query
	Array Expr
}

// ArraySubquery is ARRAY(subquery): the subquery's one column, in its
// order, as an array ('{}' when it returns no rows).
type ArraySubquery struct {
	Pos
	Query *Query
}

// GroupingSets is a GROUP BY item that groups several ways:
// GROUPING SETS ((a, b), (a), ()), ROLLUP (a, b) or CUBE (a, b). Sets
// holds the sets for GROUPING SETS and the elements (each one or more
// expressions, (a, b) being one) for ROLLUP and CUBE.
type GroupingSets struct {
	Pos
	Kind string // "GROUPING SETS", "ROLLUP" or "CUBE"
	Sets [][]Expr
}

// AllColumns is DuckDB's ALL in ORDER BY ALL: every output column, left
// to right.
type AllColumns struct {
	Pos
}

// SubqueryExpr is a scalar subquery in an expression.
type SubqueryExpr struct {
	Pos
	Query *Query
}

// Cast is CAST(X AS Type), X::Type (the same thing) or TRY_CAST(X AS Type).
type Cast struct {
	Pos
	X    Expr
	Type *TypeName
	Try  bool
}

// Extract is EXTRACT(Field FROM X); Field is upper-case (YEAR, EPOCH, …).
type Extract struct {
	Pos
	Field string
	X     Expr
}

// FuncCall is a function call, an aggregate or a window function.
// COALESCE, NULLIF, GREATEST and LEAST are FuncCalls too.
type FuncCall struct {
	Pos
	Name     Name
	Args     []Expr // may contain *NamedArg
	Star     bool   // count(*)
	Distinct bool
	OrderBy  []*OrderItem // ordered aggregate: string_agg(x, ',' ORDER BY y)
	// WithinGroup is an ordered-set aggregate's WITHIN GROUP (ORDER BY …):
	// percentile_cont(0.5) WITHIN GROUP (ORDER BY x).
	WithinGroup []*OrderItem
	Filter      Expr        // FILTER (WHERE …)
	Over        *WindowSpec // OVER (…)
	OverName    Ident       // OVER w (a named window)
	// NoParens marks the SQL value functions written without parentheses:
	// CURRENT_DATE, CURRENT_TIMESTAMP, CURRENT_TIME, LOCALTIMESTAMP, ….
	NoParens bool
}

// NamedArg is a named function argument: name => value, or (in a table
// function) name = value.
type NamedArg struct {
	Pos
	Name  Ident
	Value Expr
}

// WindowSpec is the body of OVER (…) or of a WINDOW definition.
type WindowSpec struct {
	Pos
	Ref         Ident // an existing window this one extends; may be empty
	PartitionBy []Expr
	OrderBy     []*OrderItem
	Frame       *Frame
}

// FrameUnit is ROWS, RANGE or GROUPS.
type FrameUnit uint8

// Frame units.
const (
	FrameRows FrameUnit = iota + 1
	FrameRange
	FrameGroups
)

// Frame is a window frame. End is nil when only a start bound was written.
type Frame struct {
	Pos
	Unit       FrameUnit
	Start, End *FrameBound
	Exclude    string // "", "CURRENT ROW", "GROUP", "TIES" or "NO OTHERS"
}

// BoundKind is the kind of a frame bound.
type BoundKind uint8

// Frame bound kinds.
const (
	UnboundedPreceding BoundKind = iota + 1
	Preceding
	CurrentRow
	Following
	UnboundedFollowing
)

// FrameBound is one end of a frame; Offset is set for Preceding/Following.
type FrameBound struct {
	Pos
	Kind   BoundKind
	Offset Expr
}

// ArrayExpr is ARRAY[a, b] or DuckDB's list literal [a, b].
type ArrayExpr struct {
	Pos
	Elems []Expr
}

// Subscript is X[Index].
type Subscript struct {
	Pos
	X     Expr
	Index Expr
}

// StructExpr is DuckDB's struct literal {'a': 1, 'b': x}: named fields.
type StructExpr struct {
	Pos
	Fields []StructField
}

// StructField is one name: value of a StructExpr.
type StructField struct {
	Name  Ident
	Value Expr
}

// MapExpr is DuckDB's map literal MAP {k: v, …}.
type MapExpr struct {
	Pos
	Keys, Values []Expr
}

// FieldAccess is X.Field on a value that is not a name: (s).a, f(x).a,
// a[1].b. A dotted name (s.a) stays a ColumnRef; the binder reads it as
// a field when its prefix names a struct column rather than a table.
type FieldAccess struct {
	Pos
	X     Expr
	Field Ident
}

// Default is the DEFAULT keyword used as a value in INSERT or UPDATE SET.
type Default struct {
	Pos
}

// RowExpr is a parenthesised list of two or more expressions: (a, b).
type RowExpr struct {
	Pos
	Elems []Expr
}

func (*Literal) exprNode()         {}
func (*TypedLiteral) exprNode()    {}
func (*IntervalLiteral) exprNode() {}
func (*Param) exprNode()           {}
func (*ColumnRef) exprNode()       {}
func (*Star) exprNode()            {}
func (*UnaryExpr) exprNode()       {}
func (*BinaryExpr) exprNode()      {}
func (*IsExpr) exprNode()          {}
func (*BetweenExpr) exprNode()     {}
func (*InExpr) exprNode()          {}
func (*LikeExpr) exprNode()        {}
func (*CaseExpr) exprNode()        {}
func (*Exists) exprNode()          {}
func (*SubqueryExpr) exprNode()    {}
func (*Quantified) exprNode()      {}
func (*ArraySubquery) exprNode()   {}
func (*AllColumns) exprNode()      {}
func (*GroupingSets) exprNode()    {}
func (*Cast) exprNode()            {}
func (*Extract) exprNode()         {}
func (*FuncCall) exprNode()        {}
func (*NamedArg) exprNode()        {}
func (*ArrayExpr) exprNode()       {}
func (*Subscript) exprNode()       {}
func (*StructExpr) exprNode()      {}
func (*FieldAccess) exprNode()     {}
func (*MapExpr) exprNode()         {}
func (*Default) exprNode()         {}
func (*RowExpr) exprNode()         {}
