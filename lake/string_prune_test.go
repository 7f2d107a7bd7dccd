package lake_test

import (
	"regexp"
	"strings"
	"testing"
)

// forPrunedTables runs test on a table created with each of: v2
// unpartitioned, and v3 bucketed (table: the PARTITIONED BY and WITH
// clauses).
func forPrunedTables(t *testing.T, test func(t *testing.T, table string)) {
	for _, c := range []struct{ name, table string }{
		{"v2", ""},
		{"v3-bucketed", " PARTITIONED BY (bucket(2, id)) WITH ('format-version' = '3')"},
	} {
		t.Run(c.name, func(t *testing.T) { test(t, c.table) })
	}
}

// Row groups left unread by their string statistics (scan/plainprune.go):
// by a read by dictionary and by a plain read, each predicate's rows
// against the same predicate on s || ”, which no scan prunes by.
// Row groups of 250 rows: dictionary-encoded ones, ones of distinct
// strings (plain pages), empty strings (which arrow-go leaves out of the
// minimum), strings past the 16-byte bound of file metrics, NULLs; v2 and
// v3, partitioned and not, small splits; and once more after deletes.
func TestStringStatisticsPruneRowGroups(t *testing.T) {
	forPrunedTables(t, func(t *testing.T, table string) {
		s := sqlLake(t).Session()
		mustExec(t, s, `CREATE TABLE t (id BIGINT, s VARCHAR)`+table+`;
			ALTER TABLE t SET TBLPROPERTIES ('write.parquet.row-group-limit' = '250', 'read.split.target-size' = '8192', 'write.delete.mode' = 'merge-on-read');
			INSERT INTO t SELECT i, CASE
				WHEN i % 11 = 0 THEN NULL
				WHEN i < 1000 THEN ['', 'apple', 'apricot'][i % 3 + 1]
				WHEN i < 2000 THEN 'banana'
				WHEN i < 3000 THEN 'cherry with a long tail ' || i
				ELSE ['ap', 'b', 'zz'][i % 3 + 1] END
			FROM range(0, 4000) r(i)`)
		preds := []string{
			"s = 'banana'", "s = ''", "s = 'apple'", "s < 'b'", "s <= ''", "s < 'apple'",
			"s > 'c'", "s >= 'cherry with a long tail 2500'", "s > 'cherry with a long tail 2999'",
			"s IN ('banana', 'zz')", "s IN ('', 'q')", "s LIKE 'ch%'", "s LIKE 'ap%'", "s LIKE 'apr%'",
			"s LIKE '%'", "s LIKE 'cherry with a long tail 25%'", "s <> 'banana'", "s IS NULL",
			"s = 'banana' OR id = 5", "s > 'y' OR id < 3", "s BETWEEN 'b' AND 'c'",
		}
		check := func(when string) {
			for _, p := range preds {
				got := query(t, s, "SELECT count(*), coalesce(sum(id), 0) FROM t WHERE "+p)
				unpruned := regexp.MustCompile(`\bs\b`).ReplaceAllString(p, "(s || '')")
				want := query(t, s, "SELECT count(*), coalesce(sum(id), 0) FROM t WHERE "+unpruned)
				if got[0] != want[0] {
					t.Errorf("%s: WHERE %s: %s, WHERE %s: %s", when, p, got[0], unpruned, want[0])
				}
			}
		}
		check("written")
		plan := strings.Join(query(t, s, "EXPLAIN ANALYZE SELECT id FROM t WHERE s = 'banana'"), "\n")
		if !strings.Contains(plan, "row_groups_pruned=") {
			t.Errorf("s = 'banana' read every row group:\n%s", plan)
		}
		plan = strings.Join(query(t, s, "EXPLAIN ANALYZE SELECT id FROM t WHERE s = 'banana' OR id = 5"), "\n")
		if !strings.Contains(plan, "row_groups_pruned=") {
			t.Errorf("s = 'banana' OR id = 5 read every row group:\n%s", plan)
		}
		mustExec(t, s, "DELETE FROM t WHERE id % 10 = 3")
		check("after deletes")
	})
}

// count(*) and SELECT 1 under a filter on string columns read no other
// column: a file read by dictionary returns the column the scan must
// still carry as NULLs (scan.ReadSpec.CountOnly). Every count against
// count(id), which reads id; row groups all passing, none passing, some;
// exact filters (=, IN, LIKE, <>) and one with a Filter above; v2 and
// v3 bucketed; and after deletes (files read another way).
func TestCountOnlyScans(t *testing.T) {
	forPrunedTables(t, func(t *testing.T, table string) {
		s := sqlLake(t).Session()
		mustExec(t, s, `CREATE TABLE t (id BIGINT, s VARCHAR, x DOUBLE)`+table+`;
			ALTER TABLE t SET TBLPROPERTIES ('write.parquet.row-group-limit' = '300', 'read.split.target-size' = '8192', 'write.delete.mode' = 'merge-on-read');
			INSERT INTO t SELECT i, CASE WHEN i % 13 = 0 AND i >= 2400 THEN NULL WHEN i < 1200 THEN 'old' WHEN i < 2400 THEN ['new', 'updated'][i % 2 + 1] ELSE 'x' || (i % 50) END, i * 0.5
			FROM range(0, 3600) r(i)`)
		preds := []string{
			"s = 'old'", "s = 'updated'", "s IN ('new', 'x7')", "s LIKE 'x1%'", "s <> 'old'", "s IS NULL",
			"s = 'none'", "s = 'updated' AND x > 1000", "s = 'old' OR s = 'x3'",
		}
		check := func(when string) {
			for _, p := range preds {
				want := query(t, s, "SELECT count(id) FROM t WHERE "+p) // reads id, never NULL
				if got := query(t, s, "SELECT count(*) FROM t WHERE "+p); got[0] != want[0] {
					t.Errorf("%s: count(*) WHERE %s: %s, want %s", when, p, got[0], want[0])
				}
				if got := query(t, s, "SELECT count(*) FROM (SELECT 1 FROM t WHERE "+p+") q"); got[0] != want[0] {
					t.Errorf("%s: SELECT 1 WHERE %s: %s rows, want %s", when, p, got[0], want[0])
				}
			}
		}
		check("written")
		mustExec(t, s, "DELETE FROM t WHERE id % 10 = 3")
		check("after deletes")
	})
}
