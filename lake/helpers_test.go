package lake_test

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/lake"
)

var eventsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "status", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
}, nil)

var baseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// eventsBatch builds rows [from, to) with values derived from the id.
func eventsBatch(from, to int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, eventsSchema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	st := b.Field(1).(*array.StringBuilder)
	am := b.Field(2).(*array.Float64Builder)
	ts := b.Field(3).(*array.TimestampBuilder)
	statuses := []string{"new", "paid", "shipped", "returned"}
	for i := from; i < to; i++ {
		ids.Append(i)
		st.Append(statuses[i%4])
		am.Append(float64(i%1000) / 4)
		ts.Append(arrow.Timestamp(baseTime.Add(time.Duration(i) * time.Second).UnixMicro()))
	}
	return b.NewRecordBatch()
}

// eventsReader streams rows [from, to) in batches of batch rows.
func eventsReader(from, to, batch int64) array.RecordReader {
	var recs []arrow.RecordBatch
	for lo := from; lo < to; lo += batch {
		recs = append(recs, eventsBatch(lo, min(lo+batch, to)))
	}
	rdr, err := array.NewRecordReader(eventsSchema, recs)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		r.Release()
	}
	return rdr
}

type sums struct {
	rows   int64
	id     int64
	status int64 // total length of status strings
	amount float64
	ts     int64
}

func sumOf(t *testing.T, rdr array.RecordReader) sums {
	t.Helper()
	defer rdr.Release()
	var s sums
	for rdr.Next() {
		rec := rdr.RecordBatch()
		s.rows += rec.NumRows()
		for i := 0; i < int(rec.NumCols()); i++ {
			col := rec.Column(i)
			switch rec.ColumnName(i) {
			case "id":
				for _, v := range col.(*array.Int64).Int64Values() {
					s.id += v
				}
			case "status":
				c := col.(*array.String)
				for j := 0; j < c.Len(); j++ {
					s.status += int64(len(c.Value(j)))
				}
			case "amount":
				for _, v := range col.(*array.Float64).Float64Values() {
					s.amount += v
				}
			case "ts":
				c := col.(*array.Timestamp)
				for j := 0; j < c.Len(); j++ {
					s.ts += int64(c.Value(j))
				}
			}
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatalf("scan: %v", err)
	}
	return s
}

func expectedSums(from, to int64) sums {
	rdr := eventsReader(from, to, 65536)
	var s sums
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		s.rows += rec.NumRows()
		for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
			s.id += v
		}
		c := rec.Column(1).(*array.String)
		for j := 0; j < c.Len(); j++ {
			s.status += int64(len(c.Value(j)))
		}
		for _, v := range rec.Column(2).(*array.Float64).Float64Values() {
			s.amount += v
		}
		ts := rec.Column(3).(*array.Timestamp)
		for j := 0; j < ts.Len(); j++ {
			s.ts += int64(ts.Value(j))
		}
	}
	return s
}

func openLake(t testing.TB) (*lake.Lake, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "lake")
	lk, err := lake.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lk.Close() })
	return lk, dir
}

// dataFiles lists the Parquet files under dir.
func dataFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// allFiles lists every file under dir.
func allFiles(t testing.TB, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out[p] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustCreate(t testing.TB, lk *lake.Lake, name string, opts ...lake.TableOption) *lake.Table {
	t.Helper()
	tbl, err := lk.CreateTable(context.Background(), name, eventsSchema, opts...)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return tbl
}

func mustAppend(t testing.TB, tbl *lake.Table, from, to int64, opts ...lake.WriteOption) *lake.Table {
	t.Helper()
	rdr := eventsReader(from, to, 100_000)
	defer rdr.Release()
	out, err := tbl.Append(context.Background(), rdr, opts...)
	if err != nil {
		t.Fatalf("append [%d,%d) to %s: %v", from, to, tbl.Name(), err)
	}
	return out
}

func describe(s sums) string {
	return fmt.Sprintf("rows=%d id=%d status=%d amount=%g ts=%d", s.rows, s.id, s.status, s.amount, s.ts)
}

func eventsSchemaWithColumn(name string) *arrow.Schema {
	fields := append([]arrow.Field{}, eventsSchema.Fields()...)
	fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	return arrow.NewSchema(fields, nil)
}

// longTests runs the randomized tests at their full size (go test -long).
var longTests = flag.Bool("long", false, "run the randomized tests at full size (slower)")

// history is tbl.History for tests: the snapshots, or the test fails.
func history(t testing.TB, tbl *lake.Table) []lake.SnapshotInfo {
	t.Helper()
	h, err := tbl.History(context.Background())
	if err != nil {
		t.Fatalf("history of %s: %v", tbl.Name(), err)
	}
	return h
}

// orNull is a field of a row query returned: nil where it printed NULL.
func orNull(field string) *string {
	if field == "(null)" {
		return nil
	}
	return &field
}

// fieldID is the Arrow field metadata that gives a Parquet column the
// Iceberg field id n (files of other writers, built in tests).
func fieldID(n string) arrow.Metadata {
	return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{n})
}
