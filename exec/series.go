package exec

import (
	"context"
	"fmt"
	"math"
	"math/big"
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
	progress          *Progress
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

func (s *Series) Open(ctx context.Context) error {
	s.cur, s.done = s.start, false
	s.progress = ProgressFrom(ctx)
	s.progress.PlannedRows(s.length())
	return nil
}

// length is how many values the series yields (at most MaxInt64).
func (s *Series) length() int64 {
	if !s.more(s.start) {
		return 0
	}
	span := new(big.Int).Sub(big.NewInt(s.stop), big.NewInt(s.start))
	n := new(big.Int).Quo(span, big.NewInt(s.step))
	if !s.inclusive && new(big.Int).Rem(span, big.NewInt(s.step)).Sign() == 0 {
		n.Sub(n, big.NewInt(1))
	}
	n.Add(n, big.NewInt(1))
	if !n.IsInt64() {
		return math.MaxInt64
	}
	return n.Int64()
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
	s.progress.AddRows(out.NumRows())
	return out, nil
}

func (s *Series) Close() error { return nil }

// TimeSeries generates timestamps from start, adding step each time, up
// to stop: range (stop excluded) and generate_series (stop included)
// over TIMESTAMP or TIMESTAMPTZ with an INTERVAL step. Months and days
// are calendar steps in UTC, as Postgres adds them.
type TimeSeries struct {
	name        string
	start, stop time.Time
	step        arrow.MonthDayNanoInterval
	inclusive   bool
	typ         *arrow.TimestampType
	schema      *arrow.Schema
	cur         time.Time
	done        bool
	metrics     Metrics
}

var _ Operator = (*TimeSeries)(nil)

// NewTimeSeries validates the step: it must move forward or backward.
func NewTimeSeries(name, column string, start, stop time.Time, step arrow.MonthDayNanoInterval, inclusive bool, typ *arrow.TimestampType) (*TimeSeries, error) {
	next := seriesAdd(start, step)
	if !next.After(start) && !next.Before(start) {
		return nil, fmt.Errorf("%s: step size cannot equal zero", name)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: column, Type: typ}}, nil)
	return &TimeSeries{name: name, start: start.UTC(), stop: stop.UTC(), step: step, inclusive: inclusive, typ: typ, schema: schema}, nil
}

// seriesAdd adds an interval as Postgres does: months first, clamping the
// day to the end of a shorter month (Jan 31 + 1 month = Feb 29), then
// days, then the time part.
func seriesAdd(t time.Time, iv arrow.MonthDayNanoInterval) time.Time {
	if iv.Months != 0 {
		y, m, d := t.Date()
		first := time.Date(y, m, 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC).AddDate(0, int(iv.Months), 0)
		last := first.AddDate(0, 1, -1).Day()
		t = first.AddDate(0, 0, min(d, last)-1)
	}
	return t.AddDate(0, 0, int(iv.Days)).Add(time.Duration(iv.Nanoseconds))
}

func (s *TimeSeries) Schema() *arrow.Schema { return s.schema }
func (s *TimeSeries) Children() []Operator  { return nil }
func (s *TimeSeries) Metrics() *Metrics     { return &s.metrics }
func (s *TimeSeries) String() string {
	return fmt.Sprintf("TimeSeries %s(%s, %s)", s.name, s.start.Format(time.RFC3339), s.stop.Format(time.RFC3339))
}
func (s *TimeSeries) Open(context.Context) error { s.cur, s.done = s.start, false; return nil }
func (s *TimeSeries) Close() error               { return nil }

func (s *TimeSeries) more(t time.Time) bool {
	forward := seriesAdd(s.start, s.step).After(s.start)
	switch {
	case forward && s.inclusive:
		return !t.After(s.stop)
	case forward:
		return t.Before(s.stop)
	case s.inclusive:
		return !t.Before(s.stop)
	default:
		return t.After(s.stop)
	}
}

func (s *TimeSeries) Next(ctx context.Context) (arrow.RecordBatch, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.done || !s.more(s.cur) {
		s.done = true
		return nil, EOF
	}
	b := array.NewTimestampBuilder(memory.DefaultAllocator, s.typ)
	defer b.Release()
	for n := 0; n < DefaultBatchRows && s.more(s.cur); n++ {
		b.Append(arrow.Timestamp(s.cur.UnixMicro()))
		s.cur = seriesAdd(s.cur, s.step)
	}
	arr := b.NewArray()
	defer arr.Release()
	out := array.NewRecordBatch(s.schema, []arrow.Array{arr}, int64(arr.Len()))
	s.metrics.Add(out, start)
	return out, nil
}
