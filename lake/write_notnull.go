package lake

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// NOT NULL columns in the Go API's writes. Append, Overwrite, Upsert and
// a RowDelta take records whose Arrow fields may be nullable where the
// table's column is NOT NULL (a SQL result's fields always are). Each
// batch is checked: a NULL in such a column fails the write with 23502,
// as SQL's INSERT does, and otherwise the batch goes on with the field
// marked non-nullable, the layout iceberg-go's writers require. Without
// this, iceberg-go's writer (every partitioned or sorted table) refused a
// nullable field with no NULL in it, and wrote a NULL it was given into
// the NOT NULL column as a value (an empty string read back).

// notNullFields is in with the fields of the table's NOT NULL top-level
// columns (sc) marked non-nullable, and their positions in in; idx is
// empty when no field needs marking.
func notNullFields(sc *iceberg.Schema, in *arrow.Schema) (out *arrow.Schema, idx []int) {
	fields := in.Fields()
	for i, f := range fields {
		tf, ok := sc.FindFieldByName(f.Name)
		if !ok || !tf.Required || !f.Nullable {
			continue
		}
		if !isTopLevel(sc, tf.ID) {
			continue
		}
		fields[i].Nullable = false
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		return in, nil
	}
	md := in.Metadata()
	return arrow.NewSchema(fields, &md), idx
}

func isTopLevel(sc *iceberg.Schema, id int) bool {
	for _, f := range sc.Fields() {
		if f.ID == id {
			return true
		}
	}
	return false
}

// notNullBatch is b with out's layout, or the 23502 error of table name
// when a column idx holds a NULL. The caller releases the batch.
func notNullBatch(name string, b arrow.RecordBatch, out *arrow.Schema, idx []int) (arrow.RecordBatch, error) {
	for _, i := range idx {
		if b.Column(i).NullN() > 0 {
			return nil, &ConstraintError{State: "23502", Msg: fmt.Sprintf("null value in column %q of relation %q violates not-null constraint", out.Field(i).Name, name)}
		}
	}
	return array.NewRecordBatch(out, b.Columns(), b.NumRows()), nil
}

// notNullReader is a reader of records with the NOT NULL check above.
type notNullReader struct {
	array.RecordReader
	name string
	out  *arrow.Schema
	idx  []int
	cur  arrow.RecordBatch
	err  error
}

// checkNotNull wraps r in the NOT NULL check for table name (schema sc),
// or returns r when none of its fields needs it. done releases what the
// wrapper holds; r stays the caller's.
func checkNotNull(name string, sc *iceberg.Schema, r array.RecordReader) (_ array.RecordReader, done func()) {
	out, idx := notNullFields(sc, r.Schema())
	if len(idx) == 0 {
		return r, func() {}
	}
	nr := &notNullReader{RecordReader: r, name: name, out: out, idx: idx}
	return nr, nr.Release
}

func (r *notNullReader) Schema() *arrow.Schema { return r.out }

func (r *notNullReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || !r.RecordReader.Next() {
		return false
	}
	r.cur, r.err = notNullBatch(r.name, r.RecordReader.RecordBatch(), r.out, r.idx)
	return r.err == nil
}

func (r *notNullReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch, for the deprecated name.
func (r *notNullReader) Record() arrow.RecordBatch { return r.cur }

func (r *notNullReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.RecordReader.Err()
}

// Release releases the batch it holds, not the reader it wraps (the
// caller's).
func (r *notNullReader) Release() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

// Retain does nothing: the wrapper lives for one write.
func (r *notNullReader) Retain() {}

// notNullMaterialized applies the check to m's batches in place.
func notNullMaterialized(name string, sc *iceberg.Schema, m *materialized) error {
	out, idx := notNullFields(sc, m.schema)
	if len(idx) == 0 {
		return nil
	}
	for i, b := range m.batches {
		nb, err := notNullBatch(name, b, out, idx)
		if err != nil {
			return err
		}
		b.Release()
		m.batches[i] = nb
	}
	m.schema = out
	return nil
}
