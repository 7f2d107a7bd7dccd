package mergeinto

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
)

// TestWriteRowGroupFileMatchesPqarrow writes the same row group with
// writeRowGroupFile and with pqarrow's WriteTable (what encodePatch did
// before) and requires the two files to be byte for byte the same: the
// pages, their encodings and statistics, the column chunks' statistics.
// The string columns come as dictChunks makes them (NULLs, chunks that
// use a few of the values, a required column); as chunks over a
// dictionary holding values no row uses, whose statistics must leave
// those out; and as chunks over different dictionaries, and over a
// dictionary that repeats a value, where pqarrow falls back to plain
// encoding. (arrow-go sizes dictionary pages by the raw bytes of the
// values put, which writing indices does not count: these columns come
// out as one page each, whose statistics are the chunk's.)
func TestWriteRowGroupFileMatchesPqarrow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	field := func(name string, typ arrow.DataType, nullable bool, id int) arrow.Field {
		return arrow.Field{Name: name, Type: typ, Nullable: nullable, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})}
	}
	strs := func(n, distinct, first int, nulls bool) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for i := range n {
			if nulls && i%5 == 2 {
				b.AppendNull()
			} else {
				b.Append(fmt.Sprintf("v%03d", first+(i*7)%distinct))
			}
		}
		return b.NewArray()
	}
	ints := func(n int) arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := range n {
			if i%9 == 4 {
				b.AppendNull()
			} else {
				b.Append(int64(i * 31))
			}
		}
		return b.NewArray()
	}
	dict := func(vals ...string) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.AppendValues(vals, nil)
		return b.NewArray()
	}
	const chunk = 3000
	cases := []struct {
		name   string
		direct int                    // chunks writeRowGroupFile must write itself
		chunks func() [][]arrow.Array // per column
	}{
		{"one dictionary", 6, func() [][]arrow.Array {
			// the chunks use values 0-39, 10-19 and 30-59 of one dictionary
			a := []arrow.Array{strs(chunk, 40, 0, true), strs(chunk, 10, 10, true), strs(chunk, 30, 30, true)}
			defer releaseAll(a)
			dc, ok := dictChunks(mem, a, 1<<20)
			if !ok {
				t.Fatal("dictChunks declined")
			}
			b := []arrow.Array{strs(chunk, 3, 0, false), strs(chunk, 2, 1, false), strs(chunk, 1, 0, false)}
			defer releaseAll(b)
			dr, ok := dictChunks(mem, b, 1<<20)
			if !ok {
				t.Fatal("dictChunks declined")
			}
			return [][]arrow.Array{dc, dr, {ints(chunk), ints(chunk), ints(chunk)}}
		}},
		{"a dictionary wider than its chunks", 2, func() [][]arrow.Array {
			// the statistics must hold b..c, the values the rows use
			b := array.NewInt32Builder(mem)
			defer b.Release()
			b.AppendValues([]int32{1, 2, 2}, nil)
			i1 := b.NewArray()
			b.AppendValues([]int32{2, 1, 1}, []bool{true, false, true})
			i2 := b.NewArray()
			d := dict("a", "b", "c", "d")
			defer releaseAll([]arrow.Array{i1, i2, d})
			dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
			return [][]arrow.Array{{array.NewDictionaryArray(dt, i1, d), array.NewDictionaryArray(dt, i2, d)}, {strs(3, 2, 0, false), strs(3, 2, 0, false)}, {ints(3), ints(3)}}
		}},
		{"different dictionaries", 1, func() [][]arrow.Array {
			idx := func(vals ...int32) arrow.Array {
				b := array.NewInt32Builder(mem)
				defer b.Release()
				b.AppendValues(vals, nil)
				return b.NewArray()
			}
			dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
			d1, d2 := dict("a", "b"), dict("b", "c")
			i1, i2 := idx(0, 1, 1, 0), idx(1, 1, 0, 0)
			defer releaseAll([]arrow.Array{d1, d2, i1, i2})
			return [][]arrow.Array{{array.NewDictionaryArray(dt, i1, d1), array.NewDictionaryArray(dt, i2, d2)}, {strs(4, 2, 0, false), strs(4, 2, 0, false)}, {ints(4), ints(4)}}
		}},
		{"a repeated value", 0, func() [][]arrow.Array {
			b := array.NewInt32Builder(mem)
			defer b.Release()
			b.AppendValues([]int32{0, 1, 2, 2, 1}, nil)
			i := b.NewArray()
			d := dict("x", "y", "x")
			defer releaseAll([]arrow.Array{i, d})
			dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
			return [][]arrow.Array{{array.NewDictionaryArray(dt, i, d)}, {strs(5, 2, 0, false)}, {ints(5)}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			chunks := c.chunks()
			rows := int64(0)
			for _, a := range chunks[0] {
				rows += int64(a.Len())
			}
			fields := []arrow.Field{
				field("s", chunks[0][0].DataType(), true, 3),
				field("r", chunks[1][0].DataType(), false, 4),
				field("n", arrow.PrimitiveTypes.Int64, true, 5),
			}
			cols := make([]arrow.Column, len(fields))
			chunked := make([]*arrow.Chunked, len(fields))
			for k := range fields {
				chunked[k] = arrow.NewChunked(fields[k].Type, chunks[k])
				cols[k] = *arrow.NewColumn(fields[k], chunked[k])
				releaseAll(chunks[k])
			}
			defer func() {
				for k := range cols {
					cols[k].Release()
					chunked[k].Release()
				}
			}()
			sc := arrow.NewSchema(fields, nil)
			// pages of at most 1000 rows: several pages in each chunk
			props := writerProps(iceberg.Properties{"write.parquet.page-row-limit": "1000", "write.parquet.page-size-bytes": "512"}, fields, rows)
			aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem))
			if !flatColumns(fields) {
				t.Fatal("flatColumns refused flat columns")
			}
			var got, want bytes.Buffer
			direct, err := writeRowGroupFile(context.Background(), &got, sc, chunked, props, aprops)
			if err != nil {
				t.Fatal(err)
			}
			if direct != c.direct {
				t.Errorf("%d dictionary chunks written directly, want %d", direct, c.direct)
			}
			if err := writeTableFile(&want, sc, cols, rows, props, aprops); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				describe := func(b []byte) string {
					pr, err := file.NewParquetReader(bytes.NewReader(b))
					if err != nil {
						return err.Error()
					}
					defer pr.Close()
					var out string
					rg := pr.MetaData().RowGroup(0)
					for k := range fields {
						cc, _ := rg.ColumnChunk(k)
						st, _ := cc.Statistics()
						out += fmt.Sprintf("\n  %s: %v values, encodings %v, stats %v", fields[k].Name, cc.NumValues(), cc.Encodings(), st)
					}
					return out
				}
				first := 0
				for first < min(got.Len(), want.Len()) && got.Bytes()[first] == want.Bytes()[first] {
					first++
				}
				t.Logf("first difference at byte %d", first)
				if pr, err := file.NewParquetReader(bytes.NewReader(want.Bytes())); err == nil {
					t.Logf("pqarrow kv %v; ours:", pr.MetaData().KeyValueMetadata())
					pr.Close()
				}
				if pr, err := file.NewParquetReader(bytes.NewReader(got.Bytes())); err == nil {
					t.Logf("ours kv %v", pr.MetaData().KeyValueMetadata())
					pr.Close()
				}
				t.Fatalf("the files differ (%d and %d bytes):\nwriteRowGroupFile:%s\npqarrow:%s", got.Len(), want.Len(), describe(got.Bytes()), describe(want.Bytes()))
			}
		})
	}
}

// TestBufferedFileWriterMatchesPqarrow drives bufferedFileWriter and
// pqarrow's FileWriter with the same calls a directFile makes (batches
// dictionary-encoded by stringDict, a new row group once the open one
// holds enough bytes) and requires the same file, byte for byte: row
// groups split where a batch passes the row limit, a dictionary that
// grows and one that starts again (where pqarrow falls back to plain),
// a batch with an empty string (whose dictionary repeats a value), NULLs,
// and the schema's metadata as the file's key-value metadata.
func TestBufferedFileWriterMatchesPqarrow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	idMeta := func(id int) arrow.Metadata {
		return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})
	}
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	layout := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: idMeta(1)},
		{Name: "s", Type: dt, Nullable: true, Metadata: idMeta(2)},
		{Name: "r", Type: dt, Metadata: idMeta(3)},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: idMeta(4)},
	}, func() *arrow.Metadata { m := arrow.NewMetadata([]string{"k1", "k2"}, []string{"v1", "v2"}); return &m }())
	// s's dictionary grows batch by batch and, past 40 bytes, starts
	// again; r's holds two values, then an empty string arrives
	sd, rd := newStringDict(mem, 40), newStringDict(mem, 1<<20)
	defer sd.release()
	defer rd.release()
	batch := func(b, n int) arrow.RecordBatch {
		ib := array.NewInt64Builder(mem)
		sb := array.NewStringBuilder(mem)
		rb := array.NewStringBuilder(mem)
		vb := array.NewFloat64Builder(mem)
		defer ib.Release()
		defer sb.Release()
		defer rb.Release()
		defer vb.Release()
		for i := range n {
			ib.Append(int64(b*10_000 + i))
			if i%6 == 1 {
				sb.AppendNull()
				vb.AppendNull()
			} else {
				sb.Append(fmt.Sprintf("s%d", (b+i%3)%9))
				vb.Append(float64(i) / 4)
			}
			switch {
			case b == 4 && i == 7:
				rb.Append("")
			default:
				rb.Append([]string{"a", "b"}[i%2])
			}
		}
		ia, sa, ra, va := ib.NewArray(), sb.NewArray(), rb.NewArray(), vb.NewArray()
		defer releaseAll([]arrow.Array{ia, sa, ra, va})
		se := sd.encode(sa.(*array.String))
		re := rd.encode(ra.(*array.String))
		defer se.Release()
		defer re.Release()
		return array.NewRecordBatch(layout, []arrow.Array{ia, se, re, va}, int64(n))
	}
	var batches []arrow.RecordBatch
	for b, n := range []int{700, 1500, 3000, 200, 900, 2600, 50} {
		batches = append(batches, batch(b, n))
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	if sd.restarts == 0 {
		t.Fatal("the s dictionary never started again: the test misses that path")
	}
	props := writerProps(iceberg.Properties{"write.parquet.page-row-limit": "500", "write.parquet.page-size-bytes": "2048"}, layout.Fields(), 2500)
	aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem))
	const groupBytes = 6000
	var got, want bytes.Buffer
	ours, err := newBufferedFileWriter(context.Background(), &got, layout, props, aprops)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := pqarrow.NewFileWriter(layout, &want, props, aprops)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if ours.RowGroupTotalBytesWritten() >= groupBytes {
			if err := ours.NewBufferedRowGroupChecked(); err != nil {
				t.Fatal(err)
			}
		}
		if theirs.RowGroupTotalBytesWritten() >= groupBytes {
			if err := theirs.NewBufferedRowGroupChecked(); err != nil {
				t.Fatal(err)
			}
		}
		if err := ours.WriteBuffered(b); err != nil {
			t.Fatal(err)
		}
		if err := theirs.WriteBuffered(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := ours.Close(); err != nil {
		t.Fatal(err)
	}
	if err := theirs.Close(); err != nil {
		t.Fatal(err)
	}
	if ours.direct == 0 {
		t.Fatal("no dictionary chunk was written directly")
	}
	md, err := ours.FileMetadata()
	if err != nil {
		t.Fatal(err)
	}
	if md.NumRowGroups() < 3 {
		t.Fatalf("%d row groups: the test misses the splits", md.NumRowGroups())
	}
	// The same row groups, values, encodings and NULL counts; the same
	// bounds, except where pqarrow's are wider than the values: its
	// distinct-indices pass counts a NULL as a value, and when that
	// makes the count equal the dictionary's length it takes the whole
	// dictionary as used. Ours must then be the values' exact bounds.
	gr, wr := readBack(t, got.Bytes()), readBack(t, want.Bytes())
	if len(gr) != len(wr) {
		t.Fatalf("%d row groups, pqarrow %d", len(gr), len(wr))
	}
	wider := 0
	for g := range gr {
		for k := range layout.NumFields() {
			o, p := gr[g][k], wr[g][k]
			if o.values != p.values || o.encodings != p.encodings || o.nulls != p.nulls || o.rows != p.rows {
				t.Fatalf("row group %d column %s: ours %+v, pqarrow %+v", g, layout.Field(k).Name, o, p)
			}
			if o.min == p.min && o.max == p.max {
				continue
			}
			if o.min != o.exactMin || o.max != o.exactMax || p.min > o.min || p.max < o.max {
				t.Fatalf("row group %d column %s: bounds %q..%q, pqarrow's %q..%q, the values' %q..%q", g, layout.Field(k).Name, o.min, o.max, p.min, p.max, o.exactMin, o.exactMax)
			}
			wider++
		}
	}
	gt, wt := readTable(t, got.Bytes()), readTable(t, want.Bytes())
	defer gt.Release()
	defer wt.Release()
	for k := range layout.NumFields() {
		if !array.ChunkedEqual(gt.Column(k).Data(), wt.Column(k).Data()) {
			t.Fatalf("column %s reads back differently", layout.Field(k).Name)
		}
	}
	if wider == 0 && !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("the files differ though every bound agrees")
	}
	t.Logf("%d row groups, %d dictionary chunks written directly, %d column chunks where pqarrow's bounds are wider", md.NumRowGroups(), ours.direct, wider)
}

// chunkFacts are a column chunk's metadata and its values' exact bounds.
type chunkFacts struct {
	rows, values, nulls int64
	encodings           string
	min, max            string // the chunk's statistics, as text
	exactMin, exactMax  string // of the values read back
}

// readBack returns, per row group and column of a Parquet file, its
// chunk's metadata and, for a string column, its values' exact bounds.
func readBack(t *testing.T, b []byte) [][]chunkFacts {
	t.Helper()
	pr, fr := openParquet(t, b)
	defer pr.Close()
	md := pr.MetaData()
	out := make([][]chunkFacts, md.NumRowGroups())
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		for k := range md.Schema.NumColumns() {
			cc, err := rg.ColumnChunk(k)
			if err != nil {
				t.Fatal(err)
			}
			st, err := cc.Statistics()
			if err != nil || st == nil {
				t.Fatalf("row group %d column %d: no statistics (%v)", g, k, err)
			}
			f := chunkFacts{rows: rg.NumRows(), values: cc.NumValues(), nulls: st.NullCount(), encodings: fmt.Sprint(cc.Encodings()),
				min: string(st.EncodeMin()), max: string(st.EncodeMax())}
			col, err := fr.ReadRowGroups(context.Background(), []int{k}, []int{g})
			if err != nil {
				t.Fatal(err)
			}
			first := true
			for _, a := range col.Column(0).Data().Chunks() {
				for i := range a.Len() {
					if a.IsNull(i) {
						continue
					}
					c, ok := a.(*array.String)
					if !ok {
						continue
					}
					v := c.Value(i)
					if first || v < f.exactMin {
						f.exactMin = v
					}
					if first || v > f.exactMax {
						f.exactMax = v
					}
					first = false
				}
			}
			col.Release()
			out[g] = append(out[g], f)
		}
	}
	return out
}

// readTable reads a Parquet file whole.
func readTable(t *testing.T, b []byte) arrow.Table {
	t.Helper()
	pr, fr := openParquet(t, b)
	defer pr.Close()
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// openParquet opens a Parquet file held in b, and an Arrow reader of it.
func openParquet(t *testing.T, b []byte) (*file.Reader, *pqarrow.FileReader) {
	t.Helper()
	pr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 1 << 20}, memory.DefaultAllocator)
	if err != nil {
		pr.Close()
		t.Fatal(err)
	}
	return pr, fr
}
