// Package scan turns stored files into Arrow record streams: it reads
// external CSV and Parquet files (import, COPY FROM, read_csv,
// read_parquet) with type inference over a sample of rows; it plans
// Iceberg table scans for queries and DML alike (a query's files and read
// options, query.go; whole files for the paths that replace or number
// them, files.go; the sound part of a filter for planning, plan_filter.go,
// and for reading, read_filter.go); and it reads the planned files into
// Arrow (read.go:
// OpenFiles, several files at once, file_reader.go) with their position
// and equality deletes applied (deletes.go). exec's TableScan is the
// operator over OpenFiles.
//
// Layer: scan sits above snapshot and below exec. It imports arrow-go and
// iceberg-go, and may import skade's catalog and snapshot packages (it
// needs neither today).
//
// Invariants:
//
//   - INVARIANT: a reader returned here owns its open files and closes them
//     when released, whether or not it was read to the end.
//   - INVARIANT: a value that does not parse as its column's type is an
//     error naming the file, line and column; it is never silently NULL.
//   - INVARIANT: a path that replaces a data file, or numbers its rows for
//     position deletes, plans through PlanWholeFiles: one task per file,
//     covering it from byte 0 to its end (files.go). Only queries read
//     iceberg-go's splits of a file.
//   - INVARIANT: files are planned with PlanFilter's part of a filter,
//     which leaves out what iceberg-go's statistics cannot judge soundly
//     (plan_filter.go); it is implied by the filter, which is evaluated
//     exactly above the scan.
//   - INVARIANT: table data is read into ReadBuffers (buffer_pool.go),
//     whose freed buffers serve later reads. Whoever holds a batch from a
//     scan holds a reference to it while reading it; what leaves the
//     engine goes through Detached first (lake.Result does this).
package scan
