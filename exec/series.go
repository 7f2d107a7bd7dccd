package exec

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Series generates start, start+step, ... up to stop: range(a, b[, step])
// (stop excluded, as DuckDB) and generate_series(a, b[, step]) (stop
// included, as Postgres). Output: one BIGINT column.
type Series struct {
	name              string
	start, stop, step int64
	inclusive         bool
	schema            *arrow.Schema
	cur               int64
	done              bool
	batchRows         int
	metrics           Metrics
}

var _ Operator = (*Series)(nil)

// NewSeries validates the bounds; a zero step is an error, as in Postgres.
func NewSeries(name, column string, start, stop, step int64, inclusive bool) (*Series, error) {
	if step == 0 {
		return nil, fmt.Errorf("%s: step size cannot equal zero", name)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: column, Type: arrow.PrimitiveTypes.Int64}}, nil)
	return &Series{name: name, start: start, stop: stop, step: step, inclusive: inclusive, schema: schema, batchRows: DefaultBatchRows}, nil
}

func (s *Series) Schema() *arrow.Schema { return s.schema }
func (s *Series) Children() []Operator  { return nil }
func (s *Series) Metrics() *Metrics     { return &s.metrics }
func (s *Series) String() string {
	return fmt.Sprintf("Series %s(%d, %d, %d)", s.name, s.start, s.stop, s.step)
}

func (s *Series) Open(context.Context) error {
	s.cur, s.done = s.start, false
	return nil
}

// more reports whether v is still inside the series.
func (s *Series) more(v int64) bool {
	switch {
	case s.step > 0 && s.inclusive:
		return v <= s.stop
	case s.step > 0:
		return v < s.stop
	case s.inclusive:
		return v >= s.stop
	default:
		return v > s.stop
	}
}

func (s *Series) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.done || !s.more(s.cur) {
		s.done = true
		return nil, EOF
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for n := 0; n < s.batchRows && s.more(s.cur); n++ {
		b.Append(s.cur)
		next := s.cur + s.step
		if (s.step > 0 && next < s.cur) || (s.step < 0 && next > s.cur) {
			s.done = true // overflow: the series ends at the last representable value
			break
		}
		s.cur = next
	}
	arr := b.NewArray()
	defer arr.Release()
	out := array.NewRecordBatch(s.schema, []arrow.Array{arr}, int64(arr.Len()))
	s.metrics.Add(out, start)
	return out, nil
}

func (s *Series) Close() error { return nil }
