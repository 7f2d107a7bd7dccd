package scan

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
)

// A position delete file naming several data files (the table tests'
// MERGE writes one file per data file, which takes the single-path
// branch) is grouped by path, whether file_path is stored plainly or as a
// dictionary, and unsorted positions come out sorted for the task.
func TestReadPositionsSeveralPaths(t *testing.T) {
	rows := []struct {
		path string
		pos  int64
	}{{"a.parquet", 3}, {"a.parquet", 1}, {"b.parquet", 7}, {"a.parquet", 9}, {"c.parquet", 0}, {"b.parquet", 2}}
	for _, dict := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "del.parquet")
		sc := arrow.NewSchema([]arrow.Field{
			{Name: "file_path", Type: arrow.BinaryTypes.String},
			{Name: "pos", Type: arrow.PrimitiveTypes.Int64},
		}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for _, r := range rows {
			b.Field(0).(*array.StringBuilder).Append(r.path)
			b.Field(1).(*array.Int64Builder).Append(r.pos)
		}
		rec := b.NewRecordBatch()
		b.Release()
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(parquet.WithDictionaryDefault(dict)), pqarrow.DefaultWriterProps())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		bld, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentPosDeletes, path, iceberg.ParquetFile, nil, nil, nil, int64(len(rows)), st.Size())
		if err != nil {
			t.Fatal(err)
		}
		df := bld.Build()
		x := newDeleteIndex(iceio.LocalFS{}, memory.DefaultAllocator, iceberg.NewSchema(0), nil)
		got, err := x.readPositions(context.Background(), df)
		if err != nil {
			t.Fatalf("dictionary %v: %v", dict, err)
		}
		want := map[string][]int64{"a.parquet": {3, 1, 9}, "b.parquet": {7, 2}, "c.parquet": {0}}
		if len(got) != len(want) {
			t.Fatalf("dictionary %v: %v, want %v", dict, got, want)
		}
		for p, ps := range want {
			if !slices.Equal(got[p], ps) {
				t.Fatalf("dictionary %v: %s has %v, want %v", dict, p, got[p], ps)
			}
		}
	}
}

// The filter drops exactly the rows at the deleted positions, across
// batches, and keepRuns agrees with arrow's Filter on strings with NULLs.
func TestDeleteFilterPositions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	batch := func(lo, hi int) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, sc)
		defer b.Release()
		for i := lo; i < hi; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			if i%5 == 0 {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(string(rune('a' + i%26)))
			}
		}
		return b.NewRecordBatch()
	}
	deleted := []int64{0, 4, 5, 6, 9, 10, 19}
	f := &deleteFilter{fd: &fileDeletes{positions: deleted}}
	var ids []int64
	var strs []string
	for _, r := range [][2]int{{0, 10}, {10, 20}} {
		out, err := f.apply(context.Background(), mem, batch(r[0], r[1]))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < int(out.NumRows()); i++ {
			ids = append(ids, out.Column(0).(*array.Int64).Value(i))
			strs = append(strs, out.Column(1).ValueStr(i))
		}
		out.Release()
	}
	var wantIDs []int64
	var wantStrs []string
	for i := int64(0); i < 20; i++ {
		if !slices.Contains(deleted, i) {
			wantIDs = append(wantIDs, i)
			if i%5 == 0 {
				wantStrs = append(wantStrs, array.NullValueStr)
			} else {
				wantStrs = append(wantStrs, string(rune('a'+i%26)))
			}
		}
	}
	if !slices.Equal(ids, wantIDs) || !slices.Equal(strs, wantStrs) {
		t.Fatalf("kept %v %v, want %v %v", ids, strs, wantIDs, wantStrs)
	}
}
