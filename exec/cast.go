package exec

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/skadedb/skade/parser"
)

// Cast converts its argument to type To. With Try set, a value that does
// not convert becomes NULL instead of failing the statement (TRY_CAST).
type Cast struct {
	Arg Expr
	To  arrow.DataType
	Try bool
	fn  castFn
}

// castFn converts one array. A row that fails to convert is an error, or
// NULL when try is set.
type castFn func(mem memory.Allocator, in arrow.Array, try bool) (arrow.Array, error)

var _ Expr = (*Cast)(nil)

func (c *Cast) DataType() arrow.DataType { return c.To }

func (c *Cast) Eval(ec *EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	in, err := c.Arg.Eval(ec, batch)
	if err != nil {
		return nil, err
	}
	defer in.Release()
	return c.fn(ec.Mem, in, c.Try)
}

func (c *Cast) String() string {
	kw := "CAST"
	if c.Try {
		kw = "TRY_CAST"
	}
	return fmt.Sprintf("%s(%s AS %s)", kw, c.Arg.String(), TypeName(c.To))
}

// NewCast converts e to type to. A cast of a literal is evaluated at once,
// so a bad constant is reported when the statement is bound.
func NewCast(e Expr, to arrow.DataType, try bool) (Expr, error) {
	if l, ok := e.(*Literal); ok && l.Probe != nil {
		l.Probe(to)
	}
	from := e.DataType()
	if arrow.TypeEqual(from, to) {
		return e, nil
	}
	fn := castFunc(from, to)
	if fn == nil {
		return nil, fmt.Errorf("cannot cast type %s to %s", TypeName(from), TypeName(to))
	}
	c := &Cast{Arg: e, To: to, Try: try, fn: fn}
	if _, ok := e.(*Literal); ok {
		l, err := foldConstant(c)
		if err != nil {
			return nil, err
		}
		if _, ext := to.(arrow.ExtensionType); ext {
			// arrow-go cannot broadcast an extension scalar into an
			// array, so the checked cast stays a node
			return c, nil
		}
		return l, nil
	}
	return c, nil
}

// castFunc picks the conversion from one type to another, or nil.
func castFunc(from, to arrow.DataType) castFn {
	if isNull(from) {
		return func(mem memory.Allocator, in arrow.Array, _ bool) (arrow.Array, error) {
			return nullArray(mem, to, in.Len()), nil
		}
	}
	if fl, tl := listOf(from), listOf(to); fl != nil && tl != nil {
		return listCast(fl, tl)
	}
	if fs, ok := from.(*arrow.StructType); ok {
		if ts, ok := to.(*arrow.StructType); ok {
			return structCast(fs, ts)
		}
	}
	if fm, tm := mapOf(from), mapOf(to); fm != nil && tm != nil {
		return mapToMapCast(fm, tm)
	}
	if isString(to) {
		f := textFormatter(from)
		if f == nil {
			return nil
		}
		return func(mem memory.Allocator, in arrow.Array, _ bool) (arrow.Array, error) {
			return formatArray(mem, in, f), nil
		}
	}
	if isString(from) {
		return parseCast(to)
	}
	switch {
	case isNumeric(from) && isNumeric(to):
		return numericCast(from, to)
	case from.ID() == arrow.BOOL && isInteger(to):
		return boolToInt(to)
	case isInteger(from) && to.ID() == arrow.BOOL:
		return intToBool(from)
	case from.ID() == arrow.DATE32 && isTimestamp(to):
		return mapCast(to, func(d arrow.Date32) (arrow.Timestamp, bool) {
			if int64(d) > maxTimestampDays || int64(d)*usPerDay < minTimestampMicros {
				return 0, false
			}
			return arrow.Timestamp(int64(d) * usPerDay), true
		}, func(arrow.Date32) error { return ErrTimestampOutOfRange })
	case isTimestamp(from) && to.ID() == arrow.DATE32:
		return mapCast(to, func(t arrow.Timestamp) (arrow.Date32, bool) {
			return arrow.Date32(floorDiv(int64(t), usPerDay)), true
		}, nil)
	case isTimestamp(from) && isTimestamp(to):
		// the session time zone is UTC, so the instant keeps its value
		return relabel(to)
	case isTimestamp(from) && to.ID() == arrow.TIME64:
		return mapCast(to, func(t arrow.Timestamp) (arrow.Time64, bool) {
			_, tod := splitMicros(int64(t))
			return arrow.Time64(tod), true
		}, nil)
	}
	return nil
}

// relabel reuses the input's buffers under another type of the same
// layout.
func relabel(to arrow.DataType) castFn {
	return func(mem memory.Allocator, in arrow.Array, _ bool) (arrow.Array, error) {
		d := in.Data()
		data := array.NewData(to, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
		defer data.Release()
		return array.MakeFromData(data), nil
	}
}

// nullMask is the validity of a cast's output: the input's, minus the
// rows a TRY_CAST could not convert.
type nullMask struct {
	mem  memory.Allocator
	n    int
	buf  *memory.Buffer
	bits []byte
}

func newNullMask(mem memory.Allocator, in arrow.Array) *nullMask {
	m := &nullMask{mem: mem, n: in.Len()}
	if hasNulls(in) {
		m.buf = andValidity(mem, m.n, in)
		m.bits = m.buf.Bytes()
	}
	return m
}

func (m *nullMask) valid(i int) bool { return m.bits == nil || bitutil.BitIsSet(m.bits, i) }

func (m *nullMask) setNull(i int) {
	if m.buf == nil {
		m.buf = newBitmap(m.mem, m.n)
		m.bits = m.buf.Bytes()
		bitutil.SetBitsTo(m.bits, 0, int64(m.n), true)
	}
	bitutil.ClearBit(m.bits, i)
}

func (m *nullMask) release() {
	if m.buf != nil {
		m.buf.Release()
	}
}

// mapCast builds a fixed-width cast from a per-value conversion. fail
// renders the error for a value that does not convert; nil means every
// value converts.
func mapCast[S, D arrow.FixedWidthType](to arrow.DataType, conv func(S) (D, bool), fail func(S) error) castFn {
	return func(mem memory.Allocator, in arrow.Array, try bool) (arrow.Array, error) {
		n := in.Len()
		src := values[S](in)
		mask := newNullMask(mem, in)
		buf, dst := newFixed[D](mem, n)
		for i, s := range src {
			d, ok := conv(s)
			if !ok && mask.valid(i) {
				if !try {
					buf.Release()
					mask.release()
					return nil, fail(s)
				}
				mask.setNull(i)
			}
			dst[i] = d
		}
		return makeArray(to, n, mask.buf, array.UnknownNullCount, buf), nil
	}
}

func outOfRange(to arrow.DataType) error { return fmt.Errorf("%s out of range", TypeName(to)) }

type signed interface {
	~int8 | ~int16 | ~int32 | ~int64
}

type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~float32 | ~float64
}

// intRange is the range of the integer type with the given id.
func intRange(id arrow.Type) (int64, int64) {
	switch id {
	case arrow.INT8:
		return math.MinInt8, math.MaxInt8
	case arrow.INT16:
		return math.MinInt16, math.MaxInt16
	case arrow.INT32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// intToInt converts between integer types with a range check; widening
// never fails and skips the check.
func intToInt[S, D signed](to arrow.DataType) castFn {
	lo, hi := intRange(to.ID())
	return func(mem memory.Allocator, in arrow.Array, try bool) (arrow.Array, error) {
		n := in.Len()
		src := values[S](in)
		mask := newNullMask(mem, in)
		buf, dst := newFixed[D](mem, n)
		for i, s := range src {
			v := int64(s)
			if (v < lo || v > hi) && mask.valid(i) {
				if !try {
					buf.Release()
					mask.release()
					return nil, outOfRange(to)
				}
				mask.setNull(i)
			}
			dst[i] = D(s)
		}
		return makeArray(to, n, mask.buf, array.UnknownNullCount, buf), nil
	}
}

// toFloat converts any integer or float to a float type; it cannot fail.
func toFloat[S number, D ~float32 | ~float64](to arrow.DataType) castFn {
	return func(mem memory.Allocator, in arrow.Array, _ bool) (arrow.Array, error) {
		n := in.Len()
		src := values[S](in)
		buf, dst := newFixed[D](mem, n)
		for i, s := range src {
			dst[i] = D(s)
		}
		valid := andValidity(mem, n, in)
		return makeArray(to, n, valid, array.UnknownNullCount, buf), nil
	}
}

// floatToInt rounds half to even (Postgres uses rint) and checks range.
func floatToInt[S ~float32 | ~float64, D signed](to arrow.DataType) castFn {
	lo, hi := intRange(to.ID())
	flo, fhi := float64(lo), float64(hi)
	return mapCast(to, func(s S) (D, bool) {
		f := math.RoundToEven(float64(s))
		// fhi for int64 rounds up to 2^63, which is out of range
		if math.IsNaN(f) || f < flo || f > fhi || (to.ID() == arrow.INT64 && f >= 9.223372036854775807e18) {
			return 0, false
		}
		return D(f), true
	}, func(S) error { return outOfRange(to) })
}

func numericCast(from, to arrow.DataType) castFn {
	if isDecimal(from) || isDecimal(to) {
		return decimalCast(from, to)
	}
	switch from.ID() {
	case arrow.INT8:
		return numFrom[int8](to)
	case arrow.INT16:
		return numFrom[int16](to)
	case arrow.INT32:
		return numFrom[int32](to)
	case arrow.INT64:
		return numFrom[int64](to)
	case arrow.FLOAT32:
		return floatFrom[float32](to)
	case arrow.FLOAT64:
		return floatFrom[float64](to)
	}
	return nil
}

func numFrom[S signed](to arrow.DataType) castFn {
	switch to.ID() {
	case arrow.INT8:
		return intToInt[S, int8](to)
	case arrow.INT16:
		return intToInt[S, int16](to)
	case arrow.INT32:
		return intToInt[S, int32](to)
	case arrow.INT64:
		return intToInt[S, int64](to)
	case arrow.FLOAT32:
		return toFloat[S, float32](to)
	case arrow.FLOAT64:
		return toFloat[S, float64](to)
	}
	return nil
}

func floatFrom[S ~float32 | ~float64](to arrow.DataType) castFn {
	switch to.ID() {
	case arrow.INT8:
		return floatToInt[S, int8](to)
	case arrow.INT16:
		return floatToInt[S, int16](to)
	case arrow.INT32:
		return floatToInt[S, int32](to)
	case arrow.INT64:
		return floatToInt[S, int64](to)
	case arrow.FLOAT32:
		return toFloat[S, float32](to)
	case arrow.FLOAT64:
		return toFloat[S, float64](to)
	}
	return nil
}

// decimalCast handles every cast with a decimal on either side.
func decimalCast(from, to arrow.DataType) castFn {
	if isDecimal(to) {
		dt := to.(*arrow.Decimal128Type)
		p, s := dt.Precision, dt.Scale
		overflow := func(decimal128.Num) error { return errNumericOverflow }
		switch {
		case isDecimal(from):
			fs := from.(*arrow.Decimal128Type).Scale
			return mapCast(to, func(v decimal128.Num) (decimal128.Num, bool) {
				r, ok := decRescale(v, fs, s)
				return r, ok && decFitsPrecision(r, p)
			}, overflow)
		case isInteger(from):
			conv := func(v int64) (decimal128.Num, bool) {
				r, ok := decRescale(decimal128.FromI64(v), 0, s)
				return r, ok && decFitsPrecision(r, p)
			}
			fail := func(int64) error { return errNumericOverflow }
			return withIntInput(from, to, conv, fail)
		case isFloat(from):
			bitSize := 64
			if from.ID() == arrow.FLOAT32 {
				bitSize = 32
			}
			var lastErr error
			conv := func(f float64) (decimal128.Num, bool) {
				r, err := decFromFloat(f, bitSize, p, s)
				lastErr = err
				return r, err == nil
			}
			if bitSize == 32 {
				return mapCast(to, func(f float32) (decimal128.Num, bool) { return conv(float64(f)) },
					func(float32) error { return lastErr })
			}
			return mapCast(to, conv, func(float64) error { return lastErr })
		}
		return nil
	}
	fs := from.(*arrow.Decimal128Type).Scale
	switch to.ID() {
	case arrow.FLOAT32:
		return mapCast(to, func(v decimal128.Num) (float32, bool) { return float32(decToFloat(v, fs)), true }, nil)
	case arrow.FLOAT64:
		return mapCast(to, func(v decimal128.Num) (float64, bool) { return decToFloat(v, fs), true }, nil)
	}
	lo, hi := intRange(to.ID())
	conv := func(v decimal128.Num) (int64, bool) {
		r, ok := decRescale(v, fs, 0) // rounds half away from zero, as Postgres
		if !ok {
			return 0, false
		}
		x, ok := decI64(r)
		return x, ok && x >= lo && x <= hi
	}
	fail := func(decimal128.Num) error { return outOfRange(to) }
	switch to.ID() {
	case arrow.INT8:
		return mapCast(to, func(v decimal128.Num) (int8, bool) { x, ok := conv(v); return int8(x), ok }, fail)
	case arrow.INT16:
		return mapCast(to, func(v decimal128.Num) (int16, bool) { x, ok := conv(v); return int16(x), ok }, fail)
	case arrow.INT32:
		return mapCast(to, func(v decimal128.Num) (int32, bool) { x, ok := conv(v); return int32(x), ok }, fail)
	case arrow.INT64:
		return mapCast(to, conv, fail)
	}
	return nil
}

// decToFloat converts exactly-enough: int64-sized values divide by a
// power of ten, which is what Postgres's numeric -> float8 yields.
func decToFloat(v decimal128.Num, scale int32) float64 {
	if x, ok := decI64(v); ok && scale >= 0 && scale <= 22 {
		return float64(x) / math.Pow10(int(scale))
	}
	f, _ := strconv.ParseFloat(decString(v, scale), 64)
	return f
}

// withIntInput adapts an int64 conversion to any integer input type.
func withIntInput[D arrow.FixedWidthType](from, to arrow.DataType, conv func(int64) (D, bool), fail func(int64) error) castFn {
	switch from.ID() {
	case arrow.INT8:
		return mapCast(to, func(v int8) (D, bool) { return conv(int64(v)) }, func(v int8) error { return fail(int64(v)) })
	case arrow.INT16:
		return mapCast(to, func(v int16) (D, bool) { return conv(int64(v)) }, func(v int16) error { return fail(int64(v)) })
	case arrow.INT32:
		return mapCast(to, func(v int32) (D, bool) { return conv(int64(v)) }, func(v int32) error { return fail(int64(v)) })
	}
	return mapCast(to, conv, fail)
}

func boolToInt(to arrow.DataType) castFn {
	switch to.ID() {
	case arrow.INT8:
		return boolToIntT[int8](to)
	case arrow.INT16:
		return boolToIntT[int16](to)
	case arrow.INT32:
		return boolToIntT[int32](to)
	}
	return boolToIntT[int64](to)
}

func boolToIntT[T signed](to arrow.DataType) castFn {
	return func(mem memory.Allocator, in arrow.Array, _ bool) (arrow.Array, error) {
		n := in.Len()
		ba := in.(*array.Boolean)
		buf, dst := newFixed[T](mem, n)
		for i := range n {
			dst[i] = 0
			if ba.Value(i) {
				dst[i] = 1
			}
		}
		return makeArray(to, n, andValidity(mem, n, in), array.UnknownNullCount, buf), nil
	}
}

func intToBool(from arrow.DataType) castFn {
	switch from.ID() {
	case arrow.INT8:
		return intToBoolT[int8]
	case arrow.INT16:
		return intToBoolT[int16]
	case arrow.INT32:
		return intToBoolT[int32]
	}
	return intToBoolT[int64]
}

func intToBoolT[T signed](mem memory.Allocator, in arrow.Array, _ bool) (arrow.Array, error) {
	n := in.Len()
	vals := newBitmap(mem, n)
	vb := vals.Bytes()
	for i, v := range values[T](in) {
		if v != 0 {
			bitutil.SetBit(vb, i)
		}
	}
	return makeArray(tBool, n, andValidity(mem, n, in), array.UnknownNullCount, vals), nil
}

// ---- to text ----------------------------------------------------------

// quoteArrayElem double-quotes the array element rendered at b[from:]
// when Postgres's array_out would: empty, the word NULL, or holding
// braces, a comma, a quote, a backslash or white space. Quotes and
// backslashes inside are escaped.
func quoteArrayElem(b []byte, from int) []byte {
	e := b[from:]
	need := len(e) == 0 || strings.EqualFold(string(e), "null")
	for _, c := range e {
		switch c {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			need = true
		}
	}
	if !need {
		return b
	}
	q := []byte{'"'}
	for _, c := range e {
		if c == '"' || c == '\\' {
			q = append(q, '\\')
		}
		q = append(q, c)
	}
	q = append(q, '"')
	return append(b[:from], q...)
}

// appender renders row i of the array it was made for.
type appender func(b []byte, i int) []byte

// textFormatter returns a factory of per-array appenders that render
// values in Postgres's output format, or nil for an unsupported type.
func textFormatter(dt arrow.DataType) func(a arrow.Array) appender {
	if isUUID(dt) {
		return func(a arrow.Array) appender {
			st := a.(array.ExtensionArray).Storage().(*array.FixedSizeBinary)
			return func(b []byte, i int) []byte {
				u, _ := uuid.FromBytes(st.Value(i))
				return append(b, u.String()...)
			}
		}
	}
	switch dt.ID() {
	case arrow.BOOL:
		return func(a arrow.Array) appender {
			ba := a.(*array.Boolean)
			return func(b []byte, i int) []byte {
				if ba.Value(i) {
					return append(b, "true"...)
				}
				return append(b, "false"...)
			}
		}
	case arrow.INT8:
		return intAppender[int8]
	case arrow.INT16:
		return intAppender[int16]
	case arrow.INT32:
		return intAppender[int32]
	case arrow.INT64:
		return intAppender[int64]
	case arrow.FLOAT32:
		return func(a arrow.Array) appender {
			v := values[float32](a)
			return func(b []byte, i int) []byte { return appendFloat(b, float64(v[i]), 32) }
		}
	case arrow.FLOAT64:
		return func(a arrow.Array) appender {
			v := values[float64](a)
			return func(b []byte, i int) []byte { return appendFloat(b, v[i], 64) }
		}
	case arrow.DECIMAL128:
		scale := dt.(*arrow.Decimal128Type).Scale
		return func(a arrow.Array) appender {
			v := values[decimal128.Num](a)
			return func(b []byte, i int) []byte { return append(b, decString(v[i], scale)...) }
		}
	case arrow.STRING:
		return func(a arrow.Array) appender {
			v := newStrView(a)
			return func(b []byte, i int) []byte { return append(b, v.at(i)...) }
		}
	case arrow.BINARY:
		return func(a arrow.Array) appender {
			v := newStrView(a)
			return func(b []byte, i int) []byte {
				b = append(b, `\x`...)
				return hex.AppendEncode(b, v.at(i))
			}
		}
	case arrow.DATE32:
		return func(a arrow.Array) appender {
			v := values[arrow.Date32](a)
			return func(b []byte, i int) []byte { return appendDate(b, int64(v[i])) }
		}
	case arrow.TIME64:
		return func(a arrow.Array) appender {
			v := values[arrow.Time64](a)
			return func(b []byte, i int) []byte { return appendTimeOfDay(b, int64(v[i])) }
		}
	case arrow.TIMESTAMP:
		tz := isTimestampTZ(dt)
		return func(a arrow.Array) appender {
			v := values[arrow.Timestamp](a)
			return func(b []byte, i int) []byte { return appendTimestamp(b, int64(v[i]), tz) }
		}
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return func(a arrow.Array) appender {
			v := values[arrow.MonthDayNanoInterval](a)
			return func(b []byte, i int) []byte { return appendInterval(b, v[i]) }
		}
	case arrow.LIST:
		elemType := dt.(*arrow.ListType).Elem()
		elem := textFormatter(elemType)
		if elem == nil {
			return nil
		}
		nested := elemType.ID() == arrow.LIST
		return func(a arrow.Array) appender {
			la := a.(*array.List)
			vals := la.ListValues()
			app := elem(vals)
			return func(b []byte, i int) []byte {
				start, end := la.ValueOffsets(i)
				b = append(b, '{')
				for j := start; j < end; j++ {
					if j > start {
						b = append(b, ',')
					}
					if vals.IsNull(int(j)) {
						b = append(b, "NULL"...)
						continue
					}
					from := len(b)
					b = app(b, int(j))
					if !nested {
						b = quoteArrayElem(b, from)
					}
				}
				return append(b, '}')
			}
		}
	case arrow.MAP:
		return mapFormatter(dt.(*arrow.MapType))
	case arrow.STRUCT:
		// PostgreSQL's record text: (1,abc,,"a b"), a NULL field empty
		st := dt.(*arrow.StructType)
		fields := make([]func(arrow.Array) appender, st.NumFields())
		for i, f := range st.Fields() {
			if isNull(f.Type) {
				// every value NULL: never formatted
				fields[i] = func(arrow.Array) appender { return func(b []byte, _ int) []byte { return b } }
				continue
			}
			if fields[i] = textFormatter(f.Type); fields[i] == nil {
				return nil
			}
		}
		return func(a arrow.Array) appender {
			sa := a.(*array.Struct)
			apps := make([]appender, len(fields))
			for i, f := range fields {
				apps[i] = f(sa.Field(i))
			}
			return func(b []byte, i int) []byte {
				b = append(b, '(')
				for k, app := range apps {
					if k > 0 {
						b = append(b, ',')
					}
					if f := sa.Field(k); isNull(f.DataType()) || f.IsNull(i) {
						continue // (a Null array has no bitmap to say so)
					}
					from := len(b)
					b = app(b, i)
					b = quoteRecordElem(b, from)
				}
				return append(b, ')')
			}
		}
	}
	return nil
}

// quoteRecordElem double-quotes b[from:] as PostgreSQL's record output
// does when it is empty or holds a quote, backslash, comma, parenthesis
// or space (doubling quotes and backslashes).
func quoteRecordElem(b []byte, from int) []byte {
	elem := b[from:]
	need := len(elem) == 0
	for _, c := range elem {
		switch c {
		case '"', '\\', ',', '(', ')', ' ', '\t', '\n', '\r':
			need = true
		}
	}
	if !need {
		return b
	}
	s := string(elem)
	b = append(b[:from], '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b = append(b, s[i])
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// TextAppender returns, for an array of type dt, a function appending its
// row i as CAST(… AS text) renders it (PostgreSQL's text forms: arrays as
// {1,2}, structs as (1,x)); nil when dt has no text form.
func TextAppender(dt arrow.DataType) func(a arrow.Array) func(b []byte, i int) []byte {
	f := textFormatter(dt)
	if f == nil {
		return nil
	}
	return func(a arrow.Array) func(b []byte, i int) []byte { return f(a) }
}

func intAppender[T signed](a arrow.Array) appender {
	v := values[T](a)
	return func(b []byte, i int) []byte { return strconv.AppendInt(b, int64(v[i]), 10) }
}

// AppendFloat is appendFloat, for front ends that print values (the shell).
func AppendFloat(b []byte, f float64, bitSize int) []byte { return appendFloat(b, f, bitSize) }

// appendFloat renders a float as Postgres 12+ does: the shortest text that
// reads back exactly, in exponent form outside [1e-4, 1e15) (1e6 for real).
func appendFloat(b []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(b, "-0"...)
		}
		return append(b, '0')
	}
	limit := 15
	if bitSize == 32 {
		limit = 6
	}
	// the exponent of the shortest form decides, as in Postgres's
	// float8out (a log10 would misjudge exact powers of ten)
	start := len(b)
	b = strconv.AppendFloat(b, f, 'e', -1, bitSize)
	e := bytes.LastIndexByte(b[start:], 'e')
	exp, _ := strconv.Atoi(string(b[start+e+1:]))
	if exp < -4 || exp >= limit {
		return b
	}
	return strconv.AppendFloat(b[:start], f, 'f', -1, bitSize)
}

// appendInterval renders Postgres's default interval style, e.g.
// "1 year 2 mons 3 days 04:05:06.5".
func appendInterval(b []byte, iv arrow.MonthDayNanoInterval) []byte {
	start := len(b)
	unit := func(v int64, one, many string) {
		if v == 0 {
			return
		}
		if len(b) > start {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, v, 10)
		if v == 1 {
			b = append(b, one...)
		} else {
			b = append(b, many...)
		}
	}
	unit(int64(iv.Months/12), " year", " years")
	unit(int64(iv.Months%12), " mon", " mons")
	unit(int64(iv.Days), " day", " days")
	us := iv.Nanoseconds / 1000
	if us != 0 || len(b) == start {
		if len(b) > start {
			b = append(b, ' ')
		}
		if us < 0 {
			b = append(b, '-')
			us = -us
		}
		b = appendPadded(b, us/usPerHour, 2)
		b = append(b, ':')
		b = appendPadded(b, us/usPerMinute%60, 2)
		b = append(b, ':')
		b = appendPadded(b, us/usPerSecond%60, 2)
		b = appendFraction(b, us%usPerSecond)
	}
	return b
}

// formatArray renders every valid row of in as text.
func formatArray(mem memory.Allocator, in arrow.Array, f func(arrow.Array) appender) arrow.Array {
	n := in.Len()
	app := f(in)
	bld := newStringBuilder(mem, tString, n, n*8)
	defer bld.Release()
	bits, off := validBits(in)
	if in.DataType().ID() == arrow.NULL {
		bld.AppendNulls(n)
		return bld.NewArray()
	}
	var scratch []byte
	for i := range n {
		if bits != nil && !bitutil.BitIsSet(bits, off+i) {
			bld.AppendNull()
			continue
		}
		scratch = app(scratch[:0], i)
		bld.Append(scratch)
	}
	return bld.NewArray()
}

// ---- from text --------------------------------------------------------

// invalidInput names the type without its modifiers, as Postgres does
// (numeric, not numeric(6,2)).
func invalidInput(to arrow.DataType, s string) error {
	name := TypeName(to)
	if isDecimal(to) {
		name = "numeric"
	}
	return fmt.Errorf("invalid input syntax for type %s: %q", name, parser.Abbrev(s))
}

// parseCast builds a cast from text to type to.
func parseCast(to arrow.DataType) castFn {
	if isUUID(to) {
		return parseUUIDCast(to)
	}
	switch to.ID() {
	case arrow.BOOL:
		return parseBoolCast()
	case arrow.INT8:
		return parseWith(to, parseIntFor[int8](to))
	case arrow.INT16:
		return parseWith(to, parseIntFor[int16](to))
	case arrow.INT32:
		return parseWith(to, parseIntFor[int32](to))
	case arrow.INT64:
		return parseWith(to, parseIntFor[int64](to))
	case arrow.FLOAT32:
		return parseWith(to, func(s string) (float32, error) {
			f, err := parseFloatText(s, 32, to)
			return float32(f), err
		})
	case arrow.FLOAT64:
		return parseWith(to, func(s string) (float64, error) { return parseFloatText(s, 64, to) })
	case arrow.DECIMAL128:
		dt := to.(*arrow.Decimal128Type)
		return parseWith(to, func(s string) (decimal128.Num, error) {
			n, ok, overflow := parseDecimal(s, dt.Precision, dt.Scale)
			switch {
			case !ok:
				return n, invalidInput(to, s)
			case overflow:
				return n, errNumericOverflow
			}
			return n, nil
		})
	case arrow.DATE32:
		return parseWith(to, func(s string) (arrow.Date32, error) {
			r, ok := parseDateTime(s, false)
			if !ok {
				return 0, invalidInput(to, s)
			}
			return arrow.Date32(daysFromCivil(r.y, r.mo, r.d)), nil
		})
	case arrow.TIMESTAMP:
		tz := isTimestampTZ(to)
		return parseWith(to, func(s string) (arrow.Timestamp, error) {
			r, ok := parseDateTime(s, true)
			if !ok {
				return 0, invalidInput(to, s)
			}
			if days := daysFromCivil(r.y, r.mo, r.d); days > maxTimestampDays || days < minTimestampMicros/usPerDay-1 {
				// before micros can overflow
				return 0, fmt.Errorf("%w: %q", ErrTimestampOutOfRange, parser.Abbrev(s))
			}
			// timestamp without time zone ignores an offset, as Postgres does
			us := r.micros(tz)
			if checkTimestamp(us) != nil {
				return 0, fmt.Errorf("%w: %q", ErrTimestampOutOfRange, parser.Abbrev(s))
			}
			return arrow.Timestamp(us), nil
		})
	case arrow.TIME64:
		return parseWith(to, func(s string) (arrow.Time64, error) {
			us, ok := parseTimeOfDay(s)
			if !ok {
				return 0, invalidInput(to, s)
			}
			return arrow.Time64(us), nil
		})
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return parseWith(to, func(s string) (arrow.MonthDayNanoInterval, error) {
			iv, ok := parseInterval(s)
			if !ok {
				return iv, invalidInput(to, s)
			}
			return iv, nil
		})
	case arrow.BINARY:
		return parseByteaCast()
	case arrow.LIST:
		return parseArrayCast(to.(*arrow.ListType))
	}
	return nil
}

// parseWith builds a text-to-fixed-width cast from a parser.
func parseWith[D arrow.FixedWidthType](to arrow.DataType, parse func(string) (D, error)) castFn {
	return func(mem memory.Allocator, in arrow.Array, try bool) (arrow.Array, error) {
		n := in.Len()
		v := newStrView(in)
		mask := newNullMask(mem, in)
		buf, dst := newFixed[D](mem, n)
		var zero D
		for i := range n {
			dst[i] = zero
			if !mask.valid(i) {
				continue
			}
			d, err := parse(v.str(i))
			if err != nil {
				if !try {
					buf.Release()
					mask.release()
					return nil, err
				}
				mask.setNull(i)
				continue
			}
			dst[i] = d
		}
		return makeArray(to, n, mask.buf, array.UnknownNullCount, buf), nil
	}
}

func parseIntFor[T signed](to arrow.DataType) func(string) (T, error) {
	lo, hi := intRange(to.ID())
	return func(s string) (T, error) {
		t := strings.TrimSpace(s)
		v, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return 0, fmt.Errorf("value %q is out of range for type %s", parser.Abbrev(s), TypeName(to))
			}
			return 0, invalidInput(to, s)
		}
		if v < lo || v > hi {
			return 0, fmt.Errorf("value %q is out of range for type %s", parser.Abbrev(s), TypeName(to))
		}
		return T(v), nil
	}
}

func parseFloatText(s string, bitSize int, to arrow.DataType) (float64, error) {
	t := strings.TrimSpace(s)
	f, err := strconv.ParseFloat(t, bitSize)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("%q is out of range for type %s", parser.Abbrev(s), TypeName(to))
		}
		return 0, invalidInput(to, s)
	}
	return f, nil
}

// parseBoolText accepts Postgres's spellings of a boolean.
func parseBoolText(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "t", "true", "y", "yes", "on", "1":
		return true, true
	case "f", "false", "n", "no", "off", "0":
		return false, true
	}
	return false, false
}

func parseBoolCast() castFn {
	return func(mem memory.Allocator, in arrow.Array, try bool) (arrow.Array, error) {
		n := in.Len()
		v := newStrView(in)
		mask := newNullMask(mem, in)
		vals := newBitmap(mem, n)
		vb := vals.Bytes()
		for i := range n {
			if !mask.valid(i) {
				continue
			}
			b, ok := parseBoolText(v.str(i))
			if !ok {
				if !try {
					vals.Release()
					mask.release()
					return nil, invalidInput(tBool, v.str(i))
				}
				mask.setNull(i)
				continue
			}
			if b {
				bitutil.SetBit(vb, i)
			}
		}
		return makeArray(tBool, n, mask.buf, array.UnknownNullCount, vals), nil
	}
}

func parseUUIDCast(to arrow.DataType) castFn {
	ext := to.(arrow.ExtensionType)
	return func(mem memory.Allocator, in arrow.Array, try bool) (arrow.Array, error) {
		// decimal128.Num only carries the 16 raw bytes here
		raw, err := parseWith(&arrow.FixedSizeBinaryType{ByteWidth: 16}, func(s string) (decimal128.Num, error) {
			u, err := uuid.Parse(strings.TrimSpace(s))
			if err != nil {
				return decimal128.Num{}, invalidInput(to, s)
			}
			return bytesTo128(u[:]), nil
		})(mem, in, try)
		if err != nil {
			return nil, err
		}
		defer raw.Release()
		return array.NewExtensionArrayWithStorage(ext, raw), nil
	}
}

// parseByteaCast accepts Postgres's hex format (\x...) and otherwise takes
// the text's bytes as they are.
func parseByteaCast() castFn {
	return func(mem memory.Allocator, in arrow.Array, try bool) (arrow.Array, error) {
		n := in.Len()
		v := newStrView(in)
		bld := newStringBuilder(mem, tBinary, n, v.bytesLen())
		defer bld.Release()
		bits, off := validBits(in)
		var scratch []byte
		for i := range n {
			if bits != nil && !bitutil.BitIsSet(bits, off+i) {
				bld.AppendNull()
				continue
			}
			s := v.str(i)
			if strings.HasPrefix(s, `\x`) {
				var err error
				scratch, err = hex.AppendDecode(scratch[:0], []byte(s[2:]))
				if err != nil {
					if !try {
						return nil, invalidInput(tBinary, s)
					}
					bld.AppendNull()
					continue
				}
				bld.Append(scratch)
				continue
			}
			bld.Append(v.at(i))
		}
		return bld.NewArray(), nil
	}
}

func bytesTo128(b []byte) decimal128.Num {
	var f decimal128.Num
	copy((*[16]byte)(unsafe.Pointer(&f))[:], b)
	return f
}
