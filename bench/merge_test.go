package bench

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
)

var merge10M = flag.Bool("merge10m", false, "also run the MERGE INTO benchmarks on a 10M-row table (slow: builds a ~200 MB table)")

var mergeSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "amount", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "status", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// mergeTarget is a committed table of rows rows in 10 files; file i holds
// ids [i*rows/10, (i+1)*rows/10).
type mergeTarget struct {
	dir  string
	cat  *catalog.Catalog
	id   table.Identifier
	rows int
}

var (
	mergeTargetsMu sync.Mutex
	mergeTargets   = map[int]*mergeTarget{}
)

func getMergeTarget(b *testing.B, rows int) *mergeTarget {
	mergeTargetsMu.Lock()
	defer mergeTargetsMu.Unlock()
	if mt, ok := mergeTargets[rows]; ok {
		return mt
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "skade-bench-merge-")
	if err != nil {
		b.Fatal(err)
	}
	cat, err := catalog.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	isch, err := table.ArrowSchemaToIcebergWithFreshIDs(mergeSchema, true)
	if err != nil {
		b.Fatal(err)
	}
	id := table.Identifier{"main", "target"}
	if _, err := cat.CreateTable(ctx, id, isch); err != nil {
		b.Fatal(err)
	}
	per := rows / 10
	for f := 0; f < 10; f++ {
		var batches []arrow.RecordBatch
		for lo := f * per; lo < (f+1)*per; lo += 65536 {
			batches = append(batches, mergeBatch(lo, min(lo+65536, (f+1)*per), 0))
		}
		rdr, err := array.NewRecordReader(mergeSchema, batches)
		if err != nil {
			b.Fatal(err)
		}
		tbl, err := cat.LoadTable(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		txn := tbl.NewTransaction()
		if err := txn.Append(ctx, rdr, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := txn.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		rdr.Release()
		for _, x := range batches {
			x.Release()
		}
	}
	mt := &mergeTarget{dir: dir, cat: cat, id: id, rows: rows}
	mergeTargets[rows] = mt
	return mt
}

// mergeBatch makes rows with ids [lo, hi): amount = id + bump, a
// 16-character status.
func mergeBatch(lo, hi, bump int) arrow.RecordBatch {
	bld := array.NewRecordBuilder(memory.DefaultAllocator, mergeSchema)
	defer bld.Release()
	ids := bld.Field(0).(*array.Int64Builder)
	amounts := bld.Field(1).(*array.Int64Builder)
	status := bld.Field(2).(*array.StringBuilder)
	for i := lo; i < hi; i++ {
		ids.Append(int64(i))
		amounts.Append(int64(i + bump))
		status.Append(fmt.Sprintf("status-%09d", i%1_000_000_000))
	}
	return bld.NewRecordBatch()
}

// mergeSource is the 1%-updated, 10%-new source: updated ids spread over
// every file, or all inside file 0 (concentrated).
func mergeSource(b *testing.B, rows int, concentrated bool) exec.Operator {
	r := rand.New(rand.NewPCG(1, 2))
	updates := rows / 100
	var ids []int
	if concentrated {
		ids = append(ids, r.Perm(rows / 10)[:updates]...)
	} else {
		ids = append(ids, r.Perm(rows)[:updates]...)
	}
	bld := array.NewRecordBuilder(memory.DefaultAllocator, mergeSchema)
	defer bld.Release()
	add := func(id int) {
		bld.Field(0).(*array.Int64Builder).Append(int64(id))
		bld.Field(1).(*array.Int64Builder).Append(-int64(id))
		bld.Field(2).(*array.StringBuilder).Append("updated-" + strconv.Itoa(id))
	}
	for _, id := range ids {
		add(id)
	}
	for i := 0; i < rows/10; i++ {
		add(rows + i)
	}
	batch := bld.NewRecordBatch()
	defer batch.Release()
	op, err := exec.NewValues(mergeSchema, []arrow.RecordBatch{batch})
	if err != nil {
		b.Fatal(err)
	}
	return op
}

func BenchmarkMerge(b *testing.B) {
	b.Cleanup(func() {
		mergeTargetsMu.Lock()
		defer mergeTargetsMu.Unlock()
		for k, mt := range mergeTargets {
			os.RemoveAll(mt.dir)
			delete(mergeTargets, k)
		}
	})
	sizes := []int{1_000_000}
	if *merge10M {
		sizes = append(sizes, 10_000_000)
	}
	for _, rows := range sizes {
		for _, layout := range []string{"spread", "concentrated"} {
			b.Run(fmt.Sprintf("rows=%dM/%s", rows/1_000_000, layout), func(b *testing.B) {
				benchMerge(b, rows, layout == "concentrated")
			})
		}
	}
}

func benchMerge(b *testing.B, rows int, concentrated bool) {
	ctx := context.Background()
	mt := getMergeTarget(b, rows)
	var rewritten, written, peakRSS, peakHeap, count int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		src := mergeSource(b, rows, concentrated)
		tracker := catalog.NewTracker(mt.cat.FS())
		base, err := mt.cat.LoadTable(ctx, mt.id)
		if err != nil {
			b.Fatal(err)
		}
		tbl := mt.cat.WithFS(base, tracker)
		txn := tbl.NewTransaction()
		spec := &mergeinto.Spec{
			Table: "target", Target: tbl, Snapshot: tbl.CurrentSnapshot(), Source: src,
			Keys: []mergeinto.Key{{Target: 0, Source: &exec.Column{Index: 0, Type: arrow.PrimitiveTypes.Int64}}},
			Clauses: []mergeinto.Clause{
				{Kind: mergeinto.Matched, Action: mergeinto.Update(
					mergeinto.Assignment{Column: 1, Expr: &exec.Column{Index: 4, Type: arrow.PrimitiveTypes.Int64}},
					mergeinto.Assignment{Column: 2, Expr: &exec.Column{Index: 5, Type: arrow.BinaryTypes.String}})},
				{Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Insert(
					&exec.Column{Index: 3, Type: arrow.PrimitiveTypes.Int64},
					&exec.Column{Index: 4, Type: arrow.PrimitiveTypes.Int64},
					&exec.Column{Index: 5, Type: arrow.BinaryTypes.String})},
			},
		}
		runtime.GC()
		debug.FreeOSMemory()
		stop := samplePeak()
		b.StartTimer()
		res, err := mergeinto.Execute(ctx, spec, txn)
		b.StopTimer()
		rss, heap := stop()
		if err != nil {
			b.Fatal(err)
		}
		rewritten += res.Metrics.FilesRewritten
		written += res.Metrics.BytesWritten
		count += res.Count
		peakRSS = max(peakRSS, rss)
		peakHeap = max(peakHeap, heap)
		if i == 0 {
			b.Logf("%s", res.Metrics)
		}
		// The merge is staged, not committed: the next op starts from the
		// same base. Remove what it wrote.
		if err := tracker.RemoveCreated(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(rewritten)/n, "files_rewritten/op")
	b.ReportMetric(float64(written)/n, "bytes_written/op")
	b.ReportMetric(float64(count)/n, "rows_changed/op")
	b.ReportMetric(float64(peakRSS)/(1<<20), "peak_rss_MB")
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak_heap_MB")
}

// samplePeak samples the process's resident set and Go heap every 10ms
// until the returned function is called, which returns the peaks.
func samplePeak() func() (rss, heap int64) {
	done := make(chan struct{})
	var peakRSS, peakHeap int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for i := 0; ; i++ {
			peakRSS = max(peakRSS, readRSS())
			if i%10 == 0 {
				runtime.ReadMemStats(&ms)
				peakHeap = max(peakHeap, int64(ms.HeapInuse))
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() (int64, int64) {
		close(done)
		wg.Wait()
		return peakRSS, peakHeap
	}
}

// readRSS is VmRSS from /proc/self/status, in bytes (0 where unavailable).
func readRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
