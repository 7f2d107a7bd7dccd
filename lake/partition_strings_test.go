package lake_test

import (
	"fmt"
	"slices"
	"testing"
)

// Every write into a table partitioned by a string column records each
// data file's partition as its rows have it. iceberg-go's partitioned
// writer keeps views of the first row's string values, and the rows read
// from the lake sit in recycled read buffers (freed buffers are poisoned
// under go test): a CREATE TABLE … AS SELECT once recorded partitions
// ('w2') and ('\xa5\xa5') for rows of 'bb' and 'cc', which a query
// filtering on part then pruned away.
func TestStringPartitionValuesSurviveRecycledBuffers(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE c (id BIGINT, v VARCHAR, part VARCHAR);
		INSERT INTO c SELECT i, 'v' || i, CASE i % 3 WHEN 0 THEN 'aa' WHEN 1 THEN 'bb' ELSE 'cc' END FROM range(200000) r(i);
		INSERT INTO c SELECT i, 'w' || i, CASE i % 3 WHEN 0 THEN 'aa' WHEN 1 THEN 'bb' ELSE 'cc' END FROM range(200000, 400000) r(i)`)
	check := func(table, step string, parts ...string) {
		t.Helper()
		got := query(t, s, fmt.Sprintf("SELECT DISTINCT CAST(partition AS VARCHAR) FROM %s$files WHERE content = 0 ORDER BY 1", table))
		if !slices.Equal(got, parts) {
			t.Fatalf("%s: %s's data files are in partitions %q, want %q", step, table, got, parts)
		}
		for _, p := range []string{"aa", "bb", "cc"} {
			// the second count reads every file: part || '' prunes nothing
			got := query(t, s, fmt.Sprintf("SELECT (SELECT count(*) FROM %[1]s WHERE part = '%[2]s'), (SELECT count(*) FROM %[1]s WHERE part || '' = '%[2]s')", table, p))
			if want := []string{"133333|133333"}; p == "aa" && !slices.Equal(got, []string{"133334|133334"}) || p != "aa" && !slices.Equal(got, want) {
				t.Fatalf("%s: rows of %s's partition %s found pruned and unpruned: %v", step, table, p, got)
			}
		}
	}
	identity := []string{"(aa)", "(bb)", "(cc)"}
	mustExec(t, s, "CREATE TABLE p PARTITIONED BY (part) AS SELECT * FROM c")
	check("p", "CREATE TABLE AS", identity...)
	mustExec(t, s, "CREATE TABLE q (id BIGINT, v VARCHAR, part VARCHAR) PARTITIONED BY (truncate(1, part)); INSERT INTO q SELECT * FROM c")
	check("q", "INSERT SELECT, truncate(1, part)", "(a)", "(b)", "(c)")
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		name := map[string]string{"copy-on-write": "cow", "merge-on-read": "mor"}[mode]
		mustExec(t, s, fmt.Sprintf(`CREATE TABLE %[1]s (id BIGINT, v VARCHAR, part VARCHAR) PARTITIONED BY (part)
			WITH ('write.update.mode' = '%[2]s', 'write.delete.mode' = '%[2]s', 'write.merge.mode' = '%[2]s');
			INSERT INTO %[1]s SELECT * FROM c`, name, mode))
		mustExec(t, s, fmt.Sprintf("UPDATE %s SET v = 'u' WHERE id %% 1000 = 0", name))
		check(name, mode+" UPDATE", identity...)
		mustExec(t, s, fmt.Sprintf("MERGE INTO %[1]s USING (SELECT i AS id FROM range(0, 400000, 7) r(i)) s ON %[1]s.id = s.id WHEN MATCHED THEN UPDATE SET v = 'm'", name))
		check(name, mode+" MERGE", identity...)
		mustExec(t, s, fmt.Sprintf("ALTER TABLE %s EXECUTE compact", name))
		check(name, mode+" compaction", identity...)
	}
}
