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
// 1,000th commit. With manifest merging on, the manifest work per commit
// is bounded; what still grows is the metadata JSON, which lists every
// retained snapshot. The expire_keep_100 variant expires snapshots every
// 100 commits, keeping the newest 100, to show the cost with bounded
// history.
func BenchmarkTinyAppendFlat(b *testing.B) {
	for _, v := range []struct {
		name   string
		expire bool
	}{{"keep_all", false}, {"expire_keep_100", true}} {
		b.Run(v.name, func(b *testing.B) { tinyAppends(b, v.expire) })
	}
}

func tinyAppends(b *testing.B, expire bool) {
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
			if expire && (i+1)%100 == 0 {
				if _, err := tbl.ExpireSnapshots(ctx, time.Now(), 100); err != nil {
					b.Fatal(err)
				}
				if tbl, err = tbl.Refresh(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		// Medians over windows of 20 commits: 10-29, 100-119 and the last
		// 20 (1-based).
		at10 := median(lat[9:29])
		at100 := median(lat[99:119])
		atEnd := median(lat[commits-20 : commits])
		b.ReportMetric(float64(at10.Microseconds())/1000, "ms_median_commit_10")
		b.ReportMetric(float64(at100.Microseconds())/1000, "ms_median_commit_100")
		b.ReportMetric(float64(atEnd.Microseconds())/1000, "ms_median_commit_last")
		b.ReportMetric(float64(atEnd)/float64(at10), "ratio_last_vs_10")
		lk.Close()
	}
}

func benchCommits() int {
	if testing.Short() {
		return 300
	}
	return 1000
}
