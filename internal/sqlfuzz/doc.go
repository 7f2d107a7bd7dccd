// Package sqlfuzz is a SQLancer-style query fuzzer. From a seed it
// generates a small schema with NULL-heavy data (several INSERTs, then
// UPDATEs and DELETEs, in a lake whose table defaults the seed also picks:
// format version 2 or 3, copy-on-write or merge-on-read, tiny row groups
// and splits), then random queries: joins of every kind, correlated and
// uncorrelated subqueries in every position, aggregates, windows and set
// operations. Each query is checked by an oracle:
//
//   - TLP (ternary logic partitioning): a query's rows equal the union of
//     its rows where a random predicate p is TRUE, FALSE and NULL; also for
//     DISTINCT, GROUP BY, HAVING and MIN/MAX/SUM/COUNT.
//   - NoREC: count(*) … WHERE p equals summing CASE WHEN p THEN 1 over every
//     row, where the planner cannot rewrite p as a filter.
//   - PostgreSQL: a real PostgreSQL server (started by the tests on
//     loopback) answers the same query; the generator keeps to what the
//     two share (C collation, integers, text, booleans and binary-exact
//     doubles).
//
// A seed reproduces everything, so a finding prints its seed with the
// statements that show it.
//
// Layer: internal; test support only. It imports lake and
// internal/sqllogic's value rendering.
package sqlfuzz
