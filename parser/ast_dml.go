package parser

// Insert is INSERT INTO Table [AS alias] [(Columns)] {Source | DEFAULT
// VALUES} [RETURNING …]. Source is a *Query whose body is a *Values for
// INSERT … VALUES.
type Insert struct {
	Pos
	With          *With
	Table         Name
	Alias         Ident
	Columns       []Ident
	ByName        bool // DuckDB INSERT INTO t BY NAME SELECT …
	Source        *Query
	DefaultValues bool
	OnConflict    *OnConflict
	Returning     []*SelectItem
}

// OnConflict is INSERT's ON CONFLICT [(cols) | ON CONSTRAINT name]
// DO NOTHING | DO UPDATE SET … [WHERE …]. EXCLUDED names the row proposed
// for insertion in SET and WHERE.
type OnConflict struct {
	Pos
	Columns    []Ident // the conflict target, or none
	Constraint Ident   // ON CONSTRAINT name
	DoNothing  bool
	Set        []*SetClause
	Where      Expr
}

// SetClause is one col = value of UPDATE … SET or MERGE … UPDATE SET.
// Column may be qualified (t.col) because some engines accept it in MERGE;
// the binder decides whether the qualifier names the target.
type SetClause struct {
	Pos
	Column Name
	Value  Expr // may be *Default
}

// Update is UPDATE Table [AS a] SET … [FROM …] [WHERE …] [RETURNING …].
type Update struct {
	Pos
	With      *With
	Table     *TableName
	Set       []*SetClause
	From      []TableExpr
	Where     Expr
	Returning []*SelectItem
}

// Delete is DELETE FROM Table [AS a] [USING …] [WHERE …] [RETURNING …].
type Delete struct {
	Pos
	With      *With
	Table     *TableName
	Using     []TableExpr
	Where     Expr
	Returning []*SelectItem
}

// Truncate is TRUNCATE [TABLE] t, ….
type Truncate struct {
	Pos
	Tables []Name
}

func (*Insert) stmtNode()   {}
func (*Update) stmtNode()   {}
func (*Delete) stmtNode()   {}
func (*Truncate) stmtNode() {}

// HasReturning reports whether st is an INSERT, UPDATE, DELETE or MERGE
// with a RETURNING list.
func HasReturning(st Stmt) bool {
	switch x := st.(type) {
	case *Insert:
		return len(x.Returning) > 0
	case *Update:
		return len(x.Returning) > 0
	case *Delete:
		return len(x.Returning) > 0
	case *Merge:
		return len(x.Returning) > 0
	}
	return false
}
