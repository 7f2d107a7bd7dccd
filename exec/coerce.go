package exec

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// This file decides types: how they print in messages (Postgres names),
// which common type a set of expressions resolves to, and which implicit
// coercions are allowed. The rules follow Postgres's type categories:
// numeric (int8 < int16 < int32 < int64 < decimal < real < double),
// string, datetime (date < timestamp < timestamptz), and singletons.

// Canonical types, spelled once.
var (
	tBool        = arrow.FixedWidthTypes.Boolean
	tInt8        = arrow.PrimitiveTypes.Int8
	tInt16       = arrow.PrimitiveTypes.Int16
	tInt32       = arrow.PrimitiveTypes.Int32
	tInt64       = arrow.PrimitiveTypes.Int64
	tFloat32     = arrow.PrimitiveTypes.Float32
	tFloat64     = arrow.PrimitiveTypes.Float64
	tString      = arrow.BinaryTypes.String
	tBinary      = arrow.BinaryTypes.Binary
	tDate        = arrow.FixedWidthTypes.Date32
	tTime        = arrow.FixedWidthTypes.Time64us
	tTimestamp   = &arrow.TimestampType{Unit: arrow.Microsecond}
	tTimestampTZ = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	tInterval    = arrow.FixedWidthTypes.MonthDayNanoInterval
	tNull        = arrow.Null
)

// uuidExtName is the extension name of arrow-go's extensions.UUID, the
// canonical UUID type. It is matched by name so that exec need not import
// the extensions package (which drags parquet into the build).
const uuidExtName = "arrow.uuid"

func isUUID(dt arrow.DataType) bool {
	ext, ok := dt.(arrow.ExtensionType)
	return ok && ext.ExtensionName() == uuidExtName
}

// TypeName renders dt the way Postgres names it in messages.
func TypeName(dt arrow.DataType) string {
	if dt == nil {
		return "unknown"
	}
	if isUUID(dt) {
		return "uuid"
	}
	switch dt.ID() {
	case arrow.NULL:
		return "unknown"
	case arrow.BOOL:
		return "boolean"
	case arrow.INT8:
		return "tinyint"
	case arrow.INT16:
		return "smallint"
	case arrow.INT32:
		return "integer"
	case arrow.INT64:
		return "bigint"
	case arrow.UINT8:
		return "utinyint"
	case arrow.UINT16:
		return "usmallint"
	case arrow.UINT32:
		return "uinteger"
	case arrow.UINT64:
		return "ubigint"
	case arrow.FLOAT32:
		return "real"
	case arrow.FLOAT64:
		return "double precision"
	case arrow.DECIMAL128, arrow.DECIMAL256:
		d := dt.(arrow.DecimalType)
		return fmt.Sprintf("numeric(%d,%d)", d.GetPrecision(), d.GetScale())
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return "text"
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return "bytea"
	case arrow.DATE32, arrow.DATE64:
		return "date"
	case arrow.TIME32, arrow.TIME64:
		return "time"
	case arrow.TIMESTAMP:
		if dt.(*arrow.TimestampType).TimeZone != "" {
			return "timestamp with time zone"
		}
		return "timestamp"
	case arrow.INTERVAL_MONTH_DAY_NANO, arrow.INTERVAL_MONTHS, arrow.INTERVAL_DAY_TIME, arrow.DURATION:
		return "interval"
	case arrow.MAP:
		m := dt.(*arrow.MapType)
		return "map(" + TypeName(m.KeyType()) + ", " + TypeName(m.ItemType()) + ")"
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST:
		return TypeName(dt.(arrow.ListLikeType).Elem()) + "[]"
	case arrow.STRUCT:
		st := dt.(*arrow.StructType)
		parts := make([]string, st.NumFields())
		for i, f := range st.Fields() {
			parts[i] = f.Name + " " + TypeName(f.Type)
		}
		return "struct(" + strings.Join(parts, ", ") + ")"
	}
	return strings.ToLower(dt.String())
}

// typeNames renders a list of types for "function f(integer, text)".
func typeNames(ts []arrow.DataType) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = TypeName(t)
	}
	return strings.Join(parts, ", ")
}

func isInteger(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return true
	}
	return false
}

func isFloat(dt arrow.DataType) bool {
	return dt.ID() == arrow.FLOAT32 || dt.ID() == arrow.FLOAT64
}

func isDecimal(dt arrow.DataType) bool { return dt.ID() == arrow.DECIMAL128 }

func isNumeric(dt arrow.DataType) bool { return isInteger(dt) || isFloat(dt) || isDecimal(dt) }

func isString(dt arrow.DataType) bool { return dt.ID() == arrow.STRING }

func isTimestamp(dt arrow.DataType) bool { return dt.ID() == arrow.TIMESTAMP }

func isTimestampTZ(dt arrow.DataType) bool {
	return dt.ID() == arrow.TIMESTAMP && dt.(*arrow.TimestampType).TimeZone != ""
}

func isDateLike(dt arrow.DataType) bool { return dt.ID() == arrow.DATE32 || isTimestamp(dt) }

func isNull(dt arrow.DataType) bool { return dt.ID() == arrow.NULL }

// numericRank orders the numeric category; the higher rank wins.
func numericRank(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.INT8:
		return 1
	case arrow.INT16:
		return 2
	case arrow.INT32:
		return 3
	case arrow.INT64:
		return 4
	case arrow.DECIMAL128:
		return 5
	case arrow.FLOAT32:
		return 6
	case arrow.FLOAT64:
		return 7
	}
	return 0
}

// intDigits is the number of decimal digits an integer type needs.
func intDigits(dt arrow.DataType) int32 {
	switch dt.ID() {
	case arrow.INT8:
		return 3
	case arrow.INT16:
		return 5
	case arrow.INT32:
		return 10
	}
	return 19
}

// asDecimal returns the decimal type that holds every value of dt (an
// integer or decimal type) exactly.
func asDecimal(dt arrow.DataType) *arrow.Decimal128Type {
	if d, ok := dt.(*arrow.Decimal128Type); ok {
		return d
	}
	return &arrow.Decimal128Type{Precision: intDigits(dt), Scale: 0}
}

// decimalHolding is the precision and scale of the numeric that holds
// every value of a and of b: as many integer digits as the wider, as many
// fraction digits as the finer. The precision may pass 38 (decimalOf caps
// it).
func decimalHolding(a, b *arrow.Decimal128Type) (p, s int32) {
	s = max(a.Scale, b.Scale)
	return max(a.Precision-a.Scale, b.Precision-b.Scale) + s, s
}

// maxDecimalPrecision is the widest numeric (decimal128).
const maxDecimalPrecision = 38

// decimalOf builds a decimal type, capping the precision at 38 and keeping
// the scale (Postgres's numeric has no cap, so losing scale would be a
// silent change of value; capping precision fails loudly on overflow).
func decimalOf(p, s int32) *arrow.Decimal128Type {
	if s > maxDecimalPrecision {
		s = maxDecimalPrecision
	}
	if p > maxDecimalPrecision {
		p = maxDecimalPrecision
	}
	if p < s {
		p = s
	}
	if p < 1 {
		p = 1
	}
	return &arrow.Decimal128Type{Precision: p, Scale: s}
}

// errNoCommonType is wrapped by CommonType's errors.
var errNoCommonType = errors.New("cannot be matched")

// CommonType is the type a CASE, COALESCE, IN list, UNION column or VALUES
// column of the given types resolves to, by Postgres's rules. An untyped
// NULL (arrow.Null) takes the other types; all NULLs resolve to text, as
// in Postgres.
func CommonType(types ...arrow.DataType) (arrow.DataType, error) {
	return CommonTypeFor("", types...)
}

// CommonTypeFor is CommonType with the construct named in the error, as
// Postgres does: `CASE types integer and text cannot be matched`.
func CommonTypeFor(what string, types ...arrow.DataType) (arrow.DataType, error) {
	var out arrow.DataType
	for _, t := range types {
		if t == nil || isNull(t) {
			continue
		}
		if out == nil {
			out = t
			continue
		}
		c, ok := commonPair(out, t)
		if !ok {
			prefix := ""
			if what != "" {
				prefix = what + " "
			}
			return nil, fmt.Errorf("%stypes %s and %s %w", prefix, TypeName(out), TypeName(t), errNoCommonType)
		}
		out = c
	}
	if out == nil {
		return tString, nil
	}
	return out, nil
}

// commonPair resolves two non-NULL types.
func commonPair(a, b arrow.DataType) (arrow.DataType, bool) {
	if arrow.TypeEqual(a, b) {
		return a, true
	}
	if isNumeric(a) && isNumeric(b) {
		ra, rb := numericRank(a), numericRank(b)
		if isDecimal(a) || isDecimal(b) {
			if ra > 5 || rb > 5 {
				// a float is involved: floats rank above numeric
				if ra > rb {
					return a, true
				}
				return b, true
			}
			return decimalOf(decimalHolding(asDecimal(a), asDecimal(b))), true
		}
		if ra >= rb {
			return a, true
		}
		return b, true
	}
	if la, lb := listOf(a), listOf(b); la != nil && lb != nil {
		switch {
		case isNull(la.Elem()):
			return b, true
		case isNull(lb.Elem()):
			return a, true
		}
		if e, ok := commonPair(la.Elem(), lb.Elem()); ok {
			return arrow.ListOf(e), true
		}
		return nil, false
	}
	if sa, ok := a.(*arrow.StructType); ok {
		if sb, ok := b.(*arrow.StructType); ok {
			return commonStruct(sa, sb)
		}
	}
	if ma, mb := mapOf(a), mapOf(b); ma != nil && mb != nil {
		// an empty map's Null key and value types give way
		part := func(x, y arrow.DataType) (arrow.DataType, bool) {
			switch {
			case isNull(x):
				return y, true
			case isNull(y):
				return x, true
			}
			return commonPair(x, y)
		}
		k, ok := part(ma.KeyType(), mb.KeyType())
		if !ok {
			return nil, false
		}
		v, ok := part(ma.ItemType(), mb.ItemType())
		if !ok {
			return nil, false
		}
		return arrow.MapOf(k, v), true
	}
	if isDateLike(a) && isDateLike(b) {
		switch {
		case isTimestampTZ(a) || isTimestampTZ(b):
			return tTimestampTZ, true
		default:
			return tTimestamp, true
		}
	}
	if a.ID() == b.ID() {
		switch a.ID() {
		case arrow.STRING, arrow.BINARY, arrow.BOOL, arrow.TIME64, arrow.INTERVAL_MONTH_DAY_NANO:
			return a, true
		}
	}
	return nil, false
}

// canImplicit reports whether Postgres would coerce from to to silently
// (the implicit casts: numeric widening, date to timestamp, NULL to
// anything).
func canImplicit(from, to arrow.DataType) bool {
	if arrow.TypeEqual(from, to) || isNull(from) {
		return true
	}
	if isNumeric(from) && isNumeric(to) {
		// A numeric at the widest precision (38) is what a common type
		// that would need more is clamped to (numeric(38,0) and
		// numeric(38,1) meet at numeric(38,1)); PostgreSQL's numeric has
		// no bound, so the coercion is allowed and a value that does not
		// fit fails at run time (numeric field overflow), not the query.
		if isDecimal(from) && isDecimal(to) {
			f, t := from.(*arrow.Decimal128Type), to.(*arrow.Decimal128Type)
			return t.Scale >= f.Scale && (t.Precision-t.Scale >= f.Precision-f.Scale || t.Precision == maxDecimalPrecision)
		}
		if isDecimal(to) && isInteger(from) {
			t := to.(*arrow.Decimal128Type)
			return t.Precision-t.Scale >= intDigits(from) || t.Precision == maxDecimalPrecision
		}
		return numericRank(from) < numericRank(to)
	}
	if lf, lt := listOf(from), listOf(to); lf != nil && lt != nil {
		return canImplicit(lf.Elem(), lt.Elem())
	}
	if sf, ok := from.(*arrow.StructType); ok {
		if st, ok := to.(*arrow.StructType); ok {
			return canImplicitStruct(sf, st)
		}
	}
	if mf, mt := mapOf(from), mapOf(to); mf != nil && mt != nil {
		return canImplicit(mf.KeyType(), mt.KeyType()) && canImplicit(mf.ItemType(), mt.ItemType())
	}
	if isDateLike(from) && isTimestamp(to) {
		if from.ID() == arrow.DATE32 {
			return true
		}
		return isTimestampTZ(to) // timestamp -> timestamptz
	}
	return false
}

// isUnknownLiteral reports whether e is a string literal, which is how a
// quoted constant reaches exec. Postgres types such a constant as
// "unknown" and lets the context decide, so `d > '2024-01-01'` compares
// dates; exec does the same by casting the literal at bind time.
func isUnknownLiteral(e Expr) bool {
	l, ok := e.(*Literal)
	return ok && isString(l.Value.DataType())
}

// exprTypes lists the types of exprs, reporting string literals as NULL
// (unknown) so that they do not decide a common type.
func exprTypes(exprs []Expr, literalsUnknown bool) []arrow.DataType {
	ts := make([]arrow.DataType, len(exprs))
	for i, e := range exprs {
		ts[i] = e.DataType()
		if literalsUnknown && isUnknownLiteral(e) {
			ts[i] = tNull
		}
	}
	return ts
}

// commonTypeOf resolves the common type of exprs for construct what,
// treating string literals as unknown unless every typed input is a string
// literal.
func commonTypeOf(what string, exprs []Expr) (arrow.DataType, error) {
	t, err := CommonTypeFor(what, exprTypes(exprs, true)...)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Coerce converts e to type to as an implicit cast would: numeric
// widening, date to timestamp, NULL to anything, and a string literal to
// any type it parses as. Anything else is an error naming both types; the
// binder uses it for function arguments and set-operation columns.
func Coerce(e Expr, to arrow.DataType) (Expr, error) {
	from := e.DataType()
	if arrow.TypeEqual(from, to) {
		return e, nil
	}
	if canImplicit(from, to) || isUnknownLiteral(e) {
		return NewCast(e, to, false)
	}
	return nil, fmt.Errorf("cannot coerce %s to %s; add an explicit cast", TypeName(from), TypeName(to))
}

// coerceAll coerces every expression to to.
func coerceAll(exprs []Expr, to arrow.DataType) ([]Expr, error) {
	out := make([]Expr, len(exprs))
	for i, e := range exprs {
		c, err := Coerce(e, to)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}
