package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skadedb/skade/lake"
)

// BenchmarkWideUpdate is the wide-table case of copying unchanged row
// groups and column chunks verbatim (mergeinto/rgcopy.go): a 50-column
// table of 200,000 rows in one data file of 20 row groups, and an UPDATE
// (or a MERGE) of 2 columns on 1% of the rows, either spread over every
// row group (id % 100 = k) or in one contiguous range (one row group
// hit). An UPDATE patches the row groups it hits (only the 2 columns
// encoded again); a MERGE copies the row groups it does not hit. Two tables with the same
// data, one with skade.write.copy-row-groups = false, take the same
// statement in turn (the order alternates each op), so both see the same
// machine. It reports per statement the milliseconds and the MB written
// by encoding (added-files-size − skade.copied-files-size of the
// snapshot), for each table, and the copy/no-copy ratios.
//
//	go test -run '^$' -bench WideUpdate -benchtime 10x ./bench
func BenchmarkWideUpdate(b *testing.B) {
	ctx := context.Background()
	const rows, groupRows, cols = 200_000, 10_000, 50
	set := "c1 = c1 + 1, c2 = c2 || 'x'"
	cluster := func(i int) (lo, hi int) {
		lo = (i * 7 % 100) * (rows / 100)
		return lo, lo + rows/100
	}
	for _, tc := range []struct {
		name string
		stmt func(i int, table string) string
	}{
		{"update-spread", func(i int, t string) string {
			return fmt.Sprintf("UPDATE %s SET %s WHERE id %% 100 = %d", t, set, i%100)
		}},
		{"update-clustered", func(i int, t string) string {
			lo, hi := cluster(i)
			return fmt.Sprintf("UPDATE %s SET %s WHERE id >= %d AND id < %d", t, set, lo, hi)
		}},
		{"merge-spread", func(i int, t string) string {
			return fmt.Sprintf("MERGE INTO %s t USING (SELECT i * 100 + %d AS id FROM range(0, %d) r(i)) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET %s", t, i%100, rows/100, set)
		}},
		{"merge-clustered", func(i int, t string) string {
			lo, hi := cluster(i)
			return fmt.Sprintf("MERGE INTO %s t USING (SELECT i AS id FROM range(%d, %d) r(i)) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET %s", t, lo, hi, set)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			lk, err := lake.Open(ctx, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer lk.Close()
			s := lk.Session()
			var defs, exprs []string
			for c := 1; c < cols; c++ {
				switch c % 3 {
				case 0:
					defs = append(defs, fmt.Sprintf("c%d BIGINT", c))
					exprs = append(exprs, fmt.Sprintf("(i * %d) %% 1000003", c+7))
				case 1:
					defs = append(defs, fmt.Sprintf("c%d DOUBLE", c))
					exprs = append(exprs, fmt.Sprintf("((i * %d) %% 100003) / 7.0", c+3))
				default:
					defs = append(defs, fmt.Sprintf("c%d VARCHAR", c))
					exprs = append(exprs, fmt.Sprintf("'val' || ((i * %d) %% 9973)", c+5))
				}
			}
			for _, t := range []struct{ name, props string }{{"copy", ""}, {"nocopy", ", 'skade.write.copy-row-groups' = 'false'"}} {
				mustSQL(b, s, fmt.Sprintf("CREATE TABLE %s (id BIGINT, %s) WITH ('write.parquet.row-group-limit' = '%d'%s)",
					t.name, strings.Join(defs, ", "), groupRows, t.props))
				mustSQL(b, s, fmt.Sprintf("INSERT INTO %s SELECT i, %s FROM range(%d) r(i)", t.name, strings.Join(exprs, ", "), rows))
			}
			var took [2]time.Duration
			var encoded [2]int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for k := range 2 {
					side := (i + k) % 2
					name := []string{"copy", "nocopy"}[side]
					start := time.Now()
					mustSQL(b, s, tc.stmt(i, name))
					took[side] += time.Since(start)
					encoded[side] += encodedBytes(b, s, name)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(took[0].Milliseconds())/n, "copy_ms/op")
			b.ReportMetric(float64(took[1].Milliseconds())/n, "nocopy_ms/op")
			b.ReportMetric(float64(took[0])/float64(took[1]), "time_ratio")
			b.ReportMetric(float64(encoded[0])/n/1e6, "copy_encoded_MB/op")
			b.ReportMetric(float64(encoded[1])/n/1e6, "nocopy_encoded_MB/op")
		})
	}
}

// encodedBytes is what table's last snapshot wrote by encoding: its
// added files' size less what it copied verbatim.
func encodedBytes(b *testing.B, s *lake.Session, table string) int64 {
	v := firstRowInts(b, s, "SELECT summary['added-files-size'], coalesce(summary['skade.copied-files-size'], '0') FROM "+
		table+"$snapshots ORDER BY committed_at DESC LIMIT 1")
	return v[0] - v[1]
}

// BenchmarkMergeOnReadDelete is a merge-on-read DELETE (and UPDATE) of 1%
// of a 1M-row table of 10 columns in one data file of 100 row groups:
// either one contiguous id range, which statistics confine to one row
// group, or spread (id % 100 = k), which no statistics help. Each
// statement runs in a transaction that is rolled back, so every one finds
// the file without deletes. Run it from test binaries of two commits,
// alternately, to compare.
//
//	go test -run '^$' -bench MergeOnReadDelete -benchtime 10x ./bench
func BenchmarkMergeOnReadDelete(b *testing.B) {
	ctx := context.Background()
	const rows, groupRows = 1_000_000, 10_000
	lk, err := lake.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer lk.Close()
	s := lk.Session()
	mustSQL(b, s, fmt.Sprintf(`CREATE TABLE m (id BIGINT, a BIGINT, b DOUBLE, c VARCHAR, d DATE, e BIGINT, f DOUBLE, g VARCHAR, h BIGINT, k INT)
		WITH ('write.parquet.row-group-limit' = '%d', 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')`, groupRows))
	mustSQL(b, s, fmt.Sprintf(`INSERT INTO m SELECT i, i * 7 %% 1000003, i / 3.0, 'v' || (i %% 9973), DATE '2020-01-01' + (i / 1000)::int,
		i %% 77, i * 0.25, 'w' || (i %% 101), i * 3, (i %% 5)::int FROM range(%d) r(i)`, rows))
	for _, tc := range []struct {
		name string
		stmt func(i int) string
	}{
		{"delete-clustered", func(i int) string {
			lo := (i * 37 % 100) * (rows / 100)
			return fmt.Sprintf("DELETE FROM m WHERE id >= %d AND id < %d", lo, lo+rows/100)
		}},
		{"delete-spread", func(i int) string { return fmt.Sprintf("DELETE FROM m WHERE id %% 100 = %d", i%100) }},
		{"update-clustered", func(i int) string {
			lo := (i * 37 % 100) * (rows / 100)
			return fmt.Sprintf("UPDATE m SET e = e + 1 WHERE id >= %d AND id < %d", lo, lo+rows/100)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var took time.Duration
			for i := 0; i < b.N; i++ {
				mustSQL(b, s, "BEGIN")
				start := time.Now()
				mustSQL(b, s, tc.stmt(i))
				took += time.Since(start)
				mustSQL(b, s, "ROLLBACK")
			}
			b.ReportMetric(float64(took.Microseconds())/1e3/float64(b.N), "stmt_ms/op")
		})
	}
}
