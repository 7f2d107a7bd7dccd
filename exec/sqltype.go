package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// TypeFromSQL maps a SQL type name, as the parser canonicalises it
// (BOOLEAN, TINYINT, SMALLINT, INTEGER, BIGINT, REAL, DOUBLE, DECIMAL,
// VARCHAR, CHAR, BLOB, UUID, DATE, TIME, TIMESTAMP, TIMESTAMPTZ, INTERVAL;
// Postgres spellings are accepted too), and its parameters, to the
// canonical Arrow type. DECIMAL without parameters is DECIMAL(18,3), as in
// DuckDB: a Decimal128 needs a fixed scale, which Postgres's unconstrained
// numeric does not have. VARCHAR(n) and CHAR(n) carry no length limit.
func TypeFromSQL(name string, params []int) (arrow.DataType, error) {
	n := strings.ToUpper(strings.TrimSpace(name))
	noParams := func(dt arrow.DataType) (arrow.DataType, error) {
		if len(params) > 0 {
			return nil, fmt.Errorf("type %s does not take parameters", strings.ToLower(n))
		}
		return dt, nil
	}
	switch n {
	case "BOOLEAN", "BOOL":
		return noParams(tBool)
	case "TINYINT", "INT1":
		return noParams(tInt8)
	case "SMALLINT", "INT2":
		return noParams(tInt16)
	case "INTEGER", "INT", "INT4":
		return noParams(tInt32)
	case "BIGINT", "INT8":
		return noParams(tInt64)
	case "REAL", "FLOAT4", "FLOAT":
		return noParams(tFloat32)
	case "DOUBLE", "DOUBLE PRECISION", "FLOAT8":
		return noParams(tFloat64)
	case "DECIMAL", "NUMERIC":
		p, s := 18, 3
		switch len(params) {
		case 0:
		case 1:
			p, s = params[0], 0
		case 2:
			p, s = params[0], params[1]
		default:
			return nil, fmt.Errorf("type numeric takes at most two parameters")
		}
		if p < 1 || p > 38 {
			return nil, fmt.Errorf("NUMERIC precision %d must be between 1 and 38", p)
		}
		if s < 0 || s > p {
			return nil, fmt.Errorf("NUMERIC scale %d must be between 0 and precision %d", s, p)
		}
		return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, nil
	case "VARCHAR", "TEXT", "STRING", "CHAR", "CHARACTER", "BPCHAR", "CHARACTER VARYING":
		if len(params) > 1 {
			return nil, fmt.Errorf("type %s takes at most one parameter", strings.ToLower(n))
		}
		return tString, nil
	case "BLOB", "BYTEA", "BINARY", "VARBINARY":
		return noParams(tBinary)
	case "UUID":
		if t := UUIDType(); t != nil {
			return noParams(t)
		}
		return nil, errNoUUIDType
	case "DATE":
		return noParams(tDate)
	case "TIME":
		return noParams(tTime)
	case "TIMESTAMP", "DATETIME":
		return noParams(tTimestamp)
	case "TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE":
		return noParams(tTimestampTZ)
	case "INTERVAL":
		return noParams(tInterval)
	}
	return nil, fmt.Errorf("type %q does not exist", strings.ToLower(name))
}
