package lake_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/skadedb/skade/scan"
)

// TestAbsentColumnsOfFileWithoutMetrics: a query whose columns a file
// another writer made lacks, the file registered without column metrics
// (as a migration registers it), reads that file's rows as NULLs (or the
// column's initial default, v3), with the page-by-page reads on and off,
// filtered and not, in both format versions. The columns are one the
// table had when the file came (c) and ones added after (k, and on v3 dv
// with a default). iceberg-go cannot read a file with none of the columns
// asked for; without statistics, only the file's footer tells the scan
// to read another column of it too.
func TestAbsentColumnsOfFileWithoutMetrics(t *testing.T) {
	ctx := context.Background()
	for _, version := range []string{"2", "3"} {
		for _, plainOff := range []bool{false, true} {
			t.Run(fmt.Sprintf("v%s/plainoff=%v", version, plainOff), func(t *testing.T) {
				scan.TestPlainQueryOff.Store(plainOff)
				defer scan.TestPlainQueryOff.Store(false)
				lk, _ := openLake(t)
				s := lk.Session()
				mustExec(t, s, fmt.Sprintf(`CREATE TABLE t (id BIGINT, n INT, c VARCHAR) WITH ('format-version' = '%s', 'read.split.target-size' = '2048')`, version))
				mustExec(t, s, `INSERT INTO t VALUES (1, 10, NULL), (2, 20, NULL)`)
				tbl, err := lk.Table(ctx, "t")
				if err != nil {
					t.Fatal(err)
				}
				// another writer's file of ids 100..349, 3 row groups
				sc := arrow.NewSchema([]arrow.Field{
					{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fieldID("1")},
					{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: fieldID("2")}}, nil)
				b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
				for i := range int64(250) {
					b.Field(0).(*array.Int64Builder).Append(100 + i)
					b.Field(1).(*array.Int32Builder).Append(int32(i))
				}
				rec := b.NewRecordBatch()
				b.Release()
				path := filepath.Join(tbl.Iceberg().Location(), "data", "foreign.parquet")
				size := writeForeignFile(t, path, rec, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(100)), pqarrow.DefaultWriterProps())
				commitDataFiles(t, tbl, migratedDataFile(t, tbl, path, nil, rec.NumRows(), size, 1000))
				rec.Release()
				mustExec(t, s, `ALTER TABLE t ADD COLUMN k BIGINT; INSERT INTO t VALUES (3, 30, 'x', 7)`)
				type query struct {
					sql  string
					want []string
				}
				var v3 []query
				if version == "3" {
					mustExec(t, s, `ALTER TABLE t ADD COLUMN dv INT DEFAULT 5`)
					v3 = []query{
						{`SELECT dv, count(*) FROM t GROUP BY dv`, []string{"5|253"}},
						{`SELECT count(*) FROM t WHERE dv = 5`, []string{"253"}},
					}
				}
				for _, q := range append([]query{
					{`SELECT count(*), count(c), count(k) FROM t`, []string{"253|1|1"}},
					{`SELECT count(*) FROM t WHERE c IS NULL`, []string{"252"}},
					{`SELECT c, k, count(*) FROM t GROUP BY c, k ORDER BY c`, []string{"x|7|1", "NULL|NULL|252"}},
					{`SELECT k FROM t WHERE k > 0`, []string{"7"}},
					{`SELECT c FROM t WHERE c = 'x'`, []string{"x"}},
				}, v3...) {
					res, err := s.SQL(ctx, q.sql)
					if err != nil {
						t.Fatalf("%s: %v", q.sql, err)
					}
					got, err := collectRows(ctx, res)
					if err != nil {
						t.Fatalf("%s: %v", q.sql, err)
					}
					if !slices.Equal(got, q.want) {
						t.Fatalf("%s: got %v, want %v", q.sql, got, q.want)
					}
				}
				for _, mode := range []string{"merge-on-read", "copy-on-write"} {
					mustExec(t, s, fmt.Sprintf(`ALTER TABLE t SET TBLPROPERTIES ('write.delete.mode' = '%[1]s', 'write.update.mode' = '%[1]s', 'write.merge.mode' = '%[1]s')`, mode))
					// deletes of 50 of the foreign file's rows, by a column it
					// lacks, then MERGEs keyed on columns it lacks
					lo := map[string]int{"merge-on-read": 300, "copy-on-write": 250}[mode]
					for _, st := range []string{fmt.Sprintf(`DELETE FROM t WHERE c IS NULL AND k IS NULL AND id >= %d AND id < %d`, lo, lo+50),
						`UPDATE t SET n = n WHERE c = 'none'`,
						`MERGE INTO t USING (SELECT 'x' AS c) src ON t.c = src.c WHEN MATCHED THEN UPDATE SET k = k + 1`,
						`MERGE INTO t USING (SELECT CAST(8 + k AS BIGINT) AS k FROM (VALUES (0), (1)) v(k)) src ON t.k = src.k WHEN MATCHED THEN UPDATE SET n = n + 1`} {
						res, err := s.SQL(ctx, st)
						if err != nil {
							t.Fatalf("%s: %s: %v", mode, st, err)
						}
						res.Close()
					}
				}
				// 150 foreign rows left (n 0..149), and row 3 changed twice
				// by each mode
				for _, q := range []struct {
					sql  string
					want []string
				}{
					{`SELECT count(*), sum(n), count(c), count(k) FROM t`, []string{fmt.Sprint("153|", 149*150/2+10+20+32, "|1|1")}},
					{`SELECT id, n, c, k FROM t WHERE k IS NOT NULL`, []string{"3|32|x|9"}},
				} {
					res, err := s.SQL(ctx, q.sql)
					if err != nil {
						t.Fatalf("%s: %v", q.sql, err)
					}
					got, err := collectRows(ctx, res)
					if err != nil || !slices.Equal(got, q.want) {
						t.Fatalf("%s: got %v (%v), want %v", q.sql, got, err, q.want)
					}
				}
				// the columns selected alone
				res, err := s.SQL(ctx, `SELECT c FROM t`)
				if err != nil {
					t.Fatal(err)
				}
				got, err := collectRows(ctx, res)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 153 || slices.Index(got, "x") < 0 {
					t.Fatalf("SELECT c: %d rows (%v)", len(got), head(got))
				}
			})
		}
	}
}
