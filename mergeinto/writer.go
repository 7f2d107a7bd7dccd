package mergeinto

import (
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
)

// fileWriter streams batches into iceberg-go's WriteRecords, which runs in
// its own goroutine, so that a rewritten file is written while it is read
// instead of being held whole. WriteRecords picks the partitioned (fanout)
// or the rolling writer from the table's spec, so rows whose partition
// values an UPDATE changed land in the right partition.
//
// INVARIANT: every batch handed to push is released exactly once, by
// WriteRecords (or the direct writer) or by the drain in stop.
type fileWriter struct {
	ch     chan arrow.RecordBatch
	done   chan struct{}
	cancel context.CancelFunc

	mu    sync.Mutex
	files []iceberg.DataFile
	err   error

	closed      bool // stopped: the goroutine is done
	inputClosed bool // ch is closed
}

// startWriter starts a file writer for tbl taking batches of schema.
// With a direct plan (planDirect) the direct writer writes the files
// instead of WriteRecords, and does the same by the batches.
func startWriter(ctx context.Context, tbl *table.Table, schema *arrow.Schema, opts []table.WriteRecordOption, direct *directPlan) *fileWriter {
	ctx, cancel := context.WithCancel(ctx)
	queue := 2
	if direct != nil {
		queue += directQueue
	}
	w := &fileWriter{ch: make(chan arrow.RecordBatch, queue), done: make(chan struct{}), cancel: cancel}
	seq := func(yield func(arrow.RecordBatch, error) bool) {
		for b := range w.ch {
			if !yield(b, nil) {
				// WriteRecords gave up (it failed); it released b.
				for b := range w.ch {
					b.Release()
				}
				return
			}
		}
	}
	go func() {
		defer close(w.done)
		for df, err := range writeFiles(ctx, tbl, schema, seq, direct, opts...) {
			w.mu.Lock()
			if err != nil {
				w.err = err
				w.mu.Unlock()
				break
			}
			w.files = append(w.files, df)
			w.mu.Unlock()
		}
		// Whatever WriteRecords did not consume is let go by stop.
	}()
	return w
}

// push hands b to the writer, which owns it from here on.
func (w *fileWriter) push(ctx context.Context, b arrow.RecordBatch) error {
	b = exec.NormalizeBatch(b)
	select {
	case w.ch <- b:
		return nil
	case <-w.done:
		b.Release()
		return w.result()
	case <-ctx.Done():
		b.Release()
		return ctx.Err()
	}
}

// pushAll pushes bs in order; on failure it releases those not pushed.
func (w *fileWriter) pushAll(ctx context.Context, bs []arrow.RecordBatch) error {
	for i, b := range bs {
		if err := w.push(ctx, b); err != nil {
			releaseBatches(bs[i+1:])
			return err
		}
	}
	return nil
}

func (w *fileWriter) result() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		return context.Canceled // done before close: only cancellation does that
	}
	return w.err
}

// finish closes the input and waits for the data files.
func (w *fileWriter) finish() ([]iceberg.DataFile, error) {
	w.stop(false)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.files, w.err
}

// closeInput closes the input without waiting: the writer goes on to
// encode what it holds and to close its file. A writer holds its open
// row group until then, so closing several before waiting for any
// (closeInputs, waitAll) has their last row groups encoded side by side.
// Nothing may be pushed after it; finish or stop then waits. Idempotent.
func (w *fileWriter) closeInput() {
	if !w.inputClosed {
		w.inputClosed = true
		close(w.ch)
	}
}

// stop closes the input, cancelling the write first when abort is set,
// waits for the goroutine and releases unconsumed batches. Idempotent.
func (w *fileWriter) stop(abort bool) {
	if w.closed {
		return
	}
	w.closed = true
	if abort {
		w.cancel()
	}
	w.closeInput()
	<-w.done
	for b := range w.ch {
		b.Release()
	}
	w.cancel()
}

// closeInputs closes the inputs of ws (nil ones skipped) without waiting:
// their last row groups are then encoded side by side.
func closeInputs(ws []*fileWriter) {
	for _, w := range ws {
		if w != nil {
			w.closeInput()
		}
	}
}

// waitAll waits for ws (nil ones skipped) in order and returns their data
// files in the order of ws; on failure it stops at the first writer that
// failed, the others still closing (the merger's abort waits for them).
// Close their inputs first (closeInputs), or each waits for the one
// before it.
func waitAll(ws []*fileWriter) ([][]iceberg.DataFile, error) {
	out := make([][]iceberg.DataFile, len(ws))
	for i, w := range ws {
		if w == nil {
			continue
		}
		files, err := w.finish()
		if err != nil {
			return nil, err
		}
		out[i] = files
	}
	return out, nil
}

// written returns the data files completed so far (for cleanup).
func (w *fileWriter) written() []iceberg.DataFile {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]iceberg.DataFile(nil), w.files...)
}
