package lake_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestGroupByDictionary: a GROUP BY of one string column that nothing
// else in the query reads takes the column as dictionary arrays where a
// file stores it dictionary-encoded (plan/dict_group.go,
// exec/aggregate_dict.go). Its groups must be the ones the usual path
// gives (the same query with min(g) added, which reads g and so takes
// plain arrays), with and without a WHERE on other columns (a Filter
// between, which gathers the dictionary arrays by their indices): v2 and
// v3, partitioned by the key and not, row groups of
// 400 rows in splits read on every core, NULL keys, a key column whose
// dictionary overflows into PLAIN pages, after merge-on-read deletes and
// updates and copy-on-write ones. The dictionary path must have been
// taken (EXPLAIN ANALYZE's dictionary_batches) on the clean table.
func TestGroupByDictionary(t *testing.T) {
	for _, version := range []string{"2", "3"} {
		for _, part := range []string{"", " PARTITIONED BY (g)", " PARTITIONED BY (bucket(3, id))"} {
			for _, mode := range []string{"merge-on-read", "copy-on-write"} {
				what := fmt.Sprintf("v%s%s, %s", version, part, mode)
				lk, _ := openLake(t)
				s := lk.Session()
				mustExec(t, s, fmt.Sprintf(`CREATE TABLE t (id BIGINT, g VARCHAR, h VARCHAR, v INT, x DOUBLE)%s
					WITH ('format-version' = '%s', 'write.parquet.row-group-limit' = '400', 'read.split.target-size' = '8192',
						'write.parquet.page-size-bytes' = '1024', 'write.delete.mode' = '%s', 'write.update.mode' = '%s', 'write.merge.mode' = '%s')`,
					part, version, mode, mode, mode))
				for f := range 4 {
					mustExec(t, s, fmt.Sprintf(`INSERT INTO t SELECT i,
						CASE WHEN i %% 23 = 0 THEN NULL ELSE 'group ' || CAST(i * 7 %% 9 AS VARCHAR) END,
						'h' || CAST(i * 7919 %% 2500 AS VARCHAR) || repeat('x', CAST(i %% 40 AS INT)),
						CASE WHEN i %% 11 = 0 THEN NULL ELSE CAST(i %% 1000 AS INT) END, i * 0.25
						FROM range(%d, %d) r(i)`, f*3000, (f+1)*3000))
				}
				check := func(round string) {
					t.Helper()
					for _, kw := range [][2]string{{"g", ""}, {"h", ""}, {"g", " WHERE v > 100 AND x < 2000"}} {
						key, where := kw[0], kw[1]
						q := fmt.Sprintf("SELECT %[1]s, count(*), count(v), sum(v), sum(x), max(id) FROM t%[2]s GROUP BY %[1]s", key, where)
						have := query(t, s, q+" ORDER BY 1")
						var want []string
						for _, r := range query(t, s, fmt.Sprintf("SELECT %[1]s, count(*), count(v), sum(v), sum(x), max(id), min(%[1]s) FROM t%[2]s GROUP BY %[1]s ORDER BY 1", key, where)) {
							want = append(want, r[:strings.LastIndex(r, "|")])
						}
						if !slices.Equal(have, want) {
							t.Fatalf("%s, %s: GROUP BY %s%s: %d groups %v, want %d %v", what, round, key, where, len(have), head(have), len(want), head(want))
						}
						if len(want) < 9 {
							t.Fatalf("%s, %s: GROUP BY %s: %d groups", what, round, key, len(want))
						}
						plan := strings.Join(query(t, s, "EXPLAIN ANALYZE "+q), "\n")
						if !strings.Contains(plan, "dictionary=["+key+"]") {
							t.Fatalf("%s, %s: GROUP BY %s does not ask for dictionaries:\n%s", what, round, key, plan)
						}
						// (after the writes a v3 table's files carry deletion
						// vectors, which iceberg-go's scan applies: no page
						// is read by skade)
						if key == "g" && round == "clean" && !strings.Contains(plan, "dictionary_batches=") {
							t.Fatalf("%s, %s: GROUP BY g took no batch by dictionary:\n%s", what, round, plan)
						}
					}
					// integer keys, through the aggregate's direct map
					// (exec/aggregate_intkey.go), against the same groups
					// keyed by text, which take the usual way
					for _, key := range []string{"v", "id % 1000", "v - 500"} {
						q := fmt.Sprintf("SELECT %s AS k, count(*), count(v), sum(v), sum(x), max(id) FROM t GROUP BY 1", key)
						have := query(t, s, q+" ORDER BY 1")
						want := query(t, s, fmt.Sprintf(`SELECT CAST(k AS BIGINT), c, cv, sv, sx, m FROM
							(SELECT CAST(%s AS VARCHAR) AS k, count(*) AS c, count(v) AS cv, sum(v) AS sv, sum(x) AS sx, max(id) AS m FROM t GROUP BY 1)
							ORDER BY 1`, key))
						if !slices.Equal(have, want) || len(want) < 500 {
							t.Fatalf("%s, %s: GROUP BY %s: %d groups %v, want %d %v", what, round, key, len(have), head(have), len(want), head(want))
						}
						plan := strings.Join(query(t, s, "EXPLAIN ANALYZE "+q), "\n")
						if !strings.Contains(plan, "intkey_batches=") {
							t.Fatalf("%s, %s: GROUP BY %s took no batch through the integer map:\n%s", what, round, key, plan)
						}
					}
				}
				check("clean")
				mustExec(t, s, `DELETE FROM t WHERE id % 5 = 1 AND id < 6000;
					UPDATE t SET g = 'group 99', v = v + 1 WHERE id % 17 = 2;
					MERGE INTO t USING (SELECT i AS id FROM range(100, 200) r(i)) src ON t.id = src.id
						WHEN MATCHED THEN UPDATE SET g = NULL, h = 'merged'`)
				check("after writes")
			}
		}
	}
}
