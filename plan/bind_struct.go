package plan

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
)

// Structs: the literal {'a': x, b: y}, struct_pack(a := x, …), ROW(x, y)
// (fields f1, f2, … until a cast names them), and field access: s.a and
// t.s.a (a dotted name whose prefix is a struct column rather than a
// table), (expr).a, s['a'] and struct_extract(s, 'a').

// bindStructExpr binds {'a': x, …}.
func (b *binder) bindStructExpr(e *parser.StructExpr, ec *exprCtx) (Expr, error) {
	if len(e.Fields) == 0 {
		return nil, errorf(e.Pos, "a struct needs at least one field")
	}
	names := make([]string, len(e.Fields))
	vals := make([]parser.Expr, len(e.Fields))
	for i, f := range e.Fields {
		names[i], vals[i] = f.Name.Name, f.Value
	}
	return b.structPack(e.Pos, names, vals, ec)
}

// structPack binds a struct of the named values.
func (b *binder) structPack(pos parser.Pos, names []string, vals []parser.Expr, ec *exprCtx) (Expr, error) {
	args, err := b.bindExprs(vals, ec)
	if err != nil {
		return nil, err
	}
	build := func(a []exec.Expr) (exec.Expr, error) { return exec.NewStructPack(names, a) }
	r, err := b.newFunc("struct_pack", args, build)
	return r, atPos(pos, err)
}

// bindStructFunc binds struct_pack(a := x, …) and row(x, …).
func (b *binder) bindStructFunc(e *parser.FuncCall, name string, ec *exprCtx) (Expr, error) {
	if len(e.Args) == 0 {
		return nil, errorf(e.Pos, "%s needs at least one argument", name)
	}
	names := make([]string, len(e.Args))
	vals := make([]parser.Expr, len(e.Args))
	for i, a := range e.Args {
		na, named := a.(*parser.NamedArg)
		switch {
		case name == "struct_pack" && named:
			names[i], vals[i] = identName(na.Name), na.Value
		case name == "struct_pack":
			// struct_pack(x) names the field after x, as DuckDB does
			names[i], vals[i] = deriveName(a), a
		case named:
			return nil, errorf(na.Pos, "row takes no named arguments; use struct_pack(%s := …)", na.Name.Name)
		default:
			names[i], vals[i] = "f"+strconv.Itoa(i+1), a
		}
	}
	return b.structPack(e.Pos, names, vals, ec)
}

// fieldOf binds field of x, a struct.
func (b *binder) fieldOf(pos parser.Pos, x Expr, field parser.Ident) (Expr, error) {
	build := func(a []exec.Expr) (exec.Expr, error) { return exec.NewStructField(a[0], field.Name, field.Quoted) }
	r, err := b.newFunc("struct_extract", []Expr{x}, build)
	return r, atPos(pos, err)
}

// bindFieldAccess binds (expr).field.
func (b *binder) bindFieldAccess(e *parser.FieldAccess, ec *exprCtx) (Expr, error) {
	x, err := b.bindExpr(e.X, ec)
	if err != nil {
		return nil, err
	}
	return b.fieldOf(e.Field.Pos, x, e.Field)
}

// structPath reads a dotted name that did not resolve as a column as a
// struct column followed by field names (s.a, t.s.a, s.a.b), taking the
// longest prefix that names a struct column. It reports false when none
// does.
func (b *binder) structPath(e *parser.ColumnRef, ec *exprCtx) (Expr, bool, error) {
	for k := len(e.Name) - 1; k >= 1; k-- {
		if k > 3 {
			continue
		}
		x, err := b.bindExpr(&parser.ColumnRef{Pos: e.Pos, Name: e.Name[:k]}, ec)
		if err != nil {
			continue
		}
		if _, ok := x.Type().(*arrow.StructType); !ok {
			continue
		}
		for _, f := range e.Name[k:] {
			if x, err = b.fieldOf(f.Pos, x, f); err != nil {
				return nil, true, err
			}
		}
		return x, true, nil
	}
	return nil, false, nil
}

// structSubscript binds s['a'] on a struct: the field a.
func (b *binder) structSubscript(e *parser.Subscript, x Expr) (Expr, error) {
	lit, ok := e.Index.(*parser.Literal)
	if !ok || lit.Kind != parser.LitString {
		return nil, errorf(e.Index.Position(), "a struct's subscript must be a field name in quotes, as in s['a']")
	}
	return b.fieldOf(e.Pos, x, parser.Ident{Pos: lit.Pos, Name: lit.Value, Quoted: true})
}
