package mergeinto

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
)

// withFirstRowID copies every field a manifest entry carries and sets
// only first_row_id: the Iceberg metrics of a v3 copy-on-write file must
// stay exact.
func TestWithFirstRowIDKeepsTheFile(t *testing.T) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "d", Type: iceberg.PrimitiveTypes.Date})
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "d_month", Transform: iceberg.MonthTransform{}},
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1001, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 4}})
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, "/lake/t/data/f.parquet", iceberg.ParquetFile,
		map[int]any{1000: int32(672), 1001: int32(3)}, map[int]string{1000: "int"}, nil, 123, 4567)
	if err != nil {
		t.Fatal(err)
	}
	b.ColumnSizes(map[int]int64{1: 10, 2: 20}).ValueCounts(map[int]int64{1: 123, 2: 123}).
		NullValueCounts(map[int]int64{1: 0, 2: 4}).NaNValueCounts(map[int]int64{}).
		LowerBoundValues(map[int][]byte{1: {1, 0, 0, 0, 0, 0, 0, 0}}).UpperBoundValues(map[int][]byte{1: {9, 0, 0, 0, 0, 0, 0, 0}}).
		SplitOffsets([]int64{4}).SortOrderID(2).KeyMetadata([]byte{7})
	df := b.Build()

	got, err := withFirstRowID(df, spec, sch, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if id := got.FirstRowID(); id == nil || *id != 1000 {
		t.Fatalf("first_row_id %v, want 1000", id)
	}
	checks := []struct {
		name      string
		want, got any
	}{
		{"path", df.FilePath(), got.FilePath()},
		{"format", df.FileFormat(), got.FileFormat()},
		{"content", df.ContentType(), got.ContentType()},
		{"spec", df.SpecID(), got.SpecID()},
		{"count", df.Count(), got.Count()},
		{"size", df.FileSizeBytes(), got.FileSizeBytes()},
		{"partition", df.Partition(), got.Partition()},
		{"column sizes", df.ColumnSizes(), got.ColumnSizes()},
		{"value counts", df.ValueCounts(), got.ValueCounts()},
		{"null counts", df.NullValueCounts(), got.NullValueCounts()},
		{"lower bounds", df.LowerBoundValues(), got.LowerBoundValues()},
		{"upper bounds", df.UpperBoundValues(), got.UpperBoundValues()},
		{"split offsets", df.SplitOffsets(), got.SplitOffsets()},
		{"sort order", *df.SortOrderID(), *got.SortOrderID()},
		{"key metadata", df.KeyMetadata(), got.KeyMetadata()},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.want, c.got) {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if len(got.Partition()) != 2 || !slices.Equal(slices.Sorted(maps.Keys(got.Partition())), []int{1000, 1001}) {
		t.Errorf("partition %v", got.Partition())
	}
}
