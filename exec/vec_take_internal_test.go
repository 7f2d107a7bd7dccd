package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestTakeNested takes a list column with repeats, runs, gaps and
// missing (-1) indices.
func TestTakeNested(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := array.NewListBuilder(mem, arrow.BinaryTypes.String)
	vb := b.ValueBuilder().(*array.StringBuilder)
	for _, row := range [][]string{{"a"}, {"b", "c"}, nil, {}, {"d"}} {
		switch {
		case row == nil:
			b.AppendNull()
		default:
			b.Append(true)
			vb.AppendValues(row, nil)
		}
	}
	lst := b.NewArray()
	b.Release()
	defer lst.Release()
	got, err := takeArray(mem, lst, []int32{4, 0, 1, -1, -1, 2, 3, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	want := `[["d"] ["a"] ["b" "c"] (null) (null) (null) [] ["b" "c"] ["b" "c"]]`
	if s := got.String(); s != want {
		t.Errorf("got %s\nwant %s", s, want)
	}
	empty, err := takeArray(mem, lst, nil)
	if err != nil || empty.Len() != 0 {
		t.Errorf("empty take: %v %v", empty, err)
	}
	empty.Release()
}
