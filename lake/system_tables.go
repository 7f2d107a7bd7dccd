package lake

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/plan"
)

// SystemTable is a read-only relation a front door defines, such as
// PostgreSQL's pg_catalog.pg_class: its schema, and its rows computed
// when a statement reads it.
type SystemTable struct {
	Schema *arrow.Schema
	// Rows computes the relation's rows, in Schema; the caller releases
	// the batch.
	Rows func(ctx context.Context) (arrow.RecordBatch, error)
}

// SystemTables resolves a system relation by its lower-case name, as a
// statement names it: "pg_catalog.pg_class", "information_schema.tables",
// or a bare "pg_class". ok is false for a name it does not define, which
// then resolves as usual.
type SystemTables func(name string) (t SystemTable, ok bool)

// SetSystemTables makes the relations f defines visible to the session's
// SQL. A bare name f defines is resolved before a table of that name,
// as PostgreSQL resolves pg_catalog first; registered sources come before
// both. The PostgreSQL server uses it for pg_catalog and
// information_schema.
func (s *Session) SetSystemTables(f SystemTables) { s.system = f }

// SetRelationOIDs makes 'name'::regclass resolve through f, which maps
// a lower-case relation name (system or table, bare or qualified) to the
// OID the front door's catalog gives it.
func (s *Session) SetRelationOIDs(f func(name string) (int64, bool)) { s.oids = f }

// RelationOID implements plan.RelationOIDs.
func (c sessionCatalog) RelationOID(name string) (int64, bool) {
	if c.s.oids == nil {
		return 0, false
	}
	return c.s.oids(name)
}

var _ plan.RelationOIDs = sessionCatalog{}

// systemSource adapts a SystemTable to plan.Source.
type systemSource struct {
	t   SystemTable
	ctx context.Context
}

func (x *systemSource) Schema() *arrow.Schema { return x.t.Schema }
func (x *systemSource) Operator() (exec.Operator, error) {
	b, err := x.t.Rows(x.ctx)
	if err != nil {
		return nil, err
	}
	defer b.Release()
	return exec.NewValues(x.t.Schema, []arrow.RecordBatch{b})
}

func (c sessionCatalog) lookupSystem(name string) *systemSource {
	if c.s.system == nil {
		return nil
	}
	t, ok := c.s.system(strings.ToLower(name))
	if !ok {
		return nil
	}
	return &systemSource{t: t, ctx: context.Background()}
}
