// Package snapshot owns what happens to a table's history: the table
// defaults the engine sets at creation (and why, defaults.go), the commit
// policy (policy.go: which write path a table's properties choose, and
// how long a write that lost a commit race waits before it runs again),
// the snapshot history and time travel lookups (history.go), snapshot
// expiry (expire.go), orphan file cleanup (orphans.go) and dropping a
// table's files (purge.go), and the commit itself (commit.go: a write
// transaction through tracked IO, the removal of a failed attempt's files,
// the unknown-outcome check, the removal of retried attempts' strays).
// lake re-plans and re-runs a statement that lost a commit race
// (lake/session_retry.go) with RetryPolicy's waits, since only it can
// plan a statement again.
//
// Layer: snapshot sits above catalog and below scan. It imports iceberg-go,
// arrow-go and skade's catalog; nothing else of skade.
//
// Invariants:
//
//   - INVARIANT: a file is deleted only when no retained snapshot of any
//     table in the lake reaches it. Tables may share data files (CLONE), so
//     expiry and orphan cleanup always take the references of the other
//     tables into account (the Refs callback).
//   - INVARIANT: file deletion happens only after the metadata commit that
//     stopped referencing the files has landed. A failed commit deletes
//     nothing that a live snapshot reads.
package snapshot
