package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Structs (Iceberg's struct, SQL's STRUCT/ROW) are Arrow struct arrays
// whose fields are all nullable, as a table's optional fields read back.

// StructPack builds a struct from one expression per field: DuckDB's
// {'a': x, 'b': y}, struct_pack(a := x) and ROW(x, y). The struct itself
// is never NULL.
type StructPack struct {
	Fields []Expr
	typ    *arrow.StructType
}

var _ Expr = (*StructPack)(nil)

// NewStructPack returns the struct of fields, named names.
func NewStructPack(names []string, fields []Expr) (*StructPack, error) {
	if len(names) != len(fields) || len(fields) == 0 {
		return nil, fmt.Errorf("a struct needs at least one field, each with a name")
	}
	fs := make([]arrow.Field, len(fields))
	seen := map[string]bool{}
	for i, f := range fields {
		key := strings.ToLower(names[i])
		if seen[key] {
			return nil, fmt.Errorf("struct field %q appears twice", names[i])
		}
		seen[key] = true
		fs[i] = arrow.Field{Name: names[i], Type: f.DataType(), Nullable: true}
	}
	return &StructPack{Fields: fields, typ: arrow.StructOf(fs...)}, nil
}

func (s *StructPack) DataType() arrow.DataType { return s.typ }

func (s *StructPack) Eval(ec *EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	cols := make([]arrow.Array, len(s.Fields))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, f := range s.Fields {
		c, err := f.Eval(ec, batch)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return newStruct(s.typ, int(batch.NumRows()), nil, cols), nil
}

func (s *StructPack) String() string {
	parts := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		parts[i] = "'" + s.typ.Field(i).Name + "': " + f.String()
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// newStruct assembles a struct array of n rows from its children (which
// it retains) and a validity bitmap (nil: no NULL struct).
func newStruct(typ arrow.DataType, n int, valid *memory.Buffer, cols []arrow.Array) arrow.Array {
	children := make([]arrow.ArrayData, len(cols))
	for i, c := range cols {
		children[i] = c.Data()
	}
	nulls := 0
	if valid != nil {
		nulls = n - bitutil.CountSetBits(valid.Bytes(), 0, n)
	}
	data := array.NewData(typ, n, []*memory.Buffer{valid}, children, nulls, 0)
	defer data.Release()
	if valid != nil {
		valid.Release()
	}
	return array.MakeFromData(data)
}

// StructField reads field Index of a struct: NULL where the struct is.
type StructField struct {
	X     Expr
	Index int
}

var _ Expr = (*StructField)(nil)

// NewStructField returns field name (matched without regard to case
// unless quoted) of x, a struct.
func NewStructField(x Expr, name string, quoted bool) (*StructField, error) {
	st, ok := x.DataType().(*arrow.StructType)
	if !ok {
		return nil, fmt.Errorf("cannot read field %q of a value of type %s, which is not a struct", name, TypeName(x.DataType()))
	}
	for i, f := range st.Fields() {
		if f.Name == name || !quoted && strings.EqualFold(f.Name, name) {
			return &StructField{X: x, Index: i}, nil
		}
	}
	names := make([]string, st.NumFields())
	for i, f := range st.Fields() {
		names[i] = f.Name
	}
	return nil, fmt.Errorf("struct %s has no field %q; its fields are %s", TypeName(st), name, strings.Join(names, ", "))
}

func (s *StructField) DataType() arrow.DataType {
	return s.X.DataType().(*arrow.StructType).Field(s.Index).Type
}

func (s *StructField) Eval(ec *EvalContext, batch arrow.RecordBatch) (arrow.Array, error) {
	in, err := s.X.Eval(ec, batch)
	if err != nil {
		return nil, err
	}
	defer in.Release()
	st, ok := in.(*array.Struct)
	if !ok {
		return nil, fmt.Errorf("exec: %s: the value is %s, not a struct (planner bug)", s, in.DataType())
	}
	child := st.Field(s.Index)
	if st.NullN() == 0 {
		child.Retain()
		return child, nil
	}
	// NULL where the struct is NULL: take the child's rows, NULL indices
	// for the NULL structs
	n := st.Len()
	ib := array.NewInt32Builder(ec.Mem)
	defer ib.Release()
	ib.Reserve(n)
	for i := range n {
		if st.IsNull(i) {
			ib.UnsafeAppendBoolToBitmap(false)
		} else {
			ib.UnsafeAppend(int32(i))
		}
	}
	idx := ib.NewArray()
	defer idx.Release()
	return compute.TakeArray(compute.WithAllocator(ec.Ctx, ec.Mem), child, idx)
}

func (s *StructField) String() string {
	return "(" + s.X.String() + ")." + s.X.DataType().(*arrow.StructType).Field(s.Index).Name
}

// structFieldMap says which field of from each field of to takes: by
// name when both have the same field names (in any order and case),
// otherwise by position; nil when they have different numbers of fields.
func structFieldMap(from, to *arrow.StructType) []int {
	if from.NumFields() != to.NumFields() {
		return nil
	}
	src := make([]int, to.NumFields())
	for i, f := range to.Fields() {
		j := -1
		for k, g := range from.Fields() {
			if strings.EqualFold(f.Name, g.Name) {
				j = k
			}
		}
		if j < 0 {
			for i := range src {
				src[i] = i
			}
			return src
		}
		src[i] = j
	}
	return src
}

// commonStruct is the common type of two structs: a's field names, each
// field of the common type of the fields structFieldMap pairs.
func commonStruct(a, b *arrow.StructType) (arrow.DataType, bool) {
	src := structFieldMap(b, a)
	if src == nil {
		return nil, false
	}
	fs := make([]arrow.Field, a.NumFields())
	for i, f := range a.Fields() {
		t, ok := f.Type, true
		switch g := b.Field(src[i]).Type; {
		case isNull(t):
			t = g
		case !isNull(g):
			t, ok = commonPair(t, g)
		}
		if !ok {
			return nil, false
		}
		fs[i] = arrow.Field{Name: f.Name, Type: t, Nullable: true}
	}
	return arrow.StructOf(fs...), true
}

// canImplicitStruct: a struct converts implicitly to another whose fields
// its own convert to implicitly (matched as structFieldMap matches them).
func canImplicitStruct(from, to *arrow.StructType) bool {
	src := structFieldMap(from, to)
	if src == nil {
		return false
	}
	for i, j := range src {
		if !canImplicit(from.Field(j).Type, to.Field(i).Type) {
			return false
		}
	}
	return true
}

// structCompareKernel compares two structs of type st for equality (= <>
// IS [NOT] DISTINCT FROM) field by field, two NULL fields equal, as
// PostgreSQL compares composite values. Structs have no order here.
func structCompareKernel(op string, st *arrow.StructType) kernel {
	switch op {
	case "=", "<>", "is_distinct_from", "is_not_distinct_from":
	default:
		return nil
	}
	same := make([]kernel, st.NumFields())
	for i, f := range st.Fields() {
		if same[i] = compareKernel("is_not_distinct_from", f.Type); same[i] == nil {
			return nil
		}
	}
	return func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		l, r := a[0].(*array.Struct), a[1].(*array.Struct)
		eq := make([]bool, n)
		for i := range eq {
			eq[i] = true
		}
		for k, cmp := range same {
			res, err := cmp(ec, []arrow.Array{l.Field(k), r.Field(k)}, n)
			if err != nil {
				return nil, err
			}
			b := res.(*array.Boolean)
			for i := range n {
				if !b.Value(i) {
					eq[i] = false
				}
			}
			res.Release()
		}
		return equalityResult(ec, op, l, r, eq, n), nil
	}
}

// structCast converts a struct field by field: by name when both have the
// same field names (in any order and case), otherwise by position when
// they have as many fields (a ROW(…) has no names of its own).
func structCast(from, to *arrow.StructType) castFn {
	src := structFieldMap(from, to)
	if src == nil {
		return nil
	}
	fns := make([]castFn, len(src))
	for i, j := range src {
		ft, tt := from.Field(j).Type, to.Field(i).Type
		if arrow.TypeEqual(ft, tt) {
			fns[i] = func(_ memory.Allocator, in arrow.Array, _ bool) (arrow.Array, error) {
				in.Retain()
				return in, nil
			}
			continue
		}
		if fns[i] = castFunc(ft, tt); fns[i] == nil {
			return nil
		}
	}
	return func(mem memory.Allocator, in arrow.Array, try bool) (arrow.Array, error) {
		st := in.(*array.Struct)
		cols := make([]arrow.Array, len(fns))
		defer func() {
			for _, c := range cols {
				if c != nil {
					c.Release()
				}
			}
		}()
		for i, fn := range fns {
			c, err := fn(mem, st.Field(src[i]), try)
			if err != nil {
				return nil, err
			}
			cols[i] = c
		}
		return newStruct(to, st.Len(), validityCopy(mem, st), cols), nil
	}
}

// nestedOrderKernel compares arrays or structs of type t with < <= > >=
// in the order ORDER BY gives them (htCmpArray: element or field by
// element, NULLs after every value, as PostgreSQL compares arrays and
// composite values); NULL when either side is. nil for another operator
// or a type without that order.
func nestedOrderKernel(op string, t arrow.DataType) kernel {
	var holds func(c int) bool
	switch op {
	case "<":
		holds = func(c int) bool { return c < 0 }
	case "<=":
		holds = func(c int) bool { return c <= 0 }
	case ">":
		holds = func(c int) bool { return c > 0 }
	case ">=":
		holds = func(c int) bool { return c >= 0 }
	default:
		return nil
	}
	if htOrderable(t) != nil {
		return nil
	}
	return func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		// both sides in one array, so that one comparator reads them
		both, err := array.Concatenate([]arrow.Array{a[0], a[1]}, ec.Mem)
		if err != nil {
			return nil, err
		}
		defer both.Release()
		cmpRows := htCmpArray(both)
		out := newBoolOut(ec.Mem, n, true)
		for i := range n {
			if a[0].IsNull(i) || a[1].IsNull(i) {
				continue
			}
			out.set(i, holds(cmpRows(i, n+i)))
		}
		return out.finish(n), nil
	}
}
