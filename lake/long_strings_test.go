package lake_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
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
		})
	}
}
