// Package mergeinto executes MERGE INTO below SQL binding: it validates a
// bound statement (Spec), builds a hash table on the source, prunes the
// target's data files, streams the candidates one file at a time through
// the clauses, rewrites only the files that changed (copy-on-write) or
// writes position deletes for the changed rows (merge-on-read), writes
// NOT MATCHED inserts to new files, and stages one snapshot (an overwrite,
// or a row delta) into the caller's transaction. docs/merge.md describes
// the algorithm.
//
// It is also the row-rewrite engine of copy-on-write DELETE and UPDATE:
// Rewrite (rewrite.go) takes the candidate files and, per file, an
// operator that yields each live row with a match flag and its new
// values, and writes through the same copy-on-write sink (fileRewrite),
// ledger and staging as MERGE, reading each file once.
//
// Layer: mergeinto sits above exec and below plan. It imports arrow-go,
// iceberg-go and skade's exec and scan packages; it never imports plan or
// lake.
// plan binds a parsed MERGE into a Spec and calls Validate and Execute;
// lake owns the transaction and commits it.
//
// Contract in brief:
//
//	spec := &mergeinto.Spec{Table: "events", Target: tbl, Snapshot: tbl.CurrentSnapshot(),
//		Source: op, Keys: []mergeinto.Key{{Target: 0, Source: srcID}},
//		Clauses: []mergeinto.Clause{
//			{Kind: mergeinto.Matched, Action: mergeinto.Update(mergeinto.Assignment{Column: 1, Expr: newStatus})},
//			{Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Insert(id, status)},
//		}}
//	if err := mergeinto.Validate(spec); err != nil { ... }   // refusals, at bind time
//	res, err := mergeinto.Execute(ctx, spec, txn)             // stages; the caller commits
//
// Invariants:
//
//   - INVARIANT: Execute never commits. It stages at most one snapshot into
//     the transaction, after every file is written, with an
//     AssertRefSnapshotID requirement on the main branch. A merge that
//     changes nothing stages nothing.
//   - INVARIANT: every error (a cardinality violation included) is
//     returned before anything is staged, and the data files Execute wrote
//     are removed through the target's IO before it returns.
//   - INVARIANT: at most one target data file is read at a time; memory is
//     the source hash table (reserved in Spec.Budget) plus one file's
//     unchanged prefix (bounded by Options.BufferLimit, also reserved) plus
//     the buffers of at most two rewrite writers (the file being read and
//     the previous one, still compressing) and the insert writer. Each
//     writer queues up to 66 batches ahead of its encoder, as iceberg-go's
//     rolling writer queues 64 (writer.go, direct_writer.go).
//   - INVARIANT: a data file with no updated or deleted row is neither
//     written nor removed; a file whose every row is deleted is removed and
//     not replaced.
//   - INVARIANT: user data never causes a panic; errors a user can trigger
//     are *Error or *CardinalityError values carrying a SQLSTATE.
package mergeinto
