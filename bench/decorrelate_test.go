package bench

import (
	"context"
	"testing"
	"time"
)

// BenchmarkDecorrelated compares, interleaved in one loop over the same
// data, correlated scalar subqueries that the equality fast path plans
// (a grouped left join on the correlation keys) with the same answers
// computed by a dependent join (plan/delim.go), which a correlation
// other than an equality forces: the extra conjunct f.id >= d.k * 0
// holds on every row. Metrics: each query's ms per run and their ratio.
func BenchmarkDecorrelated(b *testing.B) {
	lk := sqlFixture(b)
	ctx := context.Background()
	s := lk.Session()
	pairs := []struct{ name, fast, dependent string }{
		{"count",
			"SELECT count(*) FROM d WHERE (SELECT count(*) FROM f WHERE f.k = d.k) > 5",
			"SELECT count(*) FROM d WHERE (SELECT count(*) FROM f WHERE f.k = d.k AND f.id >= d.k * 0) > 5"},
		{"sum_select_list",
			"SELECT sum(x) FROM (SELECT (SELECT sum(f.v) FROM f WHERE f.k = d.k) AS x FROM d) t",
			"SELECT sum(x) FROM (SELECT (SELECT sum(f.v) FROM f WHERE f.k = d.k AND f.id >= d.k * 0) AS x FROM d) t"},
	}
	run := func(q string) (time.Duration, string) {
		start := time.Now()
		res, err := s.SQL(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		batches, err := res.Collect(ctx)
		if err != nil {
			b.Fatal(err)
		}
		out := ""
		for _, x := range batches {
			for i := 0; i < int(x.NumCols()); i++ {
				out += x.Column(i).ValueStr(0) + " "
			}
			x.Release()
		}
		return time.Since(start), out
	}
	for _, p := range pairs {
		b.Run(p.name, func(b *testing.B) {
			var fast, dep time.Duration
			for i := 0; i < b.N; i++ {
				tf, a := run(p.fast)
				td, c := run(p.dependent)
				if a != c {
					b.Fatalf("answers differ: %s vs %s", a, c)
				}
				fast, dep = fast+tf, dep+td
			}
			b.ReportMetric(float64(fast.Milliseconds())/float64(b.N), "fast_ms")
			b.ReportMetric(float64(dep.Milliseconds())/float64(b.N), "dependent_ms")
			b.ReportMetric(float64(dep)/float64(fast), "dependent/fast")
		})
	}
}
