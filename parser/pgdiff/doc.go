// Package pgdiff compares skade's SQL parser with PostgreSQL's own grammar
// (libpg_query through github.com/pganalyze/pg_query_go/v6).
//
// It is a separate module with cgo so that the main module never depends
// on pg_query_go; see README.md for how to run it.
//
// Both parsers' ASTs are normalised to one small shape, an S-expression
// string: the statement kind, table and column names, clause kinds and
// counts, and expression operator trees. Unquoted identifiers are
// lower-cased (PostgreSQL folds them), AND/OR chains are flattened (gram.y
// does), and PostgreSQL's special nodes (CoalesceExpr, MinMaxExpr,
// SQLValueFunction, NullTest, BooleanTest, SubLink, …) map onto the same
// shapes as skade's function calls and predicates.
package pgdiff
