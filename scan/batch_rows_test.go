package scan

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// The reason for ReadBatchRows, checked against arrow-go: a batch of a
// power of two rows reserves values for twice as many, one row fewer
// reserves for the power of two.
func TestReadBatchRowsHalvesTheReservation(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range 20_000 {
		b.Append(int64(i))
	}
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, 20_000)
	col.Release()
	var buf bytes.Buffer
	writeTestParquet(t, &buf, rec, parquet.NewWriterProperties())
	reserved := func(batch int) int {
		pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		defer pf.Close()
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(batch)}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		rr, err := fr.GetRecordReader(context.Background(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer rr.Release()
		if !rr.Next() {
			t.Fatal(rr.Err())
		}
		got := rr.RecordBatch()
		if got.NumRows() != int64(batch) {
			t.Fatalf("batch of %d rows, asked for %d", got.NumRows(), batch)
		}
		return cap(got.Column(0).Data().Buffers()[1].Buf())
	}
	if got := reserved(8192); got != 2*8192*8 {
		t.Logf("arrow-go now reserves %d bytes for 8,192 values; ReadBatchRows may be moot", got)
	}
	if n := ReadBatchRows(8192); n != 8191 || reserved(n) > 8192*8 {
		t.Fatalf("ReadBatchRows(8192) = %d reserves %d bytes, want at most %d", n, reserved(n), 8192*8)
	}
	if ReadBatchRows(6000) != 6000 || ReadBatchRows(512) != 512 {
		t.Fatal("ReadBatchRows changed a batch size that is not a large power of two")
	}
}

// writeTestParquet writes rec, which it consumes, as a Parquet file to w.
func writeTestParquet(t *testing.T, w io.Writer, rec arrow.RecordBatch, props *parquet.WriterProperties) {
	t.Helper()
	defer rec.Release()
	fw, err := pqarrow.NewFileWriter(rec.Schema(), w, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}
