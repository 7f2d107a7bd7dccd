package exec

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// sortBenchInput builds n rows of (x int64 random, id int64) in batches
// of DefaultBatchRows.
func sortBenchInput(b *testing.B, n int) (*arrow.Schema, []arrow.RecordBatch) {
	b.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int64},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var batches []arrow.RecordBatch
	for lo := 0; lo < n; lo += DefaultBatchRows {
		hi := min(lo+DefaultBatchRows, n)
		xb := array.NewInt64Builder(memory.DefaultAllocator)
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		for i := lo; i < hi; i++ {
			xb.Append(rng.Int64())
			ib.Append(int64(i))
		}
		x, id := xb.NewArray(), ib.NewArray()
		batches = append(batches, array.NewRecordBatch(schema, []arrow.Array{x, id}, int64(hi-lo)))
		x.Release()
		id.Release()
		xb.Release()
		ib.Release()
	}
	b.Cleanup(func() {
		for _, r := range batches {
			r.Release()
		}
	})
	return schema, batches
}

func sortBenchRun(b *testing.B, n int, opts SortOptions) {
	schema, batches := sortBenchInput(b, n)
	keys := []SortKey{{Expr: &Column{Index: 0, Type: arrow.PrimitiveTypes.Int64}}}
	ctx := context.Background()
	if opts.Budget == nil {
		opts.Budget = NewBudget(0) // unlimited, but it records the peak
	}
	var spillFiles int64
	b.ResetTimer()
	for range b.N {
		v, err := NewValues(schema, batches)
		if err != nil {
			b.Fatal(err)
		}
		s, err := NewSort(v, keys, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Open(ctx); err != nil {
			b.Fatal(err)
		}
		for {
			out, err := s.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
		spillFiles = s.Metrics().Extra()["spill_files"]
		s.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(opts.Budget.Peak())/(1<<20), "peak_reserved_MB")
	if spillFiles > 0 {
		b.ReportMetric(float64(spillFiles), "spill_files")
	}
}

// BenchmarkSortTopN is ORDER BY x LIMIT 100 over 10M rows.
func BenchmarkSortTopN(b *testing.B) {
	sortBenchRun(b, 10_000_000, SortOptions{Limit: 100})
}

// BenchmarkSortFull sorts 1M rows in memory.
func BenchmarkSortFull(b *testing.B) {
	sortBenchRun(b, 1_000_000, SortOptions{})
}

// BenchmarkSortSpill sorts 1M rows under a 4 MiB budget (about 8 runs).
func BenchmarkSortSpill(b *testing.B) {
	sortBenchRun(b, 1_000_000, SortOptions{Budget: NewBudget(4 << 20), SpillDir: b.TempDir()})
}
