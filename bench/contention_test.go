package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skadedb/skade/lake"
)

// BenchmarkContendedMerge runs 8 writers, each its own session on one
// lake, doing MERGEs of one random key into a 200,000-row table with
// write_retries = 20: every writer's commit races the other seven. It
// compares retrying at once (commit.retry.min-wait-ms = max-wait-ms = 0,
// what skade did before) with jittered exponential backoff (skade's
// defaults, 5 ms to 500 ms), the two interleaved round by round on fresh
// tables. Metrics: commits/s, p50 and p90 statement latency, and the
// fraction of MERGEs that still failed after their retries.
func BenchmarkContendedMerge(b *testing.B) {
	const writers, perWriter, rounds = 8, 10, 3
	variants := []struct {
		name  string
		props string
	}{
		{"immediate", "'commit.retry.min-wait-ms' = '0', 'commit.retry.max-wait-ms' = '0'"},
		{"backoff", "'commit.retry.min-wait-ms' = '5', 'commit.retry.max-wait-ms' = '500'"},
	}
	for i := 0; i < b.N; i++ {
		res := make([]writerStats, len(variants))
		for r := 0; r < rounds; r++ {
			for v, vr := range variants {
				lk := openBenchLake(b)
				s := lk.Session()
				mustSQL(b, s, fmt.Sprintf("CREATE TABLE hot (id BIGINT, v BIGINT) WITH (%s)", vr.props))
				mustSQL(b, s, "INSERT INTO hot SELECT i, 0 FROM range(200000) r(i)")
				res[v].run(b, lk, writers, perWriter, uint64(r), func(rnd *rand.Rand, w int) string {
					return fmt.Sprintf("MERGE INTO hot USING (SELECT %d AS id) s ON hot.id = s.id WHEN MATCHED THEN UPDATE SET v = hot.v + 1", rnd.IntN(200000))
				})
				lk.Close()
			}
		}
		for v, vr := range variants {
			res[v].report(b, i == 0, "contended merge", writers, vr.name)
		}
	}
}

func mustSQL(b *testing.B, s *lake.Session, q string) {
	b.Helper()
	res, err := s.SQL(context.Background(), q)
	if err != nil {
		b.Fatalf("%s: %v", q, err)
	}
	res.Close()
}

// BenchmarkConcurrentWriters runs 8 writers, each its own session on one
// lake, doing 10 MERGEs of 10 keys each (update if present, else insert)
// into a 200,000-row table whose keys lie in 8 data files, one per
// writer's key range. "disjoint": each writer merges keys of its own
// range, so the writers touch disjoint files and a writer that loses the
// commit race is validated and restaged on the new head. "shared": every
// writer merges random keys of the whole table, so most races conflict
// and the statement is planned and run again (write_retries = 20). Both
// write modes; the variants run interleaved, 3 rounds each on fresh
// tables (SKADE_BENCH_VARIANT=copy-on-write/disjoint runs only the
// variants whose name contains it). Metrics per variant: commits/s, p50 and p90 statement latency,
// and the MERGEs that still failed after their retries.
func BenchmarkConcurrentWriters(b *testing.B) {
	const writers, perWriter, rounds, rows = 8, 10, 3, 200_000
	type variant struct {
		name     string
		mode     string
		disjoint bool
	}
	var variants []variant
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		for _, disjoint := range []bool{true, false} {
			name := mode + "/shared"
			if disjoint {
				name = mode + "/disjoint"
			}
			if f := os.Getenv("SKADE_BENCH_VARIANT"); f == "" || strings.Contains(name, f) {
				variants = append(variants, variant{name, mode, disjoint})
			}
		}
	}
	for i := 0; i < b.N; i++ {
		res := make([]writerStats, len(variants))
		for r := 0; r < rounds; r++ {
			for v, vr := range variants {
				lk := openBenchLake(b)
				s := lk.Session()
				mustSQL(b, s, fmt.Sprintf("CREATE TABLE acct (k BIGINT, v BIGINT) WITH ('write.merge.mode' = '%s')", vr.mode))
				per := rows / writers
				for w := 0; w < writers; w++ {
					mustSQL(b, s, fmt.Sprintf("INSERT INTO acct SELECT i, 0 FROM range(%d, %d) r(i)", w*per, (w+1)*per))
				}
				res[v].run(b, lk, writers, perWriter, uint64(r), func(rnd *rand.Rand, w int) string {
					keys := map[int]bool{}
					for len(keys) < 10 {
						if vr.disjoint {
							keys[w*per+rnd.IntN(per)] = true
						} else {
							keys[rnd.IntN(rows)] = true
						}
					}
					var vals []string
					for key := range keys {
						vals = append(vals, fmt.Sprintf("(%d)", key))
					}
					return fmt.Sprintf("MERGE INTO acct USING (VALUES %s) s(k) ON acct.k = s.k WHEN MATCHED THEN UPDATE SET v = acct.v + 1 WHEN NOT MATCHED THEN INSERT VALUES (s.k, 1)", strings.Join(vals, ", "))
				})
				lk.Close()
			}
		}
		for v, vr := range variants {
			res[v].report(b, i == 0, "concurrent writers", writers, vr.name)
		}
	}
}

// writerStats gathers one variant's statements over its rounds.
type writerStats struct {
	mu         sync.Mutex
	lat        []time.Duration
	ok, failed int
	elapsed    time.Duration
}

// run runs writers goroutines, each with its own session on lk and
// write_retries = 20, each running perWriter statements that stmt makes,
// and adds their latencies, outcomes and the wall time to st.
func (st *writerStats) run(b *testing.B, lk *lake.Lake, writers, perWriter int, seed uint64, stmt func(rnd *rand.Rand, w int) string) {
	ctx := context.Background()
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ws := lk.Session()
			mustSQL(b, ws, "SET write_retries = 20")
			rnd := rand.New(rand.NewPCG(seed, uint64(w)))
			for k := 0; k < perWriter; k++ {
				q := stmt(rnd, w)
				t0 := time.Now()
				_, err := ws.SQL(ctx, q)
				d := time.Since(t0)
				st.mu.Lock()
				st.lat = append(st.lat, d)
				if err != nil {
					st.failed++
				} else {
					st.ok++
				}
				st.mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	st.elapsed += time.Since(start)
}

// report prints (when print is set) and reports a variant's commits/s,
// p50 and p90 latency and the statements that failed after their retries.
func (st *writerStats) report(b *testing.B, print bool, what string, writers int, name string) {
	pct := func(p float64) time.Duration {
		s := slices.Clone(st.lat)
		slices.Sort(s)
		return s[int(p*float64(len(s)-1))]
	}
	cps := float64(st.ok) / st.elapsed.Seconds()
	p50, p90 := pct(0.5), pct(0.9)
	failed := float64(st.failed) / float64(st.ok+st.failed)
	if print {
		fmt.Printf("%s, %d writers, %s: %.1f commits/s, p50 %s, p90 %s, failed %.1f%% (%d of %d)\n",
			what, writers, name, cps, p50.Round(time.Millisecond), p90.Round(time.Millisecond), 100*failed, st.failed, st.ok+st.failed)
	}
	b.ReportMetric(cps, name+"_commits/s")
	b.ReportMetric(float64(p90.Milliseconds()), name+"_p90_ms")
	b.ReportMetric(100*failed, name+"_failed_%")
}

// openBenchLake opens a lake in a fresh directory.
func openBenchLake(b *testing.B) *lake.Lake {
	lk, err := lake.Open(context.Background(), filepath.Join(b.TempDir(), "lake"))
	if err != nil {
		b.Fatal(err)
	}
	return lk
}
