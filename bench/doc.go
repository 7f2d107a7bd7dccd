// Package bench holds skade's go test -bench suites. Run them with
//
//	go test -run '^$' -bench . -benchtime 1x ./bench
//
// and compare runs with benchstat. Domain figures (per-commit latencies,
// files rewritten, bytes written, rows/s, peak memory) are reported with
// b.ReportMetric. BENCHMARKS.md records the results with the machine and
// the command.
package bench
