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

// BenchmarkMerge runs the Delta MergeBenchmark shape at SKADE_PEER_ROWS
// rows (default 1,000,000): a target of that many rows in 10 files, a
// source of 1% existing keys spread over every file plus 10% new keys;
// WHEN MATCHED UPDATE the non-key columns, WHEN NOT MATCHED INSERT. skade
// merges copy-on-write into its Iceberg table; DuckDB merges into its
// native table. Each round builds both targets afresh (not timed) and
// times the MERGE alone, alternately.
func BenchmarkMerge(b *testing.B) {
	n, rounds := envInt("SKADE_PEER_ROWS", 1_000_000), envInt("SKADE_PEER_ROUNDS", 5)
	ctx := context.Background()
	files := 10
	per := n / files
	source := fmt.Sprintf(`SELECT i * 100 AS id, 'updated' AS status, i * 1.5 AS amount FROM range(0, %[1]d) r(i)
		UNION ALL SELECT %[2]d + i AS id, 'new' AS status, i * 2.5 AS amount FROM range(0, %[3]d) r(i)`, n/100, n*1000, n/10)
	merge := `MERGE INTO target USING src ON target.id = src.id
		WHEN MATCHED THEN UPDATE SET status = src.status, amount = src.amount
		WHEN NOT MATCHED THEN INSERT VALUES (src.id, src.status, src.amount)`
	for i := 0; i < b.N; i++ {
		var sk, dk []time.Duration
		for r := 0; r < rounds; r++ {
			// skade: 10 files of interleaved keys, so 1% spread keys touch every file
			lk, exec := openSkade(b)
			s := lk.Session()
			exec("CREATE TABLE target (id BIGINT, status VARCHAR, amount DOUBLE)")
			for f := 0; f < files; f++ {
				exec(fmt.Sprintf("INSERT INTO target SELECT i * %d + %d AS id, 'old' AS status, i * 1.0 AS amount FROM range(0, %d) r(i)", files, f, per))
			}
			exec("CREATE TABLE src AS " + source)
			start := time.Now()
			exec(merge)
			sk = append(sk, time.Since(start))
			res, err := s.SQL(ctx, "SELECT count(*), count(*) FILTER (WHERE status = 'updated') FROM target")
			if err != nil {
				b.Fatal(err)
			}
			bs, err := res.Collect(ctx)
			if err != nil {
				b.Fatal(err)
			}
			total, updated := bs[0].Column(0).ValueStr(0), bs[0].Column(1).ValueStr(0)
			bs[0].Release()
			lk.Close()
			// DuckDB, native table, same data
			db, err := sql.Open("duckdb", filepath.Join(b.TempDir(), "duck.db"))
			if err != nil {
				b.Fatal(err)
			}
			for _, q := range []string{
				"CREATE TABLE target (id BIGINT, status VARCHAR, amount DOUBLE)",
				fmt.Sprintf("INSERT INTO target SELECT i * %d + f AS id, 'old' AS status, i * 1.0 AS amount FROM range(0, %d) r(i), range(0, %d) g(f)", files, per, files),
				"CREATE TABLE src AS " + source,
			} {
				if _, err := db.Exec(q); err != nil {
					b.Fatalf("DuckDB: %s: %v", q, err)
				}
			}
			start = time.Now()
			if _, err := db.Exec(merge); err != nil {
				b.Fatalf("DuckDB: %v", err)
			}
			dk = append(dk, time.Since(start))
			var dt, du string
			if err := db.QueryRow("SELECT count(*)::VARCHAR, count(*) FILTER (WHERE status = 'updated')::VARCHAR FROM target").Scan(&dt, &du); err != nil {
				b.Fatal(err)
			}
			db.Close()
			if dt != total || du != updated {
				b.Fatalf("results differ: skade %s rows (%s updated), DuckDB %s (%s)", total, updated, dt, du)
			}
		}
		msk, mdk := median(sk), median(dk)
		if i == 0 {
			fmt.Printf("merge, %d rows in %d files, 1%% spread updates + 10%% inserts, %d rounds: skade copy-on-write median %s, DuckDB native median %s, skade/DuckDB %.2f×\n",
				n, files, rounds, msk.Round(time.Millisecond), mdk.Round(time.Millisecond), msk.Seconds()/mdk.Seconds())
			fmt.Printf("  skade rounds %v\n  DuckDB rounds %v\n", sk, dk)
		}
		b.ReportMetric(msk.Seconds(), "skade_s")
		b.ReportMetric(mdk.Seconds(), "duckdb_s")
		b.ReportMetric(msk.Seconds()/mdk.Seconds(), "skade/duckdb")
	}
}
