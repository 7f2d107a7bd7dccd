package exec

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// BenchmarkWindow computes row_number, a running sum and a 3-row moving
// max over 1M rows in 1,000 partitions:
//
//	row_number() OVER w, sum(x) OVER w, max(x) OVER (w ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)
//	WINDOW w AS (PARTITION BY p ORDER BY o)
func BenchmarkWindow(b *testing.B) {
	const n = 1_000_000
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "p", Type: arrow.PrimitiveTypes.Int64},
		{Name: "o", Type: arrow.PrimitiveTypes.Int64},
		{Name: "x", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var batches []arrow.RecordBatch
	for lo := 0; lo < n; lo += DefaultBatchRows {
		hi := min(lo+DefaultBatchRows, n)
		rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := lo; i < hi; i++ {
			rb.Field(0).(*array.Int64Builder).Append(int64(rng.IntN(1000)))
			rb.Field(1).(*array.Int64Builder).Append(rng.Int64N(1 << 40))
			rb.Field(2).(*array.Int32Builder).Append(rng.Int32N(1000))
		}
		batches = append(batches, rb.NewRecordBatch())
		rb.Release()
	}
	defer func() {
		for _, r := range batches {
			r.Release()
		}
	}()
	col := func(i int) *Column { return &Column{Index: i, Type: schema.Field(i).Type} }
	part, order := []Expr{col(0)}, []SortKey{{Expr: col(1)}}
	rn, _ := NewWindowFunc("row_number", nil, part, order, nil)
	sum, _ := NewWindowFunc("sum", []Expr{col(2)}, part, order, nil)
	mx, err := NewWindowFunc("max", []Expr{col(2)}, part, order, &Frame{Unit: FrameRows,
		Start: FrameBound{Kind: OffsetPreceding, Offset: scalar.NewInt64Scalar(1)}, End: FrameBound{Kind: OffsetFollowing, Offset: scalar.NewInt64Scalar(1)}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		v, _ := NewValues(schema, batches)
		w, err := NewWindow(v, []*WindowFunc{rn, sum, mx}, []string{"rn", "s", "m"}, WindowOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Open(ctx); err != nil {
			b.Fatal(err)
		}
		for {
			out, err := w.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
		w.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
