package exec

import (
	"bytes"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// string_to_array(s, delimiter [, null_string]) (DuckDB: string_split,
// str_split) and array_position(array, x) (DuckDB: list_position,
// list_indexof), as PostgreSQL has them:
//
//   - string_to_array splits s at each delimiter; a NULL delimiter splits
//     it into characters, an empty one gives s whole, an empty s gives an
//     empty array, and elements equal to null_string are NULL;
//   - array_position is the 1-based place of the first element not
//     distinct from x (so it finds NULL), or NULL.

func init() {
	split := func(name string, args []Expr) (Expr, error) {
		if len(args) < 2 || len(args) > 3 {
			return nil, errNoMatch
		}
		cargs := make([]Expr, len(args))
		for i, a := range args {
			c, err := Coerce(a, tString)
			if err != nil {
				return nil, errNoMatch
			}
			cargs[i] = c
		}
		return newCall(name, arrow.ListOf(tString), stringToArray, formFunc, cargs...), nil
	}
	for _, name := range []string{"string_to_array", "string_split", "str_split"} {
		register(name, split)
	}
	for _, name := range []string{"array_position", "list_position", "list_indexof"} {
		register(name, resolveArrayPosition)
	}
}

func stringToArray(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
	s, d := newStrView(a[0]), newStrView(a[1])
	var nullStr strView
	if len(a) == 3 {
		nullStr = newStrView(a[2])
	}
	b := array.NewListBuilder(ec.Mem, tString)
	defer b.Release()
	vb := b.ValueBuilder().(*array.StringBuilder)
	b.Reserve(n)
	for i := 0; i < n; i++ {
		if a[0].IsNull(i) {
			b.AppendNull()
			continue
		}
		b.Append(true)
		str := s.at(i)
		if len(str) == 0 {
			continue
		}
		elem := func(e []byte) {
			if len(a) == 3 && a[2].IsValid(i) && bytes.Equal(e, nullStr.at(i)) {
				vb.AppendNull()
				return
			}
			vb.BinaryBuilder.Append(e)
		}
		switch {
		case a[1].IsNull(i):
			for len(str) > 0 {
				_, size := utf8.DecodeRune(str)
				elem(str[:size])
				str = str[size:]
			}
		case len(d.at(i)) == 0:
			elem(str)
		default:
			sep := d.at(i)
			for {
				k := bytes.Index(str, sep)
				if k < 0 {
					elem(str)
					break
				}
				elem(str[:k])
				str = str[k+len(sep):]
			}
		}
	}
	return b.NewArray(), nil
}

func resolveArrayPosition(name string, args []Expr) (Expr, error) {
	if len(args) != 2 || listOf(args[0].DataType()) == nil {
		return nil, errNoMatch
	}
	q, err := quantifiedCall("=", false, args[1], args[0])
	if err != nil {
		return nil, errNoMatch
	}
	x, list := q.Args[0], q.Args[1]
	elem := listOf(list.DataType()).Elem()
	if err := skKeyTypeSupported(elem); err != nil {
		return nil, err
	}
	return newCall(name, tInt32, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		l := a[0].(*array.List)
		keys, err := newSkRowKeys([]arrow.DataType{elem}, []skOrder{{}})
		if err != nil {
			return nil, err
		}
		keys.add([]arrow.Array{l.ListValues()})
		keys.add([]arrow.Array{a[1]})
		b := array.NewInt32Builder(ec.Mem)
		defer b.Release()
		b.Reserve(n)
		for i := 0; i < n; i++ {
			if l.IsNull(i) {
				b.AppendNull()
				continue
			}
			start, end := l.ValueOffsets(i)
			found := int32(-1)
			for j := start; j < end; j++ {
				if keys.compare(skRef{0, int32(j)}, skRef{1, int32(i)}) == 0 {
					found = int32(j-start) + 1
					break
				}
			}
			if found < 0 {
				b.AppendNull()
			} else {
				b.Append(found)
			}
		}
		return b.NewArray(), nil
	}, formFunc, list, x), nil
}
