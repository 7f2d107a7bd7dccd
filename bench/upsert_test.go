package bench

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/lake"
)

// BenchmarkUpsert is the equality-delete upsert of issue 14: 1.1M records
// (1M existing keys, 100,000 new) into a 1M-row table, each iteration on
// a fresh copy of the table's state (the target is rebuilt untimed).
// Reports rows/s of the upsert itself.
func BenchmarkUpsert(b *testing.B) {
	const rows, extra = 1_000_000, 100_000
	ctx := context.Background()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		lk, err := lake.Open(ctx, filepath.Join(b.TempDir(), "lake"))
		if err != nil {
			b.Fatal(err)
		}
		tbl, err := lk.CreateTable(ctx, "target", mergeSchema)
		if err != nil {
			b.Fatal(err)
		}
		var batches []arrow.RecordBatch
		for lo := 0; lo < rows; lo += 65536 {
			batches = append(batches, mergeBatch(lo, min(lo+65536, rows), 0))
		}
		rdr, _ := array.NewRecordReader(mergeSchema, batches)
		if tbl, err = tbl.Append(ctx, rdr); err != nil {
			b.Fatal(err)
		}
		rdr.Release()
		var src []arrow.RecordBatch
		for lo := 0; lo < rows+extra; lo += 65536 {
			src = append(src, mergeBatch(lo, min(lo+65536, rows+extra), i+1))
		}
		srdr, _ := array.NewRecordReader(mergeSchema, src)
		b.StartTimer()
		start := time.Now()
		if _, err := tbl.Upsert(ctx, []string{"id"}, srdr); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		b.StopTimer()
		srdr.Release()
		for _, x := range append(batches, src...) {
			x.Release()
		}
		lk.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N)*float64(rows+extra)/total.Seconds(), "rows/s")
}
