package bench

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skadedb/skade/lake"
)

// sqlRows sizes the SQL benchmarks' fact table; the figures use
// -sqlrows 10000000 (the dimension table and group count scale with it).
var sqlRows = flag.Int("sqlrows", 1_000_000, "rows of the SQL benchmarks' fact table")

// sqlFixture builds a fact table f(id, k, v, s) of -sqlrows rows in 10
// files and a dimension d(k, name) of rows/10 rows, in b's temp dir.
func sqlFixture(b *testing.B) *lake.Lake {
	ctx := context.Background()
	lk, err := lake.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lk.Close() })
	n := *sqlRows
	script := "CREATE TABLE f (id BIGINT, k BIGINT, v DOUBLE, s VARCHAR); CREATE TABLE d (k BIGINT, name VARCHAR);"
	for i := 0; i < 10; i++ {
		lo, hi := i*n/10, (i+1)*n/10
		script += fmt.Sprintf("INSERT INTO f SELECT range, range %% %d, range * 0.5, 'row' || (range %% 100) FROM range(%d, %d);", max(n/10, 1), lo, hi)
	}
	script += fmt.Sprintf("INSERT INTO d SELECT range, 'name' || range FROM range(%d);", max(n/10, 1))
	if err := lk.Session().Exec(ctx, script); err != nil {
		b.Fatal(err)
	}
	return lk
}

// runSQL runs q b.N times and reports rows/s of the fact table and the
// peak heap in use while it ran.
func runSQL(b *testing.B, q string) {
	lk := sqlFixture(b)
	ctx := context.Background()
	s := lk.Session()
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		res, err := s.SQL(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		batches, err := res.Collect(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, x := range batches {
			x.Release()
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	close(stop)
	<-done
	b.ReportMetric(float64(*sqlRows)*float64(b.N)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak_heap_MB")
}

func BenchmarkSQLScanCountSum(b *testing.B) {
	runSQL(b, "SELECT count(v), sum(v) FROM f")
}

func BenchmarkSQLSelectiveFilter(b *testing.B) {
	runSQL(b, fmt.Sprintf("SELECT id, s FROM f WHERE id BETWEEN %d AND %d", *sqlRows/2, *sqlRows/2+100))
}

func BenchmarkSQLHashJoin(b *testing.B) {
	runSQL(b, "SELECT count(*), max(name) FROM f JOIN d ON f.k = d.k")
}

func BenchmarkSQLGroupBy(b *testing.B) {
	runSQL(b, "SELECT k, sum(v) FROM f GROUP BY k")
}

func BenchmarkSQLOrderByLimit(b *testing.B) {
	runSQL(b, "SELECT id, v FROM f ORDER BY v DESC LIMIT 100")
}
