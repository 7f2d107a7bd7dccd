package lake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
)

// Temporary tables. CREATE [OR REPLACE] TEMP[ORARY] TABLE [IF NOT EXISTS]
// t AS query keeps the query's rows in the session's memory as a
// relation only this session sees, until DROP TABLE t or the session's
// Close (for the PostgreSQL server, the connection's end), as dbt and
// other tools use them: the delta a MERGE, an INSERT … SELECT or a DELETE
// … USING reads. Unlike PostgreSQL's, a temporary table
//
//   - is made only by CREATE … AS (its rows are its query's), and is read
//     only: INSERT, UPDATE, DELETE and MERGE into it are refused;
//   - may not have the name of a table of the default namespace (it
//     would shadow it for reads but not for writes);
//   - is not transactional: ROLLBACK keeps one made inside the
//     transaction.
//
// Its rows count against nothing but the process's memory, as registered
// batches do.

// tempTable is one temporary table: its rows, kept as the query gave them.
type tempTable struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
}

func (t *tempTable) Schema() *arrow.Schema { return t.schema }
func (t *tempTable) Operator() (exec.Operator, error) {
	return exec.NewValues(t.schema, t.batches)
}

func (t *tempTable) release() {
	for _, b := range t.batches {
		b.Release()
	}
	t.batches = nil
}

// tempName is a temporary table's name as sources are keyed (a bare name,
// or pg_temp.name as PostgreSQL also spells it), or "" for a name that
// cannot be one.
func tempName(n parser.Name) string {
	if len(n) == 2 && strings.EqualFold(n[0].Name, "pg_temp") {
		n = n[1:]
	}
	if len(n) != 1 {
		return ""
	}
	return strings.ToLower(n[0].Name)
}

func (s *Session) createTemp(ctx context.Context, st *parser.CreateTable, now time.Time) (*Result, error) {
	what := "create temporary table " + st.Name.String()
	name := tempName(st.Name)
	switch {
	case s.readOnly:
		return nil, errReadOnlyHandle
	case name == "":
		return nil, &sentinelError{ErrInvalidName, fmt.Errorf("%s: a temporary table's name is one plain name (or pg_temp.name); it lives in no schema of the lake", what)}
	case st.AsQuery == nil:
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("%s: skade keeps a temporary table as the rows of a query, read only: use CREATE TEMPORARY TABLE %s AS SELECT …, or CREATE TABLE for a table to write into", what, st.Name)}
	case len(st.PartitionBy) > 0 || len(st.Properties) > 0 || len(st.Constraints) > 0:
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("%s: a temporary table takes no PARTITIONED BY, WITH properties or constraints", what)}
	case st.OrReplace && st.IfNotExists:
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("%s: OR REPLACE and IF NOT EXISTS cannot be combined", what)}
	}
	if src, ok := s.sources[name]; ok {
		_, temp := src.(*tempTable)
		switch {
		case temp && st.IfNotExists:
			return noticeResult([]string{fmt.Sprintf("relation %q already exists, skipping", name)}), nil
		case !temp:
			return nil, &sentinelError{ErrTableExists, fmt.Errorf("%s: the name is registered as a source in this session; Unregister it first", what)}
		case !st.OrReplace:
			return nil, &sentinelError{ErrTableExists, fmt.Errorf("%s: the temporary table already exists; use CREATE OR REPLACE TEMPORARY TABLE or IF NOT EXISTS, or DROP TABLE it", what)}
		}
	}
	if _, err := (sessionCatalog{s}).lookupTable(ctx, []string{name}); err == nil {
		return nil, &sentinelError{ErrTableExists, fmt.Errorf("%s: a table of that name exists in the lake; a temporary table may not shadow it, choose another name", what)}
	} else if !errors.Is(err, ErrTableNotFound) {
		return nil, err
	}
	// the query planned as CREATE TABLE … AS plans it: its columns named
	// and typed as a table's
	plain := *st
	plain.Temporary = false
	ps, err := s.planner(now).Plan(ctx, &plain, false)
	if err != nil {
		return nil, err
	}
	c := ps.Create
	seen := map[string]bool{}
	for _, f := range c.Schema.Fields() {
		if seen[strings.ToLower(f.Name)] {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("%s: column %q is defined twice; rename one of them", what, f.Name)}
		}
		seen[strings.ToLower(f.Name)] = true
	}
	rdr, err := openQueryRows(ctx, c)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	t := &tempTable{schema: c.Schema}
	var n int64
	for rdr.Next() {
		b := rdr.RecordBatch()
		b.Retain()
		t.batches = append(t.batches, b)
		n += b.NumRows()
	}
	if err := rdr.Err(); err != nil {
		t.release()
		return nil, err
	}
	if old, ok := s.temps[name]; ok {
		old.release()
	}
	s.sources[name] = t
	s.temps[name] = t
	return countResult(n, Metrics{RowsInserted: n}), nil
}

// dropTemp drops the temporary table n names, reporting whether there was
// one.
func (s *Session) dropTemp(n parser.Name) bool {
	name := tempName(n)
	t, ok := s.temps[name]
	if !ok {
		return false
	}
	t.release()
	delete(s.temps, name)
	delete(s.sources, name)
	return true
}
