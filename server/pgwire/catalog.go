package pgwire

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

// PostgreSQL's catalog, as clients read it: pg_catalog's relations and
// information_schema's views over the lake's namespaces and tables, so
// that psql's \dt, \dn and \l, and drivers' metadata queries, work.
//
// Relations describe what skade has: tables (relkind 'r') and views
// (relkind 'v', with pg_views and information_schema.views) with their
// columns, one role ("skade", oid 10) owning everything, one database
// (the one the client connected to), their PRIMARY KEY, UNIQUE and CHECK
// constraints (pg_constraint, information_schema.table_constraints,
// key_column_usage and check_constraints; NOT NULL is attnotnull), and no
// indexes, comments or ACLs. The relations of features skade lacks are
// there and empty, so that queries joining them run. OIDs of namespaces
// and tables are hashes of their names: stable across connections and
// restarts while the name stays.

// Well-known OIDs, as PostgreSQL assigns them.
const (
	oidPgCatalog   = 11
	oidInfoSchema  = 13000
	oidRoleSkade   = 10
	oidHeapAM      = 2
	oidBtreeAM     = 403
	oidDatabase    = 16384
	firstObjectOID = 16385
)

// objectOID is the stable OID of a lake object (namespace or table).
func objectOID(kind, name string) int64 {
	h := fnv.New32a()
	h.Write([]byte(kind + ":" + name))
	return firstObjectOID + int64(h.Sum32()%(1<<31-firstObjectOID))
}

// column of a catalog relation: name and type ("text", "int8", "int4",
// "bool", "float8", "char", "text[]", "int8[]", "int2[]"; relations with
// list columns other than text[] have no rows).
type catCol struct{ name, typ string }

type catalogRelation struct {
	cols []catCol
	rows func(ctx context.Context, c *conn) ([][]any, error)
}

func catType(t string) arrow.DataType {
	switch t {
	case "int8":
		return arrow.PrimitiveTypes.Int64
	case "int4":
		return arrow.PrimitiveTypes.Int32
	case "bool":
		return arrow.FixedWidthTypes.Boolean
	case "float8":
		return arrow.PrimitiveTypes.Float64
	case "text[]":
		return arrow.ListOf(arrow.BinaryTypes.String)
	case "int8[]":
		return arrow.ListOf(arrow.PrimitiveTypes.Int64)
	case "int2[]":
		return arrow.ListOf(arrow.PrimitiveTypes.Int16)
	}
	return arrow.BinaryTypes.String // text, char, name
}

func (r *catalogRelation) schema() *arrow.Schema {
	fields := make([]arrow.Field, len(r.cols))
	for i, c := range r.cols {
		fields[i] = arrow.Field{Name: c.name, Type: catType(c.typ), Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

func (r *catalogRelation) batch(ctx context.Context, c *conn) (arrow.RecordBatch, error) {
	rows, err := r.rows(ctx, c)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, r.schema())
	defer b.Release()
	for _, row := range rows {
		if len(row) != len(r.cols) {
			return nil, fmt.Errorf("pg_catalog: a row of %d values for %d columns (bug)", len(row), len(r.cols))
		}
		for j, v := range row {
			fb := b.Field(j)
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.Int64Builder:
				n, err := toInt64(v)
				if err != nil {
					return nil, err
				}
				fb.Append(n)
			case *array.Int32Builder:
				n, err := toInt64(v)
				if err != nil {
					return nil, err
				}
				fb.Append(int32(n))
			case *array.BooleanBuilder:
				fb.Append(v.(bool))
			case *array.Float64Builder:
				fb.Append(v.(float64))
			case *array.StringBuilder:
				fb.Append(v.(string))
			case *array.ListBuilder:
				fb.Append(true)
				switch vb := fb.ValueBuilder().(type) {
				case *array.StringBuilder:
					vb.AppendValues(v.([]string), nil)
				case *array.Int16Builder:
					vb.AppendValues(v.([]int16), nil)
				default:
					return nil, fmt.Errorf("pg_catalog: a list of %s (bug)", vb.Type())
				}
			}
		}
	}
	return b.NewRecordBatch(), nil
}

func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case uint32:
		return int64(x), nil
	}
	return 0, fmt.Errorf("pg_catalog: an integer of Go type %T (bug)", v)
}

func empty(context.Context, *conn) ([][]any, error) { return nil, nil }

// catalogTables are the relations, by name without schema.
var pgCatalog = map[string]*catalogRelation{
	"pg_namespace": {cols: []catCol{{"oid", "int8"}, {"nspname", "text"}, {"nspowner", "int8"}, {"nspacl", "text[]"}}, rows: namespaceRows},
	"pg_class": {cols: []catCol{{"oid", "int8"}, {"relname", "text"}, {"relnamespace", "int8"}, {"reltype", "int8"}, {"reloftype", "int8"},
		{"relowner", "int8"}, {"relam", "int8"}, {"relfilenode", "int8"}, {"reltablespace", "int8"}, {"relpages", "int4"}, {"reltuples", "float8"},
		{"relallvisible", "int4"}, {"reltoastrelid", "int8"}, {"relhasindex", "bool"}, {"relisshared", "bool"}, {"relpersistence", "char"},
		{"relkind", "char"}, {"relnatts", "int4"}, {"relchecks", "int4"}, {"relhasrules", "bool"}, {"relhastriggers", "bool"},
		{"relhassubclass", "bool"}, {"relrowsecurity", "bool"}, {"relforcerowsecurity", "bool"}, {"relispopulated", "bool"},
		{"relreplident", "char"}, {"relispartition", "bool"}, {"relrewrite", "int8"}, {"relfrozenxid", "int8"}, {"relminmxid", "int8"},
		{"relacl", "text[]"}, {"reloptions", "text[]"}, {"relpartbound", "text"}}, rows: classRows},
	"pg_attribute": {cols: []catCol{{"attrelid", "int8"}, {"attname", "text"}, {"atttypid", "int8"}, {"attstattarget", "int4"}, {"attlen", "int4"},
		{"attnum", "int4"}, {"attndims", "int4"}, {"attcacheoff", "int4"}, {"atttypmod", "int4"}, {"attbyval", "bool"}, {"attalign", "char"},
		{"attstorage", "char"}, {"attcompression", "char"}, {"attnotnull", "bool"}, {"atthasdef", "bool"}, {"atthasmissing", "bool"},
		{"attidentity", "char"}, {"attgenerated", "char"}, {"attisdropped", "bool"}, {"attislocal", "bool"}, {"attinhcount", "int4"},
		{"attcollation", "int8"}, {"attacl", "text[]"}, {"attoptions", "text[]"}}, rows: attributeRows},
	"pg_type": {cols: []catCol{{"oid", "int8"}, {"typname", "text"}, {"typnamespace", "int8"}, {"typowner", "int8"}, {"typlen", "int4"},
		{"typbyval", "bool"}, {"typtype", "char"}, {"typcategory", "char"}, {"typispreferred", "bool"}, {"typisdefined", "bool"},
		{"typdelim", "char"}, {"typrelid", "int8"}, {"typelem", "int8"}, {"typarray", "int8"}, {"typbasetype", "int8"}, {"typtypmod", "int4"},
		{"typndims", "int4"}, {"typcollation", "int8"}, {"typnotnull", "bool"}, {"typinput", "text"}, {"typoutput", "text"}}, rows: typeRows},
	"pg_database": {cols: []catCol{{"oid", "int8"}, {"datname", "text"}, {"datdba", "int8"}, {"encoding", "int4"}, {"datlocprovider", "char"},
		{"datistemplate", "bool"}, {"datallowconn", "bool"}, {"datconnlimit", "int4"}, {"datcollate", "text"}, {"datctype", "text"},
		{"daticulocale", "text"}, {"datcollversion", "text"}, {"datacl", "text[]"}}, rows: databaseRows},
	"pg_am":       {cols: []catCol{{"oid", "int8"}, {"amname", "text"}, {"amhandler", "text"}, {"amtype", "char"}}, rows: amRows},
	"pg_roles":    {cols: roleCols, rows: roleRows},
	"pg_authid":   {cols: roleCols, rows: roleRows},
	"pg_user":     {cols: []catCol{{"usename", "text"}, {"usesysid", "int8"}, {"usecreatedb", "bool"}, {"usesuper", "bool"}}, rows: userRows},
	"pg_settings": {cols: []catCol{{"name", "text"}, {"setting", "text"}, {"unit", "text"}, {"category", "text"}, {"short_desc", "text"}, {"context", "text"}, {"vartype", "text"}, {"source", "text"}}, rows: settingRows},
	"pg_index": {cols: []catCol{{"indexrelid", "int8"}, {"indrelid", "int8"}, {"indnatts", "int4"}, {"indnkeyatts", "int4"}, {"indisunique", "bool"},
		{"indisprimary", "bool"}, {"indisexclusion", "bool"}, {"indimmediate", "bool"}, {"indisclustered", "bool"}, {"indisvalid", "bool"},
		{"indisreplident", "bool"}, {"indkey", "text"}, {"indexprs", "text"}, {"indpred", "text"}, {"indnullsnotdistinct", "bool"}}, rows: indexRows},
	"pg_description": {cols: []catCol{{"objoid", "int8"}, {"classoid", "int8"}, {"objsubid", "int4"}, {"description", "text"}}, rows: empty},
	"pg_attrdef":     {cols: []catCol{{"oid", "int8"}, {"adrelid", "int8"}, {"adnum", "int4"}, {"adbin", "text"}}, rows: empty},
	"pg_constraint": {cols: []catCol{{"oid", "int8"}, {"conname", "text"}, {"connamespace", "int8"}, {"contype", "char"},
		{"condeferrable", "bool"}, {"condeferred", "bool"}, {"convalidated", "bool"}, {"conrelid", "int8"}, {"contypid", "int8"},
		{"conindid", "int8"}, {"conparentid", "int8"}, {"confrelid", "int8"}, {"conislocal", "bool"}, {"coninhcount", "int4"},
		{"connoinherit", "bool"}, {"conkey", "int2[]"}}, rows: constraintRows},
	"pg_inherits":   {cols: []catCol{{"inhrelid", "int8"}, {"inhparent", "int8"}, {"inhseqno", "int4"}, {"inhdetachpending", "bool"}}, rows: empty},
	"pg_proc":       {cols: []catCol{{"oid", "int8"}, {"proname", "text"}, {"pronamespace", "int8"}, {"proowner", "int8"}, {"prokind", "char"}, {"prorettype", "int8"}}, rows: empty},
	"pg_collation":  {cols: []catCol{{"oid", "int8"}, {"collname", "text"}, {"collnamespace", "int8"}}, rows: empty},
	"pg_tablespace": {cols: []catCol{{"oid", "int8"}, {"spcname", "text"}, {"spcowner", "int8"}}, rows: empty},
	"pg_extension":  {cols: []catCol{{"oid", "int8"}, {"extname", "text"}, {"extowner", "int8"}, {"extnamespace", "int8"}, {"extversion", "text"}}, rows: empty},
	"pg_views":      {cols: []catCol{{"schemaname", "text"}, {"viewname", "text"}, {"viewowner", "text"}, {"definition", "text"}}, rows: pgViewsRows},
	"pg_matviews":   {cols: []catCol{{"schemaname", "text"}, {"matviewname", "text"}, {"matviewowner", "text"}, {"definition", "text"}}, rows: empty},
	"pg_sequence":   {cols: []catCol{{"seqrelid", "int8"}, {"seqtypid", "int8"}}, rows: empty},
	"pg_trigger":    {cols: []catCol{{"oid", "int8"}, {"tgrelid", "int8"}, {"tgname", "text"}}, rows: empty},
	"pg_enum":       {cols: []catCol{{"oid", "int8"}, {"enumtypid", "int8"}, {"enumsortorder", "float8"}, {"enumlabel", "text"}}, rows: empty},
	"pg_range":      {cols: []catCol{{"rngtypid", "int8"}, {"rngsubtype", "int8"}}, rows: empty},
	// no row security, extended statistics or publications: psql's \d
	// asks for them
	"pg_policy": {cols: []catCol{{"oid", "int8"}, {"polname", "text"}, {"polrelid", "int8"}, {"polcmd", "char"}, {"polpermissive", "bool"},
		{"polroles", "int8[]"}, {"polqual", "text"}, {"polwithcheck", "text"}}, rows: empty},
	"pg_statistic_ext": {cols: []catCol{{"oid", "int8"}, {"stxrelid", "int8"}, {"stxname", "text"}, {"stxnamespace", "int8"},
		{"stxowner", "int8"}, {"stxstattarget", "int4"}, {"stxkeys", "int2[]"}, {"stxkind", "text[]"}, {"stxexprs", "text"}}, rows: empty},
	"pg_publication": {cols: []catCol{{"oid", "int8"}, {"pubname", "text"}, {"pubowner", "int8"}, {"puballtables", "bool"},
		{"pubinsert", "bool"}, {"pubupdate", "bool"}, {"pubdelete", "bool"}, {"pubtruncate", "bool"}, {"pubviaroot", "bool"}}, rows: empty},
	"pg_depend": {cols: []catCol{{"classid", "int8"}, {"objid", "int8"}, {"objsubid", "int4"}, {"refclassid", "int8"}, {"refobjid", "int8"},
		{"refobjsubid", "int4"}, {"deptype", "char"}}, rows: empty},
	"pg_auth_members":          {cols: []catCol{{"oid", "int8"}, {"roleid", "int8"}, {"member", "int8"}, {"grantor", "int8"}, {"admin_option", "bool"}}, rows: empty},
	"pg_publication_namespace": {cols: []catCol{{"oid", "int8"}, {"pnpubid", "int8"}, {"pnnspid", "int8"}}, rows: empty},
	"pg_publication_rel":       {cols: []catCol{{"oid", "int8"}, {"prpubid", "int8"}, {"prrelid", "int8"}, {"prqual", "text"}, {"prattrs", "int2[]"}}, rows: empty},
	"pg_foreign_table":         {cols: []catCol{{"ftrelid", "int8"}, {"ftserver", "int8"}}, rows: empty},
	"pg_tables": {cols: []catCol{{"schemaname", "text"}, {"tablename", "text"}, {"tableowner", "text"}, {"tablespace", "text"},
		{"hasindexes", "bool"}, {"hasrules", "bool"}, {"hastriggers", "bool"}, {"rowsecurity", "bool"}}, rows: pgTablesRows},
}

var roleCols = []catCol{{"oid", "int8"}, {"rolname", "text"}, {"rolsuper", "bool"}, {"rolinherit", "bool"}, {"rolcreaterole", "bool"},
	{"rolcreatedb", "bool"}, {"rolcanlogin", "bool"}, {"rolreplication", "bool"}, {"rolconnlimit", "int4"}, {"rolbypassrls", "bool"}, {"rolvaliduntil", "text"}}

var informationSchema = map[string]*catalogRelation{
	"schemata": {cols: []catCol{{"catalog_name", "text"}, {"schema_name", "text"}, {"schema_owner", "text"}}, rows: schemataRows},
	"tables": {cols: []catCol{{"table_catalog", "text"}, {"table_schema", "text"}, {"table_name", "text"}, {"table_type", "text"},
		{"is_insertable_into", "text"}}, rows: infoTablesRows},
	"columns": {cols: []catCol{{"table_catalog", "text"}, {"table_schema", "text"}, {"table_name", "text"}, {"column_name", "text"},
		{"ordinal_position", "int4"}, {"column_default", "text"}, {"is_nullable", "text"}, {"data_type", "text"},
		{"character_maximum_length", "int4"}, {"numeric_precision", "int4"}, {"numeric_scale", "int4"}, {"datetime_precision", "int4"},
		{"udt_name", "text"}}, rows: infoColumnsRows},
	"views": {cols: []catCol{{"table_catalog", "text"}, {"table_schema", "text"}, {"table_name", "text"}, {"view_definition", "text"}}, rows: infoViewsRows},
	"table_constraints": {cols: []catCol{{"constraint_catalog", "text"}, {"constraint_schema", "text"}, {"constraint_name", "text"},
		{"table_catalog", "text"}, {"table_schema", "text"}, {"table_name", "text"}, {"constraint_type", "text"},
		{"is_deferrable", "text"}, {"initially_deferred", "text"}, {"enforced", "text"}}, rows: infoTableConstraintsRows},
	"key_column_usage": {cols: []catCol{{"constraint_catalog", "text"}, {"constraint_schema", "text"}, {"constraint_name", "text"},
		{"table_catalog", "text"}, {"table_schema", "text"}, {"table_name", "text"}, {"column_name", "text"},
		{"ordinal_position", "int4"}}, rows: infoKeyColumnsRows},
	"check_constraints": {cols: []catCol{{"constraint_catalog", "text"}, {"constraint_schema", "text"}, {"constraint_name", "text"},
		{"check_clause", "text"}}, rows: infoCheckConstraintsRows},
}

// systemTables is the session's lake.SystemTables for connection c.
func (c *conn) systemTables(name string) (lake.SystemTable, bool) {
	var rel *catalogRelation
	switch {
	case strings.HasPrefix(name, "pg_catalog."):
		rel = pgCatalog[strings.TrimPrefix(name, "pg_catalog.")]
	case strings.HasPrefix(name, "information_schema."):
		rel = informationSchema[strings.TrimPrefix(name, "information_schema.")]
	case strings.HasPrefix(name, "pg_"):
		rel = pgCatalog[name]
	}
	if rel == nil {
		return lake.SystemTable{}, false
	}
	return lake.SystemTable{Schema: rel.schema(), Rows: func(ctx context.Context) (arrow.RecordBatch, error) { return rel.batch(ctx, c) }}, true
}

// lakeTable is a table or view as the catalog shows it; sql is a view's
// query, "" for a table.
type lakeTable struct {
	ns, name string
	schema   *arrow.Schema
	view     bool
	sql      string
	// cons are a table's PRIMARY KEY, UNIQUE and CHECK constraints
	cons []plan.TableConstraint
}

func (t lakeTable) oid() int64 { return objectOID("table", t.ns+"."+t.name) }

// keys are the table's PRIMARY KEY and UNIQUE constraints. Each is shown
// as PostgreSQL shows the unique btree index that enforces one there (an
// index of the constraint's name, in pg_class and pg_index), so that
// psql's \d lists it under "Indexes"; skade has no such index.
func (t lakeTable) keys() []plan.TableConstraint {
	var out []plan.TableConstraint
	for _, k := range t.cons {
		if k.Kind != parser.ConstraintCheck {
			out = append(out, k)
		}
	}
	return out
}

// indexOID is the stable OID of the index standing for key constraint name.
func indexOID(t lakeTable, name string) int64 {
	return objectOID("index", t.ns+"."+t.name+"."+name)
}

// keyColumns are a key's columns as attribute numbers of t (pg_attribute's
// attnum), and their fields.
func (t lakeTable) keyColumns(k plan.TableConstraint) ([]int16, []arrow.Field) {
	var nums []int16
	var fields []arrow.Field
	for _, col := range k.Columns {
		if idx := t.schema.FieldIndices(col); len(idx) > 0 {
			nums = append(nums, int16(idx[0]+1))
			fields = append(fields, t.schema.Field(idx[0]))
		}
	}
	return nums, fields
}

// tables lists the lake's tables with their schemas, sorted.
func (c *conn) tables(ctx context.Context) ([]lakeTable, error) {
	lk := c.srv.cfg.Lake
	names, err := lk.Tables(ctx)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []lakeTable
	for _, n := range names {
		tbl, err := lk.Table(ctx, n)
		if err != nil {
			continue // dropped meanwhile
		}
		ns, name := "main", n
		if i := strings.LastIndexByte(n, '.'); i >= 0 {
			ns, name = n[:i], n[i+1:]
		}
		cons, err := plan.TableConstraints(tbl.Iceberg().Metadata().Properties())
		if err != nil {
			cons = nil // unreadable: the table's writes refuse with the reason
		}
		out = append(out, lakeTable{ns: ns, name: name, schema: tbl.Schema(), cons: cons})
	}
	views, err := lk.Views(ctx)
	if err != nil {
		return nil, err
	}
	for _, v := range views {
		out = append(out, lakeTable{ns: v.Namespace, name: v.Name, schema: v.Schema, view: true, sql: v.SQL})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ns != out[j].ns {
			return out[i].ns < out[j].ns
		}
		return out[i].name < out[j].name
	})
	return out, nil
}

func namespaceOID(ns string) int64 { return objectOID("namespace", ns) }

func namespaceRows(ctx context.Context, c *conn) ([][]any, error) {
	nss, err := c.srv.cfg.Lake.Namespaces(ctx)
	if err != nil {
		return nil, err
	}
	rows := [][]any{{oidPgCatalog, "pg_catalog", oidRoleSkade, nil}, {oidInfoSchema, "information_schema", oidRoleSkade, nil}}
	for _, ns := range nss {
		rows = append(rows, []any{namespaceOID(ns), ns, oidRoleSkade, nil})
	}
	return rows, nil
}

func classRows(ctx context.Context, c *conn) ([][]any, error) {
	tables, err := c.tables(ctx)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	for _, t := range tables {
		kind, am := "r", int64(oidHeapAM)
		if t.view {
			kind, am = "v", 0
		}
		checks := 0
		for _, k := range t.cons {
			if k.Kind == parser.ConstraintCheck {
				checks++
			}
		}
		keys := t.keys()
		rows = append(rows, []any{t.oid(), t.name, namespaceOID(t.ns), 0, 0,
			oidRoleSkade, am, 0, 0, 0, -1.0,
			0, 0, len(keys) > 0, false, "p",
			kind, t.schema.NumFields(), checks, t.view, false,
			false, false, false, true,
			"d", false, 0, 0, 0,
			nil, nil, nil})
		for _, k := range keys {
			rows = append(rows, []any{indexOID(t, k.Name), k.Name, namespaceOID(t.ns), 0, 0,
				oidRoleSkade, int64(oidBtreeAM), 0, 0, 0, -1.0,
				0, 0, false, false, "p",
				"i", len(k.Columns), 0, false, false,
				false, false, false, true,
				"n", false, 0, 0, 0,
				nil, nil, nil})
		}
	}
	return rows, nil
}

func attributeRows(ctx context.Context, c *conn) ([][]any, error) {
	tables, err := c.tables(ctx)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	attribute := func(rel int64, f arrow.Field, num int, notNull bool) []any {
		oid, size, mod := pgType(f.Type)
		return []any{rel, f.Name, oid, -1, int(size),
			num, 0, -1, int(mod), size > 0 && size <= 8, "i",
			"p", "", notNull, false, false,
			"", "", false, true, 0,
			0, nil, nil}
	}
	for _, t := range tables {
		for i, f := range t.schema.Fields() {
			rows = append(rows, attribute(t.oid(), f, i+1, !f.Nullable))
		}
		// a key's index has the key's columns
		for _, k := range t.keys() {
			_, fields := t.keyColumns(k)
			for i, f := range fields {
				rows = append(rows, attribute(indexOID(t, k.Name), f, i+1, false))
			}
		}
	}
	return rows, nil
}

// pgTypes are the types skade's columns take, as pg_type lists them.
var pgTypes = []struct {
	oid      int64
	name     string
	len      int
	category string
}{
	{oidBool, "bool", 1, "B"}, {oidBytea, "bytea", -1, "U"}, {oidInt8, "int8", 8, "N"}, {oidInt2, "int2", 2, "N"},
	{oidInt4, "int4", 4, "N"}, {oidText, "text", -1, "S"}, {oidOID, "oid", 4, "N"}, {oidFloat4, "float4", 4, "N"},
	{oidFloat8, "float8", 8, "N"}, {oidVarchar, "varchar", -1, "S"}, {oidDate, "date", 4, "D"}, {oidTime, "time", 8, "D"},
	{oidTimestamp, "timestamp", 8, "D"}, {oidTimestamptz, "timestamptz", 8, "D"}, {oidInterval, "interval", 16, "T"},
	{oidNumeric, "numeric", -1, "N"}, {oidUUID, "uuid", 16, "U"}, {oidNameType, "name", 64, "S"}, {oidChar, "char", 1, "Z"},
}

func typeRows(context.Context, *conn) ([][]any, error) {
	var rows [][]any
	for _, t := range pgTypes {
		arr := int64(arrayOIDs[uint32(t.oid)])
		rows = append(rows, []any{t.oid, t.name, oidPgCatalog, oidRoleSkade, t.len,
			t.len > 0 && t.len <= 8, "b", t.category, false, true,
			",", 0, 0, arr, 0, -1,
			0, 0, false, t.name + "in", t.name + "out"})
		if arr != 0 {
			rows = append(rows, []any{arr, "_" + t.name, oidPgCatalog, oidRoleSkade, -1,
				false, "b", "A", false, true,
				",", 0, t.oid, 0, 0, -1,
				0, 0, false, "array_in", "array_out"})
		}
	}
	return rows, nil
}

func databaseRows(_ context.Context, c *conn) ([][]any, error) {
	return [][]any{{oidDatabase, c.dbname, oidRoleSkade, 6, "c", false, true, -1, "C", "C", nil, nil, nil}}, nil
}

func amRows(context.Context, *conn) ([][]any, error) {
	return [][]any{{oidHeapAM, "heap", "heap_tableam_handler", "t"}, {oidBtreeAM, "btree", "bthandler", "i"}}, nil
}

func roleRows(context.Context, *conn) ([][]any, error) {
	return [][]any{{oidRoleSkade, "skade", true, true, true, true, true, false, -1, true, nil}}, nil
}

func userRows(context.Context, *conn) ([][]any, error) {
	return [][]any{{"skade", oidRoleSkade, true, true}}, nil
}

func settingRows(ctx context.Context, c *conn) ([][]any, error) {
	res, err := c.sess.SQL(ctx, "SHOW ALL")
	if err != nil {
		return nil, err
	}
	bs, err := res.Collect(ctx)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	for _, b := range bs {
		col := b.Column(0)
		for i := 0; i < int(b.NumRows()); i++ {
			name, value, _ := strings.Cut(col.ValueStr(i), " = ")
			rows = append(rows, []any{name, value, nil, "skade", nil, "user", "string", "session"})
		}
		b.Release()
	}
	return rows, nil
}

func pgTablesRows(ctx context.Context, c *conn) ([][]any, error) {
	tables, err := c.tables(ctx)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	for _, t := range tables {
		if !t.view {
			rows = append(rows, []any{t.ns, t.name, "skade", nil, false, false, false, false})
		}
	}
	return rows, nil
}

func pgViewsRows(ctx context.Context, c *conn) ([][]any, error) {
	return viewRows(ctx, c, func(t lakeTable) []any { return []any{t.ns, t.name, "skade", t.sql} })
}

func infoViewsRows(ctx context.Context, c *conn) ([][]any, error) {
	return viewRows(ctx, c, func(t lakeTable) []any { return []any{c.dbname, t.ns, t.name, t.sql} })
}

// viewRows is a row per view, as row lays it out.
func viewRows(ctx context.Context, c *conn, row func(lakeTable) []any) ([][]any, error) {
	tables, err := c.tables(ctx)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	for _, t := range tables {
		if t.view {
			rows = append(rows, row(t))
		}
	}
	return rows, nil
}

func schemataRows(ctx context.Context, c *conn) ([][]any, error) {
	nss, err := c.srv.cfg.Lake.Namespaces(ctx)
	if err != nil {
		return nil, err
	}
	rows := [][]any{{c.dbname, "pg_catalog", "skade"}, {c.dbname, "information_schema", "skade"}}
	for _, ns := range nss {
		rows = append(rows, []any{c.dbname, ns, "skade"})
	}
	return rows, nil
}

func infoTablesRows(ctx context.Context, c *conn) ([][]any, error) {
	tables, err := c.tables(ctx)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	for _, t := range tables {
		if t.view {
			rows = append(rows, []any{c.dbname, t.ns, t.name, "VIEW", "NO"})
			continue
		}
		rows = append(rows, []any{c.dbname, t.ns, t.name, "BASE TABLE", "YES"})
	}
	return rows, nil
}

func infoColumnsRows(ctx context.Context, c *conn) ([][]any, error) {
	tables, err := c.tables(ctx)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	for _, t := range tables {
		for i, f := range t.schema.Fields() {
			oid, _, mod := pgType(f.Type)
			nullable := "YES"
			if !f.Nullable {
				nullable = "NO"
			}
			var prec, scale, dtPrec any
			switch oid {
			case oidInt2:
				prec, scale = 16, 0
			case oidInt4:
				prec, scale = 32, 0
			case oidInt8:
				prec, scale = 64, 0
			case oidFloat4:
				prec = 24
			case oidFloat8:
				prec = 53
			case oidNumeric:
				if mod >= 4 {
					prec, scale = int((mod-4)>>16), int((mod-4)&0xffff)
				}
			case oidTimestamp, oidTimestamptz, oidTime:
				dtPrec = 6
			case oidDate:
				dtPrec = 0
			}
			dataType := informationSchemaType(oid)
			udt := dataType
			for _, pt := range pgTypes {
				if pt.oid == int64(oid) {
					udt = pt.name
				}
			}
			rows = append(rows, []any{c.dbname, t.ns, t.name, f.Name, i + 1, nil, nullable, dataType, nil, prec, scale, dtPrec, udt})
		}
	}
	return rows, nil
}

// informationSchemaType is information_schema.columns.data_type's name
// for a type OID.
func informationSchemaType(oid uint32) string {
	switch oid {
	case oidBool:
		return "boolean"
	case oidInt2:
		return "smallint"
	case oidInt4:
		return "integer"
	case oidInt8:
		return "bigint"
	case oidFloat4:
		return "real"
	case oidFloat8:
		return "double precision"
	case oidNumeric:
		return "numeric"
	case oidText:
		return "text"
	case oidBytea:
		return "bytea"
	case oidDate:
		return "date"
	case oidTime:
		return "time without time zone"
	case oidTimestamp:
		return "timestamp without time zone"
	case oidTimestamptz:
		return "timestamp with time zone"
	case oidInterval:
		return "interval"
	case oidUUID:
		return "uuid"
	}
	return "USER-DEFINED"
}

// systemOIDs are pg_catalog relations' OIDs, as PostgreSQL assigns them.
var systemOIDs = map[string]int64{
	"pg_type": 1247, "pg_attribute": 1249, "pg_proc": 1255, "pg_class": 1259, "pg_authid": 1260,
	"pg_database": 1262, "pg_am": 2601, "pg_attrdef": 2604, "pg_constraint": 2606, "pg_description": 2609,
	"pg_index": 2610, "pg_inherits": 2611, "pg_namespace": 2615, "pg_trigger": 2620, "pg_collation": 3456,
	"pg_tablespace": 1213, "pg_extension": 3079, "pg_enum": 3501, "pg_range": 3541, "pg_sequence": 2224,
	"pg_foreign_table": 3118, "pg_policy": 3256, "pg_statistic_ext": 3381, "pg_publication": 6104,
	"pg_publication_namespace": 6237, "pg_auth_members": 1261, "pg_depend": 2608, "pg_publication_rel": 6106,
}

// relationOID resolves 'name'::regclass: a pg_catalog relation, or a
// lake table (bare names are in main).
func (c *conn) relationOID(name string) (int64, bool) {
	if oid, ok := systemOIDs[strings.TrimPrefix(name, "pg_catalog.")]; ok {
		return oid, true
	}
	tables, err := c.tables(context.Background())
	if err != nil {
		return 0, false
	}
	for _, t := range tables {
		if name == t.name && t.ns == "main" || name == t.ns+"."+t.name {
			return t.oid(), true
		}
	}
	return 0, false
}

// constraintOID is the stable OID of a table's constraint.
func constraintOID(t lakeTable, name string) int64 {
	return objectOID("constraint", t.ns+"."+t.name+"."+name)
}

// constraintType is PostgreSQL's contype and information_schema's
// constraint_type of k.
func constraintType(k parser.ConstraintKind) (contype, name string) {
	switch k {
	case parser.ConstraintPrimaryKey:
		return "p", "PRIMARY KEY"
	case parser.ConstraintUnique:
		return "u", "UNIQUE"
	}
	return "c", "CHECK"
}

// stmtDefs answers pg_get_constraintdef and pg_get_indexdef for one
// statement (exec.CatalogDefs), reading the lake's constraints once, on
// first use.
type stmtDefs struct {
	c       *conn
	once    sync.Once
	defs    map[int64]plan.TableConstraint
	indexes map[int64]tableKey
	err     error
}

// tableKey is a key constraint and its table.
type tableKey struct {
	t lakeTable
	k plan.TableConstraint
}

func (d *stmtDefs) load(ctx context.Context) error {
	d.once.Do(func() {
		d.defs, d.indexes = map[int64]plan.TableConstraint{}, map[int64]tableKey{}
		_, d.err = eachConstraint(ctx, d.c, func(t lakeTable, k plan.TableConstraint) [][]any {
			d.defs[constraintOID(t, k.Name)] = k
			if k.Kind != parser.ConstraintCheck {
				d.indexes[indexOID(t, k.Name)] = tableKey{t, k}
			}
			return nil
		})
	})
	return d.err
}

func (d *stmtDefs) ConstraintDef(ctx context.Context, oid int64, pretty bool) (string, bool, error) {
	err := d.load(ctx)
	k, ok := d.defs[oid]
	if !ok {
		return "", false, err
	}
	if k.Kind == parser.ConstraintCheck && !pretty {
		return "CHECK ((" + k.Check + "))", true, nil // as PostgreSQL prints it
	}
	return k.SQL(), true, nil
}

func (d *stmtDefs) IndexDef(ctx context.Context, oid int64, column int64) (string, bool, error) {
	err := d.load(ctx)
	x, ok := d.indexes[oid]
	if !ok {
		return "", false, err
	}
	_, fields := x.t.keyColumns(x.k)
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = parser.QuoteIdent(f.Name)
	}
	switch {
	case column == 0:
		return fmt.Sprintf("CREATE UNIQUE INDEX %s ON %s.%s USING btree (%s)", parser.QuoteIdent(x.k.Name),
			parser.QuoteIdent(x.t.ns), parser.QuoteIdent(x.t.name), strings.Join(cols, ", ")), true, nil
	case column > 0 && column <= int64(len(cols)):
		return cols[column-1], true, nil
	}
	return "", false, nil
}

// eachConstraint calls fn with every table constraint, table by table.
func eachConstraint(ctx context.Context, c *conn, fn func(t lakeTable, k plan.TableConstraint) [][]any) ([][]any, error) {
	tables, err := c.tables(ctx)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	for _, t := range tables {
		for _, k := range t.cons {
			rows = append(rows, fn(t, k)...)
		}
	}
	return rows, nil
}

// constraintRows are the tables' PRIMARY KEY, UNIQUE and CHECK
// constraints; NOT NULL is pg_attribute's attnotnull, as in PostgreSQL
// before 18. conkey numbers a key's columns (a CHECK's: those it reads)
// as pg_attribute's attnum.
func constraintRows(ctx context.Context, c *conn) ([][]any, error) {
	return eachConstraint(ctx, c, func(t lakeTable, k plan.TableConstraint) [][]any {
		contype, _ := constraintType(k.Kind)
		key, _ := t.keyColumns(k)
		var index int64
		if k.Kind != parser.ConstraintCheck {
			index = indexOID(t, k.Name)
		}
		return [][]any{{constraintOID(t, k.Name), k.Name, namespaceOID(t.ns), contype,
			false, false, true, t.oid(), 0,
			index, 0, 0, true, 0,
			true, key}}
	})
}

func infoTableConstraintsRows(ctx context.Context, c *conn) ([][]any, error) {
	return eachConstraint(ctx, c, func(t lakeTable, k plan.TableConstraint) [][]any {
		_, typ := constraintType(k.Kind)
		return [][]any{{c.dbname, t.ns, k.Name, c.dbname, t.ns, t.name, typ, "NO", "NO", "YES"}}
	})
}

// infoKeyColumnsRows are the columns of the PRIMARY KEY and UNIQUE
// constraints, in key order.
func infoKeyColumnsRows(ctx context.Context, c *conn) ([][]any, error) {
	return eachConstraint(ctx, c, func(t lakeTable, k plan.TableConstraint) [][]any {
		if k.Kind == parser.ConstraintCheck {
			return nil
		}
		var rows [][]any
		for i, col := range k.Columns {
			rows = append(rows, []any{c.dbname, t.ns, k.Name, c.dbname, t.ns, t.name, col, i + 1})
		}
		return rows
	})
}

func infoCheckConstraintsRows(ctx context.Context, c *conn) ([][]any, error) {
	return eachConstraint(ctx, c, func(t lakeTable, k plan.TableConstraint) [][]any {
		if k.Kind != parser.ConstraintCheck {
			return nil
		}
		return [][]any{{c.dbname, t.ns, k.Name, k.Check}}
	})
}

// indexRows are the indexes standing for the tables' PRIMARY KEY and
// UNIQUE constraints (lakeTable.keys): unique, valid, immediate btrees.
func indexRows(ctx context.Context, c *conn) ([][]any, error) {
	return eachConstraint(ctx, c, func(t lakeTable, k plan.TableConstraint) [][]any {
		if k.Kind == parser.ConstraintCheck {
			return nil
		}
		key, _ := t.keyColumns(k)
		nums := make([]string, len(key))
		for i, n := range key {
			nums[i] = strconv.Itoa(int(n))
		}
		return [][]any{{indexOID(t, k.Name), t.oid(), len(key), len(key), true,
			k.Kind == parser.ConstraintPrimaryKey, false, true, false, true,
			false, strings.Join(nums, " "), nil, nil, false}}
	})
}
