package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/skadedb/skade/lake"
)

// BenchmarkConstraintCost is what enforcing a PRIMARY KEY and a CHECK
// costs a write (issue 15 item 3): the same statements on two 1M-row
// tables of 10 files, one plain and one with the constraints, run
// alternately in one loop. Reports each statement's median milliseconds
// on both and their ratio.
//
//   - insert_tail: 10,000 new keys past the table's end. The added keys'
//     statistics rule out every file: only the new file is read.
//   - insert_spread: 10,000 new keys between existing ones across the
//     whole range: every file's key column is read and probed.
//   - merge: a 1% MERGE (10,000 keys spread, updating a non-key column,
//     plus 1,000 inserts), copy-on-write.
func BenchmarkConstraintCost(b *testing.B) {
	const rows, files = 1_000_000, 10
	ctx := context.Background()
	lk, err := lake.Open(ctx, filepath.Join(b.TempDir(), "lake"))
	if err != nil {
		b.Fatal(err)
	}
	defer lk.Close()
	s := lk.Session()
	run := func(sql string) time.Duration {
		start := time.Now()
		res, err := s.SQL(ctx, sql)
		if err != nil {
			b.Fatalf("%s: %v", sql, err)
		}
		res.Close()
		return time.Since(start)
	}
	defs := map[string]string{
		"plain":       "CREATE TABLE plain (id BIGINT NOT NULL, v INTEGER, pad VARCHAR)",
		"constrained": "CREATE TABLE constrained (id BIGINT PRIMARY KEY, v INTEGER CHECK (v >= 0), pad VARCHAR)",
	}
	for _, t := range []string{"plain", "constrained"} {
		run(defs[t])
		for f := 0; f < files; f++ {
			// even ids, one contiguous range per file
			lo := f * rows / files
			run(fmt.Sprintf("INSERT INTO %s SELECT 2*i, i %% 100, 'row' || i FROM range(%d, %d) r(i)", t, lo, lo+rows/files))
		}
	}
	cases := []struct {
		name string
		sql  func(t string, it int) string
	}{
		{"insert_tail", func(t string, it int) string {
			base := 2*rows + it*20000
			return fmt.Sprintf("INSERT INTO %s SELECT %d + i, 1, 'new' FROM range(10000) r(i)", t, base)
		}},
		{"insert_spread", func(t string, it int) string {
			// odd ids spread over the whole range, distinct per iteration
			return fmt.Sprintf("INSERT INTO %s SELECT 2*(i*100 + %d) + 1, 1, 'new' FROM range(10000) r(i)", t, it%100)
		}},
		{"merge", func(t string, it int) string {
			return fmt.Sprintf(`MERGE INTO %[1]s USING (SELECT 2*(i*100 + %[2]d) AS id FROM range(10000) r(i)
				UNION ALL SELECT %[3]d + i FROM range(1000) r(i)) s ON %[1]s.id = s.id
				WHEN MATCHED THEN UPDATE SET v = %[1]s.v + 1 WHEN NOT MATCHED THEN INSERT VALUES (s.id, 0, 'm')`, t, it%100, 4*rows+it*2000)
		}},
	}
	times := map[string][]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range cases {
			order := []string{"plain", "constrained"}
			if i%2 == 1 {
				order = []string{"constrained", "plain"}
			}
			for _, t := range order {
				times[c.name+"/"+t] = append(times[c.name+"/"+t], run(c.sql(t, i)))
			}
		}
	}
	b.StopTimer()
	median := func(ds []time.Duration) float64 {
		ds = append([]time.Duration(nil), ds...)
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	for _, c := range cases {
		p, k := median(times[c.name+"/plain"]), median(times[c.name+"/constrained"])
		b.ReportMetric(p, c.name+"_plain_ms")
		b.ReportMetric(k, c.name+"_constrained_ms")
		b.ReportMetric(k/p, c.name+"_ratio")
	}
}
