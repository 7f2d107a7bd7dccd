package mergeinto

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// one is a row of one column, for iceberg's expression evaluator.
type one struct{ v any }

func (o one) Size() int         { return 1 }
func (o one) Get(int) any       { return o.v }
func (o *one) Set(_ int, v any) { o.v = v }

// The planning filter of the rows not left out holds every one of their
// values; the conflict filter holds every value; values in the gaps
// between the kept keys, the keys below them and those past them satisfy
// neither.
func TestKeyFiltersOutside(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 14))
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.FixedWidthTypes.Date32, arrow.BinaryTypes.String} {
		for c := 0; c < 40; c++ {
			// kept keys in [10000, 20000], left-out keys below 5000 and
			// past 30000; with some cases as a composite key's column
			// (rows left out for another column's sake, anywhere)
			composite := c%4 == 3
			n := 1 + r.IntN(3000)
			vals := make([]int64, n)
			nulls := make([]bool, n)
			out := make([]bool, n)
			for i := range vals {
				switch k := r.IntN(10); {
				case k == 0 && c%2 == 0: // half the cases without NULLs (ints' own loop)
					nulls[i] = true
				case k <= 4:
					vals[i] = 10000 + r.Int64N(10001)
				case k < 6:
					vals[i], out[i] = r.Int64N(5000), true
				default:
					vals[i], out[i] = 30000+r.Int64N(50000), true
				}
				if composite && !nulls[i] && r.IntN(5) == 0 {
					out[i] = !out[i]
				}
			}
			arr := buildArray(t, typ, vals, nulls)
			f := arrow.Field{Name: "k", Type: typ}
			bm := make([]uint64, (n+63)/64)
			for i, o := range out {
				if o {
					bm[i/64] |= 1 << (i % 64)
				}
			}
			kf := keyFilters(f, arr, 64, bm)
			arr.Release()
			name := fmt.Sprintf("%s case %d", typ, c)
			keptAny := false
			for i := range vals {
				keptAny = keptAny || (!nulls[i] && !out[i])
			}
			if kf.none != !keptAny || kf.conflictNone || kf.conflict == nil {
				t.Fatalf("%s: %+v (kept values %v)", name, kf, keptAny)
			}
			plan := evaluator(t, typ, kf.plan)
			conflict := evaluator(t, typ, kf.conflict)
			for i, v := range vals {
				if nulls[i] {
					continue
				}
				if !out[i] && !plan(v) {
					t.Fatalf("%s: the planning filter %s leaves out a kept value %d", name, kf.plan, v)
				}
				if !conflict(v) {
					t.Fatalf("%s: the conflict filter %s leaves out value %d", name, kf.conflict, v)
				}
			}
			if composite || typ.ID() == arrow.STRING {
				continue // boxes span the gaps (strings compare as text)
			}
			for i, v := range vals {
				if !nulls[i] && out[i] && keptAny && plan(v) {
					t.Fatalf("%s: the planning filter %s holds left-out value %d", name, kf.plan, v)
				}
			}
			for _, gap := range []int64{7000, 25000, 90000} {
				if conflict(gap) || (keptAny && plan(gap)) {
					t.Fatalf("%s: %d is in no key's range, yet plan %s / conflict %s hold it", name, gap, kf.plan, kf.conflict)
				}
			}
		}
	}
}

func buildArray(t *testing.T, typ arrow.DataType, vals []int64, nulls []bool) arrow.Array {
	t.Helper()
	b := array.NewBuilder(memory.DefaultAllocator, typ)
	defer b.Release()
	for i, v := range vals {
		if nulls[i] {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.Int64Builder:
			bb.Append(v)
		case *array.Int32Builder:
			bb.Append(int32(v))
		case *array.Date32Builder:
			bb.Append(arrow.Date32(v))
		case *array.StringBuilder:
			bb.Append(fmt.Sprintf("%06d", v))
		}
	}
	return b.NewArray()
}

// evaluator is expr (nil: true) as a test of one value of typ.
func evaluator(t *testing.T, typ arrow.DataType, expr iceberg.BooleanExpression) func(int64) bool {
	t.Helper()
	if expr == nil {
		return func(int64) bool { return true }
	}
	var it iceberg.Type
	conv := func(v int64) any { return v }
	switch typ.ID() {
	case arrow.INT64:
		it = iceberg.PrimitiveTypes.Int64
	case arrow.INT32:
		it, conv = iceberg.PrimitiveTypes.Int32, func(v int64) any { return int32(v) }
	case arrow.DATE32:
		it, conv = iceberg.PrimitiveTypes.Date, func(v int64) any { return iceberg.Date(v) }
	case arrow.STRING:
		it, conv = iceberg.PrimitiveTypes.String, func(v int64) any { return fmt.Sprintf("%06d", v) }
	}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "k", Type: it, Required: false})
	ev, err := iceberg.ExpressionEvaluator(sc, expr, true)
	if err != nil {
		t.Fatal(err)
	}
	return func(v int64) bool {
		ok, err := ev(&one{conv(v)})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
}
