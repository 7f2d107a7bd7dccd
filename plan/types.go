package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"

	"github.com/skadedb/skade/parser"
)

// Canonical types (see package exec).
var (
	tBool        = arrow.FixedWidthTypes.Boolean
	tInt64       = arrow.PrimitiveTypes.Int64
	tString      = arrow.BinaryTypes.String
	tTimestamp   = &arrow.TimestampType{Unit: arrow.Microsecond}
	tTimestampTZ = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

// ArrowType maps a SQL type name to skade's canonical Arrow type.
func ArrowType(t *parser.TypeName) (arrow.DataType, error) {
	if t == nil {
		return nil, fmt.Errorf("missing type")
	}
	if t.ArrayDims > 0 {
		// T[] and T[][] are lists (PostgreSQL does not check the declared
		// dimensions either; DuckDB's T[][] is a list of lists)
		elem := *t
		elem.ArrayDims--
		et, err := ArrowType(&elem)
		if err != nil {
			return nil, err
		}
		return arrow.ListOf(et), nil
	}
	switch strings.ToUpper(t.Name) {
	case "STRUCT":
		if len(t.Fields) == 0 {
			return nil, errorf(t.Pos, "STRUCT needs at least one field: STRUCT(a INTEGER, …)")
		}
		fs := make([]arrow.Field, len(t.Fields))
		seen := map[string]bool{}
		for i, f := range t.Fields {
			ft, err := ArrowType(f.Type)
			if err != nil {
				return nil, err
			}
			name := identName(f.Name)
			if seen[strings.ToLower(name)] {
				return nil, errorf(f.Pos, "struct field %q appears twice", name)
			}
			seen[strings.ToLower(name)] = true
			fs[i] = arrow.Field{Name: name, Type: ft, Nullable: true}
		}
		return arrow.StructOf(fs...), nil
	case "MAP":
		if len(t.Elem) != 2 {
			return nil, errorf(t.Pos, "MAP needs a key and a value type: MAP(VARCHAR, INTEGER)")
		}
		kt, err := ArrowType(t.Elem[0])
		if err != nil {
			return nil, err
		}
		vt, err := ArrowType(t.Elem[1])
		if err != nil {
			return nil, err
		}
		return arrow.MapOf(kt, vt), nil
	case "LIST":
		if len(t.Elem) == 1 {
			et, err := ArrowType(t.Elem[0])
			if err != nil {
				return nil, err
			}
			return arrow.ListOf(et), nil
		}
	case "REGCLASS":
		// a relation's OID (a name cast to it is looked up: bindRegClass)
		return arrow.PrimitiveTypes.Int64, nil
	case "BOOLEAN":
		return tBool, nil
	case "TINYINT":
		return arrow.PrimitiveTypes.Int8, nil
	case "SMALLINT":
		return arrow.PrimitiveTypes.Int16, nil
	case "INTEGER":
		return arrow.PrimitiveTypes.Int32, nil
	case "BIGINT":
		return tInt64, nil
	case "REAL":
		return arrow.PrimitiveTypes.Float32, nil
	case "DOUBLE":
		return arrow.PrimitiveTypes.Float64, nil
	case "DECIMAL":
		p, s := 18, 3 // DuckDB's default for a bare DECIMAL
		switch len(t.Params) {
		case 1:
			p, s = t.Params[0], 0
		case 2:
			p, s = t.Params[0], t.Params[1]
		}
		if p < 1 || p > 38 {
			return nil, errorf(t.Pos, "DECIMAL precision %d must be between 1 and 38", p)
		}
		if s < 0 || s > p {
			return nil, errorf(t.Pos, "DECIMAL scale %d must be between 0 and the precision %d", s, p)
		}
		return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, nil
	case "VARCHAR", "CHAR", "JSON":
		return tString, nil
	case "BLOB":
		return arrow.BinaryTypes.Binary, nil
	case "DATE":
		return arrow.FixedWidthTypes.Date32, nil
	case "TIME":
		return arrow.FixedWidthTypes.Time64us, nil
	case "TIMESTAMP":
		return tTimestamp, nil
	case "TIMESTAMPTZ":
		return tTimestampTZ, nil
	case "UUID":
		return extensions.NewUUIDType(), nil
	case "INTERVAL":
		return arrow.FixedWidthTypes.MonthDayNanoInterval, nil
	}
	return nil, errorf(t.Pos, "type %q does not exist; use one of BOOLEAN, TINYINT, SMALLINT, INTEGER, BIGINT, REAL, DOUBLE, DECIMAL(p,s), VARCHAR, BLOB, DATE, TIME, TIMESTAMP, TIMESTAMPTZ, UUID, STRUCT(a T, …), T[]", strings.ToLower(t.Name))
}

// canonical maps an Arrow type read from a file or a registered batch to
// the type the engine computes on, or reports that it cannot.
func canonical(dt arrow.DataType) arrow.DataType {
	switch dt.ID() {
	case arrow.LARGE_STRING, arrow.STRING_VIEW:
		return tString
	case arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return arrow.BinaryTypes.Binary
	case arrow.TIMESTAMP:
		ts := dt.(*arrow.TimestampType)
		if ts.Unit != arrow.Microsecond || (ts.TimeZone != "" && ts.TimeZone != "UTC") {
			if ts.TimeZone != "" {
				return tTimestampTZ
			}
			return tTimestamp
		}
	case arrow.DICTIONARY:
		// a dictionary-encoded column (Arrow IPC, pandas' categoricals)
		// computes as its values
		return canonical(dt.(*arrow.DictionaryType).ValueType)
	case arrow.UINT8:
		return arrow.PrimitiveTypes.Int16
	case arrow.UINT16:
		return arrow.PrimitiveTypes.Int32
	case arrow.UINT32:
		return arrow.PrimitiveTypes.Int64
	case arrow.UINT64:
		// every value fits, as in PostgreSQL's numeric(20)
		return &arrow.Decimal128Type{Precision: 20, Scale: 0}
	case arrow.FLOAT16:
		return arrow.PrimitiveTypes.Float32
	case arrow.DATE64:
		return arrow.FixedWidthTypes.Date32
	case arrow.TIME32:
		return arrow.FixedWidthTypes.Time64us
	case arrow.TIME64:
		if dt.(*arrow.Time64Type).Unit != arrow.Microsecond {
			return arrow.FixedWidthTypes.Time64us
		}
	}
	return dt
}
