package parser

// Begin is BEGIN [TRANSACTION|WORK] or START TRANSACTION.
type Begin struct {
	Pos
	// Isolation is the ISOLATION LEVEL asked for, lower case ("read
	// committed", "serializable"), or "".
	Isolation string
	// ReadOnly is READ ONLY.
	ReadOnly bool
}

// Commit is COMMIT [TRANSACTION|WORK] or END.
type Commit struct{ Pos }

// Rollback is ROLLBACK [TRANSACTION|WORK] or ABORT.
type Rollback struct{ Pos }

// Explain is EXPLAIN [ANALYZE] statement.
type Explain struct {
	Pos
	Analyze bool
	Stmt    Stmt
}

// ShowTables is SHOW TABLES [FROM|IN schema], or with Views SHOW VIEWS.
type ShowTables struct {
	Pos
	From  Name
	Views bool
}

// Show is SHOW name (a setting) or SHOW ALL.
type Show struct {
	Pos
	Name Name
	All  bool
}

// ShowTblProperties is Spark's SHOW TBLPROPERTIES t [('key')].
type ShowTblProperties struct {
	Pos
	Table Name
	Key   string // "" for every property
}

// ShowCreateTable is SHOW CREATE TABLE t.
type ShowCreateTable struct {
	Pos
	Table Name
}

// Call is CALL [catalog.][system.]procedure(args), Spark's way to run a
// procedure; Args may contain *NamedArg (name => value).
type Call struct {
	Pos
	Name Name
	Args []Expr
}

// Describe is DESCRIBE t or DESC t.
type Describe struct {
	Pos
	Table Name
}

// CopyOption is one option of COPY's parenthesised list: FORMAT csv,
// HEADER, DELIMITER ','. Name is upper-case; Value is nil when omitted.
type CopyOption struct {
	Pos
	Name  string
	Value Expr
}

// Copy is COPY Table [(Columns)] FROM|TO 'File' [(options)],
// COPY (Query) TO 'File' [(options)] or COPY (INSERT|UPDATE|DELETE|MERGE
// … RETURNING …) TO 'File' [(options)]. Stdio is FROM STDIN or TO STDOUT,
// which only a client connection (the PostgreSQL protocol) can run.
type Copy struct {
	Pos
	Table   Name
	Columns []Ident
	Query   *Query
	// DML is the data-modifying statement whose RETURNING rows COPY
	// writes (Query and Table are then empty).
	DML     Stmt
	To      bool // TO (export) rather than FROM (import)
	File    string
	Stdio   bool
	Options []*CopyOption
}

// SetVar is SET [LOCAL|SESSION] name = value, … (or TO). A value of DEFAULT
// is a *Default.
type SetVar struct {
	Pos
	Local  bool
	Name   Name
	Values []Expr
}

func (*Begin) stmtNode()             {}
func (*Commit) stmtNode()            {}
func (*Rollback) stmtNode()          {}
func (*Explain) stmtNode()           {}
func (*ShowTables) stmtNode()        {}
func (*Show) stmtNode()              {}
func (*ShowTblProperties) stmtNode() {}
func (*ShowCreateTable) stmtNode()   {}
func (*Call) stmtNode()              {}
func (*Describe) stmtNode()          {}
func (*Copy) stmtNode()              {}
func (*SetVar) stmtNode()            {}
