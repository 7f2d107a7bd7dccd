package exec

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/scan"
)

// ReaderSource turns an array.RecordReader into an Operator: registered
// readers, read_csv and read_parquet. A reader can be read once, so Open
// obtains a fresh one from the factory.
type ReaderSource struct {
	name    string
	schema  *arrow.Schema
	open    func(ctx context.Context) (array.RecordReader, error)
	rdr     array.RecordReader
	metrics Metrics
	// progress is the Progress of Open's context (nil for none);
	// bytes is how many of rdr's bytes (a scan.ByteCounter's) it has
	// reported; filesDone how many of rdr's files (a scan.FileCounter's) it has
	// been told are done.
	progress  *Progress
	filesDone int
	bytes     int64
}

var _ Operator = (*ReaderSource)(nil)

// NewReaderSource returns an operator over the readers open makes. Every
// batch must have schema's column types; open's reader is released on
// Close.
func NewReaderSource(name string, schema *arrow.Schema, open func(ctx context.Context) (array.RecordReader, error)) *ReaderSource {
	return &ReaderSource{name: name, schema: schema, open: open}
}

func (r *ReaderSource) Schema() *arrow.Schema { return r.schema }
func (r *ReaderSource) Children() []Operator  { return nil }
func (r *ReaderSource) Metrics() *Metrics     { return &r.metrics }
func (r *ReaderSource) String() string        { return "ReaderSource " + r.name }

func (r *ReaderSource) Open(ctx context.Context) error {
	if r.rdr != nil {
		r.rdr.Release()
		r.rdr = nil
	}
	rdr, err := r.open(ctx)
	if err != nil {
		return err
	}
	r.rdr = rdr
	r.progress, r.filesDone, r.bytes = ProgressFrom(ctx), 0, 0
	if fc, ok := rdr.(scan.FileCounter); ok {
		_, total := fc.Files()
		r.progress.Planned(int64(total))
	}
	if bc, ok := rdr.(scan.ByteCounter); ok {
		_, total := bc.Bytes()
		r.progress.AddBytes(0, total)
	}
	return nil
}

// report tells the Progress the rows of a batch read and the files
// finished.
func (r *ReaderSource) report(rows int64) {
	r.progress.AddRows(rows)
	if bc, ok := r.rdr.(scan.ByteCounter); ok {
		read, _ := bc.Bytes()
		r.progress.AddBytes(read-r.bytes, 0)
		r.bytes = read
	}
	if fc, ok := r.rdr.(scan.FileCounter); ok {
		done, _ := fc.Files()
		for ; r.filesDone < done; r.filesDone++ {
			r.progress.FileDone()
		}
	}
}

func (r *ReaderSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.rdr == nil || !r.rdr.Next() {
			if r.rdr != nil && r.rdr.Err() != nil {
				return nil, fmt.Errorf("%s: %w", r.name, r.rdr.Err())
			}
			if r.rdr != nil {
				r.report(0)
			}
			r.metrics.Add(nil, start)
			return nil, EOF
		}
		b := r.rdr.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		if err := checkBatchSchema(r.schema, b); err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		b.Retain()
		r.metrics.Add(b, start)
		r.report(b.NumRows())
		return b, nil
	}
}

func (r *ReaderSource) Close() error {
	if r.rdr != nil {
		r.rdr.Release()
		r.rdr = nil
	}
	return nil
}
