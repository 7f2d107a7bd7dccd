package lake_test

import (
	"fmt"
	"strings"
	"testing"
)

// count(DISTINCT x) and sum(DISTINCT x) without GROUP BY keep an integer
// argument's values of one range in a bitmap, the rest in the hash table
// (exec.htDistinct). Each against the same aggregates grouped by a
// column holding one value, which the bitmap does not take: every
// integer type; NULLs first (a batch of NULLs only), values below the
// first batch's smallest, values past the bitmap's range, FILTER, an
// expression argument, and rows in several batches.
func TestDistinctIntegersWithoutGroupBy(t *testing.T) {
	s := sqlLake(t).Session()
	mustExec(t, s, `CREATE TABLE d (g INT, x BIGINT, i INT, h SMALLINT, b TINYINT);
		INSERT INTO d SELECT 1, NULL, NULL, NULL, NULL FROM range(0, 3000) r(i)`)
	// files whose values overlap and whose smallest differ: each is a
	// batch of its own at least
	for f := range 5 {
		mustExec(t, s, fmt.Sprintf(`INSERT INTO d SELECT 1,
			CASE WHEN i %% 101 = 0 THEN NULL WHEN i %% 7 = 0 THEN i * 1000003 WHEN i %% 5 = 0 THEN -i ELSE i %% 4000 + %[1]d END,
			CAST(CASE WHEN i %% 11 = 0 THEN -2147483648 WHEN i %% 13 = 0 THEN 2147483647 ELSE i %% 3000 - 1500 + %[1]d END AS INT),
			CAST(i %% 20000 - 10000 AS SMALLINT),
			CAST(i %% 200 - 100 AS TINYINT)
		FROM range(%[2]d, %[3]d) r(i)`, 700-f*300, f*12000, (f+1)*12000))
	}
	for _, agg := range []string{
		"count(DISTINCT x), sum(DISTINCT x)",
		"count(DISTINCT i), sum(DISTINCT i)",
		"count(DISTINCT h), sum(DISTINCT h)",
		"count(DISTINCT b), sum(DISTINCT b)",
		"count(DISTINCT x) FILTER (WHERE x % 3 = 0), count(DISTINCT x % 50000)",
		"count(DISTINCT i + 0), count(DISTINCT x), count(x)",
	} {
		got := query(t, s, fmt.Sprintf("SELECT %s FROM d", agg))
		want := query(t, s, fmt.Sprintf("SELECT %s FROM d GROUP BY g", agg))
		if len(got) != 1 || len(want) != 1 || got[0] != want[0] {
			t.Errorf("SELECT %s: %v without GROUP BY, %v grouped", agg, got, want)
		}
	}
	if got := query(t, s, "SELECT count(DISTINCT x) FROM d WHERE x IS NULL"); got[0] != "0" {
		t.Errorf("count(DISTINCT x) of NULLs only: %v", got)
	}
}

// count(DISTINCT s) of a text column without GROUP BY takes s as
// dictionary arrays from the scan (exec.HashAggregate.SetDictDistinct):
// each batch's dictionary entries are looked up once. Against the same
// grouped by a one-value column: files of few values (dictionaries), one
// of distinct strings (plain pages), NULLs, a WHERE on another column,
// other aggregates beside it, and others reading s (then it is not
// asked for).
func TestDistinctStringsByDictionary(t *testing.T) {
	s := sqlLake(t).Session()
	mustExec(t, s, `CREATE TABLE d (g INT, id BIGINT, s VARCHAR) WITH ('write.parquet.row-group-limit' = '700');
		INSERT INTO d SELECT 1, i, CASE WHEN i % 17 = 0 THEN NULL ELSE ['a', 'b', 'c', ''][i % 4 + 1] END FROM range(0, 5000) r(i);
		INSERT INTO d SELECT 1, i, 'v' || (i % 900) FROM range(5000, 9000) r(i);
		INSERT INTO d SELECT 1, i, ['c', 'd'][i % 2 + 1] FROM range(9000, 12000) r(i)`)
	for _, q := range []string{
		"count(DISTINCT s)",
		"count(DISTINCT s), count(*), sum(id)",
		"count(DISTINCT s), count(DISTINCT s)",
		"count(DISTINCT s), min(s)",
		"count(DISTINCT s), count(DISTINCT id % 7)",
	} {
		for _, where := range []string{"", " WHERE id % 3 = 0", " WHERE id > 8000"} {
			got := query(t, s, "SELECT "+q+" FROM d"+where)
			want := query(t, s, "SELECT "+q+" FROM d"+where+" GROUP BY g")
			if len(got) != 1 || len(want) != 1 || got[0] != want[0] {
				t.Errorf("SELECT %s%s: %v without GROUP BY, %v grouped", q, where, got, want)
			}
		}
	}
	plan := query(t, s, "EXPLAIN SELECT count(DISTINCT s) FROM d")
	found := false
	for _, l := range plan {
		found = found || strings.Contains(l, "dictionary=[s]")
	}
	if !found {
		t.Errorf("count(DISTINCT s) did not ask for s as dictionaries:\n%s", strings.Join(plan, "\n"))
	}
}
