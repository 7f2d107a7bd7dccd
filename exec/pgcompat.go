package exec

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// PostgreSQL's catalog functions, as clients call them against the
// pg_catalog relations the PostgreSQL server defines (psql's \dt and \l,
// drivers' type lookups). skade has one role, owning everything, in one
// database; objects have no comments and no ACLs, and every relation is
// visible on the search path.

func init() {
	register("pg_get_userbyid", rowFunc(types(tInt64), tString, func(a []arrow.Array, i int) (any, bool) { return "skade", true }))
	for _, name := range []string{"pg_table_is_visible", "pg_type_is_visible", "pg_function_is_visible"} {
		register(name, rowFunc(types(tInt64), tBool, func(a []arrow.Array, i int) (any, bool) { return true, true }))
	}
	register("pg_encoding_to_char", rowFunc(types(tInt64), tString, func(a []arrow.Array, i int) (any, bool) {
		if a[0].(*array.Int64).Value(i) == 6 {
			return "UTF8", true
		}
		return "", true
	}))
	// no comments on any object
	none := func(a []arrow.Array, i int) (any, bool) { return nil, false }
	register("obj_description", rowFunc(types(tInt64), tString, none), rowFunc(types(tInt64, tString), tString, none))
	register("shobj_description", rowFunc(types(tInt64, tString), tString, none))
	register("col_description", rowFunc(types(tInt64, tInt64), tString, none))
	register("pg_get_expr", rowFunc(types(tString, tInt64), tString, none), rowFunc(types(tString, tInt64, tBool), tString, none))
	// sizes are not kept per relation here: unknown (NULL), not zero
	noSize := func(a []arrow.Array, i int) (any, bool) { return nil, false }
	for _, name := range []string{"pg_table_size", "pg_total_relation_size", "pg_relation_size", "pg_indexes_size"} {
		register(name, rowFunc(types(tInt64), tInt64, noSize))
	}
	for _, name := range []string{"pg_get_function_result", "pg_get_function_arguments", "pg_get_viewdef"} {
		register(name, rowFunc(types(tInt64), tString, none))
	}
	// a constraint's definition, from the catalog the statement's context
	// carries (the PostgreSQL server's); NULL without one
	constraintDef := catalogDefKernel(func(ctx context.Context, defs CatalogDefs, a []arrow.Array, i int) (string, bool, error) {
		pretty := len(a) > 1 && a[1].IsValid(i) && a[1].(*array.Boolean).Value(i)
		return defs.ConstraintDef(ctx, a[0].(*array.Int64).Value(i), pretty)
	})
	register("pg_get_constraintdef", sig(types(tInt64), tString, constraintDef), sig(types(tInt64, tBool), tString, constraintDef))
	// an index's definition (column 0) or one of its columns'
	indexDef := catalogDefKernel(func(ctx context.Context, defs CatalogDefs, a []arrow.Array, i int) (string, bool, error) {
		column := int64(0)
		if len(a) > 1 {
			if a[1].IsNull(i) {
				return "", false, nil
			}
			column = a[1].(*array.Int64).Value(i)
		}
		return defs.IndexDef(ctx, a[0].(*array.Int64).Value(i), column)
	})
	register("pg_get_indexdef", sig(types(tInt64), tString, indexDef), sig(types(tInt64, tInt64, tBool), tString, indexDef))
	register("pg_size_pretty", rowFunc(types(tInt64), tString, func(a []arrow.Array, i int) (any, bool) {
		return sizePretty(a[0].(*array.Int64).Value(i)), true
	}))
	register("format_type", rowFunc(types(tInt64, tInt64), tString, func(a []arrow.Array, i int) (any, bool) {
		mod := int64(-1)
		if a[1].IsValid(i) {
			mod = a[1].(*array.Int64).Value(i)
		}
		return formatType(a[0].(*array.Int64).Value(i), mod), true
	}))
	register("array_to_string", resolveArrayToString)
	register("current_schemas", sig(types(tBool), arrow.ListOf(tString), func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		// the search path: main, after pg_catalog when implicit schemas are asked for
		b := array.NewListBuilder(ec.Mem, tString)
		defer b.Release()
		vb := b.ValueBuilder().(*array.StringBuilder)
		implicit := a[0].(*array.Boolean)
		for i := 0; i < n; i++ {
			if implicit.IsNull(i) {
				b.AppendNull()
				continue
			}
			b.Append(true)
			if implicit.Value(i) {
				vb.Append("pg_catalog")
			}
			vb.Append("main")
		}
		return b.NewArray(), nil
	}))
	register("pg_get_partkeydef", rowFunc(types(tInt64), tString, none))
	// no statistics are kept per index (skade has none)
	for _, name := range []string{"pg_stat_get_numscans", "pg_stat_get_tuples_returned", "pg_stat_get_tuples_fetched"} {
		register(name, rowFunc(types(tInt64), tInt64, noSize))
	}
	// one tablespace, the default, whose location PostgreSQL gives as ''
	register("pg_tablespace_location", rowFunc(types(tInt64), tString, func(a []arrow.Array, i int) (any, bool) { return "", true }))
	// no extended statistics and no publications
	register("pg_get_statisticsobjdef_columns", rowFunc(types(tInt64), tString, none))
	register("pg_relation_is_publishable", rowFunc(types(tInt64), tBool, func(a []arrow.Array, i int) (any, bool) { return false, true }))
}

// rowFunc is an overload computed row by row: f returns the value (a Go
// string, bool or int64) and whether it is not NULL. NULL arguments give
// NULL without calling f.
func rowFunc(params []arrow.DataType, ret arrow.DataType, f func(args []arrow.Array, i int) (any, bool)) overload {
	return sig(params, ret, func(ec *EvalContext, args []arrow.Array, n int) (arrow.Array, error) {
		b := array.NewBuilder(ec.Mem, ret)
		defer b.Release()
	rows:
		for i := 0; i < n; i++ {
			for _, a := range args {
				if a.IsNull(i) {
					b.AppendNull()
					continue rows
				}
			}
			v, ok := f(args, i)
			if !ok {
				b.AppendNull()
				continue
			}
			switch x := v.(type) {
			case string:
				b.(*array.StringBuilder).Append(x)
			case bool:
				b.(*array.BooleanBuilder).Append(x)
			case int64:
				b.(*array.Int64Builder).Append(x)
			default:
				return nil, fmt.Errorf("rowFunc: value of Go type %T (bug)", v)
			}
		}
		return b.NewArray(), nil
	})
}

// sizePretty renders a byte count as PostgreSQL's pg_size_pretty does:
// bytes below 10 kB, then kB, MB, GB and TB, each unit used up to 10240
// of it, rounded half up.
func sizePretty(n int64) string {
	if n < 10*1024 && n > -10*1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	units := []string{"kB", "MB", "GB", "TB", "PB"}
	v := n
	for i, u := range units {
		half := v / 512 // v / 1024, rounded half up, computed as PostgreSQL does
		v = (half + 1) / 2
		if half < 0 {
			v = (half - 1) / 2
		}
		if (v < 10*1024 && v > -10*1024) || i == len(units)-1 {
			return fmt.Sprintf("%d %s", v, u)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// formatType names a PostgreSQL type OID as format_type does.
func formatType(oid, mod int64) string {
	switch oid {
	case 16:
		return "boolean"
	case 17:
		return "bytea"
	case 18:
		return `"char"`
	case 19:
		return "name"
	case 20:
		return "bigint"
	case 21:
		return "smallint"
	case 23:
		return "integer"
	case 25:
		return "text"
	case 26:
		return "oid"
	case 114:
		return "json"
	case 700:
		return "real"
	case 701:
		return "double precision"
	case 1043:
		return "character varying"
	case 1082:
		return "date"
	case 1083:
		return "time without time zone"
	case 1114:
		return "timestamp without time zone"
	case 1184:
		return "timestamp with time zone"
	case 1186:
		return "interval"
	case 1700:
		if mod >= 4 {
			m := mod - 4
			return fmt.Sprintf("numeric(%d,%d)", m>>16, m&0xffff)
		}
		return "numeric"
	case 2950:
		return "uuid"
	case 3802:
		return "jsonb"
	case 0:
		return "-"
	}
	if elem, ok := arrayElemOIDs[oid]; ok {
		// PostgreSQL prints one [] whatever the dimensions
		return formatType(elem, mod) + "[]"
	}
	return "???"
}

// arrayElemOIDs are PostgreSQL's array type OIDs and their element types.
var arrayElemOIDs = map[int64]int64{1000: 16, 1001: 17, 1005: 21, 1007: 23, 1009: 25, 1015: 1043, 1016: 20,
	1021: 700, 1022: 701, 1182: 1082, 1183: 1083, 1115: 1114, 1185: 1184, 1187: 1186, 1231: 1700, 2951: 2950}

// resolveArrayToString is array_to_string(list, delimiter): the non-NULL
// elements' text joined by the delimiter.
func resolveArrayToString(name string, args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, errNoMatch
	}
	if _, ok := args[0].DataType().(*arrow.ListType); !ok && args[0].DataType().ID() != arrow.NULL {
		return nil, errNoMatch
	}
	sep, err := Coerce(args[1], tString)
	if err != nil {
		return nil, errNoMatch
	}
	return newCall(name, tString, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		b := array.NewStringBuilder(ec.Mem)
		defer b.Release()
		list, _ := a[0].(*array.List)
		seps := a[1]
		for i := 0; i < n; i++ {
			if list == nil || a[0].IsNull(i) || seps.IsNull(i) {
				b.AppendNull()
				continue
			}
			start, end := list.ValueOffsets(i)
			elems := list.ListValues()
			var parts []string
			for k := start; k < end; k++ {
				if elems.IsValid(int(k)) {
					parts = append(parts, elems.ValueStr(int(k)))
				}
			}
			b.Append(strings.Join(parts, seps.ValueStr(i)))
		}
		return b.NewArray(), nil
	}, formFunc, args[0], sep), nil
}

func init() {
	// error(message) raises message on the rows it is evaluated for (as
	// DuckDB's error): a CASE arm, a MERGE clause's action
	register("error", func(name string, args []Expr) (Expr, error) {
		if len(args) != 1 {
			return nil, errNoMatch
		}
		msg, err := Coerce(args[0], tString)
		if err != nil {
			return nil, errNoMatch
		}
		return newCall(name, tNull, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
			for i := 0; i < n; i++ {
				if a[0].IsValid(i) {
					return nil, errors.New(a[0].(*array.String).Value(i))
				}
			}
			return nullArray(ec.Mem, tNull, n), nil
		}, formFunc, msg), nil
	})
}

// catalogDefKernel is a function of an OID (argument 0) that def answers
// from the statement's CatalogDefs: NULL for a NULL OID, without a
// catalog, or when def finds nothing.
func catalogDefKernel(def func(ctx context.Context, defs CatalogDefs, a []arrow.Array, i int) (string, bool, error)) kernel {
	return func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		defs, _ := ec.Ctx.Value(catalogDefsKey{}).(CatalogDefs)
		b := array.NewStringBuilder(ec.Mem)
		defer b.Release()
		for i := 0; i < n; i++ {
			if defs == nil || a[0].IsNull(i) {
				b.AppendNull()
				continue
			}
			s, ok, err := def(ec.Ctx, defs, a, i)
			if err != nil {
				return nil, err
			}
			if !ok {
				b.AppendNull()
				continue
			}
			b.Append(s)
		}
		return b.NewArray(), nil
	}
}

// CatalogDefs gives the definitions of catalog objects by OID, for
// pg_get_constraintdef. The PostgreSQL server puts one in each statement's
// context (WithCatalogDefs).
type CatalogDefs interface {
	// ConstraintDef is the definition of constraint oid, as PostgreSQL
	// prints it ("PRIMARY KEY (a, b)", "CHECK ((x > 0))", or with pretty
	// "CHECK (x > 0)"); false when no constraint has that OID.
	ConstraintDef(ctx context.Context, oid int64, pretty bool) (string, bool, error)
	// IndexDef is, for column 0, the CREATE INDEX statement of index oid,
	// as pg_get_indexdef prints it; for column k > 0, its k-th column;
	// false when no index has that OID or no such column.
	IndexDef(ctx context.Context, oid int64, column int64) (string, bool, error)
}

type catalogDefsKey struct{}

// WithCatalogDefs returns ctx carrying d for pg_get_constraintdef.
func WithCatalogDefs(ctx context.Context, d CatalogDefs) context.Context {
	return context.WithValue(ctx, catalogDefsKey{}, d)
}
