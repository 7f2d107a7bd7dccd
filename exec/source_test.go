package exec

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// hjTestSource is an Operator over fixed batches, for the tests of the
// hash-based operators. It owns its batches and releases them on Close.
type hjTestSource struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
	i       int
	metrics Metrics
	closed  bool
	failAt  int // Next fails with errHJSource at batch failAt when > 0
}

var _ Operator = (*hjTestSource)(nil)

var errHJSource = fmt.Errorf("test source failure")

func (s *hjTestSource) Schema() *arrow.Schema      { return s.schema }
func (s *hjTestSource) Open(context.Context) error { s.i = 0; return nil }
func (s *hjTestSource) Children() []Operator       { return nil }
func (s *hjTestSource) String() string             { return "TestSource" }
func (s *hjTestSource) Metrics() *Metrics          { return &s.metrics }
func (s *hjTestSource) Next(context.Context) (arrow.RecordBatch, error) {
	if s.failAt > 0 && s.i+1 == s.failAt {
		return nil, errHJSource
	}
	if s.i >= len(s.batches) {
		return nil, io.EOF
	}
	b := s.batches[s.i]
	s.i++
	b.Retain()
	return b, nil
}
func (s *hjTestSource) Close() error {
	if !s.closed {
		s.closed = true
		htReleaseBatches(s.batches)
	}
	return nil
}

// hjSchema builds a schema from "name:type" pairs, all nullable. Types:
// i8 i16 i32 i64 f64 str bool dec(p,s) as "dec" (18,2), date, ts, bin.
func hjSchema(cols ...string) *arrow.Schema {
	fs := make([]arrow.Field, len(cols))
	for i, c := range cols {
		name, typ, _ := strings.Cut(c, ":")
		fs[i] = arrow.Field{Name: name, Type: hjType(typ), Nullable: true}
	}
	return arrow.NewSchema(fs, nil)
}

func hjType(s string) arrow.DataType {
	switch s {
	case "i8":
		return arrow.PrimitiveTypes.Int8
	case "i16":
		return arrow.PrimitiveTypes.Int16
	case "i32":
		return arrow.PrimitiveTypes.Int32
	case "i64":
		return arrow.PrimitiveTypes.Int64
	case "u8":
		return arrow.PrimitiveTypes.Uint8
	case "u16":
		return arrow.PrimitiveTypes.Uint16
	case "u32":
		return arrow.PrimitiveTypes.Uint32
	case "f64":
		return arrow.PrimitiveTypes.Float64
	case "f32":
		return arrow.PrimitiveTypes.Float32
	case "str":
		return arrow.BinaryTypes.String
	case "bin":
		return arrow.BinaryTypes.Binary
	case "bool":
		return arrow.FixedWidthTypes.Boolean
	case "dec":
		return &arrow.Decimal128Type{Precision: 18, Scale: 2}
	case "dec38":
		return &arrow.Decimal128Type{Precision: 38, Scale: 0}
	case "date":
		return arrow.FixedWidthTypes.Date32
	case "ts":
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	}
	panic("hjType: unknown test type " + s)
}

// hjBatch builds a batch from rows of Go values; nil is NULL. Decimals
// are given as strings, dates as int32 days, timestamps as int64 micros.
func hjBatch(t testing.TB, mem memory.Allocator, schema *arrow.Schema, rows ...[]any) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, row := range rows {
		if len(row) != schema.NumFields() {
			t.Fatalf("hjBatch: row %v has %d values, schema %d", row, len(row), schema.NumFields())
		}
		for i, v := range row {
			fb := b.Field(i)
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.Int8Builder:
				fb.Append(int8(v.(int)))
			case *array.Int16Builder:
				fb.Append(int16(v.(int)))
			case *array.Int32Builder:
				fb.Append(int32(v.(int)))
			case *array.Int64Builder:
				fb.Append(int64(v.(int)))
			case *array.Uint8Builder:
				fb.Append(uint8(v.(int)))
			case *array.Uint16Builder:
				fb.Append(uint16(v.(int)))
			case *array.Uint32Builder:
				fb.Append(uint32(v.(int)))
			case *array.Float64Builder:
				fb.Append(v.(float64))
			case *array.Float32Builder:
				fb.Append(float32(v.(float64)))
			case *array.StringBuilder:
				fb.Append(v.(string))
			case *array.BinaryBuilder:
				fb.Append([]byte(v.(string)))
			case *array.BooleanBuilder:
				fb.Append(v.(bool))
			case *array.Decimal128Builder:
				dt := schema.Field(i).Type.(*arrow.Decimal128Type)
				n, err := decimal128.FromString(v.(string), dt.Precision, dt.Scale)
				if err != nil {
					t.Fatal(err)
				}
				fb.Append(n)
			case *array.Date32Builder:
				fb.Append(arrow.Date32(v.(int)))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(v.(int)))
			default:
				t.Fatalf("hjBatch: no test support for %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

// hjSrc returns a source of schema whose batches hold the given row
// groups (one batch per group; an empty group is skipped).
func hjSrc(t testing.TB, mem memory.Allocator, schema *arrow.Schema, groups ...[][]any) *hjTestSource {
	t.Helper()
	s := &hjTestSource{schema: schema}
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		s.batches = append(s.batches, hjBatch(t, mem, schema, g...))
	}
	return s
}

// hjRows renders batches as "a|b|c" lines, NULL for nulls.
func hjRows(batches []arrow.RecordBatch) []string {
	var out []string
	for _, b := range batches {
		for r := 0; r < int(b.NumRows()); r++ {
			vals := make([]string, b.NumCols())
			for c := 0; c < int(b.NumCols()); c++ {
				col := b.Column(c)
				if col.IsNull(r) {
					vals[c] = "NULL"
				} else {
					vals[c] = col.ValueStr(r)
				}
			}
			out = append(out, strings.Join(vals, "|"))
		}
	}
	return out
}

func hjSorted(rows []string) []string {
	rows = slices.Clone(rows)
	slices.Sort(rows)
	return rows
}

// hjRun drains op and returns its rows, releasing the batches.
func hjRun(t testing.TB, op Operator) ([]string, error) {
	t.Helper()
	bs, err := Drain(context.Background(), op)
	defer htReleaseBatches(bs)
	if err != nil {
		return nil, err
	}
	for _, b := range bs {
		if b.NumRows() == 0 {
			t.Errorf("%s returned an empty batch", op)
		}
		if !b.Schema().Equal(op.Schema()) {
			t.Errorf("%s returned schema %s, declared %s", op, b.Schema(), op.Schema())
		}
	}
	return hjRows(bs), nil
}

// hjPred is a test-only boolean expression computed by a Go function of
// the row; the function returns (value, valid).
type hjPred struct {
	name string
	f    func(b arrow.RecordBatch, r int) (bool, bool)
}

func (p *hjPred) DataType() arrow.DataType { return arrow.FixedWidthTypes.Boolean }
func (p *hjPred) String() string           { return p.name }
func (p *hjPred) Eval(ec *EvalContext, b arrow.RecordBatch) (arrow.Array, error) {
	bld := array.NewBooleanBuilder(ec.Mem)
	defer bld.Release()
	for r := 0; r < int(b.NumRows()); r++ {
		v, ok := p.f(b, r)
		if ok {
			bld.Append(v)
		} else {
			bld.AppendNull()
		}
	}
	return bld.NewArray(), nil
}

func hjStr(b arrow.RecordBatch, c, r int) (string, bool) {
	col := b.Column(c)
	if col.IsNull(r) {
		return "", false
	}
	return col.ValueStr(r), true
}

func hjCol(schema *arrow.Schema, i int) *Column {
	return &Column{Index: i, Type: schema.Field(i).Type, Name: schema.Field(i).Name}
}

func hjMem(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}
