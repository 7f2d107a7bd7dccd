// Package lake is skade's public Go API: open a lake directory, create,
// read, append to and maintain Iceberg tables, and run SQL in sessions.
//
//	lk, err := lake.Open(ctx, "./skade-lake")
//	...
//	defer lk.Close()
//	tbl, err := lk.Table(ctx, "events")
//	rdr, err := tbl.Scan(ctx, lake.Columns("id", "status"))
//
// A lake can also live in S3 or an S3-compatible store, its catalog in a
// local file, or use an Iceberg REST catalog in place of the catalog file:
//
//	lk, err := lake.Open(ctx, "s3://bucket/prefix", lake.WithCatalogFile("./catalog.db"))
//	lk, err := lake.Open(ctx, "rest+http://catalog:8181", lake.WithCatalogAuth("", "id:secret"))
//
// # Results
//
// Every statement returns a *Result. Close it, or read it to its end
// (Collect, or its Reader until Next is false), which closes it too: a
// query's Result streams, and until it is closed it holds open files and
// its share of the memory limit. A Result garbage collected open is
// closed then, and a warning is logged. A session may hold several open
// Results and run more statements, writes included, while they are open;
// each Result reads the snapshot its statement saw.
//
// # Errors
//
// Errors wrap the sentinels in errors.go (errors.Is(err,
// lake.ErrTableNotFound)). A statement's error is also a *Error, whose
// fields give the PostgreSQL SQLSTATE, the hint and where in the statement
// it points.
//
// # Types
//
// SQL types map to Arrow types: BIGINT is int64, VARCHAR is string,
// TIMESTAMPTZ is a microsecond timestamp in UTC, and so on. As in
// PostgreSQL, sum() of an integer column is NUMERIC (Arrow Decimal128
// with scale 0), so that it cannot overflow; Result.Int64s reads such a
// column, or any integer one, as int64s.
//
// Layer: lake is the top of the engine; only cmd/skade and bench import
// it. It imports every other skade package it needs. Ordinary users need
// nothing but lake.
//
// Invariants:
//
//   - INVARIANT: a *Table is pinned to one snapshot and never changes.
//     Writes return a new *Table pinned to the snapshot they committed.
//   - INVARIANT: a write that fails to commit removes every file it wrote,
//     and leaves the table exactly as it was.
//   - INVARIANT: errors returned here wrap one of the sentinels in
//     errors.go, so callers can test them with errors.Is.
package lake
