package scan

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestCSVSniffing reads the corpus in testdata/csv with the default
// options: the delimiter, the header and date forms are sniffed, quotes
// and a byte-order mark are handled, and a bad row is reported by line
// and column.
func TestCSVSniffing(t *testing.T) {
	cases := []struct {
		file   string
		schema string // name:type, ...
		rows   string // rows joined by |, values by ,
		err    string
	}{
		{file: "semicolon.csv", schema: "id:int64, name:utf8, amount:utf8", rows: "1,Ann,10,50|2,Bob,3,25"},
		{file: "tab.csv", schema: "id:int64, city:utf8, pop:int64", rows: "1,Oslo,700000|2,Bergen,285000"},
		{file: "pipe.csv", schema: "id:int64, note:utf8", rows: "1,a, b and c|2,pipes; commas"},
		{file: "quotes.csv", schema: "id:int64, comment:utf8", rows: "1,quoted, with comma|2,she said \"hi\"|3,two\nlines"},
		{file: "bom.csv", schema: "id:int64, name:utf8", rows: "1,Ann|2,Bob"},
		{file: "us_dates.csv", schema: "id:int64, day:date32, at:timestamp[us]", rows: "1,2026-03-04,2026-03-04 10:30:00|2,2025-12-31,2025-12-31 23:59:59"},
		{file: "dotted_dates.csv", schema: "id:int64, day:date32", rows: "1,2025-12-31|2,2026-02-01"},
		{file: "day_first.csv", schema: "id:int64, day:date32", rows: "1,2025-12-25|2,2026-04-03"},
		// the first line reads as data: no header
		{file: "no_header.csv", schema: "column0:int64, column1:utf8, column2:date32", rows: "1,Ann,2026-01-05|2,Bob,2026-02-01"},
		// every column is text: the first line stays the header
		{file: "all_text.csv", schema: "name:utf8, city:utf8", rows: "Ann,Oslo|Bob,Bergen"},
		{file: "ragged.csv", err: "line 3"},
		// other quoting conventions
		{file: "single_quotes.csv", schema: "id:int64, name:utf8, note:utf8", rows: "1,Ann,a, b|2,Bob,it's"},
		{file: "backslash_escape.csv", schema: "id:int64, comment:utf8", rows: "1,she said \"hi\"|2,plain"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			rdr, err := OpenCSV(filepath.Join("..", "testdata", "csv", c.file), DefaultCSVOptions())
			if err != nil {
				if c.err != "" && strings.Contains(err.Error(), c.err) {
					return
				}
				t.Fatal(err)
			}
			defer rdr.Release()
			var fields []string
			for _, f := range rdr.Schema().Fields() {
				fields = append(fields, f.Name+":"+f.Type.String())
			}
			if c.err == "" && strings.Join(fields, ", ") != c.schema {
				t.Errorf("schema %s, want %s", strings.Join(fields, ", "), c.schema)
			}
			var rows []string
			for rdr.Next() {
				b := rdr.RecordBatch()
				for r := 0; r < int(b.NumRows()); r++ {
					var vals []string
					for _, col := range b.Columns() {
						v := col.ValueStr(r)
						if tc, ok := col.(*array.Timestamp); ok {
							v = tc.Value(r).ToTime(tc.DataType().(*arrow.TimestampType).Unit).Format("2006-01-02 15:04:05")
						}
						vals = append(vals, v)
					}
					rows = append(rows, strings.Join(vals, ","))
				}
			}
			if c.err != "" {
				if rdr.Err() == nil || !strings.Contains(rdr.Err().Error(), c.err) {
					t.Fatalf("error %v, want one naming %q", rdr.Err(), c.err)
				}
				return
			}
			if rdr.Err() != nil {
				t.Fatal(rdr.Err())
			}
			if got := strings.Join(rows, "|"); got != c.rows {
				t.Errorf("rows %q, want %q", got, c.rows)
			}
		})
	}
}

// TestCSVBadValue names the line and column of a value that does not
// parse as its column's type (inferred from a sample that lacked it).
func TestCSVBadValue(t *testing.T) {
	opts := DefaultCSVOptions()
	opts.SampleRows = 1
	rdr, err := OpenCSV(filepath.Join("..", "testdata", "csv", "bad_date.csv"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	for rdr.Next() {
	}
	if err := rdr.Err(); err == nil || !strings.Contains(err.Error(), `line 3, column "day": "not a date" is not a date (YYYY-MM-DD)`) {
		t.Fatalf("got %v", err)
	}
}

// TestCSVIgnoreErrors skips ragged rows, malformed quotes and values that
// do not parse as their column's type, and records each with its line
// and column.
func TestCSVIgnoreErrors(t *testing.T) {
	opts := DefaultCSVOptions()
	opts.SampleRows = 1 // id is a bigint from the first row; "x" comes after
	opts.IgnoreErrors = true
	opts.Rejects = &CSVRejects{}
	opts.Rejects.Begin(1)
	rdr, err := OpenCSV(filepath.Join("..", "testdata", "csv", "messy.csv"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var ids []string
	for rdr.Next() {
		b := rdr.RecordBatch()
		for r := 0; r < int(b.NumRows()); r++ {
			ids = append(ids, b.Column(0).ValueStr(r))
		}
	}
	if rdr.Err() != nil {
		t.Fatal(rdr.Err())
	}
	if strings.Join(ids, ",") != "1,3" {
		t.Fatalf("rows read: %v", ids)
	}
	var got []string
	for _, r := range opts.Rejects.Rows() {
		got = append(got, fmt.Sprintf("%d|%s|%s|%s", r.Line, r.Column, r.Value, r.Error))
	}
	want := []string{
		"3||2,Bob|the row has 2 fields, expected 3",
		`5|id|x|"x" is not a bigint`,
		`6|||extraneous or missing " in quoted-field`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rejects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// a later statement's read starts a new list
	opts.Rejects.Begin(2)
	if n := len(opts.Rejects.Rows()); n != 0 {
		t.Fatalf("%d rejects left from the earlier statement", n)
	}
}

// TestQuoteReader transcodes other quoting conventions to RFC 4180.
func TestQuoteReader(t *testing.T) {
	for _, c := range []struct {
		in, want      string
		quote, escape rune
	}{
		{"a,'b, c','it''s'\n", "a,\"b, c\",\"it's\"\n", '\'', '\''},
		{"'say \"x\"',y\n", "\"say \"\"x\"\"\",y\n", '\'', '\''},
		{"\"a \\\"b\\\" c\",\"back\\\\slash\"\n", "\"a \"\"b\"\" c\",\"back\\slash\"\n", '"', '\\'},
		{"'two\r\nlines',x\r\n", "\"two\r\nlines\",x\r\n", '\'', '\''},
		{"it's,fine\n", "it's,fine\n", '\'', '\''}, // a quote inside an unquoted field is data
	} {
		out, err := io.ReadAll(newQuoteReader(strings.NewReader(c.in), c.quote, c.escape, ','))
		if err != nil || string(out) != c.want {
			t.Errorf("%q: got %q (%v), want %q", c.in, out, err, c.want)
		}
	}
}

// TestCSVIgnoreErrorsLateColumn rejects a row whose bad value is not in
// its first column: the fields parsed before it are dropped with it.
func TestCSVIgnoreErrorsLateColumn(t *testing.T) {
	opts := DefaultCSVOptions()
	opts.SampleRows = 1
	opts.IgnoreErrors = true
	opts.Rejects = &CSVRejects{}
	rdr, err := OpenCSV(filepath.Join("..", "testdata", "csv", "bad_late.csv"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var rows []string
	for rdr.Next() {
		b := rdr.RecordBatch()
		for r := 0; r < int(b.NumRows()); r++ {
			rows = append(rows, b.Column(0).ValueStr(r)+" "+b.Column(1).ValueStr(r))
		}
	}
	if rdr.Err() != nil {
		t.Fatal(rdr.Err())
	}
	if strings.Join(rows, ",") != "1 2026-01-05,3 2026-01-07" {
		t.Fatalf("rows %v", rows)
	}
	rej := opts.Rejects.Rows()
	if len(rej) != 1 || rej[0].Line != 3 || rej[0].Column != "day" || rej[0].Value != "not a date" {
		t.Fatalf("rejects %+v", rej)
	}
}
