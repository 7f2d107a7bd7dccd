package exec

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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
	// progress is the Progress of Open's context (nil for none), input
	// what of rdr's files and bytes it has been told.
	progress *Progress
	input    InputProgress
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
	r.progress = ProgressFrom(ctx)
	r.input.Plan(rdr, r.progress)
	return nil
}

// report tells the Progress the rows of a batch read, and the bytes and
// files the reader got through.
func (r *ReaderSource) report(rows int64) { r.input.Report(r.rdr, r.progress, rows) }

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
