package parser

// Merge is MERGE INTO Target [AS TargetAlias] USING Source ON On
// WHEN … [RETURNING …].
//
// Clauses are kept in written order because the MERGE engine tries them in
// that order and the first applicable one wins. The parser accepts some
// shapes the engine refuses (WHEN NOT MATCHED BY SOURCE THEN INSERT) so the
// refusal can name its reason; it rejects only DELETE and UPDATE in a
// WHEN NOT MATCHED [BY TARGET] clause, which have no row to act on.
type Merge struct {
	Pos
	With *With
	// SchemaEvolution is Spark's MERGE WITH SCHEMA EVOLUTION INTO: source
	// columns the target lacks, that UPDATE SET * or INSERT * would
	// write, are added to it, and narrower target columns widened, in the
	// same commit.
	SchemaEvolution bool
	Target          Name
	TargetAlias     Ident
	Source          TableExpr // *TableName, *SubqueryRef (incl. VALUES) or *TableFunc
	On              Expr
	Clauses         []*MergeClause
	Returning       []*SelectItem
}

// MatchKind is the category of a WHEN clause.
type MatchKind uint8

// MERGE clause categories. WHEN NOT MATCHED and WHEN NOT MATCHED BY TARGET
// are the same category.
const (
	Matched MatchKind = iota + 1
	NotMatchedByTarget
	NotMatchedBySource
)

// String returns the clause head as written canonically.
func (k MatchKind) String() string {
	switch k {
	case Matched:
		return "MATCHED"
	case NotMatchedByTarget:
		return "NOT MATCHED"
	case NotMatchedBySource:
		return "NOT MATCHED BY SOURCE"
	}
	return "?"
}

// MergeClause is WHEN Kind [AND Cond] THEN Action.
type MergeClause struct {
	Pos
	Kind   MatchKind
	Cond   Expr // nil when no AND predicate
	Action MergeAction
}

// MergeAction is *MergeUpdate, *MergeDelete, *MergeInsert or *MergeDoNothing.
type MergeAction interface {
	Node
	mergeAction()
}

// MergeUpdate is UPDATE SET col = e, … or UPDATE SET * [EXCEPT (cols)]
// (by column name; DuckDB's UPDATE BY NAME is the same).
type MergeUpdate struct {
	Pos
	Set  []*SetClause
	Star bool
	// Except are the target columns UPDATE SET * leaves alone.
	Except []Ident
}

// MergeDelete is DELETE.
type MergeDelete struct {
	Pos
}

// MergeInsert is INSERT [(Columns)] VALUES (Values), INSERT * [EXCEPT
// (cols)] (by column name; DuckDB's INSERT BY NAME is the same) or INSERT
// DEFAULT VALUES. Columns empty with Values set means all target columns
// in order.
type MergeInsert struct {
	Pos
	Columns       []Ident
	Values        []Expr
	Star          bool
	DefaultValues bool
	// Except are the target columns INSERT * leaves NULL.
	Except []Ident
}

// MergeDoNothing is DO NOTHING.
type MergeDoNothing struct {
	Pos
}

func (*Merge) stmtNode()             {}
func (*MergeUpdate) mergeAction()    {}
func (*MergeDelete) mergeAction()    {}
func (*MergeInsert) mergeAction()    {}
func (*MergeDoNothing) mergeAction() {}
