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
