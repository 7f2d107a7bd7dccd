package lake_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/skadedb/skade/scan"
)

// TestLongStringsReadInSmallerBatches: a table of 4 kB strings, 4,000
// rows a row group (16 MB of values, past the 6 MB a batch read page by
// page holds, so each row group is read in several batches), read by
// queries and by MERGE and UPDATE in both write modes: every row read
// once, the changed ones changed.
func TestLongStringsReadInSmallerBatches(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		t.Run(mode, func(t *testing.T) {
			lk, _ := openLake(t)
			s := lk.Session()
			mustExec(t, s, fmt.Sprintf(`CREATE TABLE t (id BIGINT, s VARCHAR, n INT) WITH ('write.parquet.row-group-limit' = '4000',
				'write.delete.mode' = '%[1]s', 'write.update.mode' = '%[1]s', 'write.merge.mode' = '%[1]s')`, mode))
			mustExec(t, s, `INSERT INTO t SELECT i, repeat(CAST(i % 97 AS VARCHAR), 2048) || CAST(i AS VARCHAR), 1 FROM range(0, 10000) r(i)`)
			check := func(what string, want []string) {
				t.Helper()
				res, err := s.SQL(ctx, `SELECT count(*), count(DISTINCT id), sum(length(s)), sum(n), sum(CASE WHEN s LIKE '%x' THEN 1 ELSE 0 END) FROM t`)
				if err != nil {
					t.Fatal(err)
				}
				got, err := collectRows(ctx, res)
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("%s: got %v (%v), want %v", what, got, err, want)
				}
			}
			// 2 digits × 2,048 for i % 97 ≥ 10, 1 × 2,048 below, then the id's digits
			var length int64
			for i := range int64(10000) {
				length += int64(len(fmt.Sprint(i%97))*2048 + len(fmt.Sprint(i)))
			}
			check("written", []string{fmt.Sprintf("10000|10000|%d|10000|0", length)})
			// every 7th row gets a 1-byte longer string and n = 2
			mustExec(t, s, `MERGE INTO t USING (SELECT i AS id FROM range(0, 10000, 7) r(i)) src ON t.id = src.id
				WHEN MATCHED THEN UPDATE SET s = t.s || 'x', n = 2`)
			check("after a MERGE", []string{fmt.Sprintf("10000|10000|%d|11429|1429", length+1429)})
			mustExec(t, s, `UPDATE t SET n = n + 1 WHERE id % 1000 = 0; DELETE FROM t WHERE id >= 9990`)
			res, err := s.SQL(ctx, `SELECT count(*), sum(n), max(length(s)) FROM t WHERE id % 1000 = 0`)
			if err != nil {
				t.Fatal(err)
			}
			got, err := collectRows(ctx, res)
			// ids 0, 1000, …, 9000: 0, 7000 were MERGEd (n 2, then 3)
			if want := []string{fmt.Sprintf("10|%d|%d", 8*2+2*3, 2*2048+4+1)}; err != nil || !slices.Equal(got, want) {
				t.Fatalf("after an UPDATE: got %v (%v), want %v", got, err, want)
			}
			// NULLs send the files through iceberg-go's scan (and a
			// filter on the strings through the read by dictionary where
			// it takes them), which read them in fewer rows a batch too
			mustExec(t, s, `UPDATE t SET s = NULL WHERE id % 1000 = 1;
				INSERT INTO t SELECT i, CASE WHEN i % 100 = 0 THEN NULL ELSE repeat('y', 4000) || CAST(i AS VARCHAR) END, 0 FROM range(20000, 24000) r(i);
				DELETE FROM t WHERE id >= 20000 AND id % 100 = 1`)
			var bounded atomic.Int64
			scan.TestHookWideRows = func(rows int) {
				if rows < 131071 {
					bounded.Add(1)
				}
			}
			defer func() { scan.TestHookWideRows = nil }()
			defer scan.TestPlainQueryOff.Store(false)
			var nulled int64
			for i := int64(1); i < 9990; i += 1000 {
				nulled += int64(len(fmt.Sprint(i%97))*2048 + len(fmt.Sprint(i)))
				if i%7 == 0 {
					nulled++
				}
			}
			// read page by page (the NULLs too), then through iceberg-go's
			// scan and the read by dictionary
			for _, plainOff := range []bool{false, true} {
				scan.TestPlainQueryOff.Store(plainOff)
				for _, q := range []struct{ sql, want string }{
					{`SELECT count(*), count(s), sum(length(s)) FROM t`, fmt.Sprintf("13950|13900|%d", length+1429-nulled-deletedBytes()+3920*4005)},
					{`SELECT count(*), sum(length(s)) FROM t WHERE s <> 'zz'`, fmt.Sprintf("13900|%d", length+1429-nulled-deletedBytes()+3920*4005)},
				} {
					bounded.Store(0)
					res, err := s.SQL(ctx, q.sql)
					if err != nil {
						t.Fatal(err)
					}
					got, err := collectRows(ctx, res)
					if err != nil || !slices.Equal(got, []string{q.want}) {
						t.Fatalf("plain reads off %v: %s: got %v (%v), want %v", plainOff, q.sql, got, err, q.want)
					}
					if plainOff && bounded.Load() == 0 {
						t.Fatalf("%s: no file was read in fewer rows a batch", q.sql)
					}
				}
				// the batches a plain projection returns are the scan's
				res, err = s.SQL(ctx, `SELECT id, s FROM t WHERE id >= 20000`)
				if err != nil {
					t.Fatal(err)
				}
				bs, err := res.Collect(ctx)
				res.Close()
				if err != nil {
					t.Fatal(err)
				}
				var rows, most, nulls int64
				for _, b := range bs {
					rows += b.NumRows()
					most = max(most, b.NumRows())
					nulls += int64(b.Column(1).NullN())
					b.Release()
				}
				if rows != 3960 || nulls != 40 || most > 2*(6<<20)/4005 {
					t.Fatalf("plain reads off %v: SELECT id, s: %d rows (%d NULL), batches of up to %d rows; want 3960 (40 NULL) in batches of about %d",
						plainOff, rows, nulls, most, (6<<20)/4005)
				}
			}
		})
	}
}

// deletedBytes is the bytes of TestLongStringsReadInSmallerBatches's
// strings of ids 9990–9999, after its MERGE.
func deletedBytes() int64 {
	var n int64
	for i := int64(9990); i < 10000; i++ {
		n += int64(len(fmt.Sprint(i%97))*2048 + len(fmt.Sprint(i)))
		if i%7 == 0 {
			n++
		}
	}
	return n
}
