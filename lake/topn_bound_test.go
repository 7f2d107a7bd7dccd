package lake_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestTopNLeavesFilesUnread: ORDER BY col [DESC] LIMIT n over a table
// scan reads the files whose bounds are best first and leaves out those
// none of whose rows can enter the top-N (scan.TopBound). Every answer
// must be the one the same query gives with the key as an expression,
// which the bound does not apply to: over files written in key order and
// out of it, with NULLs first and last, ASC and DESC, OFFSET, a WHERE,
// deletes, v2 and v3, partitioned and not, both write modes, every
// integer-like type, and parallel scans.
func TestTopNLeavesFilesUnread(t *testing.T) {
	for _, version := range []string{"2", "3"} {
		for _, part := range []string{"", " PARTITIONED BY (bucket(3, id))"} {
			for _, mode := range []string{"merge-on-read", "copy-on-write"} {
				what := fmt.Sprintf("v%s%s, %s", version, part, mode)
				lk, _ := openLake(t)
				s := lk.Session()
				mustExec(t, s, fmt.Sprintf(`CREATE TABLE t (id BIGINT, k INT, d DATE, ts TIMESTAMP, n BIGINT, v VARCHAR)%s
					WITH ('format-version' = '%s', 'write.parquet.row-group-limit' = '500',
						'write.delete.mode' = '%s', 'write.update.mode' = '%s', 'write.merge.mode' = '%s')`,
					part, version, mode, mode, mode))
				// 8 files in key order, then 2 spanning it all
				for f := range 8 {
					mustExec(t, s, fmt.Sprintf(`INSERT INTO t SELECT i, CASE WHEN i %% 1999 = 5 THEN NULL ELSE CAST(i %% 5000 AS INT) END, DATE '2020-01-01' + CAST(i / 7 AS INT),
						TIMESTAMP '2024-01-01 00:00:00' + i * INTERVAL '1 second',
						CASE WHEN i %% 97 = 0 THEN NULL ELSE i %% 1000 END, 'r' || CAST(i AS VARCHAR)
						FROM range(%d, %d) r(i)`, f*2000, (f+1)*2000))
				}
				mustExec(t, s, `INSERT INTO t SELECT 100000 + i, CAST(i * 7 % 5000 AS INT), DATE '2019-06-01' + CAST(i AS INT),
					TIMESTAMP '2023-01-01 00:00:00' + i * INTERVAL '1 minute', CASE WHEN i % 50 = 0 THEN NULL ELSE i END, 'x'
					FROM range(0, 3000) r(i);
					INSERT INTO t SELECT 200000 + i, NULL, NULL, NULL, NULL, 'y' FROM range(0, 10) r(i)`)
				check := func(round string) {
					t.Helper()
					for _, q := range []struct{ key, where, tail string }{
						{"id", "", "DESC LIMIT 7"},
						{"id", "", "LIMIT 7"},
						{"id", "", "DESC LIMIT 5 OFFSET 2100"},
						{"id", " WHERE v LIKE 'r%'", "DESC LIMIT 9"},
						{"id", " WHERE n > 500", "ASC LIMIT 9"},
						{"k", "", "DESC NULLS LAST LIMIT 12"},
						{"k", "", "DESC LIMIT 12"},
						{"k", "", "ASC NULLS FIRST LIMIT 12"},
						{"d", "", "DESC LIMIT 10"},
						{"d", "", "LIMIT 10"},
						{"ts", "", "DESC NULLS LAST LIMIT 10"},
						{"ts", "", "LIMIT 10"},
						{"n", "", "DESC NULLS LAST LIMIT 8"},
						{"n", "", "LIMIT 20"},
						{"n", " WHERE id % 97 = 0 OR id > 14000", "DESC LIMIT 30"},
					} {
						// the key's values, in order, and the rows of keys
						// without ties
						sql := func(key string) string {
							return fmt.Sprintf("SELECT %s AS key, id, v FROM t%s ORDER BY %s %s", key, q.where, key, q.tail)
						}
						plain := q.key + " + 0" // an expression: no bound
						if q.key == "ts" {
							plain = q.key + " + INTERVAL '0 second'"
						}
						have, want := query(t, s, sql(q.key)), query(t, s, sql(plain))
						keys := func(rows []string) []string {
							var out []string
							for _, r := range rows {
								out = append(out, r[:strings.Index(r, "|")])
							}
							return out
						}
						if !slices.Equal(keys(have), keys(want)) || len(want) == 0 {
							t.Fatalf("%s, %s: ORDER BY %s %s%s: keys %v, want %v", what, round, q.key, q.tail, q.where, keys(have), keys(want))
						}
						if q.key == "id" && !slices.Equal(have, want) {
							t.Fatalf("%s, %s: ORDER BY id %s%s: %v, want %v", what, round, q.tail, q.where, have, want)
						}
					}
					plan := strings.Join(query(t, s, "EXPLAIN ANALYZE SELECT id FROM t ORDER BY ts DESC NULLS LAST LIMIT 3"), "\n")
					skipped := 0 // over every scan (parallel scans have several)
					for rest := plan; strings.Contains(rest, "topn_ranges_skipped="); {
						rest = rest[strings.Index(rest, "topn_ranges_skipped="):]
						var k int
						fmt.Sscanf(rest, "topn_ranges_skipped=%d", &k)
						skipped += k
						rest = rest[1:]
					}
					if skipped < 3 {
						t.Fatalf("%s, %s: the top-N left %d ranges unread, want most:\n%s", what, round, skipped, plan)
					}
				}
				check("clean")
				// one file of many row groups, read best first (a file
				// this small is read ahead whole before the top-N holds
				// its rows: scan.TestTopBoundRowGroups checks what is left
				// out)
				mustExec(t, s, fmt.Sprintf(`CREATE TABLE one WITH ('format-version' = '%s', 'write.parquet.row-group-limit' = '500')
					AS SELECT * FROM t ORDER BY id`, version))
				for _, q := range []string{"id DESC LIMIT 7", "id LIMIT 7 OFFSET 3", "ts DESC NULLS LAST LIMIT 4", "d LIMIT 9", "k DESC NULLS LAST LIMIT 6"} {
					key := q[:strings.Index(q, " ")]
					plain := key + " + 0"
					if key == "ts" {
						plain = key + " + INTERVAL '0 second'"
					}
					have := query(t, s, fmt.Sprintf("SELECT %s, id FROM one ORDER BY %s", key, q))
					want := query(t, s, fmt.Sprintf("SELECT %s, id FROM one ORDER BY %s%s", key, plain, q[len(key):]))
					if key == "id" && !slices.Equal(have, want) || len(have) != len(want) || len(want) == 0 {
						t.Fatalf("%s: one file: ORDER BY %s: %v, want %v", what, q, have, want)
					}
				}
				mustExec(t, s, `DELETE FROM t WHERE id % 5 = 1 AND id > 14000;
					UPDATE t SET n = n + 1, k = k - 1 WHERE id % 17 = 2;
					MERGE INTO t USING (SELECT i AS id FROM range(15990, 16000) r(i)) src ON t.id = src.id
						WHEN MATCHED THEN DELETE`)
				check("after writes")
				mustExec(t, s, "SET parallel_scans = 'on'")
				check("parallel scans")
			}
		}
	}
}

// TestTopNFloatKeys: ORDER BY a DOUBLE or REAL column … LIMIT n leaves
// out files and row groups as integer keys do (scan.FloatKey), with NaN
// above every number and -0 equal to 0. A descending order, where NaN
// comes first, leaves out only files that count no NaN: v2 tables, whose
// writers count them, and not v3 ones, whose inserts go through
// iceberg-go's Append. Each answer's keys against the same query ordered
// by key + 0, which is not bounded.
func TestTopNFloatKeys(t *testing.T) {
	for _, c := range []struct{ name, part, version string }{
		{"v2", "", "2"},
		{"v2-partitioned", " PARTITIONED BY (bucket(2, id))", "2"},
		{"v3", "", "3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			lk, _ := openLake(t)
			s := lk.Session()
			mustExec(t, s, `CREATE TABLE f (id BIGINT, x DOUBLE, y REAL, s VARCHAR)`+c.part+` WITH ('format-version' = '`+c.version+`', 'write.parquet.row-group-limit' = '500')`)
			// 8 files in key order, one with NaN among small numbers, one
			// of the special values
			for k := range 8 {
				mustExec(t, s, fmt.Sprintf(`INSERT INTO f SELECT i, CASE WHEN i %% 301 = 0 THEN NULL ELSE i * 1.5 - 4000 END,
					CASE WHEN i %% 7 = 0 THEN NULL ELSE CAST(i * 0.5 AS REAL) END, 'r'
					FROM range(%d, %d) r(i)`, k*2000, (k+1)*2000))
			}
			mustExec(t, s, `INSERT INTO f VALUES (90000, 'NaN', 'NaN', 'n'), (90001, 3, 1, 'n'), (90002, 'NaN', 2, 'n'), (90003, NULL, NULL, 'n');
				INSERT INTO f VALUES (90010, '-0', '-0', 'z'), (90011, 0, 0, 'z'), (90012, '-Infinity', '-Infinity', 'z'), (90013, 'Infinity', 'Infinity', 'z')`)
			for _, q := range []string{
				"x DESC LIMIT 7", "x DESC NULLS LAST LIMIT 7", "x LIMIT 7", "x NULLS FIRST LIMIT 4",
				"x DESC NULLS LAST LIMIT 3 OFFSET 2", "y DESC NULLS LAST LIMIT 6", "y LIMIT 6",
				"x LIMIT 5 OFFSET 2990", "x DESC NULLS LAST LIMIT 20",
			} {
				for _, where := range []string{"", " WHERE s <> 'n'", " WHERE id % 3 = 0"} {
					key := q[:strings.Index(q, " ")]
					have := query(t, s, fmt.Sprintf("SELECT %s FROM f%s ORDER BY %s", key, where, q))
					want := query(t, s, fmt.Sprintf("SELECT %s + 0 FROM f%s ORDER BY %s + 0%s", key, where, key, q[len(key):]))
					for i := range have {
						if have[i] == "-0" {
							have[i] = "0"
						}
					}
					if !slices.Equal(have, want) || len(want) == 0 {
						t.Fatalf("ORDER BY %s%s: %v, want %v", q, where, have, want)
					}
				}
			}
			skipped := func(q string) int {
				plan := strings.Join(query(t, s, "EXPLAIN ANALYZE SELECT id FROM f ORDER BY "+q), "\n")
				n := 0
				for rest := plan; strings.Contains(rest, "topn_ranges_skipped="); rest = rest[1:] {
					rest = rest[strings.Index(rest, "topn_ranges_skipped="):]
					var k int
					fmt.Sscanf(rest, "topn_ranges_skipped=%d", &k)
					n += k
				}
				return n
			}
			if n := skipped("x NULLS LAST LIMIT 3"); n < 3 {
				t.Errorf("ORDER BY x LIMIT 3 left %d files unread, want most", n)
			}
			n := skipped("x DESC NULLS LAST LIMIT 3")
			if c.name != "v3" && n < 3 {
				t.Errorf("ORDER BY x DESC NULLS LAST LIMIT 3 left %d files unread, want most", n)
			}
			if c.name == "v3" && n > 0 {
				t.Errorf("ORDER BY x DESC NULLS LAST LIMIT 3 left %d files unread without NaN counts", n)
			}
		})
	}
}
