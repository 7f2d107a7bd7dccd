package snapshot

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// BenchmarkZstdLevel writes the same rows as Parquet (pqarrow, this
// package's zstd codec, dictionaries on string columns as skade's tables
// have them) at each zstd level, so that the default level is chosen by
// measurement: time per row and file size. The settings run interleaved
// in each -count round, on two shapes: issue 14's MERGE benchmark rows
// (sequential id, a status of a few values, amount) and a wider mix
// (high-cardinality text, timestamps, small and random numbers).
//
//	go test ./snapshot -run '^$' -bench ZstdLevel -count 5 -benchtime 5x
func BenchmarkZstdLevel(b *testing.B) {
	const rows = 1 << 20
	shapes := []struct {
		name string
		rec  arrow.RecordBatch
	}{{"merge", zstdBenchMerge(rows)}, {"mixed", zstdBenchMixed(rows)}}
	settings := []struct {
		name  string
		level int
	}{
		{"level1", 1},
		{"level3", 3},
		{"unset", compress.DefaultCompressionLevel},
		{"level6", 6},
		{"uncompressed", -2},
	}
	for _, sh := range shapes {
		defer sh.rec.Release()
		for _, st := range settings {
			b.Run(sh.name+"/"+st.name, func(b *testing.B) {
				// as skade's tables write: dictionaries on string columns only
				opts := []parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithMaxRowGroupLength(rows)}
				for _, f := range sh.rec.Schema().Fields() {
					if f.Type.ID() == arrow.STRING {
						opts = append(opts, parquet.WithDictionaryFor(f.Name, true))
					}
				}
				if st.level == -2 {
					opts = append(opts, parquet.WithCompression(compress.Codecs.Uncompressed))
				} else {
					opts = append(opts, parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCompressionLevel(st.level))
				}
				props := parquet.NewWriterProperties(opts...)
				var buf bytes.Buffer
				start := time.Now()
				for b.Loop() {
					buf.Reset()
					w, err := pqarrow.NewFileWriter(sh.rec.Schema(), &buf, props, pqarrow.DefaultWriterProps())
					if err != nil {
						b.Fatal(err)
					}
					if err := w.Write(sh.rec); err != nil {
						b.Fatal(err)
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
				el := time.Since(start)
				b.ReportMetric(float64(el.Nanoseconds())/float64(b.N)/rows, "ns/row")
				b.ReportMetric(float64(buf.Len())/rows, "bytes/row")
			})
		}
	}
}

func zstdBenchMerge(n int) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "status", Type: arrow.BinaryTypes.String}, {Name: "amount", Type: arrow.PrimitiveTypes.Float64}}, nil)
	bld := array.NewRecordBuilder(mem, sc)
	defer bld.Release()
	statuses := []string{"active", "inactive", "pending", "closed", "new"}
	rnd := rand.New(rand.NewPCG(7, 9))
	for i := range n {
		bld.Field(0).(*array.Int64Builder).Append(int64(i))
		bld.Field(1).(*array.StringBuilder).Append(statuses[rnd.IntN(len(statuses))])
		bld.Field(2).(*array.Float64Builder).Append(float64(rnd.IntN(1000000)) / 100)
	}
	return bld.NewRecordBatch()
}

func zstdBenchMixed(n int) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "email", Type: arrow.BinaryTypes.String},
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int32},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64},
		{Name: "country", Type: arrow.BinaryTypes.String},
	}, nil)
	bld := array.NewRecordBuilder(mem, sc)
	defer bld.Release()
	countries := []string{"NO", "SE", "DK", "DE", "FR", "US", "GB", "NL", "PL", "ES", "IT", "JP"}
	rnd := rand.New(rand.NewPCG(3, 5))
	ts := int64(1_700_000_000_000_000)
	for i := range n {
		bld.Field(0).(*array.Int64Builder).Append(int64(rnd.Uint32()))
		bld.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("user%d@mail%d.example.com", rnd.IntN(5_000_000), rnd.IntN(50)))
		ts += int64(rnd.IntN(2_000_000))
		bld.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(ts))
		bld.Field(3).(*array.Int32Builder).Append(int32(rnd.IntN(100)))
		bld.Field(4).(*array.Float64Builder).Append(rnd.Float64() * 1000)
		bld.Field(5).(*array.StringBuilder).Append(countries[rnd.IntN(len(countries))])
		_ = i
	}
	return bld.NewRecordBatch()
}
