package lake_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

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
			// each predicate also in Go, the oracle: over every row read
			// unfiltered (a NULL is nil)
			type pred func(status, tag *string) bool
			is := func(v *string, want ...string) bool { return v != nil && slices.Contains(want, *v) }
			cmp := func(v *string, f func(string) bool) bool { return v != nil && f(*v) }
			queries := []struct {
				where string
				dict  bool // read by dictionary
				keep  pred
			}{
				{"status = 'active'", true, func(s, _ *string) bool { return is(s, "active") }},
				{"status = 'rare'", true, func(s, _ *string) bool { return is(s, "rare") }},
				{"status = 'nowhere'", true, func(s, _ *string) bool { return false }},
				{"status IN ('closed', 'late')", true, func(s, _ *string) bool { return is(s, "closed", "late") }},
				{"status < 'n'", true, func(s, _ *string) bool { return cmp(s, func(v string) bool { return v < "n" }) }},
				{"status >= 'late' AND status <= 'pending'", true, func(s, _ *string) bool { return cmp(s, func(v string) bool { return v >= "late" && v <= "pending" }) }},
				{"status BETWEEN 'closed' AND 'new'", true, func(s, _ *string) bool { return cmp(s, func(v string) bool { return v >= "closed" && v <= "new" }) }},
				{"status IS NULL", true, func(s, _ *string) bool { return s == nil }},
				{"status IS NOT NULL", true, func(s, _ *string) bool { return s != nil }},
				{"status = 'new' OR status IS NULL", true, func(s, _ *string) bool { return s == nil || is(s, "new") }},
				{"status = 'rare' OR tag = 'x'", true, func(s, g *string) bool { return is(s, "rare") || is(g, "x") }},
				// the AND's first conjunct has no Iceberg form: the scan
				// gets a superset (status = 'active' OR tag = 'x'), never
				// as exact
				{"status = 'active' OR (status IN ('a', NULL) AND tag = 'x')", true, func(s, g *string) bool { return is(s, "active") }},
				{"status = 'pending' AND tag = 'y'", true, func(s, g *string) bool { return is(s, "pending") && is(g, "y") }},
				{"status <> 'active'", true, func(s, _ *string) bool { return s != nil && *s != "active" }},
				{"'active' <> status", true, func(s, _ *string) bool { return s != nil && *s != "active" }},
				{"status NOT IN ('closed', 'late', 'rare')", true, func(s, _ *string) bool { return s != nil && !is(s, "closed", "late", "rare") }},
				{"status NOT IN ('closed', NULL)", false, func(s, _ *string) bool { return false }},
				{"status LIKE 'a%'", true, func(s, _ *string) bool { return s != nil && strings.HasPrefix(*s, "a") }},
				{"status LIKE 'clo%'", true, func(s, _ *string) bool { return s != nil && strings.HasPrefix(*s, "clo") }},
				{"status LIKE '%'", true, func(s, _ *string) bool { return s != nil }},
				{"status LIKE 'c_osed'", false, func(s, _ *string) bool { return is(s, "closed") }},
				{"status LIKE '%ed'", false, func(s, _ *string) bool { return s != nil && strings.HasSuffix(*s, "ed") }},
				{"status NOT LIKE 'a%'", false, func(s, _ *string) bool { return s != nil && !strings.HasPrefix(*s, "a") }},
				{"status = 'active' AND id > 4000", false, nil},
				{"u = 'u17'", false, nil}, // unique strings: no dictionary
				{"amount > 100", false, nil},
			}
			oracle := func(keep pred) []string {
				var out []string
				for _, r := range query(t, s, "SELECT id, status, tag, amount FROM t ORDER BY id") {
					f := strings.Split(r, "|")
					if keep(orNull(f[1]), orNull(f[2])) {
						out = append(out, r)
					}
				}
				return out
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
					if q.keep != nil {
						if o := oracle(q.keep); !slices.Equal(have, o) {
							t.Fatalf("%s, %s: %s: %d rows, the oracle %d", what, round, q.where, len(have), len(o))
						}
						// the string columns only filtered by, not returned
						narrow := query(t, s, "SELECT id, amount FROM t WHERE "+q.where+" ORDER BY id")
						read()
						if len(narrow) != len(have) {
							t.Fatalf("%s, %s: %s: %d rows returning id and amount, %d returning all", what, round, q.where, len(narrow), len(have))
						}
						for i, r := range narrow {
							f := strings.Split(have[i], "|")
							if r != f[0]+"|"+f[3] {
								t.Fatalf("%s, %s: %s: row %d is %s, want %s|%s", what, round, q.where, i, r, f[0], f[3])
							}
						}
					}
					if q.dict && round == "clean" && n.groups == 0 {
						t.Fatalf("%s, %s: %s: no row group read by dictionary", what, round, q.where)
					}
					// (after the clean round, files the UPDATE wrote may hold
					// a small last row group of unique strings in a
					// dictionary, as its writer's batches fall)
					if !q.dict && n.groups != 0 && (round == "clean" || q.where != "u = 'u17'") {
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
			// the conjuncts the scan applies exactly leave no Filter above
			// it, and it returns no column read only for them
			plan := strings.Join(query(t, s, "EXPLAIN SELECT id, amount FROM t WHERE status IN ('a', 'b') AND amount > 1"), "\n")
			if !strings.Contains(plan, "exact=") || !strings.Contains(plan, "reading [status]") || strings.Contains(plan, "Filter (t.status") || !strings.Contains(plan, "Filter (t.amount") {
				t.Fatalf("%s: the plan:\n%s", what, plan)
			}
			plan = strings.Join(query(t, s, "EXPLAIN SELECT id FROM t WHERE status LIKE '%a'"), "\n")
			if strings.Contains(plan, "exact=") || !strings.Contains(plan, "Filter (t.status") {
				t.Fatalf("%s: the plan:\n%s", what, plan)
			}
			// <> and NOT IN: exact for the scan alone, not for pruning
			plan = strings.Join(query(t, s, "EXPLAIN SELECT id FROM t WHERE status <> 'a'"), "\n")
			if !strings.Contains(plan, "exact=") || strings.Contains(plan, "pushed=") || strings.Contains(plan, "Filter (t.status") {
				t.Fatalf("%s: the plan:\n%s", what, plan)
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

// A file of another writer (pqarrow, with field ids): row groups of
// 3,000 rows in pages of about 1 kB, whose status dictionary outgrows a
// 2 kB limit in the later row groups and falls back to plain pages there
// (those groups are read with strings), plus NULLs. Queries read by
// dictionary must return what a Go oracle over every row says, with
// dictionary reads on and off.
func TestDictFilteredReadsOfAnotherWriter(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE t (id BIGINT, status VARCHAR, amount DOUBLE) WITH ('read.split.target-size' = '8192')`)
	tbl, err := lk.Table(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fieldID("1")},
		{Name: "status", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: fieldID("2")},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: fieldID("3")}}, nil)
	const n = 20000
	status := func(i int) *string {
		var v string
		switch {
		case i%17 == 0:
			return nil
		case i >= 12000 && i%2 == 0:
			v = fmt.Sprintf("u%05d", i) // outgrows the dictionary
		default:
			v = []string{"active", "closed", "new"}[i%3]
		}
		return &v
	}
	ib, sb, ab := array.NewInt64Builder(memory.DefaultAllocator), array.NewStringBuilder(memory.DefaultAllocator), array.NewFloat64Builder(memory.DefaultAllocator)
	for i := range n {
		ib.Append(int64(i))
		if v := status(i); v != nil {
			sb.Append(*v)
		} else {
			sb.AppendNull()
		}
		ab.Append(float64(i) / 4)
	}
	rec := array.NewRecordBatch(sc, []arrow.Array{ib.NewArray(), sb.NewArray(), ab.NewArray()}, n)
	defer rec.Release()
	path := filepath.Join(tbl.Iceberg().Location(), "data", "other.parquet")
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(3000), parquet.WithDataPageSize(1024),
		parquet.WithDictionaryPageSizeLimit(2048), parquet.WithCompression(compress.Codecs.Snappy))
	size := writeForeignFile(t, path, rec, props, pqarrow.DefaultWriterProps())
	commitDataFiles(t, tbl, migratedDataFile(t, tbl, path, nil, n, size, 0))
	// the premise: some row groups' status chunks are dictionary-encoded
	// throughout, some fell back to plain pages
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	var dict, plain int
	for g := range pf.NumRowGroups() {
		if scan.AllDictPages(pf.MetaData(), 1, []int{g}) {
			dict++
		} else {
			plain++
		}
	}
	pf.Close()
	if dict == 0 || plain == 0 {
		t.Fatalf("%d row groups dictionary-encoded, %d not", dict, plain)
	}

	var groups atomic.Int64
	scan.TestHookDictRead = func(int64, int64, bool) { groups.Add(1) }
	defer func() { scan.TestHookDictRead = nil }()
	for _, q := range []struct {
		where string
		keep  func(v *string) bool
	}{
		{"status = 'active'", func(v *string) bool { return v != nil && *v == "active" }},
		{"status IN ('new', 'u14000')", func(v *string) bool { return v != nil && (*v == "new" || *v == "u14000") }},
		{"status <> 'closed'", func(v *string) bool { return v != nil && *v != "closed" }},
		{"status > 'n'", func(v *string) bool { return v != nil && *v > "n" }},
		{"status IS NULL", func(v *string) bool { return v == nil }},
	} {
		var want []string
		for i := range n {
			if q.keep(status(i)) {
				want = append(want, fmt.Sprintf("%d|%g", i, float64(i)/4))
			}
		}
		for _, off := range []bool{false, true} {
			scan.TestDictReadOff.Store(off)
			groups.Store(0)
			got := query(t, s, "SELECT id, amount FROM t WHERE "+q.where+" ORDER BY id")
			scan.TestDictReadOff.Store(false)
			if !slices.Equal(got, want) {
				t.Fatalf("%s (dictionary reads off %v): %d rows, want %d", q.where, off, len(got), len(want))
			}
			if g := groups.Load(); off != (g == 0) {
				t.Fatalf("%s (dictionary reads off %v): %d row groups read by dictionary", q.where, off, g)
			}
		}
	}
}
