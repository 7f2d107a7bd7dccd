package exec

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestSingleRow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		counts []any
		want   string
		err    error
	}{
		{"one row or none", []any{1, nil, 1}, "a NULL c", nil},
		{"a row given two", []any{1, 2, nil}, "", ErrSubqueryRows},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			defer e.mem.AssertSize(t, 0)
			b := e.batch(e.col(arrow.PrimitiveTypes.Int64, tc.counts...), e.col(arrow.BinaryTypes.String, "a", nil, "c"))
			defer b.Release()
			x, err := NewSingleRow(colRef(b, 0), colRef(b, 1))
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.eval(x, b)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
	if _, err := NewSingleRow(lit(t, "x"), lit(t, "y")); err == nil {
		t.Fatal("a VARCHAR count was accepted")
	}
}
