package lake_test

// The efficiency the transformation strategies need (issue 8; the SQL
// they emit is in ../shared/spec/strategies.md and replayed by
// testdata/sql/strategies/*.slt): identical reruns and statements that
// change nothing commit nothing; a DELETE by time window drops the files
// inside the window unread; MAX(cursor) is answered from manifest
// statistics; every DML result reports its row movement.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/lake"
)

// stratRun runs one statement, reads its result and returns it (closed)
// with its first value rendered, "" when it has no rows.
func stratRun(t *testing.T, s *lake.Session, q string) (*lake.Result, string) {
	t.Helper()
	res, err := s.SQL(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	bs, err := res.Collect(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	first := ""
	for _, b := range bs {
		if first == "" && b.NumRows() > 0 && b.NumCols() > 0 {
			first = b.Column(0).ValueStr(0)
		}
		b.Release()
	}
	return res, first
}

// stratState is what a commit would change: the table's current
// snapshot and every file of the lake.
type stratState struct {
	snapshot int64
	files    map[string]bool
}

func stratStateOf(t *testing.T, lk *lake.Lake, dir, table string) stratState {
	t.Helper()
	tbl, err := lk.Table(context.Background(), table)
	if err != nil {
		t.Fatal(err)
	}
	st := stratState{files: allFiles(t, dir)}
	if snap := tbl.Snapshot(); snap != nil {
		st.snapshot = snap.ID
	}
	return st
}

// requireUnchanged fails when the table's snapshot moved or a file was
// written since before.
func requireUnchanged(t *testing.T, what string, before, after stratState) {
	t.Helper()
	if before.snapshot != after.snapshot {
		t.Errorf("%s: committed snapshot %d (was %d); a statement that changes nothing must commit nothing", what, after.snapshot, before.snapshot)
	}
	var added []string
	for f := range after.files {
		if !before.files[f] && !strings.HasSuffix(f, ".db") && !strings.HasSuffix(f, ".lock") {
			added = append(added, f)
		}
	}
	if len(added) > 0 {
		slices.Sort(added)
		t.Errorf("%s: wrote %d files: %v", what, len(added), added)
	}
}

// stratBegin starts a transaction.
func stratBegin(t *testing.T, s *lake.Session) {
	t.Helper()
	if _, err := s.SQL(context.Background(), "BEGIN"); err != nil {
		t.Fatal(err)
	}
}

// The full_merge and scd models of the strategies guide, as the SQL a tool
// emits for one run.
var (
	fullMergeRun = []string{
		`CREATE TABLE IF NOT EXISTS users AS (SELECT * FROM (SELECT user_id, email, plan FROM api_users) LIMIT 0)`,
		`DELETE FROM users WHERE user_id IN (SELECT user_id FROM (SELECT * FROM (SELECT user_id, email, plan FROM api_users) EXCEPT SELECT * FROM users))`,
		`DELETE FROM users WHERE user_id NOT IN (SELECT user_id FROM (SELECT user_id, email, plan FROM api_users))`,
		`INSERT INTO users SELECT * FROM (SELECT * FROM (SELECT user_id, email, plan FROM api_users) EXCEPT SELECT * FROM users)`,
	}
	scdRun = []string{
		`CREATE TABLE IF NOT EXISTS dim_users AS (SELECT *, CAST(NULL AS TIMESTAMPTZ) AS _valid_from, CAST(NULL AS TIMESTAMPTZ) AS _valid_to FROM (SELECT user_id, email, plan FROM api_users) LIMIT 0)`,
		`UPDATE dim_users SET _valid_to = now() WHERE _valid_to IS NULL AND user_id IN (SELECT user_id FROM (SELECT * EXCLUDE (_valid_from, _valid_to) FROM dim_users WHERE _valid_to IS NULL EXCEPT SELECT * FROM (SELECT user_id, email, plan FROM api_users)))`,
		`INSERT INTO dim_users SELECT *, now(), NULL FROM (SELECT * FROM (SELECT user_id, email, plan FROM api_users) EXCEPT SELECT * EXCLUDE (_valid_from, _valid_to) FROM dim_users WHERE _valid_to IS NULL)`,
	}
)

// applyModel runs one run of a model, in a transaction when tx, and
// returns each statement's count ("" for statements without one). Every
// INSERT, UPDATE, DELETE and MERGE is checked against the table it
// writes (stratCheckCount).
func applyModel(t *testing.T, s *lake.Session, tx bool, stmts []string) []string {
	t.Helper()
	if tx {
		stratBegin(t, s)
	}
	var counts []string
	for _, q := range stmts {
		counts = append(counts, stratCheckCount(t, s, q))
	}
	if tx {
		stratRun(t, s, "COMMIT")
	}
	return counts
}

// stratDMLTarget finds the table a DML statement writes.
var stratDMLTarget = regexp.MustCompile(`(?is)^\s*(?:INSERT\s+INTO|DELETE\s+FROM|UPDATE|MERGE\s+INTO)\s+([A-Za-z_][A-Za-z_0-9]*)`)

// stratCheckCount runs q and, when it is DML, checks what the strategies
// report per model against the table it writes: inserted − deleted rows
// equal the change in count(*), and the statement's count is inserted +
// updated + deleted. It returns the statement's count.
func stratCheckCount(t *testing.T, s *lake.Session, q string) string {
	t.Helper()
	m := stratDMLTarget.FindStringSubmatch(q)
	if m == nil {
		_, first := stratRun(t, s, q)
		return first
	}
	countOf := func() int64 {
		t.Helper()
		got := query(t, s, "SELECT count(*) FROM "+m[1])
		n, err := strconv.ParseInt(got[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := countOf()
	res, first := stratRun(t, s, q)
	after := countOf()
	mt := res.Metrics()
	if mt.RowsInserted-mt.RowsDeleted != after-before {
		t.Errorf("%s:\n reported +%d -%d, but %s went from %d to %d rows", q, mt.RowsInserted, mt.RowsDeleted, m[1], before, after)
	}
	if want := strconv.FormatInt(mt.RowsInserted+mt.RowsUpdated+mt.RowsDeleted, 10); first != want {
		t.Errorf("%s:\n count %s, but the rows moved are +%d ~%d -%d", q, first, mt.RowsInserted, mt.RowsUpdated, mt.RowsDeleted)
	}
	return first
}

// TestStrategyCountsMatchTableChange runs the statement shapes whose counts
// once disagreed with DuckDB's (issue 12): the scd model with a
// time_column (its INSERT … EXCEPT over timestamps, duplicate source rows
// and NULLs) and a cursor append (INSERT … WHERE ts >= the last cursor, on
// the cursor's exact boundary), on tables of multi-row-group, multi-split
// files, several runs each; stratCheckCount checks every count.
func TestStrategyCountsMatchTableChange(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		t.Run(mode, func(t *testing.T) {
			lk, err := lake.Open(ctx, t.TempDir(), lake.WithTableDefaults(map[string]string{
				"read.split.target-size": "4096", "write.parquet.row-group-limit": "50",
				"write.delete.mode": mode, "write.update.mode": mode, "write.merge.mode": mode,
			}))
			if err != nil {
				t.Fatal(err)
			}
			defer lk.Close()
			s := lk.Session()
			mustExec(t, s, `CREATE TABLE src (id INTEGER, v VARCHAR, amount DECIMAL(10,2), updated_at TIMESTAMP);
				INSERT INTO src SELECT i % 400, CASE WHEN i % 7 = 0 THEN NULL ELSE 'v' || (i % 5)::VARCHAR END,
					CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 97)::DECIMAL(10,2) END,
					TIMESTAMP '2024-01-01' + (i % 400) * INTERVAL '1 hour' FROM range(1000) r(i)`)
			scd := []string{
				`CREATE TABLE IF NOT EXISTS dim AS (SELECT *, updated_at AS _valid_from, CAST(NULL AS TIMESTAMP) AS _valid_to FROM src LIMIT 0)`,
				`UPDATE dim SET _valid_to = now() WHERE _valid_to IS NULL AND id IN (SELECT id FROM (SELECT * EXCLUDE (_valid_from, _valid_to) FROM dim WHERE _valid_to IS NULL EXCEPT SELECT * FROM src))`,
				`INSERT INTO dim SELECT *, updated_at, NULL FROM (SELECT * FROM src EXCEPT SELECT * EXCLUDE (_valid_from, _valid_to) FROM dim WHERE _valid_to IS NULL)`,
			}
			appendRun := func(cursor string) []string {
				return []string{
					`CREATE TABLE IF NOT EXISTS ev AS (SELECT * FROM src LIMIT 0)`,
					`INSERT INTO ev SELECT * FROM src WHERE updated_at >= TIMESTAMP '` + cursor + `'`,
				}
			}
			for run := 0; run < 3; run++ {
				// Each run moves rows, so the checks see real counts.
				if got := applyModel(t, s, run == 1, scd); got[2] == "0" {
					t.Fatalf("run %d: the scd INSERT inserted nothing: %v", run, got)
				}
				if got := applyModel(t, s, false, appendRun(fmt.Sprintf("2024-01-0%d 12:00:00", run+1))); got[1] == "0" {
					t.Fatalf("run %d: the append inserted nothing: %v", run, got)
				}
				mustExec(t, s, fmt.Sprintf(`UPDATE src SET v = 'changed %d' WHERE id %% 9 = %d;
					DELETE FROM src WHERE id %% 23 = %d;
					INSERT INTO src SELECT 400 + i + %d * 100, NULL, NULL, TIMESTAMP '2024-01-02 12:00:00' FROM range(50) r(i)`, run, run, run, run))
			}
		})
	}
}

func TestIdenticalRerunCommitsNothing(t *testing.T) {
	for _, tc := range []struct {
		name, table string
		run         []string
		first       []string // counts of the first run
		changed     []string // after the source changed
	}{
		{"full_merge", "users", fullMergeRun, []string{"0", "0", "0", "3"}, []string{"", "1", "1", "2"}},
		{"scd", "dim_users", scdRun, []string{"0", "0", "3"}, []string{"", "2", "2"}},
	} {
		for _, tx := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/tx=%v", tc.name, tx), func(t *testing.T) {
				lk, dir := openLake(t)
				s := lk.Session()
				mustExec(t, s, `CREATE TABLE api_users (user_id INTEGER, email VARCHAR, plan VARCHAR);
					INSERT INTO api_users VALUES (1, 'ada@x.io', 'pro'), (2, 'bob@x.io', NULL), (3, 'cy@x.io', 'free')`)
				if got := applyModel(t, s, tx, tc.run); !slices.Equal(got, tc.first) {
					t.Fatalf("first run counts %v, want %v", got, tc.first)
				}
				zeros := make([]string, len(tc.run))
				for i := 1; i < len(zeros); i++ {
					zeros[i] = "0"
				}
				for rerun := 0; rerun < 2; rerun++ {
					before := stratStateOf(t, lk, dir, tc.table)
					if got := applyModel(t, s, tx, tc.run); !slices.Equal(got, zeros) {
						t.Fatalf("identical rerun %d counts %v, want %v", rerun, got, zeros)
					}
					requireUnchanged(t, fmt.Sprintf("identical rerun %d", rerun), before, stratStateOf(t, lk, dir, tc.table))
				}
				// the model is not simply inert: a changed source commits
				mustExec(t, s, `UPDATE api_users SET plan = 'pro' WHERE user_id = 2; DELETE FROM api_users WHERE user_id = 3;
					INSERT INTO api_users VALUES (4, 'di@x.io', NULL)`)
				before := stratStateOf(t, lk, dir, tc.table)
				got := applyModel(t, s, tx, tc.run)
				got[0] = ""
				if !slices.Equal(got, tc.changed) {
					t.Fatalf("changed run counts %v, want %v", got, tc.changed)
				}
				if after := stratStateOf(t, lk, dir, tc.table); after.snapshot == before.snapshot {
					t.Fatalf("a run that changed rows committed no snapshot")
				}
				before = stratStateOf(t, lk, dir, tc.table)
				applyModel(t, s, tx, tc.run)
				requireUnchanged(t, "identical rerun after a change", before, stratStateOf(t, lk, dir, tc.table))
			})
		}
	}
}

// TestNoOpStatementsCommitNothing: every statement that changes no row
// commits no snapshot, writes no file and reports no snapshot id.
func TestNoOpStatementsCommitNothing(t *testing.T) {
	lk, dir := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE t (id INTEGER, status VARCHAR, day DATE);
		INSERT INTO t VALUES (1, 'new', DATE '2024-01-01'), (2, 'paid', DATE '2024-01-02');
		INSERT INTO t VALUES (3, 'new', DATE '2024-01-03');
		CREATE TABLE empty_src (id INTEGER, status VARCHAR, day DATE);
		CREATE TABLE src (id INTEGER, status VARCHAR, day DATE);
		INSERT INTO src VALUES (1, 'new', DATE '2024-01-01'), (9, 'x', DATE '2024-02-01')`)
	for _, q := range []string{
		`INSERT INTO t SELECT * FROM empty_src`,
		`INSERT INTO t SELECT * FROM src WHERE false`,
		`INSERT INTO t SELECT * FROM (SELECT * FROM src EXCEPT SELECT * FROM src)`,
		// pruned by statistics, and read but matching nothing
		`DELETE FROM t WHERE id = 100`,
		`DELETE FROM t WHERE status = 'void'`,
		`DELETE FROM t WHERE day >= DATE '2025-01-01' AND day < DATE '2025-01-02'`,
		`DELETE FROM t WHERE id IN (SELECT id FROM empty_src)`,
		`DELETE FROM t WHERE id NOT IN (SELECT id FROM t)`,
		`UPDATE t SET status = 'x' WHERE id = 100`,
		`UPDATE t SET status = 'x' WHERE status = 'void'`,
		`UPDATE t SET status = src.status FROM src WHERE t.id = src.id AND src.id = 9`,
		`MERGE INTO t USING empty_src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET status = s.status WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.status, s.day)`,
		`MERGE INTO t USING src s ON t.id = s.id WHEN MATCHED AND s.status = 'never' THEN DELETE`,
		`MERGE INTO t USING (SELECT * FROM src WHERE id = 1) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.status, s.day)`,
		`MERGE INTO t USING (SELECT * FROM src WHERE id = 9) s ON t.id = s.id WHEN MATCHED THEN DELETE`,
		`CREATE TABLE IF NOT EXISTS t AS SELECT * FROM src`,
		`ALTER TABLE t ADD COLUMN IF NOT EXISTS status VARCHAR`,
	} {
		before := stratStateOf(t, lk, dir, "t")
		res, first := stratRun(t, s, q)
		requireUnchanged(t, q, before, stratStateOf(t, lk, dir, "t"))
		if m := res.Metrics(); m != (lake.Metrics{}) {
			t.Errorf("%s: metrics %+v, want none", q, m)
		}
		if first != "" && first != "0" {
			t.Errorf("%s: count %s, want 0", q, first)
		}
	}
	if got := query(t, s, "SELECT count(*) FROM t"); !slices.Equal(got, []string{"3"}) {
		t.Fatalf("table changed: %v rows", got)
	}
}

// stratFilePath turns a data file's location into a local path.
func stratFilePath(p string) string { return strings.TrimPrefix(p, "file://") }

// stratFiles lists the table's live data files.
func stratFiles(t *testing.T, lk *lake.Lake, table string) []string {
	t.Helper()
	tbl, err := lk.Table(context.Background(), table)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fs {
		out = append(out, stratFilePath(f.Path))
	}
	slices.Sort(out)
	return out
}

// explainLines runs EXPLAIN [ANALYZE] and returns its text.
func explainText(t *testing.T, s *lake.Session, q string) string {
	t.Helper()
	return strings.Join(query(t, s, q), "\n")
}

// TestTimeWindowDeleteDropsWholeFiles: a DELETE by a time window drops
// the data files lying wholly inside the window without reading them and
// rewrites (copy-on-write) or marks deleted (merge-on-read) only the
// boundary files. The inner files are removed from disk before the
// DELETE, so reading one would fail it.
func TestTimeWindowDeleteDropsWholeFiles(t *testing.T) {
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		t.Run(mode, func(t *testing.T) { testTimeWindowDelete(t, mode) })
	}
}

func testTimeWindowDelete(t *testing.T, mode string) {
	for _, tc := range []struct {
		typ, lit string
		value    func(day int) string // the day's value, as SQL
	}{
		{"DATE", "DATE", func(d int) string { return fmt.Sprintf("DATE '2024-01-%02d'", d) }},
		{"TIMESTAMP", "TIMESTAMP", func(d int) string { return fmt.Sprintf("TIMESTAMP '2024-01-%02d 12:30:00'", d) }},
		{"TIMESTAMPTZ", "TIMESTAMPTZ", func(d int) string { return fmt.Sprintf("TIMESTAMPTZ '2024-01-%02d 12:30:00+00'", d) }},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			lk, dir := openLake(t)
			s := lk.Session()
			mustExec(t, s, "CREATE TABLE ev (ts "+tc.typ+", v INTEGER); ALTER TABLE ev SET ('write.delete.mode' = '"+mode+"')")
			// four files: days 1-3, 4-6, 7-9, 10-12
			var written [][]string
			seen := map[string]bool{}
			for f := 0; f < 4; f++ {
				var vals []string
				for d := 3*f + 1; d <= 3*f+3; d++ {
					vals = append(vals, fmt.Sprintf("(%s, %d)", tc.value(d), d))
				}
				mustExec(t, s, "INSERT INTO ev VALUES "+strings.Join(vals, ", "))
				var added []string
				for _, p := range stratFiles(t, lk, "ev") {
					if !seen[p] {
						seen[p] = true
						added = append(added, p)
					}
				}
				if len(added) != 1 {
					t.Fatalf("insert %d added files %v, want one", f, added)
				}
				written = append(written, added)
			}
			// the window [day 5, day 11) holds file 7-9 whole; files 4-6
			// and 10-12 straddle its edges; file 1-3 lies outside it
			window := fmt.Sprintf("ts >= %s '2024-01-05' AND ts < %s '2024-01-11'", tc.lit, tc.lit)
			if tc.lit == "TIMESTAMPTZ" {
				window = "ts >= TIMESTAMPTZ '2024-01-05 00:00:00+00' AND ts < TIMESTAMPTZ '2024-01-11 00:00:00+00'"
			}
			plan := explainText(t, s, "EXPLAIN DELETE FROM ev WHERE "+window)
			if !strings.Contains(plan, "4 in the snapshot, 1 skipped by pruning, 1 dropped unread (statistics prove every row matches), 2 to read") {
				t.Fatalf("EXPLAIN DELETE:\n%s", plan)
			}
			inner := written[2][0]
			if err := os.Remove(inner); err != nil {
				t.Fatal(err)
			}
			before := len(dataFiles(t, dir))
			text := explainText(t, s, "EXPLAIN ANALYZE DELETE FROM ev WHERE "+window)
			files := "4 in the snapshot, 1 skipped by pruning, 1 dropped unread, 2 read, 2 rewritten, 3 removed, 2 added"
			if mode == "merge-on-read" {
				files = "4 in the snapshot, 1 skipped by pruning, 1 dropped unread, 2 read, 0 rewritten, 1 removed, 0 added\n  position delete files written: 2"
			}
			if !strings.Contains(text, ": 6 rows") || !strings.Contains(text, files) {
				t.Fatalf("EXPLAIN ANALYZE DELETE:\n%s", text)
			}
			// the rewritten boundary files, or their position deletes
			if got := len(dataFiles(t, dir)) - before; got != 2 {
				t.Errorf("the DELETE wrote %d Parquet files, want 2", got)
			}
			got := query(t, s, "SELECT v FROM ev ORDER BY v")
			want := []string{"1", "2", "3", "4", "11", "12"}
			if !slices.Equal(got, want) {
				t.Fatalf("rows after the DELETE: %v, want %v", got, want)
			}
			live := stratFiles(t, lk, "ev")
			boundary := mode == "merge-on-read" // kept, with deletes
			if !slices.Contains(live, written[0][0]) || slices.Contains(live, written[1][0]) != boundary || slices.Contains(live, inner) || slices.Contains(live, written[3][0]) != boundary {
				t.Errorf("live files %v: want file 1-3 kept, file 7-9 dropped, the boundary files %s (%v)", live, map[bool]string{true: "kept", false: "replaced"}[boundary], written)
			}
		})
	}
}

// TestMaxCursorFromMetadata: SELECT max(cursor) on a table without delete
// files is answered from manifest statistics: EXPLAIN says so and the
// answer holds with every data file gone from disk.
func TestMaxCursorFromMetadata(t *testing.T) {
	for _, tc := range []struct {
		typ, a, b, c string // the cursor's type and three values, c the largest
		want         string
	}{
		{"INTEGER", "7", "-3", "42", "42"},
		{"BIGINT", "7", "-3", "5000000000", "5000000000"},
		{"DATE", "DATE '2024-01-07'", "DATE '2023-12-31'", "DATE '2024-03-01'", "2024-03-01"},
		{"TIMESTAMP", "TIMESTAMP '2024-01-07 10:00:00'", "TIMESTAMP '2023-12-31 23:59:59.999999'", "TIMESTAMP '2024-03-01 00:00:00.000001'", "2024-03-01T00:00:00.000001"},
		{"TIMESTAMPTZ", "TIMESTAMPTZ '2024-01-07 10:00:00+00'", "TIMESTAMPTZ '2023-12-31 23:59:59+00'", "TIMESTAMPTZ '2024-03-01 08:00:00+02'", "2024-03-01T06:00:00Z"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			lk, dir := openLake(t)
			s := lk.Session()
			mustExec(t, s, fmt.Sprintf(`CREATE TABLE t (c %s, n INTEGER);
				INSERT INTO t VALUES (%s, 1), (NULL, 2);
				INSERT INTO t VALUES (%s, 3), (%s, 4);
				INSERT INTO t VALUES (%s, 5)`, tc.typ, tc.a, tc.b, tc.c, tc.a))
			// a copy-on-write DELETE leaves no delete file: still answerable
			mustExec(t, s, "DELETE FROM t WHERE n = 5")
			q := "SELECT max(c) FROM t"
			if text := explainText(t, s, "EXPLAIN "+q); !strings.Contains(text, "MetadataAnswer") || strings.Contains(text, "Scan") {
				t.Fatalf("EXPLAIN %s:\n%s", q, text)
			}
			for _, f := range dataFiles(t, dir) {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
			if got := query(t, s, q); !slices.Equal(got, []string{tc.want}) {
				t.Fatalf("%s = %v, want %s", q, got, tc.want)
			}
			// the control: a query that needs the rows fails without them
			if err := queryErr(s, "SELECT sum(n) FROM t"); err == nil {
				t.Fatal("SELECT sum(n) succeeded with the data files gone; the test proves nothing")
			}
		})
	}
}

// TestMaxCursorWithDeleteFilesReadsData: merge-on-read delete files make
// the statistics stale, so max(cursor) reads the data and stays right.
func TestMaxCursorWithDeleteFilesReadsData(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE t (c INTEGER, n INTEGER);
		ALTER TABLE t SET ('write.merge.mode' = 'merge-on-read');
		INSERT INTO t VALUES (1, 1), (50, 2)`)
	mustExec(t, s, "MERGE INTO t USING (VALUES (50)) AS s(c) ON t.c = s.c WHEN MATCHED THEN DELETE")
	if text := explainText(t, s, "EXPLAIN SELECT max(c) FROM t"); strings.Contains(text, "MetadataAnswer") {
		t.Fatalf("answered from statistics despite delete files:\n%s", text)
	}
	if got := query(t, s, "SELECT max(c) FROM t"); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("max(c) = %v, want 1", got)
	}
}

// TestRowMovement: every DML result reports the rows it inserted,
// updated and deleted; MERGE's count is their sum.
func TestRowMovement(t *testing.T) {
	for _, tx := range []bool{false, true} {
		t.Run(fmt.Sprintf("tx=%v", tx), func(t *testing.T) { testRowMovement(t, tx) })
	}
}

// testRowMovement runs TestRowMovement's statements, all in one
// transaction when tx.
func testRowMovement(t *testing.T, tx bool) {
	lk, _ := openLake(t)
	s := lk.Session()
	csv := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(csv, []byte("id,status\n20,csv\n21,csv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustExec(t, s, "CREATE TABLE src (id INTEGER, status VARCHAR); INSERT INTO src VALUES (1, 'one'), (2, 'two'), (30, 'new')")
	if tx {
		stratBegin(t, s)
	}
	for _, tc := range []struct {
		q             string
		count         string
		ins, upd, del int64
	}{
		{"CREATE TABLE t AS SELECT id, status FROM src WHERE id < 30", "2", 2, 0, 0},
		{"INSERT INTO t VALUES (3, 'three'), (4, 'four'), (5, 'five')", "3", 3, 0, 0},
		{"INSERT INTO t SELECT id + 5, status FROM t WHERE id <= 2", "2", 2, 0, 0},
		{"INSERT INTO t VALUES (8, 'eight') RETURNING id", "8", 1, 0, 0},
		{"COPY t FROM '" + csv + "' (HEADER)", "2", 2, 0, 0},
		{"UPDATE t SET status = 'odd' WHERE id % 2 = 1", "5", 0, 5, 0},
		{"UPDATE t SET status = src.status FROM src WHERE t.id = src.id", "2", 0, 2, 0},
		{"DELETE FROM t WHERE id >= 20", "2", 0, 0, 2},
		{"DELETE FROM t WHERE id = 8 RETURNING id", "8", 0, 0, 1},
		// the row-level MERGE: 2 updated, 1 deleted, 1 inserted
		{`MERGE INTO t USING (VALUES (1, 'u'), (2, 'd'), (3, 'u'), (40, 'i')) AS m(id, op) ON t.id = m.id
			WHEN MATCHED AND m.op = 'd' THEN DELETE
			WHEN MATCHED THEN UPDATE SET status = 'merged'
			WHEN NOT MATCHED THEN INSERT VALUES (m.id, 'inserted')`, "4", 1, 2, 1},
		{"CREATE OR REPLACE TABLE t2 AS SELECT * FROM t", "7", 7, 0, 0},
		// a whole-file drop (statistics prove every row matches) counts too
		{"DELETE FROM t2", "7", 0, 0, 7},
		{"CREATE TABLE IF NOT EXISTS t3 AS (SELECT * FROM (SELECT * FROM t) LIMIT 0)", "0", 0, 0, 0},
		{"INSERT INTO t3 SELECT * FROM t WHERE id > 3", "5", 5, 0, 0},
		// TRUNCATE returns no count (as in Postgres) but reports its rows
		{"TRUNCATE t2, t3", "", 0, 0, 5},
	} {
		res, first := stratRun(t, s, tc.q)
		m := res.Metrics()
		if first != tc.count || m.RowsInserted != tc.ins || m.RowsUpdated != tc.upd || m.RowsDeleted != tc.del {
			t.Errorf("%s:\n count %s +%d ~%d -%d, want count %s +%d ~%d -%d", tc.q, first, m.RowsInserted, m.RowsUpdated, m.RowsDeleted, tc.count, tc.ins, tc.upd, tc.del)
		}
		// inside a transaction nothing is committed until COMMIT
		if moved := m.RowsInserted + m.RowsUpdated + m.RowsDeleted; moved > 0 && !tx && m.SnapshotID == 0 {
			t.Errorf("%s: moved %d rows but reports no snapshot", tc.q, moved)
		}
	}
	if tx {
		mustExec(t, s, "COMMIT")
	}
	want := []string{"1|merged", "3|merged", "4|four", "5|odd", "6|one", "7|odd", "40|inserted"}
	if got := query(t, s, "SELECT id, status FROM t ORDER BY id"); !slices.Equal(got, want) {
		t.Fatalf("t = %v, want %v", got, want)
	}
}

// TestMaxCursorInTransaction: inside a transaction, max(cursor) answered
// from statistics sees the transaction's own writes, and after ROLLBACK
// it no longer does.
func TestMaxCursorInTransaction(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (c BIGINT); INSERT INTO t VALUES (1), (7)")
	stratBegin(t, s)
	mustExec(t, s, "INSERT INTO t VALUES (100)")
	if text := explainText(t, s, "EXPLAIN SELECT max(c) FROM t"); !strings.Contains(text, "MetadataAnswer") {
		t.Errorf("not answered from statistics inside the transaction:\n%s", text)
	}
	if got := query(t, s, "SELECT max(c) FROM t"); !slices.Equal(got, []string{"100"}) {
		t.Fatalf("max(c) inside the transaction = %v, want 100", got)
	}
	if got := query(t, lk.Session(), "SELECT max(c) FROM t"); !slices.Equal(got, []string{"7"}) {
		t.Fatalf("max(c) from another session = %v, want 7", got)
	}
	mustExec(t, s, "ROLLBACK")
	if got := query(t, s, "SELECT max(c) FROM t"); !slices.Equal(got, []string{"7"}) {
		t.Fatalf("max(c) after ROLLBACK = %v, want 7", got)
	}
}

// TestRowMovementMergeOnRead: the merge-on-read write paths report the
// same row movement as copy-on-write.
func TestRowMovementMergeOnRead(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE t (id INTEGER, status VARCHAR);
		ALTER TABLE t SET ('write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read');
		INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')`)
	for _, tc := range []struct {
		q             string
		count         string
		ins, upd, del int64
	}{
		{"UPDATE t SET status = 'x' WHERE id <= 2", "2", 0, 2, 0},
		{"DELETE FROM t WHERE id = 3", "1", 0, 0, 1},
		{`MERGE INTO t USING (VALUES (1, 'u'), (2, 'd'), (9, 'i')) AS m(id, op) ON t.id = m.id
			WHEN MATCHED AND m.op = 'd' THEN DELETE
			WHEN MATCHED THEN UPDATE SET status = 'merged'
			WHEN NOT MATCHED THEN INSERT VALUES (m.id, 'inserted')`, "3", 1, 1, 1},
	} {
		res, first := stratRun(t, s, tc.q)
		m := res.Metrics()
		if first != tc.count || m.RowsInserted != tc.ins || m.RowsUpdated != tc.upd || m.RowsDeleted != tc.del {
			t.Errorf("%s:\n count %s +%d ~%d -%d, want count %s +%d ~%d -%d", tc.q, first, m.RowsInserted, m.RowsUpdated, m.RowsDeleted, tc.count, tc.ins, tc.upd, tc.del)
		}
	}
	want := []string{"1|merged", "4|d", "5|e", "9|inserted"}
	if got := query(t, s, "SELECT id, status FROM t ORDER BY id"); !slices.Equal(got, want) {
		t.Fatalf("t = %v, want %v", got, want)
	}
	if got := query(t, s, "SELECT count(*) FROM t$files WHERE content <> 0"); slices.Equal(got, []string{"0"}) {
		t.Fatalf("no delete files written: the merge-on-read paths did not run")
	}
}

// TestWindowDeleteOverFileWithDeletes: a window covering a whole file
// that already has deletes counts only its live rows (the record count in
// the statistics includes the deleted ones), under either delete mode.
func TestWindowDeleteOverFileWithDeletes(t *testing.T) {
	for _, mode := range []string{"merge-on-read", "copy-on-write"} {
		t.Run(mode, func(t *testing.T) {
			lk, _ := openLake(t)
			s := lk.Session()
			mustExec(t, s, `CREATE TABLE ev (day DATE, v INTEGER);
				ALTER TABLE ev SET ('write.delete.mode' = 'merge-on-read');
				INSERT INTO ev VALUES (DATE '2024-01-01', 1), (DATE '2024-01-02', 2), (DATE '2024-01-03', 3);
				INSERT INTO ev VALUES (DATE '2024-01-05', 5);
				DELETE FROM ev WHERE v = 2`)
			mustExec(t, s, "ALTER TABLE ev SET ('write.delete.mode' = '"+mode+"')")
			res, first := stratRun(t, s, "DELETE FROM ev WHERE day >= DATE '2024-01-01' AND day < DATE '2024-01-04'")
			if m := res.Metrics(); first != "2" || m.RowsDeleted != 2 {
				t.Fatalf("count %s, RowsDeleted %d; want 2 (the live rows of the file)", first, m.RowsDeleted)
			}
			if got := query(t, s, "SELECT v FROM ev"); !slices.Equal(got, []string{"5"}) {
				t.Fatalf("rows left %v, want [5]", got)
			}
			// the file and its position deletes are gone together
			if got := query(t, s, "SELECT count(*) FROM ev$files"); !slices.Equal(got, []string{"1"}) {
				t.Fatalf("files left %v, want the one of 2024-01-05", got)
			}
		})
	}
}

// TestRewriteRunsSubqueryOnce: a DELETE's or UPDATE's subquery runs once,
// not once per data file: a registered reader, which can be read only
// once, serves as the key set of a target with several files, for the
// count pass and the rewrite alike, and for a correlated scalar subquery
// in SET too.
func TestRewriteRunsSubqueryOnce(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id INTEGER, v INTEGER)")
	for i := 0; i < 4; i++ {
		mustExec(t, s, fmt.Sprintf("INSERT INTO t VALUES (%d, 0), (%d, 0)", 10*i+1, 10*i+3))
	}
	delta := func(ids ...int32) {
		schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}, {Name: "v", Type: arrow.PrimitiveTypes.Int32}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for _, id := range ids {
			b.Field(0).(*array.Int32Builder).Append(id)
			b.Field(1).(*array.Int32Builder).Append(id * 100)
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		rdr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		s.Unregister("delta")
		if err := s.RegisterReader(context.Background(), "delta", rdr); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		q, count string
		ids      []int32
	}{
		{"DELETE FROM t WHERE id IN (SELECT id FROM delta)", "3", []int32{3, 13, 23, 99}},
		{"UPDATE t SET v = 1 WHERE id IN (SELECT id FROM delta)", "2", []int32{1, 31}},
		{"UPDATE t SET v = coalesce((SELECT d.v FROM delta d WHERE d.id = t.id), -1) WHERE id > 10", "4", []int32{11, 21}},
		{"DELETE FROM t WHERE EXISTS (SELECT 1 FROM delta d WHERE d.id = t.id)", "1", []int32{33}},
	} {
		delta(tc.ids...)
		if _, got := stratRun(t, s, tc.q); got != tc.count {
			t.Fatalf("%s: count %s, want %s", tc.q, got, tc.count)
		}
	}
	want := []string{"1|1", "11|1100", "21|2100", "31|-1"}
	if got := query(t, s, "SELECT id, v FROM t ORDER BY id"); !slices.Equal(got, want) {
		t.Fatalf("t = %v, want %v", got, want)
	}
	// the plan says which part runs once
	mustExec(t, s, "CREATE TABLE keys (id INTEGER); INSERT INTO keys VALUES (1)")
	if text := explainText(t, s, "EXPLAIN DELETE FROM t WHERE id IN (SELECT id FROM keys)"); !strings.Contains(text, "Once (computed for the first data file") {
		t.Fatalf("EXPLAIN DELETE:\n%s", text)
	}
}

// TestWidenedCursorStatistics: after on_schema_change widens a cursor
// column from integer to bigint, the older files' 4-byte bounds still
// answer max(cursor) and still let a window DELETE drop whole files
// unread.
func TestWidenedCursorStatistics(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE t (c INTEGER, n INTEGER);
		INSERT INTO t VALUES (1, 1), (2, 2);
		INSERT INTO t VALUES (10, 3), (12, 4);
		ALTER TABLE t ALTER COLUMN c SET DATA TYPE BIGINT;
		INSERT INTO t VALUES (5000000000, 5), (20, 6)`)
	q := "SELECT max(c), min(c), count(c) FROM t"
	if text := explainText(t, s, "EXPLAIN "+q); !strings.Contains(text, "MetadataAnswer") {
		t.Errorf("EXPLAIN %s:\n%s", q, text)
	}
	if got := query(t, s, q); !slices.Equal(got, []string{"5000000000|1|6"}) {
		t.Fatalf("%s = %v", q, got)
	}
	// the window [10, 13) holds the second file whole
	text := explainText(t, s, "EXPLAIN ANALYZE DELETE FROM t WHERE c >= 10 AND c < 13")
	if !strings.Contains(text, ": 2 rows") || !strings.Contains(text, "1 dropped unread") {
		t.Fatalf("EXPLAIN ANALYZE DELETE:\n%s", text)
	}
	if got := query(t, s, "SELECT n FROM t ORDER BY n"); !slices.Equal(got, []string{"1", "2", "5", "6"}) {
		t.Fatalf("rows left %v", got)
	}
}

// TestTimeWindowModelReadsWindowFiles: an incremental_by_time window over
// a model that groups events by CAST(ts AS DATE) reaches the event
// table's scan as a range of ts, so only the files of the window are read.
func TestTimeWindowModelReadsWindowFiles(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE events (ts TIMESTAMP, amount INTEGER)")
	for d := 1; d <= 6; d++ {
		mustExec(t, s, fmt.Sprintf("INSERT INTO events VALUES (TIMESTAMP '2024-01-%02d 00:00:00', %d), (TIMESTAMP '2024-01-%02d 23:59:59.999999', %d)", d, d, d, 10*d))
	}
	model := "SELECT CAST(ts AS DATE) AS day, count(*) AS events, sum(amount) AS revenue FROM events GROUP BY day"
	window := "day >= DATE '2024-01-03' AND day < DATE '2024-01-05'"
	q := "SELECT * FROM (" + model + ") WHERE " + window + " ORDER BY day"
	if text := explainText(t, s, "EXPLAIN "+q); !strings.Contains(text, "files scanned=2 skipped=4") {
		t.Fatalf("EXPLAIN of the window:\n%s", text)
	}
	want := []string{"2024-01-03|2|33", "2024-01-04|2|44"}
	if got := query(t, s, q); !slices.Equal(got, want) {
		t.Fatalf("window = %v, want %v", got, want)
	}
	// the strategy's statements: DELETE the window, INSERT it again
	mustExec(t, s, "CREATE TABLE daily AS SELECT * FROM ("+model+")")
	if _, n := stratRun(t, s, "DELETE FROM daily WHERE "+window); n != "2" {
		t.Fatalf("DELETE of the window: %s rows, want 2", n)
	}
	text := explainText(t, s, "EXPLAIN INSERT INTO daily SELECT * FROM ("+model+") WHERE "+window)
	if !strings.Contains(text, "files scanned=2 skipped=4") {
		t.Fatalf("EXPLAIN INSERT of the window:\n%s", text)
	}
	if _, n := stratRun(t, s, "INSERT INTO daily SELECT * FROM ("+model+") WHERE "+window); n != "2" {
		t.Fatalf("INSERT of the window: %s rows, want 2", n)
	}
	if got := query(t, s, "SELECT count(*), sum(revenue) FROM daily"); !slices.Equal(got, []string{"6|231"}) {
		t.Fatalf("daily = %v", got)
	}
}

// TestKeyedDeleteSkipsFiles: the merge fallback's DELETE … WHERE key IN
// (SELECT key FROM (<query>)) reads only the files whose key range meets
// the subquery's; the others are not opened (removed from disk here).
func TestKeyedDeleteSkipsFiles(t *testing.T) {
	for _, typs := range [][2]string{{"INTEGER", "INTEGER"}, {"BIGINT", "BIGINT"}, {"DATE", "DATE"}, {"INTEGER", "BIGINT"}} {
		typ, srcTyp := typs[0], typs[1] // the keys of t and of the subquery
		t.Run(typ+"/"+srcTyp, func(t *testing.T) {
			lk, dir := openLake(t)
			s := lk.Session()
			val := func(i int) string {
				if typ == "DATE" {
					return fmt.Sprintf("DATE '2024-01-01' + %d", i)
				}
				return fmt.Sprint(i)
			}
			mustExec(t, s, "CREATE TABLE t (k "+typ+", v INTEGER); CREATE TABLE src (k "+srcTyp+")")
			var files []string
			seen := map[string]bool{}
			for f := 0; f < 3; f++ {
				var vals []string
				for i := 10*f + 1; i <= 10*f+10; i++ {
					vals = append(vals, fmt.Sprintf("(%s, %d)", val(i), i))
				}
				mustExec(t, s, "INSERT INTO t VALUES "+strings.Join(vals, ", "))
				for _, p := range stratFiles(t, lk, "t") {
					if !seen[p] {
						seen[p] = true
						files = append(files, p)
					}
				}
			}
			mustExec(t, s, "INSERT INTO src VALUES ("+val(12)+"), ("+val(25)+"), (NULL)")
			if err := os.Remove(files[0]); err != nil {
				t.Fatal(err)
			}
			text := explainText(t, s, "EXPLAIN ANALYZE DELETE FROM t WHERE k IN (SELECT k FROM src)")
			if !strings.Contains(text, ": 2 rows") || !strings.Contains(text, "3 in the snapshot, 1 skipped by pruning") {
				t.Fatalf("EXPLAIN ANALYZE DELETE:\n%s", text)
			}
			mustExec(t, s, "INSERT INTO src VALUES ("+val(24)+")")
			if _, n := stratRun(t, s, "UPDATE t SET v = -v WHERE k IN (SELECT k FROM src WHERE k = "+val(24)+")"); n != "1" {
				t.Fatalf("UPDATE: %s rows, want 1", n)
			}
			// an empty key set skips every file and commits nothing
			before := stratStateOf(t, lk, dir, "t")
			if _, n := stratRun(t, s, "DELETE FROM t WHERE k IN (SELECT k FROM src WHERE k IS NULL)"); n != "0" {
				t.Fatalf("DELETE of no key: %s rows", n)
			}
			if after := stratStateOf(t, lk, dir, "t"); after.snapshot != before.snapshot {
				t.Fatalf("DELETE of no key committed")
			}
			got := query(t, s, "SELECT v FROM t WHERE v < 0 OR v IN (11, 13, 24, 26)")
			slices.Sort(got)
			if want := []string{"-24", "11", "13", "26"}; !slices.Equal(got, want) {
				t.Fatalf("rows %v, want %v", got, want)
			}
		})
	}
}
