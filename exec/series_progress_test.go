package exec

import (
	"context"
	"math"
	"testing"
)

// TestSeriesPlansItsRows: a series tells the Progress how many rows it
// will yield, so that a bar over INSERT … FROM range(n) has a percentage;
// the count must equal what it then yields.
func TestSeriesPlansItsRows(t *testing.T) {
	for _, c := range []struct {
		start, stop, step int64
		inclusive         bool
	}{
		{0, 10, 1, false}, {0, 10, 3, false}, {0, 9, 3, false}, {0, 9, 3, true}, {0, 10, 3, true},
		{10, 0, -2, false}, {10, 0, -2, true}, {5, 5, 1, false}, {5, 5, 1, true}, {0, 10, -1, false},
		{math.MaxInt64 - 5, math.MaxInt64, 2, true}, {-20000, 20000, 7, false},
	} {
		s, err := NewSeries("range", "range", c.start, c.stop, c.step, c.inclusive)
		if err != nil {
			t.Fatal(err)
		}
		var p Progress
		ctx := WithProgress(context.Background(), &p)
		out, err := Drain(ctx, s) // opens s

		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, b := range out {
			n += b.NumRows()
			b.Release()
		}
		if p.RowsTotal.Load() != n || p.Rows.Load() != n {
			t.Errorf("%+v: planned %d rows, read %d, yielded %d", c, p.RowsTotal.Load(), p.Rows.Load(), n)
		}
	}
}
