package lake_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestMergeSourceOutsideTargetKeys runs MERGEs whose source keys mostly
// lie outside the target's key range (new ids past the largest, and some
// below the smallest), as an upsert's do. Those rows stay out of the join
// table, which EXPLAIN ANALYZE reports, and are inserted all the same. It
// covers both write modes on a target of three files of 1,000-row row
// groups read in small splits, NULL source keys, a key promoted from INT
// to BIGINT (the older files hold 4-byte bounds), a DATE key, and a table
// that keeps no column bounds (metrics mode none), where no row may be
// left out, and format version 3 (row lineage) in both modes. Every
// expected result is computed here, row by row.
func TestMergeSourceOutsideTargetKeys(t *testing.T) {
	type want struct{ rows, keyed, sumV, sumKey int64 }
	// the target holds keys 0..2999 with v = key; the source's keys are
	// every third key of the target (v = 1), then 59,000 keys from
	// 100,000 on and 500 below zero, and three NULL keys (v = 1)
	expect := func() want {
		var w want
		for k := int64(0); k < 3000; k++ {
			w.rows++
			w.keyed++
			w.sumKey += k
			if k%3 == 0 {
				w.sumV++ // matched: v = s.v
			} else {
				w.sumV += k
			}
		}
		for i := int64(0); i < 59_000; i++ {
			w.rows, w.keyed, w.sumV, w.sumKey = w.rows+1, w.keyed+1, w.sumV+1, w.sumKey+100_000+i
		}
		for i := int64(1); i <= 500; i++ {
			w.rows, w.keyed, w.sumV, w.sumKey = w.rows+1, w.keyed+1, w.sumV+1, w.sumKey-i
		}
		w.rows += 3
		w.sumV += 3
		return w
	}()
	const outside = 59_500
	source := `SELECT i * 3 AS k, 1::BIGINT AS v FROM range(0, 1000) r(i)
		UNION ALL SELECT 100000 + i, 1 FROM range(0, 59000) r(i)
		UNION ALL SELECT -1 - i, 1 FROM range(0, 500) r(i)
		UNION ALL SELECT NULL::BIGINT, 1 FROM range(0, 3) r(i)`
	cases := []struct {
		name, create, alter string
		// key turns the source's BIGINT key into the column's type
		key        string
		keyOfTable string // the key column as a BIGINT, for the sums
		outside    bool   // whether rows may be left out
		props      string // more table properties
	}{
		{name: "copy-on-write", create: "k BIGINT, v BIGINT", key: "s.k", keyOfTable: "k", outside: true},
		{name: "merge-on-read", create: "k BIGINT, v BIGINT", key: "s.k", keyOfTable: "k", outside: true},
		{name: "int promoted to bigint", create: "k INT, v BIGINT", alter: "ALTER TABLE %s ALTER COLUMN k TYPE BIGINT", key: "s.k", keyOfTable: "k", outside: true},
		{name: "date", create: "k DATE, v BIGINT", key: "DATE '2000-01-01' + s.k::INT", keyOfTable: "(k - DATE '2000-01-01')", outside: true},
		{name: "no bounds kept", create: "k BIGINT, v BIGINT", key: "s.k", keyOfTable: "k", outside: false},
		{name: "v3 copy-on-write", create: "k BIGINT, v BIGINT", key: "s.k", keyOfTable: "k", outside: true, props: ", 'format-version' = '3'"},
		{name: "v3 merge-on-read", create: "k BIGINT, v BIGINT", key: "s.k", keyOfTable: "k", outside: true, props: ", 'format-version' = '3', 'write.merge.mode' = 'merge-on-read'"},
	}
	lk := sqlLake(t)
	s := lk.Session()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("kr%d", i)
			props := "'write.parquet.row-group-limit' = '1000', 'read.split.target-size' = '1'"
			if c.name == "merge-on-read" {
				props += ", 'write.merge.mode' = 'merge-on-read'"
			}
			if !c.outside {
				props += ", 'write.metadata.metrics.default' = 'none'"
			}
			props += c.props
			mustExec(t, s, fmt.Sprintf("CREATE TABLE %s (%s) WITH (%s)", name, c.create, props))
			ins := strings.Replace(c.key, "s.k", "i", 1)
			for f := 0; f < 3; f++ {
				mustExec(t, s, fmt.Sprintf("INSERT INTO %s SELECT %s, i FROM range(%d, %d) r(i)", name, ins, f*1000, (f+1)*1000))
			}
			if c.alter != "" {
				mustExec(t, s, fmt.Sprintf(c.alter, name))
			}
			plan := strings.Join(query(t, s, fmt.Sprintf(`EXPLAIN ANALYZE MERGE INTO %s t USING (%s) s ON t.k = %s
				WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (%s, s.v)`, name, source, c.key, c.key)), "\n")
			reported := strings.Contains(plan, fmt.Sprintf("(%d outside the target's key range)", outside))
			if c.outside && !reported {
				t.Errorf("the plan does not report %d source rows outside the target's keys:\n%s", outside, plan)
			}
			if !c.outside && strings.Contains(plan, "outside the target's key range") {
				t.Errorf("a table without column bounds had source rows left out:\n%s", plan)
			}
			got := query(t, s, fmt.Sprintf("SELECT count(*), count(k), sum(v), sum(%s) FROM %s", c.keyOfTable, name))
			w := []string{fmt.Sprintf("%d|%d|%d|%d", expect.rows, expect.keyed, expect.sumV, expect.sumKey)}
			if !slices.Equal(got, w) {
				t.Errorf("after the MERGE: %v, want %v", got, w)
			}
			if strings.Contains(c.props, "'3'") {
				// every row, the early inserted ones too, has its own row id
				n := fmt.Sprint(expect.rows)
				if got := query(t, s, "SELECT count(DISTINCT _row_id), count(_row_id) FROM "+name); !slices.Equal(got, []string{n + "|" + n}) {
					t.Errorf("distinct and non-NULL row ids: %v, want %s of each", got, n)
				}
			}
		})
	}
}

// TestMergeEarlyInsertFailures fails MERGEs while the rows outside the
// target's key range are being inserted beside the scan (insert_early.go):
// once in the early insert itself (a NULL into a NOT NULL column), once
// in the scan (two source rows updating one target row). Each must
// return its error and leave the table, and the data files on disk,
// exactly as they were, in both write modes; and a MERGE after it must
// still insert every row.
func TestMergeEarlyInsertFailures(t *testing.T) {
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		t.Run(mode, func(t *testing.T) {
			lk, dir := openLake(t)
			s := lk.Session()
			mustExec(t, s, fmt.Sprintf(`CREATE TABLE t (k BIGINT, v BIGINT NOT NULL) WITH ('write.merge.mode' = '%s', 'write.parquet.row-group-limit' = '1000');
				INSERT INTO t SELECT i, i FROM range(0, 3000) r(i)`, mode))
			before := query(t, s, "SELECT count(*), sum(k), sum(v) FROM t")
			files := dataFiles(t, dir)
			for _, c := range []struct{ what, source, want string }{
				{"a NULL into a NOT NULL column among the new rows",
					`SELECT i * 3 AS k, 1::BIGINT AS v FROM range(0, 1000) r(i) UNION ALL SELECT 100000 + i, CASE WHEN i = 40000 THEN NULL ELSE 1 END FROM range(0, 59000) r(i)`,
					"violates not-null constraint"},
				{"two source rows for one target row",
					`SELECT i * 3 AS k, 1::BIGINT AS v FROM range(0, 1000) r(i) UNION ALL SELECT 2997, 2 UNION ALL SELECT 100000 + i, 1 FROM range(0, 59000) r(i)`,
					"more than one source row"},
			} {
				_, err := s.SQL(context.Background(), fmt.Sprintf(`MERGE INTO t USING (%s) s ON t.k = s.k
					WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.v)`, c.source))
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%s: error %v, want one saying %q", c.what, err, c.want)
				}
				if got := query(t, s, "SELECT count(*), sum(k), sum(v) FROM t"); !slices.Equal(got, before) {
					t.Fatalf("%s: the table changed: %v, was %v", c.what, got, before)
				}
				if got := dataFiles(t, dir); !slices.Equal(got, files) {
					t.Fatalf("%s: data files on disk: %d, were %d", c.what, len(got), len(files))
				}
			}
			mustExec(t, s, `MERGE INTO t USING (SELECT 100000 + i AS k, 1::BIGINT AS v FROM range(0, 59000) r(i)) s ON t.k = s.k
				WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.v)`)
			if got := query(t, s, "SELECT count(*), sum(v) FROM t WHERE k >= 100000"); !slices.Equal(got, []string{"59000|59000"}) {
				t.Fatalf("after the failures a MERGE inserted %v, want 59000|59000", got)
			}
		})
	}
}
