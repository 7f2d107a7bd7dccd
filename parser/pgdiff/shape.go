package pgdiff

import "strings"

// sx builds an S-expression: (head arg arg …), skipping empty args.
func sx(head string, args ...string) string {
	var b strings.Builder
	b.WriteByte('(')
	b.WriteString(head)
	for _, a := range args {
		if a == "" {
			continue
		}
		b.WriteByte(' ')
		b.WriteString(a)
	}
	b.WriteByte(')')
	return b.String()
}

// list renders a list of shapes as [a b c], or "" when empty.
func list(tag string, items []string) string {
	if len(items) == 0 {
		return ""
	}
	return tag + ":[" + strings.Join(items, " ") + "]"
}

// opt renders tag:value, or "" when value is empty.
func opt(tag, v string) string {
	if v == "" {
		return ""
	}
	return tag + ":" + v
}

func flagIf(tag string, on bool) string {
	if on {
		return tag
	}
	return ""
}

// typeAliases mirrors the parser's canonical type names, applied to
// PostgreSQL's type names so int4 and INTEGER compare equal.
var typeAliases = map[string]string{
	"BOOL": "BOOLEAN", "BOOLEAN": "BOOLEAN",
	"TINYINT": "TINYINT", "INT1": "TINYINT",
	"SMALLINT": "SMALLINT", "INT2": "SMALLINT",
	"INT": "INTEGER", "INTEGER": "INTEGER", "INT4": "INTEGER",
	"BIGINT": "BIGINT", "INT8": "BIGINT",
	"REAL": "REAL", "FLOAT4": "REAL",
	"DOUBLE": "DOUBLE", "FLOAT8": "DOUBLE",
	"DECIMAL": "DECIMAL", "NUMERIC": "DECIMAL",
	"VARCHAR": "VARCHAR", "TEXT": "VARCHAR", "STRING": "VARCHAR", "BPCHAR": "CHAR", "CHAR": "CHAR",
	"BLOB": "BLOB", "BYTEA": "BLOB",
	"UUID": "UUID", "JSON": "JSON",
	"DATE": "DATE", "TIME": "TIME", "TIMETZ": "TIMETZ", "TIMESTAMP": "TIMESTAMP",
	"TIMESTAMPTZ": "TIMESTAMPTZ", "INTERVAL": "INTERVAL",
}

func canonType(name string) string {
	u := strings.ToUpper(name)
	if c, ok := typeAliases[u]; ok {
		return c
	}
	return u
}

// fitsInt32 mirrors gram.y: integer literals outside int32 become numeric.
func intConst(v string) string {
	neg := strings.HasPrefix(v, "-")
	d := strings.TrimPrefix(v, "-")
	d = strings.TrimLeft(d, "0")
	if d == "" {
		return sx("int", "0")
	}
	if len(d) < 10 || len(d) == 10 && (d < "2147483647" || d == "2147483647" || neg && d == "2147483648") {
		if neg {
			return sx("int", "-"+d)
		}
		return sx("int", d)
	}
	return sx("num", v)
}

func quoteStr(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
