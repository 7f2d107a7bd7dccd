package scan

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// plainTestSchema is the table the plain read tests write: every
// fixed-width type the read takes, optional and required, with field ids.
func plainTestSchema() *arrow.Schema {
	f := func(name string, id int, typ arrow.DataType, nullable bool) arrow.Field {
		return arrow.Field{Name: name, Type: typ, Nullable: nullable,
			Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})}
	}
	return arrow.NewSchema([]arrow.Field{
		f("id", 1, arrow.PrimitiveTypes.Int64, true),
		f("n", 2, arrow.PrimitiveTypes.Int32, false),
		f("x", 3, arrow.PrimitiveTypes.Float64, true),
		f("y", 4, arrow.PrimitiveTypes.Float32, true),
		f("d", 5, arrow.FixedWidthTypes.Date32, true),
		f("ts", 6, &arrow.TimestampType{Unit: arrow.Microsecond}, true),
		f("s", 7, arrow.BinaryTypes.String, true),
		f("u", 8, arrow.BinaryTypes.String, false),
		f("b", 9, arrow.BinaryTypes.Binary, true),
	}, nil)
}

// plainTestRecord holds rows rows of plainTestSchema; nullAt (when >= 0)
// is a row whose x is NULL.
func plainTestRecord(mem memory.Allocator, rows, nullAt int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, plainTestSchema())
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i)*7919 - 1<<40)
		b.Field(1).(*array.Int32Builder).Append(int32(i % 1000))
		if i == nullAt {
			b.Field(2).AppendNull()
		} else {
			switch i % 97 {
			case 3:
				b.Field(2).(*array.Float64Builder).Append(math.NaN())
			case 5:
				b.Field(2).(*array.Float64Builder).Append(math.Copysign(0, -1))
			default:
				b.Field(2).(*array.Float64Builder).Append(float64(i) * 1.25)
			}
		}
		b.Field(3).(*array.Float32Builder).Append(float32(i) / 3)
		b.Field(4).(*array.Date32Builder).Append(arrow.Date32(20000 + i%400))
		b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1_000_003))
		b.Field(6).(*array.StringBuilder).Append(fmt.Sprint("v", i/64%5)) // runs: RLE runs of indices
		// about 1,400 values: dictionary indices of 11 bits, a
		// dictionary past a small page limit, empty strings, UTF-8
		if i%3 == 0 {
			b.Field(7).(*array.StringBuilder).Append("")
		} else {
			b.Field(7).(*array.StringBuilder).Append(strings.Repeat("ü", i%7) + strconv.Itoa(i*31%1400))
		}
		b.Field(8).(*array.BinaryBuilder).Append([]byte{byte(i), 0, byte(i >> 8)})
	}
	return b.NewRecordBatch()
}

// writePlainTest writes rec as a Parquet file with props.
func writePlainTest(t *testing.T, rec arrow.RecordBatch, props ...parquet.WriterProperty) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// plainTestFields are fields (by index into plainTestSchema) as a read
// schema and their field ids.
func plainTestFields(fields ...int) (*arrow.Schema, []int) {
	sc := plainTestSchema()
	var fs []arrow.Field
	var ids []int
	for _, i := range fields {
		f := sc.Field(i)
		f.Metadata = arrow.Metadata{}
		fs = append(fs, f)
		ids = append(ids, i+1)
	}
	return arrow.NewSchema(fs, nil), ids
}

// readPlain reads the file held in b page by page (plainBatches) in
// batches of at most size rows; nil when plainColumns refuses it.
func readPlain(t *testing.T, mem memory.Allocator, b []byte, schema *arrow.Schema, ids []int, rows int64, size int) []arrow.RecordBatch {
	t.Helper()
	return readPlainWith(t, mem, b, schema, ids, rows, size, false)
}

// readPlainWith is readPlain, taking the NULLs of optional columns where
// nulls is set (as a query's plain read does).
func readPlainWith(t *testing.T, mem memory.Allocator, b []byte, schema *arrow.Schema, ids []int, rows int64, size int, nulls bool) []arrow.RecordBatch {
	t.Helper()
	src := bytes.NewReader(b)
	pr, err := file.NewParquetReader(src, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cols := plainColumns(pr.MetaData(), schema, ids, rows, nulls)
	if cols == nil {
		return nil
	}
	var out []arrow.RecordBatch
	for b, err := range plainBatches(context.Background(), pr, src, int64(len(b)), schema, cols, size, mem) {
		if err != nil {
			t.Fatal(err)
		}
		if b.NumRows() > int64(size) || b.NumRows() == 0 {
			t.Fatalf("a batch of %d rows, want 1 to %d", b.NumRows(), size)
		}
		if !b.Schema().Equal(schema) {
			t.Fatalf("batch schema %v, want %v", b.Schema(), schema)
		}
		out = append(out, b)
	}
	return out
}

// samePlain requires batches to hold rec's columns fields, value for
// value (bit for bit for floating point, NULLs where rec has them).
func samePlain(t *testing.T, what string, batches []arrow.RecordBatch, rec arrow.RecordBatch, fields []int) {
	t.Helper()
	var at int64
	for _, b := range batches {
		for k, f := range fields {
			want := array.NewSlice(rec.Column(f), at, at+b.NumRows())
			got := b.Column(k)
			if !array.ApproxEqual(got, want, array.WithNaNsEqual(true)) || !sameBits(got, want) {
				t.Fatalf("%s: column %s, rows %d..%d: got %v, want %v", what, rec.Schema().Field(f).Name, at, at+b.NumRows(), got, want)
			}
			want.Release()
		}
		at += b.NumRows()
	}
	if at != rec.NumRows() {
		t.Fatalf("%s: %d rows read, want %d", what, at, rec.NumRows())
	}
}

// sameBits compares floating-point values by their bits (-0 is not 0).
func sameBits(a, b arrow.Array) bool {
	switch x := a.(type) {
	case *array.Float64:
		y := b.(*array.Float64)
		for i := range x.Len() {
			if x.IsValid(i) && math.Float64bits(x.Value(i)) != math.Float64bits(y.Value(i)) {
				return false
			}
		}
	case *array.Float32:
		y := b.(*array.Float32)
		for i := range x.Len() {
			if x.IsValid(i) && math.Float32bits(x.Value(i)) != math.Float32bits(y.Value(i)) {
				return false
			}
		}
	}
	return true
}

// TestPlainRead reads files of several layouts page by page and requires
// the rows written: row groups of 700 rows, pages of 1 kB, V1 and V2
// pages, three codecs, an optional and a required column, NaN and -0, and
// batches that cross pages and end short of a row group.
func TestPlainRead(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := plainTestRecord(mem, 5000, -1)
	defer rec.Release()
	fields := []int{0, 1, 2, 3, 4, 5}
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		for _, codec := range []compress.Compression{compress.Codecs.Zstd, compress.Codecs.Snappy, compress.Codecs.Uncompressed} {
			what := fmt.Sprintf("pages v%d, %s", v+1, codec)
			b := writePlainTest(t, rec, parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(v), parquet.WithCompression(codec),
				parquet.WithDataPageSize(1<<10), parquet.WithMaxRowGroupLength(700), parquet.WithBatchSize(100))
			readAllPaged(t, mem, what, b, rec, fields)
			// a subset, in another order
			sub, subIDs := plainTestFields(5, 0)
			got := readPlain(t, mem, b, sub, subIDs, rec.NumRows(), 1000)
			samePlain(t, what+", two columns", got, rec, []int{5, 0})
			releaseBatches(got)
		}
	}
	TestHookPlainRead = nil
}

// readAllPaged reads the file b (rec's rows in 8 row groups) page by page
// in batches of 50, 333 and 2^20 rows, and requires rec's columns fields,
// every row group read page by page.
func readAllPaged(t *testing.T, mem memory.Allocator, what string, b []byte, rec arrow.RecordBatch, fields []int) {
	t.Helper()
	schema, ids := plainTestFields(fields...)
	var groups int
	TestHookPlainRead = func(rows int64) {
		if rows < 0 {
			t.Errorf("%s: a row group went through pqarrow", what)
		}
		groups++
	}
	defer func() { TestHookPlainRead = nil }()
	for _, size := range []int{50, 333, 1 << 20} {
		groups = 0
		got := readPlain(t, mem, b, schema, ids, rec.NumRows(), size)
		if got == nil {
			t.Fatalf("%s: plainColumns refused the file", what)
		}
		samePlain(t, fmt.Sprintf("%s, batches of %d", what, size), got, rec, fields)
		releaseBatches(got)
		if groups != 8 {
			t.Fatalf("%s: %d row groups read page by page, want 8", what, groups)
		}
	}
}

// TestPlainReadStrings reads STRING and BINARY columns page by page:
// dictionary-encoded (indices of 3 and 11 bits), PLAIN, and dictionaries
// past their page limit (later pages PLAIN in the same chunk); V1 and V2
// pages, three codecs; a string column first, so that batches end where
// its pages do.
func TestPlainReadStrings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := plainTestRecord(mem, 5000, -1)
	defer rec.Release()
	fields := []int{7, 0, 6, 8, 2}
	for _, dict := range []struct {
		what  string
		props []parquet.WriterProperty
	}{
		{"dictionaries", []parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithDictionaryFor("s", true),
			parquet.WithDictionaryFor("u", true), parquet.WithDictionaryFor("b", true)}},
		{"PLAIN", []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}},
		{"dictionaries past their limit", []parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithDictionaryFor("u", true),
			parquet.WithDictionaryFor("s", true), parquet.WithDataPageSize(256), parquet.WithDictionaryPageSizeLimit(3 << 10)}},
	} {
		for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
			for _, codec := range []compress.Compression{compress.Codecs.Zstd, compress.Codecs.Snappy, compress.Codecs.Uncompressed} {
				what := fmt.Sprintf("%s, pages v%d, %s", dict.what, v+1, codec)
				props := append([]parquet.WriterProperty{parquet.WithDataPageVersion(v), parquet.WithCompression(codec),
					parquet.WithDataPageSize(1 << 10), parquet.WithMaxRowGroupLength(700), parquet.WithBatchSize(100)}, dict.props...)
				readAllPaged(t, mem, what, writePlainTest(t, rec, props...), rec, fields)
			}
		}
	}
	TestHookPlainRead = nil
}

// TestPlainReadRefuses: a file plainColumns must leave to the scan.
func TestPlainReadRefuses(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := plainTestRecord(mem, 3000, 1700)
	defer rec.Release()
	plain := []parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithMaxRowGroupLength(1000)}
	all, allIDs := plainTestFields(0, 1, 3)
	withNull, withNullIDs := plainTestFields(0, 2)
	dates, dateIDs := plainTestFields(0, 4) // 400 dates in 1,000 rows: kept as a dictionary
	for _, c := range []struct {
		what   string
		props  []parquet.WriterProperty
		schema *arrow.Schema
		ids    []int
		rows   int64
	}{
		{"dictionary-encoded", []parquet.WriterProperty{parquet.WithMaxRowGroupLength(1000)}, dates, dateIDs, 3000},
		{"statistics count a NULL", plain, withNull, withNullIDs, 3000},
		{"a string column read as LARGE_STRING", plain, arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.LargeString, Nullable: true}}, nil), []int{7}, 3000},
		{"a field id the file lacks", plain, all, []int{1, 2, 99}, 3000},
		{"another type (int32 read as int64)", plain, arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil), []int{2}, 3000},
		{"another row count than the manifest's", plain, all, allIDs, 2999},
		{"DELTA_BINARY_PACKED", append(plain, parquet.WithEncodingFor("id", parquet.Encodings.DeltaBinaryPacked)), all, allIDs, 3000},
	} {
		b := writePlainTest(t, rec, c.props...)
		if got := readPlain(t, mem, b, c.schema, c.ids, c.rows, 512); got != nil {
			releaseBatches(got)
			t.Errorf("%s: read page by page", c.what)
		}
	}
	// the same file without the NULL is read
	b := writePlainTest(t, rec, plain...)
	got := readPlain(t, mem, b, all, allIDs, 3000, 512)
	if got == nil {
		t.Fatal("a plain file without NULLs was refused")
	}
	samePlain(t, "plain", got, rec, []int{0, 1, 3})
	releaseBatches(got)
}

// TestPlainReadFallsBack: a file without statistics whose optional
// column has a NULL on a page in the middle of a row group is read page
// by page up to the batch that holds it, and the rest of that row group
// through pqarrow, each row once.
func TestPlainReadFallsBack(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		rec := plainTestRecord(mem, 4000, 2345)
		b := writePlainTest(t, rec, parquet.WithDictionaryDefault(false), parquet.WithStats(false), parquet.WithDataPageVersion(v),
			parquet.WithDataPageSize(512), parquet.WithMaxRowGroupLength(1000), parquet.WithBatchSize(64))
		fields := []int{0, 2, 3}
		schema, ids := plainTestFields(fields...)
		var paged, fell int
		TestHookPlainRead = func(rows int64) {
			if rows < 0 {
				fell++
			} else {
				paged++
			}
		}
		got := readPlain(t, mem, b, schema, ids, rec.NumRows(), 300)
		TestHookPlainRead = nil
		if got == nil {
			t.Fatal("refused")
		}
		samePlain(t, fmt.Sprintf("pages v%d", v+1), got, rec, fields)
		if got[len(got)-1].Column(1).NullN() != 0 || !hasNull(got) {
			t.Fatal("the NULL is not where it was written")
		}
		releaseBatches(got)
		rec.Release()
		if paged != 3 || fell != 1 {
			t.Fatalf("pages v%d: %d row groups page by page and %d through pqarrow, want 3 and 1", v+1, paged, fell)
		}
	}
}

func hasNull(bs []arrow.RecordBatch) bool {
	for _, b := range bs {
		if b.Column(1).NullN() > 0 {
			return true
		}
	}
	return false
}

func releaseBatches(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}

// TestPlainReadCorruptPages: column chunks with bytes flipped anywhere in
// their pages (headers, levels, compressed values) never make a plain
// read panic: each row group is read, falls back (the caller's pqarrow,
// not run here) or fails with an error, and what it yields is whole
// batches.
func TestPlainReadCorruptPages(t *testing.T) {
	for _, nulls := range []bool{false, true} {
		t.Run(fmt.Sprintf("nulls=%v", nulls), func(t *testing.T) { corruptPages(t, nulls) })
	}
}

// corruptPages is TestPlainReadCorruptPages of a file without NULLs, or
// with them (plainNullRecord) read taking them.
func corruptPages(t *testing.T, nulls bool) {
	mem := memory.NewGoAllocator()
	rec := plainTestRecord(mem, 2000, -1)
	if nulls {
		rec.Release()
		rec = plainNullRecord(mem, 2000)
	}
	defer rec.Release()
	// string columns too: dictionary pages and indices (s, u), PLAIN
	// byte arrays (b)
	fields := []int{0, 1, 2, 5, 6, 7, 8}
	schema, ids := plainTestFields(fields...)
	rng := rand.New(rand.NewPCG(38, 1))
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		for _, codec := range []compress.Compression{compress.Codecs.Zstd, compress.Codecs.Snappy, compress.Codecs.Gzip, compress.Codecs.Uncompressed} {
			good := writePlainTest(t, rec, parquet.WithDictionaryDefault(false), parquet.WithDictionaryFor("s", true), parquet.WithDictionaryFor("u", true),
				parquet.WithDataPageVersion(v), parquet.WithCompression(codec),
				parquet.WithDataPageSize(1<<10), parquet.WithMaxRowGroupLength(500), parquet.WithBatchSize(100))
			pr, err := file.NewParquetReader(bytes.NewReader(good))
			if err != nil {
				t.Fatal(err)
			}
			meta := pr.MetaData()
			cols := plainColumns(meta, schema, ids, rec.NumRows(), nulls)
			if cols == nil {
				t.Fatal("refused")
			}
			// the pages' bytes: from the first chunk's first page to the
			// footer
			first, _ := meta.RowGroup(0).ColumnChunk(0)
			lo, hi := first.DataPageOffset(), int64(len(good))-int64(meta.Size())-8
			outcomes := map[string]int{}
			for range 120 {
				b := bytes.Clone(good)
				for range 1 + rng.IntN(4) {
					b[lo+rng.Int64N(hi-lo)] ^= byte(1 + rng.IntN(255))
				}
				for g := range meta.NumRowGroups() {
					func() {
						defer func() {
							if p := recover(); p != nil {
								t.Fatalf("pages v%d, %s, row group %d: panic: %v", v+1, codec, g, p)
							}
						}()
						var got int64
						done, fell, more := plainGroup(context.Background(), meta.RowGroup(g), bytes.NewReader(b), int64(len(b)), g, schema, cols, 300, 300, mem, make([][]byte, len(cols)),
							func(r arrow.RecordBatch, err error) bool {
								if err != nil {
									outcomes["error"]++
									return false
								}
								got += r.NumRows()
								r.Release()
								return true
							})
						switch {
						case got != done:
							t.Fatalf("yielded %d rows, says %d", got, done)
						case fell:
							outcomes["fell back"]++
						case more:
							outcomes["read"]++
						}
					}()
				}
			}
			pr.Close()
			if outcomes["fell back"] == 0 && outcomes["error"] == 0 {
				t.Fatalf("pages v%d, %s: no corruption noticed: %v", v+1, codec, outcomes)
			}
		}
	}
}

// shortReaderAt breaks io.ReaderAt's contract the way a faulty store
// might: reads of more than 100 bytes come back one byte short, with no
// error.
type shortReaderAt struct{ r *bytes.Reader }

func (s shortReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if len(p) > 100 {
		n, err := s.r.ReadAt(p[:len(p)-1], off)
		return n, err
	}
	return s.r.ReadAt(p, off)
}

// TestPlainReadShortRead: a column chunk read short is an error, never
// pages decoded from what a recycled buffer held before.
func TestPlainReadShortRead(t *testing.T) {
	mem := NewBufferPool()
	rec := plainTestRecord(memory.NewGoAllocator(), 2000, -1)
	defer rec.Release()
	schema, ids := plainTestFields(0, 2)
	b := writePlainTest(t, rec, parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithMaxRowGroupLength(1000))
	pr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cols := plainColumns(pr.MetaData(), schema, ids, rec.NumRows(), false)
	if cols == nil {
		t.Fatal("refused")
	}
	var failed error
	_, fell, more := plainGroup(context.Background(), pr.MetaData().RowGroup(0), shortReaderAt{bytes.NewReader(b)}, int64(len(b)), 0, schema, cols, 500, 500, mem, make([][]byte, len(cols)),
		func(r arrow.RecordBatch, err error) bool {
			if err != nil {
				failed = err
				return false
			}
			r.Release()
			t.Fatal("a batch read from a chunk read short")
			return false
		})
	if failed == nil || fell || more || !strings.Contains(failed.Error(), "unexpected EOF") {
		t.Fatalf("a short read gave error %v, fell back %v, went on %v", failed, fell, more)
	}
}

// TestDecodeIndices decodes hand-made RLE/bit-packed hybrid runs, and
// never panics or returns more values than asked on random bytes.
func TestDecodeIndices(t *testing.T) {
	for _, c := range []struct {
		what  string
		b     []byte
		width int
		n     int
		want  []uint32
	}{
		{"a run", []byte{10 << 1, 3}, 2, 10, []uint32{3, 3, 3, 3, 3, 3, 3, 3, 3, 3}},
		{"a run of width 0", []byte{4 << 1}, 0, 4, []uint32{0, 0, 0, 0}},
		{"bit-packed width 0", []byte{1<<1 | 1}, 0, 8, []uint32{0, 0, 0, 0, 0, 0, 0, 0}},
		// 0..7 in 3 bits: 0b10001000, 0b11000110, 0b11111010
		{"bit-packed width 3", []byte{1<<1 | 1, 0x88, 0xc6, 0xfa}, 3, 8, []uint32{0, 1, 2, 3, 4, 5, 6, 7}},
		{"bit-packed, fewer asked", []byte{1<<1 | 1, 0x88, 0xc6, 0xfa}, 3, 5, []uint32{0, 1, 2, 3, 4}},
		{"a run then bit-packed", []byte{2 << 1, 0xff, 0xff, 0xff, 0xff, 1<<1 | 1, 1, 0, 0, 0, 2, 0, 0, 0}, 32, 4, []uint32{math.MaxUint32, math.MaxUint32, 1, 2}},
		{"a run's value past its width", []byte{2 << 1, 9}, 3, 2, nil},
		{"a run of none", []byte{0, 1}, 3, 1, nil},
		{"short", []byte{1<<1 | 1, 0x88}, 3, 8, nil},
		{"empty", nil, 3, 1, nil},
	} {
		got, ok := decodeIndices(c.b, c.width, c.n, nil)
		if ok != (c.want != nil) || ok && !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v", c.what, got, ok, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(39, 2))
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		n := rng.IntN(100)
		got, ok := decodeIndices(b, rng.IntN(33), n, nil)
		if ok && len(got) != n || len(got) > n {
			t.Fatalf("%d values of %d, ok %v", len(got), n, ok)
		}
	}
}

// TestPlainReadStringBatchBytes: batches of long strings hold fewer
// rows (stringRows): with plainStringBatch set to 200 bytes, a read in
// batches of up to 2^20 rows makes batches of about 200 bytes of string
// values, every value read once, in dictionary-encoded and PLAIN chunks.
func TestPlainReadStringBatchBytes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := plainTestRecord(mem, 5000, -1)
	defer rec.Release()
	defer func(v int) { plainStringBatch = v }(plainStringBatch)
	plainStringBatch = 200
	fields := []int{0, 7, 6, 8}
	schema, ids := plainTestFields(fields...)
	var total int64
	for _, c := range fields[1:] {
		total += int64(valueBytes(rec.Column(c)))
	}
	for _, dict := range []bool{true, false} {
		b := writePlainTest(t, rec, parquet.WithDictionaryDefault(false), parquet.WithDictionaryFor("s", dict), parquet.WithDictionaryFor("u", dict),
			parquet.WithDictionaryFor("b", dict), parquet.WithDataPageSize(1<<10), parquet.WithMaxRowGroupLength(700))
		got := readPlain(t, mem, b, schema, ids, rec.NumRows(), 1<<20)
		samePlain(t, fmt.Sprintf("dictionary %v", dict), got, rec, fields)
		most := 0
		for _, b := range got {
			n := 0
			for c := 1; c < 4; c++ {
				n += valueBytes(b.Column(c))
			}
			most = max(most, n)
		}
		if int64(len(got)) < total/400 || most > 3*plainStringBatch {
			t.Errorf("dictionary %v: %d batches for %d bytes of strings, the largest %d bytes; want batches of about %d", dict, len(got), total, most, plainStringBatch)
		}
		releaseBatches(got)
	}
}

// valueBytes is the bytes of a STRING or BINARY array's values.
func valueBytes(a arrow.Array) int {
	o := a.(interface{ ValueOffsets() []int32 })
	offs := o.ValueOffsets()
	return int(offs[a.Len()] - offs[0])
}

// plainNullRecord is rows rows of plainTestSchema with NULLs in its
// optional columns, each its own pattern: id NULL in rows 1000–1599
// (whole pages), x in a tenth of the rows at random, y in half, d in runs
// of 37, ts never, s (a dictionary) in 30%, b (PLAIN) in 5%.
func plainNullRecord(mem memory.Allocator, rows int) arrow.RecordBatch {
	rec := plainTestRecord(mem, rows, -1)
	defer rec.Release()
	rng := rand.New(rand.NewPCG(7, 40))
	null := map[int]func(i int) bool{
		0: func(i int) bool { return i >= 1000 && i < 1600 },
		2: func(int) bool { return rng.IntN(10) == 0 },
		3: func(int) bool { return rng.IntN(2) == 0 },
		4: func(i int) bool { return i/37%3 == 0 },
		6: func(int) bool { return rng.IntN(10) < 3 },
		8: func(int) bool { return rng.IntN(20) == 0 },
	}
	b := array.NewRecordBuilder(mem, rec.Schema())
	defer b.Release()
	for c := range int(rec.NumCols()) {
		col := rec.Column(c)
		for i := range rows {
			if f := null[c]; f != nil && f(i) {
				b.Field(c).AppendNull()
			} else if err := b.Field(c).AppendValueFromString(col.ValueStr(i)); err != nil {
				panic(err)
			}
		}
	}
	return b.NewRecordBatch()
}

// TestPlainReadNulls reads optional columns with NULLs page by page, as a
// query's plain read takes them: whole pages of NULLs, NULLs at random
// and in runs, an optional column without one; fixed-width, dictionary
// and PLAIN strings; V1 and V2 pages, three codecs; batches that cross
// pages and end inside them. Every row group must be read page by page,
// every value and NULL where it was written.
func TestPlainReadNulls(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := plainNullRecord(mem, 5000)
	defer rec.Release()
	fields := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
	schema, ids := plainTestFields(fields...)
	for _, dict := range []bool{true, false} {
		for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
			for _, codec := range []compress.Compression{compress.Codecs.Zstd, compress.Codecs.Snappy, compress.Codecs.Uncompressed} {
				what := fmt.Sprintf("string dictionaries %v, pages v%d, %s", dict, v+1, codec)
				b := writePlainTest(t, rec, parquet.WithDictionaryDefault(false), parquet.WithDictionaryFor("s", dict), parquet.WithDictionaryFor("u", dict),
					parquet.WithDictionaryFor("b", dict), parquet.WithDataPageVersion(v), parquet.WithCompression(codec),
					parquet.WithDataPageSize(1<<10), parquet.WithMaxRowGroupLength(700), parquet.WithBatchSize(100))
				if got := readPlainWith(t, mem, b, schema, ids, rec.NumRows(), 333, false); got != nil {
					releaseBatches(got)
					t.Fatalf("%s: a file whose statistics count NULLs was read page by page without taking NULLs", what)
				}
				var groups, fell int
				TestHookPlainRead = func(rows int64) {
					if rows < 0 {
						fell++
					} else {
						groups++
					}
				}
				for _, size := range []int{50, 333, 1 << 20} {
					groups, fell = 0, 0
					got := readPlainWith(t, mem, b, schema, ids, rec.NumRows(), size, true)
					if got == nil {
						t.Fatalf("%s: plainColumns refused the file", what)
					}
					samePlain(t, fmt.Sprintf("%s, batches of %d", what, size), got, rec, fields)
					releaseBatches(got)
					if groups != 8 || fell != 0 {
						t.Fatalf("%s, batches of %d: %d row groups read page by page, %d through pqarrow; want 8 and 0", what, size, groups, fell)
					}
				}
				TestHookPlainRead = nil
			}
		}
	}
}

// TestDefBitmap: definition levels decoded into a bitmap agree with the
// same bytes decoded as bit-width-1 indices (decodeIndices), on
// hand-made runs and on 20,000 random inputs, which must never panic or
// write past the bitmap.
func TestDefBitmap(t *testing.T) {
	check := func(b []byte, n int) bool {
		out := make([]byte, (n+7)/8+8)
		canary := out[(n+7)/8:]
		for i := range canary {
			canary[i] = 0xA5
		}
		defined, ok := defBitmap(b, n, out)
		for _, c := range canary {
			if c != 0xA5 {
				t.Fatalf("% x (%d levels): wrote past the bitmap", b, n)
			}
		}
		levels, iok := decodeIndices(b, 1, n, nil)
		if ok != (iok && !slices.ContainsFunc(levels, func(l uint32) bool { return l > 1 })) {
			t.Fatalf("% x (%d levels): ok %v, as indices %v %v", b, n, ok, iok, levels)
		}
		if !ok {
			return false
		}
		count := 0
		for i, l := range levels {
			if (l == 1) != bitutil.BitIsSet(out, i) {
				t.Fatalf("% x: level %d is %d, bit %v", b, i, l, bitutil.BitIsSet(out, i))
			}
			count += int(l)
		}
		if count != defined {
			t.Fatalf("% x: %d defined, counted %d", b, defined, count)
		}
		return true
	}
	// a run of 5 ones, 8 bit-packed levels 0b10110010, a run of 3 zeros
	if !check([]byte{10, 1, 3, 0b10110010, 6, 0}, 16) {
		t.Fatal("refused good levels")
	}
	// a level of 2, a run past the input, a bit-packed group missing
	for _, bad := range [][]byte{{10, 2}, {10}, {3}, {}} {
		if check(bad, 5) {
			t.Fatalf("% x: taken", bad)
		}
	}
	rng := rand.New(rand.NewPCG(40, 2))
	taken := 0
	for range 20000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(3) == 0 {
				b[i] &= 0x0f
			}
		}
		if check(b, 1+rng.IntN(40)) {
			taken++
		}
	}
	if taken == 0 {
		t.Fatal("no random input decoded: the check compares nothing")
	}
}
