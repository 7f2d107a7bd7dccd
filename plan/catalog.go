package plan

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
)

// Catalog resolves the names a statement uses. lake implements it over
// the lake's catalog; a transaction implements it over its staged
// metadata, so that reads inside the transaction see its own writes.
type Catalog interface {
	// LookupTable resolves a (possibly dotted) table name to the table's
	// current metadata, which may be staged and uncommitted. A missing
	// table is an error whose text says so (and suggests a near name).
	LookupTable(ctx context.Context, name []string) (*TableRef, error)
	// LookupSource returns a source registered under name, or nil. A
	// two-part name (schema.name, such as pg_catalog.pg_class) asks for a
	// system relation.
	LookupSource(name string) Source
}

// ExternalTables is what a Catalog implements to read Iceberg tables it
// does not hold (iceberg_scan): location is a metadata file or a table
// directory.
type ExternalTables interface {
	OpenIcebergTable(ctx context.Context, location string) (*table.Table, error)
}

// Views is what a Catalog implements to hold views: LookupView returns
// a view's query text and column names, or ok false when name is no view.
type Views interface {
	LookupView(ctx context.Context, name []string) (query string, columns []string, ok bool, err error)
}

// TableRef is a resolved table.
type TableRef struct {
	// Name is how messages and EXPLAIN name the table (namespace.table).
	Name  string
	Ident table.Identifier
	// Table is the iceberg-go table with the metadata to read: committed,
	// or staged by the current transaction. For a branch or tag it is
	// the ref's view (snapshot.OnRef): its current snapshot is the ref's.
	Table *table.Table
	// Branch is the branch a write through this reference commits to;
	// empty for main. Tag is set for a tag, which is read-only.
	Branch, Tag string
}

// Source is a relation registered in a session: an Arrow batch, a reader,
// a CSV or Parquet file.
type Source interface {
	// Schema has canonical column types (see exec).
	Schema() *arrow.Schema
	// Operator returns an operator reading the source. A source that can
	// be read only once (a registered reader) fails the second time.
	Operator() (exec.Operator, error)
}
