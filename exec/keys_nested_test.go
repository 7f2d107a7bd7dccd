package exec

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestKeyEncoderNested checks that nested values encode equal exactly
// when they are equal as grouping keys: same length and pairwise equal
// elements, NULL elements equal to each other, -0.0 equal to 0.0.
func TestKeyEncoderNested(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	lt := arrow.ListOf(arrow.PrimitiveTypes.Float64)
	b := array.NewListBuilder(mem, arrow.PrimitiveTypes.Float64)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float64Builder)
	rows := [][]any{{1.0, 2.0}, {1.0, 2.0}, {1.0, nil}, {1.0, nil}, {2.0, 1.0}, {1.0}, {}, nil, {0.0}, {math.Copysign(0, -1)}, {1.0, 2.0, 3.0}}
	for _, r := range rows {
		if r == nil {
			b.AppendNull()
			continue
		}
		b.Append(true)
		for _, v := range r {
			if v == nil {
				vb.AppendNull()
			} else {
				vb.Append(v.(float64))
			}
		}
	}
	a := b.NewArray()
	defer a.Release()
	// a second column makes rows variable width around the list
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	for range rows {
		sb.Append("k")
	}
	s := sb.NewArray()
	defer s.Release()
	enc, err := NewKeyEncoder([]arrow.DataType{lt, arrow.BinaryTypes.String})
	if err != nil {
		t.Fatal(err)
	}
	var k RowKeys
	if err := enc.Encode([]arrow.Array{a, s}, &k); err != nil {
		t.Fatal(err)
	}
	same := func(i, j int) bool { return string(k.Key(i)) == string(k.Key(j)) }
	for _, c := range []struct {
		i, j int
		want bool
	}{{0, 1, true}, {2, 3, true}, {0, 2, false}, {0, 4, false}, {0, 5, false}, {5, 6, false}, {6, 7, false}, {8, 9, true}, {0, 10, false}} {
		if got := same(c.i, c.j); got != c.want {
			t.Errorf("rows %v and %v: equal keys %v, want %v", rows[c.i], rows[c.j], got, c.want)
		}
	}
	if !k.Null[7] || k.Null[6] {
		t.Errorf("Null flags %v", k.Null)
	}
	// a list of strings cannot collide with a differently split one
	enc2, _ := NewKeyEncoder([]arrow.DataType{arrow.ListOf(arrow.BinaryTypes.String)})
	lb := array.NewListBuilder(mem, arrow.BinaryTypes.String)
	defer lb.Release()
	for _, r := range [][]string{{"ab", "c"}, {"a", "bc"}} {
		lb.Append(true)
		for _, v := range r {
			lb.ValueBuilder().(*array.StringBuilder).Append(v)
		}
	}
	la := lb.NewArray()
	defer la.Release()
	var k2 RowKeys
	if err := enc2.Encode([]arrow.Array{la}, &k2); err != nil {
		t.Fatal(err)
	}
	if string(k2.Key(0)) == string(k2.Key(1)) {
		t.Errorf("{ab,c} and {a,bc} encode alike: %x", k2.Key(0))
	}
	if _, err := NewKeyEncoder([]arrow.DataType{arrow.StructOf(arrow.Field{Name: "a", Type: arrow.ListOf(arrow.BinaryTypes.StringView)})}); err == nil || !strings.Contains(err.Error(), "string_view") {
		t.Errorf("struct of an unusable type: %v", err)
	}
}
