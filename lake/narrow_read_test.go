package lake_test

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/mergeinto"
)

// A copy-on-write MERGE that only updates reads, in the row groups its
// keys hit, only the columns it needs: the ON keys, the SET columns and
// what a condition or expression reads. A patch copies the other columns'
// chunks as they are (mergeinto's narrowColumns). Where a group cannot be
// patched after all (a memory limit, a patch that fails to encode), its
// rows are read again whole and written with the updates; the batches,
// which hold NULL for the columns not read, are never written.
//
// Each statement runs on a table and on a twin that never patches (it
// reads and writes whole rows), unpartitioned, identity-partitioned and
// bucketed (whose tasks carry the early filter's residual, which a group
// read again must not go through), with a NOT NULL
// column left unread, several row groups per file and several files. The
// two must hold the same rows after every statement, and the bytes read
// and the column chunks left unread show that the narrow read happened.
func TestMergeReadsOnlyTheColumnsItNeeds(t *testing.T) {
	for _, tc := range []struct{ name, part string }{{"plain", ""}, {"partitioned", "PARTITIONED BY (p)"}, {"bucketed", "PARTITIONED BY (bucket(3, id))"}} {
		t.Run(tc.name, func(t *testing.T) {
			lk, _ := openLake(t)
			s := lk.Session()
			twins(t, s, `CREATE TABLE %[1]s (id BIGINT, p INT NOT NULL, a DOUBLE, b TEXT NOT NULL, c TIMESTAMP, d BIGINT, e TEXT) `+tc.part+`
				WITH ('write.parquet.row-group-limit' = '3000'%[2]s)`)
			for f := range 4 {
				twins(t, s, fmt.Sprintf(`INSERT INTO %%[1]s SELECT i, (i / 6000)::int, i * 0.5, 'b' || (i %%%% 7),
					TIMESTAMP '2026-01-01' + i * INTERVAL '1 second', i * 3,
					CASE WHEN i %%%% 11 = 0 THEN NULL ELSE repeat('e', 200) || i END
					FROM range(%d, %d) r(i) -- %%[2]s`, f*6000, (f+1)*6000))
			}
			same := func(what string) {
				t.Helper()
				got, want := query(t, s, "SELECT * FROM a ORDER BY id"), query(t, s, "SELECT * FROM b ORDER BY id")
				if len(want) < 24000 || !slices.Equal(got, want) {
					t.Fatalf("%s: the table and its twin that never patches differ (%d and %d rows)", what, len(got), len(want))
				}
			}
			metric := func(plan, name string) int64 {
				t.Helper()
				m := regexp.MustCompile(name + `(\d+)`).FindStringSubmatch(plan)
				if m == nil {
					return 0
				}
				n, _ := strconv.ParseInt(m[1], 10, 64)
				return n
			}
			// run runs merge (a format of the table's name) on both
			// tables, and returns the table's bytes read and column
			// chunks left unread
			run := func(merge string) (read, unread int64) {
				t.Helper()
				plan := strings.Join(query(t, s, "EXPLAIN ANALYZE "+fmt.Sprintf(merge, "a")), "\n")
				mustExec(t, s, fmt.Sprintf(merge, "b"))
				return metric(plan, `bytes: read=`), metric(plan, `column chunks unread \(no clause reads them\): `)
			}
			// keys every 37th id, in every row group, and new ones
			const src = `SELECT i * 37 AS id, i * 1.5 AS v, 'n' || i AS w FROM range(700) r(i) UNION ALL SELECT 100000 + i, i, 'new' FROM range(5) r(i)`

			// SET a alone: b, c, d, e (and p) are left unread
			narrowRead, unread := run(`MERGE INTO %s t USING (` + src + `) src ON t.id = src.id
				WHEN MATCHED THEN UPDATE SET a = src.v WHEN NOT MATCHED THEN INSERT VALUES (src.id, 9, src.v, src.w, NULL, 0, NULL)`)
			same("SET a")
			if unread == 0 {
				t.Fatal("SET a: no column chunk was left unread")
			}
			// the same, with a condition that reads e: e is read too
			wideRead, _ := run(`MERGE INTO %s t USING (` + src + `) src ON t.id = src.id
				WHEN MATCHED AND t.e IS NOT NULL THEN UPDATE SET a = -src.v`)
			same("SET a WHEN e IS NOT NULL")
			if narrowRead*4 > wideRead*3 {
				t.Fatalf("bytes read: %d setting a, %d with a condition on e: e (half of the bytes) was read for the first", narrowRead, wideRead)
			}
			// two SET columns, one from the stored value, and a condition
			// on d
			run(`MERGE INTO %s t USING (` + src + `) src ON t.id = src.id
				WHEN MATCHED AND t.d %% 2 = 0 THEN UPDATE SET b = t.b || src.w, a = t.a + 1`)
			same("SET b, a WHEN d")

			// every patch fails to encode, then every other one: the
			// groups are read again whole
			var calls atomic.Int64
			mergeinto.TestHookPatch = func(int64) error { calls.Add(1); return errors.New("injected") }
			_, unread = run(`MERGE INTO %s t USING (` + src + `) src ON t.id = src.id WHEN MATCHED THEN UPDATE SET a = src.v + 1`)
			mergeinto.TestHookPatch = nil
			same("every patch failed")
			if calls.Load() == 0 || unread == 0 {
				t.Fatalf("%d patches tried, %d chunks unread", calls.Load(), unread)
			}
			calls.Store(0)
			mergeinto.TestHookPatch = func(int64) error {
				if calls.Add(1)%2 == 0 {
					return errors.New("injected")
				}
				return nil
			}
			run(`MERGE INTO %s t USING (` + src + `) src ON t.id = src.id WHEN MATCHED THEN UPDATE SET d = -t.d`)
			mergeinto.TestHookPatch = nil
			same("every other patch failed")

			// under a memory limit the SET column (e, 200-odd bytes a row,
			// 600 kB a group) of a group does not fit: patches give way at
			// the group's first update or part way, and the group's rows
			// are read again whole when it ends
			var deferred atomic.Int64
			mergeinto.TestHookDefer = func() { deferred.Add(1) }
			mustExec(t, s, "SET memory_limit = '400kB'")
			// (keys up to 19995: the early filter's residual rules out the
			// rest of the row group [18000, 21000), which a deferred group
			// must still read again whole)
			_, unread = run(`MERGE INTO %s t USING (SELECT i * 5 AS id FROM range(4000) r(i)) src ON t.id = src.id
				WHEN MATCHED THEN UPDATE SET e = t.e || 'x'`)
			mustExec(t, s, "RESET memory_limit")
			mergeinto.TestHookDefer = nil
			same("under a memory limit")
			if deferred.Load() == 0 || unread == 0 {
				t.Fatalf("%d groups deferred, %d chunks unread: the memory limit no longer stops a narrow patch (lower it)", deferred.Load(), unread)
			}
			if got := query(t, s, "SELECT count(*) FROM a WHERE e LIKE '%x'"); !slices.Equal(got, []string{strconv.Itoa(4000 - 4000/11 - 1)}) {
				t.Fatalf("rows updated under the memory limit: %v", got)
			}
		})
	}
}

// A timestamp SET column is patched like any other: pqarrow builds a
// timestamp column with the legacy converted type beside its logical
// type, arrow-go reads a local timestamp's from a footer with the logical
// type alone, and until session 31 that difference alone kept every
// timestamp column (an updated_at) from being patched. Each statement runs on a table and its twin that never
// patches; the rows, and what a filter on the patched column (pruned by
// the new chunks' statistics) finds, must be the same.
func TestRowGroupPatchOfTimestamps(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	twins(t, s, `CREATE TABLE %[1]s (id BIGINT, ts TIMESTAMP, tz TIMESTAMPTZ, v DOUBLE) WITH ('write.parquet.row-group-limit' = '2000'%[2]s);
		INSERT INTO %[1]s SELECT i, TIMESTAMP '2026-01-01' + i * INTERVAL '1 minute', TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 second', i FROM range(10000) r(i)`)
	patched := func() string {
		t.Helper()
		return query(t, s, "SELECT coalesce(summary['skade.patched-row-groups'], '0') FROM a$snapshots ORDER BY committed_at DESC LIMIT 1")[0]
	}
	for _, stmt := range []string{
		`MERGE INTO %s t USING (SELECT i * 41 AS id FROM range(200) r(i)) src ON t.id = src.id
			WHEN MATCHED THEN UPDATE SET ts = TIMESTAMP '2030-06-01 12:00:00'`,
		`MERGE INTO %s t USING (SELECT i * 53 AS id FROM range(150) r(i)) src ON t.id = src.id
			WHEN MATCHED THEN UPDATE SET tz = t.tz + INTERVAL '1 day', ts = t.ts - INTERVAL '1 year'`,
		`UPDATE %s SET ts = TIMESTAMP '2031-01-01' WHERE id %% 97 = 3`,
	} {
		mustExec(t, s, fmt.Sprintf(stmt, "a"))
		if p := patched(); p == "0" {
			t.Fatalf("%s: no row group patched", stmt)
		}
		mustExec(t, s, fmt.Sprintf(stmt, "b"))
		twinsAgree(t, s, stmt,
			"SELECT * FROM %s ORDER BY id",
			"SELECT count(*), min(ts), max(ts) FROM %s WHERE ts >= TIMESTAMP '2030-01-01'",
			"SELECT count(*) FROM %s WHERE ts < TIMESTAMP '2025-06-01'",
			"SELECT count(*), max(tz) FROM %s WHERE tz > TIMESTAMPTZ '2026-01-02 00:00:00+00'")
	}
}

// twinsAgree fails t unless each of queries (a format of a table's name)
// gives the same rows on table a and on its twin b; what names the
// statement that ran on both.
func twinsAgree(t *testing.T, s *lake.Session, what string, queries ...string) {
	t.Helper()
	for _, q := range queries {
		got, want := query(t, s, fmt.Sprintf(q, "a")), query(t, s, fmt.Sprintf(q, "b"))
		if !slices.Equal(got, want) {
			t.Fatalf("%s\n%s: the table and its twin that never patches differ (%d and %d rows): %.300v against %.300v", what, q, len(got), len(want), got, want)
		}
	}
}

// A narrow MERGE after schema changes: a column added since the files
// were written (absent from them), one renamed, one dropped (still in the
// files) and one widened, none of them read; the patch copies what the
// files hold, and the rows read again of a deferred group come through
// the scan's own mapping. Against the twin that never patches.
func TestMergeNarrowAfterSchemaChanges(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	twins(t, s, `CREATE TABLE %[1]s (id BIGINT, n INT, s TEXT, w TEXT, v DOUBLE) WITH ('write.parquet.row-group-limit' = '1500'%[2]s);
		INSERT INTO %[1]s SELECT i, i::int, 's' || i, repeat('w', 150) || i, i * 0.5 FROM range(6000) r(i);
		ALTER TABLE %[1]s ADD COLUMN x TEXT;
		ALTER TABLE %[1]s RENAME COLUMN w TO w2;
		ALTER TABLE %[1]s DROP COLUMN s;
		ALTER TABLE %[1]s ALTER COLUMN n TYPE BIGINT`)
	merge := `MERGE INTO %s t USING (SELECT i * 7 AS id FROM range(800) r(i)) src ON t.id = src.id
		WHEN MATCHED AND t.id %% 2 = 0 THEN UPDATE SET v = -t.v`
	mustExec(t, s, fmt.Sprintf(merge, "a"))
	mustExec(t, s, fmt.Sprintf(merge, "b"))
	twinsAgree(t, s, "SET v", "SELECT * FROM %s ORDER BY id", "SELECT count(*) FROM %s WHERE v < 0 AND x IS NULL AND w2 LIKE 'www%%'")
	// SET w2 (renamed) under a limit that defers every group hit, with n
	// (widened) and x (added) unread
	var deferred atomic.Int64
	mergeinto.TestHookDefer = func() { deferred.Add(1) }
	mustExec(t, s, "SET memory_limit = '200kB'")
	plan := strings.Join(query(t, s, "EXPLAIN ANALYZE "+fmt.Sprintf(`MERGE INTO %s t USING (SELECT i * 5 AS id FROM range(1100) r(i)) src ON t.id = src.id
		WHEN MATCHED THEN UPDATE SET w2 = t.w2 || 'z'`, "a")), "\n")
	mustExec(t, s, "RESET memory_limit")
	mergeinto.TestHookDefer = nil
	mustExec(t, s, `MERGE INTO b t USING (SELECT i * 5 AS id FROM range(1100) r(i)) src ON t.id = src.id
		WHEN MATCHED THEN UPDATE SET w2 = t.w2 || 'z'`)
	if !strings.Contains(plan, "column chunks unread") || deferred.Load() == 0 {
		t.Fatalf("%d groups deferred; the plan: %s", deferred.Load(), plan)
	}
	twinsAgree(t, s, "SET w2 under a memory limit", "SELECT * FROM %s ORDER BY id", "SELECT count(*), sum(n) FROM %s WHERE w2 LIKE '%%z'")
	if got := query(t, s, "SELECT count(*) FROM a WHERE w2 LIKE '%z'"); !slices.Equal(got, []string{"1100"}) {
		t.Fatalf("rows updated: %v", got)
	}
}
