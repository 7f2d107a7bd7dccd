package mergeinto

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
)

// TargetSchema is the Arrow schema of tbl's current schema in skade's
// canonical types, with Iceberg field ids as field metadata. Target column
// indices in a Spec index it, and the joined row starts with its fields.
func TargetSchema(tbl *table.Table) (*arrow.Schema, error) {
	if tbl == nil {
		return nil, fmt.Errorf("merge: nil target table (binder bug)")
	}
	s, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true /* includeFieldIDs */, false /* useLargeTypes */)
	if err != nil {
		return nil, fmt.Errorf("merge: the target's schema has no Arrow form: %w", err)
	}
	return s, nil
}

// JoinedSchema is the layout clause expressions are bound against: every
// target column, then every source column, all nullable.
func JoinedSchema(target, source *arrow.Schema) *arrow.Schema {
	fs := make([]arrow.Field, 0, target.NumFields()+source.NumFields())
	for _, f := range target.Fields() {
		fs = append(fs, arrow.Field{Name: f.Name, Type: f.Type, Nullable: true, Metadata: f.Metadata})
	}
	for _, f := range source.Fields() {
		fs = append(fs, arrow.Field{Name: f.Name, Type: f.Type, Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

// Validate checks a Spec without running it and returns the refusal a user
// should see, or a binder-bug error. Every error Validate returns is an
// *Error; refusals of statement shapes also wrap ErrRefused. Execute
// calls it first.
func Validate(spec *Spec) error {
	_, err := prepare(spec)
	return err
}

// prepared is a validated Spec with what Execute derives from it.
type prepared struct {
	spec   *Spec
	name   string
	target *arrow.Schema // TargetSchema
	source *arrow.Schema
	joined *arrow.Schema
	// ret is the RETURNING evaluation layout: joined plus the action.
	ret       *arrow.Schema
	retSchema *arrow.Schema // the rows returned

	keyCols   []int // target column per key
	keyTypes  []arrow.DataType
	probeKeys []exec.Expr // over target batches, widened
	buildKeys []exec.Expr // over source batches, widened

	matched, notMatched, bySource []Clause
}

func prepare(spec *Spec) (*prepared, error) {
	if spec == nil {
		return nil, &Error{State: StateInternal, Msg: "merge: nil spec (binder bug)"}
	}
	name := spec.Table
	if name == "" {
		name = "target"
	}
	internal := func(format string, args ...any) error {
		return &Error{State: StateInternal, Msg: fmt.Sprintf("merge into %s: ", name) + fmt.Sprintf(format, args...) + " (binder bug)"}
	}
	if spec.Target == nil {
		return nil, internal("no target table")
	}
	if spec.Source == nil {
		return nil, internal("no source")
	}
	p := &prepared{spec: spec, name: name}
	var err error
	if p.target, err = TargetSchema(spec.Target); err != nil {
		return nil, &Error{State: StateInternal, Msg: fmt.Sprintf("merge into %s", name), Err: err}
	}
	p.source = spec.Source.Schema()
	if p.source == nil {
		return nil, internal("the source has no schema")
	}
	p.joined = JoinedSchema(p.target, p.source)
	// RETURNING's layout: the joined row, the old and the new target row
	// (PostgreSQL 18's old.* and new.*), then the action
	retFields := slices.Clone(p.joined.Fields())
	for _, side := range []string{"old.", "new."} {
		for _, f := range p.target.Fields() {
			retFields = append(retFields, arrow.Field{Name: side + f.Name, Type: f.Type, Nullable: true})
		}
	}
	p.ret = arrow.NewSchema(append(retFields, arrow.Field{Name: "merge_action", Type: arrow.BinaryTypes.String}), nil)
	nt := p.target.NumFields()
	colName := func(i int) string { return p.target.Field(i).Name }

	// plan sets spec.Mode from the table's write mode before validating.
	if spec.Mode != CopyOnWrite && spec.Mode != MergeOnRead {
		return nil, refusef(StateNotSupported, name, "write mode %s is unknown; use copy-on-write or merge-on-read", spec.Mode)
	}

	// ON.
	if len(spec.Keys) == 0 {
		return nil, refusef(StateNotSupported, name, "needs an ON condition that is a conjunction of `target.col = source.col` equalities; other predicates may be ANDed to them")
	}
	for i, k := range spec.Keys {
		if k.Target < 0 || k.Target >= nt {
			return nil, refusef(StateUndefinedColumn, name, "ON: target column #%d does not exist; the table has %d columns", k.Target, nt)
		}
		if k.Source == nil {
			return nil, internal("ON key %d has no source expression", i+1)
		}
		tt, st := p.target.Field(k.Target).Type, k.Source.DataType()
		wide, ok := widen(tt, st)
		if !ok {
			return nil, refusef(StateDatatypeMismatch, name, "ON %s = %s compares %s with %s: the join key types must match exactly. Cast in the USING subquery.",
				colName(k.Target), k.Source, exec.TypeName(tt), exec.TypeName(st))
		}
		probe, err := exec.NewCast(&exec.Column{Index: k.Target, Type: tt, Name: colName(k.Target)}, wide, false)
		if err != nil {
			return nil, internal("widening key %s: %v", colName(k.Target), err)
		}
		build, err := exec.NewCast(k.Source, wide, false)
		if err != nil {
			return nil, internal("widening key %s: %v", k.Source, err)
		}
		p.keyCols = append(p.keyCols, k.Target)
		p.keyTypes = append(p.keyTypes, wide)
		p.probeKeys = append(p.probeKeys, probe)
		p.buildKeys = append(p.buildKeys, build)
	}
	if _, err := exec.NewKeyEncoder(p.keyTypes); err != nil {
		return nil, refusef(StateDatatypeMismatch, name, "ON: %v", err)
	}
	if spec.On != nil && !isBool(spec.On.DataType()) {
		return nil, refusef(StateDatatypeMismatch, name, "ON: the condition %s is %s, not boolean", spec.On, exec.TypeName(spec.On.DataType()))
	}

	// WHEN clauses.
	if len(spec.Clauses) == 0 {
		return nil, refusef(StateSyntax, name, "needs at least one WHEN clause")
	}
	unconditional := map[ClauseKind]int{}
	for i, c := range spec.Clauses {
		n := i + 1
		where := fmt.Sprintf("clause %d (%s ... THEN %s)", n, c.Kind, c.Action.Kind)
		if first, ok := unconditional[c.Kind]; ok {
			return nil, refusef(StateSyntax, name, "%s can never run: clause %d of the same kind has no AND condition and takes every row first; add a condition to clause %d or remove clause %d", where, first, first, n)
		}
		if c.Cond == nil {
			unconditional[c.Kind] = n
		} else if !isBool(c.Cond.DataType()) {
			return nil, refusef(StateDatatypeMismatch, name, "%s: the condition %s is %s, not boolean", where, c.Cond, exec.TypeName(c.Cond.DataType()))
		}
		a := c.Action
		switch c.Kind {
		case Matched:
			if a.Kind == ActionInsert {
				return nil, refusef(StateSyntax, name, "%s: INSERT is not allowed in a MATCHED merge clause; the row already exists, use UPDATE", where)
			}
			p.matched = append(p.matched, c)
		case NotMatchedByTarget:
			switch a.Kind {
			case ActionUpdate:
				return nil, refusef(StateSyntax, name, "%s: UPDATE is not allowed in a NOT MATCHED merge clause; there is no target row to update, use INSERT", where)
			case ActionDelete:
				return nil, refusef(StateSyntax, name, "%s: DELETE is not allowed in a NOT MATCHED merge clause; there is no target row to delete", where)
			}
			p.notMatched = append(p.notMatched, c)
		case NotMatchedBySource:
			if a.Kind == ActionInsert {
				return nil, refusef(StateNotSupported, name, "%s: it names no row to act on. Refusing rather than silently doing nothing.", where)
			}
			p.bySource = append(p.bySource, c)
		default:
			return nil, internal("clause %d has unknown kind %d", n, int(c.Kind))
		}
		switch a.Kind {
		case ActionUpdate:
			if len(a.Set) == 0 {
				return nil, refusef(StateSyntax, name, "%s: UPDATE SET names no column", where)
			}
			seen := map[int]bool{}
			for _, as := range a.Set {
				if as.Column < 0 || as.Column >= nt {
					return nil, refusef(StateUndefinedColumn, name, "%s: UPDATE SET: column #%d does not exist; the table has %d columns", where, as.Column, nt)
				}
				if seen[as.Column] {
					return nil, refusef(StateSyntax, name, "%s: UPDATE SET assigns column %q more than once", where, colName(as.Column))
				}
				seen[as.Column] = true
				if as.Expr == nil {
					return nil, internal("%s: SET %s has no expression", where, colName(as.Column))
				}
				if want := p.target.Field(as.Column).Type; !arrow.TypeEqual(as.Expr.DataType(), want) {
					return nil, refusef(StateDatatypeMismatch, name, "%s: SET %s = %s: column %q is %s but the expression is %s; cast the expression",
						where, colName(as.Column), as.Expr, colName(as.Column), exec.TypeName(want), exec.TypeName(as.Expr.DataType()))
				}
			}
		case ActionInsert:
			if len(a.Values) != nt {
				return nil, refusef(StateSyntax, name, "%s: INSERT has %d values but the table has %d columns", where, len(a.Values), nt)
			}
			for j, e := range a.Values {
				if e == nil {
					return nil, internal("%s: INSERT value %d is nil", where, j+1)
				}
				if want := p.target.Field(j).Type; !arrow.TypeEqual(e.DataType(), want) {
					return nil, refusef(StateDatatypeMismatch, name, "%s: INSERT value %d (%s) is %s but column %q is %s; cast the value",
						where, j+1, e, exec.TypeName(e.DataType()), colName(j), exec.TypeName(want))
				}
			}
		case ActionDelete, ActionDoNothing:
		default:
			return nil, internal("%s has unknown action %d", where, int(a.Kind))
		}
	}

	// RETURNING.
	if spec.Returning != nil {
		if spec.ReturningNames != nil && len(spec.ReturningNames) != len(spec.Returning) {
			return nil, internal("%d RETURNING expressions but %d names", len(spec.Returning), len(spec.ReturningNames))
		}
		fs := make([]arrow.Field, len(spec.Returning))
		for i, e := range spec.Returning {
			if e == nil {
				return nil, internal("RETURNING expression %d is nil", i+1)
			}
			n := fmt.Sprintf("col%d", i+1)
			if spec.ReturningNames != nil {
				n = spec.ReturningNames[i]
			}
			fs[i] = arrow.Field{Name: n, Type: e.DataType(), Nullable: true}
		}
		p.retSchema = arrow.NewSchema(fs, nil)
	}
	return p, nil
}

func isBool(t arrow.DataType) bool {
	return t.ID() == arrow.BOOL || t.ID() == arrow.NULL
}

// widen returns the type both key sides are compared in, when one side
// converts to the other without loss.
func widen(a, b arrow.DataType) (arrow.DataType, bool) {
	if arrow.TypeEqual(a, b) {
		return a, true
	}
	ra, aInt := intRank(a)
	rb, bInt := intRank(b)
	if aInt && bInt {
		if ra >= rb {
			return a, true
		}
		return b, true
	}
	if a.ID() == arrow.FLOAT32 && b.ID() == arrow.FLOAT64 {
		return b, true
	}
	if a.ID() == arrow.FLOAT64 && b.ID() == arrow.FLOAT32 {
		return a, true
	}
	da, okA := a.(*arrow.Decimal128Type)
	db, okB := b.(*arrow.Decimal128Type)
	if okA && okB {
		if da.Scale == db.Scale {
			if da.Precision >= db.Precision {
				return a, true
			}
			return b, true
		}
		// Different scales compare without loss in the larger scale with
		// room for the larger integer part: numeric(2,1) = numeric(10,2)
		// in numeric(10,2), as Postgres compares numerics of any scale.
		scale := max(da.Scale, db.Scale)
		prec := max(da.Precision-da.Scale, db.Precision-db.Scale) + scale
		if prec <= 38 {
			return &arrow.Decimal128Type{Precision: prec, Scale: scale}, true
		}
	}
	return nil, false
}

// intRank orders the signed integer types by width.
func intRank(t arrow.DataType) (int, bool) {
	switch t.ID() {
	case arrow.INT8:
		return 1, true
	case arrow.INT16:
		return 2, true
	case arrow.INT32:
		return 3, true
	case arrow.INT64:
		return 4, true
	}
	return 0, false
}
