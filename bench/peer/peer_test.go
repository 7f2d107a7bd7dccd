package peer

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/skadedb/skade/lake"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// writeCSV writes a deterministic CSV file of about mb MiB: an id, a
// name, an amount, a day and a timestamp per row.
func writeCSV(tb testing.TB, path string, mb int) (rows int64, size int64) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("id,name,amount,day,ts\n")
	rnd := rand.New(rand.NewPCG(1, 2))
	names := []string{"ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal"}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	limit := int64(mb) << 20
	var written int64
	for written < limit {
		t := base.Add(time.Duration(rnd.IntN(365*24*3600)) * time.Second)
		line := fmt.Sprintf("%d,%s %d,%d.%02d,%s,%s\n", rows, names[rnd.IntN(len(names))], rnd.IntN(1000),
			rnd.IntN(100000), rnd.IntN(100), t.Format("2006-01-02"), t.Format("2006-01-02 15:04:05"))
		n, _ := w.WriteString(line)
		written += int64(n)
		rows++
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return rows, written
}

// median of the durations.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkCSVImport loads the same CSV file into a new table with
// skade (CREATE TABLE … AS SELECT * FROM read_csv, committed as Iceberg
// Parquet files) and with DuckDB (the same statement into a DuckDB
// database file), alternately, and reports each one's MB/s and the ratio.
func BenchmarkCSVImport(b *testing.B) {
	mb, rounds := envInt("SKADE_PEER_CSV_MB", 256), envInt("SKADE_PEER_ROUNDS", 5)
	dir := b.TempDir()
	path := filepath.Join(dir, "data.csv")
	rows, size := writeCSV(b, path, mb)
	for i := 0; i < b.N; i++ {
		var sk, dk []time.Duration
		for r := 0; r < rounds; r++ {
			// skade
			lk, exec := openSkade(b)
			start := time.Now()
			exec(fmt.Sprintf("CREATE TABLE t AS SELECT * FROM read_csv('%s')", path))
			sk = append(sk, time.Since(start))
			n := count(b, lk)
			lk.Close()
			if n != rows {
				b.Fatalf("skade loaded %d rows, want %d", n, rows)
			}
			// DuckDB
			db, err := sql.Open("duckdb", filepath.Join(b.TempDir(), "duck.db"))
			if err != nil {
				b.Fatal(err)
			}
			start = time.Now()
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE t AS SELECT * FROM read_csv('%s')", path)); err != nil {
				b.Fatal(err)
			}
			dk = append(dk, time.Since(start))
			var dn int64
			if err := db.QueryRow("SELECT count(*) FROM t").Scan(&dn); err != nil {
				b.Fatal(err)
			}
			db.Close()
			if dn != rows {
				b.Fatalf("DuckDB loaded %d rows, want %d", dn, rows)
			}
		}
		msk, mdk := median(sk), median(dk)
		mbps := func(d time.Duration) float64 { return float64(size) / (1 << 20) / d.Seconds() }
		if i == 0 {
			fmt.Printf("csv import, %d MiB, %d rows, %d rounds: skade %.1f MB/s (median %s), DuckDB %.1f MB/s (median %s), skade/DuckDB time %.2f×\n",
				size>>20, rows, rounds, mbps(msk), msk.Round(time.Millisecond), mbps(mdk), mdk.Round(time.Millisecond), msk.Seconds()/mdk.Seconds())
			fmt.Printf("  skade rounds %v\n  DuckDB rounds %v\n", sk, dk)
		}
		b.ReportMetric(mbps(msk), "skade_MB/s")
		b.ReportMetric(mbps(mdk), "duckdb_MB/s")
		b.ReportMetric(msk.Seconds()/mdk.Seconds(), "skade/duckdb_time")
	}
}

// openSkade opens a lake in a fresh directory and returns it with a
// function that runs one statement on a session of it.
func openSkade(b *testing.B) (*lake.Lake, func(q string)) {
	ctx := context.Background()
	lk, err := lake.Open(ctx, filepath.Join(b.TempDir(), "lake"))
	if err != nil {
		b.Fatal(err)
	}
	s := lk.Session()
	return lk, func(q string) {
		res, err := s.SQL(ctx, q)
		if err != nil {
			b.Fatalf("%s: %v", q, err)
		}
		res.Close()
	}
}

func count(tb testing.TB, lk *lake.Lake) int64 {
	tb.Helper()
	ctx := context.Background()
	res, err := lk.Session().SQL(ctx, "SELECT count(*) FROM t")
	if err != nil {
		tb.Fatal(err)
	}
	n, err := res.Int64s(ctx, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return n[0]
}
