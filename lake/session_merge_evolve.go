package lake

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
)

// mergeWithSchemaEvolution runs MERGE WITH SCHEMA EVOLUTION INTO (Spark
// 4.1's form): before the MERGE binds, in the same transaction, and so in
// the same commit, every source column that an UPDATE SET * or INSERT *
// clause would write (by name, leaving out its EXCEPT list) and that the
// target lacks is added to the target, and every target column such a
// clause writes with a wider source type that Iceberg allows to widen to
// (int to bigint, float to double, a decimal to a larger precision of the
// same scale) is widened. Other type differences are left to the MERGE,
// which casts or refuses them as usual. Explicit SET col = … and INSERT
// (cols) … add nothing: they name target columns.
func (s *Session) mergeWithSchemaEvolution(ctx context.Context, m *parser.Merge, now time.Time) (*Result, error) {
	plain := *m
	plain.SchemaEvolution = false
	return s.autocommit(ctx, func() (*Result, error) {
		if err := s.evolveForMerge(ctx, m); err != nil {
			return nil, err
		}
		return s.runPlanned(ctx, &plain, now)
	})
}

func (s *Session) evolveForMerge(ctx context.Context, m *parser.Merge) error {
	anyStar := false
	for _, c := range m.Clauses {
		_, star := starClause(c)
		anyStar = anyStar || star
	}
	if !anyStar {
		return nil
	}
	src, err := s.describeRows(ctx, m.With, m.Source)
	if err != nil {
		return fmt.Errorf("merge with schema evolution: the source: %w", err)
	}
	tgt, err := s.describeRows(ctx, nil, &parser.TableName{Pos: m.Pos, Name: m.Target})
	if err != nil {
		return err
	}
	have := map[string]arrow.DataType{}
	for _, f := range tgt.Fields() {
		have[strings.ToLower(f.Name)] = f.Type
	}
	var alters []string
	for _, f := range src.Fields() {
		name := strings.ToLower(f.Name)
		if !starWrites(m, name) {
			continue
		}
		t, ok := have[name]
		switch {
		case !ok:
			alters = append(alters, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", m.Target, quoteIdent(f.Name), exec.TypeName(f.Type)))
			have[name] = f.Type
		case widens(t, f.Type):
			alters = append(alters, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s TYPE %s", m.Target, quoteIdent(f.Name), exec.TypeName(f.Type)))
		}
	}
	for _, a := range alters {
		st, err := parser.ParseOne(a)
		if err != nil {
			return fmt.Errorf("merge with schema evolution: %s: %w", a, err)
		}
		res, err := s.runStmt(ctx, st)
		if err != nil {
			return fmt.Errorf("merge with schema evolution: %s: %w", a, err)
		}
		res.Close()
	}
	return nil
}

// starWrites reports whether some UPDATE SET * or INSERT * clause of m
// writes the source column name (it is not in that clause's EXCEPT).
func starWrites(m *parser.Merge, name string) bool {
	for _, c := range m.Clauses {
		except, star := starClause(c)
		if star && !slices.ContainsFunc(except, func(id parser.Ident) bool { return strings.EqualFold(id.Name, name) }) {
			return true
		}
	}
	return false
}

// starClause reports whether c is UPDATE SET * or INSERT *, and its
// EXCEPT list.
func starClause(c *parser.MergeClause) (except []parser.Ident, star bool) {
	switch a := c.Action.(type) {
	case *parser.MergeUpdate:
		return a.Except, a.Star
	case *parser.MergeInsert:
		return a.Except, a.Star
	}
	return nil, false
}

// widens reports whether Iceberg allows a column of type from to become
// to: int to bigint, float to double, a decimal to a larger precision of
// the same scale.
func widens(from, to arrow.DataType) bool {
	switch {
	case from.ID() == arrow.INT32 && to.ID() == arrow.INT64:
		return true
	case from.ID() == arrow.FLOAT32 && to.ID() == arrow.FLOAT64:
		return true
	case from.ID() == arrow.DECIMAL128 && to.ID() == arrow.DECIMAL128:
		f, t := from.(*arrow.Decimal128Type), to.(*arrow.Decimal128Type)
		return f.Scale == t.Scale && t.Precision > f.Precision
	}
	return false
}

// describeRows is the schema of SELECT * FROM from (with with's CTEs),
// without running it.
func (s *Session) describeRows(ctx context.Context, with *parser.With, from parser.TableExpr) (*arrow.Schema, error) {
	pos := from.Position()
	q := &parser.Query{Pos: pos, With: with, Body: &parser.Select{Pos: pos,
		Items: []*parser.SelectItem{{Pos: pos, Expr: &parser.Star{Pos: pos}}}, From: []parser.TableExpr{from}}}
	d, err := s.Describe(ctx, q, 0)
	if err != nil {
		return nil, err
	}
	if d.Schema == nil {
		return nil, fmt.Errorf("the query returns no rows (bug)")
	}
	return d.Schema, nil
}
