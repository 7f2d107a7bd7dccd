package scan

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
)

// TestTopBoundRowGroups: a top-N's bound orders a file's row groups by
// their Parquet statistics, best first, and leaves out those strictly
// worse than the value it was told; groups that may hold a NULL that
// sorts first are read first and never left out.
func TestTopBoundRowGroups(t *testing.T) {
	rec := plainTestRecord(memory.DefaultAllocator, 5000, 1234) // id rises by 7919 a row; x is NULL at row 1234
	defer rec.Release()
	b := writePlainTest(t, rec, parquet.WithMaxRowGroupLength(1000))
	pr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	meta := pr.MetaData()
	groups := []int{0, 1, 2, 3, 4}
	id := func(row int) int64 { return int64(row)*7919 - 1<<40 }

	desc := &TopBound{FieldID: 1, Type: iceberg.PrimitiveTypes.Int64, Wide: true, Desc: true}
	if got := desc.orderGroups(meta, groups, false); !slices.Equal(got, []int{4, 3, 2, 1, 0}) {
		t.Fatalf("DESC order %v", got)
	}
	if desc.skipsGroup(meta, 0, false) {
		t.Fatal("a group left out before the bound was set")
	}
	desc.Set(id(3000)) // groups 0-2 hold rows up to 2999
	for g, want := range []bool{true, true, true, false, false} {
		if got := desc.skipsGroup(meta, g, false); got != want {
			t.Fatalf("DESC, worst held id(3000): group %d left out %v, want %v", g, got, want)
		}
	}
	desc.Set(id(2999)) // a looser bound does not loosen it
	if !desc.skipsGroup(meta, 2, false) {
		t.Fatal("the bound loosened")
	}
	asc := &TopBound{FieldID: 1, Type: iceberg.PrimitiveTypes.Int64, Wide: true}
	if got := asc.orderGroups(meta, []int{3, 0, 4}, false); !slices.Equal(got, []int{0, 3, 4}) {
		t.Fatalf("ASC order %v", got)
	}
	asc.Set(id(1999))
	for g, want := range []bool{false, false, true, true, true} {
		if got := asc.skipsGroup(meta, g, false); got != want {
			t.Fatalf("ASC, worst held id(1999): group %d left out %v, want %v", g, got, want)
		}
	}
	// the timestamp column (field 6) and a DATE (5); a bound of INT type
	// on a BIGINT column reads no statistics
	ts := &TopBound{FieldID: 6, Type: iceberg.PrimitiveTypes.Timestamp, Wide: true, Desc: true}
	ts.Set(int64(4000) * 1_000_003)
	if !ts.skipsGroup(meta, 3, false) || ts.skipsGroup(meta, 4, false) {
		t.Fatal("timestamp bound: want group 3 left out and 4 read")
	}
	wrong := &TopBound{FieldID: 1, Type: iceberg.PrimitiveTypes.Int32, Desc: true}
	wrong.Set(1 << 50)
	if wrong.skipsGroup(meta, 0, false) {
		t.Fatal("statistics read as the wrong type")
	}
	// x (field 3, DOUBLE) has a NULL in group 1: NULLs sorting first keep
	// it, but DOUBLE statistics are not read at all
	nulls := &TopBound{FieldID: 3, Type: iceberg.PrimitiveTypes.Float64, Wide: true, Desc: true, NullsFirst: true}
	nulls.Set(1 << 60)
	if nulls.skipsGroup(meta, 1, false) || nulls.skipsGroup(meta, 2, false) {
		t.Fatal("a DOUBLE column's groups left out")
	}
	// n (field 2, INT) has no NULLs; with NULLS FIRST its groups are still
	// judged by their values
	n := &TopBound{FieldID: 2, Type: iceberg.PrimitiveTypes.Int32, Desc: true, NullsFirst: true}
	n.Set(5000)
	if !n.skipsGroup(meta, 0, false) {
		t.Fatal("INT column, every value below the bound: want the group left out")
	}
	if lo, hi, mayNull, ok := n.groupBounds(meta, 0, false); !ok || mayNull || lo != 0 || hi != 999 {
		t.Fatalf("n's bounds in group 0: %d..%d, NULLs %v, ok %v", lo, hi, mayNull, ok)
	}
	// the id column holds no NULL either; a column that does sorts first
	idNulls := &TopBound{FieldID: 1, Type: iceberg.PrimitiveTypes.Int64, Wide: true, Desc: true, NullsFirst: true}
	if _, _, mayNull, ok := idNulls.groupBounds(meta, 0, false); !ok || mayNull {
		t.Fatalf("id's group 0: NULLs %v, ok %v", mayNull, ok)
	}
}

// FloatKey orders floats as the engine sorts them: -Inf first, -0 and 0
// as one, +Inf, then every NaN as one key above it.
func TestFloatKeyOrder(t *testing.T) {
	ordered := []float64{math.Inf(-1), -math.MaxFloat64, -1e300, -2.5, -1, -math.SmallestNonzeroFloat64, 0,
		math.SmallestNonzeroFloat64, 1e-300, 1, 1.0000000000000002, 2.5, 1e300, math.MaxFloat64, math.Inf(1), math.NaN()}
	for i := 1; i < len(ordered); i++ {
		if a, b := FloatKey(ordered[i-1]), FloatKey(ordered[i]); a >= b {
			t.Errorf("FloatKey(%v) = %d, not below FloatKey(%v) = %d", ordered[i-1], a, ordered[i], b)
		}
	}
	if FloatKey(math.Copysign(0, -1)) != FloatKey(0) {
		t.Error("-0 and 0 have different keys")
	}
	if FloatKey(math.Float64frombits(0x7ff8000000000001)) != FloatKey(math.NaN()) || FloatKey(-math.NaN()) != FloatKey(math.NaN()) {
		t.Error("NaNs have different keys")
	}
	for _, f := range []float32{-3.5, 0.1, 16777217} {
		if x := float64(f); FloatKey(x) <= FloatKey(math.Nextafter(x, math.Inf(-1))) {
			t.Errorf("FloatKey(%v) is not above the float just below", f)
		}
	}
}
