package lake_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// GROUP BY a text column and other keys takes the text column as
// dictionary arrays and groups by its codes, packed with the integer keys
// into one direct map where their ranges are narrow
// (exec.HashAggregate.SetCodedKeys, aggregate_packed.go). Each query
// against the same grouped also by a text expression of the text column,
// which neither codes nor packs: files of few values (dictionaries,
// small row groups), one of distinct strings (plain pages), NULLs in
// either key, a date key, a WHERE, and a memory limit small enough to
// spill.
func TestCodedAndPackedGroupKeys(t *testing.T) {
	s := sqlLake(t).Session()
	mustExec(t, s, `CREATE TABLE g (id BIGINT, s VARCHAR, d DATE, x DOUBLE) WITH ('write.parquet.row-group-limit' = '3000');
		INSERT INTO g SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE ['a', 'b', 'c', ''][i % 4 + 1] END,
			DATE '2024-01-01' + CAST(i % 40 AS INT), i * 0.25 FROM range(0, 20000) r(i);
		INSERT INTO g SELECT i, 'v' || (i % 5000), DATE '2023-06-01' + CAST(i % 3 AS INT), i * 0.5 FROM range(20000, 30000) r(i);
		INSERT INTO g SELECT i, ['c', 'd'][i % 2 + 1], NULL, NULL FROM range(30000, 36000) r(i)`)
	type tc struct{ keys, ref, where string }
	cases := []tc{
		{"s, id % 10", "s, id % 10, s || ''", ""},
		{"id % 7, s", "id % 7, s, s || ''", ""},
		{"s, d", "s, d, s || ''", ""},
		{"s, d, id % 3", "s, d, id % 3, s || ''", " WHERE id % 5 <> 0"},
		{"s, id", "s, id, s || ''", " WHERE id > 15000"},
	}
	for _, limit := range []string{"", "4MB"} {
		if limit != "" {
			mustExec(t, s, "SET memory_limit = '"+limit+"'")
		}
		for _, c := range cases {
			// (compared as sorted sets; an ORDER BY under the limit
			// is checked below)
			q := func(keys string) []string {
				rows := query(t, s, fmt.Sprintf("SELECT %s, count(*), sum(x), min(id) FROM g%s GROUP BY %s", c.keys, c.where, keys))
				slices.Sort(rows)
				return rows
			}
			got, want := q(c.keys), q(c.ref)
			if len(want) < 20 {
				t.Fatalf("GROUP BY %s: %d groups", c.ref, len(want))
			}
			if !slices.Equal(got, want) {
				t.Errorf("GROUP BY %s%s (limit %q): %d groups, want %d", c.keys, c.where, limit, len(got), len(want))
			}
		}
	}
	// An ORDER BY above the spilling aggregate shares the 4 MB: the sort
	// writes its rows out when the aggregate's partitions need the room
	// (exec.Budget's spillers). It failed with a memory-limit error
	// before.
	ordered := "SELECT s, id, count(*), sum(x) FROM g GROUP BY s, id ORDER BY 1, 2 DESC"
	want := query(t, s, ordered)
	mustExec(t, s, "SET memory_limit = '4MB'")
	if got := query(t, s, ordered); !slices.Equal(got, want) {
		t.Errorf("GROUP BY … ORDER BY under 4MB: %d rows, want %d, or another order", len(got), len(want))
	}
	plan := strings.Join(query(t, s, "EXPLAIN ANALYZE "+ordered), "\n")
	if !strings.Contains(plan, "spills_for_others=") {
		t.Errorf("the sort above the spilling aggregate did not spill for it:\n%s", plan)
	}
	plan = strings.Join(query(t, s, "EXPLAIN ANALYZE SELECT s, id, count(*), sum(x) FROM g GROUP BY s, id"), "\n")
	for _, want := range []string{"coded_keys=1", "spilled_rows="} {
		if !strings.Contains(plan, want) {
			t.Errorf("GROUP BY s, id under 4MB: no %s in\n%s", want, plan)
		}
	}
	mustExec(t, s, "RESET memory_limit")
	plan = strings.Join(query(t, s, "EXPLAIN ANALYZE SELECT s, id % 10, count(*) FROM g GROUP BY 1, 2"), "\n")
	for _, want := range []string{"dictionary=[s]", "coded_keys=1", "packed_batches="} {
		if !strings.Contains(plan, want) {
			t.Errorf("GROUP BY s, id %% 10: no %s in\n%s", want, plan)
		}
	}
	plan = strings.Join(query(t, s, "EXPLAIN SELECT s, count(*) FROM g GROUP BY s, upper(s)"), "\n")
	if strings.Contains(plan, "dictionary=") {
		t.Errorf("a text key another key reads was asked for as dictionaries:\n%s", plan)
	}
}
