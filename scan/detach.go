package scan

import (
	"iter"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// StringPartitionSources returns the columns of a batch of schema rec
// that a partition field of any of meta's specs takes a string value
// from (whatever the transform), which a writer detaches first
// (DetachingSeq, DetachingReader). Every spec counts, so
// a spec changed while the write runs is covered too.
//
// iceberg-go's partitioned writer keeps the partition values of the
// first row of each partition it sees, until its files are done, and an
// arrow-go string value is a view of the batch's buffer, not a copy. A
// batch read into ReadBuffers is released (and its buffers recycled)
// while the writer still holds those views: without the copy the data
// file's partition tuple in the manifest became whatever was read into
// the buffer next (a CREATE TABLE … PARTITIONED BY (part) AS SELECT
// recorded partitions ('w2') and ('\xa5\xa5') under the tests' poisoned
// buffers). A column nested in a struct is detached whole.
func StringPartitionSources(meta table.Metadata, rec *arrow.Schema) []int {
	var idx []int
	schema := meta.CurrentSchema()
	for _, spec := range meta.PartitionSpecs() {
		idx = appendStringSources(idx, spec, schema, rec)
	}
	return idx
}

func appendStringSources(idx []int, spec iceberg.PartitionSpec, schema *iceberg.Schema, rec *arrow.Schema) []int {
	for _, pf := range spec.Fields() {
		for _, id := range pf.SourceIDs {
			src, ok := schema.FindFieldByID(id)
			if !ok || !src.Type.Equals(iceberg.PrimitiveTypes.String) {
				continue
			}
			for _, top := range schema.Fields() {
				if top.ID != id && !holdsID(top.Type, id) {
					continue
				}
				for _, i := range rec.FieldIndices(top.Name) {
					if !slices.Contains(idx, i) {
						idx = append(idx, i)
					}
				}
			}
		}
	}
	return idx
}

// holdsID reports whether a nested type contains the field id.
func holdsID(t iceberg.Type, id int) bool {
	nt, ok := t.(iceberg.NestedType)
	if !ok {
		return false
	}
	for _, f := range nt.Fields() {
		if f.ID == id || holdsID(f.Type, id) {
			return true
		}
	}
	return false
}

// detachedColumns is b with the columns at idx copied into plain Go
// memory, as Detached copies them all; it consumes b. With no idx it
// returns b; an index past b's columns is ignored.
func detachedColumns(b arrow.RecordBatch, idx []int) arrow.RecordBatch {
	idx = slices.DeleteFunc(slices.Clone(idx), func(i int) bool { return i < 0 || i >= int(b.NumCols()) })
	if len(idx) == 0 {
		return b
	}
	defer b.Release()
	cols := slices.Clone(b.Columns())
	for _, i := range idx {
		d := detachData(cols[i].Data())
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	out := array.NewRecordBatch(b.Schema(), cols, b.NumRows())
	for _, i := range idx {
		cols[i].Release()
	}
	return out
}

// DetachingSeq is seq, for a write into the table of meta, with each
// batch's StringPartitionSources detached (detachedColumns); it hands on
// seq's errors as they are, and consumes what it detaches as a writer
// would.
func DetachingSeq(meta table.Metadata, seq iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		var sc *arrow.Schema // the schema idx was found for
		var idx []int
		for b, err := range seq {
			if err == nil && b != nil {
				if b.Schema() != sc {
					sc, idx = b.Schema(), StringPartitionSources(meta, b.Schema())
				}
				b = detachedColumns(b, idx)
			}
			if !yield(b, err) {
				return
			}
		}
	}
}

// DetachingReader is r, for a write into the table of meta, with each
// batch's StringPartitionSources detached (detachedColumns), r's batch
// retained first (a reader keeps its own). A batch it returns is valid
// until the next call to Next, as r's are; the last one is let go when
// Next returns false (or by the garbage collector, when the reader is
// dropped before its end). Retain and Release are r's. With nothing to
// detach it is r.
func DetachingReader(meta table.Metadata, r array.RecordReader) array.RecordReader {
	idx := StringPartitionSources(meta, r.Schema())
	if len(idx) == 0 {
		return r
	}
	return &detachingReader{RecordReader: r, idx: idx}
}

type detachingReader struct {
	array.RecordReader
	idx []int
	cur arrow.RecordBatch
}

func (r *detachingReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if !r.RecordReader.Next() {
		return false
	}
	b := r.RecordReader.RecordBatch()
	b.Retain()
	r.cur = detachedColumns(b, r.idx)
	return true
}

func (r *detachingReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch, for the deprecated name.
func (r *detachingReader) Record() arrow.RecordBatch { return r.cur }
