package lake

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// The Go API's records, conformed to the table. Append, Overwrite, Upsert
// and a RowDelta take records built by the caller, whose Arrow layout
// may differ from the table's: columns in another order or missing, a
// narrower type (int32 for a BIGINT, a millisecond timestamp, a large
// string), or fields nullable where the column is NOT NULL (a SQL
// result's always are). Each batch is conformed before any writer sees
// it:
//   - the columns come in the table's order, the missing ones as NULLs
//     (an append; an equality delete keeps only the columns it has);
//   - a column of another type is cast to the table's where the type
//     widens losslessly (Iceberg's promotions, and the Arrow types of
//     one Iceberg type); timestamps of other units are cast to
//     microseconds, finer digits cut as iceberg-go's writer cut them.
//     Any other type, or a value out of range, fails the write with a
//     message naming the column;
//   - a NULL in a NOT NULL column fails the write with 23502, as SQL's
//     INSERT does, and the field is marked non-nullable, as iceberg-go's
//     writer requires.
//
// iceberg-go's writer (every partitioned or sorted table) otherwise
// computed partition values from the records as given: an int32 column
// under a bucket transform made it panic on a goroutine, which took the
// process down; it refused a nullable field for a NOT NULL column even
// without a NULL; and it wrote a NULL into a NOT NULL column as a value.

// conformer maps records of one Arrow layout onto the table's.
type conformer struct {
	name string
	out  *arrow.Schema
	src  []int            // per out column: the input column, or -1 for NULLs
	cast []arrow.DataType // per out column: the type to cast to, or nil
	req  []bool           // per out column: NOT NULL
	same bool             // records need nothing done
}

// newConformer plans the conforming of records in into table name
// (schema sc). With fill, the table's columns missing from in come as
// NULLs (a write of whole rows); without, only in's columns are kept, in
// the table's order (equality-delete keys).
func newConformer(name string, sc *iceberg.Schema, in *arrow.Schema, fill bool) (*conformer, error) {
	layout, err := table.SchemaToArrowSchema(sc, nil, false, false)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, f := range in.Fields() {
		if seen[f.Name] {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("column %q appears twice in the records", f.Name)}
		}
		seen[f.Name] = true
	}
	c := &conformer{name: name}
	var fields []arrow.Field
	for i, tf := range sc.Fields() {
		want := layout.Field(i)
		j := -1
		if idx := in.FieldIndices(tf.Name); len(idx) == 1 {
			j = idx[0]
		}
		if j < 0 && !fill {
			continue
		}
		f := want
		var cast arrow.DataType
		if j >= 0 {
			got := in.Field(j).Type
			switch {
			case arrow.TypeEqual(got, want.Type):
			case !primitive(want.Type) || !primitive(got):
				// nested columns go on as they come: the writers check them
				f.Type = got
			case convertsLosslessly(got, want.Type):
				cast = want.Type
			default:
				return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("column %q is %s in the records, which does not convert to the table's %s without loss; cast it first", tf.Name, got, tf.Type)}
			}
		}
		f.Nullable = !tf.Required
		f.Metadata = arrow.Metadata{}
		fields = append(fields, f)
		c.src = append(c.src, j)
		c.cast = append(c.cast, cast)
		c.req = append(c.req, tf.Required)
	}
	c.out = arrow.NewSchema(fields, nil)
	c.same = len(fields) == in.NumFields()
	for k, f := range fields {
		if c.src[k] != k || c.cast[k] != nil || (c.req[k] && in.Field(k).Nullable) || !arrow.TypeEqual(f.Type, in.Field(k).Type) {
			c.same = false
			break
		}
	}
	return c, nil
}

func primitive(t arrow.DataType) bool {
	switch t.(type) {
	case arrow.NestedType, arrow.ExtensionType:
		return false
	}
	return true
}

// convertsLosslessly reports whether Arrow type from converts to the
// table's Arrow type to without changing a value: for every value, or
// (an unsigned integer into a signed one of its width) failing the cast
// on the value that does not fit. A timestamp's or time's digits past the
// microsecond are cut.
func convertsLosslessly(from, to arrow.DataType) bool {
	if d, ok := from.(*arrow.DictionaryType); ok {
		return arrow.TypeEqual(d.ValueType, to) || convertsLosslessly(d.ValueType, to)
	}
	switch to.ID() {
	case arrow.INT64:
		switch from.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
			return true // UINT64's values past int64 fail the cast
		}
	case arrow.INT32:
		switch from.ID() {
		case arrow.INT8, arrow.INT16, arrow.UINT8, arrow.UINT16, arrow.UINT32:
			return true
		}
	case arrow.FLOAT64:
		return from.ID() == arrow.FLOAT32 || from.ID() == arrow.FLOAT16
	case arrow.FLOAT32:
		return from.ID() == arrow.FLOAT16
	case arrow.STRING:
		return from.ID() == arrow.LARGE_STRING || from.ID() == arrow.STRING_VIEW
	case arrow.BINARY:
		return from.ID() == arrow.LARGE_BINARY || from.ID() == arrow.BINARY_VIEW
	case arrow.DATE32:
		return from.ID() == arrow.DATE64
	case arrow.TIMESTAMP:
		f, ok := from.(*arrow.TimestampType)
		// a zone on both or on neither: an instant is not a local time
		return ok && (f.TimeZone == "") == (to.(*arrow.TimestampType).TimeZone == "")
	case arrow.TIME64:
		return from.ID() == arrow.TIME32 || from.ID() == arrow.TIME64
	case arrow.DECIMAL128:
		t := to.(*arrow.Decimal128Type)
		if f, ok := from.(*arrow.Decimal128Type); ok {
			return f.Scale == t.Scale && f.Precision <= t.Precision
		}
		// an integer, where its every value has room
		digits := map[arrow.Type]int32{arrow.INT8: 3, arrow.INT16: 5, arrow.INT32: 10, arrow.INT64: 19,
			arrow.UINT8: 3, arrow.UINT16: 5, arrow.UINT32: 10, arrow.UINT64: 20}[from.ID()]
		return digits > 0 && t.Precision-t.Scale >= digits
	}
	return false
}

// batch is b conformed (a new reference for the caller to release), or
// the write's error.
func (c *conformer) batch(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if c.same {
		b.Retain()
		return b, nil
	}
	n := b.NumRows()
	cols := make([]arrow.Array, len(c.src))
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for k, j := range c.src {
		f := c.out.Field(k)
		switch {
		case j < 0:
			if c.req[k] {
				return nil, c.notNull(f.Name)
			}
			cols[k] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, int(n))
			continue
		case c.cast[k] != nil:
			opts := compute.SafeCastOptions(c.cast[k])
			opts.AllowTimeTruncate = true
			a, err := compute.CastArray(ctx, b.Column(j), opts)
			if err != nil {
				return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("column %q: %s to %s: %w", f.Name, b.Column(j).DataType(), c.cast[k], err)}
			}
			cols[k] = a
		default:
			cols[k] = b.Column(j)
			cols[k].Retain()
		}
		if c.req[k] && cols[k].NullN() > 0 {
			return nil, c.notNull(f.Name)
		}
	}
	return array.NewRecordBatch(c.out, cols, n), nil
}

func (c *conformer) notNull(col string) error {
	return &ConstraintError{State: "23502", Msg: fmt.Sprintf("null value in column %q of relation %q violates not-null constraint", col, c.name)}
}

// conformReader is a reader of records conformed by c.
type conformReader struct {
	array.RecordReader
	ctx context.Context
	c   *conformer
	cur arrow.RecordBatch
	err error
}

// conformed wraps r so that its batches come conformed to table name
// (schema sc), with missing columns as NULLs. done releases what the
// wrapper holds; r stays the caller's.
func conformed(ctx context.Context, name string, sc *iceberg.Schema, r array.RecordReader) (_ array.RecordReader, done func(), err error) {
	c, err := newConformer(name, sc, r.Schema(), true)
	if err != nil {
		return nil, nil, err
	}
	if c.same {
		return r, func() {}, nil
	}
	cr := &conformReader{RecordReader: r, ctx: ctx, c: c}
	return cr, cr.Release, nil
}

func (r *conformReader) Schema() *arrow.Schema { return r.c.out }

func (r *conformReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || !r.RecordReader.Next() {
		return false
	}
	r.cur, r.err = r.c.batch(r.ctx, r.RecordReader.RecordBatch())
	return r.err == nil
}

func (r *conformReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch, for the deprecated name.
func (r *conformReader) Record() arrow.RecordBatch { return r.cur }

func (r *conformReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.RecordReader.Err()
}

// Release releases the batch it holds, not the reader it wraps (the
// caller's).
func (r *conformReader) Release() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

// Retain does nothing: the wrapper lives for one write.
func (r *conformReader) Retain() {}

// conformMaterialized conforms m's batches in place; fill as for
// newConformer.
func conformMaterialized(ctx context.Context, name string, sc *iceberg.Schema, m *materialized, fill bool) error {
	c, err := newConformer(name, sc, m.schema, fill)
	if err != nil || c.same {
		return err
	}
	for i, b := range m.batches {
		nb, err := c.batch(ctx, b)
		if err != nil {
			return err
		}
		b.Release()
		m.batches[i] = nb
	}
	m.schema = c.out
	return nil
}
