package scan

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// TestPlainReadDictionaries reads string columns asked for as
// dictionaries (plainColumn.dict, for a GROUP BY): a batch whose rows all
// come from dictionary-index pages is a dictionary array of the chunk's
// dictionary; one that meets a PLAIN page (the writer's dictionary
// outgrew its limit) is a plain array, its rows before that page gathered
// from the indices taken. Decoded, every batch must hold the rows
// written, NULLs where they were: with and without NULLs, V1 and V2
// pages, two codecs, batches of 50, 333 and 2^20 rows. Its schema must
// type each column as the array it holds.
func TestPlainReadDictionaries(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	fields := []int{0, 6, 7, 8} // id, s (runs of 5 values), u (about 1,400), b
	schema, ids := plainTestFields(fields...)
	for _, nulls := range []bool{false, true} {
		var rec arrow.RecordBatch
		if nulls {
			rec = plainNullRecord(mem, 5000)
		} else {
			rec = plainTestRecord(mem, 5000, -1)
		}
		for _, limit := range []int64{1 << 20, 2 << 10} {
			for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
				for _, codec := range []compress.Compression{compress.Codecs.Zstd, compress.Codecs.Uncompressed} {
					what := fmt.Sprintf("NULLs %v, dictionary limit %d, pages v%d, %s", nulls, limit, v+1, codec)
					b := writePlainTest(t, rec, parquet.WithDictionaryDefault(false), parquet.WithDictionaryFor("s", true), parquet.WithDictionaryFor("u", true),
						parquet.WithDictionaryFor("b", true), parquet.WithDataPageVersion(v), parquet.WithCompression(codec), parquet.WithDictionaryPageSizeLimit(limit),
						parquet.WithDataPageSize(1<<10), parquet.WithMaxRowGroupLength(700), parquet.WithBatchSize(100))
					for _, size := range []int{50, 333, 1 << 20} {
						dicts, plains := readDictBatches(t, mem, b, schema, ids, rec, fields, size, what)
						// s always fits its dictionary: every batch of it
						// is a dictionary array
						if dicts[1] == 0 || plains[1] != 0 {
							t.Fatalf("%s, batches of %d: column s came as %d dictionary and %d plain arrays; want only dictionaries", what, size, dicts[1], plains[1])
						}
						// u: without a dictionary (arrow-go writes none
						// uncompressed) every batch is plain; past the small
						// limit, PLAIN pages follow each row group's
						// dictionary pages: a batch of a whole row group
						// takes both (gathered as a plain array), batches
						// of 50 rows some of each
						switch hasDict, fallback := dictLayout(t, b, 7); {
						case !hasDict && dicts[2] != 0,
							hasDict && !fallback && plains[2] != 0,
							hasDict && fallback && (plains[2] == 0 || size == 50 && dicts[2] == 0):
							t.Fatalf("%s, batches of %d: column u (dictionary %v, PLAIN pages after it %v) came as %d dictionary and %d plain arrays", what, size, hasDict, fallback, dicts[2], plains[2])
						}
						if limit < 1<<20 && codec != compress.Codecs.Uncompressed {
							if hasDict, fallback := dictLayout(t, b, 7); !hasDict || !fallback {
								t.Fatalf("%s: column u was written with dictionary %v, PLAIN pages after it %v; the test wants both", what, hasDict, fallback)
							}
						}
					}
				}
			}
		}
		rec.Release()
	}
}

// dictLayout reports whether leaf's chunks in the file b have a
// dictionary page, and whether PLAIN data pages follow it.
func dictLayout(t *testing.T, b []byte, leaf int) (hasDict, fallback bool) {
	pr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	for g := range pr.MetaData().NumRowGroups() {
		cc, err := pr.MetaData().RowGroup(g).ColumnChunk(leaf)
		if err != nil {
			t.Fatal(err)
		}
		if !cc.HasDictionaryPage() {
			continue
		}
		hasDict = true
		for _, st := range cc.EncodingStats() {
			if st.Encoding == parquet.Encodings.Plain && strings.HasPrefix(st.PageType.String(), "DATA_PAGE") {
				fallback = true
			}
		}
	}
	return hasDict, fallback
}

// readDictBatches reads the file in b page by page with its string
// columns asked for as dictionaries, checks every batch against rec
// (decoded) and returns, per column, how many batches held a dictionary
// array and how many a plain one.
func readDictBatches(t *testing.T, mem memory.Allocator, b []byte, schema *arrow.Schema, ids []int, rec arrow.RecordBatch, fields []int, size int, what string) (dicts, plains []int) {
	t.Helper()
	src := bytes.NewReader(b)
	pr, err := file.NewParquetReader(src, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cols := plainColumns(pr.MetaData(), schema, ids, rec.NumRows(), true)
	if cols == nil {
		t.Fatalf("%s: plainColumns refused the file", what)
	}
	for i := range cols {
		cols[i].dict = cols[i].width == 0
	}
	dicts, plains = make([]int, len(cols)), make([]int, len(cols))
	var fell int
	TestHookPlainRead = func(rows int64) {
		if rows < 0 {
			fell++
		}
	}
	defer func() { TestHookPlainRead = nil }()
	var decoded []arrow.RecordBatch
	defer func() { releaseBatches(decoded) }()
	for bt, err := range plainBatches(context.Background(), pr, src, int64(len(b)), schema, cols, size, mem) {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		out := make([]arrow.Array, len(cols))
		for i, c := range bt.Columns() {
			if !arrow.TypeEqual(bt.Schema().Field(i).Type, c.DataType()) {
				t.Fatalf("%s: batch field %s is %s, its column %s", what, bt.Schema().Field(i).Name, bt.Schema().Field(i).Type, c.DataType())
			}
			d, ok := c.(*array.Dictionary)
			if !ok {
				if cols[i].dict {
					plains[i]++
				}
				c.Retain()
				out[i] = c
				continue
			}
			dicts[i]++
			if !arrow.TypeEqual(d.Dictionary().DataType(), schema.Field(i).Type) || d.Indices().DataType().ID() != arrow.INT32 {
				t.Fatalf("%s: column %s came as %s", what, schema.Field(i).Name, c.DataType())
			}
			plain, err := compute.TakeArray(context.Background(), d.Dictionary(), d.Indices())
			if err != nil {
				t.Fatal(err)
			}
			out[i] = plain
		}
		decoded = append(decoded, array.NewRecordBatch(schema, out, bt.NumRows()))
		for _, a := range out {
			a.Release()
		}
		bt.Release()
	}
	if fell != 0 {
		t.Fatalf("%s: %d row groups went through pqarrow", what, fell)
	}
	samePlain(t, fmt.Sprintf("%s, batches of %d", what, size), decoded, rec, fields)
	return dicts, plains
}
