package scan

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// DictStrings gives the strings a dictionary array stands for: int32
// indices with and without NULLs, narrower indices, a slice of a
// dictionary array and of its dictionary, empty strings and an empty
// array; an index past the dictionary is an error, not a panic.
func TestDictStrings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	build := func(idxType arrow.DataType, values []string, idx []int, valid []bool) *array.Dictionary {
		t.Helper()
		db := array.NewStringBuilder(mem)
		defer db.Release()
		db.AppendValues(values, nil)
		dict := db.NewArray()
		defer dict.Release()
		ib := array.NewBuilder(mem, idxType)
		defer ib.Release()
		for i, k := range idx {
			if valid != nil && !valid[i] {
				ib.AppendNull()
				continue
			}
			switch b := ib.(type) {
			case *array.Int32Builder:
				b.Append(int32(k))
			case *array.Int8Builder:
				b.Append(int8(k))
			case *array.Int16Builder:
				b.Append(int16(k))
			}
		}
		ind := ib.NewArray()
		defer ind.Release()
		return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: idxType, ValueType: arrow.BinaryTypes.String}, ind, dict)
	}
	check := func(name string, d *array.Dictionary, want []string, wantValid []bool) {
		t.Helper()
		got, err := DictStrings(mem, d, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer got.Release()
		s := got.(*array.String)
		if s.Len() != len(want) {
			t.Fatalf("%s: %d values, want %d", name, s.Len(), len(want))
		}
		for i := range want {
			if wantValid != nil && !wantValid[i] {
				if s.IsValid(i) {
					t.Fatalf("%s: value %d is %q, want NULL", name, i, s.Value(i))
				}
				continue
			}
			if !s.IsValid(i) || s.Value(i) != want[i] {
				t.Fatalf("%s: value %d is %q (valid %v), want %q", name, i, s.Value(i), s.IsValid(i), want[i])
			}
		}
	}
	vals := []string{"alpha", "", "gamma-delta", "b"}
	d := build(arrow.PrimitiveTypes.Int32, vals, []int{2, 0, 0, 1, 3, 2}, nil)
	check("int32", d, []string{"gamma-delta", "alpha", "alpha", "", "b", "gamma-delta"}, nil)
	sl := array.NewSlice(d, 2, 5).(*array.Dictionary)
	check("slice", sl, []string{"alpha", "", "b"}, nil)
	sl.Release()
	d.Release()

	valid := []bool{true, false, true, false, true}
	for _, it := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16} {
		d := build(it, vals, []int{3, 0, 1, 2, 0}, valid)
		check("nulls "+it.String(), d, []string{"b", "", "", "", "alpha"}, valid)
		d.Release()
	}

	// a dictionary that is itself a slice: its offsets do not start at 0
	db := array.NewStringBuilder(mem)
	db.AppendValues([]string{"skip", "me", "x", "yz"}, nil)
	full := db.NewArray()
	db.Release()
	part := array.NewSlice(full, 2, 4)
	full.Release()
	ib := array.NewInt32Builder(mem)
	ib.AppendValues([]int32{1, 0, 1}, nil)
	ind := ib.NewArray()
	ib.Release()
	d = array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, ind, part)
	ind.Release()
	part.Release()
	check("sliced dictionary", d, []string{"yz", "x", "yz"}, nil)
	d.Release()

	// only the rows selected, NULLs among them
	d = build(arrow.PrimitiveTypes.Int16, vals, []int{3, 0, 1, 2, 0}, valid)
	got, err := DictStrings(mem, d, []int32{0, 1, 4})
	if err != nil {
		t.Fatal(err)
	}
	if s := got.(*array.String); s.Len() != 3 || s.Value(0) != "b" || s.IsValid(1) || s.Value(2) != "alpha" || s.NullN() != 1 {
		t.Fatalf("selected rows: %v", got)
	}
	got.Release()
	if _, err := DictStrings(mem, d, []int32{5}); err == nil {
		t.Fatal("a row past the array: no error")
	}
	d.Release()

	d = build(arrow.PrimitiveTypes.Int32, nil, nil, nil)
	check("empty", d, nil, nil)
	d.Release()

	d = build(arrow.PrimitiveTypes.Int32, vals, []int{0, 4}, nil)
	if _, err := DictStrings(mem, d, nil); err == nil || !strings.Contains(err.Error(), "dictionary index 4 of 4") {
		t.Fatalf("an index past the dictionary: %v", err)
	}
	d.Release()
}

// Only the same type, or a widening that loses nothing, is read directly.
func TestDirectCastable(t *testing.T) {
	d := func(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
	for _, tc := range []struct {
		from, to arrow.DataType
		want     bool
	}{
		{arrow.BinaryTypes.String, arrow.BinaryTypes.String, true},
		{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, true},
		{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, false},
		{arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Int64, false},
		{arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, true},
		{arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32, false},
		{d(9, 2), d(18, 2), true},
		{&arrow.Decimal32Type{Precision: 9, Scale: 2}, d(9, 2), true},
		{d(18, 2), d(9, 2), false},
		{d(9, 2), d(18, 3), false},
		{arrow.FixedWidthTypes.Timestamp_ns, arrow.FixedWidthTypes.Timestamp_us, false},
		{arrow.FixedWidthTypes.Timestamp_us, arrow.FixedWidthTypes.Timestamp_us, true},
		{arrow.BinaryTypes.Binary, arrow.BinaryTypes.String, false},
	} {
		if got := DirectCastable(tc.from, tc.to); got != tc.want {
			t.Errorf("%s to %s: %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}
