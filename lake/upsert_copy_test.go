package lake_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/mergeinto"
)

// An upsert's equality deletes are its data files' key columns, copied
// byte for byte (mergeinto.EqualityDeletesOf). Against its twin that
// writes them from the records (the write before the copies), on tables
// of several row groups, data files and writers, partitioned and not,
// with keys of several types:
//   - both tables hold the same rows after two upserts (the second
//     replacing rows the first wrote), read by skade and by iceberg-go's
//     own scan, which applies the equality deletes itself;
//   - each copied file is one data file's keys: the same key values, the
//     same row count and partition, and the data file's metrics for the
//     key columns;
//   - its entry is an equality delete on the key columns.
func TestUpsertCopiesDataFilesKeys(t *testing.T) {
	defer lake.SetRowsPerDataWriter(700)()
	ctx := context.Background()
	const props = `'format-version' = '2', 'write.parquet.row-group-limit' = '300', 'write.target-file-size-bytes' = '12000', 'read.split.target-size' = '1'`
	cases := []struct {
		name, part string
		keys       []string
	}{
		{name: "bigint key", keys: []string{"id"}},
		{name: "text and timestamp key", keys: []string{"name", "ts"}},
		{name: "bucket partitions", part: "PARTITIONED BY (bucket(3, id))", keys: []string{"id"}},
		{name: "identity partition on a text key", part: "PARTITIONED BY (region)", keys: []string{"region", "id"}},
	}
	// rows from..to: name and ts are unique with id; amount and note
	// have NULLs; region takes three values
	src := func(from, to int, tag string) string {
		return fmt.Sprintf(`SELECT i AS id, 'n' || i::VARCHAR AS name, 'r' || (i %% 3)::VARCHAR AS region,
			CASE WHEN i %% 7 = 0 THEN NULL ELSE i * 0.5 END::DOUBLE AS amount,
			TIMESTAMP '2026-01-01 00:00:00' + i * INTERVAL '1 second' AS ts,
			CASE WHEN i %% 5 = 0 THEN NULL ELSE '%s' END AS note
			FROM range(%d, %d) r(i)`, tag, from, to)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lk := sqlLake(t)
			s := lk.Session()
			for _, name := range []string{"a", "b"} {
				mustExec(t, s, fmt.Sprintf(`CREATE TABLE %s (id BIGINT, name VARCHAR NOT NULL, region VARCHAR, amount DOUBLE, ts TIMESTAMP, note VARCHAR) %s WITH (%s);
					INSERT INTO %s %s`, name, c.part, props, name, src(0, 3000, "old")))
			}
			// upsert returns the data and delete files it added
			upsert := func(name, q string, encode bool) (added, deletes []iceberg.DataFile) {
				t.Helper()
				before := map[string]bool{}
				for _, df := range tableFiles(t, lk, name) {
					before[df.FilePath()] = true
				}
				for p := range equalityDeletes(t, lk, name) {
					before[p] = true
				}
				tbl, err := lk.Table(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				res, err := s.SQL(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Close()
				defer lake.SetUpsertEncodesKeys(encode)()
				if _, err := tbl.Upsert(ctx, c.keys, res.Reader()); err != nil {
					t.Fatal(err)
				}
				for _, df := range tableFiles(t, lk, name) { // one per split
					if !before[df.FilePath()] {
						added = append(added, df)
						before[df.FilePath()] = true
					}
				}
				for p, d := range equalityDeletes(t, lk, name) {
					if !before[p] {
						deletes = append(deletes, d)
					}
				}
				return added, deletes
			}
			for round, q := range []string{src(1500, 4500, "up1"), src(3500, 5200, "up2")} {
				added, copies := upsert("a", q, false)
				_, written := upsert("b", q, true)
				if len(added) < 2 {
					t.Fatalf("round %d: the upsert wrote %d data files; the test wants several", round, len(added))
				}
				if slices.ContainsFunc(written, func(d iceberg.DataFile) bool { return strings.HasSuffix(d.FilePath(), "-eqdeletes.parquet") }) {
					t.Fatalf("round %d: the twin that writes its deletes copied them", round)
				}
				copiesAreKeysOf(t, s, lk, "a", added, copies, c.keys)
			}
			all := "SELECT id, name, region, amount, ts, note FROM %s ORDER BY id"
			got, want := query(t, s, fmt.Sprintf(all, "a")), query(t, s, fmt.Sprintf(all, "b"))
			if len(got) != 5200 || !slices.Equal(got, want) {
				t.Fatalf("copied deletes: %d rows, written deletes: %d rows; first difference %s", len(got), len(want), firstDiff(got, want))
			}
			if n := query(t, s, "SELECT count(*) FILTER (WHERE note = 'up2'), count(*) FILTER (WHERE note = 'up1'), count(*) FILTER (WHERE note = 'old') FROM a"); n[0] != "1360|1600|1200" {
				// ids 3500-5199, 1500-3499 and 0-1499; one row in five has
				// a NULL note
				t.Errorf("rows by upsert %v, want 1360|1600|1200", n)
			}
			tbl, err := lk.Table(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			fields := []string{"id", "name", "region", "amount", "ts", "note"}
			independent := icebergGoRows(t, tbl.Iceberg(), fields)
			mine := skadeRows(t, s, "a", fields)
			if !slices.Equal(independent, mine) {
				t.Fatalf("iceberg-go reads %d rows, skade %d; first difference %s", len(independent), len(mine), firstDiff(independent, mine))
			}
		})
	}
}

// copiesAreKeysOf checks copies, the equality deletes that the upsert of
// table name wrote with its data files added.
func copiesAreKeysOf(t *testing.T, s *lake.Session, lk *lake.Lake, name string, added, copies []iceberg.DataFile, keys []string) {
	t.Helper()
	ctx := context.Background()
	tbl, err := lk.Table(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	sc := tbl.Iceberg().Schema()
	var keyIDs []int
	for _, k := range keys {
		f, ok := sc.FindFieldByName(k)
		if !ok {
			t.Fatalf("no key column %s", k)
		}
		keyIDs = append(keyIDs, f.ID)
	}
	if len(copies) != len(added) {
		t.Fatalf("%d equality-delete files for %d data files", len(copies), len(added))
	}
	cols := strings.Join(keys, ", ")
	keysOf := func(p string) string {
		return strings.Join(query(t, s, fmt.Sprintf("SELECT %s FROM read_parquet('%s')", cols, p)), ";")
	}
	byKeys := map[string]iceberg.DataFile{}
	for _, df := range added {
		byKeys[keysOf(df.FilePath())] = df
	}
	for _, d := range copies {
		if !strings.HasSuffix(d.FilePath(), "-eqdeletes.parquet") {
			t.Errorf("%s: not a copy", d.FilePath())
		}
		if d.ContentType() != iceberg.EntryContentEqDeletes || !slices.Equal(d.EqualityFieldIDs(), keyIDs) {
			t.Errorf("%s: content %v, equality ids %v, want equality deletes on %v", d.FilePath(), d.ContentType(), d.EqualityFieldIDs(), keyIDs)
		}
		df, ok := byKeys[keysOf(d.FilePath())]
		if !ok {
			t.Errorf("%s: its keys are no added data file's", d.FilePath())
			continue
		}
		delete(byKeys, keysOf(d.FilePath()))
		only := func(m map[int]int64) map[int]int64 {
			out := map[int]int64{}
			for _, id := range keyIDs {
				if v, ok := m[id]; ok {
					out[id] = v
				}
			}
			return out
		}
		onlyB := func(m map[int][]byte) map[int]string {
			out := map[int]string{}
			for _, id := range keyIDs {
				if v, ok := m[id]; ok {
					out[id] = string(v)
				}
			}
			return out
		}
		if d.Count() != df.Count() || !maps.Equal(only(d.ValueCounts()), only(df.ValueCounts())) ||
			!maps.Equal(only(d.NullValueCounts()), only(df.NullValueCounts())) ||
			!maps.Equal(onlyB(d.LowerBoundValues()), onlyB(df.LowerBoundValues())) ||
			!maps.Equal(onlyB(d.UpperBoundValues()), onlyB(df.UpperBoundValues())) ||
			len(d.LowerBoundValues()) != len(keyIDs) || len(d.ValueCounts()) != len(keyIDs) {
			t.Errorf("%s: count %d, values %v, nulls %v, bounds %v..%v; its data file's %d, %v, %v, %v..%v", d.FilePath(),
				d.Count(), d.ValueCounts(), d.NullValueCounts(), d.LowerBoundValues(), d.UpperBoundValues(),
				df.Count(), only(df.ValueCounts()), only(df.NullValueCounts()), onlyB(df.LowerBoundValues()), onlyB(df.UpperBoundValues()))
		}
		if d.SpecID() != df.SpecID() || fmt.Sprint(d.Partition()) != fmt.Sprint(df.Partition()) {
			t.Errorf("%s: partition %v (spec %d), its data file's %v (spec %d)", d.FilePath(), d.Partition(), d.SpecID(), df.Partition(), df.SpecID())
		}
	}
}

// equalityDeletes are the live equality-delete files of table name, by
// path.
func equalityDeletes(t *testing.T, lk *lake.Lake, name string) map[string]iceberg.DataFile {
	t.Helper()
	ctx := context.Background()
	tbl, err := lk.Table(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := tbl.Iceberg().FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := tbl.Iceberg().CurrentSnapshot().Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]iceberg.DataFile{}
	for _, mf := range mfs {
		for e, err := range mf.Entries(fsys, true /* discard deleted */) {
			if err != nil {
				t.Fatal(err)
			}
			if d := e.DataFile(); d.ContentType() == iceberg.EntryContentEqDeletes {
				out[d.FilePath()] = d
			}
		}
	}
	return out
}

// skadeRows is table name's fields, sorted, rendered as icebergGoRows
// renders them.
func skadeRows(t *testing.T, s *lake.Session, name string, fields []string) []string {
	t.Helper()
	out := query(t, s, fmt.Sprintf("SELECT %s FROM %s", strings.Join(fields, ", "), name))
	slices.Sort(out)
	return out
}

// rowStrings renders b's rows as query does.
func rowStrings(b arrow.RecordBatch) []string {
	out := make([]string, b.NumRows())
	for r := range out {
		parts := make([]string, b.NumCols())
		for i, c := range b.Columns() {
			parts[i] = c.ValueStr(r)
		}
		out[r] = strings.Join(parts, "|")
	}
	return out
}

// icebergGoRows reads tbl's fields through iceberg-go's own scan, which
// applies position and equality deletes itself, and renders the rows in
// order.
func icebergGoRows(t *testing.T, tbl *table.Table, fields []string) []string {
	t.Helper()
	sc := tbl.Scan(table.WithSelectedFields(fields...))
	_, seq, err := sc.ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for b, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range fields {
			if b.Schema().Field(i).Name != f {
				t.Fatalf("iceberg-go's column %d is %s, want %s", i, b.Schema().Field(i).Name, f)
			}
		}
		out = append(out, rowStrings(b)...)
		b.Release()
	}
	slices.Sort(out)
	return out
}

// When one data file's keys cannot be copied, the upsert writes all its
// equality deletes from its records, and removes the copies it made of
// the other files' keys: none is committed, none is left on disk.
func TestUpsertKeyCopyFallsBack(t *testing.T) {
	defer lake.SetRowsPerDataWriter(700)()
	ctx := context.Background()
	var asked atomic.Int32
	mergeinto.TestHookKeyCopy = func(string) bool { return asked.Add(1) != 2 }
	defer func() { mergeinto.TestHookKeyCopy = nil }()
	lk, dir := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE a (id BIGINT, v VARCHAR) WITH ('write.parquet.row-group-limit' = '300');
		INSERT INTO a SELECT i, 'old' FROM range(0, 3000) r(i)`)
	tbl, err := lk.Table(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.SQL(ctx, "SELECT i AS id, 'new' AS v FROM range(2000, 5000) r(i)")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if _, err := tbl.Upsert(ctx, []string{"id"}, res.Reader()); err != nil {
		t.Fatal(err)
	}
	if n := asked.Load(); n < 2 {
		t.Fatalf("%d data files' keys were offered for copying; the test wants at least 2", n)
	}
	deletes := equalityDeletes(t, lk, "a")
	if len(deletes) == 0 {
		t.Fatal("no equality deletes committed")
	}
	for p := range deletes {
		if strings.HasSuffix(p, "-eqdeletes.parquet") {
			t.Errorf("a copy was committed: %s", p)
		}
	}
	for f := range allFiles(t, dir) {
		if strings.HasSuffix(f, "-eqdeletes.parquet") {
			t.Errorf("a copy was left: %s", f)
		}
	}
	if got := query(t, s, "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE v = 'new') FROM a"); !slices.Equal(got, []string{"5000|5000|3000"}) {
		t.Errorf("after the upsert: %v, want 5000|5000|3000", got)
	}
}
