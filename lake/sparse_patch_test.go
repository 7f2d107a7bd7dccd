package lake_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/skadedb/skade/mergeinto"
)

// A MERGE that only updates, whose clauses read none of the columns it
// sets, patches row groups sparse: it reads them without the SET
// columns, holds only the updates, and the patch reads the SET column
// chunks itself; a string column stored as a dictionary is patched as
// indices into it (mergeinto's sparse.go). Each statement runs on a
// table and on a twin that never patches, over files of several row
// groups, and the two must hold the same rows, and answer filters on
// the SET columns (pruned by the patched chunks' statistics) alike.
// Statements that must not go sparse (a condition reads a SET column,
// two UPDATE clauses set different columns) are checked not to.
func TestSparsePatches(t *testing.T) {
	for _, tc := range []struct{ name, part, props string }{
		{"unpartitioned", "", ""},
		{"bucketed", "PARTITIONED BY (bucket(3, id))", ""},
		// data pages v1, which hold their levels inside the compressed
		// body, and small: a patch's pages keep the file's boundaries
		{"v1 pages", "", ", 'write.parquet.page-version' = '1', 'write.parquet.page-size-bytes' = '1024'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lk, _ := openLake(t)
			s := lk.Session()
			twins(t, s, `CREATE TABLE %[1]s (id BIGINT, status TEXT, amount DOUBLE, note TEXT, d DATE) `+tc.part+`
				WITH ('write.parquet.row-group-limit' = '700'`+tc.props+`%[2]s);
				INSERT INTO %[1]s SELECT i, CASE WHEN i %% 11 = 0 THEN NULL WHEN i %% 3 = 0 THEN 'open' ELSE 'old' END,
					i * 1.0, 'note ' || i, DATE '2026-01-01' + (i %% 300)::int FROM range(0, 4000) r(i);
				INSERT INTO %[1]s SELECT i, 'old', i * 1.0, 'note ' || i, DATE '2026-01-01' FROM range(4000, 6000) r(i)`)
			var fixed, dict atomic.Int64
			mergeinto.TestHookFixed = func(int64) { fixed.Add(1) }
			mergeinto.TestHookDictPaged = func(int64) { dict.Add(1) }
			defer func() { mergeinto.TestHookFixed, mergeinto.TestHookDictPaged = nil, nil }()
			sparse := regexp.MustCompile(`patched: (\d+) \((\d+) sparse\)`)
			for _, st := range []struct {
				sql           string
				sparse, fixed bool // patched sparse; a fixed-width column page by page
				dict          int  // a dictionary-encoded column page by page: 0 no, 1 yes, 2 either
			}{
				// a new value into the dictionary, NULLs, a double
				{`MERGE INTO %s t USING (SELECT i * 37 AS id, CASE WHEN i %% 5 = 0 THEN NULL ELSE 'updated' END AS status, -i * 0.5 AS amount FROM range(160) r(i)) s
					ON t.id = s.id WHEN MATCHED THEN UPDATE SET status = s.status, amount = s.amount`, true, true, 1},
				// a double's NaN and both zeros, for the statistics
				{`MERGE INTO %s t USING (SELECT i * 53 AS id, CASE i %% 3 WHEN 0 THEN 'NaN'::DOUBLE WHEN 1 THEN -0.0 ELSE 0.0 END AS amount FROM range(90) r(i)) s
					ON t.id = s.id WHEN MATCHED THEN UPDATE SET amount = s.amount`, true, true, 0},
				// a NULL into a double without one: not page by page
				{`MERGE INTO %s t USING (SELECT i * 41 AS id FROM range(60) r(i)) s
					ON t.id = s.id WHEN MATCHED THEN UPDATE SET amount = NULL`, true, false, 0},
				// every row of some row groups, and an insert
				{`MERGE INTO %s t USING (SELECT i AS id, 'all' AS status FROM range(1400, 2800) r(i) UNION ALL SELECT 9999, 'new') s
					ON t.id = s.id WHEN MATCHED THEN UPDATE SET status = s.status
					WHEN NOT MATCHED THEN INSERT (id, status) VALUES (s.id, s.status)`, true, false, 1},
				// the empty string: not written from the dictionary
				{`MERGE INTO %s t USING (SELECT i * 101 AS id FROM range(50) r(i)) s
					ON t.id = s.id WHEN MATCHED THEN UPDATE SET status = ''`, true, false, 0},
				// long new values, growing the dictionary (within its
				// limit; TestSparsePatchPastTheDictionaryLimit goes past
				// it); the groups whose dictionary holds the empty string
				// since the statement above are not patched page by page,
				// others may be
				{`MERGE INTO %s t USING (SELECT i * 2 AS id, repeat('z', 400) || i AS status FROM range(3000) r(i)) s
					ON t.id = s.id WHEN MATCHED THEN UPDATE SET status = s.status`, true, false, 2},
				// a date, from a source column
				{`MERGE INTO %s t USING (SELECT i * 13 AS id, DATE '2031-05-05' + i::int AS d FROM range(400) r(i)) s
					ON t.id = s.id WHEN MATCHED AND s.d > DATE '2031-05-10' THEN UPDATE SET d = s.d, note = 'dated'`, true, true, 2},
				// a condition reads a SET column: not sparse
				{`MERGE INTO %s t USING (SELECT i * 7 AS id FROM range(300) r(i)) s
					ON t.id = s.id WHEN MATCHED AND t.status = 'old' THEN UPDATE SET status = 'was old'`, false, false, 0},
				// clauses setting different columns: not sparse
				{`MERGE INTO %s t USING (SELECT i * 19 AS id, i AS k FROM range(300) r(i)) s
					ON t.id = s.id WHEN MATCHED AND s.k %% 2 = 0 THEN UPDATE SET amount = s.k
					WHEN MATCHED THEN UPDATE SET note = 'odd'`, false, false, 0},
			} {
				fixed.Store(0)
				dict.Store(0)
				plan := strings.Join(query(t, s, "EXPLAIN ANALYZE "+fmt.Sprintf(st.sql, "a")), "\n")
				if got := fixed.Load() > 0; got != st.fixed {
					t.Fatalf("%s: %d fixed-width column chunks patched page by page, want them %v", st.sql, fixed.Load(), st.fixed)
				}
				if got := dict.Load() > 0; st.dict != 2 && got != (st.dict == 1) {
					t.Fatalf("%s: %d dictionary-encoded column chunks patched page by page, want them %v", st.sql, dict.Load(), st.dict == 1)
				}
				m := sparse.FindStringSubmatch(plan)
				if st.sparse && (m == nil || m[2] == "0") {
					t.Fatalf("%s: no row group patched sparse:\n%s", st.sql, plan)
				}
				if !st.sparse && m != nil {
					t.Fatalf("%s: row groups patched sparse:\n%s", st.sql, plan)
				}
				mustExec(t, s, fmt.Sprintf(st.sql, "b"))
				twinsAgree(t, s, st.sql,
					"SELECT * FROM %s ORDER BY id",
					"SELECT status, count(*), sum(amount) FROM %s GROUP BY status ORDER BY status",
					"SELECT count(*) FROM %s WHERE status = 'updated' OR status = ''",
					"SELECT count(*) FROM %s WHERE status IS NULL",
					"SELECT count(*), min(status) FROM %s WHERE status > 'zzz'",
					"SELECT count(*), min(amount) FROM %s WHERE amount < 0",
					"SELECT count(*), max(d) FROM %s WHERE d > DATE '2031-01-01'",
					"SELECT count(*) FROM %s WHERE amount = 0",
					"SELECT count(*) FROM %s WHERE amount IS NULL")
			}
			// each copy's metrics against the plain writer's file of its rows
			copies := rgCopies(t, lk, "a")
			if len(copies) == 0 {
				t.Fatal("no row group was copied")
			}
			copiesMatchPlainWriter(t, lk, s, copies, "id BIGINT, status TEXT, amount DOUBLE, note TEXT, d DATE", "id, status, amount, note, d", tc.part)
		})
	}
}

// A sparse patch of a dictionary-encoded string column writes it from
// the file's dictionary: the patched chunks stay dictionary-encoded, and
// their statistics hold the new value.
func TestSparsePatchKeepsTheDictionary(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE t (id BIGINT, status TEXT, amount DOUBLE) WITH ('write.parquet.row-group-limit' = '1000');
		INSERT INTO t SELECT i, 'old', i * 1.0 FROM range(5000) r(i)`)
	var patched, paged atomic.Int64
	mergeinto.TestHookSparse = func(int64) { patched.Add(1) }
	mergeinto.TestHookDictPaged = func(int64) { paged.Add(1) }
	defer func() { mergeinto.TestHookSparse, mergeinto.TestHookDictPaged = nil, nil }()
	mustExec(t, s, `MERGE INTO t USING (SELECT i * 50 AS id, 'updated' AS status, -1.0 AS amount FROM range(100) r(i)) s
		ON t.id = s.id WHEN MATCHED THEN UPDATE SET status = s.status, amount = s.amount`)
	if patched.Load() != 5 || paged.Load() != 5 {
		t.Fatalf("%d row groups patched sparse, %d status chunks page by page, want 5 and 5", patched.Load(), paged.Load())
	}
	paths := query(t, s, "SELECT file_path FROM t$data_files")
	if len(paths) != 1 {
		t.Fatalf("%d data files, want 1", len(paths))
	}
	r, err := file.OpenParquetFile(strings.TrimPrefix(paths[0], "file://"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	md := r.MetaData()
	if md.NumRowGroups() != 5 {
		t.Fatalf("%d row groups, want 5", md.NumRowGroups())
	}
	for g := range md.NumRowGroups() {
		cc, err := md.RowGroup(g).ColumnChunk(1)
		if err != nil {
			t.Fatal(err)
		}
		for _, es := range cc.EncodingStats() {
			if (es.PageType == 0 || es.PageType == 3) && es.Encoding != parquet.Encodings.RLEDict {
				t.Fatalf("row group %d: status has a %v data page", g, es.Encoding)
			}
		}
		st, err := cc.Statistics()
		if err != nil || st == nil || !st.HasMinMax() {
			t.Fatalf("row group %d: status statistics %v (%v)", g, st, err)
		}
		enc, err := st.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if string(enc.Min) != "old" || string(enc.Max) != "updated" {
			t.Fatalf("row group %d: status ranges over [%q, %q], want [old, updated]", g, enc.Min, enc.Max)
		}
	}
	if got := query(t, s, "SELECT count(*), sum(amount) FROM t WHERE status = 'updated'"); got[0] != "100|-100" {
		t.Fatalf("updated rows: %v", got)
	}
	if got := query(t, s, "SELECT count(*) FROM t WHERE status = 'old'"); got[0] != strconv.Itoa(4900) {
		t.Fatalf("rows kept: %v", got)
	}
}

// Sparse patches of a file another writer laid out: Parquet v1 data
// pages of 2 kB, snappy, row groups of 3,000 rows, a dictionary-encoded
// string column and a double, NULLs in both, a PLAIN double and int
// without NULLs (patched page by page), field ids (as Iceberg writers
// store them). Against the twin that never patches.
func TestSparsePatchOfAForeignFile(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	twins(t, s, `CREATE TABLE %[1]s (id BIGINT, status TEXT, amount DOUBLE, price DOUBLE, n INT) WITH ('write.parquet.row-group-limit' = '3000'%[2]s)`)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fieldID("1")},
		{Name: "status", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: fieldID("2")},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: fieldID("3")},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: fieldID("4")},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: fieldID("5")}}, nil)
	const n = 20000
	for _, name := range []string{"a", "b"} {
		ids, sts, ams := array.NewInt64Builder(memory.DefaultAllocator), array.NewStringBuilder(memory.DefaultAllocator), array.NewFloat64Builder(memory.DefaultAllocator)
		prs, ns := array.NewFloat64Builder(memory.DefaultAllocator), array.NewInt32Builder(memory.DefaultAllocator)
		for i := range int64(n) {
			ids.Append(i)
			if i%17 == 0 {
				sts.AppendNull()
			} else {
				sts.Append([]string{"a", "bb", "ccc"}[i%3])
			}
			if i%19 == 0 {
				ams.AppendNull()
			} else {
				ams.Append(float64(i) * 0.25)
			}
			prs.Append(float64(i) / 8)
			ns.Append(int32(i % 1000))
		}
		tbl, err := lk.Table(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		addForeignFile(t, tbl, array.NewRecordBatch(sc, []arrow.Array{ids.NewArray(), sts.NewArray(), ams.NewArray(), prs.NewArray(), ns.NewArray()}, n),
			parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(3000), parquet.WithDataPageVersion(parquet.DataPageV1),
				parquet.WithDataPageSize(2048), parquet.WithCompression(compress.Codecs.Snappy),
				parquet.WithDictionaryFor("price", false), parquet.WithDictionaryFor("n", false)))
	}
	sparse := regexp.MustCompile(`patched: (\d+) \((\d+) sparse\)`)
	var fixed, dict atomic.Int64
	mergeinto.TestHookFixed = func(int64) { fixed.Add(1) }
	mergeinto.TestHookDictPaged = func(int64) { dict.Add(1) }
	defer func() { mergeinto.TestHookFixed, mergeinto.TestHookDictPaged = nil, nil }()
	for _, st := range []struct {
		stmt        string
		fixed, dict bool // a fixed-width column, a dictionary-encoded one patched page by page
	}{
		{`MERGE INTO %s t USING (SELECT i * 7 AS id, CASE WHEN i %% 9 = 0 THEN NULL ELSE 'new' END AS status, -1.5 * i AS amount FROM range(1000) r(i)) s
			ON t.id = s.id WHEN MATCHED THEN UPDATE SET status = s.status, amount = s.amount`, false, true},
		{`MERGE INTO %s t USING (SELECT i * 11 AS id FROM range(500) r(i)) s
			ON t.id = s.id WHEN MATCHED THEN UPDATE SET status = 'bb', amount = NULL`, false, true},
		{`MERGE INTO %s t USING (SELECT i * 13 AS id, -i * 0.75 AS price, (i %% 7)::int - 3 AS n FROM range(1400) r(i)) s
			ON t.id = s.id WHEN MATCHED THEN UPDATE SET price = s.price, n = s.n`, true, false},
	} {
		stmt := st.stmt
		fixed.Store(0)
		dict.Store(0)
		plan := strings.Join(query(t, s, "EXPLAIN ANALYZE "+fmt.Sprintf(stmt, "a")), "\n")
		if got := fixed.Load() > 0; got != st.fixed {
			t.Fatalf("%s: %d fixed-width column chunks patched page by page, want them %v", stmt, fixed.Load(), st.fixed)
		}
		if got := dict.Load() > 0; got != st.dict {
			t.Fatalf("%s: %d dictionary-encoded column chunks patched page by page, want them %v", stmt, dict.Load(), st.dict)
		}
		if m := sparse.FindStringSubmatch(plan); m == nil || m[2] == "0" {
			t.Fatalf("%s: no row group patched sparse:\n%s", stmt, plan)
		}
		mustExec(t, s, fmt.Sprintf(stmt, "b"))
		twinsAgree(t, s, stmt,
			"SELECT * FROM %s ORDER BY id",
			"SELECT status, count(*), sum(amount) FROM %s GROUP BY status ORDER BY status",
			"SELECT count(*) FROM %s WHERE status = 'new'",
			"SELECT count(*), max(amount) FROM %s WHERE amount < 0",
			"SELECT count(*) FROM %s WHERE amount IS NULL",
			"SELECT count(*), min(price), max(n) FROM %s WHERE price < 0 OR n < 0")
	}
}

// A sparse patch whose new strings would grow the file's dictionary past
// the table's limit (half of write.parquet.dict-size-bytes) does not
// write the column from its dictionary, page by page or otherwise; one
// within the limit does. Against the twin that never patches.
func TestSparsePatchPastTheDictionaryLimit(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	twins(t, s, `CREATE TABLE %[1]s (id BIGINT, status TEXT) WITH ('write.parquet.row-group-limit' = '1000', 'write.parquet.dict-size-bytes' = '4096'%[2]s);
		INSERT INTO %[1]s SELECT i, 'old' FROM range(3000) r(i)`)
	var sparse, dict atomic.Int64
	mergeinto.TestHookSparse = func(int64) { sparse.Add(1) }
	mergeinto.TestHookDictPaged = func(int64) { dict.Add(1) }
	defer func() { mergeinto.TestHookSparse, mergeinto.TestHookDictPaged = nil, nil }()
	for _, st := range []struct {
		sql  string
		dict bool
	}{
		// five short new values: within the limit
		{`MERGE INTO %s t USING (SELECT i * 7 + 1 AS id, 'v' || (i %% 5) AS status FROM range(400) r(i)) s
			ON t.id = s.id WHEN MATCHED THEN UPDATE SET status = s.status`, true},
		// about 33 new values of 104 bytes a row group: past 2,048 bytes
		{`MERGE INTO %s t USING (SELECT i * 30 AS id, repeat('x', 100) || i AS status FROM range(100) r(i)) s
			ON t.id = s.id WHEN MATCHED THEN UPDATE SET status = s.status`, false},
	} {
		sparse.Store(0)
		dict.Store(0)
		mustExec(t, s, fmt.Sprintf(st.sql, "a"))
		if sparse.Load() == 0 || (dict.Load() > 0) != st.dict {
			t.Fatalf("%s: %d row groups patched sparse, %d dictionary-encoded chunks page by page; want some sparse, and page by page %v", st.sql, sparse.Load(), dict.Load(), st.dict)
		}
		mustExec(t, s, fmt.Sprintf(st.sql, "b"))
		twinsAgree(t, s, st.sql, "SELECT * FROM %s ORDER BY id", "SELECT status, count(*) FROM %s GROUP BY status ORDER BY status")
	}
}
