package scan

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// CSVOptions controls CSV reading.
type CSVOptions struct {
	// Header says the first line names the columns (default true via
	// DefaultCSVOptions). Without a header, columns are column0, column1...
	Header bool
	// Delimiter is the field separator; 0 sniffs it from the file's first
	// lines among ',', ';', tab and '|' (DefaultCSVOptions).
	Delimiter rune
	// Quote and Escape are the quote character and the one that escapes a
	// quote inside a quoted field (the quote itself: written twice); 0
	// sniffs them ('"' or '\'', and '\\' when a backslash stands before
	// a quote).
	Quote, Escape rune
	// SniffHeader, with Header, takes a first line that reads as data
	// (every column inferred as a number, date or boolean parses it) for
	// data, as DuckDB's sniffer does. Explicit options turn it off.
	SniffHeader bool
	// SampleRows is how many rows type inference looks at (default 10,000).
	// arrow-go's own reader infers from the first row alone, which fails on
	// real files whose first rows happen to look like integers.
	SampleRows int
	// BatchRows is the number of rows per Arrow batch (default 65,536).
	BatchRows int
	// NullValues are read as NULL (default: the empty string).
	NullValues []string
	// IgnoreErrors skips the rows that cannot be read (ragged rows,
	// malformed quotes, values that do not parse as their column's type)
	// instead of failing, and records them in Rejects when it is set.
	IgnoreErrors bool
	Rejects      *CSVRejects
	// Schema, when set, is used instead of inference; columns are matched
	// to the header by name (case-insensitive), or by position without a
	// header.
	Schema *arrow.Schema
}

// DefaultCSVOptions returns the defaults: the delimiter and the header
// sniffed, a 10,000-row sample for types (dates in ISO, MM/DD/YYYY or
// DD.MM.YYYY form included).
func DefaultCSVOptions() CSVOptions {
	return CSVOptions{Header: true, SniffHeader: true, SampleRows: 10_000, BatchRows: 65_536, NullValues: []string{""}}
}

func (o *CSVOptions) fill() {
	if o.SampleRows <= 0 {
		o.SampleRows = 10_000
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 65_536
	}
	if o.NullValues == nil {
		o.NullValues = []string{""}
	}
}

// OpenCSV opens a CSV file and returns a streaming reader whose schema is
// inferred from the first SampleRows rows (or given by opts.Schema).
func OpenCSV(path string, opts CSVOptions) (array.RecordReader, error) {
	opts.fill()
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read csv %s: %w", path, err)
	}
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		f.Close()
		return nil, fmt.Errorf("read csv %s: %w", path, err)
	}
	head = head[:n]
	start := int64(0)
	if bytes.HasPrefix(head, utf8BOM) {
		start = int64(len(utf8BOM))
		head = head[len(utf8BOM):]
	}
	if opts.Quote == 0 || opts.Escape == 0 {
		q, e := sniffQuote(head)
		if opts.Quote == 0 {
			opts.Quote = q
		}
		if opts.Escape == 0 {
			opts.Escape = e
			if opts.Quote != q {
				opts.Escape = opts.Quote
			}
		}
	}
	if opts.Quote > 0x7f || opts.Escape > 0x7f {
		f.Close()
		return nil, fmt.Errorf("read csv %s: the quote and escape characters must be ASCII", path)
	}
	transcode := opts.Quote != '"' || opts.Escape != '"'
	if opts.Delimiter == 0 {
		sniffHead := head
		if transcode {
			sniffHead, _ = io.ReadAll(newQuoteReader(bytes.NewReader(head), opts.Quote, opts.Escape, 0))
		}
		opts.Delimiter = sniffDelimiter(sniffHead, n < cap(head))
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("read csv %s: %w", path, err)
	}
	var in io.Reader = f
	if transcode {
		in = newQuoteReader(f, opts.Quote, opts.Escape, opts.Delimiter)
	}
	r := csv.NewReader(bufio.NewReaderSize(in, 1<<20))
	r.LazyQuotes = transcode
	r.Comma = opts.Delimiter
	r.ReuseRecord = false
	r.FieldsPerRecord = 0
	if opts.IgnoreErrors {
		r.FieldsPerRecord = -1 // ragged rows are rejected one by one
	}

	var header []string
	if opts.Header {
		header, err = r.Read()
		if err == io.EOF {
			f.Close()
			return nil, fmt.Errorf("read csv %s: the file is empty; a header line naming the columns is expected", path)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("read csv %s: %w", path, err)
		}
		header = append([]string(nil), header...)
		if len(header) > 0 {
			header[0] = strings.TrimPrefix(header[0], "\ufeff")
		}
	}
	// Read the sample.
	var sample [][]string
	var sampleLines []int
	var early []CSVReject // rows the sample skipped (IgnoreErrors)
	for len(sample) < opts.SampleRows {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		var pe *csv.ParseError
		if err != nil && opts.IgnoreErrors && errors.As(err, &pe) {
			early = append(early, CSVReject{File: path, Line: pe.StartLine, Error: pe.Err.Error()})
			continue
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("read csv %s: %w", path, err)
		}
		l, _ := r.FieldPos(0)
		sample, sampleLines = append(sample, rec), append(sampleLines, l)
	}
	ncols := len(header)
	if !opts.Header {
		if len(sample) == 0 && opts.Schema == nil {
			f.Close()
			return nil, fmt.Errorf("read csv %s: the file is empty", path)
		}
		if len(sample) > 0 {
			ncols = len(sample[0])
		} else {
			ncols = opts.Schema.NumFields()
		}
		for i := 0; i < ncols; i++ {
			header = append(header, fmt.Sprintf("column%d", i))
		}
	}
	schema, mapping, err := csvSchema(path, header, sample, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	if opts.Header && opts.SniffHeader && opts.Schema == nil && headerIsData(header, schema, opts.NullValues) {
		// the first line is data: read it as the first row
		sample = append([][]string{header}, sample...)
		sampleLines = append([]int{1}, sampleLines...)
		header = nil
		for i := 0; i < ncols; i++ {
			header = append(header, fmt.Sprintf("column%d", i))
		}
		opts.Header = false
		if schema, mapping, err = csvSchema(path, header, sample, opts); err != nil {
			f.Close()
			return nil, err
		}
	}
	cr := &csvReader{path: path, f: f, r: r, schema: schema, mapping: mapping, ncols: ncols,
		pending: sample, pendingLines: sampleLines, early: early, opts: opts, nulls: map[string]bool{},
		layouts: timeLayouts(schema, mapping, sample, opts.NullValues), fields: schema.Fields()}
	if st, err := f.Stat(); err == nil {
		cr.size = st.Size()
	}
	for _, n := range opts.NullValues {
		cr.nulls[n] = true
	}
	cr.refs.Store(1)
	return cr, nil
}

// csvSchema infers a schema from the sample, or maps the given schema's
// columns onto the header. mapping[i] is the CSV column of schema field i.
func csvSchema(path string, header []string, sample [][]string, opts CSVOptions) (*arrow.Schema, []int, error) {
	seen := map[string]int{}
	for i, h := range header {
		key := strings.ToLower(strings.TrimSpace(h))
		if key == "" {
			return nil, nil, fmt.Errorf("read csv %s: column %d has an empty name in the header; name every column", path, i+1)
		}
		if j, dup := seen[key]; dup {
			return nil, nil, fmt.Errorf("read csv %s: columns %d and %d are both named %q; names must be unique", path, j+1, i+1, h)
		}
		seen[key] = i
	}
	if opts.Schema != nil {
		mapping := make([]int, opts.Schema.NumFields())
		for i, f := range opts.Schema.Fields() {
			if !opts.Header {
				if i >= len(header) {
					return nil, nil, fmt.Errorf("read csv %s: the file has %d columns but %d are expected", path, len(header), opts.Schema.NumFields())
				}
				mapping[i] = i
				continue
			}
			j, ok := seen[strings.ToLower(f.Name)]
			if !ok {
				mapping[i] = -1 // absent: NULL
				if !f.Nullable {
					return nil, nil, fmt.Errorf("read csv %s: column %q is NOT NULL but the file has no such column; its columns are %s", path, f.Name, strings.Join(header, ", "))
				}
				continue
			}
			mapping[i] = j
		}
		return opts.Schema, mapping, nil
	}
	nulls := map[string]bool{}
	for _, n := range opts.NullValues {
		nulls[n] = true
	}
	fields := make([]arrow.Field, len(header))
	mapping := make([]int, len(header))
	for i, h := range header {
		fields[i] = arrow.Field{Name: strings.TrimSpace(h), Type: inferColumn(sample, i, nulls), Nullable: true}
		mapping[i] = i
	}
	return arrow.NewSchema(fields, nil), mapping, nil
}

// Inference tries each type from the narrowest; a column is the first
// type every non-null sampled value parses as.
func inferColumn(sample [][]string, col int, nulls map[string]bool) arrow.DataType {
	isInt, isFloat, isBool, isDate, isTS, any := true, true, true, true, true, false
	for _, row := range sample {
		if col >= len(row) || nulls[row[col]] {
			continue
		}
		v := strings.TrimSpace(row[col])
		any = true
		if isInt {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				isInt = false
			}
		}
		if isFloat {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				isFloat = false
			}
		}
		if isBool {
			if _, ok := parseBool(v); !ok {
				isBool = false
			}
		}
		if isDate {
			if sniffLayout([]string{v}, dateLayouts) == "" {
				isDate = false
			}
		}
		if isTS {
			if _, _, err := parseTimestamp(v); err != nil && sniffLayout([]string{v}, tsSniffLayouts) == "" {
				isTS = false
			}
		}
		if !isInt && !isFloat && !isBool && !isDate && !isTS {
			break
		}
	}
	switch {
	case !any:
		return arrow.BinaryTypes.String
	case isInt:
		return arrow.PrimitiveTypes.Int64
	case isFloat:
		return arrow.PrimitiveTypes.Float64
	case isBool:
		return arrow.FixedWidthTypes.Boolean
	case isDate && sniffLayout(columnValues(sample, col, nulls), dateLayouts) != "":
		return arrow.FixedWidthTypes.Date32
	case isTS && (allISOTimestamps(sample, col, nulls) || sniffLayout(columnValues(sample, col, nulls), tsSniffLayouts) != ""):
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	}
	return arrow.BinaryTypes.String
}

// utf8BOM starts some CSV files (Excel writes it); it is not data.
var utf8BOM = []byte("\xef\xbb\xbf")

// sniffDelimiter picks the delimiter of a CSV file from its first bytes:
// the candidate that splits every line into the same number of fields,
// the most fields winning (a tie goes to the earlier candidate). whole
// says head is the whole file; otherwise its last, cut line is ignored.
func sniffDelimiter(head []byte, whole bool) rune {
	if !whole {
		if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
			head = head[:i+1]
		}
	}
	best, bestFields := ',', 1
	for _, d := range []rune{',', ';', '\t', '|'} {
		r := csv.NewReader(bytes.NewReader(head))
		r.Comma, r.LazyQuotes, r.FieldsPerRecord = d, true, -1
		fields, lines, same := -1, 0, true
		for lines < 50 {
			rec, err := r.Read()
			if err != nil {
				if err != io.EOF {
					same = false
				}
				break
			}
			lines++
			if fields >= 0 && len(rec) != fields {
				same = false
				break
			}
			fields = len(rec)
		}
		if same && lines > 0 && fields > bestFields {
			best, bestFields = d, fields
		}
	}
	return best
}

// dateLayouts are the date forms the sniffer knows, tried in order: ISO,
// month first (which wins when both fit, as for 03/04/2026), day first,
// day first with dots, and year first with slashes.
var dateLayouts = []string{"2006-01-02", "1/2/2006", "2/1/2006", "2.1.2006", "2006/1/2"}

// tsSniffLayouts are the timestamp forms beyond ISO: each date form with
// a time of day.
var tsSniffLayouts = func() []string {
	var out []string
	for _, d := range dateLayouts[1:] {
		for _, t := range []string{" 15:04:05.999999999", " 15:04"} {
			out = append(out, d+t)
		}
	}
	return out
}()

// sniffLayout returns the first layout every value parses with; "" when
// none does (or there are no values).
func sniffLayout(values, layouts []string) string {
	if len(values) == 0 {
		return ""
	}
	for _, l := range layouts {
		ok := true
		for _, v := range values {
			if _, err := time.Parse(l, v); err != nil {
				ok = false
				break
			}
		}
		if ok {
			return l
		}
	}
	return ""
}

// columnValues are the sampled non-null values of column col, trimmed.
func columnValues(sample [][]string, col int, nulls map[string]bool) []string {
	var out []string
	for _, row := range sample {
		if col < len(row) && !nulls[row[col]] {
			out = append(out, strings.TrimSpace(row[col]))
		}
	}
	return out
}

func allISOTimestamps(sample [][]string, col int, nulls map[string]bool) bool {
	for _, v := range columnValues(sample, col, nulls) {
		if _, _, err := parseTimestamp(v); err != nil {
			return false
		}
	}
	return true
}

// timeLayouts are the sniffed layouts of the date and timestamp columns
// of schema ("" for ISO, and for every other column).
func timeLayouts(schema *arrow.Schema, mapping []int, sample [][]string, nullValues []string) []string {
	nulls := map[string]bool{}
	for _, n := range nullValues {
		nulls[n] = true
	}
	out := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		if mapping[i] < 0 {
			continue
		}
		vals := columnValues(sample, mapping[i], nulls)
		switch f.Type.ID() {
		case arrow.DATE32:
			if l := sniffLayout(vals, dateLayouts); l != dateLayouts[0] {
				out[i] = l
			}
		case arrow.TIMESTAMP:
			if !allISOTimestamps(sample, mapping[i], nulls) {
				out[i] = sniffLayout(vals, tsSniffLayouts)
			}
		}
	}
	return out
}

// headerIsData reports whether a header line reads as data: some column
// is inferred as other than text from the rows below, and the header's
// value parses as the type of every such column.
func headerIsData(header []string, schema *arrow.Schema, nullValues []string) bool {
	typed := 0
	for i, f := range schema.Fields() {
		if f.Type.ID() == arrow.STRING || i >= len(header) {
			continue
		}
		typed++
		b := array.NewBuilder(memory.DefaultAllocator, f.Type)
		err := appendValue(b, header[i], "")
		if err != nil && (f.Type.ID() == arrow.DATE32 || f.Type.ID() == arrow.TIMESTAMP) {
			for _, l := range append(append([]string(nil), dateLayouts...), tsSniffLayouts...) {
				if err = appendValue(b, header[i], l); err == nil {
					break
				}
			}
		}
		b.Release()
		if err != nil {
			return false
		}
	}
	return typed > 0
}

func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true", "t", "yes", "y", "on":
		return true, true
	case "false", "f", "no", "n", "off":
		return false, true
	}
	return false, false
}

var tsLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
}

// parseTimestamp parses the common ISO forms; zoned reports whether the
// text carried an offset.
func parseTimestamp(v string) (time.Time, bool, error) {
	for i, layout := range tsLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t, i < 3, nil
		}
	}
	return time.Time{}, false, fmt.Errorf("not a timestamp")
}

type csvReader struct {
	refs    atomic.Int64
	path    string
	f       *os.File
	r       *csv.Reader
	schema  *arrow.Schema
	mapping []int
	ncols   int
	pending [][]string
	// pendingLines are the input lines pending's rows start on; early
	// the rows the sample skipped, reported on the first Next.
	pendingLines []int
	early        []CSVReject
	opts         CSVOptions
	nulls        map[string]bool
	cur          arrow.RecordBatch
	err          error
	eof          bool
	size         int64 // the file's size, for Bytes
	// layouts are the sniffed date and timestamp forms per field ("" ISO)
	layouts []string
	// scratch takes the values check parses (IgnoreErrors)
	scratch *array.RecordBuilder
	// fields are schema's, kept: Schema.Fields copies them on every call,
	// which per row was a tenth of an import's CPU
	fields []arrow.Field
}

func (c *csvReader) Retain()               { c.refs.Add(1) }
func (c *csvReader) Schema() *arrow.Schema { return c.schema }
func (c *csvReader) Err() error            { return c.err }

func (c *csvReader) RecordBatch() arrow.RecordBatch { return c.cur }

// Bytes reports how much of the file the CSV parser has consumed, for
// progress bars (ByteCounter).
func (c *csvReader) Bytes() (read, total int64) {
	if c.eof && len(c.pending) == 0 {
		return c.size, c.size
	}
	return min(c.r.InputOffset(), c.size), c.size
}

// Files reports whether the file has been read to its end, for progress
// bars (FileCounter).
func (c *csvReader) Files() (done, total int) {
	if c.eof && len(c.pending) == 0 {
		return 1, 1
	}
	return 0, 1
}

// Record is RecordBatch under its deprecated name.
func (c *csvReader) Record() arrow.RecordBatch { return c.cur }

func (c *csvReader) Release() {
	if c.refs.Add(-1) == 0 {
		if c.cur != nil {
			c.cur.Release()
			c.cur = nil
		}
		if c.f != nil {
			c.f.Close()
			c.f = nil
		}
		if c.scratch != nil {
			c.scratch.Release()
			c.scratch = nil
		}
	}
}

func (c *csvReader) Next() bool {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	if c.err != nil || (c.eof && len(c.pending) == 0) {
		return false
	}
	for _, rej := range c.early {
		c.opts.Rejects.add(rej)
	}
	c.early = nil
	rows, lines := c.pending, c.pendingLines
	c.pending, c.pendingLines = nil, nil
	for len(rows) < c.opts.BatchRows && !c.eof {
		rec, err := c.r.Read()
		if err == io.EOF {
			c.eof = true
			break
		}
		var pe *csv.ParseError
		if err != nil && c.opts.IgnoreErrors && errors.As(err, &pe) {
			c.opts.Rejects.add(CSVReject{File: c.path, Line: pe.StartLine, Error: pe.Err.Error()})
			continue
		}
		if err != nil {
			c.err = fmt.Errorf("read csv %s: %w", c.path, err)
			return false
		}
		l, _ := c.r.FieldPos(0)
		rows, lines = append(rows, rec), append(lines, l)
	}
	if len(c.pending) == 0 && len(rows) > c.opts.BatchRows {
		c.pending, c.pendingLines = rows[c.opts.BatchRows:], lines[c.opts.BatchRows:]
		rows, lines = rows[:c.opts.BatchRows], lines[:c.opts.BatchRows]
	}
	if len(rows) == 0 {
		return false
	}
	batch, err := c.build(rows, lines)
	if err != nil {
		c.err = err
		return false
	}
	if batch.NumRows() == 0 && !(c.eof && len(c.pending) == 0) {
		// every row of this batch was rejected: read on
		batch.Release()
		return c.Next()
	}
	c.cur = batch
	return true
}

func (c *csvReader) build(rows [][]string, lines []int) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, c.schema)
	defer b.Release()
	for ri, row := range rows {
		line := lines[ri]
		if len(row) != c.ncols {
			if c.opts.IgnoreErrors {
				c.opts.Rejects.add(CSVReject{File: c.path, Line: line, Value: strings.Join(row, string(c.opts.Delimiter)), Error: fmt.Sprintf("the row has %d fields, expected %d", len(row), c.ncols)})
				continue
			}
			return nil, fmt.Errorf("read csv %s: line %d has %d fields, expected %d", c.path, line, len(row), c.ncols)
		}
		if c.opts.IgnoreErrors {
			if rej, bad := c.check(row, line); bad {
				c.opts.Rejects.add(rej)
				continue
			}
		}
		for fi, f := range c.fields {
			src := c.mapping[fi]
			if src < 0 || c.nulls[row[src]] {
				if !f.Nullable {
					return nil, fmt.Errorf("read csv %s: line %d: column %q is NOT NULL but the value is empty", c.path, line, f.Name)
				}
				b.Field(fi).AppendNull()
				continue
			}
			if err := appendValue(b.Field(fi), row[src], c.layouts[fi]); err != nil {
				return nil, fmt.Errorf("read csv %s: line %d, column %q: %w", c.path, line, f.Name, err)
			}
		}
	}
	if c.scratch != nil {
		// drop what check appended; a rejected row leaves its fields
		// uneven, so each field is emptied on its own
		for fi := range c.fields {
			c.scratch.Field(fi).NewArray().Release()
		}
	}
	return b.NewRecordBatch(), nil
}

// check reports the first field of row that does not parse as its
// column (IgnoreErrors), parsing into scratch builders so that a rejected
// row leaves the batch's untouched; build empties them once per batch.
func (c *csvReader) check(row []string, line int) (CSVReject, bool) {
	if c.scratch == nil {
		c.scratch = array.NewRecordBuilder(memory.DefaultAllocator, c.schema)
	}
	for fi, f := range c.fields {
		src := c.mapping[fi]
		if src < 0 || c.nulls[row[src]] {
			if !f.Nullable {
				return CSVReject{File: c.path, Line: line, Column: f.Name, Error: "the column is NOT NULL but the value is empty"}, true
			}
			continue
		}
		if err := appendValue(c.scratch.Field(fi), row[src], c.layouts[fi]); err != nil {
			return CSVReject{File: c.path, Line: line, Column: f.Name, Value: row[src], Error: err.Error()}, true
		}
	}
	return CSVReject{}, false
}

// appendValue parses one CSV field into its column's builder; layout is
// a date or timestamp column's sniffed form ("" for ISO).
func appendValue(bld array.Builder, s, layout string) error {
	v := strings.TrimSpace(s)
	switch b := bld.(type) {
	case *array.StringBuilder:
		// as PostgreSQL's COPY (SQLSTATE 22021): TEXT is UTF-8
		if err := InvalidUTF8(s); err != nil {
			return err
		}
		b.Append(s)
	case *array.Int64Builder:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a bigint", s)
		}
		b.Append(n)
	case *array.Int32Builder:
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		b.Append(int32(n))
	case *array.Float64Builder:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%q is not a double", s)
		}
		b.Append(n)
	case *array.Float32Builder:
		n, err := strconv.ParseFloat(v, 32)
		if err != nil || math.IsInf(n, 0) && !strings.Contains(strings.ToLower(v), "inf") {
			return fmt.Errorf("%q is not a real", s)
		}
		b.Append(float32(n))
	case *array.BooleanBuilder:
		x, ok := parseBool(v)
		if !ok {
			return fmt.Errorf("%q is not a boolean", s)
		}
		b.Append(x)
	case *array.Date32Builder:
		if layout == "" {
			if d, ok := fastDate(v); ok {
				b.Append(arrow.Date32(d))
				return nil
			}
		}
		form := "2006-01-02"
		if layout != "" {
			form = layout
		}
		t, err := time.Parse(form, v)
		if err != nil {
			return fmt.Errorf("%q is not a date (%s)", s, layoutName(form))
		}
		b.Append(arrow.Date32FromTime(t))
	case *array.TimestampBuilder:
		if layout == "" && b.Type().(*arrow.TimestampType).Unit == arrow.Microsecond {
			if us, ok := fastTimestampMicros(v); ok {
				b.Append(arrow.Timestamp(us))
				return nil
			}
		}
		var t time.Time
		var err error
		if layout != "" {
			if t, err = time.Parse(layout, v); err != nil {
				return fmt.Errorf("%q is not a timestamp (%s)", s, layoutName(layout))
			}
		} else {
			t, _, err = parseTimestamp(v)
		}
		if err != nil {
			if d, derr := time.Parse("2006-01-02", v); derr == nil {
				t = d
			} else {
				return fmt.Errorf("%q is not a timestamp (YYYY-MM-DD HH:MM:SS[.ffffff][+HH:MM])", s)
			}
		}
		unit := b.Type().(*arrow.TimestampType).Unit
		ts, err := arrow.TimestampFromTime(t, unit)
		if err != nil {
			return fmt.Errorf("%q is out of range for a timestamp", s)
		}
		b.Append(ts)
	default:
		return errors.New("columns of type " + bld.Type().String() + " cannot be read from CSV yet")
	}
	return nil
}

// layoutName renders a Go time layout as the form users know.
func layoutName(layout string) string {
	return strings.NewReplacer("2006", "YYYY", "01", "MM", "02", "DD", "1", "M", "2", "D", "15", "HH", "04", "MI", "05", "SS", ".999999999", "[.ffffff]").Replace(layout)
}

var _ array.RecordReader = (*csvReader)(nil)

// InvalidUTF8 is PostgreSQL's error for the first byte of s that is not
// UTF-8, or nil when s is UTF-8.
func InvalidUTF8(s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return fmt.Errorf("invalid byte sequence for encoding \"UTF8\": 0x%02x at byte %d of the value", s[i], i+1)
		}
		i += n
	}
	return nil
}
