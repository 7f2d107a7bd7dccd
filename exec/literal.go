package exec

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/scan"
)

// NewLiteral makes a Literal of a Go value: nil (untyped NULL), bool,
// int (integer when it fits, else bigint, as Postgres types a numeric
// literal), int8..int64, float32, float64, string, []byte, time.Time
// (timestamptz), time.Duration (interval), arrow.Date32,
// arrow.MonthDayNanoInterval, or a scalar.Scalar as is.
func NewLiteral(v any) (*Literal, error) {
	var s scalar.Scalar
	switch x := v.(type) {
	case nil:
		s = scalar.MakeNullScalar(tNull)
	case scalar.Scalar:
		s = x
	case bool:
		s = scalar.NewBooleanScalar(x)
	case int:
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			s = scalar.NewInt32Scalar(int32(x))
		} else {
			s = scalar.NewInt64Scalar(int64(x))
		}
	case int8:
		s = scalar.NewInt8Scalar(x)
	case int16:
		s = scalar.NewInt16Scalar(x)
	case int32:
		s = scalar.NewInt32Scalar(x)
	case int64:
		s = scalar.NewInt64Scalar(x)
	case uint8:
		s = scalar.NewInt16Scalar(int16(x))
	case uint16:
		s = scalar.NewInt32Scalar(int32(x))
	case uint32:
		s = scalar.NewInt64Scalar(int64(x))
	case uint:
		return NewLiteral(uint64(x))
	case uint64:
		if x <= math.MaxInt64 {
			s = scalar.NewInt64Scalar(int64(x))
		} else {
			// past BIGINT: numeric(20), as SQL reads an unsigned column
			s = scalar.NewDecimal128Scalar(decimal128.FromU64(x), &arrow.Decimal128Type{Precision: 20, Scale: 0})
		}
	case float32:
		s = scalar.NewFloat32Scalar(x)
	case float64:
		s = scalar.NewFloat64Scalar(x)
	case string:
		s = scalar.NewStringScalar(x)
	case []byte:
		s = scalar.NewBinaryScalar(memory.NewBufferBytes(append([]byte(nil), x...)), tBinary)
	case time.Time:
		s = scalar.NewTimestampScalar(arrow.Timestamp(x.UnixMicro()), tTimestampTZ)
	case time.Duration:
		s = scalar.NewMonthDayNanoIntervalScalar(arrow.MonthDayNanoInterval{Nanoseconds: int64(x)})
	case arrow.Date32:
		s = scalar.NewDate32Scalar(x)
	case arrow.MonthDayNanoInterval:
		s = scalar.NewMonthDayNanoIntervalScalar(x)
	default:
		return nil, fmt.Errorf("exec: cannot make a literal of Go type %T (planner bug)", v)
	}
	return &Literal{Value: s}, nil
}

// CheckParam refuses a statement argument (a Go value bound to $n) that
// NewLiteral would take but SQL cannot hold: a string that is not UTF-8,
// as SQL text is refused, and a time.Time outside PostgreSQL's timestamp
// range, whose microseconds would not fit an int64 (a time in the year
// 300000 came back in the year -284555).
func CheckParam(v any) error {
	switch x := v.(type) {
	case string:
		return scan.InvalidUTF8(x)
	case time.Time:
		if x.Before(time.UnixMicro(minTimestampMicros)) || x.After(time.UnixMicro(maxTimestampMicros)) {
			return fmt.Errorf("%w: %s", ErrTimestampOutOfRange, x.Format(time.RFC3339))
		}
	}
	return nil
}

// NewNullLiteral is a NULL of type dt.
func NewNullLiteral(dt arrow.DataType) *Literal {
	return &Literal{Value: scalar.MakeNullScalar(dt)}
}

// NewDecimalLiteral parses a numeric constant such as "12.50" into a
// decimal just wide enough to hold it, as Postgres types 12.50 as
// numeric with scale 2.
func NewDecimalLiteral(text string) (*Literal, error) {
	digits, scale := 0, 0
	seenPoint := false
	for _, c := range text {
		switch {
		case c == '.':
			seenPoint = true
		case c >= '0' && c <= '9':
			digits++
			if seenPoint {
				scale++
			}
		}
	}
	p := int32(max(digits, 1))
	if p > 38 {
		return nil, fmt.Errorf("numeric constant %s has more than 38 digits", parser.Abbrev(text))
	}
	dt := &arrow.Decimal128Type{Precision: p, Scale: int32(scale)}
	n, ok, overflow := parseDecimal(text, p, int32(scale))
	if !ok {
		return nil, invalidInput(dt, text)
	}
	if overflow {
		return nil, errNumericOverflow
	}
	return &Literal{Value: scalar.NewDecimal128Scalar(n, dt)}, nil
}
