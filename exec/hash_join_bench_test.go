package exec

import (
	"context"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// hjBenchBatches returns n rows (id int64, v int64) in 8192-row batches,
// id = i*mult mod span scattered over the key space.
func hjBenchBatches(n, mod int) ([]arrow.RecordBatch, *arrow.Schema) {
	s := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	mem := memory.NewGoAllocator()
	var out []arrow.RecordBatch
	for off := 0; off < n; off += 8192 {
		b := array.NewRecordBuilder(mem, s)
		for i := off; i < min(off+8192, n); i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(uint64(i%mod) * 0x9E3779B97F4A7C15))
			b.Field(1).(*array.Int64Builder).Append(int64(i))
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out, s
}

// hjBenchSource replays batches without owning them.
type hjBenchSource struct {
	hjTestSource
}

func (s *hjBenchSource) Close() error { return nil }

func hjCount(b *testing.B, op Operator) int64 {
	ctx := context.Background()
	if err := op.Open(ctx); err != nil {
		b.Fatal(err)
	}
	defer op.Close()
	var n int64
	for {
		r, err := op.Next(ctx)
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n += r.NumRows()
		r.Release()
	}
}

// BenchmarkHashJoinOperator: 1M build rows (unique keys) x 4M probe rows,
// every probe row matching once; rows/s counts probe rows.
//
//	go test -run '^$' -bench 'HashJoinOperator|HashAggregateOperator' -benchtime 3x -count 5 ./exec
func BenchmarkHashJoinOperator(b *testing.B) {
	const build, probe = 1 << 20, 4 << 20
	bb, s := hjBenchBatches(build, build)
	pb, _ := hjBenchBatches(probe, build)
	defer htReleaseBatches(bb)
	defer htReleaseBatches(pb)
	for b.Loop() {
		j, err := NewHashJoin(JoinInner, &hjBenchSource{hjTestSource{schema: s, batches: pb}}, &hjBenchSource{hjTestSource{schema: s, batches: bb}},
			[]Expr{hjCol(s, 0)}, []Expr{hjCol(s, 0)}, nil, HashOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if n := hjCount(b, j); n != probe {
			b.Fatalf("%d rows", n)
		}
	}
	b.ReportMetric(float64(probe)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkHashAggregateOperator: GROUP BY id with 1M groups over 4M rows,
// count(*) and sum(v).
func BenchmarkHashAggregateOperator(b *testing.B) {
	const groups, rows = 1 << 20, 4 << 20
	in, s := hjBenchBatches(rows, groups)
	defer htReleaseBatches(in)
	for b.Loop() {
		cnt, _ := NewAggregate("count", nil, false, nil, nil)
		sum, _ := NewAggregate("sum", []Expr{hjCol(s, 1)}, false, nil, nil)
		h, err := NewHashAggregate(&hjBenchSource{hjTestSource{schema: s, batches: in}}, []Expr{hjCol(s, 0)}, []*Aggregate{cnt, sum}, HashOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if n := hjCount(b, h); n != groups {
			b.Fatalf("%d groups", n)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
