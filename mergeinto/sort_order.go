package mergeinto

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
)

// WriteKey is one key of a table's declared sort order (ALTER TABLE …
// WRITE ORDERED BY) as writers sort by it: a column, its direction and
// its null order.
type WriteKey struct {
	Column           string
	Desc, NullsFirst bool
}

// WriteOrder is the table's declared sort order as column keys. An
// identity key and an order-preserving transform (year, month, day,
// hour, truncate) sort by their source column, which orders by the
// transform as well; the keys end at the first one that does not
// preserve order (bucket, void), since what follows it could not narrow
// the files. Nil for an unsorted table.
func WriteOrder(meta table.Metadata) []WriteKey {
	order := meta.SortOrder()
	if order.IsUnsorted() {
		return nil
	}
	schema := meta.CurrentSchema()
	var keys []WriteKey
	for _, f := range order.Fields() {
		if len(f.SourceIDs) != 1 || !orderPreserving(f.Transform) {
			break
		}
		field, ok := schema.FindFieldByID(f.SourceIDs[0])
		if !ok {
			break
		}
		keys = append(keys, WriteKey{Column: field.Name, Desc: f.Direction == table.SortDESC, NullsFirst: f.NullOrder == table.NullsFirst})
	}
	return keys
}

// orderPreserving reports whether sorting by a column sorts by t of it.
func orderPreserving(t iceberg.Transform) bool {
	switch t.(type) {
	case iceberg.IdentityTransform, iceberg.YearTransform, iceberg.MonthTransform, iceberg.DayTransform,
		iceberg.HourTransform, iceberg.TruncateTransform:
		return true
	}
	return false
}

// WriteSortKeys are WriteOrder's keys over the columns of schema, by name
// (compaction and MERGE's inserted rows sort by them).
func WriteSortKeys(meta table.Metadata, schema *arrow.Schema) []exec.SortKey {
	var keys []exec.SortKey
	for _, k := range WriteOrder(meta) {
		idx := schema.FieldIndices(k.Column)
		if len(idx) != 1 {
			break
		}
		keys = append(keys, exec.SortKey{Expr: &exec.Column{Index: idx[0], Type: schema.Field(idx[0]).Type}, Descending: k.Desc, NullsFirst: k.NullsFirst})
	}
	return keys
}

// sortBatches sorts batches (which it takes over) by keys, returning
// the sorted batches.
func sortBatches(ctx context.Context, schema *arrow.Schema, batches []arrow.RecordBatch, keys []exec.SortKey, opts exec.SortOptions) ([]arrow.RecordBatch, error) {
	src, err := exec.NewValues(schema, batches)
	if err != nil {
		releaseBatches(batches)
		return nil, err
	}
	op, err := exec.NewSort(src, keys, opts)
	if err != nil {
		src.Close()
		return nil, err
	}
	defer op.Close()
	if err := op.Open(ctx); err != nil {
		return nil, err
	}
	var out []arrow.RecordBatch
	for {
		b, err := op.Next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			releaseBatches(out)
			return nil, err
		}
		out = append(out, b)
	}
}
