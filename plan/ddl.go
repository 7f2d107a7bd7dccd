package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/snapshot"
)

// ErrNotSupported is wrapped by the errors of DDL that skade does not
// support yet (lake reports them as ErrNotImplemented).
var ErrNotSupported = errors.New("not supported yet")

// Alter is a bound ALTER TABLE: schema changes, applied in order to one
// iceberg-go UpdateSchema, and properties to set, all committed together.
// Its column names are resolved against the table's current schema, and
// every error names the position of what it is about.
type Alter struct {
	Target *TableRef
	Schema []func(*table.UpdateSchema)
	Props  iceberg.Properties
	// Unset are the properties to remove (UNSET TBLPROPERTIES).
	Unset []string
	// Upgrade is the format version to upgrade to ('format-version' set
	// higher than the table's); 0 for none.
	Upgrade int
	// Spec are partition spec changes (ADD, DROP, REPLACE PARTITION
	// FIELD), applied in order to one iceberg-go UpdateSpec.
	Spec []func(*table.UpdateSpec)
	// SortOrder, when set, replaces the default sort order (WRITE …).
	SortOrder *table.SortOrder
	// AddConstraints are ADD CONSTRAINT's constraints (also in Props),
	// which the rows already there must meet.
	AddConstraints []TableConstraint
	// SetNotNull are the columns ALTER COLUMN … SET NOT NULL makes
	// required (a change in Schema too), in which the rows already there
	// must hold no NULL.
	SetNotNull []string
	// ClearRequiredDefault: a required column's write-default is cleared,
	// which iceberg-go calls an incompatible change.
	ClearRequiredDefault bool
}

// Empty reports whether the statement changes nothing (IF [NOT] EXISTS
// actions that found nothing to do).
func (a *Alter) Empty() bool {
	return len(a.Schema) == 0 && len(a.Props) == 0 && len(a.Unset) == 0 && a.Upgrade == 0 && len(a.AddConstraints) == 0 && len(a.SetNotNull) == 0 &&
		len(a.Spec) == 0 && a.SortOrder == nil
}

// AlterTable binds ALTER TABLE's column and property actions against
// target. RENAME TO and EXECUTE are the caller's: they are not schema
// evolution.
func (p *Planner) AlterTable(ctx context.Context, st *parser.AlterTable, target *TableRef) (*Alter, error) {
	schema := target.Table.Metadata().CurrentSchema()
	name := target.Name
	fail := func(pos parser.Pos, format string, args ...any) (*Alter, error) {
		return nil, errorf(pos, "alter table %s: "+format, append([]any{name}, args...)...)
	}
	has := func(col string) (iceberg.NestedField, bool) {
		for _, f := range schema.Fields() {
			if strings.EqualFold(f.Name, col) {
				return f, true
			}
		}
		return iceberg.NestedField{}, false
	}
	var names []string
	for _, f := range schema.Fields() {
		names = append(names, f.Name)
	}
	// noColumn is "column does not exist" at the name, with the nearest
	// column name as a suggestion.
	noColumn := func(id parser.Ident) (*Alter, error) {
		return fail(id.Pos, "column %q does not exist%s", identName(id), didYouMean(identName(id), names))
	}
	out := &Alter{Target: target, Props: iceberg.Properties{}}
	cons, err := TableConstraints(target.Table.Metadata().Properties())
	if err != nil {
		return fail(st.Pos, "%v", err)
	}
	// dropConstraint removes constraint i, which an earlier action of
	// this statement may have added
	dropConstraint := func(i int) {
		c := cons[i]
		key := ConstraintProperty(c.Name)
		if _, added := out.Props[key]; added {
			delete(out.Props, key)
			out.AddConstraints = slices.DeleteFunc(out.AddConstraints, func(x TableConstraint) bool { return x.Name == c.Name })
		} else {
			out.Unset = append(out.Unset, key)
		}
		if c.Kind == parser.ConstraintPrimaryKey {
			out.Schema = append(out.Schema, func(u *table.UpdateSchema) { u.SetIdentifierField(nil) })
		}
		cons = slices.Delete(cons, i, i+1)
	}
	usesColumn := func(c TableConstraint, col string) bool {
		return slices.ContainsFunc(c.Columns, func(x string) bool { return strings.EqualFold(x, col) })
	}
	// the partition fields as the actions so far leave them, by name
	specFields := map[string]bool{}
	curSpec := target.Table.Metadata().PartitionSpec()
	for _, f := range curSpec.Fields() {
		specFields[strings.ToLower(f.Name)] = true
	}
	// nested resolves a struct path (s.inner) to its fields' names as the
	// schema spells them, and the struct's fields
	nested := func(parent []parser.Ident) ([]string, []iceberg.NestedField, error) {
		fields := schema.Fields()
		var names []string
		for _, id := range parent {
			var found *iceberg.NestedField
			for i := range fields {
				if sameName(id, fields[i].Name) {
					found = &fields[i]
				}
			}
			if found == nil {
				if len(names) == 0 {
					_, err := noColumn(id)
					return nil, nil, err
				}
				_, err := fail(id.Pos, "struct %s has no field %q", strings.Join(names, "."), identName(id))
				return nil, nil, err
			}
			st, ok := found.Type.(*iceberg.StructType)
			if !ok {
				_, err := fail(id.Pos, "column %s is of type %s, not a struct", strings.Join(append(names, found.Name), "."), found.Type)
				return nil, nil, err
			}
			names = append(names, found.Name)
			fields = st.FieldList
		}
		return names, fields, nil
	}
	fieldIn := func(fields []iceberg.NestedField, id parser.Ident) (iceberg.NestedField, bool) {
		for _, f := range fields {
			if sameName(id, f.Name) {
				return f, true
			}
		}
		return iceberg.NestedField{}, false
	}
	// fields dropped from each struct path by this statement's actions
	dropped := map[string]int{}
	for _, a := range st.Actions {
		if err := nestedAction(a, nested, fieldIn, fail, out, dropped); err != nil || nestedPath(a) {
			if err != nil {
				return nil, err
			}
			continue
		}
		switch a := a.(type) {
		case *parser.AddColumn:
			col := identName(a.Column.Name)
			if _, ok := has(col); ok {
				if a.IfNotExists {
					continue
				}
				return fail(a.Column.Name.Pos, "column %q already exists", col)
			}
			if a.Column.NotNull || a.Column.PrimaryKey {
				return fail(a.Column.Name.Pos, "cannot add NOT NULL column %q: existing rows would hold NULL; add it nullable", col)
			}
			t, err := icebergType(a.Column.Type)
			if err != nil {
				return fail(a.Column.Type.Pos, "%s", errMsg(err))
			}
			var initial iceberg.Literal
			if a.Column.Default != nil {
				// the rows already there read the default only where Iceberg
				// keeps it: a v3 table's initial-default, a constant
				at, err := ArrowType(a.Column.Type)
				if err != nil {
					return fail(a.Column.Type.Pos, "%s", errMsg(err))
				}
				text, v, err := p.binder(ctx).checkDefaultValue(a.Column.Default, TargetColumn{Name: col, Type: canonical(at)}, name)
				if err != nil {
					return fail(a.Column.Default.Position(), "column %q: DEFAULT: %s", col, errMsg(err))
				}
				lit, ok := icebergDefault(v, t)
				if !ok || !constantDefault(a.Column.Default) || target.Table.Metadata().Version() < 3 {
					return nil, &Error{Pos: a.Column.Default.Position(), Err: ErrNotSupported, Msg: fmt.Sprintf("alter table %s: ADD COLUMN %s … DEFAULT needs a format-version 3 table and a constant default of a boolean, integer, floating-point or text column, kept as Iceberg's initial-default for the rows already there; otherwise add the column, then ALTER COLUMN %s SET DEFAULT for the rows written after", name, col, col)}
				}
				initial = lit
				out.Props[DefaultProperty(col)] = text
			}
			out.Schema = append(out.Schema, func(u *table.UpdateSchema) { u.AddColumn([]string{col}, t, "", false, initial) })
		case *parser.DropColumn:
			f, ok := has(identName(a.Name))
			if !ok {
				if a.IfExists {
					continue
				}
				return noColumn(a.Name)
			}
			// as in PostgreSQL, the constraints on the column go with it
			for i := len(cons) - 1; i >= 0; i-- {
				if usesColumn(cons[i], f.Name) {
					dropConstraint(i)
				}
			}
			out.Schema = append(out.Schema, func(u *table.UpdateSchema) { u.DeleteColumn([]string{f.Name}) })
			props := target.Table.Metadata().Properties()
			for _, k := range []string{DefaultProperty(f.Name), dictionaryProperty(f.Name)} {
				if _, ok := props[k]; ok {
					out.Unset = append(out.Unset, k)
				}
			}
		case *parser.RenameColumn:
			f, ok := has(identName(a.Old))
			if !ok {
				return noColumn(a.Old)
			}
			if _, taken := has(identName(a.New)); taken {
				return fail(a.New.Pos, "column %q already exists", identName(a.New))
			}
			to := identName(a.New)
			out.Schema = append(out.Schema, func(u *table.UpdateSchema) { u.RenameColumn([]string{f.Name}, to) })
			// the column's own properties (its DEFAULT, its dictionary
			// encoding) go with it
			props := target.Table.Metadata().Properties()
			for _, key := range []func(string) string{DefaultProperty, dictionaryProperty} {
				if v, ok := props[key(f.Name)]; ok {
					out.Unset = append(out.Unset, key(f.Name))
					out.Props[key(to)] = v
				}
			}
			// and the constraints name it anew
			for i, c := range cons {
				if usesColumn(c, f.Name) {
					cons[i] = c.renameColumn(f.Name, to)
					out.Props[ConstraintProperty(c.Name)] = cons[i].SQL()
				}
			}
		case *parser.AddConstraint:
			cols, err := TargetColumns(target)
			if err != nil {
				return nil, err
			}
			bound, err := p.bindConstraintList(ctx, target.Ident[len(target.Ident)-1], []*parser.Constraint{a.Constraint}, cols, cons)
			if err != nil {
				return nil, prefixError("alter table "+name+": ", err)
			}
			c := bound[0]
			if c.Kind == parser.ConstraintPrimaryKey {
				var ids [][]string
				for _, col := range c.Columns {
					if f, _ := has(col); !f.Required && !slices.ContainsFunc(out.SetNotNull, func(s string) bool { return strings.EqualFold(s, col) }) {
						return fail(a.Pos, "column %q of a PRIMARY KEY must be NOT NULL; first ALTER COLUMN %s SET NOT NULL", col, col)
					}
					ids = append(ids, []string{col})
				}
				out.Schema = append(out.Schema, func(u *table.UpdateSchema) { u.SetIdentifierField(ids) })
			}
			out.Props[ConstraintProperty(c.Name)] = c.SQL()
			out.AddConstraints = append(out.AddConstraints, c)
			cons = append(cons, c)
		case *parser.DropConstraint:
			i := slices.IndexFunc(cons, func(c TableConstraint) bool { return c.Name == identName(a.Name) })
			if i < 0 {
				if a.IfExists {
					continue
				}
				return nil, &Error{Pos: a.Name.Pos, Msg: fmt.Sprintf("alter table %s: constraint %q of relation %q does not exist", name, identName(a.Name), target.Ident[len(target.Ident)-1]), Err: SQLState("42704")}
			}
			dropConstraint(i)
		case *parser.AlterColumnDefault:
			f, ok := has(identName(a.Column))
			if !ok {
				return noColumn(a.Column)
			}
			// a v3 table keeps a constant default as the field's Iceberg
			// write-default too, for other engines; any other clears it
			colName := f.Name
			setWrite := func(lit iceberg.Literal) {
				if lit == nil && f.WriteDefault == nil {
					return
				}
				out.ClearRequiredDefault = out.ClearRequiredDefault || lit == nil && f.Required
				out.Schema = append(out.Schema, func(u *table.UpdateSchema) {
					u.UpdateColumn([]string{colName}, table.ColumnUpdate{WriteDefault: iceberg.Optional[iceberg.Literal]{Val: lit, Valid: true}})
				})
			}
			if a.Default == nil {
				if columnDefault(target.Table.Metadata().Properties(), f.Name) != "" {
					out.Unset = append(out.Unset, DefaultProperty(f.Name))
				}
				setWrite(nil)
				continue
			}
			t, err := table.SchemaToArrowSchema(iceberg.NewSchema(0, f), nil, false, false)
			if err != nil {
				return nil, err
			}
			text, v, err := p.binder(ctx).checkDefaultValue(a.Default, TargetColumn{Name: f.Name, Type: canonical(t.Field(0).Type), Required: f.Required}, name)
			if err != nil {
				return fail(a.Default.Position(), "column %q: DEFAULT: %s", f.Name, errMsg(err))
			}
			out.Props[DefaultProperty(f.Name)] = text
			if target.Table.Metadata().Version() >= 3 {
				var lit iceberg.Literal
				if constantDefault(a.Default) {
					lit, _ = icebergDefault(v, f.Type)
				}
				setWrite(lit)
			}
		case *parser.AlterColumnType:
			f, ok := has(identName(a.Column))
			if !ok {
				return noColumn(a.Column)
			}
			t, err := icebergType(a.Type)
			if err != nil {
				return fail(a.Type.Pos, "%s", errMsg(err))
			}
			if !f.Type.Equals(t) && !widens(f.Type, t) {
				return fail(a.Column.Pos, "cannot change column %q from %s to %s: only widening (int to bigint, float to double, a larger decimal precision) keeps the data files valid", f.Name, f.Type, t)
			}
			out.Schema = append(out.Schema, func(u *table.UpdateSchema) {
				u.UpdateColumn([]string{f.Name}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Val: t, Valid: true}})
			})
		case *parser.AlterColumnNotNull:
			f, ok := has(identName(a.Column))
			if !ok {
				return noColumn(a.Column)
			}
			if a.Set {
				if f.Required {
					continue
				}
				if _, ok := f.Type.(iceberg.NestedType); ok {
					// (iceberg-go cannot plan the IS NULL scan of one)
					return fail(a.Column.Pos, "SET NOT NULL on a struct, array or map column %q is not supported yet", f.Name)
				}
				name := f.Name
				out.SetNotNull = append(out.SetNotNull, name)
				out.Schema = append(out.Schema, func(u *table.UpdateSchema) {
					u.UpdateColumn([]string{name}, table.ColumnUpdate{Required: iceberg.Optional[bool]{Val: true, Valid: true}})
				})
				continue
			}
			if slices.ContainsFunc(cons, func(c TableConstraint) bool { return c.Kind == parser.ConstraintPrimaryKey && usesColumn(c, f.Name) }) {
				return fail(a.Column.Pos, "column %q is in a primary key", f.Name)
			}
			out.Schema = append(out.Schema, func(u *table.UpdateSchema) {
				u.UpdateColumn([]string{f.Name}, table.ColumnUpdate{Required: iceberg.Optional[bool]{Val: false, Valid: true}})
			})
		case *parser.SetProperties:
			for _, p := range a.Properties {
				v, err := PropertyValue(p.Value)
				if err != nil {
					return fail(p.Value.Position(), "%v", err)
				}
				key := p.Key
				if k, ok := trinoProperties[key]; ok {
					key = k
				}
				if err := checkUserProperty(key); err != nil {
					return fail(p.Pos, "%v", err)
				}
				if key == "format-version" {
					// not a property to set but an upgrade, which
					// only goes up
					cur := target.Table.Metadata().Version()
					switch n, err := strconv.Atoi(v); {
					case err != nil || n < 2 || n > 3:
						return fail(p.Value.Position(), "format-version %q is not supported; use 2 or 3", v)
					case n < cur:
						return fail(p.Value.Position(), "format-version cannot go down from %d to %d", cur, n)
					case n > cur:
						out.Upgrade = n
					}
					continue
				}
				out.Props[key] = v
			}
		case *parser.UnsetProperties:
			for _, k := range a.Keys {
				if k == "format-version" {
					return fail(a.Pos, "the table property format-version cannot be unset; a table's format version only moves up")
				}
				if err := checkUserProperty(k); err != nil {
					return fail(a.Pos, "%v", err)
				}
				if _, ok := target.Table.Metadata().Properties()[k]; !ok {
					if a.IfExists {
						continue
					}
					return fail(a.Pos, "table property %q is not set; with IF EXISTS, a property that is not set is skipped", k)
				}
				out.Unset = append(out.Unset, k)
			}
		case *parser.AddPartitionField:
			col, tr, name, err := bindPartitionField(schema, a.Field, names)
			if err != nil {
				return fail(a.Field.Pos, "%v", err)
			}
			if !a.Name.Empty() {
				name = identName(a.Name)
			}
			if specFields[strings.ToLower(name)] {
				return fail(a.Pos, "the table already has a partition field named %q; name the new one with AS", name)
			}
			specFields[strings.ToLower(name)] = true
			out.Spec = append(out.Spec, func(u *table.UpdateSpec) { u.AddField(col, tr, name) })
		case *parser.DropPartitionField:
			name, err := findPartitionField(schema, &curSpec, a.Field)
			if err != nil {
				return fail(a.Field.Pos, "%v", err)
			}
			delete(specFields, strings.ToLower(name))
			out.Spec = append(out.Spec, func(u *table.UpdateSpec) { u.RemoveField(name) })
		case *parser.ReplacePartitionField:
			old, err := findPartitionField(schema, &curSpec, a.Old)
			if err != nil {
				return fail(a.Old.Pos, "%v", err)
			}
			col, tr, name, err := bindPartitionField(schema, a.New, names)
			if err != nil {
				return fail(a.New.Pos, "%v", err)
			}
			if !a.Name.Empty() {
				name = identName(a.Name)
			}
			out.Spec = append(out.Spec, func(u *table.UpdateSpec) { u.RemoveField(old).AddField(col, tr, name) })
		case *parser.WriteOrder:
			order, mode, err := bindWriteOrder(schema, a, names)
			if err != nil {
				return fail(a.Pos, "%v", err)
			}
			out.SortOrder = &order
			out.Props["write.distribution-mode"] = mode
		case *parser.RenameTable:
			return fail(st.Pos, "RENAME TO cannot be combined with other actions")
		default:
			return nil, fmt.Errorf("alter table %s: the action %q is %w", name, (&parser.AlterTable{Name: st.Name, Actions: []parser.AlterAction{a}}).String(), ErrNotSupported)
		}
	}
	if len(out.Props) > 0 {
		if err := snapshot.Validate(out.Props); err != nil {
			return fail(st.Pos, "%v", err)
		}
	}
	return out, nil
}

// errMsg is err's message without the position an *Error prints: the
// caller gives the position itself.
func errMsg(err error) string {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Msg
	}
	return err.Error()
}

// PropertyValue is the text of a table property's value: a literal, or a
// bare word.
func PropertyValue(e parser.Expr) (string, error) {
	switch v := e.(type) {
	case *parser.Literal:
		if v.Kind == parser.LitNull {
			return "", fmt.Errorf("property values may not be NULL")
		}
		return v.Value, nil
	case *parser.ColumnRef:
		return v.Name.String(), nil
	}
	return "", fmt.Errorf("property value %s must be a constant", e)
}

// icebergType maps a SQL type to Iceberg's.
func icebergType(t *parser.TypeName) (iceberg.Type, error) {
	at, err := ArrowType(t)
	if err != nil {
		return nil, err
	}
	// through a one-column schema, which numbers a list's element (the
	// ids are placeholders: ADD COLUMN assigns the table's own)
	sch, err := table.ArrowSchemaToIcebergWithFreshIDs(arrow.NewSchema([]arrow.Field{{Name: "c", Type: at, Nullable: true}}, nil), true /* downcastNsTimestamp */)
	if err != nil {
		return nil, err
	}
	return sch.Field(0).Type, nil
}

// IcebergType is icebergType for lake's CREATE TABLE.
func IcebergType(t *parser.TypeName) (iceberg.Type, error) { return icebergType(t) }

// widens reports Iceberg's allowed type promotions.
func widens(from, to iceberg.Type) bool {
	switch f := from.(type) {
	case iceberg.Int32Type:
		_, ok := to.(iceberg.Int64Type)
		return ok
	case iceberg.Float32Type:
		_, ok := to.(iceberg.Float64Type)
		return ok
	case iceberg.DecimalType:
		t, ok := to.(iceberg.DecimalType)
		return ok && t.Scale() == f.Scale() && t.Precision() >= f.Precision()
	}
	return false
}

// Create is a bound CREATE TABLE (not CLONE): the columns, or the query
// of CREATE TABLE … AS, the partition fields checked against the columns,
// and the properties. lake checks the name against the catalog and
// creates the table.
type Create struct {
	Name        parser.Name
	OrReplace   bool
	IfNotExists bool
	// Schema is the declared columns, or the query's output.
	Schema *arrow.Schema
	// Query is CREATE TABLE … AS's query, nil otherwise.
	Query      *Plan
	Partitions []PartitionField
	Props      map[string]string
	// PrimaryKey are the PRIMARY KEY's columns, the schema's identifier
	// fields; nil for none.
	PrimaryKey []string
	// WriteDefaults are the constant DEFAULTs a format-version 3 table
	// also keeps as its fields' Iceberg write-default, by column.
	WriteDefaults map[string]iceberg.Literal
}

// PartitionField is one bound PARTITIONED BY entry.
type PartitionField struct {
	Column    string // as the schema spells it
	Transform string // identity, year, month, day, hour, bucket, truncate
	Param     int    // the bucket count or truncate width
}

// CreateTable binds CREATE TABLE's columns (or its AS query), partition
// fields and properties. Every error names the position of what it is
// about.
func (p *Planner) CreateTable(ctx context.Context, st *parser.CreateTable) (*Create, error) {
	name := st.Name.String()
	fail := func(pos parser.Pos, format string, args ...any) (*Create, error) {
		return nil, errorf(pos, "create table %s: "+format, append([]any{name}, args...)...)
	}
	if st.OrReplace && st.IfNotExists {
		return fail(st.Pos, "OR REPLACE and IF NOT EXISTS cannot be combined")
	}
	out := &Create{Name: st.Name, OrReplace: st.OrReplace, IfNotExists: st.IfNotExists}
	if len(st.Properties) > 0 {
		out.Props = map[string]string{}
		for _, pr := range st.Properties {
			v, err := PropertyValue(pr.Value)
			if err != nil {
				return fail(pr.Value.Position(), "%v", err)
			}
			if err := checkUserProperty(pr.Key); err != nil {
				return fail(pr.Pos, "%v", err)
			}
			out.Props[pr.Key] = v
		}
	}
	if st.AsQuery == nil {
		fields := make([]arrow.Field, len(st.Columns))
		seen := map[string]bool{}
		for i, c := range st.Columns {
			col := c.Name.Name
			if seen[strings.ToLower(col)] {
				return fail(c.Name.Pos, "column %q is defined twice; rename one of them", col)
			}
			seen[strings.ToLower(col)] = true
			t, err := ArrowType(c.Type)
			if err != nil {
				return fail(c.Type.Pos, "%s", errMsg(err))
			}
			if c.Default != nil {
				text, v, err := p.binder(ctx).checkDefaultValue(c.Default, TargetColumn{Name: col, Type: canonical(t), Required: c.NotNull || c.PrimaryKey}, name)
				if err != nil {
					return fail(c.Default.Position(), "column %q: DEFAULT: %s", col, errMsg(err))
				}
				if out.Props == nil {
					out.Props = map[string]string{}
				}
				out.Props[DefaultProperty(col)] = text
				if out.Props["format-version"] == "3" && constantDefault(c.Default) {
					if it, err := icebergType(c.Type); err == nil {
						if lit, ok := icebergDefault(v, it); ok {
							if out.WriteDefaults == nil {
								out.WriteDefaults = map[string]iceberg.Literal{}
							}
							out.WriteDefaults[col] = lit
						}
					}
				}
			}
			fields[i] = arrow.Field{Name: c.Name.Name, Type: t, Nullable: !c.NotNull && !c.PrimaryKey}
		}
		out.Schema = arrow.NewSchema(fields, nil)
		cols := make([]TargetColumn, len(fields))
		for i, f := range fields {
			cols[i] = TargetColumn{Name: f.Name, Type: canonical(f.Type), Required: !f.Nullable}
		}
		cons, err := p.bindConstraints(ctx, identName(st.Name.Last()), st, cols, nil)
		if err != nil {
			return nil, prefixError("create table "+name+": ", err)
		}
		for _, c := range cons {
			if out.Props == nil {
				out.Props = map[string]string{}
			}
			out.Props[ConstraintProperty(c.Name)] = c.SQL()
			if c.Kind == parser.ConstraintPrimaryKey {
				out.PrimaryKey = c.Columns
				for i, f := range fields {
					if slices.Contains(c.Columns, f.Name) {
						fields[i].Nullable = false
					}
				}
				out.Schema = arrow.NewSchema(fields, nil)
			}
		}
	} else {
		// The query is bound first, so a bad query creates nothing. It may
		// read the table it replaces: its scans hold the table as it was.
		q, err := p.Query(ctx, st.AsQuery)
		if err != nil {
			return nil, err
		}
		out.Query, out.Schema = q, q.Schema()
		for i, f := range out.Schema.Fields() {
			if f.Type.ID() == arrow.NULL {
				return fail(st.AsQuery.Pos, "column %d (%q) has no type (only NULLs); cast it", i+1, f.Name)
			}
		}
	}
	var names []string
	for _, f := range out.Schema.Fields() {
		names = append(names, f.Name)
	}
	for _, pf := range st.PartitionBy {
		col := identName(pf.Column)
		found := ""
		for _, n := range names {
			if strings.EqualFold(n, col) {
				found = n
			}
		}
		if found == "" {
			return fail(pf.Column.Pos, "partition column %q is not a column of the table%s", col, didYouMean(col, names))
		}
		out.Partitions = append(out.Partitions, PartitionField{Column: found, Transform: pf.Transform.String(), Param: pf.Param})
	}
	return out, nil
}

// bindPartitionField resolves a partition field of ALTER TABLE against
// schema: its source column as the schema spells it, its transform, and
// its default name.
func bindPartitionField(schema *iceberg.Schema, f *parser.PartitionField, names []string) (string, iceberg.Transform, string, error) {
	col := identName(f.Column)
	field, ok := schema.FindFieldByNameCaseInsensitive(col)
	if !ok {
		return "", nil, "", fmt.Errorf("column %q does not exist%s", col, didYouMean(col, names))
	}
	tr, name, err := PartitionTransform(f.Transform.String(), f.Param, field.Name)
	if err != nil {
		return "", nil, "", err
	}
	if !tr.CanTransform(field.Type) {
		return "", nil, "", fmt.Errorf("%s cannot be applied to column %q of type %s", f, field.Name, field.Type)
	}
	return field.Name, tr, name, nil
}

// findPartitionField is the name of the partition field of spec that f
// names: a bare name may be a field's name; else the field with f's
// source column and transform.
func findPartitionField(schema *iceberg.Schema, spec *iceberg.PartitionSpec, f *parser.PartitionField) (string, error) {
	var have []string
	for _, pf := range spec.Fields() {
		have = append(have, pf.Name)
		if f.Transform == parser.TransformIdentity && strings.EqualFold(pf.Name, identName(f.Column)) {
			return pf.Name, nil
		}
	}
	field, ok := schema.FindFieldByNameCaseInsensitive(identName(f.Column))
	if ok {
		tr, _, err := PartitionTransform(f.Transform.String(), f.Param, field.Name)
		if err != nil {
			return "", err
		}
		for _, pf := range spec.Fields() {
			if pf.SourceID() == field.ID && pf.Transform.Equals(tr) {
				return pf.Name, nil
			}
		}
	}
	if len(have) == 0 {
		return "", fmt.Errorf("partition field %s does not exist: the table is not partitioned", f)
	}
	return "", fmt.Errorf("partition field %s does not exist; the table's partition fields are %s", f, strings.Join(have, ", "))
}

// bindWriteOrder is WRITE …'s sort order and the write.distribution-mode
// Spark sets with it: range for ORDERED BY, hash for DISTRIBUTED BY
// PARTITION, none for LOCALLY ORDERED BY and UNORDERED.
func bindWriteOrder(schema *iceberg.Schema, w *parser.WriteOrder, names []string) (table.SortOrder, string, error) {
	mode := "none"
	switch {
	case w.Distributed:
		mode = "hash"
	case !w.Locally && !w.Unordered:
		mode = "range"
	}
	if w.Unordered || len(w.Keys) == 0 {
		return table.UnsortedSortOrder, mode, nil
	}
	var fields []table.SortField
	for _, k := range w.Keys {
		col, tr, _, err := bindPartitionField(schema, k.Field, names)
		if err != nil {
			return table.SortOrder{}, "", err
		}
		src, _ := schema.FindFieldByName(col)
		dir, nulls := table.SortASC, table.NullsFirst // Iceberg's defaults
		if k.Desc {
			dir, nulls = table.SortDESC, table.NullsLast
		}
		if k.NullsSet {
			nulls = table.NullsLast
			if k.NullsFirst {
				nulls = table.NullsFirst
			}
		}
		fields = append(fields, table.SortField{SourceIDs: []int{src.ID}, Transform: tr, Direction: dir, NullOrder: nulls})
	}
	order, err := table.NewSortOrder(1, fields)
	return order, mode, err
}

// nestedPath reports whether a is an action on a struct's field.
func nestedPath(a parser.AlterAction) bool {
	switch a := a.(type) {
	case *parser.AddColumn:
		return len(a.Parent) > 0
	case *parser.DropColumn:
		return len(a.Parent) > 0
	case *parser.RenameColumn:
		return len(a.Parent) > 0
	case *parser.AlterColumnType:
		return len(a.Parent) > 0
	}
	return false
}

// nestedAction binds ADD, DROP, RENAME and ALTER TYPE of a struct's field
// (a nestedPath action; others are left alone): Iceberg evolves a field
// by its id, so data files written before read the added field as NULL
// and no longer read a dropped one.
func nestedAction(a parser.AlterAction,
	nested func([]parser.Ident) ([]string, []iceberg.NestedField, error),
	fieldIn func([]iceberg.NestedField, parser.Ident) (iceberg.NestedField, bool),
	fail func(parser.Pos, string, ...any) (*Alter, error), out *Alter, dropped map[string]int) error {
	if !nestedPath(a) {
		return nil
	}
	failErr := func(pos parser.Pos, format string, args ...any) error {
		_, err := fail(pos, format, args...)
		return err
	}
	switch a := a.(type) {
	case *parser.AddColumn:
		path, fields, err := nested(a.Parent)
		if err != nil {
			return err
		}
		col := identName(a.Column.Name)
		if _, ok := fieldIn(fields, a.Column.Name); ok {
			if a.IfNotExists {
				return nil
			}
			return failErr(a.Column.Name.Pos, "struct %s already has a field %q", strings.Join(path, "."), col)
		}
		if a.Column.NotNull || a.Column.PrimaryKey || a.Column.Default != nil || len(a.Column.Constraints) > 0 {
			return failErr(a.Column.Name.Pos, "a struct's new field %q takes no constraint or default; add it nullable", col)
		}
		t, err := icebergType(a.Column.Type)
		if err != nil {
			return failErr(a.Column.Type.Pos, "%s", errMsg(err))
		}
		out.Schema = append(out.Schema, func(u *table.UpdateSchema) { u.AddColumn(append(path, col), t, "", false, nil) })
	case *parser.DropColumn:
		path, fields, err := nested(a.Parent)
		if err != nil {
			return err
		}
		f, ok := fieldIn(fields, a.Name)
		if !ok {
			if a.IfExists {
				return nil
			}
			return failErr(a.Name.Pos, "struct %s has no field %q", strings.Join(path, "."), identName(a.Name))
		}
		key := strings.ToLower(strings.Join(path, "."))
		if len(fields)-dropped[key] <= 1 {
			return failErr(a.Name.Pos, "cannot drop %q, the last field of struct %s; drop the struct column", f.Name, strings.Join(path, "."))
		}
		dropped[key]++
		out.Schema = append(out.Schema, func(u *table.UpdateSchema) { u.DeleteColumn(append(path, f.Name)) })
	case *parser.RenameColumn:
		path, fields, err := nested(a.Parent)
		if err != nil {
			return err
		}
		f, ok := fieldIn(fields, a.Old)
		if !ok {
			return failErr(a.Old.Pos, "struct %s has no field %q", strings.Join(path, "."), identName(a.Old))
		}
		if _, taken := fieldIn(fields, a.New); taken {
			return failErr(a.New.Pos, "struct %s already has a field %q", strings.Join(path, "."), identName(a.New))
		}
		to := identName(a.New)
		out.Schema = append(out.Schema, func(u *table.UpdateSchema) { u.RenameColumn(append(path, f.Name), to) })
	case *parser.AlterColumnType:
		path, fields, err := nested(a.Parent)
		if err != nil {
			return err
		}
		f, ok := fieldIn(fields, a.Column)
		if !ok {
			return failErr(a.Column.Pos, "struct %s has no field %q", strings.Join(path, "."), identName(a.Column))
		}
		t, err := icebergType(a.Type)
		if err != nil {
			return failErr(a.Type.Pos, "%s", errMsg(err))
		}
		if !f.Type.Equals(t) && !widens(f.Type, t) {
			return failErr(a.Column.Pos, "cannot change field %s.%s from %s to %s: only widening (int to bigint, float to double, a larger decimal precision) keeps the data files valid", strings.Join(path, "."), f.Name, f.Type, t)
		}
		out.Schema = append(out.Schema, func(u *table.UpdateSchema) {
			u.UpdateColumn(append(path, f.Name), table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Val: t, Valid: true}})
		})
	}
	return nil
}
