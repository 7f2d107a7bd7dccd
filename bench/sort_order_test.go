package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/skadedb/skade/lake"
)

// BenchmarkSortOrderPruning measures what a declared sort order (ALTER
// TABLE … WRITE ORDERED BY ts) buys a time-window DELETE. Two tables get
// the same 2M rows in 4 INSERTs whose timestamps are scattered over the
// whole range, with a 256 KiB target file size; one declares the order, so
// each INSERT writes files that each hold a narrow range of ts; a third
// declares it and is then compacted into 1 MB files, which compaction
// sorts as a whole. Each op clones the tables (a metadata-only clone) and deletes the same 1% time
// window from each clone, unsorted, sorted, compacted, in one loop, and reports
// the bytes each read (rchar) and their time, and the ratios.
//
//	go test -run '^$' -bench SortOrderPruning -benchtime 5x ./bench
func BenchmarkSortOrderPruning(b *testing.B) {
	ctx := context.Background()
	lk, err := lake.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer lk.Close()
	s := lk.Session()
	const rows, inserts = 2_000_000, 4
	names := []string{"unsorted", "sorted", "compacted"}
	for _, name := range names {
		mustSQL(b, s, fmt.Sprintf(`CREATE TABLE %s (id BIGINT, ts TIMESTAMP, v VARCHAR) WITH ('write.target-file-size-bytes' = '262144')`, name))
		if name != "unsorted" {
			mustSQL(b, s, `ALTER TABLE `+name+` WRITE ORDERED BY ts`)
		}
		per := rows / inserts
		for i := 0; i < inserts; i++ {
			// ts is a permutation of the seconds of the range: every INSERT
			// spans all of it
			mustSQL(b, s, fmt.Sprintf(`INSERT INTO %s SELECT range, TIMESTAMP '2024-01-01' + ((range * 7919) %% %d) * INTERVAL '1 second', 'payload-' || (range %% 1000)
				FROM range(%d, %d)`, name, rows, i*per, (i+1)*per))
		}
	}
	// compaction sorts each partition as a whole: 16 files that each hold
	// a quarter of the range become files that each hold a 1/N-th
	mustSQL(b, s, `ALTER TABLE compacted EXECUTE compact(target_file_size_bytes => 1000000)`)
	files := map[string]string{}
	for _, name := range names {
		files[name] = queryOne(b, s, "SELECT count(*) FROM "+name+"$files")
	}
	window := rows / 100
	var read, took [3]float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lo := (i * 7 % 90) * window
		for k, name := range names {
			clone := fmt.Sprintf("%s_%d", name, i)
			mustSQL(b, s, fmt.Sprintf("CREATE TABLE %s CLONE %s", clone, name))
			q := fmt.Sprintf(`DELETE FROM %s WHERE ts >= TIMESTAMP '2024-01-01' + %d * INTERVAL '1 second' AND ts < TIMESTAMP '2024-01-01' + %d * INTERVAL '1 second'`, clone, lo, lo+window)
			before := readChars(b)
			start := time.Now()
			res, err := s.SQL(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			if n := res.Metrics().RowsDeleted; n != int64(window) {
				b.Fatalf("%s deleted %d rows, want %d", clone, n, window)
			}
			res.Close()
			took[k] += float64(time.Since(start).Milliseconds())
			read[k] += float64(readChars(b) - before)
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(read[0]/n/1e6, "unsorted_read_MB/op")
	b.ReportMetric(read[1]/n/1e6, "sorted_read_MB/op")
	b.ReportMetric(took[0]/n, "unsorted_ms/op")
	b.ReportMetric(took[1]/n, "sorted_ms/op")
	b.ReportMetric(read[2]/n/1e6, "compacted_read_MB/op")
	b.ReportMetric(took[2]/n, "compacted_ms/op")
	b.ReportMetric(read[1]/read[0], "sorted/unsorted_read")
	b.ReportMetric(took[1]/took[0], "sorted/unsorted_time")
	b.ReportMetric(read[2]/read[0], "compacted/unsorted_read")
	b.ReportMetric(took[2]/took[0], "compacted/unsorted_time")
	b.Logf("data files: unsorted %s, sorted %s, sorted and compacted %s", files["unsorted"], files["sorted"], files["compacted"])
}

// queryOne runs a query whose result is one value and renders it.
func queryOne(b *testing.B, s *lake.Session, q string) string {
	b.Helper()
	res, err := s.SQL(context.Background(), q)
	if err != nil {
		b.Fatalf("%s: %v", q, err)
	}
	defer res.Close()
	bs, err := res.Collect(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		for _, r := range bs {
			r.Release()
		}
	}()
	if len(bs) == 0 || bs[0].NumRows() == 0 {
		b.Fatalf("%s: no rows", q)
	}
	return bs[0].Column(0).ValueStr(0)
}
