package scan

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
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
		writeTestParquet(t, f, rec, parquet.NewWriterProperties(parquet.WithDictionaryDefault(dict)))
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
// batches (a repeated position counts once), and keepRuns agrees with
// arrow's Filter on strings with NULLs; a batch with a column keepRuns
// does not copy (BOOLEAN) goes through Filter.
func TestDeleteFilterPositions(t *testing.T) {
	for _, withBool := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		fields := []arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		}
		if withBool {
			fields = append(fields, arrow.Field{Name: "b", Type: arrow.FixedWidthTypes.Boolean})
		}
		sc := arrow.NewSchema(fields, nil)
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
				if withBool {
					b.Field(2).(*array.BooleanBuilder).Append(i%3 == 0)
				}
			}
			return b.NewRecordBatch()
		}
		deleted := []int64{0, 4, 5, 5, 6, 9, 10, 19, 19, 21, 29}
		f := &deleteFilter{fd: &fileDeletes{positions: deleted}}
		var ids []int64
		var strs []string
		for _, r := range [][2]int{{0, 10}, {10, 20}, {20, 22}, {22, 30}} {
			out, err := f.apply(context.Background(), mem, batch(r[0], r[1]), false)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < int(out.NumRows()); i++ {
				id := out.Column(0).(*array.Int64).Value(i)
				ids = append(ids, id)
				strs = append(strs, out.Column(1).ValueStr(i))
				if withBool && out.Column(2).(*array.Boolean).Value(i) != (id%3 == 0) {
					t.Fatalf("row %d: b = %v", id, out.Column(2).ValueStr(i))
				}
			}
			out.Release()
		}
		var wantIDs []int64
		var wantStrs []string
		for i := int64(0); i < 30; i++ {
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
			t.Fatalf("bool column %v: kept %v %v, want %v %v", withBool, ids, strs, wantIDs, wantStrs)
		}
		mem.AssertSize(t, 0)
	}
}

// mergePositions agrees with sorting the concatenation and dropping
// repeats, for sorted and unsorted lists, and leaves its inputs alone.
func TestMergePositions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		k := rng.IntN(6)
		var lists [][]int64
		var all []int64
		for range k {
			l := make([]int64, rng.IntN(40))
			for i := range l {
				l[i] = rng.Int64N(60)
			}
			if trial%4 != 0 {
				slices.Sort(l)
			}
			lists = append(lists, l)
			all = append(all, l...)
		}
		before := make([][]int64, len(lists))
		for i, l := range lists {
			before[i] = slices.Clone(l)
		}
		got := mergePositions(lists)
		slices.Sort(all)
		want := slices.Compact(all)
		if k == 1 && slices.IsSorted(lists[0]) {
			want = lists[0] // one sorted list is used as it is, repeats and all
		}
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("trial %d: merged %v, want %v", trial, got, want)
		}
		for i := range lists {
			if !slices.Equal(lists[i], before[i]) {
				t.Fatalf("trial %d: list %d changed", trial, i)
			}
		}
	}
}
