// Package peer measures skade against DuckDB side by side, in one
// process, on the same data: each case runs skade and DuckDB alternately
// (A B A B …), so both see the same machine load, and reports medians and
// the skade/DuckDB ratio.
//
// It is a module of its own because DuckDB comes through cgo
// (github.com/duckdb/duckdb-go/v2), and the main module stays pure Go.
// Run it from this directory:
//
//	go test -run '^$' -bench . -benchtime 1x -timeout 60m
//
// BenchmarkWrites is issue 14's table: copy-on-write MERGE (spread and
// range) against DuckDB's native MERGE and against DuckDB rewriting the
// same Parquet files, merge-on-read MERGE against DuckDB writing position
// deletes, the equality-delete upsert against DuckDB writing equality
// deletes, and scans (clean, with a filter on the string column every row
// passes, and after merge-on-read rounds), a GROUP BY of a three-valued
// string column over 18M rows against DuckDB's read_parquet (group-by),
// the same grouped also by id % 10 (group-2key), a GROUP BY id % 1000
// over the 10 clean files (group-int),
// with peak RSS and the page faults each side took
// (memory touched afresh, which on a virtual machine costs about 3 ms per
// MB). Each side's result is checked after every round; skade's
// copy-on-write files are also read back by DuckDB's read_parquet (count,
// rows updated, sum), an independent reader of the row groups skade
// copied and patched. SKADE_PEER_ROWS sets the target's
// rows (default 1,000,000; the targets are at 10,000,000) and
// SKADE_PEER_CASES picks cases by name prefix:
//
//	SKADE_PEER_ROWS=10000000 go test -run '^$' -bench Writes -benchtime 1x -timeout 120m
//
// SKADE_PEER_CSV_MB sets the CSV file's size (default 256; the issue's
// comparison uses 1024), SKADE_PEER_ROUNDS the rounds per case (default
// 5). SKADE_PEER_WARM=1 keeps the Go heap between statements instead of
// returning it to the OS before each (see BenchmarkWrites). BENCHMARKS.md
// records the results with the machine and commit.
//
// Layer: peer imports lake and nothing below it; nothing imports peer.
package peer
