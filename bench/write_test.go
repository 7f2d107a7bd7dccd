package bench

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/lake"
)

var wideSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "status", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "email", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
}, nil)

// wideBatches makes rows rows: a unique id, a 4-value status, a unique
// string, a float and a timestamp.
func wideBatches(rows, batch int) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	statuses := []string{"new", "paid", "shipped", "returned"}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for lo := 0; lo < rows; lo += batch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, wideSchema)
		for i := lo; i < min(lo+batch, rows); i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append(statuses[i%4])
			b.Field(2).(*array.StringBuilder).Append("user" + itoa(i*7919%rows) + "@example.com")
			b.Field(3).(*array.Float64Builder).Append(float64(i%10000) / 100)
			b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(base + int64(i)*1_000_000))
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out
}

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			break
		}
	}
	return string(buf[n:])
}

func dirBytes(b *testing.B, dir string) int64 {
	var total int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".parquet" {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	return total
}

// BenchmarkWriteDictionary measures a 1M-row append under three
// dictionary-encoding policies: pqarrow's default (every column), none,
// and skade's default (string columns only, with iceberg-go's cost-based
// fallback dropping it on unique strings).
func BenchmarkWriteDictionary(b *testing.B) {
	const rows = 1_000_000
	batches := wideBatches(rows, 65_536)
	defer func() {
		for _, r := range batches {
			r.Release()
		}
	}()
	policies := []struct {
		name  string
		props map[string]string
	}{
		{"all_columns", map[string]string{"parquet.enable.dictionary": "true"}},
		{"none", map[string]string{"parquet.enable.dictionary": "false",
			"write.parquet.dict-encoding-enabled.column.status": "false",
			"write.parquet.dict-encoding-enabled.column.email":  "false"}},
		{"skade_default", nil},
	}
	ctx := context.Background()
	for _, p := range policies {
		b.Run(p.name, func(b *testing.B) {
			var bytes int64
			for n := 0; n < b.N; n++ {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), "lake")
				lk, err := lake.Open(ctx, dir)
				if err != nil {
					b.Fatal(err)
				}
				tbl, err := lk.CreateTable(ctx, "w", wideSchema, lake.WithProperties(p.props))
				if err != nil {
					b.Fatal(err)
				}
				rdr, _ := array.NewRecordReader(wideSchema, batches)
				b.StartTimer()
				if _, err := tbl.Append(ctx, rdr); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				rdr.Release()
				bytes = dirBytes(b, dir)
				lk.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(bytes)/(1<<20), "MiB_on_disk")
		})
	}
}
