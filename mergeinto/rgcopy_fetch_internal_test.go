package mergeinto

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// watchedReader is a source whose reads are counted: how many run at
// once at most, and whether one fails.
type watchedReader struct {
	r          io.ReaderAt
	now, most  atomic.Int64
	failAt     int64 // a read starting here fails (-1: none)
	mu         sync.Mutex
	readsStart []int64
}

func (w *watchedReader) ReadAt(p []byte, off int64) (int, error) {
	n := w.now.Add(1)
	defer w.now.Add(-1)
	for {
		m := w.most.Load()
		if n <= m || w.most.CompareAndSwap(m, n) {
			break
		}
	}
	w.mu.Lock()
	w.readsStart = append(w.readsStart, off)
	w.mu.Unlock()
	if off == w.failAt {
		return 0, errors.New("injected read failure")
	}
	time.Sleep(100 * time.Microsecond) // a store's latency, so that reads overlap
	return w.r.ReadAt(p, off)
}

// writeRowGroups copies a file's row groups in pieces read ahead, several
// at once, and the copy reads back as the original; a failing read fails
// the copy; with small pieces and window every chunk is read in many
// pieces and still lands in order.
func TestWriteRowGroupsReadAhead(t *testing.T) {
	// a file of 5 row groups of 3 columns
	r := rand.New(rand.NewPCG(3, 4))
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "c", Type: arrow.PrimitiveTypes.Float64}}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer bld.Release()
	const rows = 50_000
	for i := 0; i < rows; i++ {
		bld.Field(0).(*array.Int64Builder).Append(r.Int64())
		if i%7 == 0 {
			bld.Field(1).AppendNull()
		} else {
			bld.Field(1).(*array.StringBuilder).Append(string(rune('a' + r.IntN(26))))
		}
		bld.Field(2).(*array.Float64Builder).Append(r.Float64())
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	var src bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(10_000), parquet.WithCompression(compress.Codecs.Zstd))
	fw, err := pqarrow.NewFileWriter(sc, &src, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	footer := func() *metadata.FileMetaData {
		pr, err := file.NewParquetReader(bytes.NewReader(src.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		raw, err := pr.MetaData().Serialize(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		md, err := metadata.NewFileMetaData(raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		return md
	}
	copyWith := func(piece, window int64, failAt int64) ([]byte, *watchedReader, error) {
		defer func(p, w int64) { copyPieceBytes, copyWindowBytes = p, w }(copyPieceBytes, copyWindowBytes)
		copyPieceBytes, copyWindowBytes = piece, window
		out := footer()
		wr := &watchedReader{r: bytes.NewReader(src.Bytes()), failAt: failAt}
		var dst bytes.Buffer
		err := writeRowGroups(context.Background(), &countingWriter{w: &dst}, every(out, wr), out)
		return dst.Bytes(), wr, err
	}
	for _, c := range []struct{ piece, window int64 }{{8 << 20, 16 << 20}, {1000, 3000}, {777, 100}} {
		got, wr, err := copyWith(c.piece, c.window, -1)
		if err != nil {
			t.Fatalf("piece %d window %d: %v", c.piece, c.window, err)
		}
		pr, err := file.NewParquetReader(bytes.NewReader(got))
		if err != nil {
			t.Fatal(err)
		}
		ar, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := ar.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if tbl.NumRows() != rows || pr.NumRowGroups() != 5 {
			t.Fatalf("piece %d window %d: %d rows in %d row groups", c.piece, c.window, tbl.NumRows(), pr.NumRowGroups())
		}
		for j := 0; j < int(rec.NumCols()); j++ {
			if !array.ChunkedEqual(tbl.Column(j).Data(), arrow.NewChunked(rec.Column(j).DataType(), []arrow.Array{rec.Column(j)})) {
				t.Fatalf("piece %d window %d: column %d differs", c.piece, c.window, j)
			}
		}
		tbl.Release()
		pr.Close()
		if c.piece == 1000 && (len(wr.readsStart) < 20 || wr.most.Load() < 2 || wr.most.Load() > copyReads) {
			t.Fatalf("small pieces: %d reads, at most %d at once", len(wr.readsStart), wr.most.Load())
		}
		if c.window == 100 && wr.most.Load() != 1 {
			// a window smaller than a piece holds one piece at a time
			t.Fatalf("tiny window: %d reads at once", wr.most.Load())
		}
	}
	// a read that fails fails the copy, with its error
	_, wr, _ := copyWith(1000, 3000, -1)
	failAt := wr.readsStart[len(wr.readsStart)/2]
	if _, _, err := copyWith(1000, 3000, failAt); err == nil || err.Error() != "injected read failure" {
		t.Fatalf("failing read: %v", err)
	}
	// a context done stops the copy
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := footer()
	if err := writeRowGroups(ctx, &countingWriter{w: io.Discard}, every(out, bytes.NewReader(src.Bytes())), out); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// every is writeRowGroups' sources when every chunk of md comes from r.
func every(md *metadata.FileMetaData, r io.ReaderAt) [][]io.ReaderAt {
	srcs := make([][]io.ReaderAt, len(md.RowGroups))
	for i, rg := range md.RowGroups {
		srcs[i] = make([]io.ReaderAt, len(rg.Columns))
		for j := range srcs[i] {
			srcs[i][j] = r
		}
	}
	return srcs
}
