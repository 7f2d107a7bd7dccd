package scan

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// The columns a writer detaches are those a partition field takes a
// string from, whatever the transform, a struct holding one whole; an
// integer source or a string no field uses is left in place.
func TestStringPartitionSources(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "note", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "meta", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "city", Type: iceberg.PrimitiveTypes.String},
		}}},
	)
	rec := arrow.NewSchema([]arrow.Field{
		{Name: "note", Type: arrow.BinaryTypes.String},
		{Name: "meta", Type: arrow.StructOf(arrow.Field{Name: "city", Type: arrow.BinaryTypes.String})},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "region", Type: arrow.BinaryTypes.String},
	}, nil)
	cases := []struct {
		fields []iceberg.PartitionField
		want   []int
	}{
		{nil, nil},
		{[]iceberg.PartitionField{{SourceIDs: []int{1}, FieldID: 1000, Name: "b", Transform: iceberg.BucketTransform{NumBuckets: 4}}}, nil},
		{[]iceberg.PartitionField{{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}}}, []int{3}},
		{[]iceberg.PartitionField{
			{SourceIDs: []int{1}, FieldID: 1000, Name: "b", Transform: iceberg.BucketTransform{NumBuckets: 4}},
			{SourceIDs: []int{5}, FieldID: 1001, Name: "city", Transform: iceberg.TruncateTransform{Width: 2}},
		}, []int{1}},
	}
	for i, c := range cases {
		spec := iceberg.NewPartitionSpec(c.fields...)
		meta, err := table.NewMetadata(sc, &spec, table.UnsortedSortOrder, "/tmp/t", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := StringPartitionSources(meta, rec); !slices.Equal(got, c.want) {
			t.Errorf("case %d: detach %v, want %v", i, got, c.want)
		}
	}
}

// A detached column keeps its strings after the batch it came from is
// released and its pooled buffers recycled (poisoned under go test),
// through the reader and the sequence alike.
func TestDetachingOutlivesThePool(t *testing.T) {
	p := NewBufferPool()
	sc := arrow.NewSchema([]arrow.Field{{Name: "part", Type: arrow.BinaryTypes.String}, {Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
	isc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "part", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 2, Name: "n", Type: iceberg.PrimitiveTypes.Int64},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "part", Transform: iceberg.IdentityTransform{}})
	meta, err := table.NewMetadata(isc, &spec, table.UnsortedSortOrder, "/tmp/t", nil)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(s string, n int) arrow.RecordBatch {
		sb := array.NewStringBuilder(p)
		nb := array.NewInt64Builder(p)
		for i := range n {
			sb.Append(s)
			nb.Append(int64(i))
		}
		a, b := sb.NewArray(), nb.NewArray()
		sb.Release()
		nb.Release()
		rec := array.NewRecordBatch(sc, []arrow.Array{a, b}, int64(n))
		a.Release()
		b.Release()
		return rec
	}
	for _, viaSeq := range []bool{false, true} {
		in := []arrow.RecordBatch{batch("alpha", 5000), batch("beta", 5000)}
		var kept []string // views, as iceberg-go keeps a partition value
		if viaSeq {
			seq := func(yield func(arrow.RecordBatch, error) bool) {
				for _, b := range in {
					if !yield(b, nil) {
						return
					}
				}
			}
			for b, err := range DetachingSeq(meta, seq) {
				if err != nil {
					t.Fatal(err)
				}
				kept = append(kept, b.Column(0).(*array.String).Value(0))
				b.Release() // as a writer releases what it consumes
			}
		} else {
			src, err := array.NewRecordReader(sc, in)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range in {
				b.Release()
			}
			r := DetachingReader(meta, src)
			for r.Next() {
				kept = append(kept, r.RecordBatch().Column(0).(*array.String).Value(0))
			}
			src.Release() // frees (and poisons) every pooled buffer of the input
		}
		for range 4 {
			junk := batch("zzzzzzzz", 5000) // reuses them
			defer junk.Release()
		}
		if !slices.Equal(kept, []string{"alpha", "beta"}) {
			t.Fatalf("through the sequence %v: partition values became %q", viaSeq, kept)
		}
	}
}
