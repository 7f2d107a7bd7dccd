package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/skadedb/skade/lake"
)

// readChars is the bytes this process has read through read(2) and
// pread(2) so far (rchar in /proc/self/io): page-cache hits count, so it
// measures what a statement reads whatever the cache holds.
func readChars(b *testing.B) int64 { return procField(b, "/proc/self/io", "rchar:") }

// procField is the first number after key on a line of the /proc file
// name; the benchmark is skipped where the file or the line is missing.
func procField(b *testing.B, name, key string) int64 {
	raw, err := os.ReadFile(name)
	if err != nil {
		b.Skipf("no %s: %v", name, err)
	}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(key)); ok {
			f := bytes.Fields(v)
			if len(f) == 0 {
				break
			}
			n, err := strconv.ParseInt(string(f[0]), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Skipf("no %s in %s", key, name)
	return 0
}

// BenchmarkCopyOnWriteDML runs copy-on-write DELETE and UPDATE over a
// 1M-row table of 10 data files, each statement matching 1% of the rows
// of every file, and reports the bytes the statement read (read_MB/op,
// data files, manifests and metadata) against the table's data size
// before the first op (table_MB): about 1× when each changed file is read
// once. DELETE takes a different 1% each op, so the table shrinks by 1%
// an op.
//
//	go test -run '^$' -bench CopyOnWriteDML -benchtime 5x ./bench
func BenchmarkCopyOnWriteDML(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct{ name, q string }{
		{"update", `UPDATE t SET v = v + 1 WHERE id %% 100 = %d`},
		{"delete", `DELETE FROM t WHERE id %% 100 = %d`}, // a new 1% each op
		{"update returning", `UPDATE t SET v = v + 1 WHERE id %% 100 = %d RETURNING id`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			lk, err := lake.Open(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			defer lk.Close()
			s := lk.Session()
			mustSQL(b, s, `CREATE TABLE t (id BIGINT, k INTEGER, s VARCHAR, v DOUBLE)`)
			for f := 0; f < 10; f++ {
				mustSQL(b, s, fmt.Sprintf(`INSERT INTO t SELECT i, (i %% 1000)::INTEGER, md5(i::VARCHAR), (i %% 97)::DOUBLE
					FROM range(%d, %d) r(i)`, f*100_000, (f+1)*100_000))
			}
			size := tableBytes(b, s, "t")
			var read int64
			var elapsed time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				before, start := readChars(b), time.Now()
				mustSQL(b, s, fmt.Sprintf(tc.q, i%100))
				elapsed += time.Since(start)
				read += readChars(b) - before
			}
			b.ReportMetric(float64(read)/float64(b.N)/1e6, "read_MB/op")
			b.ReportMetric(float64(size)/1e6, "table_MB")
			b.ReportMetric(float64(read)/float64(b.N)/float64(size), "read/table")
			b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms/op")
		})
	}
}

// tableBytes is the size of the data files of table's current snapshot.
func tableBytes(b *testing.B, s *lake.Session, table string) int64 {
	return firstRowInts(b, s, "SELECT sum(file_size_in_bytes)::BIGINT FROM "+table+"$files WHERE content = 0")[0]
}

// firstRowInts runs q and returns its first row's columns as integers.
func firstRowInts(b *testing.B, s *lake.Session, q string) []int64 {
	b.Helper()
	res, err := s.SQL(context.Background(), q)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Close()
	bs, err := res.Collect(context.Background())
	if err != nil || len(bs) == 0 || bs[0].NumRows() == 0 {
		b.Fatalf("%s: no row (%v)", q, err)
	}
	defer bs[0].Release()
	out := make([]int64, bs[0].NumCols())
	for i := range out {
		if out[i], err = strconv.ParseInt(bs[0].Column(i).ValueStr(0), 10, 64); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	return out
}
