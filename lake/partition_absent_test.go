package lake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/scan"
)

// hiveFile writes a Parquet file of rows ids (v = id / 2) without the
// partition column region, as a table migrated from Hive lays it out
// (region=<value>/…), in several row groups; withIDs says whether its
// columns carry field ids (Spark's Hive files do not: a name mapping
// gives them). It returns the data file, its partition tuple region.
func hiveFile(t *testing.T, tbl *lake.Table, region string, ids []int64, withIDs bool, firstRowID int64) iceberg.DataFile {
	t.Helper()
	md := func(n string) arrow.Metadata {
		if !withIDs {
			return arrow.Metadata{}
		}
		return fieldID(n)
	}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: md("1")},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md("2")}}, nil)
	ib, vb := array.NewInt64Builder(memory.DefaultAllocator), array.NewFloat64Builder(memory.DefaultAllocator)
	for _, id := range ids {
		ib.Append(id)
		vb.Append(float64(id) / 2)
	}
	rec := array.NewRecordBatch(sc, []arrow.Array{ib.NewArray(), vb.NewArray()}, int64(len(ids)))
	defer rec.Release()
	path := filepath.Join(tbl.Iceberg().Location(), "data", "region="+region, fmt.Sprintf("part-%d.parquet", ids[0]))
	size := writeForeignFile(t, path, rec, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(250)), pqarrow.DefaultWriterProps())
	spec := tbl.Iceberg().Metadata().PartitionSpec()
	var pid int
	for _, pf := range spec.Fields() {
		pid = pf.FieldID
	}
	return migratedDataFile(t, tbl, path, map[int]any{pid: region}, int64(len(ids)), size, firstRowID)
}

// TestPartitionColumnsAbsentFromFiles: a data file need not hold the
// column its partition tuple gives by identity (a table migrated from
// Hive); the spec says a reader returns the partition value. Reads, every
// write that rewrites such a file (both modes, v2 and v3), and compaction
// must keep the rows' partition column, checked against a model.
func TestPartitionColumnsAbsentFromFiles(t *testing.T) {
	for _, version := range []string{"2", "3"} {
		for _, mode := range []string{"copy-on-write", "merge-on-read"} {
			t.Run("v"+version+"/"+mode, func(t *testing.T) {
				testPartitionColumnsAbsent(t, version, mode)
			})
		}
	}
}

type hiveRow struct {
	v      float64
	region string
}

func testPartitionColumnsAbsent(t *testing.T, version, mode string) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, fmt.Sprintf(`CREATE TABLE h (id BIGINT, v DOUBLE, region VARCHAR) PARTITIONED BY (region) WITH ('format-version' = '%s',
		'read.split.target-size' = '2048', 'write.parquet.row-group-limit' = '300',
		'write.update.mode' = '%s', 'write.delete.mode' = '%s', 'write.merge.mode' = '%s')`, version, mode, mode, mode))
	model := map[int64]hiveRow{}
	mustExec(t, s, `INSERT INTO h SELECT i, i / 2.0, 'us' FROM generate_series(0, 999) g(i)`)
	for i := int64(0); i < 1000; i++ {
		model[i] = hiveRow{float64(i) / 2, "us"}
	}
	tbl, err := lk.Table(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	// a name mapping for the files without field ids, as a migration sets
	// one
	var mapping []map[string]any
	for _, f := range tbl.Iceberg().Schema().Fields() {
		mapping = append(mapping, map[string]any{"field-id": f.ID, "names": []string{f.Name}})
	}
	nm, _ := json.Marshal(mapping)
	mustExec(t, s, fmt.Sprintf(`ALTER TABLE h SET ('schema.name-mapping.default' = '%s')`, nm))
	if tbl, err = lk.Table(ctx, "h"); err != nil {
		t.Fatal(err)
	}
	var files []iceberg.DataFile
	for _, c := range []struct {
		region string
		from   int64
		n      int
		ids    bool
	}{{"eu", 1000, 1200, true}, {"eu", 2200, 800, false}, {"apac", 3000, 1000, false}} {
		ids := make([]int64, c.n)
		for i := range ids {
			ids[i] = c.from + int64(i)
			model[ids[i]] = hiveRow{float64(ids[i]) / 2, c.region}
		}
		next := tbl.Iceberg().Metadata().NextRowID()
		for _, f := range files {
			next += f.Count()
		}
		files = append(files, hiveFile(t, tbl, c.region, ids, c.ids, next))
	}
	commitDataFiles(t, tbl, files...)
	check := func(step string) {
		t.Helper()
		var want []string
		counts := map[string]int{}
		for id, r := range model {
			want = append(want, fmt.Sprintf("%d|%g|%s", id, r.v, r.region))
			counts[r.region]++
		}
		sort.Slice(want, func(i, j int) bool {
			var a, b int64
			fmt.Sscanf(want[i], "%d", &a)
			fmt.Sscanf(want[j], "%d", &b)
			return a < b
		})
		if got := query(t, s, "SELECT id, v, region FROM h ORDER BY id"); !slices.Equal(got, want) {
			t.Fatalf("%s: %d rows, want %d; first difference %s", step, len(got), len(want), firstDiff(got, want))
		}
		var wantCounts []string
		for _, r := range []string{"apac", "eu", "us"} {
			if counts[r] > 0 {
				wantCounts = append(wantCounts, fmt.Sprintf("%s|%d", r, counts[r]))
			}
		}
		if got := query(t, s, "SELECT region, count(*) FROM h GROUP BY region ORDER BY region"); !slices.Equal(got, wantCounts) {
			t.Fatalf("%s: counts by region %v, want %v", step, got, wantCounts)
		}
		// the partition column alone, filtered on
		if got := query(t, s, "SELECT count(*) FROM h WHERE region = 'eu'"); !slices.Equal(got, []string{fmt.Sprint(counts["eu"])}) {
			t.Fatalf("%s: eu rows %v, want %d", step, got, counts["eu"])
		}
		// the Go API's scan
		cur, err := lk.Table(ctx, "h")
		if err != nil {
			t.Fatal(err)
		}
		rdr, err := cur.Scan(ctx, lake.Columns("region"))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for rdr.Next() {
			col := rdr.RecordBatch().Column(0)
			for i := range col.Len() {
				if col.IsNull(i) {
					got["NULL"]++
				} else {
					got[col.ValueStr(i)]++
				}
			}
		}
		if err := rdr.Err(); err != nil {
			t.Fatal(err)
		}
		rdr.Release()
		for r, n := range counts {
			if n == 0 {
				delete(counts, r)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(counts) {
			t.Fatalf("%s: Table.Scan counts by region %v, want %v", step, got, counts)
		}
		if rdr, err = cur.Scan(ctx, lake.Columns("region", "id"), lake.Limit(1500)); err != nil {
			t.Fatal(err)
		}
		n := 0
		for rdr.Next() {
			b := rdr.RecordBatch()
			n += int(b.NumRows())
			ic, rc := b.Schema().FieldIndices("id"), b.Schema().FieldIndices("region")
			if len(ic) != 1 || len(rc) != 1 {
				t.Fatalf("%s: Table.Scan's columns %s", step, b.Schema())
			}
			for i := range int(b.NumRows()) {
				id := b.Column(ic[0]).(*array.Int64).Value(i)
				if r := b.Column(rc[0]).ValueStr(i); r != model[id].region {
					t.Fatalf("%s: Table.Scan: id %d in %q, want %q", step, id, r, model[id].region)
				}
			}
		}
		if err := rdr.Err(); err != nil {
			t.Fatal(err)
		}
		rdr.Release()
		if n != 1500 {
			t.Fatalf("%s: Table.Scan with Limit(1500) gave %d rows", step, n)
		}
	}
	check("added")

	// half of one file's row groups: the others are copied as they are
	mustExec(t, s, `UPDATE h SET v = v + 1 WHERE id % 7 = 0 AND id BETWEEN 1000 AND 1499`)
	for id, r := range model {
		if id%7 == 0 && id >= 1000 && id <= 1499 {
			r.v++
			model[id] = r
		}
	}
	check("update")

	// update-only MERGE (row-group patches of the foreign files)
	mustExec(t, s, `MERGE INTO h USING (SELECT i AS id FROM generate_series(2200, 3499, 13) g(i)) src ON h.id = src.id
		WHEN MATCHED THEN UPDATE SET v = -1`)
	for id := int64(2200); id <= 3499; id += 13 {
		r := model[id]
		r.v = -1
		model[id] = r
	}
	check("update-only merge")

	mustExec(t, s, `MERGE INTO h USING (SELECT i AS id, i % 3 = 0 AS del FROM generate_series(1000, 4100, 5) g(i)) src ON h.id = src.id
		WHEN MATCHED AND src.del THEN DELETE
		WHEN MATCHED THEN UPDATE SET v = 7
		WHEN NOT MATCHED THEN INSERT VALUES (src.id, 0.5, 'eu')`)
	for id := int64(1000); id <= 4100; id += 5 {
		r, ok := model[id]
		switch {
		case ok && id%3 == 0:
			delete(model, id)
		case ok:
			r.v = 7
			model[id] = r
		default:
			model[id] = hiveRow{0.5, "eu"}
		}
	}
	check("merge")

	mustExec(t, s, `DELETE FROM h WHERE id % 11 = 0 AND id BETWEEN 500 AND 3500`)
	for id := range model {
		if id%11 == 0 && id >= 500 && id <= 3500 {
			delete(model, id)
		}
	}
	check("delete")

	mustExec(t, s, `ALTER TABLE h EXECUTE compact`)
	check("compact")
}

// TestPartitionColumnsOfOwnFilesCostNoFooter: telling whether a file
// holds its identity partition column reads no footer for files skade
// wrote (their column statistics say so).
func TestPartitionColumnsOfOwnFilesCostNoFooter(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	var reads atomic.Int64
	scan.TestHookFooterRead = func(string) { reads.Add(1) }
	defer func() { scan.TestHookFooterRead = nil }()
	mustExec(t, s, `CREATE TABLE p (id BIGINT, v DOUBLE, region VARCHAR, day DATE) PARTITIONED BY (region, day) WITH ('write.parquet.row-group-limit' = '100')`)
	mustExec(t, s, `INSERT INTO p SELECT i, i, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END, DATE '2026-01-01' + (i % 3)::INT FROM generate_series(1, 1000) g(i)`)
	mustExec(t, s, `UPDATE p SET v = 0 WHERE id % 10 = 0`)
	mustExec(t, s, `MERGE INTO p USING (SELECT 5 AS id) src ON p.id = src.id WHEN MATCHED THEN UPDATE SET v = 1`)
	mustExec(t, s, `ALTER TABLE p EXECUTE compact`)
	if got := query(t, s, "SELECT region, day, count(*) FROM p GROUP BY ALL ORDER BY 1, 2"); len(got) != 6 || got[0] != "a|2026-01-01|166" {
		t.Fatalf("groups %v", got)
	}
	if reads.Load() != 0 {
		t.Fatalf("%d footers read to find partition columns", reads.Load())
	}
}

// firstDiff describes where got and want first differ.
func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("at %d: %s, want %s", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(got), len(want))
}

// TestPartitionColumnsAbsentWithEqualityDeletes: equality deletes keyed on
// the partition column (as Flink's upserts into a partitioned table must
// be) reach the rows of files that lack the column: reads, copy-on-write
// rewrites and compaction must not bring the deleted rows back.
func TestPartitionColumnsAbsentWithEqualityDeletes(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE h (id BIGINT, v DOUBLE, region VARCHAR) PARTITIONED BY (region)
		WITH ('write.merge.mode' = 'copy-on-write', 'write.update.mode' = 'copy-on-write', 'write.delete.mode' = 'copy-on-write')`)
	tbl, err := lk.Table(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	// two files: the MERGE below rewrites the first, compaction the second
	ids := make([]int64, 1000)
	for i := range ids {
		ids[i] = int64(i)
	}
	more := make([]int64, 1000)
	for i := range more {
		more[i] = int64(1000 + i)
	}
	commitDataFiles(t, tbl, hiveFile(t, tbl, "eu", ids, true, 0), hiveFile(t, tbl, "eu", more, true, 0))
	if tbl, err = lk.Table(ctx, "h"); err != nil {
		t.Fatal(err)
	}
	// delete ids 0, 10, 20, … of eu (and an id of another partition)
	kb, rb := array.NewInt64Builder(memory.DefaultAllocator), array.NewStringBuilder(memory.DefaultAllocator)
	for i := int64(0); i < 2000; i += 10 {
		kb.Append(i)
		rb.Append("eu")
	}
	kb.Append(5)
	rb.Append("us")
	keys := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "region", Type: arrow.BinaryTypes.String, Nullable: true}}, nil),
		[]arrow.Array{kb.NewArray(), rb.NewArray()}, 201)
	rdr, err := array.NewRecordReader(keys.Schema(), []arrow.RecordBatch{keys})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.DeleteEquality(ctx, []string{"id", "region"}, rdr); err != nil {
		t.Fatal(err)
	}
	want := func(step string, n int, sum string) {
		t.Helper()
		if got := query(t, s, "SELECT count(*), sum(id), count(*) FILTER (WHERE id % 10 = 0) FROM h WHERE region = 'eu'"); !slices.Equal(got, []string{fmt.Sprintf("%d|%s|0", n, sum)}) {
			t.Fatalf("%s: count, sum, deleted rows back: %v, want %d|%s|0", step, got, n, sum)
		}
	}
	// 1999000 - (0 + 10 + … + 1990)
	want("deleted", 1800, "1800000")
	mustExec(t, s, `MERGE INTO h USING (SELECT 3 AS id) src ON h.id = src.id WHEN MATCHED THEN UPDATE SET v = -1`)
	want("merge", 1800, "1800000")
	cur, err := lk.Table(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT count(*) FROM h$files WHERE content = 0"); !slices.Equal(got, []string{"2"}) {
		t.Fatalf("data files after the MERGE: %v, want the rewrite and the untouched file", got)
	}
	// the Go API's scan reads the untouched file with its deletes
	sc, err := cur.Scan(ctx, lake.Columns("id"))
	if err != nil {
		t.Fatal(err)
	}
	var n, dead int
	for sc.Next() {
		col := sc.RecordBatch().Column(0).(*array.Int64)
		for i := range col.Len() {
			n++
			if col.Value(i)%10 == 0 {
				dead++
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	sc.Release()
	if n != 1800 || dead != 0 {
		t.Fatalf("Table.Scan: %d rows, %d deleted ones; want 1800, 0", n, dead)
	}
	mustExec(t, s, `ALTER TABLE h EXECUTE compact`)
	want("compact", 1800, "1800000")
}
