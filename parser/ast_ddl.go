package parser

// CreateTable is CREATE [OR REPLACE] TABLE [IF NOT EXISTS] Name followed by
// a column list (with optional PARTITIONED BY and WITH properties), AS a
// query, or CLONE a source table. Exactly one of Columns, AsQuery and Clone
// describes the shape; PartitionBy and Properties may accompany any.
type CreateTable struct {
	Pos
	OrReplace bool
	// Temporary is CREATE TEMP[ORARY] TABLE: the session's own.
	Temporary   bool
	IfNotExists bool
	Name        Name
	Columns     []*ColumnDef
	PartitionBy []*PartitionField
	Properties  []*Property
	AsQuery     *Query
	Clone       *TableName // CLONE src [FOR VERSION AS OF …]
	// Constraints are the table constraints among the columns:
	// [CONSTRAINT name] CHECK (e) | UNIQUE (cols) | PRIMARY KEY (cols).
	Constraints []*Constraint
}

// ConstraintKind is what a table constraint requires.
type ConstraintKind uint8

// Constraint kinds.
const (
	ConstraintCheck ConstraintKind = iota + 1
	ConstraintUnique
	ConstraintPrimaryKey
)

// Constraint is [CONSTRAINT Name] CHECK (Check) | UNIQUE (Columns) |
// PRIMARY KEY (Columns), a table constraint or, with Columns holding the
// column alone, a column's. Name is empty when the SQL gave none.
type Constraint struct {
	Pos
	Name    Ident
	Kind    ConstraintKind
	Check   Expr
	Columns []Ident
}

// AddConstraint is ALTER TABLE … ADD constraint.
type AddConstraint struct {
	Pos
	Constraint *Constraint
}

// DropConstraint is ALTER TABLE … DROP CONSTRAINT [IF EXISTS] name.
type DropConstraint struct {
	Pos
	IfExists bool
	Name     Ident
}

// ColumnDef is col type [NOT NULL | NULL] [DEFAULT e] [PRIMARY KEY], and
// column constraints, [CONSTRAINT name] CHECK (e) | UNIQUE | PRIMARY KEY.
type ColumnDef struct {
	Pos
	Name       Ident
	Type       *TypeName
	NotNull    bool
	Default    Expr
	PrimaryKey bool
	// Constraints are the column's CHECK, UNIQUE and PRIMARY KEY
	// constraints, each with Columns holding the column (a PRIMARY KEY
	// is also PrimaryKey).
	Constraints []*Constraint
}

// Transform is an Iceberg partition transform.
type Transform uint8

// Partition transforms. TransformIdentity is a bare column.
const (
	TransformIdentity Transform = iota + 1
	TransformYear
	TransformMonth
	TransformDay
	TransformHour
	TransformBucket
	TransformTruncate
)

var transformNames = [...]string{TransformIdentity: "identity", TransformYear: "year", TransformMonth: "month",
	TransformDay: "day", TransformHour: "hour", TransformBucket: "bucket", TransformTruncate: "truncate"}

// String returns the transform's canonical (lower-case) name.
func (t Transform) String() string {
	if int(t) < len(transformNames) && t != 0 {
		return transformNames[t]
	}
	return "?"
}

// PartitionField is one entry of PARTITIONED BY: a column, a time
// transform of a column, or bucket(N, col) / truncate(W, col) with Param N/W.
type PartitionField struct {
	Pos
	Transform Transform
	Column    Ident
	Param     int
}

// Property is one key = value of WITH (…) or ALTER TABLE … SET (…). Key is
// the text of the identifier, quoted identifier or string literal.
type Property struct {
	Pos
	Key   string
	Value Expr
}

// DropTable is DROP TABLE [IF EXISTS] name, … [CASCADE|RESTRICT].
type DropTable struct {
	Pos
	IfExists bool
	Names    []Name
	Cascade  bool
}

// CreateSchema is CREATE SCHEMA [IF NOT EXISTS] name.
type CreateSchema struct {
	Pos
	IfNotExists bool
	Name        Name
}

// DropSchema is DROP SCHEMA [IF EXISTS] name [CASCADE|RESTRICT].
type DropSchema struct {
	Pos
	IfExists bool
	Name     Name
	Cascade  bool
}

// AlterTable is ALTER TABLE [IF EXISTS] Name action, …. EXECUTE and RENAME TO
// stand alone; column actions may be combined with commas.
type AlterTable struct {
	Pos
	IfExists bool
	Name     Name
	Actions  []AlterAction
}

// AlterAction is one action of ALTER TABLE.
type AlterAction interface {
	Node
	alterAction()
}

// AddColumn is ADD [COLUMN] [IF NOT EXISTS] coldef.
type AddColumn struct {
	Pos
	IfNotExists bool
	// Parent is the path of the struct column the new field goes in
	// (ADD COLUMN s.inner.c INT); empty for a column of the table.
	Parent []Ident
	Column *ColumnDef
}

// DropColumn is DROP [COLUMN] [IF EXISTS] name.
type DropColumn struct {
	Pos
	IfExists bool
	Parent   []Ident // the struct path of a nested field (s.c)
	Name     Ident
}

// RenameColumn is RENAME [COLUMN] Old TO New.
type RenameColumn struct {
	Pos
	Parent   []Ident // the struct path of a nested field (s.a TO b)
	Old, New Ident
}

// AlterColumnType is ALTER [COLUMN] col [SET DATA] TYPE type.
type AlterColumnType struct {
	Pos
	Parent []Ident // the struct path of a nested field (s.a TYPE BIGINT)
	Column Ident
	Type   *TypeName
}

// AlterColumnNotNull is ALTER [COLUMN] col SET NOT NULL (Set) or DROP NOT NULL.
type AlterColumnNotNull struct {
	Pos
	Column Ident
	Set    bool
}

// AlterColumnDefault is ALTER [COLUMN] col SET DEFAULT e, or with a nil
// Default, DROP DEFAULT.
type AlterColumnDefault struct {
	Pos
	Column  Ident
	Default Expr
}

// SetProperties is SET (key = value, …).
type SetProperties struct {
	Pos
	Properties []*Property
}

// UnsetProperties is Spark's UNSET TBLPROPERTIES [IF EXISTS] ('key', …).
type UnsetProperties struct {
	Pos
	IfExists bool
	Keys     []string
}

// AddPartitionField is Spark's ADD PARTITION FIELD field [AS name].
type AddPartitionField struct {
	Pos
	Field *PartitionField
	Name  Ident // empty: Iceberg's default name
}

// DropPartitionField is Spark's DROP PARTITION FIELD field, where a bare
// column may also be a partition field's name.
type DropPartitionField struct {
	Pos
	Field *PartitionField
}

// ReplacePartitionField is Spark's REPLACE PARTITION FIELD old WITH new
// [AS name].
type ReplacePartitionField struct {
	Pos
	Old, New *PartitionField
	Name     Ident
}

// WriteOrder is Spark's WRITE [LOCALLY] ORDERED BY keys, WRITE
// DISTRIBUTED BY PARTITION [LOCALLY ORDERED BY keys], or WRITE UNORDERED.
type WriteOrder struct {
	Pos
	Unordered   bool
	Distributed bool // DISTRIBUTED BY PARTITION
	Locally     bool // LOCALLY ORDERED BY
	Keys        []*WriteOrderKey
}

// WriteOrderKey is one key of WRITE … ORDERED BY: a column or a
// transform of one, with its direction and null order.
type WriteOrderKey struct {
	Field      *PartitionField
	Desc       bool
	NullsSet   bool // NULLS FIRST or LAST was written
	NullsFirst bool
}

// RefAction is Spark's branch and tag DDL: CREATE [OR REPLACE] BRANCH|TAG
// [IF NOT EXISTS] name, or REPLACE BRANCH|TAG name, each with [AS OF
// VERSION id] [RETAIN n DAYS|HOURS|MINUTES] and, for a branch, [WITH
// SNAPSHOT RETENTION [n SNAPSHOTS] [n DAYS|HOURS|MINUTES]]; or DROP
// BRANCH|TAG [IF EXISTS] name.
type RefAction struct {
	Pos
	Drop        bool
	Create      bool // CREATE, CREATE OR REPLACE
	Replace     bool // REPLACE, CREATE OR REPLACE
	Tag         bool
	IfExists    bool // DROP … IF EXISTS
	IfNotExists bool
	Name        Ident
	// Version is AS OF VERSION's snapshot id; nil: the current snapshot.
	Version *int64
	// Retain is RETAIN's max age of the ref itself.
	Retain *Duration
	// MinSnapshots and MaxSnapshotAge are WITH SNAPSHOT RETENTION's.
	MinSnapshots   *int64
	MaxSnapshotAge *Duration
}

// Duration is n DAYS, HOURS or MINUTES in ref retention clauses.
type Duration struct {
	N    int64
	Unit string // DAYS, HOURS or MINUTES
}

// CreateView is CREATE [OR REPLACE] VIEW [IF NOT EXISTS] name [(cols)] AS
// query.
type CreateView struct {
	Pos
	OrReplace   bool
	IfNotExists bool
	Name        Name
	Columns     []Ident
	Query       *Query
}

// DropView is DROP VIEW [IF EXISTS] name [CASCADE|RESTRICT].
type DropView struct {
	Pos
	IfExists bool
	Name     Name
	Cascade  bool
}

// RenameTable is RENAME TO new_name.
type RenameTable struct {
	Pos
	NewName Name
}

// ExecuteProcedure is Trino's EXECUTE name(arg => value, …), used for
// compact, expire_snapshots and remove_orphan_files. Args may contain
// *NamedArg; the parentheses are optional when there are no arguments.
type ExecuteProcedure struct {
	Pos
	Procedure Ident
	Args      []Expr
}

func (*CreateTable) stmtNode()  {}
func (*DropTable) stmtNode()    {}
func (*CreateSchema) stmtNode() {}
func (*DropSchema) stmtNode()   {}
func (*AlterTable) stmtNode()   {}
func (*CreateView) stmtNode()   {}
func (*DropView) stmtNode()     {}

func (*AddColumn) alterAction()             {}
func (*AddConstraint) alterAction()         {}
func (*DropConstraint) alterAction()        {}
func (*DropColumn) alterAction()            {}
func (*RenameColumn) alterAction()          {}
func (*AlterColumnDefault) alterAction()    {}
func (*AlterColumnType) alterAction()       {}
func (*AlterColumnNotNull) alterAction()    {}
func (*SetProperties) alterAction()         {}
func (*UnsetProperties) alterAction()       {}
func (*AddPartitionField) alterAction()     {}
func (*DropPartitionField) alterAction()    {}
func (*ReplacePartitionField) alterAction() {}
func (*WriteOrder) alterAction()            {}
func (*RefAction) alterAction()             {}
func (*RenameTable) alterAction()           {}
func (*ExecuteProcedure) alterAction()      {}
