// Package sqllogic runs sqllogictest files (.slt) against a fresh lake,
// DuckDB/DataFusion style:
//
//	statement ok
//	CREATE TABLE t (a INTEGER)
//
//	statement error does not exist
//	SELECT * FROM nope
//
//	query IT rowsort
//	SELECT a, b FROM t
//	----
//	1	x
//
// A record ends at a blank line. In query records the letters after
// "query" give the column count (I integer, R real/decimal, T text, B
// boolean, D date/time); "rowsort" sorts the rows before comparing.
// Values print tab-separated, NULL as NULL, the empty string as
// (empty). "__TESTDATA__" in SQL is replaced by the repository's testdata
// directory and "__TEMP__" by the file's temporary directory. Results
// mask snapshot ids in EXPLAIN text as @<snapshot> and timings as time=?.
//
// Layer: internal; test support only.
package sqllogic
