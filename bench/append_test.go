package bench

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/lake"
)

var tinySchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func tinyReader(i int) array.RecordReader {
	b := array.NewRecordBuilder(memory.DefaultAllocator, tinySchema)
	defer b.Release()
	for j := 0; j < 10; j++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i*10 + j))
		b.Field(1).(*array.StringBuilder).Append("x")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, _ := array.NewRecordReader(tinySchema, []arrow.RecordBatch{rec})
	return rdr
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkTinyAppendFlat commits 1,000 appends of 10 rows each to one
// table and reports the median commit latency around the 10th, 100th and
// 1,000th commit. With manifest merging on, planning and commit cost must
// not grow with the number of commits.
func BenchmarkTinyAppendFlat(b *testing.B) {
	commits := benchCommits()
	ctx := context.Background()
	for n := 0; n < b.N; n++ {
		lk, err := lake.Open(ctx, filepath.Join(b.TempDir(), "lake"))
		if err != nil {
			b.Fatal(err)
		}
		tbl, err := lk.CreateTable(ctx, "tiny", tinySchema)
		if err != nil {
			b.Fatal(err)
		}
		lat := make([]time.Duration, commits)
		for i := 0; i < commits; i++ {
			rdr := tinyReader(i)
			start := time.Now()
			tbl, err = tbl.Append(ctx, rdr)
			lat[i] = time.Since(start)
			rdr.Release()
			if err != nil {
				b.Fatalf("commit %d: %v", i+1, err)
			}
		}
		// Medians over windows of 20 commits: 10-29, 100-119 and 981-1000
		// (1-based).
		at10 := median(lat[9:29])
		at100 := median(lat[99:119])
		at1000 := median(lat[commits-20 : commits])
		b.ReportMetric(float64(at10.Microseconds())/1000, "ms_median_commit_10")
		b.ReportMetric(float64(at100.Microseconds())/1000, "ms_median_commit_100")
		b.ReportMetric(float64(at1000.Microseconds())/1000, "ms_median_commit_1000")
		b.ReportMetric(float64(at1000)/float64(at10), "ratio_1000_vs_10")
		lk.Close()
	}
}

func benchCommits() int {
	if testing.Short() {
		return 300
	}
	return 1000
}
