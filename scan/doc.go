// Package scan turns stored files into Arrow record streams: it reads
// external CSV and Parquet files (import, COPY FROM, read_csv,
// read_parquet) with type inference over a sample of rows, and (with the
// SQL engine) plans Iceberg table scans with partition and min/max pruning
// and applies delete files.
//
// Layer: scan sits above snapshot and below exec. It imports arrow-go,
// iceberg-go and skade's catalog and snapshot packages.
//
// Invariants:
//
//   - INVARIANT: a reader returned here owns its open files and closes them
//     when released, whether or not it was read to the end.
//   - INVARIANT: a value that does not parse as its column's type is an
//     error naming the file, line and column; it is never silently NULL.
package scan
