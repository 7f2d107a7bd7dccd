package lake

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

// hasDMLWith reports whether q's WITH holds a data-modifying statement.
func hasDMLWith(q *parser.Query) bool {
	if q.With == nil {
		return false
	}
	for _, c := range q.With.CTEs {
		if c.DML != nil {
			return true
		}
	}
	return false
}

// queryWithDML runs WITH name AS (INSERT|UPDATE|DELETE|MERGE … RETURNING
// …) SELECT …, as PostgreSQL does: each data-modifying statement runs
// once, in order, whether the query reads it or not, and its RETURNING
// rows are what name reads. Everything runs in one transaction (the
// session's, or one of its own), so a failure anywhere, the final SELECT
// included, changes nothing.
//
// One difference from PostgreSQL: other references in the query to a
// table the statement changed see the change (PostgreSQL shows them the
// snapshot from before the statement).
func (s *Session) queryWithDML(ctx context.Context, q *parser.Query, now time.Time) (*Result, error) {
	if s.readOnly {
		return nil, errReadOnlyHandle
	}
	if q.With.Recursive {
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("WITH RECURSIVE with a data-modifying statement is not supported; split the statement")}
	}
	saved := map[string]plan.Source{}
	var names []string
	defer func() {
		for _, n := range names {
			if b, ok := s.sources[n].(*batchSource); ok {
				b.batch.Release()
			}
			delete(s.sources, n)
			if prev, ok := saved[n]; ok {
				s.sources[n] = prev
			}
		}
	}()
	return s.autocommit(ctx, func() (*Result, error) {
		rest := *q
		rest.With = &parser.With{Pos: q.With.Pos}
		for _, c := range q.With.CTEs {
			if c.DML == nil {
				rest.With.CTEs = append(rest.With.CTEs, c)
				continue
			}
			name := strings.ToLower(c.Name.Name)
			if c.Name.Quoted {
				name = c.Name.Name
			}
			batch, err := s.runReturning(ctx, c, now)
			if err != nil {
				return nil, err
			}
			if batch == nil {
				continue // no RETURNING: it ran, and names no rows
			}
			if prev, ok := s.sources[name]; ok {
				saved[name] = prev
			}
			s.sources[name] = &batchSource{batch: batch}
			names = append(names, name)
		}
		if len(rest.With.CTEs) == 0 {
			rest.With = nil
		}
		res, err := s.runPlanned(ctx, &rest, now)
		if err != nil {
			return nil, err
		}
		// the query reads the registered rows: read it whole before they go
		batches, err := res.Collect(ctx)
		if err != nil {
			return nil, err
		}
		return &Result{schema: res.schema, batches: batches}, nil
	})
}

// runReturning runs one data-modifying WITH entry and returns its
// RETURNING rows as one batch, its columns renamed by the entry's column
// list; nil when it has no RETURNING.
func (s *Session) runReturning(ctx context.Context, c *parser.CTE, now time.Time) (arrow.RecordBatch, error) {
	res, err := s.runPlanned(ctx, c.DML, now)
	if err != nil {
		return nil, err
	}
	if !parser.HasReturning(c.DML) {
		res.Close()
		return nil, nil
	}
	schema := res.schema
	batches, err := res.Collect(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	if len(c.Columns) > schema.NumFields() {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("WITH query %q has %d columns available but %d columns specified", c.Name.Name, schema.NumFields(), len(c.Columns))}
	}
	fields := schema.Fields()
	for i, id := range c.Columns {
		fields[i].Name = id.Name
		if !id.Quoted {
			fields[i].Name = strings.ToLower(id.Name)
		}
	}
	schema = arrow.NewSchema(fields, nil)
	cols := make([]arrow.Array, schema.NumFields())
	var rows int64
	for i := range cols {
		parts := make([]arrow.Array, 0, len(batches))
		for _, b := range batches {
			parts = append(parts, b.Column(i))
		}
		if len(parts) == 0 {
			cols[i] = array.MakeArrayOfNull(memoryAllocator, schema.Field(i).Type, 0)
			continue
		}
		if cols[i], err = array.Concatenate(parts, memoryAllocator); err != nil {
			for _, a := range cols[:i] {
				a.Release()
			}
			return nil, err
		}
	}
	for _, b := range batches {
		rows += b.NumRows()
	}
	out := array.NewRecordBatch(schema, cols, rows)
	for _, a := range cols {
		a.Release()
	}
	return out, nil
}
