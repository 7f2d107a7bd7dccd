package parser_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skadedb/skade/parser"
)

// BenchmarkParseMerge parses the merge-into guide's statement. The issue's
// target is at least 50,000 parses per second per core.
func BenchmarkParseMerge(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(guideMerge)))
	cpu := processCPU()
	for b.Loop() {
		if _, err := parser.Parse(guideMerge); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "parses/s")
}

// insertRows builds INSERT INTO events VALUES with n rows of five typed
// columns, the shape a bulk load from a client produces.
func insertRows(n int) string {
	var sb strings.Builder
	sb.WriteString("INSERT INTO skade.main.events (id, status, amount, seen_at, note) VALUES\n")
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(",\n")
		}
		sb.WriteString("(")
		sb.WriteString(strconv.Itoa(i))
		sb.WriteString(", 'status-")
		sb.WriteString(strconv.Itoa(i % 7))
		sb.WriteString("', ")
		sb.WriteString(strconv.Itoa(i * 3))
		sb.WriteString(".25, TIMESTAMP '2024-01-01 00:00:00', NULL)")
	}
	return sb.String()
}

// BenchmarkParseInsert10k parses a 10,000-row INSERT … VALUES. The issue's
// target is under 30 ms.
func BenchmarkParseInsert10k(b *testing.B) {
	sql := insertRows(10000)
	b.ReportAllocs()
	b.SetBytes(int64(len(sql)))
	cpu := processCPU()
	for b.Loop() {
		if _, err := parser.Parse(sql); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/parse")
	b.ReportMetric(10000*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkDeparseMerge measures String() on the guide's statement.
func BenchmarkDeparseMerge(b *testing.B) {
	s, err := parser.ParseOne(guideMerge)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = s.String()
	}
}

// reportCPU reports the process CPU time per iteration since start, so a run
// on a busy shared machine still shows what one parse costs.
func reportCPU(b *testing.B, start time.Duration) {
	if start == 0 {
		return
	}
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}
