package exec

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

const benchRows = 1 << 20

func benchEval(b *testing.B, e Expr, batch arrow.RecordBatch) {
	ec := &EvalContext{Ctx: context.Background(), Mem: memory.DefaultAllocator, Now: time.Now()}
	b.ResetTimer()
	for range b.N {
		out, err := e.Eval(ec, batch)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkArithCompare evaluates a + b * 2 > c over 1M int64 rows.
func BenchmarkArithCompare(b *testing.B) {
	mem := memory.DefaultAllocator
	cols := make([]arrow.Array, 3)
	for k := range cols {
		bld := array.NewInt64Builder(mem)
		for i := range benchRows {
			bld.Append(int64(i*(k+1)%1000 - 500))
		}
		cols[k] = bld.NewArray()
		bld.Release()
	}
	batch := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "a", Type: tInt64}, {Name: "b", Type: tInt64}, {Name: "c", Type: tInt64}}, nil), cols, benchRows)
	defer batch.Release()
	a, bb, c := colRef(batch, 0), colRef(batch, 1), colRef(batch, 2)
	two, _ := NewLiteral(int64(2))
	mul, _ := NewCall("*", bb, two)
	add, _ := NewCall("+", a, mul)
	gt, err := NewCall(">", add, c)
	if err != nil {
		b.Fatal(err)
	}
	benchEval(b, gt, batch)
}

// BenchmarkLikeContains evaluates s LIKE '%foo%' over 1M short strings.
func BenchmarkLikeContains(b *testing.B) {
	for _, pat := range []string{"%foo%", "%f_o%"} {
		b.Run(pat, func(b *testing.B) {
			mem := memory.DefaultAllocator
			bld := array.NewStringBuilder(mem)
			for i := range benchRows {
				if i%10 == 0 {
					bld.Append(fmt.Sprintf("item-%d-foo-bar", i))
				} else {
					bld.Append(fmt.Sprintf("item-%d-baz-qux", i))
				}
			}
			col := bld.NewArray()
			bld.Release()
			batch := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "s", Type: tString}}, nil), []arrow.Array{col}, benchRows)
			col.Release()
			defer batch.Release()
			p, _ := NewLiteral(pat)
			e, err := NewCall("like", colRef(batch, 0), p)
			if err != nil {
				b.Fatal(err)
			}
			benchEval(b, e, batch)
		})
	}
}

// BenchmarkCase evaluates CASE WHEN a > 0 THEN a ELSE 100 / b END over 1M
// rows (an arm that can fail: the lazy, gathering path) and CASE WHEN a > 0
// THEN a ELSE b END (the eager path).
func BenchmarkCase(b *testing.B) {
	mem := memory.DefaultAllocator
	cols := make([]arrow.Array, 2)
	for k := range cols {
		bld := array.NewInt64Builder(mem)
		for i := range benchRows {
			if k == 0 {
				bld.Append(int64(i%1000 - 500))
			} else {
				bld.Append(int64(i%1000 + 1)) // never zero: ELSE may divide by it
			}
		}
		cols[k] = bld.NewArray()
		bld.Release()
	}
	batch := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "a", Type: tInt64}, {Name: "b", Type: tInt64}}, nil), cols, benchRows)
	defer batch.Release()
	a, bb := colRef(batch, 0), colRef(batch, 1)
	zero, _ := NewLiteral(int64(0))
	hundred, _ := NewLiteral(int64(100))
	cond, _ := NewCall(">", a, zero)
	div, _ := NewCall("/", hundred, bb)
	for _, tc := range []struct {
		name string
		els  Expr
	}{{"lazy", div}, {"eager", bb}} {
		b.Run(tc.name, func(b *testing.B) {
			e, err := NewCase([]When{{Cond: cond, Then: a}}, tc.els)
			if err != nil {
				b.Fatal(err)
			}
			benchEval(b, e, batch)
		})
	}
}
