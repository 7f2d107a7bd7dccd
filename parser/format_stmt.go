package parser

import (
	"slices"
	"strconv"
	"strings"
)

func (w *writer) returning(items []*SelectItem) {
	if items != nil {
		w.WriteString(" RETURNING ")
		w.selectItems(items)
	}
}

func (w *writer) with(x *With) {
	if x != nil {
		x.format(w)
		w.WriteByte(' ')
	}
}

func (x *Insert) format(w *writer) {
	w.with(x.With)
	w.WriteString("INSERT INTO ")
	w.name(x.Table)
	if !x.Alias.Empty() {
		w.WriteString(" AS ")
		w.ident(x.Alias)
	}
	if x.Columns != nil {
		w.WriteString(" (")
		w.idents(x.Columns)
		w.WriteByte(')')
	}
	if x.ByName {
		w.WriteString(" BY NAME")
	}
	if x.DefaultValues {
		w.WriteString(" DEFAULT VALUES")
	} else if x.Source != nil {
		w.WriteByte(' ')
		x.Source.format(w)
	}
	if oc := x.OnConflict; oc != nil {
		w.WriteString(" ON CONFLICT")
		switch {
		case len(oc.Columns) > 0:
			w.WriteString(" (")
			w.idents(oc.Columns)
			w.WriteByte(')')
		case !oc.Constraint.Empty():
			w.WriteString(" ON CONSTRAINT ")
			w.ident(oc.Constraint)
		}
		if oc.DoNothing {
			w.WriteString(" DO NOTHING")
		} else {
			w.WriteString(" DO UPDATE SET ")
			w.setList(oc.Set)
			if oc.Where != nil {
				w.WriteString(" WHERE ")
				oc.Where.format(w)
			}
		}
	}
	w.returning(x.Returning)
}

func (w *writer) setList(list []*SetClause) {
	for i, s := range list {
		if i > 0 {
			w.WriteString(", ")
		}
		s.format(w)
	}
}

func (x *SetClause) format(w *writer) {
	w.name(x.Column)
	w.WriteString(" = ")
	x.Value.format(w)
}

func (x *Update) format(w *writer) {
	w.with(x.With)
	w.WriteString("UPDATE ")
	x.Table.format(w)
	w.WriteString(" SET ")
	w.setList(x.Set)
	if x.From != nil {
		w.WriteString(" FROM ")
		w.tables(x.From)
	}
	if x.Where != nil {
		w.WriteString(" WHERE ")
		x.Where.format(w)
	}
	w.returning(x.Returning)
}

func (x *Delete) format(w *writer) {
	w.with(x.With)
	w.WriteString("DELETE FROM ")
	x.Table.format(w)
	if x.Using != nil {
		w.WriteString(" USING ")
		w.tables(x.Using)
	}
	if x.Where != nil {
		w.WriteString(" WHERE ")
		x.Where.format(w)
	}
	w.returning(x.Returning)
}

func (x *Truncate) format(w *writer) {
	w.WriteString("TRUNCATE TABLE ")
	for i, n := range x.Tables {
		if i > 0 {
			w.WriteString(", ")
		}
		w.name(n)
	}
}

func (x *Merge) format(w *writer) {
	w.with(x.With)
	if x.SchemaEvolution {
		w.WriteString("MERGE WITH SCHEMA EVOLUTION INTO ")
	} else {
		w.WriteString("MERGE INTO ")
	}
	w.name(x.Target)
	if !x.TargetAlias.Empty() {
		w.WriteString(" AS ")
		w.ident(x.TargetAlias)
	}
	w.WriteString(" USING ")
	x.Source.format(w)
	w.WriteString(" ON ")
	x.On.format(w)
	for _, c := range x.Clauses {
		w.WriteByte(' ')
		c.format(w)
	}
	w.returning(x.Returning)
}

func (x *MergeClause) format(w *writer) {
	w.WriteString("WHEN ")
	w.WriteString(x.Kind.String())
	if x.Cond != nil {
		w.WriteString(" AND ")
		x.Cond.format(w)
	}
	w.WriteString(" THEN ")
	x.Action.format(w)
}

func (x *MergeUpdate) format(w *writer) {
	if x.Star {
		w.WriteString("UPDATE SET *")
		w.except(x.Except)
		return
	}
	w.WriteString("UPDATE SET ")
	w.setList(x.Set)
}

func (x *MergeDelete) format(w *writer) { w.WriteString("DELETE") }

func (x *MergeInsert) format(w *writer) {
	switch {
	case x.Star:
		w.WriteString("INSERT *")
		w.except(x.Except)
	case x.DefaultValues:
		w.WriteString("INSERT DEFAULT VALUES")
	default:
		w.WriteString("INSERT ")
		if x.Columns != nil {
			w.WriteByte('(')
			w.idents(x.Columns)
			w.WriteString(") ")
		}
		w.WriteString("VALUES (")
		w.exprs(x.Values)
		w.WriteByte(')')
	}
}

func (x *MergeDoNothing) format(w *writer) { w.WriteString("DO NOTHING") }

func (x *CreateTable) format(w *writer) {
	w.WriteString("CREATE ")
	if x.OrReplace {
		w.WriteString("OR REPLACE ")
	}
	if x.Temporary {
		w.WriteString("TEMPORARY ")
	}
	w.WriteString("TABLE ")
	if x.IfNotExists {
		w.WriteString("IF NOT EXISTS ")
	}
	w.name(x.Name)
	if x.Clone != nil {
		w.WriteString(" CLONE ")
		x.Clone.format(w)
		return
	}
	if x.Columns != nil {
		w.WriteString(" (")
		for i, c := range x.Columns {
			if i > 0 {
				w.WriteString(", ")
			}
			c.format(w)
		}
		for _, c := range x.Constraints {
			w.WriteString(", ")
			c.format(w)
		}
		w.WriteByte(')')
	}
	if x.PartitionBy != nil {
		w.WriteString(" PARTITIONED BY (")
		for i, f := range x.PartitionBy {
			if i > 0 {
				w.WriteString(", ")
			}
			f.format(w)
		}
		w.WriteByte(')')
	}
	if x.Properties != nil {
		w.WriteString(" WITH ")
		w.properties(x.Properties)
	}
	if x.AsQuery != nil {
		w.WriteString(" AS ")
		x.AsQuery.format(w)
	}
}

func (x *ColumnDef) format(w *writer) {
	w.ident(x.Name)
	w.WriteByte(' ')
	w.typeName(x.Type)
	if x.NotNull {
		w.WriteString(" NOT NULL")
	}
	if x.Default != nil {
		w.WriteString(" DEFAULT ")
		w.exprP(x.Default, precOther)
	}
	if x.PrimaryKey && !slices.ContainsFunc(x.Constraints, func(c *Constraint) bool { return c.Kind == ConstraintPrimaryKey }) {
		w.WriteString(" PRIMARY KEY")
	}
	for _, c := range x.Constraints {
		w.WriteByte(' ')
		c.formatAs(w, true)
	}
}

func (x *Constraint) format(w *writer) { x.formatAs(w, false) }

// formatAs writes the constraint, without its column list when it is a
// column's.
func (x *Constraint) formatAs(w *writer, column bool) {
	if x.Name.Name != "" {
		w.WriteString("CONSTRAINT ")
		w.ident(x.Name)
		w.WriteByte(' ')
	}
	switch x.Kind {
	case ConstraintCheck:
		w.WriteString("CHECK (")
		x.Check.format(w)
		w.WriteByte(')')
		return
	case ConstraintUnique:
		w.WriteString("UNIQUE")
	case ConstraintPrimaryKey:
		w.WriteString("PRIMARY KEY")
	}
	if !column {
		w.WriteString(" (")
		w.idents(x.Columns)
		w.WriteByte(')')
	}
}

func (x *AddConstraint) format(w *writer) {
	w.WriteString("ADD ")
	x.Constraint.format(w)
}

func (x *DropConstraint) format(w *writer) {
	w.WriteString("DROP CONSTRAINT ")
	if x.IfExists {
		w.WriteString("IF EXISTS ")
	}
	w.ident(x.Name)
}

func (x *PartitionField) format(w *writer) {
	switch x.Transform {
	case TransformIdentity:
		w.ident(x.Column)
	case TransformBucket, TransformTruncate:
		w.s(x.Transform.String(), "(", itoa(x.Param), ", ")
		w.ident(x.Column)
		w.WriteByte(')')
	default:
		w.s(x.Transform.String(), "(")
		w.ident(x.Column)
		w.WriteByte(')')
	}
}

func (w *writer) properties(list []*Property) {
	w.WriteByte('(')
	for i, pr := range list {
		if i > 0 {
			w.WriteString(", ")
		}
		pr.format(w)
	}
	w.WriteByte(')')
}

func (x *Property) format(w *writer) {
	w.propertyKey(x.Key)
	w.WriteString(" = ")
	x.Value.format(w)
}

func (x *DropTable) format(w *writer) {
	w.WriteString("DROP TABLE ")
	if x.IfExists {
		w.WriteString("IF EXISTS ")
	}
	for i, n := range x.Names {
		if i > 0 {
			w.WriteString(", ")
		}
		w.name(n)
	}
	if x.Cascade {
		w.WriteString(" CASCADE")
	}
}

func (x *CreateSchema) format(w *writer) {
	w.WriteString("CREATE SCHEMA ")
	if x.IfNotExists {
		w.WriteString("IF NOT EXISTS ")
	}
	w.name(x.Name)
}

func (x *DropSchema) format(w *writer) {
	w.WriteString("DROP SCHEMA ")
	if x.IfExists {
		w.WriteString("IF EXISTS ")
	}
	w.name(x.Name)
	if x.Cascade {
		w.WriteString(" CASCADE")
	}
}

func (x *AlterTable) format(w *writer) {
	w.WriteString("ALTER TABLE ")
	if x.IfExists {
		w.WriteString("IF EXISTS ")
	}
	w.name(x.Name)
	for i, a := range x.Actions {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteByte(' ')
		a.format(w)
	}
}

// path writes a struct path and the dot after it (nothing when empty).
func (w *writer) path(parent []Ident) {
	for _, id := range parent {
		w.ident(id)
		w.WriteByte('.')
	}
}

func (x *AddColumn) format(w *writer) {
	w.WriteString("ADD COLUMN ")
	if x.IfNotExists {
		w.WriteString("IF NOT EXISTS ")
	}
	w.path(x.Parent)
	x.Column.format(w)
}

func (x *DropColumn) format(w *writer) {
	w.WriteString("DROP COLUMN ")
	if x.IfExists {
		w.WriteString("IF EXISTS ")
	}
	w.path(x.Parent)
	w.ident(x.Name)
}

func (x *RenameColumn) format(w *writer) {
	w.WriteString("RENAME COLUMN ")
	w.path(x.Parent)
	w.ident(x.Old)
	w.WriteString(" TO ")
	w.ident(x.New)
}

func (x *AlterColumnType) format(w *writer) {
	w.WriteString("ALTER COLUMN ")
	w.path(x.Parent)
	w.ident(x.Column)
	w.WriteString(" TYPE ")
	w.typeName(x.Type)
}

func (x *AlterColumnNotNull) format(w *writer) {
	w.WriteString("ALTER COLUMN ")
	w.ident(x.Column)
	if x.Set {
		w.WriteString(" SET NOT NULL")
	} else {
		w.WriteString(" DROP NOT NULL")
	}
}

func (x *AlterColumnDefault) format(w *writer) {
	w.WriteString("ALTER COLUMN ")
	w.ident(x.Column)
	if x.Default == nil {
		w.WriteString(" DROP DEFAULT")
		return
	}
	w.WriteString(" SET DEFAULT ")
	x.Default.format(w)
}

func (x *SetProperties) format(w *writer) {
	w.WriteString("SET ")
	w.properties(x.Properties)
}

func (x *UnsetProperties) format(w *writer) {
	w.WriteString("UNSET TBLPROPERTIES ")
	if x.IfExists {
		w.WriteString("IF EXISTS ")
	}
	w.WriteByte('(')
	for i, k := range x.Keys {
		if i > 0 {
			w.WriteString(", ")
		}
		w.stringLit(k)
	}
	w.WriteByte(')')
}

func (x *AddPartitionField) format(w *writer) {
	w.WriteString("ADD PARTITION FIELD ")
	x.Field.format(w)
	if !x.Name.Empty() {
		w.WriteString(" AS ")
		w.ident(x.Name)
	}
}

func (x *DropPartitionField) format(w *writer) {
	w.WriteString("DROP PARTITION FIELD ")
	x.Field.format(w)
}

func (x *ReplacePartitionField) format(w *writer) {
	w.WriteString("REPLACE PARTITION FIELD ")
	x.Old.format(w)
	w.WriteString(" WITH ")
	x.New.format(w)
	if !x.Name.Empty() {
		w.WriteString(" AS ")
		w.ident(x.Name)
	}
}

func (x *RefAction) format(w *writer) {
	switch {
	case x.Drop:
		w.WriteString("DROP ")
	case x.Create && x.Replace:
		w.WriteString("CREATE OR REPLACE ")
	case x.Create:
		w.WriteString("CREATE ")
	default:
		w.WriteString("REPLACE ")
	}
	if x.Tag {
		w.WriteString("TAG ")
	} else {
		w.WriteString("BRANCH ")
	}
	if x.IfExists {
		w.WriteString("IF EXISTS ")
	}
	if x.IfNotExists {
		w.WriteString("IF NOT EXISTS ")
	}
	w.ident(x.Name)
	if x.Version != nil {
		w.WriteString(" AS OF VERSION ")
		w.WriteString(strconv.FormatInt(*x.Version, 10))
	}
	if x.Retain != nil {
		w.WriteString(" RETAIN ")
		x.Retain.format(w)
	}
	if x.MinSnapshots != nil || x.MaxSnapshotAge != nil {
		w.WriteString(" WITH SNAPSHOT RETENTION")
		if x.MinSnapshots != nil {
			w.WriteString(" ")
			w.WriteString(strconv.FormatInt(*x.MinSnapshots, 10))
			w.WriteString(" SNAPSHOTS")
		}
		if x.MaxSnapshotAge != nil {
			w.WriteString(" ")
			x.MaxSnapshotAge.format(w)
		}
	}
}

func (d *Duration) format(w *writer) {
	w.WriteString(strconv.FormatInt(d.N, 10))
	w.WriteString(" ")
	w.WriteString(d.Unit)
}

func (x *WriteOrder) format(w *writer) {
	w.WriteString("WRITE ")
	switch {
	case x.Unordered:
		w.WriteString("UNORDERED")
		return
	case x.Distributed:
		w.WriteString("DISTRIBUTED BY PARTITION")
		if !x.Locally {
			return
		}
		w.WriteString(" LOCALLY ORDERED BY ")
	case x.Locally:
		w.WriteString("LOCALLY ORDERED BY ")
	default:
		w.WriteString("ORDERED BY ")
	}
	for i, k := range x.Keys {
		if i > 0 {
			w.WriteString(", ")
		}
		k.Field.format(w)
		if k.Desc {
			w.WriteString(" DESC")
		}
		if k.NullsSet {
			if k.NullsFirst {
				w.WriteString(" NULLS FIRST")
			} else {
				w.WriteString(" NULLS LAST")
			}
		}
	}
}

func (x *ShowTblProperties) format(w *writer) {
	w.WriteString("SHOW TBLPROPERTIES ")
	w.name(x.Table)
	if x.Key != "" {
		w.WriteString(" (")
		w.stringLit(x.Key)
		w.WriteByte(')')
	}
}

func (x *ShowCreateTable) format(w *writer) {
	w.WriteString("SHOW CREATE TABLE ")
	w.name(x.Table)
}

func (x *RenameTable) format(w *writer) {
	w.WriteString("RENAME TO ")
	w.name(x.NewName)
}

func (x *ExecuteProcedure) format(w *writer) {
	w.WriteString("EXECUTE ")
	w.ident(x.Procedure)
	if x.Args != nil {
		w.WriteByte('(')
		w.exprs(x.Args)
		w.WriteByte(')')
	}
}

func (x *Call) format(w *writer) {
	w.WriteString("CALL ")
	w.name(x.Name)
	w.WriteByte('(')
	if x.Args != nil {
		w.exprs(x.Args)
	}
	w.WriteByte(')')
}

func (x *Begin) format(w *writer) {
	w.WriteString("BEGIN")
	sep := " "
	if x.Isolation != "" {
		w.WriteString(" ISOLATION LEVEL " + strings.ToUpper(x.Isolation))
		sep = ", "
	}
	if x.ReadOnly {
		w.WriteString(sep + "READ ONLY")
	}
}
func (x *Commit) format(w *writer)   { w.WriteString("COMMIT") }
func (x *Rollback) format(w *writer) { w.WriteString("ROLLBACK") }

func (x *Explain) format(w *writer) {
	w.WriteString("EXPLAIN ")
	if x.Analyze {
		w.WriteString("ANALYZE ")
	}
	x.Stmt.format(w)
}

func (x *CreateView) format(w *writer) {
	w.WriteString("CREATE ")
	if x.OrReplace {
		w.WriteString("OR REPLACE ")
	}
	w.WriteString("VIEW ")
	if x.IfNotExists {
		w.WriteString("IF NOT EXISTS ")
	}
	w.name(x.Name)
	if len(x.Columns) > 0 {
		w.WriteString(" (")
		w.idents(x.Columns)
		w.WriteByte(')')
	}
	w.WriteString(" AS ")
	x.Query.format(w)
}

func (x *DropView) format(w *writer) {
	w.WriteString("DROP VIEW ")
	if x.IfExists {
		w.WriteString("IF EXISTS ")
	}
	w.name(x.Name)
	if x.Cascade {
		w.WriteString(" CASCADE")
	}
}

func (x *ShowTables) format(w *writer) {
	if x.Views {
		w.WriteString("SHOW VIEWS")
		if x.From != nil {
			w.WriteString(" FROM ")
			w.name(x.From)
		}
		return
	}
	w.WriteString("SHOW TABLES")
	if x.From != nil {
		w.WriteString(" FROM ")
		w.name(x.From)
	}
}

func (x *Show) format(w *writer) {
	if x.All {
		w.WriteString("SHOW ALL")
		return
	}
	w.WriteString("SHOW ")
	w.name(x.Name)
}

func (x *Describe) format(w *writer) {
	w.WriteString("DESCRIBE ")
	w.name(x.Table)
}

func (x *Copy) format(w *writer) {
	w.WriteString("COPY ")
	switch {
	case x.DML != nil:
		w.WriteByte('(')
		x.DML.format(w)
		w.WriteByte(')')
	case x.Query != nil:
		w.WriteByte('(')
		x.Query.format(w)
		w.WriteByte(')')
	default:
		w.name(x.Table)
		if x.Columns != nil {
			w.WriteString(" (")
			w.idents(x.Columns)
			w.WriteByte(')')
		}
	}
	if x.To {
		w.WriteString(" TO ")
	} else {
		w.WriteString(" FROM ")
	}
	switch {
	case x.Stdio && x.To:
		w.WriteString("STDOUT")
	case x.Stdio:
		w.WriteString("STDIN")
	default:
		w.stringLit(x.File)
	}
	if x.Options != nil {
		w.WriteString(" (")
		for i, o := range x.Options {
			if i > 0 {
				w.WriteString(", ")
			}
			o.format(w)
		}
		w.WriteByte(')')
	}
}

func (x *CopyOption) format(w *writer) {
	w.WriteString(x.Name)
	if x.Value != nil {
		w.WriteByte(' ')
		x.Value.format(w)
	}
}

func (x *SetVar) format(w *writer) {
	w.WriteString("SET ")
	if x.Local {
		w.WriteString("LOCAL ")
	}
	w.name(x.Name)
	w.WriteString(" = ")
	w.exprs(x.Values)
}

func (x *Insert) String() string                { return str(x) }
func (x *SetClause) String() string             { return str(x) }
func (x *Update) String() string                { return str(x) }
func (x *Delete) String() string                { return str(x) }
func (x *Truncate) String() string              { return str(x) }
func (x *Merge) String() string                 { return str(x) }
func (x *MergeClause) String() string           { return str(x) }
func (x *MergeUpdate) String() string           { return str(x) }
func (x *MergeDelete) String() string           { return str(x) }
func (x *MergeInsert) String() string           { return str(x) }
func (x *MergeDoNothing) String() string        { return str(x) }
func (x *CreateTable) String() string           { return str(x) }
func (x *ColumnDef) String() string             { return str(x) }
func (x *Constraint) String() string            { return str(x) }
func (x *AddConstraint) String() string         { return str(x) }
func (x *DropConstraint) String() string        { return str(x) }
func (x *PartitionField) String() string        { return str(x) }
func (x *Property) String() string              { return str(x) }
func (x *DropTable) String() string             { return str(x) }
func (x *CreateSchema) String() string          { return str(x) }
func (x *DropSchema) String() string            { return str(x) }
func (x *AlterTable) String() string            { return str(x) }
func (x *AddColumn) String() string             { return str(x) }
func (x *DropColumn) String() string            { return str(x) }
func (x *RenameColumn) String() string          { return str(x) }
func (x *AlterColumnType) String() string       { return str(x) }
func (x *AlterColumnNotNull) String() string    { return str(x) }
func (x *AlterColumnDefault) String() string    { return str(x) }
func (x *SetProperties) String() string         { return str(x) }
func (x *UnsetProperties) String() string       { return str(x) }
func (x *AddPartitionField) String() string     { return str(x) }
func (x *DropPartitionField) String() string    { return str(x) }
func (x *ReplacePartitionField) String() string { return str(x) }
func (x *WriteOrder) String() string            { return str(x) }
func (x *RefAction) String() string             { return str(x) }
func (x *ShowTblProperties) String() string     { return str(x) }
func (x *ShowCreateTable) String() string       { return str(x) }
func (x *RenameTable) String() string           { return str(x) }
func (x *ExecuteProcedure) String() string      { return str(x) }
func (x *Begin) String() string                 { return str(x) }
func (x *Commit) String() string                { return str(x) }
func (x *Rollback) String() string              { return str(x) }
func (x *Explain) String() string               { return str(x) }
func (x *ShowTables) String() string            { return str(x) }
func (x *Call) String() string                  { return str(x) }
func (x *CreateView) String() string            { return str(x) }
func (x *DropView) String() string              { return str(x) }
func (x *Show) String() string                  { return str(x) }
func (x *Describe) String() string              { return str(x) }
func (x *Copy) String() string                  { return str(x) }
func (x *CopyOption) String() string            { return str(x) }
func (x *SetVar) String() string                { return str(x) }

// except writes " EXCEPT (a, b)" when cols is not empty.
func (w *writer) except(cols []Ident) {
	if len(cols) == 0 {
		return
	}
	w.WriteString(" EXCEPT (")
	w.idents(cols)
	w.WriteByte(')')
}
