package lake_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/skadedb/skade/scan"
)

// A query whose pushed filter tests string columns only reads files in
// which those columns are dictionary-encoded by dictionary and indices
// (scan/dictread.go). Every query must return what iceberg-go's scan of
// the same files returns (dictionary reads off): v2 and v3, partitioned
// and not, row groups of 300 rows read as splits of a few row groups,
// NULLs, a string column that falls back to plain pages (read through the
// scan), files with deletes (read through the scan), values that no row
// group holds (groups left after their first batch) and predicates on
// other columns (read through the scan).
func TestDictFilteredReads(t *testing.T) {
	type seen struct {
		groups, skipped, rows, passed int64
	}
	var mu sync.Mutex
	var got seen
	scan.TestHookDictRead = func(rows, passed int64, skipped bool) {
		mu.Lock()
		defer mu.Unlock()
		got.groups++
		got.rows += rows
		got.passed += passed
		if skipped {
			got.skipped++
		}
	}
	defer func() { scan.TestHookDictRead = nil }()
	read := func() seen {
		mu.Lock()
		defer mu.Unlock()
		s := got
		got = seen{}
		return s
	}
	for _, version := range []string{"2", "3"} {
		for _, part := range []string{"", " PARTITIONED BY (bucket(4, id))"} {
			what := "v" + version + part
			lk := sqlLake(t)
			s := lk.Session()
			mustExec(t, s, fmt.Sprintf(`CREATE TABLE t (id BIGINT, status VARCHAR, tag VARCHAR, amount DOUBLE, u VARCHAR)%s
				WITH ('format-version' = '%s', 'write.parquet.row-group-limit' = '300', 'read.split.target-size' = '4096', 'write.delete.mode' = 'merge-on-read');
				INSERT INTO t SELECT i,
					CASE WHEN i %% 11 = 0 THEN NULL WHEN i %% 5 = 0 THEN 'active' WHEN i %% 5 = 1 THEN 'closed' WHEN i %% 5 = 2 THEN 'pending' WHEN i < 3000 THEN 'new' ELSE 'late' END,
					CASE WHEN i %% 3 = 0 THEN 'x' ELSE 'y' END, i * 1.5, 'u' || i
				FROM range(0, 6000) r(i);
				INSERT INTO t SELECT i, 'rare', NULL, -1.0 * i, 'v' || i FROM range(6000, 6050) r(i)`, part, version))
			queries := []struct {
				where string
				dict  bool // read by dictionary
			}{
				{"status = 'active'", true},
				{"status = 'rare'", true},
				{"status = 'nowhere'", true},
				{"status IN ('closed', 'late')", true},
				{"status < 'n'", true},
				{"status >= 'late' AND status <= 'pending'", true},
				{"status BETWEEN 'closed' AND 'new'", true},
				{"status IS NULL", true},
				{"status IS NOT NULL", true},
				{"status = 'new' OR status IS NULL", true},
				{"status = 'rare' OR tag = 'x'", true},
				{"status = 'pending' AND tag = 'y'", true},
				{"status = 'active' AND id > 4000", false},
				{"u = 'u17'", false}, // unique strings: no dictionary
				{"amount > 100", false},
			}
			check := func(round string) {
				read() // what earlier statements read
				for _, q := range queries {
					sql := "SELECT id, status, tag, amount FROM t WHERE " + q.where + " ORDER BY id"
					scan.TestDictReadOff.Store(true)
					want := query(t, s, sql)
					scan.TestDictReadOff.Store(false)
					if off := read(); off.groups != 0 {
						t.Fatalf("%s, %s: %s: read by dictionary with dictionary reads off", what, round, q.where)
					}
					have := query(t, s, sql)
					n := read()
					if !slices.Equal(have, want) {
						t.Fatalf("%s, %s: %s: %d rows, %d through the scan\n%v\n%v", what, round, q.where, len(have), len(want), have, want)
					}
					if q.dict && round == "clean" && n.groups == 0 {
						t.Fatalf("%s, %s: %s: no row group read by dictionary", what, round, q.where)
					}
					if !q.dict && n.groups != 0 {
						t.Fatalf("%s, %s: %s: %d row groups read by dictionary", what, round, q.where, n.groups)
					}
					// a row group in plain pages is read through
					if q.where == "status = 'nowhere'" && round == "clean" && (n.skipped == 0 || part == "" && n.skipped != n.groups || len(have) != 0) {
						t.Fatalf("%s: %s: %d of %d row groups left early, %d rows", what, q.where, n.skipped, n.groups, len(have))
					}
					// unpartitioned, every file is read by dictionary; a
					// bucket's file of a few rows in plain pages is not
					if q.where == "status = 'active'" && round == "clean" && (n.passed > int64(len(have)) || n.passed == 0 || part == "" && n.passed != int64(len(have)) || n.rows <= n.passed) {
						t.Fatalf("%s: %s: %d of %d rows passed, %d returned", what, q.where, n.passed, n.rows, len(have))
					}
				}
			}
			check("clean")
			// deletes: files with them are read through the scan
			mustExec(t, s, "DELETE FROM t WHERE id % 7 = 0; UPDATE t SET status = 'active' WHERE id % 13 = 0")
			check("after deletes")
			if c := query(t, s, "SELECT count(*) FROM t WHERE status = 'active'"); len(c) != 1 {
				t.Fatalf("%s: %v", what, c)
			}
		}
	}
}
