package scan_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/skadedb/skade/scan"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCSVInferenceLooksPastTheFirstRow(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("id,price,code,day,at,flag,empty\n")
	for i := 0; i < 100; i++ {
		sb.WriteString("1,2,3,2024-01-02,2024-01-02 03:04:05,true,\n")
	}
	// Row 101 turns price into a double and code into text.
	sb.WriteString("2,2.5,A7,2024-02-29,2024-02-29T10:00:00Z,false,\n")
	p := writeFile(t, "in.csv", sb.String())

	rdr, err := scan.OpenCSV(p, scan.DefaultCSVOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	want := []arrow.DataType{
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String,
		arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Microsecond},
		arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.String,
	}
	for i, f := range rdr.Schema().Fields() {
		if !arrow.TypeEqual(f.Type, want[i]) {
			t.Errorf("column %s inferred as %s, want %s", f.Name, f.Type, want[i])
		}
	}
	rows := 0
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rows += int(rec.NumRows())
		if got := rec.Column(2).(*array.String).Value(int(rec.NumRows()) - 1); got != "A7" {
			t.Fatalf("last code = %q, want A7", got)
		}
		if rec.Column(6).NullN() != int(rec.NumRows()) {
			t.Fatalf("empty column should be all NULL")
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	if rows != 101 {
		t.Fatalf("read %d rows, want 101", rows)
	}
}

func TestCSVErrors(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	cases := []struct {
		name, content string
		schema        *arrow.Schema
		want          string
	}{
		{"bad int", "id,name\n1,a\nx,b\n", schema, `line 3, column "id": "x" is not a bigint`},
		{"not null", "id,name\n,a\n", schema, `line 2: column "id" is NOT NULL but the value is empty`},
		{"missing not null column", "name\na\n", schema, `column "id" is NOT NULL but the file has no such column`},
		{"ragged", "a,b\n1,2\n3\n", nil, "wrong number of fields"},
		{"duplicate header", "a,A\n1,2\n", nil, `columns 1 and 2 are both named "A"`},
		{"empty", "", nil, "the file is empty"},
		{"invalid utf-8 (schema)", "id,name\n1,x\xffy\n", schema, `line 2, column "name": invalid byte sequence for encoding "UTF8": 0xff at byte 2 of the value`},
		{"invalid utf-8 (inferred)", "a,b\n1,ok\n2,\xc3\n", nil, `invalid byte sequence for encoding "UTF8": 0xc3`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, "x.csv", c.content)
			opts := scan.DefaultCSVOptions()
			opts.Schema = c.schema
			rdr, err := scan.OpenCSV(p, opts)
			if err == nil {
				for rdr.Next() {
				}
				err = rdr.Err()
				rdr.Release()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestParquetGlob(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for f := 0; f < 3; f++ {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := 0; i < 1000; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(f*1000 + i))
		}
		rec := b.NewRecordBatch()
		b.Release()
		writeParquet(t, filepath.Join(dir, "part"+string(rune('0'+f))+".parquet"), rec)
		rec.Release()
	}
	rdr, err := scan.OpenParquet(context.Background(), filepath.Join(dir, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var n, sum int64
	for rdr.Next() {
		for _, v := range rdr.RecordBatch().Column(0).(*array.Int64).Int64Values() {
			sum += v
			n++
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 3000 || sum != 2999*3000/2 {
		t.Fatalf("read n=%d sum=%d, want 3000 rows summing to %d", n, sum, 2999*3000/2)
	}
	if _, err := scan.OpenParquet(context.Background(), filepath.Join(dir, "none*.parquet")); err == nil || !strings.Contains(err.Error(), "no file matches") {
		t.Fatalf("empty glob: got %v", err)
	}
}

// A Parquet file from another writer whose STRING column holds bytes that
// are not UTF-8 is refused, naming the column.
func TestParquetInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.parquet")
	sc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewStringBuilder(memory.DefaultAllocator)
	b.AppendValues([]string{"ok", "é", "x\xffy"}, nil)
	writeParquet(t, path, array.NewRecordBatch(sc, []arrow.Array{b.NewArray()}, 3))
	rdr, err := scan.OpenParquet(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	for rdr.Next() {
	}
	if err := rdr.Err(); err == nil || !strings.Contains(err.Error(), `column "s", row 3 of the batch: invalid byte sequence for encoding "UTF8"`) {
		t.Fatalf("got %v", err)
	}
}

// writeParquet writes rec as a Parquet file with pqarrow's defaults.
func writeParquet(t *testing.T, path string, rec arrow.RecordBatch) {
	t.Helper()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(rec.Schema(), out, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
