package lake_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestMillisecondTimestampsFiltered: a data file another writer made may
// store a timestamp column as TIMESTAMP(MILLIS) (pyarrow's and Spark's
// older defaults, registered with add_files). iceberg-go reads its values
// right but compares its row groups' statistics, in milliseconds, with
// microsecond literals: a filter on the column skipped every row group
// (ts > '2026-01-01 00:10' counted 0 of 400 rows). Such a file is read
// without the filter; skade's own files keep their row-group pruning.
func TestMillisecondTimestampsFiltered(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE x (id BIGINT, ts TIMESTAMP, tz TIMESTAMPTZ) WITH ('write.parquet.row-group-limit' = '300')`)
	tbl, err := lk.Table(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	msType, mszType := &arrow.TimestampType{Unit: arrow.Millisecond}, &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fieldID("1")},
		{Name: "ts", Type: msType, Nullable: true, Metadata: fieldID("2")},
		{Name: "tz", Type: mszType, Nullable: true, Metadata: fieldID("3")}}, nil)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int64) time.Time { return base.Add(time.Duration(i) * 1001 * time.Millisecond) }
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	tb, zb := array.NewTimestampBuilder(memory.DefaultAllocator, msType), array.NewTimestampBuilder(memory.DefaultAllocator, mszType)
	for i := range int64(1000) {
		ib.Append(i)
		tb.Append(arrow.Timestamp(at(i).UnixMilli()))
		zb.Append(arrow.Timestamp(at(i).UnixMilli()))
	}
	rec := array.NewRecordBatch(sc, []arrow.Array{ib.NewArray(), tb.NewArray(), zb.NewArray()}, 1000)
	defer rec.Release()
	path := filepath.Join(tbl.Iceberg().Location(), "data", "millis.parquet")
	size := writeForeignFile(t, path, rec, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(250)), pqarrow.DefaultWriterProps())
	// registered as a migration does, with no column metrics (iceberg-go's
	// AddFiles takes the millisecond statistics as microseconds)
	commitDataFiles(t, tbl, migratedDataFile(t, tbl, path, nil, 1000, size, 0))
	// skade's own rows, ids 1000..1999, the same instants shifted
	mustExec(t, s, `INSERT INTO x SELECT i, TIMESTAMP '2026-01-01 00:00:00' + (i - 1000) * INTERVAL '1001 milliseconds',
		TIMESTAMPTZ '2026-01-01 00:00:00+00' + (i - 1000) * INTERVAL '1001 milliseconds' FROM generate_series(1000, 1999) g(i)`)
	count := func(lo, hi int64) int { // rows of each half with lo <= i < hi
		return int(max(0, min(hi, 1000)-max(lo, 0))) * 2
	}
	// at(i) > '00:10:00' for i >= 600 (600 * 1.001 s = 600.6 s)
	cases := []struct {
		where string
		want  int
	}{
		{"ts > TIMESTAMP '2026-01-01 00:10:00'", count(600, 1000)},
		{"tz > TIMESTAMPTZ '2026-01-01 00:10:00+00'", count(600, 1000)},
		{"ts <= TIMESTAMP '2026-01-01 00:01:00'", count(0, 60)},
		{"ts = TIMESTAMP '2026-01-01 00:00:05.005'", count(5, 6)},
		{"ts BETWEEN TIMESTAMP '2026-01-01 00:05:00' AND TIMESTAMP '2026-01-01 00:06:00'", count(300, 360)},
		{"ts IN (TIMESTAMP '2026-01-01 00:16:39.999', TIMESTAMP '2026-01-01 00:00:00')", count(999, 1000) + count(0, 1)},
	}
	for _, c := range cases {
		if got := query(t, s, "SELECT count(*) FROM x WHERE "+c.where); !slices.Equal(got, []string{fmt.Sprint(c.want)}) {
			t.Errorf("WHERE %s: %v rows, want %d", c.where, got, c.want)
		}
	}
	// a copy-on-write DELETE must not copy the millisecond row groups it
	// keeps: the new file's bounds, which iceberg-go takes from its
	// footer, would be milliseconds read as microseconds, and planning
	// then prunes the file (150 rows of it were lost to the query below)
	mustExec(t, s, "DELETE FROM x WHERE ts >= TIMESTAMP '2026-01-01 00:16:00'") // i >= 960
	if got := query(t, s, "SELECT count(*), min(id), max(id) FROM x WHERE id < 1000"); !slices.Equal(got, []string{"960|0|959"}) {
		t.Fatalf("after DELETE: %v", got)
	}
	if got := query(t, s, "SELECT count(*) FROM x WHERE ts > TIMESTAMP '2026-01-01 00:10:00'"); !slices.Equal(got, []string{fmt.Sprint(2 * 360)}) {
		t.Fatalf("after DELETE: %v rows after 00:10", got)
	}
}

// TestUnreadableTimestampUnits: iceberg-go cannot read a timestamp column
// stored as INT96 (Hive's, Impala's and older Spark's timestamps) or in
// nanoseconds for a microsecond column. The error names the file, the
// column and the way out, and a DELETE without WHERE or a TRUNCATE drops
// such files without reading them (they read every file before).
func TestUnreadableTimestampUnits(t *testing.T) {
	ctx := context.Background()
	nsType := &arrow.TimestampType{Unit: arrow.Nanosecond}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: fieldID("1")},
		{Name: "ts", Type: nsType, Nullable: true, Metadata: fieldID("2")}}, nil)
	ib, tb := array.NewInt64Builder(memory.DefaultAllocator), array.NewTimestampBuilder(memory.DefaultAllocator, nsType)
	for i := range int64(10) {
		ib.Append(i)
		tb.Append(arrow.Timestamp(1767225600_000000000 + i))
	}
	rec := array.NewRecordBatch(sc, []arrow.Array{ib.NewArray(), tb.NewArray()}, 10)
	defer rec.Release()
	for _, c := range []struct {
		name, stored string
		aprops       pqarrow.ArrowWriterProperties
	}{
		{"int96", "INT96", pqarrow.NewArrowWriterProperties(pqarrow.WithDeprecatedInt96Timestamps(true))},
		{"nanos", "TIMESTAMP(NANOS)", pqarrow.DefaultWriterProps()},
	} {
		t.Run(c.name, func(t *testing.T) {
			lk, _ := openLake(t)
			s := lk.Session()
			mustExec(t, s, `CREATE TABLE x (id BIGINT, ts TIMESTAMP)`)
			mustExec(t, s, `INSERT INTO x VALUES (100, TIMESTAMP '2026-01-01 00:00:00')`)
			tbl, err := lk.Table(ctx, "x")
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(tbl.Iceberg().Location(), "data", c.name+".parquet")
			size := writeForeignFile(t, path, rec, parquet.NewWriterProperties(), c.aprops)
			commitDataFiles(t, tbl, migratedDataFile(t, tbl, path, nil, 10, size, 0))
			res, err := s.SQL(ctx, "SELECT id, ts FROM x")
			if err == nil {
				_, err = res.Collect(ctx)
			}
			if err == nil || !strings.Contains(err.Error(), c.name+`.parquet stores column "ts" as `+c.stored) || !strings.Contains(err.Error(), "TIMESTAMP_MICROS") {
				t.Fatalf("reading the file: %v", err)
			}
			// the file's rows go without being read
			res, err = s.SQL(ctx, "DELETE FROM x")
			if err != nil {
				t.Fatal(err)
			}
			if n := res.Metrics().RowsDeleted; n != 11 {
				t.Fatalf("DELETE deleted %d rows, want 11", n)
			}
			res.Close()
			if got := query(t, s, "SELECT count(*) FROM x"); !slices.Equal(got, []string{"0"}) {
				t.Fatalf("after DELETE: %v rows", got)
			}
		})
	}
}
