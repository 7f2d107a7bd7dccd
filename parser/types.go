package parser

// TypeName is a SQL type. Name is canonical and upper-case: INT and INT4
// become INTEGER, DOUBLE PRECISION and FLOAT8 become DOUBLE, TIMESTAMP WITH
// TIME ZONE becomes TIMESTAMPTZ, CHARACTER VARYING becomes VARCHAR, and so
// on. An unknown name is kept (upper-cased unless quoted) for the binder to
// resolve or refuse.
type TypeName struct {
	Pos
	Name      string
	Params    []int       // DECIMAL(p, s), VARCHAR(n)
	Fields    []*FieldDef // STRUCT(a T, …)
	ArrayDims int         // number of trailing []
	Elem      []*TypeName // MAP(K, V) and LIST(T) element types
}

// FieldDef is one name type of a STRUCT.
type FieldDef struct {
	Pos
	Name Ident
	Type *TypeName
}

// typeAliases maps accepted spellings to canonical names. Multi-word
// spellings (DOUBLE PRECISION, …) are folded by the type parser.
var typeAliases = map[string]string{
	"BOOL": "BOOLEAN", "BOOLEAN": "BOOLEAN", "LOGICAL": "BOOLEAN",
	"TINYINT": "TINYINT", "INT1": "TINYINT",
	"SMALLINT": "SMALLINT", "INT2": "SMALLINT", "SHORT": "SMALLINT",
	"INT": "INTEGER", "INTEGER": "INTEGER", "INT4": "INTEGER", "SIGNED": "INTEGER",
	"BIGINT": "BIGINT", "INT8": "BIGINT", "LONG": "BIGINT",
	"HUGEINT": "HUGEINT",
	"REAL":    "REAL", "FLOAT4": "REAL", "FLOAT": "REAL",
	"DOUBLE": "DOUBLE", "FLOAT8": "DOUBLE",
	"DECIMAL": "DECIMAL", "NUMERIC": "DECIMAL", "DEC": "DECIMAL",
	// TEXT and STRING are VARCHAR: all are unbounded UTF-8 strings in skade.
	"VARCHAR": "VARCHAR", "TEXT": "VARCHAR", "STRING": "VARCHAR", "CHAR": "CHAR",
	"CHARACTER": "CHAR", "BPCHAR": "CHAR",
	"BLOB": "BLOB", "BYTEA": "BLOB", "BINARY": "BLOB", "VARBINARY": "BLOB",
	"UUID": "UUID", "JSON": "JSON",
	"DATE": "DATE", "TIME": "TIME", "TIMESTAMP": "TIMESTAMP", "DATETIME": "TIMESTAMP",
	"TIMESTAMPTZ": "TIMESTAMPTZ", "INTERVAL": "INTERVAL",
	"STRUCT": "STRUCT", "MAP": "MAP", "LIST": "LIST",
	// PostgreSQL's object identifiers, which catalog queries cast to:
	// skade's pg_catalog gives them as BIGINT (REGCLASS too, but a name
	// cast to it is looked up), and NAME is text
	"OID": "BIGINT", "REGCLASS": "REGCLASS", "REGTYPE": "BIGINT", "REGPROC": "BIGINT",
	"REGNAMESPACE": "BIGINT", "REGROLE": "BIGINT", "NAME": "VARCHAR",
}
