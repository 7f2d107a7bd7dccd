package pgwire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/skadedb/skade/exec"
)

// PostgreSQL type OIDs (pg_type.oid) of the types skade's values take.
const (
	oidBool        = 16
	oidBytea       = 17
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidFloat4      = 700
	oidFloat8      = 701
	oidUnknown     = 705
	oidVarchar     = 1043
	oidBpchar      = 1042
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidInterval    = 1186
	oidNumeric     = 1700
	oidUUID        = 2950
	oidJSON        = 114
	oidJSONB       = 3802
	oidOID         = 26
	oidNameType    = 19
	oidChar        = 18
)

// pgEpoch is PostgreSQL's binary date and timestamp epoch, 2000-01-01.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

const pgEpochDays = 10957 // days from 1970-01-01 to 2000-01-01

const uuidExtension = "arrow.uuid"

func isUUID(dt arrow.DataType) bool {
	ext, ok := dt.(arrow.ExtensionType)
	return ok && ext.ExtensionName() == uuidExtension
}

// pgType is the PostgreSQL type a column of Arrow type dt is sent as:
// its OID, pg_type.typlen and the type modifier.
func pgType(dt arrow.DataType) (oid uint32, size int16, mod int32) {
	if isUUID(dt) {
		return oidUUID, 16, -1
	}
	switch dt.ID() {
	case arrow.BOOL:
		return oidBool, 1, -1
	case arrow.INT8, arrow.INT16, arrow.UINT8:
		return oidInt2, 2, -1
	case arrow.INT32, arrow.UINT16:
		return oidInt4, 4, -1
	case arrow.INT64, arrow.UINT32:
		return oidInt8, 8, -1
	case arrow.UINT64:
		return oidNumeric, -1, -1
	case arrow.FLOAT32, arrow.FLOAT16:
		return oidFloat4, 4, -1
	case arrow.FLOAT64:
		return oidFloat8, 8, -1
	case arrow.DECIMAL128:
		d := dt.(*arrow.Decimal128Type)
		return oidNumeric, -1, (d.Precision<<16 | d.Scale) + 4
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return oidBytea, -1, -1
	case arrow.DATE32, arrow.DATE64:
		return oidDate, 4, -1
	case arrow.TIME32, arrow.TIME64:
		return oidTime, 8, -1
	case arrow.TIMESTAMP:
		if dt.(*arrow.TimestampType).TimeZone != "" {
			return oidTimestamptz, 8, -1
		}
		return oidTimestamp, 8, -1
	case arrow.INTERVAL_MONTH_DAY_NANO, arrow.DURATION:
		return oidInterval, 16, -1
	case arrow.LIST:
		elemType := dt.(*arrow.ListType).Elem()
		elem, _, _ := pgType(elemType)
		if a, ok := arrayOIDs[elem]; ok {
			return a, -1, -1
		}
		if elemType.ID() == arrow.LIST && elem != oidText {
			// a list of lists is a multi-dimensional array, of the
			// same type as one dimension
			return elem, -1, -1
		}
	}
	// text, and what PostgreSQL has no exact peer for here (structs,
	// maps), in skade's text form
	return oidText, -1, -1
}

// arrayOIDs are the array types of element types (pg_type.typarray).
var arrayOIDs = map[uint32]uint32{
	oidBool: 1000, oidBytea: 1001, oidInt2: 1005, oidInt4: 1007, oidText: 1009, oidInt8: 1016,
	oidFloat4: 1021, oidFloat8: 1022, oidDate: 1182, oidTime: 1183, oidTimestamp: 1115,
	oidTimestamptz: 1185, oidInterval: 1187, oidNumeric: 1231, oidUUID: 2951, oidVarchar: 1015,
}

// listEncoder encodes a list column as a one-dimensional PostgreSQL
// array: {1,NULL,"a b"} in text, the array wire format in binary.
func listEncoder(a *array.List, binaryFormat bool) (encoder, error) {
	elems := a.ListValues()
	if _, nested := elems.(*array.List); nested && binaryFormat {
		return multiDimEncoder(a)
	}
	elemOID, _, _ := pgType(elems.DataType())
	enc, err := newEncoder(elems, elems.DataType(), binaryFormat)
	if err != nil {
		return nil, err
	}
	quoteElems := elemOID == oidText || elemOID == oidBytea || elemOID == oidUUID || elemOID == oidDate ||
		elemOID == oidTimestamp || elemOID == oidTimestamptz || elemOID == oidInterval || elemOID == oidTime
	var tmp []byte
	return func(buf []byte, i int) ([]byte, error) {
		start, end := a.ValueOffsets(i)
		n := int(end - start)
		if binaryFormat {
			hasNull := 0
			for k := start; k < end; k++ {
				if elems.IsNull(int(k)) {
					hasNull = 1
				}
			}
			if n == 0 {
				buf = binary.BigEndian.AppendUint32(buf, 0)
				buf = binary.BigEndian.AppendUint32(buf, 0)
				return binary.BigEndian.AppendUint32(buf, elemOID), nil
			}
			buf = binary.BigEndian.AppendUint32(buf, 1)
			buf = binary.BigEndian.AppendUint32(buf, uint32(hasNull))
			buf = binary.BigEndian.AppendUint32(buf, elemOID)
			buf = binary.BigEndian.AppendUint32(buf, uint32(n))
			buf = binary.BigEndian.AppendUint32(buf, 1) // lower bound
			for k := start; k < end; k++ {
				if elems.IsNull(int(k)) {
					buf = binary.BigEndian.AppendUint32(buf, 0xffffffff)
					continue
				}
				at := len(buf)
				buf = append(buf, 0, 0, 0, 0)
				if buf, err = enc(buf, int(k)); err != nil {
					return nil, err
				}
				binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
			}
			return buf, nil
		}
		buf = append(buf, '{')
		for k := start; k < end; k++ {
			if k > start {
				buf = append(buf, ',')
			}
			if elems.IsNull(int(k)) {
				buf = append(buf, "NULL"...)
				continue
			}
			if tmp, err = enc(tmp[:0], int(k)); err != nil {
				return nil, err
			}
			buf = appendArrayElem(buf, tmp, quoteElems)
		}
		return append(buf, '}'), nil
	}, nil
}

// multiDimEncoder encodes a list of lists as a multi-dimensional
// PostgreSQL array in the binary format: its dimensions are the lengths at
// each level, which must agree throughout (PostgreSQL arrays are
// rectangular; skade's lists need not be, and a ragged one is an error).
func multiDimEncoder(a *array.List) (encoder, error) {
	var levels []*array.List
	var leaf arrow.Array = a
	for {
		l, ok := leaf.(*array.List)
		if !ok {
			break
		}
		levels = append(levels, l)
		leaf = l.ListValues()
	}
	leafOID, _, _ := pgType(leaf.DataType())
	enc, err := newEncoder(leaf, leaf.DataType(), true)
	if err != nil {
		return nil, err
	}
	ragged := errors.New("cannot send a ragged array: its sub-arrays differ in length, which a PostgreSQL array cannot; cast it to text")
	return func(buf []byte, i int) ([]byte, error) {
		// dimensions from the first element at each level, then check
		// every sub-array against them while gathering the leaves
		dims := make([]int, len(levels))
		lo, hi := int64(i), int64(i)+1
		for d, l := range levels {
			s, e := l.ValueOffsets(int(lo))
			dims[d] = int(e - s)
			nlo, nhi := int64(-1), int64(-1)
			for r := lo; r < hi; r++ {
				if l.IsNull(int(r)) {
					return nil, errors.New("cannot send an array holding a NULL sub-array; PostgreSQL arrays have none")
				}
				rs, re := l.ValueOffsets(int(r))
				if int(re-rs) != dims[d] {
					return nil, ragged
				}
				if nlo < 0 {
					nlo = rs
				}
				nhi = re
			}
			if dims[d] == 0 {
				buf = binary.BigEndian.AppendUint32(buf, 0)
				buf = binary.BigEndian.AppendUint32(buf, 0)
				return binary.BigEndian.AppendUint32(buf, leafOID), nil
			}
			lo, hi = nlo, nhi
		}
		hasNull := 0
		for k := lo; k < hi; k++ {
			if leaf.IsNull(int(k)) {
				hasNull = 1
			}
		}
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(dims)))
		buf = binary.BigEndian.AppendUint32(buf, uint32(hasNull))
		buf = binary.BigEndian.AppendUint32(buf, leafOID)
		for _, d := range dims {
			buf = binary.BigEndian.AppendUint32(buf, uint32(d))
			buf = binary.BigEndian.AppendUint32(buf, 1)
		}
		for k := lo; k < hi; k++ {
			if leaf.IsNull(int(k)) {
				buf = binary.BigEndian.AppendUint32(buf, 0xffffffff)
				continue
			}
			at := len(buf)
			buf = append(buf, 0, 0, 0, 0)
			var err error
			if buf, err = enc(buf, int(k)); err != nil {
				return nil, err
			}
			binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
		}
		return buf, nil
	}, nil
}

// appendArrayElem appends one element of an array's text form, quoted
// when it is empty, NULL-like or holds a character the syntax uses.
func appendArrayElem(buf, v []byte, maybeQuote bool) []byte {
	need := false
	if maybeQuote {
		need = len(v) == 0 || strings.EqualFold(string(v), "NULL")
		for _, ch := range v {
			switch ch {
			case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
				need = true
			}
		}
	}
	if !need {
		return append(buf, v...)
	}
	buf = append(buf, '"')
	for _, ch := range v {
		if ch == '"' || ch == '\\' {
			buf = append(buf, '\\')
		}
		buf = append(buf, ch)
	}
	return append(buf, '"')
}

// encoder appends the value at row i of a column to buf, in the text or
// binary format of the column's PostgreSQL type. The caller handles NULL.
type encoder func(buf []byte, i int) ([]byte, error)

// newEncoder returns the encoder of column arr for its pgType, in text or
// binary format. declared is the column's type in the result's schema,
// which decides over the array's own: exec may carry text in binary
// arrays.
func newEncoder(arr arrow.Array, declared arrow.DataType, binaryFormat bool) (encoder, error) {
	dt := arr.DataType()
	if declared != nil && declared.ID() == arrow.STRING {
		if b, ok := arr.(*array.Binary); ok {
			return func(buf []byte, i int) ([]byte, error) { return append(buf, b.Value(i)...), nil }, nil
		}
	}
	if isUUID(dt) {
		st := arr.(array.ExtensionArray).Storage().(*array.FixedSizeBinary)
		if binaryFormat {
			return func(buf []byte, i int) ([]byte, error) { return append(buf, st.Value(i)...), nil }, nil
		}
		return func(buf []byte, i int) ([]byte, error) { return appendUUID(buf, st.Value(i)), nil }, nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return func(buf []byte, i int) ([]byte, error) {
			v := a.Value(i)
			switch {
			case binaryFormat && v:
				return append(buf, 1), nil
			case binaryFormat:
				return append(buf, 0), nil
			case v:
				return append(buf, 't'), nil
			}
			return append(buf, 'f'), nil
		}, nil
	case *array.Int8:
		return intEncoder(func(i int) int64 { return int64(a.Value(i)) }, 2, binaryFormat), nil
	case *array.Uint8:
		return intEncoder(func(i int) int64 { return int64(a.Value(i)) }, 2, binaryFormat), nil
	case *array.Int16:
		return intEncoder(func(i int) int64 { return int64(a.Value(i)) }, 2, binaryFormat), nil
	case *array.Uint16:
		return intEncoder(func(i int) int64 { return int64(a.Value(i)) }, 4, binaryFormat), nil
	case *array.Int32:
		return intEncoder(func(i int) int64 { return int64(a.Value(i)) }, 4, binaryFormat), nil
	case *array.Uint32:
		return intEncoder(func(i int) int64 { return int64(a.Value(i)) }, 8, binaryFormat), nil
	case *array.Int64:
		vs := a.Int64Values()
		if binaryFormat {
			return func(buf []byte, i int) ([]byte, error) { return binary.BigEndian.AppendUint64(buf, uint64(vs[i])), nil }, nil
		}
		return func(buf []byte, i int) ([]byte, error) { return strconv.AppendInt(buf, vs[i], 10), nil }, nil
	case *array.Uint64:
		return numericEncoder(func(i int) (*big.Int, int32) { return new(big.Int).SetUint64(a.Value(i)), 0 }, binaryFormat), nil
	case *array.Float32:
		return floatEncoder(func(i int) float64 { return float64(a.Value(i)) }, 32, binaryFormat), nil
	case *array.Float64:
		return floatEncoder(a.Value, 64, binaryFormat), nil
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		if binaryFormat {
			slow := numericEncoder(func(i int) (*big.Int, int32) { return a.Value(i).BigInt(), -scale }, true)
			return func(buf []byte, i int) ([]byte, error) {
				if u, neg, ok := smallDecimal(a.Value(i)); ok && scale >= 0 && scale <= 15 {
					return appendNumericBinary(buf, u, neg, scale), nil
				}
				return slow(buf, i)
			}, nil
		}
		return func(buf []byte, i int) ([]byte, error) { return appendDecimal(buf, a.Value(i), scale), nil }, nil
	case *array.String:
		return func(buf []byte, i int) ([]byte, error) { return append(buf, a.Value(i)...), nil }, nil
	case *array.LargeString:
		return func(buf []byte, i int) ([]byte, error) { return append(buf, a.Value(i)...), nil }, nil
	case *array.StringView:
		return func(buf []byte, i int) ([]byte, error) { return append(buf, a.Value(i)...), nil }, nil
	case array.BinaryLike:
		val := func(i int) []byte { return nil }
		switch b := arr.(type) {
		case *array.Binary:
			val = b.Value
		case *array.LargeBinary:
			val = b.Value
		case *array.BinaryView:
			val = b.Value
		case *array.FixedSizeBinary:
			val = b.Value
		}
		if binaryFormat {
			return func(buf []byte, i int) ([]byte, error) { return append(buf, val(i)...), nil }, nil
		}
		return func(buf []byte, i int) ([]byte, error) {
			buf = append(buf, `\x`...)
			return hex.AppendEncode(buf, val(i)), nil
		}, nil
	case *array.Date32:
		return func(buf []byte, i int) ([]byte, error) {
			days := int64(a.Value(i))
			if binaryFormat {
				return binary.BigEndian.AppendUint32(buf, uint32(int32(days-pgEpochDays))), nil
			}
			return appendDate(buf, time.Unix(days*86400, 0).UTC()), nil
		}, nil
	case *array.Time64:
		unit := a.DataType().(*arrow.Time64Type).Unit
		return func(buf []byte, i int) ([]byte, error) {
			us := int64(a.Value(i))
			if unit == arrow.Nanosecond {
				us /= 1000
			}
			if binaryFormat {
				return binary.BigEndian.AppendUint64(buf, uint64(us)), nil
			}
			return appendClock(buf, us), nil
		}, nil
	case *array.Time32:
		unit := a.DataType().(*arrow.Time32Type).Unit
		return func(buf []byte, i int) ([]byte, error) {
			us := int64(a.Value(i)) * 1000
			if unit == arrow.Second {
				us *= 1000
			}
			if binaryFormat {
				return binary.BigEndian.AppendUint64(buf, uint64(us)), nil
			}
			return appendClock(buf, us), nil
		}, nil
	case *array.Timestamp:
		tt := a.DataType().(*arrow.TimestampType)
		toMicros := micros(tt.Unit)
		tz := tt.TimeZone != ""
		return func(buf []byte, i int) ([]byte, error) {
			us := toMicros(int64(a.Value(i)))
			if binaryFormat {
				return binary.BigEndian.AppendUint64(buf, uint64(us-pgEpoch.UnixMicro())), nil
			}
			buf = appendTimestamp(buf, us)
			if tz {
				buf = append(buf, "+00"...)
			}
			return buf, nil
		}, nil
	case *array.MonthDayNanoInterval:
		return func(buf []byte, i int) ([]byte, error) {
			v := a.Value(i)
			if binaryFormat {
				buf = binary.BigEndian.AppendUint64(buf, uint64(v.Nanoseconds/1000))
				buf = binary.BigEndian.AppendUint32(buf, uint32(v.Days))
				return binary.BigEndian.AppendUint32(buf, uint32(v.Months)), nil
			}
			return appendInterval(buf, v.Months, v.Days, v.Nanoseconds/1000), nil
		}, nil
	case *array.Duration:
		toMicros := micros(a.DataType().(*arrow.DurationType).Unit)
		return func(buf []byte, i int) ([]byte, error) {
			us := toMicros(int64(a.Value(i)))
			if binaryFormat {
				buf = binary.BigEndian.AppendUint64(buf, uint64(us))
				return binary.BigEndian.AppendUint64(buf, 0), nil
			}
			return appendInterval(buf, 0, 0, us), nil
		}, nil
	}
	if l, ok := arr.(*array.List); ok {
		if oid, _, _ := pgType(dt); oid != oidText {
			return listEncoder(l, binaryFormat)
		}
	}
	switch arr.(type) {
	case *array.Struct, *array.Map:
		// PostgreSQL's record text, (1,"a b",), and DuckDB's map text,
		// {a=1, b=NULL}, as text
		if f := exec.TextAppender(arr.DataType()); f != nil {
			app := f(arr)
			return func(buf []byte, i int) ([]byte, error) { return app(buf, i), nil }, nil
		}
	}
	// nested lists, NULL: skade's text form, which is also the binary
	// form of text
	return func(buf []byte, i int) ([]byte, error) { return append(buf, arr.ValueStr(i)...), nil }, nil
}

func micros(u arrow.TimeUnit) func(int64) int64 {
	switch u {
	case arrow.Second:
		return func(v int64) int64 { return v * 1_000_000 }
	case arrow.Millisecond:
		return func(v int64) int64 { return v * 1000 }
	case arrow.Nanosecond:
		return func(v int64) int64 { return v / 1000 }
	}
	return func(v int64) int64 { return v }
}

func intEncoder(val func(int) int64, size int, binaryFormat bool) encoder {
	if !binaryFormat {
		return func(buf []byte, i int) ([]byte, error) { return strconv.AppendInt(buf, val(i), 10), nil }
	}
	switch size {
	case 2:
		return func(buf []byte, i int) ([]byte, error) {
			return binary.BigEndian.AppendUint16(buf, uint16(val(i))), nil
		}
	case 4:
		return func(buf []byte, i int) ([]byte, error) {
			return binary.BigEndian.AppendUint32(buf, uint32(val(i))), nil
		}
	}
	return func(buf []byte, i int) ([]byte, error) {
		return binary.BigEndian.AppendUint64(buf, uint64(val(i))), nil
	}
}

func floatEncoder(val func(int) float64, bits int, binaryFormat bool) encoder {
	if binaryFormat {
		if bits == 32 {
			return func(buf []byte, i int) ([]byte, error) {
				return binary.BigEndian.AppendUint32(buf, math.Float32bits(float32(val(i)))), nil
			}
		}
		return func(buf []byte, i int) ([]byte, error) {
			return binary.BigEndian.AppendUint64(buf, math.Float64bits(val(i))), nil
		}
	}
	return func(buf []byte, i int) ([]byte, error) { return appendFloat(buf, val(i), bits), nil }
}

// appendFloat renders f as PostgreSQL 12+ does with extra_float_digits
// 1 (the default): the shortest text that reads back exactly, in plain
// notation for decimal exponents from -4 to below 15 (6 for real), in
// exponent notation otherwise.
func appendFloat(buf []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, "NaN"...)
	case math.IsInf(f, 1):
		return append(buf, "Infinity"...)
	case math.IsInf(f, -1):
		return append(buf, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(buf, "-0"...)
		}
		return append(buf, '0')
	}
	limit := 15
	if bits == 32 {
		limit = 6
	}
	// one shortest conversion, "d.ddde±x", rewritten to plain notation
	// when the exponent is in range
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, bits)
	k := bytes.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(string(e[k+1:]))
	if exp < -4 || exp >= limit {
		return append(buf, e...)
	}
	mant := e[:k]
	if mant[0] == '-' {
		buf = append(buf, '-')
		mant = mant[1:]
	}
	var digits [24]byte
	d := append(digits[:0], mant[0])
	if len(mant) > 2 {
		d = append(d, mant[2:]...)
	}
	if exp < 0 {
		buf = append(buf, '0', '.')
		for range -exp - 1 {
			buf = append(buf, '0')
		}
		return append(buf, d...)
	}
	if len(d) <= exp+1 {
		buf = append(buf, d...)
		for range exp + 1 - len(d) {
			buf = append(buf, '0')
		}
		return buf
	}
	buf = append(buf, d[:exp+1]...)
	buf = append(buf, '.')
	return append(buf, d[exp+1:]...)
}

// smallDecimal returns |v| and its sign when v fits in 63 bits.
func smallDecimal(v decimal128.Num) (u uint64, neg bool, ok bool) {
	hi, lo := v.HighBits(), v.LowBits()
	switch {
	case hi == 0 && lo < 1<<63:
		return lo, false, true
	case hi == -1 && lo >= 1<<63:
		return -lo, true, true
	}
	return 0, false, false
}

var pow10 = [...]uint64{1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// appendNumericBinary appends numeric's binary form of ±u × 10^-scale
// (scale ≤ 15): digit count, weight, sign and display scale, then the
// base-10000 digits from the most significant, without leading or
// trailing zero digits.
func appendNumericBinary(buf []byte, u uint64, neg bool, scale int32) []byte {
	ip, fp := u/pow10[scale], u%pow10[scale]
	var digits [12]uint16
	var ints [5]uint16
	ni := 0
	for ; ip > 0; ip /= 10000 {
		ints[ni] = uint16(ip % 10000)
		ni++
	}
	nd := 0
	for k := ni - 1; k >= 0; k-- {
		digits[nd] = ints[k]
		nd++
	}
	weight := ni - 1
	if scale > 0 {
		groups := (int(scale) + 3) / 4
		f := fp * pow10[groups*4-int(scale)] // ≤ 10^16: fits
		for g := groups - 1; g >= 0; g-- {
			digits[nd+g] = uint16(f % 10000)
			f /= 10000
		}
		nd += groups
	}
	first := 0
	for first < nd && digits[first] == 0 {
		first++
		weight--
	}
	last := nd
	for last > first && digits[last-1] == 0 {
		last--
	}
	sign := uint16(0)
	if neg && last > first {
		sign = 0x4000
	}
	if last == first {
		weight = 0
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(last-first))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(scale))
	for _, d := range digits[first:last] {
		buf = binary.BigEndian.AppendUint16(buf, d)
	}
	return buf
}

// appendDecimal renders an unscaled decimal with scale digits after the
// point, as numeric's text form does (trailing zeros kept).
func appendDecimal(buf []byte, v decimal128.Num, scale int32) []byte {
	var s string
	if u, neg, ok := smallDecimal(v); ok {
		var tmp [24]byte
		digits := strconv.AppendUint(tmp[:0], u, 10)
		if neg {
			buf = append(buf, '-')
		}
		s = string(digits)
		return appendScaled(buf, s, scale)
	}
	s = v.BigInt().String()
	if strings.HasPrefix(s, "-") {
		s = s[1:]
		buf = append(buf, '-')
	}
	return appendScaled(buf, s, scale)
}

// appendScaled writes the digits s with scale of them after the point.
func appendScaled(buf []byte, s string, scale int32) []byte {
	if scale <= 0 {
		buf = append(buf, s...)
		for range -scale {
			buf = append(buf, '0')
		}
		return buf
	}
	sc := int(scale)
	if len(s) <= sc {
		buf = append(buf, '0', '.')
		for range sc - len(s) {
			buf = append(buf, '0')
		}
		return append(buf, s...)
	}
	buf = append(buf, s[:len(s)-sc]...)
	buf = append(buf, '.')
	return append(buf, s[len(s)-sc:]...)
}

// numericEncoder encodes numeric values (unscaled integer × 10^exp);
// binary through pgtype's numeric codec.
func numericEncoder(val func(int) (*big.Int, int32), binaryFormat bool) encoder {
	var codec pgtype.NumericCodec
	m := pgtype.NewMap()
	fmtCode := int16(pgtype.TextFormatCode)
	if binaryFormat {
		fmtCode = pgtype.BinaryFormatCode
	}
	return func(buf []byte, i int) ([]byte, error) {
		n, exp := val(i)
		v := pgtype.Numeric{Int: n, Exp: exp, Valid: true}
		plan := codec.PlanEncode(m, oidNumeric, fmtCode, v)
		if plan == nil {
			return nil, fmt.Errorf("pgwire: cannot encode numeric %v", v)
		}
		return plan.Encode(v, buf)
	}
}

func appendUUID(buf []byte, b []byte) []byte {
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:16])
	return append(buf, s[:]...)
}

// appendDate renders a date in DateStyle ISO, with " BC" for years
// before 1 as PostgreSQL does.
func appendDate(buf []byte, t time.Time) []byte {
	y, m, d := t.Date()
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	buf = appendPadded(buf, y, 4)
	buf = append(buf, '-')
	buf = appendPadded(buf, int(m), 2)
	buf = append(buf, '-')
	buf = appendPadded(buf, d, 2)
	if bc {
		buf = append(buf, " BC"...)
	}
	return buf
}

func appendPadded(buf []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		buf = append(buf, '0')
	}
	return append(buf, s...)
}

// appendClock renders microseconds since midnight as HH:MM:SS[.ffffff],
// trailing zeros of the fraction dropped.
func appendClock(buf []byte, us int64) []byte {
	neg := us < 0
	if neg {
		us = -us
		buf = append(buf, '-')
	}
	secs := us / 1_000_000
	frac := us % 1_000_000
	buf = appendPadded(buf, int(secs/3600), 2)
	buf = append(buf, ':')
	buf = appendPadded(buf, int(secs/60%60), 2)
	buf = append(buf, ':')
	buf = appendPadded(buf, int(secs%60), 2)
	if frac != 0 {
		f := fmt.Sprintf("%06d", frac)
		buf = append(buf, '.')
		buf = append(buf, strings.TrimRight(f, "0")...)
	}
	return buf
}

func appendTimestamp(buf []byte, us int64) []byte {
	t := time.UnixMicro(us).UTC()
	y, _, _ := t.Date()
	day := time.Date(y, t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	bc := y <= 0
	buf = appendDate(buf, day)
	if bc {
		buf = buf[:len(buf)-3]
	}
	buf = append(buf, ' ')
	buf = appendClock(buf, t.Sub(day).Microseconds())
	if bc {
		buf = append(buf, " BC"...)
	}
	return buf
}

// appendInterval renders an interval in IntervalStyle postgres:
// "1 year 2 mons 3 days 04:05:06.5".
func appendInterval(buf []byte, months, days int32, us int64) []byte {
	var parts []string
	unit := func(n int64, one, many string) {
		if n == 0 {
			return
		}
		name := many
		if n == 1 || n == -1 {
			name = one
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, name))
	}
	unit(int64(months/12), "year", "years")
	unit(int64(months%12), "mon", "mons")
	unit(int64(days), "day", "days")
	if us != 0 || len(parts) == 0 {
		var c []byte
		if us > 0 && (months < 0 || days < 0) {
			// PostgreSQL marks a positive time after a negative field
			c = append(c, '+')
		}
		parts = append(parts, string(appendClock(c, us)))
	}
	return append(buf, strings.Join(parts, " ")...)
}
