package bench

import (
	"context"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/scan"
)

// BenchmarkScanDeletes times a full scan (exec.TableScan, every column) of
// the MergeCowVsMor table clean, after 8 merge-on-read rounds (MERGE with
// position deletes, or Upsert with equality deletes) and compacted: the
// issue's goal is round8 within 1.5× of clean; a _cold stage drops the
// scan's caches of parsed delete files first. The tables are built once,
// outside the timer; profile with -cpuprofile.
func BenchmarkScanDeletes(b *testing.B) {
	for _, layout := range []string{"spread", "concentrated"} {
		for _, m := range []struct {
			name string
			mode mergeinto.Mode
		}{{"mor", mergeinto.MergeOnRead}, {"upsert", upsertMode}} {
			b.Run(layout+"/"+m.name, func(b *testing.B) {
				cowMorScenario(b, *cowMorRows, layout == "concentrated", m.mode, func(stage string, tbl *lake.Table) {
					stages := []string{stage}
					if stage != "clean" {
						stages = append(stages, stage+"_cold")
					}
					for _, stage := range stages {
						b.Run(stage, func(b *testing.B) {
							files, err := tbl.PlanFiles(context.Background())
							if err != nil {
								b.Fatal(err)
							}
							var rows, deletes int64
							for _, f := range files {
								rows += f.Records
								deletes += int64(f.DeleteFiles)
							}
							cpu0 := cpuTime()
							// the label lets pprof -tagfocus=scan=round8 keep the
							// scans' samples apart from the setup's
							pprof.Do(context.Background(), pprof.Labels("scan", stage), func(ctx context.Context) {
								for i := 0; i < b.N; i++ {
									if strings.HasSuffix(stage, "_cold") {
										scan.DropDeleteCaches()
									}
									if n := execScan(ctx, b, tbl); n != int64(*cowMorRows) {
										b.Fatalf("scan read %d rows, want %d", n, *cowMorRows)
									}
								}
							})
							b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu_ms/op")
							b.ReportMetric(float64(len(files)), "data_files")
							b.ReportMetric(float64(rows), "rows_stored")
							b.ReportMetric(float64(deletes), "task_delete_files")
						})
					}
				})
			})
		}
	}
}

// cpuTime is the process's user plus system CPU time: on a shared
// machine it varies less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// execScan reads every column of tbl through exec.TableScan and returns
// the row count.
func execScan(ctx context.Context, b *testing.B, tbl *lake.Table) int64 {
	it := tbl.Iceberg()
	var fields []string
	for _, f := range mergeSchema.Fields() {
		fields = append(fields, f.Name)
	}
	s, err := exec.NewTableScan("t", it, it.CurrentSnapshot(), fields, mergeSchema, nil /* filter */)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Open(ctx); err != nil {
		b.Fatal(err)
	}
	var n int64
	for {
		r, err := s.Next(ctx)
		if err == exec.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n += r.NumRows()
		r.Release()
	}
}
