package lake_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/lake"
	skscan "github.com/skadedb/skade/scan"
)

// TestSQLWriteModesAgree runs random sequences of INSERT, UPDATE, DELETE,
// MERGE and Upsert (equality deletes) on two copies of a small table: one
// copy-on-write, one with write.merge.mode, write.update.mode and
// write.delete.mode set to merge-on-read (every third sequence on format
// version 3, which writes deletion vectors; every fourth partitioned). Statement counts and table
// contents must agree after every step and after compacting the
// merge-on-read table; the
// merge-on-read table must then hold no delete file, and time travel must
// read every merge-on-read snapshot as it was committed.
//
// Every other sequence gives both tables a row group every 2 rows and a
// scan split per row group, so that the rewrites and position deletes run
// on multi-split files. -long runs 200 sequences instead of 60.
func TestSQLWriteModesAgree(t *testing.T) {
	sequences, steps := 60, 3
	if *longTests {
		sequences = 200
	}
	if testing.Short() {
		sequences = 30
	}
	outcomes := runWriteModeSequences(t, 0, sequences, steps)
	for _, k := range []string{"update", "delete", "merge", "upsert", "insert", "v3", "partitioned", "changed", "split", "truncate"} {
		if outcomes[k] < sequences/10 {
			t.Fatalf("the generator is lopsided: %v", outcomes)
		}
	}
}

// TestSQLWriteModesLong runs fewer, longer sequences of the same kind:
// twelve statements each, so that data files collect deletes from many
// statements, and a statement changes files with earlier deletes and
// files without together (merge-on-read on format version 2 then folds
// the earlier position delete files in one snapshot or two;
// oneScopedDeleteFile checks after every step).
func TestSQLWriteModesLong(t *testing.T) {
	sequences := 12
	if *longTests {
		sequences = 48
	}
	outcomes := runWriteModeSequences(t, 1000, sequences, 12)
	if outcomes["two-snapshot fold"] == 0 || outcomes["one-snapshot fold"] == 0 {
		t.Fatalf("no statement folded position deletes in one snapshot, or none in two: %v", outcomes)
	}
}

// runWriteModeSequences runs sequences first, first+1, … in parallel on
// one lake, steps statements each, and returns what they did.
func runWriteModeSequences(t *testing.T, first, sequences, steps int) map[string]int {
	ctx := context.Background()
	lk := sqlLake(t)
	var mu sync.Mutex
	outcomes := map[string]int{}
	count := func(k string) {
		mu.Lock()
		outcomes[k]++
		mu.Unlock()
	}
	t.Run("seq", func(t *testing.T) {
		for seq := first; seq < first+sequences; seq++ {
			t.Run(strconv.Itoa(seq), func(t *testing.T) {
				t.Parallel()
				writeModesSequence(t, ctx, lk, seq, steps, count)
			})
		}
	})
	t.Logf("%d sequences: %v", sequences, outcomes)
	return outcomes
}

func writeModesSequence(t *testing.T, ctx context.Context, lk *lake.Lake, seq, steps int, count func(string)) {
	r := rand.New(rand.NewPCG(2026, uint64(seq)))
	sess := lk.Session()
	cow, mor := fmt.Sprintf("c%d", seq), fmt.Sprintf("m%d", seq)
	props := "'write.merge.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.delete.mode' = 'merge-on-read'"
	v3 := seq%3 == 2
	if v3 {
		props += ", 'format-version' = '3'"
		count("v3")
	}
	both2 := ""
	if seq%2 == 1 {
		both2 = " WITH ('write.parquet.row-group-limit' = '2', 'read.split.target-size' = '1')"
		props += ", 'write.parquet.row-group-limit' = '2', 'read.split.target-size' = '1'"
		count("split")
	}
	part, upsertKeys := "", []string{"id"}
	if seq%4 == 1 {
		// An UPDATE may move rows between partitions; an upsert must key
		// on the partition column.
		part, upsertKeys = " PARTITIONED BY (g)", []string{"id", "g"}
		count("partitioned")
	}
	truncated := seq%4 == 3
	if truncated {
		// computed text lands in truncate partitions (once misfiled), and
		// '' partition values (once pruned away); no upserts here, which
		// would have to key on v
		part = " PARTITIONED BY (truncate(1, v))"
		count("truncate")
	}
	mustExec(t, sess, fmt.Sprintf("CREATE TABLE %s (id BIGINT, g BIGINT, v VARCHAR)%s%s; CREATE TABLE %s (id BIGINT, g BIGINT, v VARCHAR)%s WITH (%s)", cow, part, both2, mor, part, props))
	var log []string
	var head int64 // the merge-on-read table's snapshot
	// both runs one statement (written for table $T) on both tables and
	// checks that they report the same result.
	both := func(stmt string) {
		t.Helper()
		log = append(log, stmt)
		var got [2][]string
		var errs [2]error
		for i, name := range []string{cow, mor} {
			res, err := sess.SQL(ctx, strings.ReplaceAll(stmt, "$T", name))
			errs[i] = err
			if err == nil {
				if id := res.Metrics().SnapshotID; i == 1 && id != 0 {
					head = id
				}
				got[i] = rows(t, res, nil)
				slices.Sort(got[i])
			}
		}
		if (errs[0] == nil) != (errs[1] == nil) || !slices.Equal(got[0], got[1]) {
			t.Fatalf("sequence %d: %s\ncopy-on-write: %v %v\nmerge-on-read: %v %v\n%s", seq, stmt, got[0], errs[0], got[1], errs[1], strings.Join(log, "\n"))
		}
		if errs[0] != nil {
			t.Fatalf("sequence %d: %s: %v\n%s", seq, stmt, errs[0], strings.Join(log, "\n"))
		}
	}
	// contents reads both tables in one statement.
	contents := func() (c, m []string) {
		t.Helper()
		for _, row := range query(t, sess, fmt.Sprintf("SELECT 0 AS t, id, g, v FROM %s UNION ALL SELECT 1, id, g, v FROM %s ORDER BY t, id, g, v", cow, mor)) {
			if strings.HasPrefix(row, "0|") {
				c = append(c, row[2:])
			} else {
				m = append(m, row[2:])
			}
		}
		return c, m
	}
	compare := func(what string) []string {
		t.Helper()
		want, got := contents()
		if !slices.Equal(got, want) {
			t.Fatalf("sequence %d %s:\nmerge-on-read %v\ncopy-on-write %v\n%s", seq, what, got, want, strings.Join(log, "\n"))
		}
		return got
	}
	// NULL-heavy, with empty strings: row groups whose NULLs equal their
	// values were once skipped by pushed filters
	val := func() string {
		switch r.IntN(8) {
		case 0, 1, 2:
			return "NULL"
		case 3:
			return "''"
		}
		return fmt.Sprintf("'%c'", 'a'+r.IntN(4))
	}
	next := int64(0)
	insert := func() {
		var vs []string
		for range 1 + r.IntN(6) {
			id := next
			next++
			if r.IntN(6) == 0 && next > 1 {
				id = r.Int64N(next - 1) // a duplicate id
			}
			vs = append(vs, fmt.Sprintf("(%d, %d, %s)", id, r.IntN(4), val()))
		}
		both("INSERT INTO $T VALUES " + strings.Join(vs, ", "))
	}
	for range 1 + r.IntN(2) {
		insert() // one data file each
	}
	pred := func() string {
		k := r.Int64N(next + 2)
		switch r.IntN(8) {
		case 0:
			return fmt.Sprintf("id = %d", k)
		case 1:
			return fmt.Sprintf("id IN (%d, %d, %d)", k, r.Int64N(next+2), r.Int64N(next+2))
		case 2:
			return fmt.Sprintf("g < %d", r.IntN(3))
		case 3:
			return "v IS NULL"
		case 4:
			return fmt.Sprintf("id %% 3 = %d", r.IntN(3))
		case 5:
			return fmt.Sprintf("id IN (SELECT id FROM $T WHERE g = %d)", r.IntN(4))
		case 6:
			// correlated: its join reorders rows, and merge-on-read once
			// took positions from the output order
			return []string{
				"g < (SELECT max(s.g) FROM $T s WHERE s.v = $T.v)",
				"EXISTS (SELECT 1 FROM $T s WHERE s.id = $T.id + 1)",
				fmt.Sprintf("v = ''  OR g = %d", r.IntN(4)),
			}[r.IntN(3)]
		default:
			return fmt.Sprintf("id >= %d", k)
		}
	}
	type seen struct {
		id   int64
		rows []string
	}
	var history []seen
	record := func(rows []string) {
		if head != 0 {
			history = append(history, seen{head, rows})
		}
	}
	record(compare("after the inserts"))
	for range steps {
		op := r.IntN(5)
		if op == 4 && truncated {
			op = 3
		}
		switch op {
		case 0:
			count("insert")
			insert()
		case 1:
			count("update")
			set := []string{"v = coalesce(v, '') || 'u'", "g = g + 1", fmt.Sprintf("v = %s, g = %d", val(), r.IntN(4))}[r.IntN(3)]
			both("UPDATE $T SET " + set + " WHERE " + pred())
		case 2:
			count("delete")
			both("DELETE FROM $T WHERE " + pred())
		case 3:
			count("merge")
			ids := map[int64]bool{}
			var vs []string
			for range 1 + r.IntN(5) {
				id := r.Int64N(next + 3)
				if ids[id] {
					continue
				}
				ids[id] = true
				vs = append(vs, fmt.Sprintf("(CAST(%d AS BIGINT), %s)", id, val()))
			}
			next += 3
			both("MERGE INTO $T USING (VALUES " + strings.Join(vs, ", ") + ") s(id, v) ON $T.id = s.id " +
				"WHEN MATCHED AND s.v IS NULL THEN DELETE WHEN MATCHED THEN UPDATE SET v = s.v, g = $T.g + 10 " +
				"WHEN NOT MATCHED THEN INSERT VALUES (s.id, 7, s.v)")
		case 4:
			count("upsert")
			ids := map[int64]bool{}
			for range 1 + r.IntN(4) {
				ids[r.Int64N(next+2)] = true
			}
			keys := slices.Sorted(func(yield func(int64) bool) {
				for id := range ids {
					if !yield(id) {
						return
					}
				}
			})
			log = append(log, fmt.Sprintf("upsert %v", keys))
			next += 2
			for _, name := range []string{cow, mor} {
				tbl, err := lk.Table(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				rdr := idGVReader(keys, int64(seq%4))
				out, err := tbl.Upsert(ctx, upsertKeys, rdr)
				rdr.Release()
				if v3 && name == mor {
					// refused on v3 (it would lose row lineage): the
					// same change as a DELETE and an INSERT
					if !errors.Is(err, lake.ErrNotImplemented) {
						t.Fatalf("sequence %d: upsert into a v3 table: %v, want it refused", seq, err)
					}
					var in, vals []string
					for _, k := range keys {
						in = append(in, fmt.Sprint(k))
						vals = append(vals, fmt.Sprintf("(%d, %d, 'up')", k, seq%4))
					}
					where := "id IN (" + strings.Join(in, ", ") + ")"
					if len(upsertKeys) == 2 {
						where += fmt.Sprintf(" AND g = %d", seq%4)
					}
					mustExec(t, sess, fmt.Sprintf("DELETE FROM %s WHERE %s", mor, where))
					res, err := sess.SQL(ctx, fmt.Sprintf("INSERT INTO %s VALUES %s", mor, strings.Join(vals, ", ")))
					if err != nil {
						t.Fatal(err)
					}
					head = res.Metrics().SnapshotID
					res.Close()
					continue
				}
				if err != nil {
					t.Fatalf("sequence %d: upsert: %v\n%s", seq, err, strings.Join(log, "\n"))
				}
				if name == mor {
					head = out.Snapshot().ID
				}
			}
		}
		record(compare("after " + log[len(log)-1]))
		if !v3 {
			oneScopedDeleteFile(t, lk, mor, func() string { return fmt.Sprintf("sequence %d\n%s", seq, strings.Join(log, "\n")) })
			countFolds(t, ctx, lk, mor, count)
		}
	}
	if n := len(query(t, sess, fmt.Sprintf("SELECT 1 FROM %s$files WHERE content <> 0", mor))); n > 0 {
		count("changed")
	}
	// Filtered counts against the rows themselves, on both tables: pruning
	// may skip only what cannot match (both modes share the scan, so the
	// differential alone would not see a pruning bug).
	final, _ := contents()
	for _, f := range []struct {
		sql  string
		keep func(g, v string) bool
	}{
		{"v = 'a'", func(_, v string) bool { return v == "a" }},
		{"v = ''", func(_, v string) bool { return v == "" }},
		{"v IS NULL", func(_, v string) bool { return v == "(null)" }},
		{"v IS NOT NULL AND v < 'c'", func(_, v string) bool { return v != "(null)" && v < "c" }},
		{"g = 1", func(g, _ string) bool { return g == "1" }},
	} {
		want := 0
		for _, row := range final {
			parts := strings.SplitN(row, "|", 3)
			if f.keep(parts[1], parts[2]) {
				want++
			}
		}
		for _, name := range []string{cow, mor} {
			if got := query(t, sess, fmt.Sprintf("SELECT count(*) FROM %s WHERE %s", name, f.sql)); !slices.Equal(got, []string{fmt.Sprint(want)}) {
				t.Fatalf("sequence %d: %s WHERE %s counts %v, the rows say %d\n%s", seq, name, f.sql, got, want, strings.Join(log, "\n"))
			}
		}
	}
	// The copy-on-write table is the oracle; compacting it too would only
	// cost time.
	mustExec(t, sess, fmt.Sprintf("ALTER TABLE %s EXECUTE compact", mor))
	compare("after compaction")
	if got := query(t, sess, fmt.Sprintf("SELECT count(*) FROM %s$files WHERE content <> 0", mor)); !slices.Equal(got, []string{"0"}) {
		t.Fatalf("sequence %d: %v delete files after compaction\n%s", seq, got, strings.Join(log, "\n"))
	}
	// Time travel: every recorded snapshot, in one statement.
	var parts []string
	for i, h := range history {
		parts = append(parts, fmt.Sprintf("SELECT %d AS s, id, g, v FROM %s FOR VERSION AS OF %d", i, mor, h.id))
	}
	if len(parts) == 0 {
		return
	}
	got := make([][]string, len(history))
	for _, row := range query(t, sess, strings.Join(parts, " UNION ALL ")+" ORDER BY s, id, g, v") {
		i, rest, _ := strings.Cut(row, "|")
		n, err := strconv.Atoi(i)
		if err != nil {
			t.Fatal(err)
		}
		got[n] = append(got[n], rest)
	}
	for i, h := range history {
		if !slices.Equal(got[i], h.rows) {
			t.Fatalf("sequence %d: snapshot %d reads %v, committed %v\n%s", seq, h.id, got[i], h.rows, strings.Join(log, "\n"))
		}
	}
}

// oneScopedDeleteFile checks that no data file of the table carries more
// than one position delete file scoped to it alone: each merge-on-read
// statement's new file holds the earlier ones' positions and removes them
// (mergeinto.PositionDeletes on format version 2).
func oneScopedDeleteFile(t *testing.T, lk *lake.Lake, name string, log func() string) {
	t.Helper()
	for _, task := range tableTasks(t, lk, name) {
		n := 0
		for _, df := range task.DeleteFiles {
			if skscan.OnlyDataFile(df) == task.File.FilePath() {
				n++
			}
		}
		if n > 1 {
			t.Fatalf("%s: data file %s carries %d file-scoped position delete files\n%s", name, task.File.FilePath(), n, log())
		}
	}
}

// countFolds counts how the table's last commit folded position delete
// files: in its one snapshot, or in a second one of its own.
func countFolds(t *testing.T, ctx context.Context, lk *lake.Lake, name string, count func(string)) {
	t.Helper()
	tbl, err := lk.Table(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	cur := tbl.Iceberg().CurrentSnapshot()
	if cur == nil || cur.Summary == nil || cur.Summary.Properties["skade.folded-position-delete-files"] == "" {
		return
	}
	if cur.Summary.Properties["skade.position-delete-files"] != "" {
		count("one-snapshot fold")
	} else {
		count("two-snapshot fold")
	}
}

var idGVSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "g", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// idGVReader builds rows (id, g, 'up') for the ids.
func idGVReader(ids []int64, g int64) array.RecordReader {
	b := array.NewRecordBuilder(memory.DefaultAllocator, idGVSchema)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.Int64Builder).Append(g)
		b.Field(2).(*array.StringBuilder).Append("up")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(idGVSchema, []arrow.RecordBatch{rec})
	if err != nil {
		panic(err)
	}
	return rdr
}
