// Package plan turns parsed SQL into executable operator trees: the
// binder resolves names and types, the logical plan says what to compute,
// the optimizer rewrites it (constant folding, predicate and projection
// pushdown into table scans, subqueries into joins), and physical planning
// builds exec operators. Planner.Plan is the one entry point: it returns a
// Statement for a query, a DML write (plan.Write, the root of INSERT,
// DELETE, UPDATE and MERGE plans, lowered onto mergeinto) or DDL that binds
// names (CREATE TABLE, ALTER TABLE), and Statement.Explain renders EXPLAIN
// for all of them. Uncorrelated subqueries in queries are init plans
// (initplan.go), run by an optimizer rule, not by the binder.
//
// Layer: plan imports parser, exec, scan, snapshot, mergeinto and catalog,
// never lake.
// Tables and registered sources are resolved through the Catalog
// interface, which lake implements; a transaction implements it with its
// own staged, uncommitted table metadata, so statements inside it see
// their own writes. plan never writes or commits: lake runs a planned
// write inside its commit (mergeinto.Rewrite, mergeinto.Execute, an
// append) and applies bound DDL to the catalog.
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
