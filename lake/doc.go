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
