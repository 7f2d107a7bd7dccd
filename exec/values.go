package exec

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// Values emits a fixed list of batches: VALUES lists, registered batches,
// and the inputs of tests.
//
// Values holds a reference to each batch from construction until Close;
// the caller keeps its own references. Open rewinds, so a Values may be
// read several times before it is closed.
type Values struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
	pos     int
	closed  bool
	metrics Metrics
}

var _ Operator = (*Values)(nil)

// NewValues returns an operator that yields batches in order. Every batch
// must have schema's column types; empty batches are skipped.
func NewValues(schema *arrow.Schema, batches []arrow.RecordBatch) (*Values, error) {
	if schema == nil {
		return nil, fmt.Errorf("exec: values: nil schema (planner bug)")
	}
	kept := make([]arrow.RecordBatch, 0, len(batches))
	for i, b := range batches {
		if err := checkBatchSchema(schema, b); err != nil {
			return nil, fmt.Errorf("exec: values: batch %d: %w", i, err)
		}
		if b.NumRows() == 0 {
			continue
		}
		kept = append(kept, b)
	}
	for _, b := range kept {
		b.Retain()
	}
	return &Values{schema: schema, batches: kept}, nil
}

// checkBatchSchema reports whether b's columns have schema's types.
func checkBatchSchema(schema *arrow.Schema, b arrow.RecordBatch) error {
	if b == nil {
		return fmt.Errorf("nil batch")
	}
	if int(b.NumCols()) != schema.NumFields() {
		return fmt.Errorf("has %d columns, schema has %d (planner bug)", b.NumCols(), schema.NumFields())
	}
	for i, f := range schema.Fields() {
		if !arrow.TypeEqual(b.Column(i).DataType(), f.Type) {
			return fmt.Errorf("column %d (%s) is %s, schema says %s (planner bug)", i, f.Name, b.Column(i).DataType(), f.Type)
		}
	}
	return nil
}

func (v *Values) Schema() *arrow.Schema { return v.schema }

func (v *Values) Open(ctx context.Context) error {
	if v.closed {
		return fmt.Errorf("exec: values: Open after Close (planner bug)")
	}
	v.pos = 0
	return ctx.Err()
}

func (v *Values) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if v.closed || v.pos >= len(v.batches) {
		return nil, io.EOF
	}
	b := v.batches[v.pos]
	v.pos++
	b.Retain()
	v.metrics.Add(b, start)
	return b, nil
}

func (v *Values) Close() error {
	if !v.closed {
		v.closed = true
		for _, b := range v.batches {
			b.Release()
		}
		v.batches = nil
	}
	return nil
}

func (v *Values) Children() []Operator { return nil }

func (v *Values) String() string {
	var n int64
	for _, b := range v.batches {
		n += b.NumRows()
	}
	return fmt.Sprintf("Values (%d rows, %d batches)", n, len(v.batches))
}

func (v *Values) Metrics() *Metrics { return &v.metrics }

// BuildBatch builds one batch of schema from rows of Go values. Each value
// is nil (NULL), a scalar.Scalar (cast to the column type when it differs),
// or a plain Go value that fits the column: bool, any integer or float type,
// string, []byte, decimal128.Num, arrow.Date32, arrow.Time64,
// arrow.Timestamp, time.Time (DATE, TIME, TIMESTAMP) or
// arrow.MonthDayNanoInterval.
func BuildBatch(mem memory.Allocator, schema *arrow.Schema, rows [][]any) (arrow.RecordBatch, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	for r, row := range rows {
		if len(row) != schema.NumFields() {
			return nil, fmt.Errorf("exec: build batch: row %d has %d values, schema has %d columns", r, len(row), schema.NumFields())
		}
		for c, v := range row {
			if err := appendGoValue(rb.Field(c), v); err != nil {
				return nil, fmt.Errorf("exec: build batch: row %d, column %q: %w", r, schema.Field(c).Name, err)
			}
		}
	}
	return rb.NewRecordBatch(), nil
}

// appendGoValue appends one Go value or scalar to b.
func appendGoValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	if s, ok := v.(scalar.Scalar); ok {
		if !s.IsValid() {
			b.AppendNull()
			return nil
		}
		if !arrow.TypeEqual(s.DataType(), b.Type()) {
			c, err := s.CastTo(b.Type())
			if err != nil {
				return fmt.Errorf("cannot use %s value %s as %s: %w", s.DataType(), s, b.Type(), err)
			}
			s = c
		}
		return scalar.Append(b, s)
	}
	if i, ok := goInt(v); ok {
		return appendGoInt(b, i, v)
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		if x, ok := v.(bool); ok {
			bb.Append(x)
			return nil
		}
	case *array.Float32Builder:
		switch x := v.(type) {
		case float32:
			bb.Append(x)
			return nil
		case float64:
			bb.Append(float32(x))
			return nil
		}
	case *array.Float64Builder:
		switch x := v.(type) {
		case float32:
			bb.Append(float64(x))
			return nil
		case float64:
			bb.Append(x)
			return nil
		}
	case *array.StringBuilder:
		switch x := v.(type) {
		case string:
			bb.Append(x)
			return nil
		case []byte:
			bb.Append(string(x))
			return nil
		}
	case *array.BinaryBuilder:
		switch x := v.(type) {
		case string:
			bb.AppendString(x)
			return nil
		case []byte:
			bb.Append(x)
			return nil
		}
	case *array.FixedSizeBinaryBuilder:
		if x, ok := v.([]byte); ok {
			if len(x) != b.Type().(*arrow.FixedSizeBinaryType).ByteWidth {
				return fmt.Errorf("value of %d bytes does not fit %s", len(x), b.Type())
			}
			bb.Append(x)
			return nil
		}
	case *array.Decimal128Builder:
		if x, ok := v.(decimal128.Num); ok {
			bb.Append(x)
			return nil
		}
	case *array.Date32Builder:
		switch x := v.(type) {
		case arrow.Date32:
			bb.Append(x)
			return nil
		case time.Time:
			bb.Append(arrow.Date32FromTime(x))
			return nil
		}
	case *array.Time64Builder:
		switch x := v.(type) {
		case arrow.Time64:
			bb.Append(x)
			return nil
		case time.Duration:
			bb.Append(arrow.Time64(x / time.Microsecond))
			return nil
		}
	case *array.TimestampBuilder:
		switch x := v.(type) {
		case arrow.Timestamp:
			bb.Append(x)
			return nil
		case time.Time:
			ts, err := arrow.TimestampFromTime(x, b.Type().(*arrow.TimestampType).Unit)
			if err != nil {
				return err
			}
			bb.Append(ts)
			return nil
		}
	case *array.MonthDayNanoIntervalBuilder:
		if x, ok := v.(arrow.MonthDayNanoInterval); ok {
			bb.Append(x)
			return nil
		}
	case interface{ StorageBuilder() array.Builder }:
		return appendGoValue(bb.StorageBuilder(), v)
	}
	return fmt.Errorf("cannot use Go value %v (%T) as %s", v, v, b.Type())
}

func goInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	}
	return 0, false
}

func appendGoInt(b array.Builder, i int64, v any) error {
	fits := func(lo, hi int64) error {
		if i < lo || i > hi {
			return fmt.Errorf("value %d out of range for %s", i, b.Type())
		}
		return nil
	}
	switch bb := b.(type) {
	case *array.Int8Builder:
		if err := fits(-1<<7, 1<<7-1); err != nil {
			return err
		}
		bb.Append(int8(i))
	case *array.Int16Builder:
		if err := fits(-1<<15, 1<<15-1); err != nil {
			return err
		}
		bb.Append(int16(i))
	case *array.Int32Builder:
		if err := fits(-1<<31, 1<<31-1); err != nil {
			return err
		}
		bb.Append(int32(i))
	case *array.Int64Builder:
		bb.Append(i)
	case *array.Float32Builder:
		bb.Append(float32(i))
	case *array.Float64Builder:
		bb.Append(float64(i))
	case *array.Date32Builder:
		bb.Append(arrow.Date32(i))
	case *array.Time64Builder:
		bb.Append(arrow.Time64(i))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(i))
	case *array.Decimal128Builder:
		s := b.Type().(*arrow.Decimal128Type).Scale
		n := decimal128.FromI64(i)
		if s > 0 {
			n = n.IncreaseScaleBy(s)
		}
		bb.Append(n)
	default:
		return fmt.Errorf("cannot use Go value %v (%T) as %s", v, v, b.Type())
	}
	return nil
}
