package lake_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/mergeinto"
)

// Copy-on-write copies the row groups of a rewritten file in which no row
// changed verbatim into a new file (mergeinto/rgcopy.go). The
// differential test: the same statements on a twin table with the copy
// turned off leave the same rows, and every copied file's Iceberg entry
// (record count, value and null counts, bounds, partition) is what the
// plain writer gives the same rows, and any NaN count it gives is too. Tables of several 50-row row
// groups, with NULLs, NaNs and strings past the 16-character bound
// truncation; unpartitioned, identity- and bucket-partitioned.
func TestRowGroupCopyMatchesThePlainRewrite(t *testing.T) {
	for _, tc := range []struct{ name, part string }{
		{"unpartitioned", ""}, {"identity", "PARTITIONED BY (p)"}, {"bucket", "PARTITIONED BY (bucket(3, id))"},
	} {
		part := tc.part
		t.Run(tc.name, func(t *testing.T) {
			lk, _ := openLake(t)
			s := lk.Session()
			for _, tc := range []struct{ name, props string }{
				{"a", ""},
				{"b", ", 'skade.write.copy-row-groups' = 'false'"},
			} {
				mustExec(t, s, fmt.Sprintf(`CREATE TABLE %s (id BIGINT, p INT, v DOUBLE, s TEXT, d DATE) %s
					WITH ('write.parquet.row-group-limit' = '50'%s)`, tc.name, part, tc.props))
				mustExec(t, s, fmt.Sprintf(`INSERT INTO %s SELECT i, i %% 3,
					CASE WHEN i %% 97 = 0 THEN 'NaN'::double WHEN i %% 89 = 0 THEN NULL ELSE i * 0.5 END,
					CASE WHEN i %% 83 = 0 THEN NULL ELSE 'a string longer than sixteen characters ' || (10000 - i) END,
					DATE '2026-01-01' + (i %% 400)::int
					FROM range(3000) r(i)`, tc.name))
			}
			steps := []string{
				// two row groups hit, an insert, a delete
				`MERGE INTO %[1]s t USING (SELECT 1234 AS id, 0 AS k UNION ALL SELECT 2701, 1 UNION ALL SELECT 5000, 0) src ON t.id = src.id
				 WHEN MATCHED AND src.k = 1 THEN DELETE WHEN MATCHED THEN UPDATE SET v = -1, s = NULL
				 WHEN NOT MATCHED THEN INSERT VALUES (src.id, 2, 0.25, 'new', DATE '2027-01-01')`,
				`UPDATE %[1]s SET s = 'z' WHERE id IN (7, 1500, 2999)`,
				// whole row groups deleted, others untouched
				`DELETE FROM %[1]s WHERE id BETWEEN 100 AND 349`,
				`MERGE INTO %[1]s t USING (SELECT i AS id FROM range(600, 3000, 700) r(i)) src ON t.id = src.id
				 WHEN MATCHED THEN UPDATE SET d = NULL`,
				// a position delete, then a copy-on-write rewrite of the
				// files it applies to: their row groups are not copied
				// (a copy would bring the deleted rows back)
				`ALTER TABLE %[1]s SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read');
				 DELETE FROM %[1]s WHERE id %% 250 = 3;
				 ALTER TABLE %[1]s SET TBLPROPERTIES ('write.delete.mode' = 'copy-on-write')`,
				`UPDATE %[1]s SET v = 2 WHERE id %% 500 = 11`,
				// SET columns only: row groups patched
				`UPDATE %[1]s SET d = d + 1, s = upper(s) WHERE id %% 97 = 13`,
				// a partition source column: rows move, no patch
				`UPDATE %[1]s SET p = 0 WHERE id %% 900 = 1`,
				// composite keys with a residual and clause conditions:
				// row groups read whole may still end unchanged
				`MERGE INTO %[1]s t USING (SELECT i AS id, i %% 3 AS p FROM range(1000, 1100) r(i)) src
				 ON t.id = src.id AND t.p = src.p AND t.v > 530
				 WHEN MATCHED AND src.id %% 2 = 0 THEN UPDATE SET s = 'even' WHEN MATCHED THEN DELETE`,
				// updates only, with different SET lists: row groups patched
				`MERGE INTO %[1]s t USING (SELECT i AS id, i %% 2 AS k FROM range(2000, 2600, 7) r(i)) src ON t.id = src.id
				 WHEN MATCHED AND src.k = 0 THEN UPDATE SET v = 9 WHEN MATCHED THEN UPDATE SET s = 'odd'
				 WHEN NOT MATCHED THEN INSERT (id) VALUES (src.id)`,
				`MERGE INTO %[1]s t USING (SELECT i AS id FROM range(1000, 1003) r(i)) src ON t.id = src.id
				 WHEN MATCHED AND t.v < 0 THEN DELETE`,
				// keys in every row group and a DELETE: nothing to copy or
				// patch, the file is read whole with the key pass's results
				`MERGE INTO %[1]s t USING (SELECT i AS id FROM range(0, 6000, 5) r(i)) src ON t.id = src.id
				 WHEN MATCHED AND src.id %% 10 = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET v = 7`,
				// keys inside the files' ranges that match nothing
				`MERGE INTO %[1]s t USING (SELECT i AS id FROM range(150, 350, 50) r(i) UNION ALL SELECT NULL) src ON t.id = src.id
				 WHEN MATCHED THEN DELETE WHEN NOT MATCHED AND src.id IS NOT NULL THEN INSERT (id, s) VALUES (src.id, 'back')`,
				`DELETE FROM %[1]s WHERE id %% 700 = 12`,
				// correlated subqueries: the statement's plan joins, which
				// may yield the rows out of file order
				`UPDATE %[1]s SET v = (SELECT max(x.v) FROM %[1]s x WHERE x.p = %[1]s.p AND x.id < %[1]s.id AND x.id > %[1]s.id - 9) WHERE id %% 400 = 5`,
				`DELETE FROM %[1]s WHERE EXISTS (SELECT 1 FROM %[1]s x WHERE x.id = %[1]s.id + 1 AND x.p = 2 AND x.id %% 300 = 1)`,
				`UPDATE %[1]s SET s = 'in' WHERE id IN (SELECT id * 7 FROM %[1]s WHERE id < 400 AND p = 1)`,
				// row groups statistics prove unchanged are not read: a
				// date window, an id range, a conjunct no row group can
				// meet (the file stays), IS NULL beside a range, and a
				// correlated subquery beside a range (read whole)
				`UPDATE %[1]s SET v = -v WHERE d BETWEEN DATE '2026-02-01' AND DATE '2026-02-03'`,
				`DELETE FROM %[1]s WHERE id >= 2950 AND id < 2990`,
				`UPDATE %[1]s SET s = 'never' WHERE id = 1500 AND p = 7`,
				`UPDATE %[1]s SET s = 'was null' WHERE s IS NULL AND id > 1000 AND id <= 1700`,
				`UPDATE %[1]s SET v = 0 WHERE id IN (20, 2020) AND EXISTS (SELECT 1 FROM %[1]s x WHERE x.id = %[1]s.id - 1)`,
			}
			for _, step := range steps {
				for _, name := range []string{"a", "b"} {
					mustExec(t, s, fmt.Sprintf(step, name))
				}
				got, want := query(t, s, "SELECT * FROM a ORDER BY id"), query(t, s, "SELECT * FROM b ORDER BY id")
				if !slices.Equal(got, want) {
					t.Fatalf("after %.60s…: %d rows with the copy, %d without; they differ", step, len(got), len(want))
				}
			}
			// an UPDATE of one id range reads only its row groups
			plan := strings.Join(query(t, s, "EXPLAIN ANALYZE UPDATE a SET v = 1 WHERE id BETWEEN 1001 AND 1010"), "\n")
			mustExec(t, s, "UPDATE b SET v = 1 WHERE id BETWEEN 1001 AND 1010")
			if !strings.Contains(plan, "left unread (statistics prove no row matches)") {
				t.Fatalf("the UPDATE of ids 1001-1010 read every row group:\n%s", plan)
			}
			if got, want := query(t, s, "SELECT * FROM a ORDER BY id"), query(t, s, "SELECT * FROM b ORDER BY id"); !slices.Equal(got, want) {
				t.Fatalf("after the id-range UPDATE: %d rows with the copy, %d without; they differ", len(got), len(want))
			}
			copies := rgCopies(t, lk, "a")
			if len(copies) == 0 {
				t.Fatal("no row group was copied")
			}
			if got := query(t, s, "SELECT sum(summary['skade.patched-row-groups']::int) FROM a$snapshots"); len(got) != 1 || got[0] == "0" || got[0] == "NULL" {
				t.Fatalf("no row group was patched: %v", got)
			}
			if n := len(rgCopies(t, lk, "b")); n != 0 {
				t.Fatalf("%d copies with skade.write.copy-row-groups = false", n)
			}
			// Each copy against the plain writer's file of the same rows.
			copiesMatchPlainWriter(t, lk, s, copies, "id BIGINT, p INT, v DOUBLE, s TEXT, d DATE", "id, p, v, s, d", part)
		})
	}
}

// copiesMatchPlainWriter writes each copy's rows again with the plain
// writer, into a table of columns cols (names: their names, in order)
// and partition clause part, and requires the copy's entry to match the
// plain file's (sameEntry).
func copiesMatchPlainWriter(t *testing.T, lk *lake.Lake, s *lake.Session, copies []iceberg.DataFile, cols, names, part string) {
	t.Helper()
	for i, df := range copies {
		chk := fmt.Sprintf("chk%d", i)
		mustExec(t, s, fmt.Sprintf(`CREATE TABLE %s (%s) %s;
			INSERT INTO %s SELECT %s FROM read_parquet('%s')`, chk, cols, part, chk, names, df.FilePath()))
		plain := tableFiles(t, lk, chk)
		if len(plain) != 1 {
			t.Fatalf("the plain writer wrote %d files for one copy's rows", len(plain))
		}
		if err := sameEntry(df, plain[0]); err != nil {
			t.Errorf("copy %s: %v", df.FilePath(), err)
		}
	}
}

// twins runs script for table a, which copies row groups, and table b,
// which does not: %[1]s is the table's name, %[2]s its extra properties.
func twins(t *testing.T, s *lake.Session, script string) {
	t.Helper()
	for _, tw := range []struct{ name, props string }{{"a", ""}, {"b", ", 'skade.write.copy-row-groups' = 'false'"}} {
		mustExec(t, s, fmt.Sprintf(script, tw.name, tw.props))
	}
}

// rgCopies are the row-group copies among the live data files of table.
func rgCopies(t *testing.T, lk *lake.Lake, name string) []iceberg.DataFile {
	var out []iceberg.DataFile
	for _, df := range tableFiles(t, lk, name) {
		if strings.HasSuffix(df.FilePath(), "-rgcopy.parquet") {
			out = append(out, df)
		}
	}
	return out
}

func tableFiles(t *testing.T, lk *lake.Lake, name string) []iceberg.DataFile {
	t.Helper()
	var out []iceberg.DataFile
	for _, task := range tableTasks(t, lk, name) {
		out = append(out, task.File)
	}
	return out
}

// tableTasks plans the table's current snapshot through iceberg-go: each
// live data file with the delete files that apply to it.
func tableTasks(t *testing.T, lk *lake.Lake, name string) []table.FileScanTask {
	t.Helper()
	ctx := context.Background()
	tbl, err := lk.Table(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Iceberg().Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// sameEntry compares what Iceberg readers prune and count by.
func sameEntry(got, want iceberg.DataFile) error {
	var diffs []string
	cmp := func(what string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			diffs = append(diffs, fmt.Sprintf("%s %v, the plain writer's %v", what, a, b))
		}
	}
	cmp("record count", got.Count(), want.Count())
	cmp("value counts", got.ValueCounts(), want.ValueCounts())
	cmp("null counts", got.NullValueCounts(), want.NullValueCounts())
	// A NaN count is known only where the writer could tell (see
	// mergeinto/nancount.go): a copy may leave one out that the plain
	// writer of its rows alone knows, but any it gives must be the
	// plain writer's.
	for id, n := range got.NaNValueCounts() {
		if m, ok := want.NaNValueCounts()[id]; !ok || m != n {
			diffs = append(diffs, fmt.Sprintf("NaN counts %v, the plain writer's %v", got.NaNValueCounts(), want.NaNValueCounts()))
			break
		}
	}
	cmp("lower bounds", got.LowerBoundValues(), want.LowerBoundValues())
	cmp("upper bounds", got.UpperBoundValues(), want.UpperBoundValues())
	cmp("partition", got.Partition(), want.Partition())
	cmp("spec", got.SpecID(), want.SpecID())
	if len(diffs) > 0 {
		return fmt.Errorf("%s", strings.Join(diffs, "; "))
	}
	return nil
}

// A copy that fails is removed and its rows are written like the others;
// a statement that fails after a copy leaves no copy behind.
func TestRowGroupCopyFailures(t *testing.T) {
	lk, dir := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE t (id BIGINT, v BIGINT) WITH ('write.parquet.row-group-limit' = '10');
		INSERT INTO t SELECT i, i FROM range(100) r(i)`)
	before := dataFiles(t, dir)
	var hooked []string
	mergeinto.TestHookRowGroupCopy = func(path string) error {
		hooked = append(hooked, path)
		return errors.New("injected")
	}
	defer func() { mergeinto.TestHookRowGroupCopy = nil }()
	mustExec(t, s, "UPDATE t SET v = -1 WHERE id IN (15, 77)")
	if len(hooked) != 1 {
		t.Fatalf("%d copies tried, want 1", len(hooked))
	}
	if got := query(t, s, "SELECT count(*), sum(v), count(*) FILTER (WHERE v < 0) FROM t"); !slices.Equal(got, []string{fmt.Sprintf("100|%d|2", 4950-15-77-2)}) {
		t.Fatalf("after a failed copy: %v", got)
	}
	if n := len(rgCopies(t, lk, "t")); n != 0 {
		t.Fatalf("%d copies in the table", n)
	}
	for _, f := range dataFiles(t, dir) {
		if strings.HasSuffix(f, "-rgcopy.parquet") {
			t.Fatalf("the failed copy %s is left behind", f)
		}
	}
	// The copy succeeds, then the commit is refused: nothing is left.
	hooked = nil
	mergeinto.TestHookRowGroupCopy = func(path string) error {
		hooked = append(hooked, path)
		return nil
	}
	mergeinto.TestHookLedger = func(written int64) int64 { return written + 1 }
	defer func() { mergeinto.TestHookLedger = nil }()
	files := dataFiles(t, dir)
	if err := s.Exec(context.Background(), "DELETE FROM t WHERE id = 42"); err == nil || !strings.Contains(err.Error(), "refusing to commit") {
		t.Fatalf("want the ledger's refusal, got %v", err)
	}
	if len(hooked) != 1 {
		t.Fatalf("%d copies made before the refusal, want 1", len(hooked))
	}
	if after := dataFiles(t, dir); !slices.Equal(after, files) {
		t.Fatalf("a failed statement left files: %d before, %d after", len(files), len(after))
	}
	if len(files) <= len(before) {
		t.Fatalf("the first UPDATE wrote no file")
	}
}

// Files written before a column's type was widened: their row groups
// are copied as they are, but an UPDATE of that column cannot patch them
// (the new values encode as BIGINT, the file holds INT), so their rows
// are written whole. A renamed column is patched under the name the file
// has for it.
func TestRowGroupPatchAfterSchemaChanges(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	twins(t, s, `CREATE TABLE %[1]s (id BIGINT, n INT, s TEXT) WITH ('write.parquet.row-group-limit' = '10'%[2]s);
		INSERT INTO %[1]s SELECT i, i::int, 's' || i FROM range(100) r(i);
		ALTER TABLE %[1]s ALTER COLUMN n TYPE BIGINT;
		UPDATE %[1]s SET n = n + 1000000000000 WHERE id IN (5, 55);
		ALTER TABLE %[1]s RENAME COLUMN s TO t;
		UPDATE %[1]s SET t = 'renamed' WHERE id IN (17, 93)`)
	got, want := query(t, s, "SELECT * FROM a ORDER BY id"), query(t, s, "SELECT * FROM b ORDER BY id")
	if !slices.Equal(got, want) {
		t.Fatalf("with the copy:\n%v\nwithout:\n%v", got, want)
	}
	if got := query(t, s, "SELECT sum(n), count(*) FILTER (WHERE t = 'renamed') FROM a"); !slices.Equal(got, []string{"2000000004950|2"}) {
		t.Fatalf("sum(n), renamed: %v", got)
	}
	if got := query(t, s, "SELECT summary['skade.copied-row-groups'], summary['skade.patched-row-groups'] FROM a$snapshots ORDER BY committed_at"); len(got) < 3 {
		t.Fatalf("snapshots: %v", got)
	} else if got[len(got)-2] != "8|0" {
		// the widened column's UPDATE: eight groups copied, the two hit
		// written whole (no patch of an INT column with BIGINT values)
		t.Fatalf("the UPDATE of the widened column copied|patched %s, want 8|0", got[len(got)-2])
	} else if got[len(got)-1] != "6|2" {
		// the renamed column's UPDATE: the two groups hit in the copy
		// (old names, INT n) are patched
		t.Fatalf("the UPDATE of the renamed column copied|patched %s, want 6|2", got[len(got)-1])
	}
}

// A file of another writer (pqarrow, no Iceberg field ids, page indexes
// and a bloom filter, which a copy drops), added to a table: a MERGE and
// an UPDATE copy its untouched row groups, and the table reads right.
// Without field ids no row group is patched.
func TestRowGroupCopyOfAForeignFile(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE f (id BIGINT, v DOUBLE)`)
	tbl, err := lk.Table(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	const n = 50000
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	ids, vs := array.NewInt64Builder(memory.DefaultAllocator), array.NewFloat64Builder(memory.DefaultAllocator)
	for i := 0; i < n; i++ {
		ids.Append(int64(i))
		vs.Append(float64(i % 10))
	}
	addForeignFile(t, tbl, array.NewRecordBatch(sc, []arrow.Array{ids.NewArray(), vs.NewArray()}, n), parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(5000),
		parquet.WithPageIndexEnabled(true), parquet.WithBloomFilterEnabledFor("id", true), parquet.WithDataPageSize(4096)))
	// ids 12000..12009 (row group 2) change; 60000.. are inserted
	mustExec(t, s, `MERGE INTO f USING (SELECT i AS id FROM range(12000, 12010) r(i) UNION ALL SELECT 60000) src ON f.id = src.id
		WHEN MATCHED THEN UPDATE SET v = 100 WHEN NOT MATCHED THEN INSERT VALUES (src.id, 100)`)
	mustExec(t, s, `UPDATE f SET v = -1 WHERE id BETWEEN 40000 AND 40004`)
	if got := query(t, s, "SELECT count(*), sum(v), count(*) FILTER (WHERE v = 100), count(*) FILTER (WHERE v < 0) FROM f"); !slices.Equal(got, []string{fmt.Sprintf("%d|%d|11|5", n+1, 225000-45+1000+100-(0+1+2+3+4)-5)}) {
		t.Fatalf("after the writes: %v", got)
	}
	if got := query(t, s, "SELECT v FROM f WHERE id IN (4999, 5000, 12005, 40002, 49999) ORDER BY id"); !slices.Equal(got, []string{"9", "0", "100", "-1", "9"}) {
		t.Fatalf("point reads: %v", got)
	}
	if got := query(t, s, "SELECT summary['skade.copied-row-groups'], summary['skade.patched-row-groups'] FROM f$snapshots WHERE operation = 'overwrite' ORDER BY committed_at"); !slices.Equal(got, []string{"9|0", "8|0"}) {
		// the file has no field ids, so an UPDATE cannot patch it (a
		// patch's column must be the file's, field id included): the
		// row group hit is written whole
		t.Fatalf("copied|patched row groups per write: %v", got)
	}
}

// Under a memory limit a patch gives way: a row group whose SET columns
// do not fit from the start is rewritten whole, and one whose SET columns
// outgrow the limit part way through stops being patched
// (fileRewrite.unpatch: its rows so far are read again and written whole,
// the rest stream into the writer).
func TestRowGroupPatchUnderAMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name             string
		rows, group      int
		limit, where     string
		updated, patched string
	}{
		{"from the start", 60000, 20000, "6500kB", "id %% 1000 = 7", "60", ""},
		// enough to start a patch at a group's first rows, not to hold a
		// whole group's 10 MB of s: both groups are hit, one gives up
		{"part way", 200000, 100000, "16MB", "id %% 100000 IN (1, 99000)", "4", "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lk, _ := openLake(t)
			s := lk.Session()
			twins(t, s, fmt.Sprintf(`CREATE TABLE %%[1]s (id BIGINT, n INT, s TEXT, u TEXT) WITH ('write.parquet.row-group-limit' = '%d'%%[2]s);
				INSERT INTO %%[1]s SELECT i, i::int, repeat('x', 100) || i, 'u' || i FROM range(%d) r(i)`, tc.group, tc.rows))
			mustExec(t, s, "SET memory_limit = '"+tc.limit+"'")
			twins(t, s, "UPDATE %[1]s SET s = s || 'y' WHERE "+tc.where)
			mustExec(t, s, "RESET memory_limit")
			got, want := query(t, s, "SELECT * FROM a ORDER BY id"), query(t, s, "SELECT * FROM b ORDER BY id")
			if !slices.Equal(got, want) {
				t.Fatalf("%d rows with the copy, %d without; they differ", len(got), len(want))
			}
			if got := query(t, s, "SELECT count(*) FILTER (WHERE s LIKE '%y') FROM a"); !slices.Equal(got, []string{tc.updated}) {
				t.Fatalf("updated rows: %v", got)
			}
			if tc.patched != "" {
				patched := query(t, s, "SELECT summary['skade.patched-row-groups'] FROM a$snapshots ORDER BY committed_at DESC LIMIT 1")
				if !slices.Equal(patched, []string{tc.patched}) {
					t.Fatalf("patched row groups %v, want %s: the memory limit no longer stops a patch part way (raise the table or lower the limit)", patched, tc.patched)
				}
			}
		})
	}
}

// A merge-on-read DELETE or UPDATE reads only the row groups of a file
// without deletes whose statistics allow a match (each by byte range, its
// rows numbered from their file position), and marks the same positions
// as reading the whole file would: the same statements on a copy-on-write
// twin without row-group copies leave the same rows, on format versions 2
// (position delete files) and 3 (deletion vectors; a DELETE only, since
// an UPDATE's new rows need the old rows' lineage), partitioned or not.
func TestMergeOnReadSkipsRowGroups(t *testing.T) {
	for _, tc := range []struct{ name, part, version string }{
		{"v2", "", "2"}, {"v2-identity", "PARTITIONED BY (p)", "2"}, {"v3", "", "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lk, _ := openLake(t)
			s := lk.Session()
			for _, tw := range []struct{ name, props string }{
				{"m", "'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read'"},
				{"r", "'skade.write.copy-row-groups' = 'false'"},
			} {
				mustExec(t, s, fmt.Sprintf(`CREATE TABLE %s (id BIGINT, p INT, v DOUBLE, s TEXT, d DATE) %s
					WITH ('format-version' = '%s', 'write.parquet.row-group-limit' = '50', %s)`, tw.name, tc.part, tc.version, tw.props))
				mustExec(t, s, fmt.Sprintf(`INSERT INTO %s SELECT i, i %% 3, i * 0.5,
					CASE WHEN i %% 83 = 0 THEN NULL ELSE 's' || i END, DATE '2026-01-01' + (i / 10)::int
					FROM range(3000) r(i)`, tw.name))
			}
			unread := func(stmt string) bool {
				t.Helper()
				plan := strings.Join(query(t, s, "EXPLAIN ANALYZE "+fmt.Sprintf(stmt, "m")), "\n")
				mustExec(t, s, fmt.Sprintf(stmt, "r"))
				if got, want := query(t, s, "SELECT * FROM m ORDER BY id"), query(t, s, "SELECT * FROM r ORDER BY id"); !slices.Equal(got, want) {
					t.Fatalf("after %.60s…: %d rows merge-on-read, %d copy-on-write; they differ", stmt, len(got), len(want))
				}
				return strings.Contains(plan, "left unread (statistics prove no row matches)")
			}
			// the first statements find files without deletes: row groups
			// left unread
			if !unread(`DELETE FROM %s WHERE id >= 1210 AND id < 1260`) {
				t.Fatal("the id-range DELETE read every row group")
			}
			steps := []string{
				`DELETE FROM %s WHERE d BETWEEN DATE '2026-03-01' AND DATE '2026-03-02' AND s IS NOT NULL`,
				`DELETE FROM %s WHERE id = 2999 OR id = 5`,
				`DELETE FROM %s WHERE id > 100000`,
			}
			if tc.version == "2" {
				steps = append(steps,
					`UPDATE %s SET v = -v, s = 'u' WHERE id BETWEEN 2400 AND 2420`,
					`UPDATE %s SET s = 'null' WHERE s IS NULL AND id < 900`)
			}
			for _, st := range steps {
				unread(st)
			}
			// a file with deletes now is read whole, with them applied
			if unread(`DELETE FROM %s WHERE id >= 1000 AND id < 1400`) && tc.part == "" {
				t.Fatal("a file with deletes was read by row group ranges")
			}
			if got := query(t, s, "SELECT count(*) FROM m"); got[0] == "3000" {
				t.Fatal("nothing was deleted")
			}
		})
	}
}

// A MERGE that only updates, over several files of several row groups
// (read ahead, key columns first, and patched on goroutines), that fails
// in its last file (a target row matched twice) after the earlier files'
// patches were started, leaves the table and the lake's files as they
// were. The same MERGE without the repeated key patches row groups and
// leaves the rows the plain rewrite leaves.
func TestRowGroupPatchMergeFailsLate(t *testing.T) {
	lk, dir := openLake(t)
	s := lk.Session()
	for _, tc := range []struct{ name, props string }{
		{"t", ""}, {"plain", ", 'skade.write.copy-row-groups' = 'false'"},
	} {
		mustExec(t, s, fmt.Sprintf(`CREATE TABLE %s (id BIGINT, s TEXT, v DOUBLE) WITH ('write.parquet.row-group-limit' = '1000'%s)`, tc.name, tc.props))
		for f := range 4 {
			mustExec(t, s, fmt.Sprintf(`INSERT INTO %s SELECT i, CASE WHEN i %% 11 = 0 THEN NULL ELSE 'old' END, i * 0.5 FROM range(%d, %d) r(i)`, tc.name, f*5000, (f+1)*5000))
		}
	}
	files := dataFiles(t, dir)
	rows := query(t, s, "SELECT * FROM t ORDER BY id")
	bad := `MERGE INTO t USING (SELECT i AS id FROM range(0, 20000, 7) r(i) UNION ALL SELECT 19999) src ON t.id = src.id
		WHEN MATCHED THEN UPDATE SET s = 'new', v = -src.id`
	err := s.Exec(context.Background(), bad)
	if err == nil || !strings.Contains(err.Error(), "more than one") {
		t.Fatalf("a target row matched twice: %v", err)
	}
	if after := dataFiles(t, dir); !slices.Equal(after, files) {
		t.Fatalf("the failed MERGE left files: %d before, %d after", len(files), len(after))
	}
	if got := query(t, s, "SELECT * FROM t ORDER BY id"); !slices.Equal(got, rows) {
		t.Fatal("the failed MERGE changed rows")
	}
	good := `MERGE INTO %s USING (SELECT i AS id FROM range(0, 20000, 7) r(i) UNION ALL SELECT 30000 + i FROM range(3) r(i)) src ON %[1]s.id = src.id
		WHEN MATCHED THEN UPDATE SET s = 'new', v = -src.id WHEN NOT MATCHED THEN INSERT VALUES (src.id, 'ins', 0)`
	for _, name := range []string{"t", "plain"} {
		mustExec(t, s, fmt.Sprintf(good, name))
	}
	if got, want := query(t, s, "SELECT * FROM t ORDER BY id"), query(t, s, "SELECT * FROM plain ORDER BY id"); !slices.Equal(got, want) {
		t.Fatalf("patched and plain MERGEs leave different rows (%d and %d)", len(got), len(want))
	}
	if got := query(t, s, "SELECT count(*) FILTER (WHERE s = 'new'), count(*) FILTER (WHERE s = 'ins'), count(*) FILTER (WHERE s IS NULL) FROM t"); !slices.Equal(got, []string{"2858|3|1559"}) {
		t.Fatalf("after the MERGE: %v", got)
	}
	if got := query(t, s, "SELECT summary['skade.patched-row-groups'] FROM t$snapshots ORDER BY committed_at DESC LIMIT 1"); !slices.Equal(got, []string{"20"}) {
		t.Fatalf("patched row groups: %v, want 20", got)
	}
}

// A copy-on-write MERGE reads a file's key columns first and then the row
// groups a key hit, without their key columns: the probe's are put back
// (mergeinto's fileKeys). When the statement's memory limit cannot hold a
// file's key columns, the row groups are read with them instead. Either
// way the MERGE leaves the rows a twin without row-group copies leaves;
// the bytes read show which way each went (the key columns once, or
// again with the row groups).
func TestMergeKeyColumnsReadOnce(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	for _, name := range []string{"a", "c"} {
		mustExec(t, s, fmt.Sprintf(`CREATE TABLE %s (id BIGINT, v DOUBLE, s TEXT) WITH ('write.parquet.row-group-limit' = '7000');
			INSERT INTO %[1]s SELECT i, i * 0.5, 's' || (i %% 5) FROM range(100000) r(i)`, name))
	}
	mustExec(t, s, `CREATE TABLE b (id BIGINT, v DOUBLE, s TEXT) WITH ('write.parquet.row-group-limit' = '7000', 'skade.write.copy-row-groups' = 'false');
		INSERT INTO b SELECT i, i * 0.5, 's' || (i % 5) FROM range(100000) r(i)`)
	// keys in every row group but one (63000..69999), two updates in one
	// group, a delete (so the groups hit are written whole, not patched)
	// and new keys
	const merge = `MERGE INTO %s t USING (SELECT i * 97 AS id FROM range(1000) r(i) WHERE i * 97 NOT BETWEEN 63000 AND 69999
		UNION ALL SELECT 200000 + i FROM range(10) r(i)) src ON t.id = src.id
		WHEN MATCHED AND t.id %% 1000 = 0 THEN DELETE
		WHEN MATCHED THEN UPDATE SET v = -t.v, s = t.s || 'u'
		WHEN NOT MATCHED THEN INSERT VALUES (src.id, 1, 'new')`
	bytesRead := func(table, limit string) int64 {
		t.Helper()
		if limit != "" {
			mustExec(t, s, "SET memory_limit = '"+limit+"'")
			defer mustExec(t, s, "RESET memory_limit")
		}
		plan := strings.Join(query(t, s, "EXPLAIN ANALYZE "+fmt.Sprintf(merge, table)), "\n")
		m := regexp.MustCompile(`bytes: read=(\d+)`).FindStringSubmatch(plan)
		if m == nil {
			t.Fatalf("no bytes read in %s", plan)
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	held, dropped := bytesRead("a", ""), bytesRead("c", "300kB")
	bytesRead("b", "")
	want := query(t, s, "SELECT * FROM b ORDER BY id")
	// 1000 source keys i*97, 72 of them (i = 650..721) left out, one (0)
	// deleted, 927 updated; 10 inserted
	if len(want) != 100000-1+10 {
		t.Fatalf("the twin without copies has %d rows", len(want))
	}
	for _, name := range []string{"a", "c"} {
		if got := query(t, s, "SELECT * FROM "+name+" ORDER BY id"); !slices.Equal(got, want) {
			t.Fatalf("%s: %d rows, the twin without copies %d; they differ", name, len(got), len(want))
		}
	}
	if got := query(t, s, "SELECT count(*) FILTER (WHERE v < 0), count(*) FILTER (WHERE s = 'new'), count(*) FILTER (WHERE s LIKE '%u') FROM a"); !slices.Equal(got, []string{"927|10|927"}) {
		t.Fatalf("updated, inserted, updated: %v", got)
	}
	if dropped <= held {
		t.Fatalf("bytes read %d with the key columns held, %d without: the key columns were not read twice without", held, dropped)
	}
}

// A MERGE's patched row group whose patch cannot be used keeps its
// updates: the new values of a MERGE's updated rows are nowhere but in
// the SET columns the patch was made from (an UPDATE's statement yields
// them again when the rows are read again; a MERGE's rows read again
// are the stored ones). Before session 29 each of these lost them:
//   - a patch that fails to encode: its group's stored rows were written;
//   - a patch given up part way under a memory limit: the group's rows so
//     far were written as stored;
//   - a copy of the row groups that fails: its patched groups' stored rows
//     were written. It now fails the statement, which leaves the lake as
//     it was.
//
// Each MERGE runs on a table and on a twin without row-group copies, and
// must leave the same rows, partitioned or not.
func TestMergePatchFallbacksKeepUpdates(t *testing.T) {
	for _, tc := range []struct{ name, part string }{{"plain", ""}, {"partitioned", "PARTITIONED BY (p)"}} {
		part := tc.part
		t.Run(tc.name, func(t *testing.T) {
			lk, dir := openLake(t)
			s := lk.Session()
			for _, tw := range []struct{ name, props string }{{"a", ""}, {"b", ", 'skade.write.copy-row-groups' = 'false'"}} {
				mustExec(t, s, fmt.Sprintf(`CREATE TABLE %s (id BIGINT, p INT, s TEXT, v DOUBLE) %s WITH ('write.parquet.row-group-limit' = '1000'%s)`, tw.name, part, tw.props))
				for f := range 3 {
					mustExec(t, s, fmt.Sprintf(`INSERT INTO %s SELECT i, (i / 3000)::int, CASE WHEN i %% 13 = 0 THEN NULL ELSE 'old' || (i %% 4) END, i * 0.5
						FROM range(%d, %d) r(i)`, tw.name, f*3000, (f+1)*3000))
				}
			}
			same := func(what string) {
				t.Helper()
				got, want := query(t, s, "SELECT * FROM a ORDER BY id"), query(t, s, "SELECT * FROM b ORDER BY id")
				if !slices.Equal(got, want) {
					t.Fatalf("%s: the table and its twin without copies differ (%d and %d rows)", what, len(got), len(want))
				}
			}
			patched := func() string {
				t.Helper()
				return query(t, s, "SELECT coalesce(summary['skade.patched-row-groups'], '0') FROM a$snapshots ORDER BY committed_at DESC LIMIT 1")[0]
			}
			// round r updates ids r, r+17, r+34, ... with new values, and
			// inserts one new row
			merge := func(name string, r int) string {
				return fmt.Sprintf(`MERGE INTO %[1]s t USING (SELECT i * 17 + %[2]d AS id, 'm%[2]d' AS s FROM range(0, 530) r(i) UNION ALL SELECT 100000 + %[2]d, 'new') src
					ON t.id = src.id WHEN MATCHED THEN UPDATE SET s = src.s, v = -t.v - %[2]d WHEN NOT MATCHED THEN INSERT VALUES (src.id, 0, src.s, 0)`, name, r)
			}
			both := func(r int) {
				t.Helper()
				mustExec(t, s, merge("a", r))
				mustExec(t, s, merge("b", r))
			}
			updated := func(r int) string {
				return query(t, s, fmt.Sprintf("SELECT count(*) FROM a WHERE s = 'm%d'", r))[0]
			}

			both(1) // patched as usual
			same("patched")
			if got := patched(); got != "9" {
				t.Fatalf("%s row groups patched, want 9", got)
			}

			// every patch fails to encode
			var calls atomic.Int64
			mergeinto.TestHookPatch = func(int64) error { calls.Add(1); return errors.New("injected") }
			both(2)
			mergeinto.TestHookPatch = nil
			same("every patch failed")
			if calls.Load() == 0 || patched() != "0" || updated(2) != "530" {
				t.Fatalf("%d patches tried, %s patched, %s rows updated", calls.Load(), patched(), updated(2))
			}

			// every other patch fails
			calls.Store(0)
			mergeinto.TestHookPatch = func(int64) error {
				if calls.Add(1)%2 == 0 {
					return errors.New("injected")
				}
				return nil
			}
			both(3)
			mergeinto.TestHookPatch = nil
			same("every other patch failed")
			if p := patched(); p == "0" || p == "9" || updated(3) != "530" {
				t.Fatalf("%s patched, %s rows updated", p, updated(3))
			}

			// the copy of the row groups fails: the MERGE fails and leaves
			// the lake as it was
			files, rows := dataFiles(t, dir), query(t, s, "SELECT * FROM a ORDER BY id")
			mergeinto.TestHookRowGroupCopy = func(string) error { return errors.New("injected") }
			err := s.Exec(context.Background(), merge("a", 4))
			mergeinto.TestHookRowGroupCopy = nil
			if err == nil || !strings.Contains(err.Error(), "injected") || !strings.Contains(err.Error(), "skade.write.copy-row-groups") {
				t.Fatalf("a MERGE whose copy failed: %v", err)
			}
			if got := query(t, s, "SELECT * FROM a ORDER BY id"); !slices.Equal(got, rows) {
				t.Fatal("the failed MERGE changed rows")
			}
			if after := dataFiles(t, dir); !slices.Equal(after, files) {
				t.Fatalf("the failed MERGE left files: %d before, %d after", len(files), len(after))
			}
			both(4)
			same("after the failed copy")
		})
	}
}

// Under a memory limit a MERGE's patch gives way part way through a row
// group (fileRewrite.unpatch): the group's rows so far are read again and
// written with the SET columns kept, updates included.
func TestMergePatchUnderAMemoryLimit(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	twins(t, s, `CREATE TABLE %[1]s (id BIGINT, n INT, s TEXT, u TEXT) WITH ('write.parquet.row-group-limit' = '100000'%[2]s);
		INSERT INTO %[1]s SELECT i, i::int, repeat('x', 100) || i, 'u' || i FROM range(200000) r(i)`)
	mustExec(t, s, "SET memory_limit = '16MB'")
	// ids 1 and 100001 are at the start of their groups, 99000 and
	// 199000 near their ends: the second group gives up after its first
	// update
	twins(t, s, `MERGE INTO %[1]s t USING (SELECT 1 AS id UNION ALL SELECT 99000 UNION ALL SELECT 100001 UNION ALL SELECT 199000) src
		ON t.id = src.id WHEN MATCHED THEN UPDATE SET s = t.s || 'y'`)
	mustExec(t, s, "RESET memory_limit")
	got, want := query(t, s, "SELECT * FROM a ORDER BY id"), query(t, s, "SELECT * FROM b ORDER BY id")
	if !slices.Equal(got, want) {
		t.Fatalf("%d rows with the copy, %d without; they differ", len(got), len(want))
	}
	if got := query(t, s, "SELECT id FROM a WHERE s LIKE '%y' ORDER BY id"); !slices.Equal(got, []string{"1", "99000", "100001", "199000"}) {
		t.Fatalf("updated rows: %v", got)
	}
	if patched := query(t, s, "SELECT summary['skade.patched-row-groups'] FROM a$snapshots ORDER BY committed_at DESC LIMIT 1"); !slices.Equal(patched, []string{"1"}) {
		t.Fatalf("patched row groups %v, want 1: the memory limit no longer stops a patch part way (raise the table or lower the limit)", patched)
	}
}

// A file of another writer that stores DECIMAL(9, 2) as INT32 and
// DECIMAL(18, 2) as INT64 (as Iceberg's Java writer does), with field
// ids: a patch of those columns would be a fixed-length byte array, so
// their row groups are not patched (no patch is even tried) but written
// whole, with the updates; a statement that sets only the DOUBLE column
// patches. MERGE and UPDATE, each against the same values written by
// hand.
func TestRowGroupPatchOfForeignDecimals(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE f (id BIGINT, d9 DECIMAL(9, 2), d18 DECIMAL(18, 2), v DOUBLE)`)
	tbl, err := lk.Table(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	d9, d18 := &arrow.Decimal128Type{Precision: 9, Scale: 2}, &arrow.Decimal128Type{Precision: 18, Scale: 2}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fieldID("1")},
		{Name: "d9", Type: d9, Nullable: true, Metadata: fieldID("2")},
		{Name: "d18", Type: d18, Nullable: true, Metadata: fieldID("3")},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: fieldID("4")}}, nil)
	const n = 20000
	ids, b9, b18, vs := array.NewInt64Builder(memory.DefaultAllocator), array.NewDecimal128Builder(memory.DefaultAllocator, d9),
		array.NewDecimal128Builder(memory.DefaultAllocator, d18), array.NewFloat64Builder(memory.DefaultAllocator)
	for i := range int64(n) {
		ids.Append(i)
		b9.Append(decimal128.FromI64(i))        // i / 100
		b18.Append(decimal128.FromI64(i * 100)) // i
		vs.Append(float64(i))
	}
	addForeignFile(t, tbl, array.NewRecordBatch(sc, []arrow.Array{ids.NewArray(), b9.NewArray(), b18.NewArray(), vs.NewArray()}, n),
		parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(5000), parquet.WithStoreDecimalAsInteger(true)))
	var tried atomic.Int64
	mergeinto.TestHookPatch = func(int64) error { tried.Add(1); return nil }
	defer func() { mergeinto.TestHookPatch = nil }()
	steps := []struct {
		sql, patched string
		tried        bool
	}{
		{`MERGE INTO f USING (SELECT 3001 AS id UNION ALL SELECT 14002) src ON f.id = src.id WHEN MATCHED THEN UPDATE SET d9 = 8.88, d18 = -1`, "0", false},
		// row groups 1 and 3 were copied as they were; 0 and 2 written by
		// skade (as FIXED_LEN_BYTE_ARRAY)
		{`UPDATE f SET d9 = 7.77, d18 = 12345678901234.56 WHERE id = 7001`, "0", false},
		{`UPDATE f SET d9 = 1.23 WHERE id = 12001`, "1", true},
		{`MERGE INTO f USING (SELECT 17005 AS id) src ON f.id = src.id WHEN MATCHED THEN UPDATE SET v = -17005`, "1", true},
	}
	for _, st := range steps {
		tried.Store(0)
		mustExec(t, s, st.sql)
		if got := query(t, s, "SELECT coalesce(summary['skade.patched-row-groups'], '0') FROM f$snapshots ORDER BY committed_at DESC LIMIT 1"); !slices.Equal(got, []string{st.patched}) || (tried.Load() > 0) != st.tried {
			t.Fatalf("%s: %v row groups patched, %d patches tried; want %s", st.sql, got, tried.Load(), st.patched)
		}
	}
	got := query(t, s, "SELECT id, d9, d18, v FROM f WHERE id IN (5, 3001, 7001, 12001, 14002, 17005, 19999) ORDER BY id")
	want := []string{"5|0.05|5|5", "3001|8.88|-1|3001", "7001|7.77|12345678901234.56|7001", "12001|1.23|12001|12001",
		"14002|8.88|-1|14002", "17005|170.05|17005|-17005", "19999|199.99|19999|19999"}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	// d9: 1999900.00 - 30.01 - 140.02 - 70.01 - 120.01 + 8.88 * 2 + 7.77 + 1.23
	if got := query(t, s, "SELECT count(*), sum(d9), sum(v)::BIGINT FROM f"); !slices.Equal(got, []string{"20000|1999566.71|199955990"}) {
		t.Fatalf("count, sums: %v", got)
	}
}

// A MERGE reads the row groups its keys hit through pqarrow from the
// footer it holds (mergeinto's directread.go), a string column whose
// pages are all dictionary-encoded as its dictionary: on files written
// before columns were added, renamed and widened, with NULLs, a string
// column whose dictionary fell back to plain pages, dates, decimals and
// doubles. Each MERGE (one that patches, one that deletes and so writes
// its groups' rows whole, one that reads the target's own values) leaves
// the rows a twin without row-group copies leaves, which reads through
// iceberg-go's scan.
func TestMergeDirectReads(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	twins(t, s, `CREATE TABLE %[1]s (id BIGINT, n INT, s TEXT, t TEXT, d DATE, dec DECIMAL(10, 2), f DOUBLE)
			WITH ('write.parquet.row-group-limit' = '700', 'write.parquet.dict-size-bytes' = '4000'%[2]s);
		INSERT INTO %[1]s SELECT i, (i * 7) %% 1000, CASE WHEN i %% 9 = 0 THEN NULL ELSE 's' || (i %% 5) END,
			'long text value number ' || i, DATE '2026-01-01' + (i %% 300)::int, (i * 1.25)::DECIMAL(10, 2), CASE WHEN i %% 11 = 0 THEN NULL ELSE i / 4.0 END
			FROM range(0, 6000) r(i);
		ALTER TABLE %[1]s ADD COLUMN x TEXT;
		ALTER TABLE %[1]s RENAME COLUMN s TO s2;
		ALTER TABLE %[1]s ALTER COLUMN n TYPE BIGINT;
		INSERT INTO %[1]s SELECT i, i * 1000000000, 's' || (i %% 3), 't' || i, DATE '2027-01-01', 1.5, i, CASE WHEN i %% 2 = 0 THEN 'x' || (i %% 4) END
			FROM range(6000, 9000) r(i)`)
	same := func(what string) {
		t.Helper()
		got, want := query(t, s, "SELECT * FROM a ORDER BY id"), query(t, s, "SELECT * FROM b ORDER BY id")
		if len(want) < 8000 || !slices.Equal(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Logf("first difference: %s against %s", got[i], want[i])
					break
				}
			}
			t.Fatalf("%s: %d rows with direct reads, %d without; they differ", what, len(got), len(want))
		}
	}
	// keys every 13th id, and new ones
	const src = `(SELECT i * 13 AS id, 'new' || (i %% 4) AS s, i AS k FROM range(0, 720) r(i) UNION ALL SELECT 20000 + i, NULL, i FROM range(5) r(i)) src`
	twins(t, s, `MERGE INTO %[1]s t USING `+src+` ON t.id = src.id
		WHEN MATCHED THEN UPDATE SET s2 = src.s, x = 'm' || src.k
		WHEN NOT MATCHED THEN INSERT (id, s2) VALUES (src.id, src.s)`)
	same("patching MERGE")
	if got := query(t, s, "SELECT coalesce(summary['skade.patched-row-groups'], '0') FROM a$snapshots ORDER BY committed_at DESC LIMIT 1"); got[0] == "0" {
		t.Fatal("the MERGE patched no row group")
	}
	twins(t, s, `MERGE INTO %[1]s t USING `+src+` ON t.id = src.id
		WHEN MATCHED AND src.k %% 3 = 0 THEN DELETE
		WHEN MATCHED THEN UPDATE SET f = t.f + 1, t = t.t || '!', dec = t.dec * 2, d = t.d + 1
		WHEN NOT MATCHED THEN INSERT (id, x) VALUES (src.id, 'late')`)
	same("MERGE that deletes")
	twins(t, s, `MERGE INTO %[1]s t USING `+src+` ON t.id = src.id AND t.n %% 2 = 0
		WHEN MATCHED AND t.s2 IS NOT NULL THEN UPDATE SET x = t.s2 || '/' || t.t || '/' || CAST(t.d AS TEXT) || '/' || CAST(t.dec AS TEXT)`)
	same("MERGE that reads the target's values")
	if got := query(t, s, "SELECT count(*) FILTER (WHERE x LIKE '%/%/%'), count(*) FILTER (WHERE t LIKE '%!') FROM a"); strings.HasPrefix(got[0], "0|") || strings.HasSuffix(got[0], "|0") {
		t.Fatalf("the MERGEs changed too little: %v", got)
	}
}

// addForeignFile writes rec as a file of another writer (pqarrow, with
// props) into tbl's data directory and adds it to the table.
func addForeignFile(t *testing.T, tbl *lake.Table, rec arrow.RecordBatch, props *parquet.WriterProperties) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(tbl.Iceberg().Location(), "data", "foreign.parquet")
	writeForeignFile(t, path, rec, props, pqarrow.DefaultWriterProps())
	txn := tbl.Iceberg().NewTransaction()
	if err := txn.AddFiles(ctx, []string{path}, nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// After DROP COLUMN the files written before still hold the column (by
// field id), which iceberg-go's metrics of a row-group copy refuse: every
// copy-on-write MERGE, UPDATE and DELETE that copied or patched such a
// file's row groups failed ("field id 3 (column "s") not found in the
// metrics plan") until the table was rewritten. Such a file is now
// written again without the column. A top-level and a nested column,
// against the twin that never copies.
func TestRowGroupCopyAfterDropColumn(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	twins(t, s, `CREATE TABLE %[1]s (id BIGINT, n INT, s TEXT, st STRUCT(a INTEGER, b VARCHAR), v DOUBLE) WITH ('write.parquet.row-group-limit' = '1000'%[2]s);
		INSERT INTO %[1]s SELECT i, i::int, 's' || i, {'a': i::int, 'b': 'b' || i}, i * 0.5 FROM range(5000) r(i);
		INSERT INTO %[1]s SELECT i, i::int, 's' || i, {'a': i::int, 'b': 'b' || i}, i * 0.5 FROM range(5000, 10000) r(i);
		ALTER TABLE %[1]s DROP COLUMN s;
		ALTER TABLE %[1]s DROP COLUMN st.b`)
	for _, stmt := range []string{
		`MERGE INTO %s t USING (SELECT i * 7 AS id FROM range(300) r(i)) src ON t.id = src.id WHEN MATCHED THEN UPDATE SET v = -t.v`,
		`UPDATE %s SET n = -n WHERE id %% 11 = 0`,
		`DELETE FROM %s WHERE id %% 13 = 0`,
		`MERGE INTO %s t USING (SELECT i * 3 AS id FROM range(100) r(i)) src ON t.id = src.id WHEN MATCHED THEN UPDATE SET v = 0`,
	} {
		mustExec(t, s, fmt.Sprintf(stmt, "a"))
		mustExec(t, s, fmt.Sprintf(stmt, "b"))
		twinsAgree(t, s, stmt, "SELECT * FROM %s ORDER BY id", "SELECT count(*), sum(v), sum(n), sum(st.a) FROM %s WHERE v <= 0")
	}
	// once written again, the files are patched as before: the last
	// MERGE's keys (ids up to 297) lie in one row group
	if got := query(t, s, "SELECT summary['skade.patched-row-groups'] FROM a$snapshots ORDER BY committed_at DESC LIMIT 1"); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("patched row groups of the last MERGE: %v, want 1", got)
	}
}
