package lake_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/scan"
)

// A query's scan without a row filter, of fixed-width columns only,
// reads files without deletes page by page (scan/plainquery.go). Every
// query must return what iceberg-go's scan of the same files returns
// (plain query reads off): v2 and v3, partitioned and not, V1 and V2
// pages, four codecs, pages of 512 bytes in row groups of 300 rows read
// as splits, every fixed-width type with NaN, -0 and extreme values,
// files with NULLs (statistics refuse them), with deletes, with a
// dictionary page, of a promoted column (INT to BIGINT: old files
// refused), and a file another writer made (V1 pages, no metrics).
func TestPlainQueryReads(t *testing.T) {
	ctx := context.Background()
	paged, fell := countPlainReads(t)
	queries := []string{
		"SELECT id, n, x, y, d, ts, tz, tm FROM t ORDER BY id",
		"SELECT count(*), sum(id), sum(n), sum(x), min(y), max(d), min(ts), max(tz), max(tm) FROM t",
		"SELECT x FROM t ORDER BY id",
		"SELECT count(*), sum(x) FROM t",
		"SELECT id, s FROM t ORDER BY id",
		"SELECT sum(id) FROM (SELECT id FROM t LIMIT 1000)",
		// string columns alone (plainstrings.go): dictionary-encoded
		// where the table's dictionaries are on
		"SELECT s, count(*), min(u), max(u), sum(length(u)) FROM t GROUP BY s ORDER BY s",
		"SELECT s, u FROM t",
		// a row filter for pruning: row groups ruled out by their
		// statistics, the rest read page by page, the predicate above
		// the scan dropping what fails it (plainprune.go)
		"SELECT id, x, s FROM t WHERE id BETWEEN 1000 AND 1400 ORDER BY id",
		"SELECT count(*), sum(x) FROM t WHERE d = DATE '2026-01-03'",
		"SELECT count(*), min(id), max(tm) FROM t WHERE ts >= TIMESTAMP '2026-01-01 00:45:00' AND n < 9000",
		"SELECT id FROM t WHERE id IN (5, 2999) OR n IS NULL ORDER BY id",
		"SELECT count(*), min(id), max(id) FROM t WHERE id >= 299 AND id <= 600", // bounds equal to row groups' (300 rows)
		"SELECT count(*), max(n) FROM t WHERE id = 1500 OR tz > TIMESTAMPTZ '2030-01-01 00:00:00+00'",
		"SELECT id, u FROM t WHERE id < 100 ORDER BY id",
		// GROUP BY a string column alone: read as dictionary arrays where
		// its pages are dictionary indices (exec/aggregate_dict.go); u
		// outgrows its dictionary in some files
		"SELECT u, count(*), sum(id), max(x) FROM t GROUP BY u ORDER BY u",
		"SELECT s, count(*), sum(n) FROM t GROUP BY s ORDER BY s",
	}
	stringsOnly := func(q string) bool { return q == queries[6] || q == queries[7] }
	pruned := &atomic.Int64{}
	scan.TestHookPlainPruned = func(rows int64) { pruned.Add(rows) }
	t.Cleanup(func() { scan.TestHookPlainPruned = nil })
	type variant struct {
		version, part, pages, codec string
		dict                        bool
	}
	var variants []variant
	for _, version := range []string{"2", "3"} {
		for _, part := range []string{"", " PARTITIONED BY (bucket(4, id))", " PARTITIONED BY (d)"} {
			variants = append(variants, variant{version, part, "2", "zstd", false})
		}
		variants = append(variants, variant{version, "", "2", "zstd", true})
	}
	for _, pages := range []string{"1", "2"} {
		for _, codec := range []string{"snappy", "gzip", "uncompressed"} {
			variants = append(variants, variant{"2", "", pages, codec, codec == "snappy"})
		}
	}
	variants = append(variants, variant{"2", "", "1", "zstd", false})
	for _, v := range variants {
		what := fmt.Sprintf("v%s%s, pages v%s, %s, dictionaries %v", v.version, v.part, v.pages, v.codec, v.dict)
		lk, _ := openLake(t)
		s := lk.Session()
		mustExec(t, s, fmt.Sprintf(`CREATE TABLE t (id BIGINT, n INT, x DOUBLE, y REAL, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ, tm TIME, s VARCHAR, u VARCHAR)%s
			WITH ('format-version' = '%s', 'write.parquet.row-group-limit' = '300', 'read.split.target-size' = '4096',
				'write.parquet.page-size-bytes' = '512', 'write.parquet.page-version' = '%s', 'write.parquet.compression-codec' = '%s',
				'parquet.enable.dictionary' = '%v', 'write.delete.mode' = 'merge-on-read');
			INSERT INTO t SELECT i, CAST(i * 7 - 9000 AS INT),
				CASE WHEN i = 17 THEN CAST('NaN' AS DOUBLE) WHEN i = 18 THEN -0.0 WHEN i = 19 THEN 1.7976931348623157e308 ELSE i * 1.25 END,
				CAST(i AS REAL) / 3, DATE '2026-01-01' + CAST(i %% 5 AS INT), TIMESTAMP '2026-01-01 00:00:00' + i * INTERVAL '1 second',
				TIMESTAMPTZ '1970-01-01 00:00:00+00' - i * INTERVAL '1 day', TIME '00:00:00' + i * INTERVAL '1 second', 'v' || (i / 64 %% 5),
				CASE WHEN i %% 3 = 0 THEN '' ELSE repeat('ü', CAST(i %% 7 AS INT)) || CAST(i * 31 %% 1400 AS VARCHAR) END
			FROM range(0, 3000) r(i)`, v.part, v.version, v.pages, v.codec, v.dict))
		check := func(round string, wantPaged bool) {
			t.Helper()
			for _, q := range queries {
				scan.TestPlainQueryOff.Store(true)
				paged.Store(0)
				want := query(t, s, q)
				scan.TestPlainQueryOff.Store(false)
				if paged.Load() != 0 {
					t.Fatalf("%s, %s: %s: read page by page with plain query reads off", what, round, q)
				}
				fell.Store(0)
				pruned.Store(0)
				have := query(t, s, q)
				if !slices.Equal(have, want) {
					t.Fatalf("%s, %s: %s:\n%d rows %v\n%d rows through the scan %v", what, round, q, len(have), head(have), len(want), head(want))
				}
				if fell.Load() != 0 {
					t.Fatalf("%s, %s: %s: a row group fell back to pqarrow", what, round, q)
				}
				if wantPaged && (!v.dict || stringsOnly(q)) && paged.Load()+pruned.Load() == 0 {
					t.Fatalf("%s, %s: %s: no row group read page by page", what, round, q)
				}
				if round == "clean" && !v.dict && q == queries[8] && pruned.Load() == 0 {
					t.Fatalf("%s, %s: %s: no row group left unread by its statistics", what, round, q)
				}
			}
		}
		check("clean", true)
		if v.part != "" || v.pages != "2" || v.codec != "zstd" || v.dict {
			continue // the rest once per format version
		}
		// a file with NULLs, one with a dictionary page, one another
		// writer made: each its own commit
		mustExec(t, s, `INSERT INTO t (id, n, x) VALUES (3000, NULL, NULL), (3001, 5, 2.5)`)
		mustExec(t, s, `ALTER TABLE t SET TBLPROPERTIES ('parquet.enable.dictionary' = 'true');
			INSERT INTO t SELECT i, 1, 1.0, 1.0, DATE '2026-01-01', TIMESTAMP '2026-01-01 00:00:00', TIMESTAMPTZ '2026-01-01 00:00:00+00', TIME '01:00:00', 'd'
			FROM range(3100, 3400) r(i)`)
		tbl, err := lk.Table(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		rec := foreignPlainRecord(4000, 500)
		path := filepath.Join(tbl.Iceberg().Location(), "data", "foreign-v1.parquet")
		size := writeForeignFile(t, path, rec, parquet.NewWriterProperties(parquet.WithDataPageVersion(parquet.DataPageV1),
			parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(120),
			parquet.WithDataPageSize(300)), pqarrow.DefaultWriterProps())
		commitDataFiles(t, tbl, migratedDataFile(t, tbl, path, nil, rec.NumRows(), size, 10_000))
		rec.Release()
		check("mixed files", true)
		// deletes (merge-on-read) on some files, then a promotion
		// (the DELETE's position deletes fall on the first file only; the
		// foreign file is still read page by page)
		mustExec(t, s, `ALTER TABLE t SET TBLPROPERTIES ('parquet.enable.dictionary' = 'false');
			DELETE FROM t WHERE id % 97 = 3 AND id < 3000; UPDATE t SET x = x + 1 WHERE id BETWEEN 100 AND 110`)
		check("after deletes", true)
		promote := func() {
			mustExec(t, s, `ALTER TABLE t ALTER COLUMN n TYPE BIGINT; INSERT INTO t (id, n, x) VALUES (5000, 9000000000, 1.0)`)
			check("after a promotion", false)
		}
		if v.version == "3" {
			promote()
			continue // no equality-delete upsert on v3 (row lineage)
		}
		// equality deletes (an upsert): read with their key column
		upsertQuery(t, lk, "t", "SELECT id, n, x + 0.5 AS x, y, d, ts, tz, tm, s, u FROM t WHERE id BETWEEN 500 AND 530")
		check("after an upsert", true)
		promote()
	}
}

// foreignPlainRecord is rows rows of TestPlainQueryReads's fixed-width
// columns and its two string columns, ids from first, as another writer
// writes them (field ids).
func foreignPlainRecord(first int64, rows int) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	f := func(name, id string, typ arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: typ, Nullable: true, Metadata: fieldID(id)}
	}
	sc := arrow.NewSchema([]arrow.Field{
		f("id", "1", arrow.PrimitiveTypes.Int64), f("n", "2", arrow.PrimitiveTypes.Int32), f("x", "3", arrow.PrimitiveTypes.Float64),
		f("y", "4", arrow.PrimitiveTypes.Float32), f("d", "5", arrow.FixedWidthTypes.Date32),
		f("ts", "6", &arrow.TimestampType{Unit: arrow.Microsecond}), f("tz", "7", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}),
		f("tm", "8", arrow.FixedWidthTypes.Time64us), f("s", "9", arrow.BinaryTypes.String), f("u", "10", arrow.BinaryTypes.String)}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := range int64(rows) {
		b.Field(0).(*array.Int64Builder).Append(first + i)
		b.Field(1).(*array.Int32Builder).Append(int32(-i))
		b.Field(2).(*array.Float64Builder).Append(float64(i) / 8)
		b.Field(3).(*array.Float32Builder).Append(float32(i) * 2)
		b.Field(4).(*array.Date32Builder).Append(arrow.Date32(20454 + i%3))
		b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(1_767_225_600_000_000 + i*1000))
		b.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(-i * 1_000_000))
		b.Field(7).(*array.Time64Builder).Append(arrow.Time64(i * 1_000_000))
		b.Field(8).(*array.StringBuilder).Append(fmt.Sprint("f", i%3))
		b.Field(9).(*array.StringBuilder).Append(strings.Repeat("é", int(i%4)) + strconv.FormatInt(i, 10))
	}
	return b.NewRecordBatch()
}

// head is at most the first five of rows, for a failure's message.
func head(rows []string) []string { return rows[:min(len(rows), 5)] }

// TestPlainQueryReadsApplyDeletes: a file whose position and equality
// deletes the scan applies itself is read page by page too, whole and
// in order, its deleted rows dropped: v2 (position deletes, then an
// upsert's equality deletes) and v3 (deletion vectors, which iceberg-go
// applies), row groups of 300 rows, every file of the table carrying
// deletes.
func TestPlainQueryReadsApplyDeletes(t *testing.T) {
	paged, _ := countPlainReads(t)
	for _, version := range []string{"2", "3"} {
		lk, _ := openLake(t)
		s := lk.Session()
		mustExec(t, s, fmt.Sprintf(`CREATE TABLE t (id BIGINT, x DOUBLE, ts TIMESTAMP)
			WITH ('format-version' = '%s', 'write.parquet.row-group-limit' = '300', 'write.delete.mode' = 'merge-on-read',
				'write.update.mode' = 'merge-on-read', 'parquet.enable.dictionary' = 'false');
			INSERT INTO t SELECT i, i * 0.5, TIMESTAMP '2026-01-01 00:00:00' + i * INTERVAL '1 minute' FROM range(0, 3000) r(i);
			DELETE FROM t WHERE id %% 7 = 0`, version))
		queries := []string{
			"SELECT count(*), sum(id), sum(x), max(ts) FROM t",
			"SELECT id, x FROM t ORDER BY id",
		}
		check := func(round string) {
			t.Helper()
			for _, q := range queries {
				scan.TestPlainQueryOff.Store(true)
				want := query(t, s, q)
				scan.TestPlainQueryOff.Store(false)
				paged.Store(0)
				have := query(t, s, q)
				if !slices.Equal(have, want) {
					t.Fatalf("v%s, %s: %s:\n%v\nthrough the scan %v", version, round, q, head(have), head(want))
				}
				if version == "2" && paged.Load() == 0 {
					// (v3's deletes are deletion vectors, which iceberg-go
					// applies: read through its scan)
					t.Fatalf("v%s, %s: %s: no row group read page by page", version, round, q)
				}
			}
		}
		check("position deletes")
		if want := []string{"2571"}; !slices.Equal(query(t, s, "SELECT count(*) FROM t"), want) {
			t.Fatalf("v%s: %v rows after the DELETE, want %v", version, query(t, s, "SELECT count(*) FROM t"), want)
		}
		if version == "3" {
			continue
		}
		upsertQuery(t, lk, "t", "SELECT id, -x AS x, ts FROM t WHERE id % 5 = 1")
		check("equality deletes")
		if got := query(t, s, "SELECT count(*) FROM t WHERE x < 0"); !slices.Equal(got, []string{"514"}) {
			t.Fatalf("%v upserted rows, want 514", got)
		}
	}
}

// upsertQuery upserts the rows of query into table by id, through the Go
// API (equality deletes).
func upsertQuery(t *testing.T, lk *lake.Lake, table, query string) {
	t.Helper()
	ctx := context.Background()
	res, err := lk.Session().SQL(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	up, err := res.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, b := range up {
			b.Release()
		}
	}()
	rdr, err := array.NewRecordReader(up[0].Schema(), up)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	tbl, err := lk.Table(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Upsert(ctx, []string{"id"}, rdr); err != nil {
		t.Fatal(err)
	}
}

// TestDictReadAllPlain: a read by dictionary whose row group's rows all
// pass (its dictionary pages settle it) reads the other columns page by
// page when they qualify. Every query must return what iceberg-go's scan
// returns (dictionary reads off): a file all of one status and one of
// mixed row groups, 300-row row groups read as splits, and a file whose
// amount has a NULL (read through pqarrow).
func TestDictReadAllPlain(t *testing.T) {
	paged, _ := countPlainReads(t)
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE t (id BIGINT, status VARCHAR, amount DOUBLE, ts TIMESTAMP)
		WITH ('write.parquet.row-group-limit' = '300', 'read.split.target-size' = '4096',
			'write.parquet.dict-encoding-enabled.column.id' = 'false', 'write.parquet.dict-encoding-enabled.column.amount' = 'false',
			'write.parquet.dict-encoding-enabled.column.ts' = 'false');
		INSERT INTO t SELECT i, 'old', i * 0.25, TIMESTAMP '2026-01-01 00:00:00' + i * INTERVAL '1 second' FROM range(0, 1500) r(i);
		INSERT INTO t SELECT i, CASE WHEN i % 2 = 0 THEN 'old' ELSE 'new' END, i * 0.25,
			TIMESTAMP '2026-01-01 00:00:00' + i * INTERVAL '1 second' FROM range(1500, 3000) r(i);
		INSERT INTO t VALUES (5000, 'old', NULL, NULL), (5001, 'old', 1.5, TIMESTAMP '2026-02-01 00:00:00')`)
	for _, q := range []string{
		"SELECT count(*), sum(amount), max(ts) FROM t WHERE status = 'old'",
		"SELECT id, amount FROM t WHERE status = 'old' ORDER BY id",
		"SELECT id, amount, ts FROM t WHERE status IN ('old', 'new') ORDER BY id",
		"SELECT sum(id) FROM t WHERE status = 'new'",
	} {
		scan.TestDictReadOff.Store(true)
		want := query(t, s, q)
		scan.TestDictReadOff.Store(false)
		scan.TestPlainQueryOff.Store(true)
		paged.Store(0)
		dictOnly := query(t, s, q)
		scan.TestPlainQueryOff.Store(false)
		if paged.Load() != 0 {
			t.Fatalf("%s: read page by page with plain reads off", q)
		}
		have := query(t, s, q)
		if !slices.Equal(have, want) || !slices.Equal(dictOnly, want) {
			t.Fatalf("%s:\n%v\nby dictionary, pqarrow %v\nthrough the scan %v", q, head(have), head(dictOnly), head(want))
		}
		if q != "SELECT sum(id) FROM t WHERE status = 'new'" && paged.Load() == 0 {
			t.Fatalf("%s: no row group read page by page", q)
		}
	}
}

// countPlainReads counts, until the test ends, the row groups read page
// by page (scan.TestHookPlainRead) and those that fell back to pqarrow.
func countPlainReads(t *testing.T) (paged, fell *atomic.Int64) {
	paged, fell = new(atomic.Int64), new(atomic.Int64)
	scan.TestHookPlainRead = func(rows int64) {
		if rows >= 0 {
			paged.Add(1)
		} else {
			fell.Add(1)
		}
	}
	t.Cleanup(func() { scan.TestHookPlainRead = nil })
	return paged, fell
}
