package lake

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
	"github.com/skadedb/skade/snapshot"
)

func identText(id parser.Ident) string {
	if id.Quoted {
		return id.Name
	}
	return strings.ToLower(id.Name)
}

// alterTable evolves a table's schema and properties with Iceberg schema
// evolution: no data is rewritten. All actions of one statement commit
// together.
func (s *Session) alterTable(ctx context.Context, st *parser.AlterTable) (*Result, error) {
	name := tableName(st.Name)
	tbl, err := s.table(ctx, name)
	if errors.Is(err, ErrTableNotFound) && st.IfExists {
		return emptyResult(), nil
	}
	if err != nil {
		return nil, err
	}
	if len(st.Actions) == 1 {
		if ep, ok := st.Actions[0].(*parser.ExecuteProcedure); ok {
			if err := s.notInTx("ALTER TABLE … EXECUTE " + identText(ep.Procedure)); err != nil {
				return nil, err
			}
			return s.execute(ctx, tbl, ep)
		}
		if rn, ok := st.Actions[0].(*parser.RenameTable); ok {
			if err := s.notInTx("ALTER TABLE … RENAME TO"); err != nil {
				return nil, err
			}
			to, err := s.lk.ident(tableName(rn.NewName))
			if err != nil {
				return nil, err
			}
			if _, err := s.lk.cat.RenameTable(ctx, tbl.id, to); err != nil {
				return nil, fmt.Errorf("alter table %s: rename to %s: %w", tbl.Name(), displayName(to), err)
			}
			return emptyResult(), nil
		}
	}
	fail := func(format string, args ...any) (*Result, error) {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("alter table %s: "+format, append([]any{tbl.Name()}, args...)...)}
	}
	schema := tbl.tbl.Metadata().CurrentSchema()
	// noColumn is "column does not exist" at the name's position, with the
	// nearest column name as a suggestion, as the binder's errors are.
	noColumn := func(id parser.Ident) (*Result, error) {
		var names []string
		for _, f := range schema.Fields() {
			names = append(names, f.Name)
		}
		return nil, &sentinelError{ErrInvalidArgument, plan.Errorf(id.Pos, "alter table %s: column %q does not exist%s",
			tbl.Name(), identText(id), plan.DidYouMean(identText(id), names))}
	}
	has := func(col string) (iceberg.NestedField, bool) {
		for _, f := range schema.Fields() {
			if strings.EqualFold(f.Name, col) {
				return f, true
			}
		}
		return iceberg.NestedField{}, false
	}
	props := iceberg.Properties{}
	type change func(*table.UpdateSchema)
	var changes []change
	for _, a := range st.Actions {
		switch a := a.(type) {
		case *parser.AddColumn:
			col := identText(a.Column.Name)
			if _, ok := has(col); ok {
				if a.IfNotExists {
					continue
				}
				return fail("column %q already exists", col)
			}
			if a.Column.NotNull || a.Column.PrimaryKey {
				return fail("cannot add NOT NULL column %q: existing rows would hold NULL; add it nullable", col)
			}
			if a.Column.Default != nil {
				return fail("column defaults are not supported yet")
			}
			t, err := icebergType(a.Column.Type)
			if err != nil {
				return fail("%v", err)
			}
			changes = append(changes, func(u *table.UpdateSchema) { u.AddColumn([]string{col}, t, "", false, nil) })
		case *parser.DropColumn:
			f, ok := has(identText(a.Name))
			if !ok {
				if a.IfExists {
					continue
				}
				return noColumn(a.Name)
			}
			changes = append(changes, func(u *table.UpdateSchema) { u.DeleteColumn([]string{f.Name}) })
		case *parser.RenameColumn:
			f, ok := has(identText(a.Old))
			if !ok {
				return noColumn(a.Old)
			}
			if _, taken := has(identText(a.New)); taken {
				return fail("column %q already exists", identText(a.New))
			}
			to := identText(a.New)
			changes = append(changes, func(u *table.UpdateSchema) { u.RenameColumn([]string{f.Name}, to) })
		case *parser.AlterColumnType:
			f, ok := has(identText(a.Column))
			if !ok {
				return noColumn(a.Column)
			}
			t, err := icebergType(a.Type)
			if err != nil {
				return fail("%v", err)
			}
			if !f.Type.Equals(t) && !widens(f.Type, t) {
				return fail("cannot change column %q from %s to %s: only widening (int to bigint, float to double, a larger decimal precision) keeps the data files valid", f.Name, f.Type, t)
			}
			changes = append(changes, func(u *table.UpdateSchema) {
				u.UpdateColumn([]string{f.Name}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Val: t, Valid: true}})
			})
		case *parser.AlterColumnNotNull:
			f, ok := has(identText(a.Column))
			if !ok {
				return noColumn(a.Column)
			}
			if a.Set {
				return fail("SET NOT NULL is not supported: existing data files are not checked")
			}
			changes = append(changes, func(u *table.UpdateSchema) {
				u.UpdateColumn([]string{f.Name}, table.ColumnUpdate{Required: iceberg.Optional[bool]{Val: false, Valid: true}})
			})
		case *parser.SetProperties:
			for _, p := range a.Properties {
				v, err := constString(p.Value)
				if err != nil {
					return fail("%v", err)
				}
				props[p.Key] = v
			}
		case *parser.RenameTable:
			return fail("RENAME TO cannot be combined with other actions")
		default:
			return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("alter table %s: %s is not supported yet", tbl.Name(), statementKind(&parser.AlterTable{Actions: []parser.AlterAction{a}}))}
		}
	}
	if len(props) > 0 {
		if err := snapshot.Validate(props); err != nil {
			return fail("%v", err)
		}
	}
	if len(changes) == 0 && len(props) == 0 {
		return emptyResult(), nil
	}
	err = s.write(ctx, tbl, "alter table", false, func(txn *table.Transaction) error {
		if len(changes) > 0 {
			u := txn.UpdateSchema(false /* caseSensitive */, false /* allowIncompatibleChanges */)
			for _, c := range changes {
				c(u)
			}
			if err := u.Commit(); err != nil {
				return err
			}
		}
		if len(props) > 0 {
			return txn.SetProperties(props)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return emptyResult(), nil
}

// icebergType maps a SQL type to Iceberg's.
func icebergType(t *parser.TypeName) (iceberg.Type, error) {
	at, err := plan.ArrowType(t)
	if err != nil {
		return nil, err
	}
	return table.ArrowTypeToIceberg(at, true /* downcastNsTimestamp */)
}

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
