// Package plan turns parsed SQL into executable operator trees: the
// binder resolves names and types, the logical plan says what to compute,
// the optimizer rewrites it (constant folding, predicate and projection
// pushdown into table scans, subqueries into joins), and physical planning
// builds exec operators. EXPLAIN renders both plans.
//
// Layer: plan imports parser, exec, scan, snapshot and catalog, never lake.
// Tables and registered sources are resolved through the Catalog
// interface, which lake implements; a transaction implements it with its
// own staged, uncommitted table metadata, so statements inside it see
// their own writes. plan never writes: DDL and DML are executed by lake,
// which uses plan to bind their queries and predicates. MERGE is bound
// here and handed, as a source operator plus a target, to package
// mergeinto.
//
// Invariants:
//
//   - INVARIANT: a ColumnID names one column of one relation instance for
//     the whole statement; expressions refer to columns by ID only, so
//     rewrites never renumber anything.
//   - INVARIANT: the operator built for a Node outputs exactly
//     Node.Columns(), in order; expressions are compiled against the
//     column order of their input node.
//   - INVARIANT: a filter pushed into a TableScan only prunes; the Filter
//     that holds the full predicate stays above the scan.
//   - INVARIANT: binding never panics on user input; errors name the
//     offending text and, for names, suggest the nearest candidate.
package plan
