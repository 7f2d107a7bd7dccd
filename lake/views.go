package lake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

// viewDialect names the SQL of skade's view representations. Iceberg
// views carry one SQL text per dialect; skade writes its own, which is
// close to Spark's and PostgreSQL's.
const viewDialect = "skade"

// createView runs CREATE [OR REPLACE] VIEW: the query is planned (never
// run) to check it and to learn its columns, and stored as an Iceberg
// view in the catalog, by its canonical text. A view is expanded where a
// query names it, so it always reads the tables' current data.
func (s *Session) createView(ctx context.Context, st *parser.CreateView, now time.Time) (*Result, error) {
	if st.OrReplace && st.IfNotExists {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("create view %s: OR REPLACE and IF NOT EXISTS cannot be combined", st.Name)}
	}
	id, err := s.lk.ident(tableName(st.Name))
	if err != nil {
		return nil, err
	}
	var tv *txView
	if s.tx != nil {
		if e, err := s.tx.entry(ctx, id); err != nil {
			return nil, err
		} else if e.meta != nil {
			return nil, &sentinelError{ErrTableExists, fmt.Errorf("create view %s: a table has that name; a name is a table's or a view's", displayName(id))}
		}
		if tv, err = s.tx.view(ctx, id); err != nil {
			return nil, err
		}
	}
	if st.IfNotExists {
		exists := false
		if tv != nil {
			exists = tv.cur != nil
		} else if _, err := s.lk.cat.LoadView(ctx, id); err == nil {
			exists = true
		}
		if exists {
			return noticeResult([]string{fmt.Sprintf("view %q already exists, skipping", displayName(id))}), nil
		}
	}
	if tv != nil && tv.cur != nil && !st.OrReplace {
		return nil, &sentinelError{ErrTableExists, fmt.Errorf("view %s already exists; use CREATE OR REPLACE VIEW", displayName(id))}
	}
	ps, err := s.planner(now).Plan(ctx, st.Query, true)
	if err != nil {
		return nil, err
	}
	schema := ps.Query.Schema()
	ps.Release()
	fields := schema.Fields()
	if len(st.Columns) > 0 {
		if len(st.Columns) != len(fields) {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("create view %s: %d column names given for a query of %d columns", displayName(id), len(st.Columns), len(fields))}
		}
		for i, c := range st.Columns {
			fields[i].Name = c.Name
			if !c.Quoted {
				fields[i].Name = strings.ToLower(c.Name)
			}
		}
	}
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[strings.ToLower(f.Name)] {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("create view %s: column %q appears twice; name the columns apart", displayName(id), f.Name)}
		}
		seen[strings.ToLower(f.Name)] = true
	}
	isch, err := table.ArrowSchemaToIcebergWithFreshIDs(arrow.NewSchema(fields, nil), true)
	if err != nil {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("create view %s: %w", displayName(id), err)}
	}
	if tv != nil {
		if err := s.tx.stageView(ctx, tv, st.Query.String(), isch); err != nil {
			return nil, translate(err)
		}
		s.lastStaged = !s.tx.implicit
		return emptyResult(), nil
	}
	if _, err := s.lk.cat.CreateView(ctx, id, st.Query.String(), viewDialect, isch, st.OrReplace); err != nil {
		return nil, translate(err)
	}
	return emptyResult(), nil
}

// dropView runs DROP VIEW.
func (s *Session) dropView(ctx context.Context, st *parser.DropView) (*Result, error) {
	id, err := s.lk.ident(tableName(st.Name))
	if err != nil {
		return nil, err
	}
	var found bool
	if s.tx != nil {
		tv, err := s.tx.view(ctx, id)
		if err != nil {
			return nil, err
		}
		found = tv.cur != nil
		tv.cur = nil
		s.lastStaged = found && !s.tx.implicit
	} else if found, err = s.lk.cat.DropView(ctx, id); err != nil {
		return nil, err
	}
	if !found {
		if st.IfExists {
			return noticeResult([]string{fmt.Sprintf("view %q does not exist, skipping", displayName(id))}), nil
		}
		return nil, &sentinelError{ErrTableNotFound, fmt.Errorf("view %s does not exist", displayName(id))}
	}
	return emptyResult(), nil
}

// LookupView returns the query and column names of the view name, or ok
// false when name is no view (plan.Views).
func (c sessionCatalog) LookupView(ctx context.Context, name []string) (string, []string, bool, error) {
	id, err := catalog.Normalize(name)
	if err != nil {
		return "", nil, false, nil // not a view name; the table lookup says why
	}
	var v *catalog.View
	if c.s.tx != nil {
		tv, err := c.s.tx.view(ctx, id)
		if err != nil {
			return "", nil, false, err
		}
		v = tv.cur
	} else {
		v, err = c.s.lk.cat.LoadView(ctx, id)
		if errors.Is(err, catalog.ErrViewNotFound) {
			return "", nil, false, nil
		}
		if err != nil {
			return "", nil, false, err
		}
	}
	if v == nil {
		return "", nil, false, nil
	}
	var cols []string
	if sch := v.Metadata.CurrentSchema(); sch != nil {
		for _, f := range sch.Fields() {
			cols = append(cols, f.Name)
		}
	}
	return v.SQL(), cols, true, nil
}

var _ plan.Views = sessionCatalog{}

// ViewInfo describes a view: its name, its query's text, and the columns
// it yields (Arrow types, as a table's Schema).
type ViewInfo struct {
	Namespace, Name string
	SQL             string
	Schema          *arrow.Schema
}

// Views lists the lake's views, sorted by namespace and name.
func (l *Lake) Views(ctx context.Context) ([]ViewInfo, error) {
	nss, err := l.Namespaces(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(nss)
	var out []ViewInfo
	for _, ns := range nss {
		names, err := l.cat.ListViews(ctx, ns)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			v, err := l.cat.LoadView(ctx, table.Identifier{ns, n})
			if errors.Is(err, catalog.ErrViewNotFound) {
				continue // dropped meanwhile
			}
			if err != nil {
				return nil, err
			}
			info, err := viewInfo(ns, n, v)
			if err != nil {
				return nil, err
			}
			out = append(out, info)
		}
	}
	return out, nil
}

func viewInfo(ns, name string, v *catalog.View) (ViewInfo, error) {
	info := ViewInfo{Namespace: ns, Name: name, SQL: v.SQL(), Schema: arrow.NewSchema(nil, nil)}
	if sch := v.Metadata.CurrentSchema(); sch != nil {
		as, err := table.SchemaToArrowSchema(sch, nil, false, false)
		if err != nil {
			return info, fmt.Errorf("view %s.%s: %w", ns, name, err)
		}
		info.Schema = as
	}
	return info, nil
}
