package exec

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// opsTestMem returns a checked allocator that fails t if anything leaks.
func opsTestMem(t testing.TB) *memory.CheckedAllocator {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// opsTestValues builds a Values operator over batches of the given rows,
// split into batches of batchRows rows.
func opsTestValues(t testing.TB, mem memory.Allocator, schema *arrow.Schema, rows [][]any, batchRows int) *Values {
	t.Helper()
	var batches []arrow.RecordBatch
	for lo := 0; lo < len(rows); lo += batchRows {
		hi := min(lo+batchRows, len(rows))
		b, err := BuildBatch(mem, schema, rows[lo:hi])
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b)
	}
	v, err := NewValues(schema, batches)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		b.Release()
	}
	return v
}

// opsTestRows drains op and returns its rows as Go values (nil for NULL).
func opsTestRows(t testing.TB, op Operator) [][]any {
	t.Helper()
	batches, err := Drain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for _, b := range batches {
		if b.NumRows() == 0 {
			t.Errorf("%s returned an empty batch", op)
		}
		for r := 0; r < int(b.NumRows()); r++ {
			row := make([]any, b.NumCols())
			for c := range row {
				row[c] = opsTestValue(b.Column(c), r)
			}
			out = append(out, row)
		}
		b.Release()
	}
	return out
}

func opsTestValue(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Int64:
		return a.Value(i)
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	}
	return a.ValueStr(i)
}

// opsTestCounting counts the batches pulled from its child.
type opsTestCounting struct {
	Operator
	pulled int
}

func (c *opsTestCounting) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := c.Operator.Next(ctx)
	if err == nil {
		c.pulled++
	}
	return b, err
}

var opsTestSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func opsTestInput(n int) [][]any {
	rows := make([][]any, n)
	for i := range rows {
		var ok any
		switch i % 3 {
		case 0:
			ok = true
		case 1:
			ok = false
		}
		rows[i] = []any{int64(i), ok, fmt.Sprint("r", i)}
	}
	return rows
}

func TestFilterNullIsFalse(t *testing.T) {
	for _, tc := range []struct {
		name string
		pred Expr
		want []int64
	}{
		{"column with nulls", &Column{Index: 1, Type: arrow.FixedWidthTypes.Boolean}, []int64{0, 3, 6, 9}},
		{"true literal", &Literal{Value: scalar.NewBooleanScalar(true)}, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"false literal", &Literal{Value: scalar.NewBooleanScalar(false)}, nil},
		{"null boolean literal", &Literal{Value: scalar.MakeNullScalar(arrow.FixedWidthTypes.Boolean)}, nil},
		{"untyped null", &Literal{Value: scalar.MakeNullScalar(arrow.Null)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := opsTestMem(t)
			f, err := NewFilter(opsTestValues(t, mem, opsTestSchema, opsTestInput(10), 4), tc.pred, mem)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, r := range opsTestRows(t, f) {
				got = append(got, r[0].(int64))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFilterRejectsNonBoolean(t *testing.T) {
	mem := opsTestMem(t)
	v := opsTestValues(t, mem, opsTestSchema, nil, 1)
	defer v.Close()
	_, err := NewFilter(v, &Column{Index: 0, Type: arrow.PrimitiveTypes.Int64}, mem)
	if err == nil || !strings.Contains(err.Error(), "not boolean") {
		t.Fatalf("got %v", err)
	}
}

func TestProject(t *testing.T) {
	mem := opsTestMem(t)
	p, err := NewProject(opsTestValues(t, mem, opsTestSchema, opsTestInput(5), 2),
		[]Expr{&Column{Index: 2, Type: arrow.BinaryTypes.String}, &Literal{Value: scalar.NewInt64Scalar(7)}},
		[]string{"s", "seven"}, mem)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Schema().Field(1).Name; got != "seven" {
		t.Fatalf("schema name %q", got)
	}
	got := opsTestRows(t, p)
	if len(got) != 5 || got[4][0] != "r4" || got[4][1] != int64(7) {
		t.Fatalf("got %v", got)
	}
	if _, err := NewProject(p, []Expr{&Column{Index: 0, Type: arrow.BinaryTypes.String}}, nil, mem); err == nil {
		t.Fatal("mismatched names accepted")
	}
}

func TestLimitOffset(t *testing.T) {
	for _, tc := range []struct {
		n, limit, offset int64
		wantFirst, want  int64
		maxPulled        int
	}{
		{n: 10, limit: 0, offset: 0, want: 0, maxPulled: 0},
		{n: 10, limit: 0, offset: 5, want: 0, maxPulled: 0},
		{n: 10, limit: 3, offset: 0, wantFirst: 0, want: 3, maxPulled: 1},
		{n: 10, limit: 4, offset: 0, wantFirst: 0, want: 4, maxPulled: 1},
		{n: 10, limit: 5, offset: 0, wantFirst: 0, want: 5, maxPulled: 2},
		{n: 10, limit: 3, offset: 3, wantFirst: 3, want: 3, maxPulled: 2},
		{n: 10, limit: 100, offset: 0, wantFirst: 0, want: 10, maxPulled: 3},
		{n: 10, limit: 5, offset: 8, wantFirst: 8, want: 2, maxPulled: 3},
		{n: 10, limit: 5, offset: 10, want: 0, maxPulled: 3},
		{n: 10, limit: 5, offset: 50, want: 0, maxPulled: 3},
		{n: 10, limit: -1, offset: 7, wantFirst: 7, want: 3, maxPulled: 3},
		{n: 0, limit: 5, offset: 0, want: 0, maxPulled: 0},
		{n: 10, limit: math.MaxInt64, offset: 3, wantFirst: 3, want: 7, maxPulled: 3},
		{n: 10, limit: math.MaxInt64 - 1, offset: math.MaxInt64, want: 0, maxPulled: 3},
	} {
		t.Run(fmt.Sprintf("n=%d/limit=%d/offset=%d", tc.n, tc.limit, tc.offset), func(t *testing.T) {
			mem := opsTestMem(t)
			src := &opsTestCounting{Operator: opsTestValues(t, mem, opsTestSchema, opsTestInput(int(tc.n)), 4)}
			l, err := NewLimit(src, tc.limit, tc.offset)
			if err != nil {
				t.Fatal(err)
			}
			rows := opsTestRows(t, l)
			if int64(len(rows)) != tc.want {
				t.Fatalf("got %d rows, want %d", len(rows), tc.want)
			}
			for i, r := range rows {
				if r[0].(int64) != tc.wantFirst+int64(i) {
					t.Fatalf("row %d is %v", i, r)
				}
			}
			if src.pulled > tc.maxPulled {
				t.Fatalf("pulled %d batches, want at most %d", src.pulled, tc.maxPulled)
			}
		})
	}
	if _, err := NewLimit(&Values{}, 1, -1); err == nil || err.Error() != "OFFSET must not be negative" {
		t.Fatalf("negative offset: %v", err)
	}
}

func TestValuesAndBuildBatch(t *testing.T) {
	mem := opsTestMem(t)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b, err := BuildBatch(mem, schema, [][]any{
		{1, 3, 1.5},
		{scalar.NewInt64Scalar(2), nil, scalar.NewInt32Scalar(4)},
		{nil, scalar.MakeNullScalar(arrow.PrimitiveTypes.Int64), float32(2)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if got := fmt.Sprint(b.Column(0), b.Column(2)); got != "[1 2 (null)] [1.5 4 2]" {
		t.Fatalf("got %s", got)
	}
	if d := b.Column(1).(*array.Decimal128); d.Value(0) != decimal128.FromI64(300) || d.NullN() != 2 {
		t.Fatalf("decimal column %v", d)
	}
	if _, err := BuildBatch(mem, schema, [][]any{{1 << 40, nil, nil}}); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("overflow: %v", err)
	}
	if _, err := BuildBatch(mem, schema, [][]any{{"x", nil, nil}}); err == nil || !strings.Contains(err.Error(), `column "a"`) {
		t.Fatalf("bad type: %v", err)
	}
	v, err := NewValues(schema, []arrow.RecordBatch{b, b})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(opsTestRows(t, v)); n != 6 {
		t.Fatalf("got %d rows", n)
	}
	if _, err := v.Next(context.Background()); err != io.EOF {
		t.Fatalf("after close: %v", err)
	}
	if _, err := NewValues(opsTestSchema, []arrow.RecordBatch{b}); err == nil {
		t.Fatal("schema mismatch accepted")
	}
}

func TestRebatch(t *testing.T) {
	for _, tc := range []struct {
		n, in, min int
		want       []int64
	}{
		{n: 10, in: 3, min: 4, want: []int64{6, 4}},
		{n: 10, in: 5, min: 4, want: []int64{5, 5}},
		{n: 10, in: 1, min: 100, want: []int64{10}},
		{n: 0, in: 1, min: 4, want: nil},
	} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			mem := opsTestMem(t)
			r, err := NewRebatch(opsTestValues(t, mem, opsTestSchema, opsTestInput(tc.n), tc.in), tc.min, mem)
			if err != nil {
				t.Fatal(err)
			}
			batches, err := Drain(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int64
			next := int64(0)
			for _, b := range batches {
				sizes = append(sizes, b.NumRows())
				ids := b.Column(0).(*array.Int64)
				for i := 0; i < ids.Len(); i++ {
					if ids.Value(i) != next {
						t.Fatalf("row %d has id %d", next, ids.Value(i))
					}
					next++
				}
				b.Release()
			}
			if !reflect.DeepEqual(sizes, tc.want) {
				t.Fatalf("batch sizes %v, want %v", sizes, tc.want)
			}
		})
	}
}

// TestFilterCanonicalTypes filters a batch holding every canonical type.
func TestFilterCanonicalTypes(t *testing.T) {
	mem := opsTestMem(t)
	types := []arrow.DataType{
		arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32,
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
		&arrow.Decimal128Type{Precision: 12, Scale: 2}, arrow.BinaryTypes.String, arrow.BinaryTypes.Binary,
		arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Time64us, &arrow.TimestampType{Unit: arrow.Microsecond},
		&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, extensions.NewUUIDType(),
		arrow.FixedWidthTypes.MonthDayNanoInterval,
	}
	fields := []arrow.Field{{Name: "keep", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}}
	for i, dt := range types {
		fields = append(fields, arrow.Field{Name: fmt.Sprint("c", i), Type: dt, Nullable: true})
	}
	schema := arrow.NewSchema(fields, nil)
	var rows [][]any
	for r := range 6 {
		row := []any{[]any{true, false, nil}[r%3]}
		for _, dt := range types {
			var v any
			switch dt.ID() {
			case arrow.BOOL:
				v = r%2 == 0
			case arrow.STRING, arrow.BINARY:
				v = fmt.Sprint("v", r)
			case arrow.EXTENSION:
				u := make([]byte, 16)
				u[15] = byte(r)
				v = u
			case arrow.INTERVAL_MONTH_DAY_NANO:
				v = arrow.MonthDayNanoInterval{Days: int32(r)}
			case arrow.DECIMAL128:
				v = decimal128.FromI64(int64(r))
			default:
				v = r
			}
			if r == 3 {
				v = nil
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	f, err := NewFilter(opsTestValues(t, mem, schema, rows, 6), &Column{Index: 0, Type: arrow.FixedWidthTypes.Boolean}, mem)
	if err != nil {
		t.Fatal(err)
	}
	batches, err := Drain(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if len(batches) != 1 || batches[0].NumRows() != 2 {
		t.Fatalf("got %v", batches)
	}
	b := batches[0]
	defer b.Release()
	for c := 1; c < int(b.NumCols()); c++ {
		if !arrow.TypeEqual(b.Column(c).DataType(), types[c-1]) {
			t.Errorf("column %d is %s, want %s", c, b.Column(c).DataType(), types[c-1])
		}
		if b.Column(c).IsNull(1) != true { // input row 3 (NULLs) is the second kept row
			t.Errorf("column %d (%s): row 1 should be NULL", c, types[c-1])
		}
	}
	if got := b.Column(9).(*array.String).Value(0); got != "v0" {
		t.Fatalf("string column row 0 = %q", got)
	}
}

// TestFilterRandomSliced filters sliced batches (bitmap offsets not a
// multiple of 8) against an oracle.
func TestFilterRandomSliced(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for iter := range 20 {
		mem := opsTestMem(t)
		n := rng.IntN(3000)
		rows := make([][]any, n)
		var want []int64
		offset := rng.IntN(20)
		density := rng.IntN(4)
		for i := range rows {
			var ok any
			switch r := rng.IntN(10); {
			case r == 0:
			case r < 2+density*2:
				ok = true
			default:
				ok = false
			}
			rows[i] = []any{int64(i), ok, "x"}
			if ok == true && i >= offset {
				want = append(want, int64(i))
			}
		}
		l, err := NewLimit(opsTestValues(t, mem, opsTestSchema, rows, 1+rng.IntN(900)), -1, int64(offset))
		if err != nil {
			t.Fatal(err)
		}
		f, err := NewFilter(l, &filterTestDirtyNulls{col: 1}, mem)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, r := range opsTestRows(t, f) {
			got = append(got, r[0].(int64))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d: got %d rows, want %d", iter, len(got), len(want))
		}
	}
}

// filterTestDirtyNulls returns a boolean column whose value bits are set
// under its NULLs, as kernels are allowed to leave them.
type filterTestDirtyNulls struct{ col int }

func (e *filterTestDirtyNulls) DataType() arrow.DataType { return arrow.FixedWidthTypes.Boolean }
func (e *filterTestDirtyNulls) String() string           { return "dirty" }
func (e *filterTestDirtyNulls) Eval(ec *EvalContext, b arrow.RecordBatch) (arrow.Array, error) {
	in := b.Column(e.col).(*array.Boolean)
	d := in.Data()
	vals := memory.NewResizableBuffer(ec.Mem)
	vals.Resize(len(d.Buffers()[1].Bytes()))
	copy(vals.Bytes(), d.Buffers()[1].Bytes())
	for i := 0; i < in.Len(); i++ {
		if in.IsNull(i) {
			bitutil.SetBit(vals.Bytes(), d.Offset()+i)
		}
	}
	out := array.NewData(d.DataType(), d.Len(), []*memory.Buffer{d.Buffers()[0], vals}, nil, d.NullN(), d.Offset())
	vals.Release()
	defer out.Release()
	return array.MakeFromData(out), nil
}
