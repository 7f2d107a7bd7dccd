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
// SKADE_PEER_CSV_MB sets the CSV file's size (default 256; the issue's
// comparison uses 1024), SKADE_PEER_ROUNDS the rounds per case (default
// 5). BENCHMARKS.md records the results with the machine and commit.
//
// Layer: peer imports lake and nothing below it; nothing imports peer.
package peer
