package bench

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/scan"
)

var cowMorRows = flag.Int("cowmor.rows", 1_000_000, "rows in the MergeCowVsMor target table (10 files)")

const cowMorRounds = 8

// cowMorRun is one write mode's figures for one key layout.
type cowMorRun struct {
	written []int64         // bytes written per round
	latency []time.Duration // MERGE (execute + commit) per round
	scan    []time.Duration // full scan: [0] clean table, [r] after round r
	compact time.Duration   // the compaction itself
	scanned time.Duration   // full scan after compaction
	// paired is the last round's full scan over the clean table's, both
	// scanned alternately (so a shared machine's drifting load hits both
	// alike): medians of wall time and of process CPU time
	pairedWall, pairedCPU float64
	// coldWall is pairedWall with the scan's delete caches dropped before
	// each round-8 scan (scan.DropDeleteCaches): the first scan of a
	// snapshot, which parses its delete files
	coldWall float64
}

// BenchmarkMergeCowVsMor runs 8 rounds of MERGE (update 1% of the rows)
// in copy-on-write and in merge-on-read mode, for keys spread over every
// data file and keys concentrated in one, and prints bytes written and
// latency per round, full-scan time after each round, and after
// compaction, side by side.
func BenchmarkMergeCowVsMor(b *testing.B) {
	for _, layout := range []string{"spread", "concentrated"} {
		b.Run(layout, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				conc := layout == "concentrated"
				cow := cowMorScenario(b, *cowMorRows, conc, mergeinto.CopyOnWrite, nil)
				mor := cowMorScenario(b, *cowMorRows, conc, mergeinto.MergeOnRead, nil)
				ups := cowMorScenario(b, *cowMorRows, conc, upsertMode, nil)
				if i == 0 {
					printCowMor(layout, *cowMorRows, cow, mor, ups)
				}
				med := func(ds []int64) float64 { s := slices.Clone(ds); slices.Sort(s); return float64(s[len(s)/2]) }
				for _, x := range []struct {
					name string
					run  cowMorRun
				}{{"cow", cow}, {"mor", mor}, {"upsert", ups}} {
					b.ReportMetric(med(x.run.written), x.name+"_bytes_written/round")
					b.ReportMetric(medMs(x.run.latency), x.name+"_commit_ms/round")
					b.ReportMetric(ms(x.run.scan[cowMorRounds]), x.name+"_scan_ms_round8")
					b.ReportMetric(ms(x.run.scanned), x.name+"_scan_ms_compacted")
					b.ReportMetric(x.run.pairedWall, x.name+"_scan8_over_clean")
				}
				b.ReportMetric(ms(cow.scan[0]), "clean_scan_ms")
			}
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func medMs(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return ms(s[len(s)/2])
}

// upsertMode runs each round as lake.Table.Upsert: equality deletes plus
// the new rows, reading no data file (the guide's delete_equality +
// append).
const upsertMode mergeinto.Mode = -1

// cowMorScenario builds the table, runs the rounds and compacts. hook,
// when not nil, is called with the open table clean, after the last round
// and compacted (stage "clean", "round8", "compacted").
func cowMorScenario(b *testing.B, rows int, concentrated bool, mode mergeinto.Mode, hook func(stage string, tbl *lake.Table)) cowMorRun {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "skade-bench-cowmor-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	lk, err := lake.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer lk.Close()
	tbl, err := lk.CreateTable(ctx, "t", mergeSchema)
	if err != nil {
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
		if tbl, err = tbl.Append(ctx, rdr); err != nil {
			b.Fatal(err)
		}
		rdr.Release()
		for _, x := range batches {
			x.Release()
		}
	}
	if hook != nil {
		hook("clean", tbl)
	}
	clean := tbl
	var run cowMorRun
	run.scan = append(run.scan, fullScan(b, tbl, int64(rows)))
	r := rand.New(rand.NewPCG(7, 11))
	for round := 1; round <= cowMorRounds; round++ {
		batch := updateBatch(r, rows, concentrated, round)
		if mode == upsertMode {
			rdr, err := array.NewRecordReader(mergeSchema, []arrow.RecordBatch{batch})
			if err != nil {
				b.Fatal(err)
			}
			batch.Release()
			before := dirBytes(b, dir)
			start := time.Now()
			if tbl, err = tbl.Upsert(ctx, []string{"id"}, rdr); err != nil {
				b.Fatal(err)
			}
			run.latency = append(run.latency, time.Since(start))
			rdr.Release()
			run.written = append(run.written, dirBytes(b, dir)-before)
			run.scan = append(run.scan, fullScan(b, tbl, int64(rows)))
			continue
		}
		src, err := exec.NewValues(mergeSchema, []arrow.RecordBatch{batch})
		batch.Release()
		if err != nil {
			b.Fatal(err)
		}
		it := tbl.Iceberg()
		txn := it.NewTransaction()
		spec := &mergeinto.Spec{
			Table: "t", Target: it, Snapshot: it.CurrentSnapshot(), Source: src, Mode: mode,
			Keys: []mergeinto.Key{{Target: 0, Source: &exec.Column{Index: 0, Type: arrow.PrimitiveTypes.Int64}}},
			Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Update(
				mergeinto.Assignment{Column: 1, Expr: &exec.Column{Index: 4, Type: arrow.PrimitiveTypes.Int64}},
				mergeinto.Assignment{Column: 2, Expr: &exec.Column{Index: 5, Type: arrow.BinaryTypes.String}})}},
		}
		start := time.Now()
		res, err := mergeinto.Execute(ctx, spec, txn)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := txn.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		run.latency = append(run.latency, time.Since(start))
		run.written = append(run.written, res.Metrics.BytesWritten)
		if tbl, err = tbl.Refresh(ctx); err != nil {
			b.Fatal(err)
		}
		run.scan = append(run.scan, fullScan(b, tbl, int64(rows)))
	}
	run.pairedWall, run.pairedCPU = pairedScans(b, clean, tbl, int64(rows), false)
	run.coldWall, _ = pairedScans(b, clean, tbl, int64(rows), true)
	if hook != nil {
		hook(fmt.Sprintf("round%d", cowMorRounds), tbl)
	}
	start := time.Now()
	tbl, _, err = tbl.Compact(ctx, lake.CompactOptions{})
	if err != nil {
		b.Fatal(err)
	}
	run.compact = time.Since(start)
	run.scanned = fullScan(b, tbl, int64(rows))
	if hook != nil {
		hook("compacted", tbl)
	}
	return run
}

// updateBatch updates 1% of the ids (amount = -id - round), spread over
// every file or all inside file 0.
func updateBatch(r *rand.Rand, rows int, concentrated bool, round int) arrow.RecordBatch {
	n := rows / 100
	span := rows
	if concentrated {
		span = rows / 10
	}
	bld := array.NewRecordBuilder(memory.DefaultAllocator, mergeSchema)
	defer bld.Release()
	for _, id := range r.Perm(span)[:n] {
		bld.Field(0).(*array.Int64Builder).Append(int64(id))
		bld.Field(1).(*array.Int64Builder).Append(-int64(id) - int64(round))
		bld.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("round-%d-%09d", round, id))
	}
	return bld.NewRecordBatch()
}

// fullScan reads every column of every row through exec.TableScan (the
// scan SQL runs); the median of five runs.
func fullScan(b *testing.B, tbl *lake.Table, wantRows int64) time.Duration {
	var ds []time.Duration
	for i := 0; i < 5; i++ {
		start := time.Now()
		n := execScan(context.Background(), b, tbl)
		ds = append(ds, time.Since(start))
		if n != wantRows {
			b.Fatalf("full scan read %d rows, want %d", n, wantRows)
		}
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// pairedScans scans clean and then after, seven times over, and returns
// the median of after's wall and CPU times over clean's; cold drops the
// delete caches before each scan of after.
func pairedScans(b *testing.B, clean, after *lake.Table, wantRows int64, cold bool) (wall, cpu float64) {
	var walls, cpus []float64
	for i := 0; i < 7; i++ {
		var w [2]time.Duration
		var c [2]time.Duration
		for j, tbl := range []*lake.Table{clean, after} {
			if cold && j == 1 {
				scan.DropDeleteCaches()
			}
			start, cpu0 := time.Now(), cpuTime()
			if n := execScan(context.Background(), b, tbl); n != wantRows {
				b.Fatalf("full scan read %d rows, want %d", n, wantRows)
			}
			w[j], c[j] = time.Since(start), cpuTime()-cpu0
		}
		walls = append(walls, float64(w[1])/float64(w[0]))
		cpus = append(cpus, float64(c[1])/float64(max(c[0], 1)))
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	return walls[len(walls)/2], cpus[len(cpus)/2]
}

func printCowMor(layout string, rows int, cow, mor, ups cowMorRun) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nMergeCowVsMor %s: %d rows in 10 files, %d rounds each updating 1%% of the rows\n", layout, rows, cowMorRounds)
	fmt.Fprintf(&sb, "cow = MERGE copy-on-write; mor = MERGE merge-on-read (position deletes); upsert = Table.Upsert (equality deletes, reads no data file)\n")
	fmt.Fprintf(&sb, "%-10s %11s %11s %11s %8s %8s %8s %9s %9s %9s\n", "round", "cow_bytes", "mor_bytes", "ups_bytes", "cow_ms", "mor_ms", "ups_ms", "cow_scan", "mor_scan", "ups_scan")
	fmt.Fprintf(&sb, "%-10s %11s %11s %11s %8s %8s %8s %9.1f %9.1f %9.1f\n", "clean", "", "", "", "", "", "", ms(cow.scan[0]), ms(mor.scan[0]), ms(ups.scan[0]))
	for i := 0; i < cowMorRounds; i++ {
		fmt.Fprintf(&sb, "%-10d %11d %11d %11d %8.1f %8.1f %8.1f %9.1f %9.1f %9.1f\n", i+1, cow.written[i], mor.written[i], ups.written[i],
			ms(cow.latency[i]), ms(mor.latency[i]), ms(ups.latency[i]), ms(cow.scan[i+1]), ms(mor.scan[i+1]), ms(ups.scan[i+1]))
	}
	fmt.Fprintf(&sb, "%-10s %11s %11s %11s %8.1f %8.1f %8.1f %9.1f %9.1f %9.1f\n", "compacted", "", "", "", ms(cow.compact), ms(mor.compact), ms(ups.compact), ms(cow.scanned), ms(mor.scanned), ms(ups.scanned))
	sum := func(xs []int64) (n int64) {
		for _, x := range xs {
			n += x
		}
		return max(n, 1)
	}
	for _, x := range []struct {
		name string
		run  cowMorRun
	}{{"mor", mor}, {"upsert", ups}} {
		fmt.Fprintf(&sb, "%s vs cow: cow writes %.1f× the bytes and its median latency is %.1f× this one's; scan after round %d is %.2f× the clean scan (paired: wall %.2f×, cpu %.2f×; cold delete caches: wall %.2f×), %.2f× after compaction\n",
			x.name, float64(sum(cow.written))/float64(sum(x.run.written)), medMs(cow.latency)/medMs(x.run.latency),
			cowMorRounds, ms(x.run.scan[cowMorRounds])/ms(x.run.scan[0]), x.run.pairedWall, x.run.pairedCPU, x.run.coldWall, ms(x.run.scanned)/ms(x.run.scan[0]))
	}
	fmt.Print(sb.String())
}
