package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
)

// Table constraints: CHECK (e), UNIQUE (cols) and PRIMARY KEY (cols).
// Each is kept as SQL text in the table property
// ConstraintProperty(name), "CHECK (a > 0)" or "UNIQUE (a, b)", on v2 and
// v3 tables alike; a PRIMARY KEY's columns are also the schema's
// identifier fields, and NOT NULL (required). The lake enforces them on
// every write (lake/constraints.go): a CHECK must not be false for a row
// written, and a UNIQUE or PRIMARY KEY key written must not equal another
// row's (keys holding a NULL never do, as in PostgreSQL).

// constraintPrefix starts a constraint's property.
const constraintPrefix = "skade.constraint."

// ConstraintProperty is the table property holding constraint name.
func ConstraintProperty(name string) string { return constraintPrefix + name }

// TableConstraint is one bound table constraint.
type TableConstraint struct {
	Name string
	Kind parser.ConstraintKind
	// Check is a CHECK's expression as SQL text.
	Check string
	// Columns are a UNIQUE or PRIMARY KEY's columns, as the schema spells
	// them; a CHECK's are the columns it reads.
	Columns []string
}

// SQL is the constraint as its property keeps it.
func (c TableConstraint) SQL() string {
	switch c.Kind {
	case parser.ConstraintCheck:
		return "CHECK (" + c.Check + ")"
	case parser.ConstraintPrimaryKey:
		return "PRIMARY KEY (" + quotedList(c.Columns) + ")"
	}
	return "UNIQUE (" + quotedList(c.Columns) + ")"
}

func quotedList(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = parser.QuoteIdent(c)
	}
	return strings.Join(q, ", ")
}

// renameColumn is the constraint with column from named to.
func (c TableConstraint) renameColumn(from, to string) TableConstraint {
	out := c
	out.Columns = slices.Clone(c.Columns)
	for i, col := range out.Columns {
		if strings.EqualFold(col, from) {
			out.Columns[i] = to
		}
	}
	if c.Kind == parser.ConstraintCheck {
		if e, err := parser.ParseExpr(c.Check); err == nil {
			parser.Inspect(e, func(n parser.Node) bool {
				if r, ok := n.(*parser.ColumnRef); ok && len(r.Name) > 0 && strings.EqualFold(identName(r.Name[len(r.Name)-1]), from) {
					r.Name[len(r.Name)-1] = parser.Ident{Pos: r.Name[len(r.Name)-1].Pos, Name: to, Quoted: true}
				}
				return true
			})
			out.Check = e.String()
		}
	}
	return out
}

// Unique reports whether the constraint is a UNIQUE or PRIMARY KEY.
func (c TableConstraint) Unique() bool { return c.Kind != parser.ConstraintCheck }

// TableConstraints reads a table's constraints from its properties, by
// name.
func TableConstraints(props iceberg.Properties) ([]TableConstraint, error) {
	var out []TableConstraint
	for k, v := range props {
		name, ok := strings.CutPrefix(k, constraintPrefix)
		if !ok {
			continue
		}
		c, err := parser.ParseConstraint(v)
		if err != nil {
			return nil, fmt.Errorf("constraint %q: its definition %q (table property %s) does not parse: %w", name, v, k, err)
		}
		tc := TableConstraint{Name: name, Kind: c.Kind}
		if c.Kind == parser.ConstraintCheck {
			tc.Check = c.Check.String()
			tc.Columns = checkColumns(c.Check)
		} else {
			for _, id := range c.Columns {
				tc.Columns = append(tc.Columns, id.Name)
			}
		}
		out = append(out, tc)
	}
	slices.SortFunc(out, func(a, b TableConstraint) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// checkColumns are the column names a CHECK expression names, folded as
// the binder folds them, in order of first use.
func checkColumns(e parser.Expr) []string {
	var out []string
	parser.Inspect(e, func(n parser.Node) bool {
		if c, ok := n.(*parser.ColumnRef); ok && len(c.Name) > 0 {
			name := identName(c.Name[len(c.Name)-1])
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
		return true
	})
	return out
}

// CheckEval is a CHECK compiled over batches of given columns.
type CheckEval struct {
	TableConstraint
	Expr exec.Expr
}

// CompileCheck binds a CHECK over a table's columns and compiles it for
// batches whose fields are fields (columns of cols, by name; they must
// include every column the check reads).
func (p *Planner) CompileCheck(ctx context.Context, c TableConstraint, cols []TargetColumn, fields []string) (*CheckEval, error) {
	e, err := parser.ParseExpr(c.Check)
	if err != nil {
		return nil, fmt.Errorf("check constraint %q: %w", c.Name, err)
	}
	b := p.binder(ctx)
	bound, sc, err := b.bindCheck(e, cols)
	if err != nil {
		return nil, fmt.Errorf("check constraint %q: %s", c.Name, errMsg(err))
	}
	l := &layout{pos: map[ColumnID]int{}}
	for i, f := range fields {
		for _, col := range sc.cols {
			if strings.EqualFold(col.Name, f) {
				l.pos[col.ID] = i
			}
		}
		for _, tc := range cols {
			if strings.EqualFold(tc.Name, f) {
				l.types = append(l.types, tc.Type)
			}
		}
	}
	x, err := compile(bound, l)
	if err != nil {
		return nil, fmt.Errorf("check constraint %q: %w", c.Name, err)
	}
	return &CheckEval{TableConstraint: c, Expr: x}, nil
}

// bindCheck binds a CHECK expression over a table's columns: boolean,
// with no subquery, aggregate or window function.
func (b *binder) bindCheck(e parser.Expr, cols []TargetColumn) (Expr, *scope, error) {
	var bad error
	parser.Inspect(e, func(n parser.Node) bool {
		switch n.(type) {
		case *parser.SubqueryExpr, *parser.Exists, *parser.Query:
			if bad == nil {
				bad = errorf(n.Position(), "cannot use subquery in check constraint")
			}
		}
		return true
	})
	if bad != nil {
		return nil, nil, bad
	}
	sccols := make([]Column, len(cols))
	for i, c := range cols {
		sccols[i] = b.newCol(c.Name, "", c.Type, !c.Required)
	}
	sc := newScope(sccols, nil)
	x, err := b.bindExpr(e, &exprCtx{sc: sc, clause: "check constraints"})
	if err != nil {
		return nil, nil, err
	}
	ok := true
	walkExpr(x, func(y Expr) {
		if _, isInit := y.(*InitPlan); isInit {
			ok = false
		}
	})
	if !ok {
		return nil, nil, errorf(e.Position(), "cannot use subquery in check constraint")
	}
	if x.Type().ID() != arrow.BOOL {
		if c, isConst := x.(*Const); !isConst || !c.IsNull() {
			return nil, nil, errorf(e.Position(), "argument of CHECK must be type boolean, not type %s", exec.TypeName(x.Type()))
		}
	}
	return x, sc, nil
}

// bindConstraints binds CREATE TABLE's constraints (the columns' and the
// table's) over its columns: names as PostgreSQL chooses them where the
// SQL gave none, one PRIMARY KEY at most, key columns that exist. The
// result holds the properties and the primary key's columns.
func (p *Planner) bindConstraints(ctx context.Context, table string, st *parser.CreateTable, cols []TargetColumn, existing []TableConstraint) ([]TableConstraint, error) {
	var all []*parser.Constraint
	for _, c := range st.Columns {
		all = append(all, c.Constraints...)
	}
	all = append(all, st.Constraints...)
	return p.bindConstraintList(ctx, table, all, cols, existing)
}

func (p *Planner) bindConstraintList(ctx context.Context, table string, all []*parser.Constraint, cols []TargetColumn, existing []TableConstraint) ([]TableConstraint, error) {
	taken := map[string]bool{}
	hasPK := false
	for _, c := range existing {
		taken[c.Name] = true
		hasPK = hasPK || c.Kind == parser.ConstraintPrimaryKey
	}
	var out []TableConstraint
	for _, c := range all {
		tc := TableConstraint{Kind: c.Kind}
		switch c.Kind {
		case parser.ConstraintCheck:
			if _, _, err := p.binder(ctx).bindCheck(c.Check, cols); err != nil {
				return nil, err
			}
			tc.Check = c.Check.String()
			tc.Columns = checkColumns(c.Check)
		default:
			if c.Kind == parser.ConstraintPrimaryKey {
				if hasPK {
					return nil, &Error{Pos: c.Pos, Msg: fmt.Sprintf("multiple primary keys for table %q are not allowed", table), Err: SQLState("42P16")}
				}
				hasPK = true
			}
			for _, id := range c.Columns {
				name := identName(id)
				i := slices.IndexFunc(cols, func(t TargetColumn) bool { return strings.EqualFold(t.Name, name) })
				if i < 0 {
					var names []string
					for _, t := range cols {
						names = append(names, t.Name)
					}
					return nil, errorf(id.Pos, "column %q named in key does not exist%s", name, didYouMean(name, names))
				}
				if slices.Contains(tc.Columns, cols[i].Name) {
					return nil, errorf(id.Pos, "column %q appears twice in %s constraint", name, map[bool]string{true: "primary key", false: "unique"}[c.Kind == parser.ConstraintPrimaryKey])
				}
				if _, err := exec.NewKeyEncoder([]arrow.DataType{cols[i].Type}); err != nil {
					return nil, errorf(id.Pos, "column %q of type %s cannot be part of a key", name, exec.TypeName(cols[i].Type))
				}
				tc.Columns = append(tc.Columns, cols[i].Name)
			}
		}
		if c.Name.Name != "" {
			tc.Name = identName(c.Name)
			if taken[tc.Name] {
				return nil, &Error{Pos: c.Name.Pos, Msg: fmt.Sprintf("constraint %q for relation %q already exists", tc.Name, table), Err: SQLState("42710")}
			}
		} else {
			tc.Name = chooseConstraintName(table, tc, taken)
		}
		taken[tc.Name] = true
		out = append(out, tc)
	}
	return out, nil
}

// chooseConstraintName names a constraint as PostgreSQL does: table_pkey,
// table_col_key, table_col_check (table_check when a CHECK reads several
// columns or none), with a number added until the name is free.
func chooseConstraintName(table string, c TableConstraint, taken map[string]bool) string {
	var base string
	switch c.Kind {
	case parser.ConstraintPrimaryKey:
		base = table + "_pkey"
	case parser.ConstraintUnique:
		base = table + "_" + strings.Join(c.Columns, "_") + "_key"
	default:
		if len(c.Columns) == 1 {
			base = table + "_" + c.Columns[0] + "_check"
		} else {
			base = table + "_check"
		}
	}
	name := base
	for i := 1; taken[name]; i++ {
		name = fmt.Sprintf("%s%d", base, i)
	}
	return name
}
