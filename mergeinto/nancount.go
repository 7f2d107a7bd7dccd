package mergeinto

import (
	"iter"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// nanWatch gives the data files of one write a NaN count of 0 for each
// top-level floating-point column that held no NaN.
//
// Neither arrow-go's Parquet statistics nor iceberg-go's metrics count
// NaN, so without it a file's nan_value_counts are empty, and pruning
// cannot leave out a file for x > 5 by its upper bound: a NaN, which the
// engine orders above every number, may hide behind it (scan.PlanFilter
// adds "OR x IS NaN" to such a comparison, and iceberg-go keeps a file
// whose NaN count is unknown).
//
// The watch sees every batch before the writer does and notes, per column,
// whether a NaN has gone by. A file's rows all came from batches the
// writer had taken before it returned the file, so a column without a NaN
// so far has none in that file; one with a NaN so far is left uncounted
// (it may or may not be in this file). NULL slots are checked too: their
// values are unspecified, so a NaN there only costs pruning.
type nanWatch struct {
	tbl   *table.Table
	names []string // the float columns, by name in the table's schema
	ids   []int    // and by field ID
	seen  []atomic.Bool
	// by batch schema: the column of each float column, -1 when absent
	// (a batch laid out otherwise counts as holding NaN)
	cols   []int
	schema *arrow.Schema
}

// newNanWatch returns the watch for a write into tbl, or nil when the
// table has no top-level floating-point column.
func newNanWatch(tbl *table.Table) *nanWatch {
	w := &nanWatch{tbl: tbl}
	for _, f := range tbl.Schema().Fields() {
		switch f.Type.(type) {
		case iceberg.Float32Type, iceberg.Float64Type:
			w.names = append(w.names, f.Name)
			w.ids = append(w.ids, f.ID)
		}
	}
	if len(w.ids) == 0 {
		return nil
	}
	w.seen = make([]atomic.Bool, len(w.ids))
	return w
}

// records is seq, each batch looked at before it is yielded. It runs on
// the writer's one reading goroutine.
func (w *nanWatch) records(seq iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for b, err := range seq {
			if err == nil && b != nil {
				w.look(b)
			}
			if !yield(b, err) {
				return
			}
		}
	}
}

// look notes the NaNs of b's float columns.
func (w *nanWatch) look(b arrow.RecordBatch) {
	if b.Schema() != w.schema {
		w.schema = b.Schema()
		w.cols = w.cols[:0]
		for _, name := range w.names {
			idx := b.Schema().FieldIndices(name)
			if len(idx) != 1 {
				w.cols = append(w.cols, -1)
				continue
			}
			w.cols = append(w.cols, idx[0])
		}
	}
	for k, c := range w.cols {
		if w.seen[k].Load() {
			continue
		}
		if c < 0 || hasNaN(b.Column(c)) {
			w.seen[k].Store(true)
		}
	}
}

// hasNaN reports whether a may hold a NaN: any value (NULL slots too) is
// one, or a is not a plain float array.
func hasNaN(a arrow.Array) bool {
	switch a := a.(type) {
	case *array.Float64:
		return anyNaN(a.Float64Values())
	case *array.Float32:
		return anyNaN(a.Float32Values())
	}
	return true
}

func anyNaN[T float32 | float64](vs []T) bool {
	// an OR of comparisons the compiler keeps branch-free per value
	nan := false
	for _, v := range vs {
		nan = nan || v != v
	}
	return nan
}

// stamp is df with a NaN count of 0 for every float column the watch has
// seen no NaN in and the file holds (its value counts name it); df as it
// is when it cannot be rebuilt (its metrics are only less precise).
func (w *nanWatch) stamp(df iceberg.DataFile) iceberg.DataFile {
	counts := map[int]int64{}
	for id, n := range df.NaNValueCounts() {
		counts[id] = n
	}
	values := df.ValueCounts()
	added := false
	for k, id := range w.ids {
		if _, held := values[id]; !held || w.seen[k].Load() {
			continue
		}
		if _, known := counts[id]; !known {
			counts[id] = 0
			added = true
		}
	}
	if !added {
		return df
	}
	meta := w.tbl.Metadata()
	spec := meta.PartitionSpecByID(int(df.SpecID()))
	if spec == nil {
		return df
	}
	out, err := rebuildDataFile(df, *spec, meta.CurrentSchema(), df.Partition(), func(b *iceberg.DataFileBuilder) {
		b.NaNValueCounts(counts)
		if s := df.SortOrderID(); s != nil {
			b.SortOrderID(*s)
		}
	})
	if err != nil {
		return df
	}
	return out
}

// watchNaN is files, written from records by write, with NaN counts
// stamped (see nanWatch).
func watchNaN(tbl *table.Table, records iter.Seq2[arrow.RecordBatch, error], write func(iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[iceberg.DataFile, error]) iter.Seq2[iceberg.DataFile, error] {
	w := newNanWatch(tbl)
	if w == nil {
		return write(records)
	}
	return func(yield func(iceberg.DataFile, error) bool) {
		for df, err := range write(w.records(records)) {
			if err == nil {
				df = w.stamp(df)
			}
			if !yield(df, err) {
				return
			}
		}
	}
}

// nanFields is a set of field ids, safe for concurrent use: the float
// columns in which some patch of a statement wrote a NaN (or may have).
type nanFields struct {
	mu  sync.Mutex
	ids map[int]bool
}

// note marks id when vals may hold a NaN (see hasNaN).
func (n *nanFields) note(id int, vals ...arrow.Array) {
	for _, a := range vals {
		if hasNaN(a) {
			n.mu.Lock()
			if n.ids == nil {
				n.ids = map[int]bool{}
			}
			n.ids[id] = true
			n.mu.Unlock()
			return
		}
	}
}

func (n *nanFields) has(id int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ids[id]
}

// copyNaNCounts are the NaN counts of a row-group copy of src: 0 for each
// top-level float column of schema that src counts no NaN in, the copy
// holds, and either no patch of the copy rewrote (patched: field ids) or
// no patch of the statement wrote a NaN into; the others are left out.
// A copy's rows are src's, with patched columns' values replaced.
func copyNaNCounts(schema *iceberg.Schema, src, copy iceberg.DataFile, patched map[int]bool, patchNaN *nanFields) map[int]int64 {
	counts := map[int]int64{}
	srcNaN, values := src.NaNValueCounts(), copy.ValueCounts()
	for _, f := range schema.Fields() {
		switch f.Type.(type) {
		case iceberg.Float32Type, iceberg.Float64Type:
		default:
			continue
		}
		if n, known := srcNaN[f.ID]; !known || n != 0 {
			continue
		}
		if _, held := values[f.ID]; !held {
			continue
		}
		if patched[f.ID] && patchNaN.has(f.ID) {
			continue
		}
		counts[f.ID] = 0
	}
	return counts
}
