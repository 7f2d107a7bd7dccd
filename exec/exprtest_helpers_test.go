package exec

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// testEnv is a checked allocator and an eval context for expression tests.
type testEnv struct {
	t   *testing.T
	mem *memory.CheckedAllocator
	ec  *EvalContext
}

func newTestEnv(t *testing.T) *testEnv {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	ec := &EvalContext{Ctx: context.Background(), Mem: mem,
		Now: time.Date(2024, 3, 15, 10, 30, 45, 123456000, time.UTC)}
	return &testEnv{t: t, mem: mem, ec: ec}
}

// col builds a column from values; nil is NULL.
func (e *testEnv) col(dt arrow.DataType, vals ...any) arrow.Array {
	e.t.Helper()
	b := array.NewBuilder(e.mem, dt)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.Int8Builder:
			bb.Append(int8(v.(int)))
		case *array.Int16Builder:
			bb.Append(int16(v.(int)))
		case *array.Int32Builder:
			bb.Append(int32(v.(int)))
		case *array.Int64Builder:
			bb.Append(int64(v.(int)))
		case *array.Float32Builder:
			bb.Append(float32(v.(float64)))
		case *array.Float64Builder:
			bb.Append(v.(float64))
		case *array.StringBuilder:
			bb.Append(v.(string))
		case *array.BooleanBuilder:
			bb.Append(v.(bool))
		default:
			// everything else goes through its text form
			if err := b.AppendValueFromString(v.(string)); err != nil {
				e.t.Fatalf("append %v to %s: %v", v, dt, err)
			}
		}
	}
	return b.NewArray()
}

// batch makes a record batch of the given columns, named c0, c1, ...
func (e *testEnv) batch(cols ...arrow.Array) arrow.RecordBatch {
	fields := make([]arrow.Field, len(cols))
	n := int64(0)
	for i, c := range cols {
		fields[i] = arrow.Field{Name: "c" + string(rune('0'+i)), Type: c.DataType(), Nullable: true}
		n = int64(c.Len())
	}
	b := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, n)
	for _, c := range cols {
		c.Release()
	}
	return b
}

// render prints an array's rows in Postgres text form, NULL for nulls.
func render(t *testing.T, a arrow.Array) string {
	t.Helper()
	if a.DataType().ID() == arrow.NULL {
		return strings.TrimSuffix(strings.Repeat("NULL ", a.Len()), " ")
	}
	f := textFormatter(a.DataType())
	if f == nil {
		t.Fatalf("no text form for %s", a.DataType())
	}
	app := f(a)
	parts := make([]string, a.Len())
	for i := range parts {
		if a.IsNull(i) {
			parts[i] = "NULL"
		} else {
			parts[i] = string(app(nil, i))
		}
	}
	return strings.Join(parts, " ")
}

// eval evaluates e over batch and renders the result.
func (e *testEnv) eval(x Expr, batch arrow.RecordBatch) (string, error) {
	e.t.Helper()
	out, err := x.Eval(e.ec, batch)
	if err != nil {
		return "", err
	}
	defer out.Release()
	if out.Len() != int(batch.NumRows()) {
		e.t.Fatalf("%s: %d rows for a batch of %d", x, out.Len(), batch.NumRows())
	}
	if !arrow.TypeEqual(out.DataType(), x.DataType()) {
		e.t.Fatalf("%s: result type %s, declared %s", x, out.DataType(), x.DataType())
	}
	return render(e.t, out), nil
}

func lit(t *testing.T, v any) *Literal {
	t.Helper()
	l, err := NewLiteral(v)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func colRef(b arrow.RecordBatch, i int) *Column {
	return &Column{Index: i, Type: b.Column(i).DataType(), Name: b.Schema().Field(i).Name}
}

func mustCall(t *testing.T, name string, args ...Expr) Expr {
	t.Helper()
	e, err := NewCall(name, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return e
}

// oneRow is a batch of one row and no columns, for constant expressions.
func oneRow() arrow.RecordBatch {
	return array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
}

// evalConst evaluates an expression over one row.
func (e *testEnv) evalConst(x Expr) (string, error) {
	b := oneRow()
	defer b.Release()
	return e.eval(x, b)
}

func nan() float64 { return math.NaN() }

func decType(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
