package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Lists: SQL arrays. An array is an Arrow list of one element type, which
// may itself be a list (INTEGER[][] is a list of lists, as in DuckDB and
// Iceberg; PostgreSQL's rectangular multi-dimensional arrays are not
// modelled). Subscripts are 1-based and an index out of range gives
// NULL, as in PostgreSQL. Two arrays are equal when they have the same
// length and their elements are pairwise not distinct: NULL elements
// equal each other, as PostgreSQL's array_eq has it.

func init() {
	register("list_value", resolveListValue)
	for _, name := range []string{"list_extract", "array_extract", "list_element"} {
		register(name, resolveListExtract)
	}
	register("cardinality", listIntFunc(1, func(n, _ int, _ *array.List, _ int) (int32, bool) { return int32(n), true }))
	for _, name := range []string{"len", "length", "array_length"} {
		// DuckDB's one-argument form
		register(name, listIntFunc(1, func(n, _ int, _ *array.List, _ int) (int32, bool) { return int32(n), true }))
	}
	// PostgreSQL's forms with a dimension: NULL for an empty array or a
	// dimension it does not have
	register("array_length", listIntFunc(2, func(n, dim int, l *array.List, i int) (int32, bool) { return dimLength(n, dim, l, i) }))
	register("array_upper", listIntFunc(2, func(n, dim int, l *array.List, i int) (int32, bool) { return dimLength(n, dim, l, i) }))
	register("array_lower", listIntFunc(2, func(n, dim int, l *array.List, i int) (int32, bool) {
		_, ok := dimLength(n, dim, l, i)
		return 1, ok
	}))
	for _, name := range []string{"list_contains", "array_contains", "array_has", "list_has"} {
		register(name, resolveListContains)
	}
	// before the string ||, which would render an array as text
	registerOp("||", resolveListConcat)
	for _, name := range []string{"array_cat", "list_concat", "list_cat", "array_concat"} {
		register(name, func(name string, args []Expr) (Expr, error) {
			if len(args) != 2 || listOf(args[0].DataType()) == nil && listOf(args[1].DataType()) == nil {
				return nil, errNoMatch
			}
			return resolveListConcat(name, args)
		})
	}
	for _, name := range []string{"array_append", "list_append"} {
		register(name, func(name string, args []Expr) (Expr, error) {
			if len(args) != 2 || listOf(args[0].DataType()) == nil || listOf(args[1].DataType()) != nil {
				return nil, errNoMatch
			}
			return listConcat(name, args, false, true)
		})
	}
	for _, name := range []string{"array_prepend", "list_prepend"} {
		register(name, func(name string, args []Expr) (Expr, error) {
			if len(args) != 2 || listOf(args[1].DataType()) == nil || listOf(args[0].DataType()) != nil {
				return nil, errNoMatch
			}
			return listConcat(name, args, true, false)
		})
	}
}

// resolveListConcat is a || b where a or b is an array: array_cat of two
// arrays, array_append of an array and an element, array_prepend of an
// element and an array. As in PostgreSQL a NULL array is the empty one
// here, while a NULL element is appended; an untyped NULL is an array.
func resolveListConcat(name string, args []Expr) (Expr, error) {
	return listConcat(name, args, false, false)
}

// listConcat is resolveListConcat where elemL or elemR says that side is
// an element even when it is an untyped NULL (array_prepend,
// array_append).
func listConcat(name string, args []Expr, elemL, elemR bool) (Expr, error) {
	if len(args) != 2 {
		return nil, errNoMatch
	}
	lt, rt := listOf(args[0].DataType()), listOf(args[1].DataType())
	if lt == nil && rt == nil {
		return nil, errNoMatch
	}
	l, r := args[0], args[1]
	lElem, rElem := lt == nil, rt == nil
	// an untyped NULL beside an array is a NULL array
	if lElem && !elemL && isNull(l.DataType()) && !isUnknownLiteral(l) {
		lElem = false
	}
	if rElem && !elemR && isNull(r.DataType()) && !isUnknownLiteral(r) {
		rElem = false
	}
	var elem arrow.DataType
	switch {
	case !lElem && !rElem:
		var err error
		if elem, err = CommonTypeFor("array concatenation", l.DataType(), r.DataType()); err != nil {
			return nil, err
		}
		if listOf(elem) == nil { // a NULL and an array
			return nil, errNoMatch
		}
		elem = listOf(elem).Elem()
	case lElem:
		elem = rt.Elem()
		if !isUnknownLiteral(l) && !isNull(l.DataType()) {
			e, err := CommonTypeFor("array concatenation", l.DataType(), rt.Elem())
			if err != nil {
				return nil, fmt.Errorf("operator does not exist: %s || %s", TypeName(l.DataType()), TypeName(r.DataType()))
			}
			elem = e
		}
	default:
		elem = lt.Elem()
		if !isUnknownLiteral(r) && !isNull(r.DataType()) {
			e, err := CommonTypeFor("array concatenation", lt.Elem(), r.DataType())
			if err != nil {
				return nil, fmt.Errorf("operator does not exist: %s || %s", TypeName(l.DataType()), TypeName(r.DataType()))
			}
			elem = e
		}
	}
	dt := arrow.ListOf(elem)
	side := func(e Expr, isElem bool) (Expr, error) {
		if isElem {
			return Coerce(e, elem)
		}
		return Coerce(e, dt)
	}
	var err error
	if l, err = side(l, lElem); err != nil {
		return nil, err
	}
	if r, err = side(r, rElem); err != nil {
		return nil, err
	}
	form := formFunc
	if name == "||" {
		form = formInfix
	}
	return newCall(name, dt, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		// rows: the left part then the right part, gathered from the two
		// value arrays concatenated
		lv, lr := concatPart(a[0], lElem)
		rv, rr := concatPart(a[1], rElem)
		both, err := array.Concatenate([]arrow.Array{lv, rv}, ec.Mem)
		if err != nil {
			return nil, err
		}
		defer both.Release()
		shift := int32(lv.Len())
		offBuf, offs := newFixed[int32](ec.Mem, n+1)
		valid := newBitmap(ec.Mem, n)
		var idx []int32
		for i := 0; i < n; i++ {
			offs[i] = int32(len(idx))
			ls, le, lok := lr(i)
			rs, re, rok := rr(i)
			if !lok && !rok {
				continue
			}
			bitutil.SetBit(valid.Bytes(), i)
			for k := ls; k < le; k++ {
				idx = append(idx, k)
			}
			for k := rs; k < re; k++ {
				idx = append(idx, shift+k)
			}
		}
		offs[n] = int32(len(idx))
		vals, err := takeArray(ec.Mem, both, idx)
		if err != nil {
			offBuf.Release()
			valid.Release()
			return nil, err
		}
		defer vals.Release()
		return newList(dt, n, valid, offBuf, vals), nil
	}, form, l, r), nil
}

// concatPart views one side of an array concatenation: its values and,
// per row, the range of them it contributes and whether it is non-NULL
// (a NULL array contributes nothing; a NULL element is one value).
func concatPart(a arrow.Array, isElem bool) (arrow.Array, func(i int) (int32, int32, bool)) {
	if isElem {
		return a, func(i int) (int32, int32, bool) { return int32(i), int32(i) + 1, true }
	}
	l := a.(*array.List)
	return l.ListValues(), func(i int) (int32, int32, bool) {
		if l.IsNull(i) {
			return 0, 0, false
		}
		s, e := l.ValueOffsets(i)
		return int32(s), int32(e), true
	}
}

// listOf returns dt's list type, or nil.
func listOf(dt arrow.DataType) *arrow.ListType {
	lt, _ := dt.(*arrow.ListType)
	return lt
}

// listArray is a list array, or a map array as the list of its entries
// (which is how it is laid out).
func listArray(a arrow.Array) *array.List {
	if m, ok := a.(*array.Map); ok {
		return m.List
	}
	return a.(*array.List)
}

// newList wraps offsets (n+1 values), a validity bitmap (nil: no NULLs)
// and the element values into a list array, taking over the buffers.
func newList(dt *arrow.ListType, n int, valid *memory.Buffer, offsets *memory.Buffer, values arrow.Array) arrow.Array {
	nulls := array.UnknownNullCount
	if valid == nil {
		nulls = 0
	}
	data := array.NewData(dt, n, []*memory.Buffer{valid, offsets}, []arrow.ArrayData{values.Data()}, nulls, 0)
	out := array.NewListData(data)
	data.Release()
	offsets.Release()
	if valid != nil {
		valid.Release()
	}
	return out
}

// resolveListValue is list_value(a, b, …), which ARRAY[a, b, …] and
// DuckDB's [a, b, …] bind to: the elements take their common type.
func resolveListValue(name string, args []Expr) (Expr, error) {
	elem, err := commonTypeOf("ARRAY", args)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		elem = tNull // an empty array takes its type from where it goes
	}
	cargs, err := coerceAll(args, elem)
	if err != nil {
		return nil, err
	}
	dt := arrow.ListOf(elem)
	k := len(args)
	return newCall(name, dt, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		offBuf, offs := newFixed[int32](ec.Mem, n+1)
		for i := range offs {
			offs[i] = int32(i * k)
		}
		if k == 0 {
			vals := array.MakeArrayOfNull(ec.Mem, elem, 0)
			defer vals.Release()
			return newList(dt, n, nil, offBuf, vals), nil
		}
		all, err := array.Concatenate(a, ec.Mem)
		if err != nil {
			offBuf.Release()
			return nil, err
		}
		defer all.Release()
		// row i's element j sits at j*n+i of the concatenation
		idx := make([]int32, n*k)
		for i := 0; i < n; i++ {
			for j := 0; j < k; j++ {
				idx[i*k+j] = int32(j*n + i)
			}
		}
		vals, err := takeArray(ec.Mem, all, idx)
		if err != nil {
			offBuf.Release()
			return nil, err
		}
		defer vals.Release()
		return newList(dt, n, nil, offBuf, vals), nil
	}, formFunc, cargs...), nil
}

// resolveListExtract is list[i]: the i-th element (1-based), NULL when i
// is out of range.
func resolveListExtract(name string, args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, errNoMatch
	}
	lt := listOf(args[0].DataType())
	if lt == nil {
		return nil, errNoMatch
	}
	idx, err := Coerce(args[1], tInt64)
	if err != nil || !isInteger(args[1].DataType()) && !isUnknownLiteral(args[1]) && !isNull(args[1].DataType()) {
		return nil, errNoMatch
	}
	return newCall(name, lt.Elem(), func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		l := a[0].(*array.List)
		ix := a[1].(*array.Int64)
		take := make([]int32, n)
		for i := 0; i < n; i++ {
			take[i] = -1
			if l.IsNull(i) || ix.IsNull(i) {
				continue
			}
			start, end := l.ValueOffsets(i)
			if k := ix.Value(i); k >= 1 && k <= end-start {
				take[i] = int32(start + k - 1)
			}
		}
		return takeArray(ec.Mem, l.ListValues(), take)
	}, formFunc, args[0], idx), nil
}

// listIntFunc builds an integer function of a list and, with arity 2, a
// dimension; f gets the row's length, the dimension (1 without one), the
// list and the row.
func listIntFunc(arity int, f func(n, dim int, l *array.List, i int) (int32, bool)) overload {
	return func(name string, args []Expr) (Expr, error) {
		if len(args) != arity || listOf(args[0].DataType()) == nil {
			return nil, errNoMatch
		}
		cargs := []Expr{args[0]}
		if arity == 2 {
			d, err := Coerce(args[1], tInt64)
			if err != nil || !isInteger(args[1].DataType()) && !isUnknownLiteral(args[1]) && !isNull(args[1].DataType()) {
				return nil, errNoMatch
			}
			cargs = append(cargs, d)
		}
		return newCall(name, tInt32, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
			l := a[0].(*array.List)
			b := array.NewInt32Builder(ec.Mem)
			defer b.Release()
			b.Reserve(n)
			for i := 0; i < n; i++ {
				dim := 1
				if arity == 2 {
					if a[1].IsNull(i) {
						b.AppendNull()
						continue
					}
					dim = int(a[1].(*array.Int64).Value(i))
				}
				if l.IsNull(i) {
					b.AppendNull()
					continue
				}
				start, end := l.ValueOffsets(i)
				if v, ok := f(int(end-start), dim, l, i); ok {
					b.Append(v)
				} else {
					b.AppendNull()
				}
			}
			return b.NewArray(), nil
		}, formFunc, cargs...), nil
	}
}

// dimLength is PostgreSQL's array_length(a, dim) for a list of lists: the
// length along dimension dim, read from the first element of each level;
// NULL for an empty array or a dimension the array lacks.
func dimLength(n, dim int, l *array.List, i int) (int32, bool) {
	if n == 0 || dim < 1 {
		return 0, false
	}
	for ; dim > 1; dim-- {
		inner, ok := l.ListValues().(*array.List)
		if !ok {
			return 0, false
		}
		start, _ := l.ValueOffsets(i)
		l, i = inner, int(start)
		if l.IsNull(i) {
			return 0, false
		}
		s, e := l.ValueOffsets(i)
		if n = int(e - s); n == 0 {
			return 0, false
		}
	}
	return int32(n), true
}

// resolveListContains is list_contains(list, x): whether an element
// equals x; NULL when the list or x is NULL.
func resolveListContains(name string, args []Expr) (Expr, error) {
	if len(args) != 2 || listOf(args[0].DataType()) == nil {
		return nil, errNoMatch
	}
	q, err := quantifiedCall("=", false, args[1], args[0])
	if err != nil {
		return nil, errNoMatch
	}
	inner := q.fn
	// ANY yields NULL when only NULL elements fail to match; contains
	// answers false then, as DuckDB does
	return newCall(name, tBool, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		r, err := inner(ec, []arrow.Array{a[1], a[0]}, n)
		if err != nil {
			return nil, err
		}
		defer r.Release()
		out := newBoolOut(ec.Mem, n, true)
		rb := r.(*array.Boolean)
		for i := 0; i < n; i++ {
			switch {
			case a[0].IsNull(i) || a[1].IsNull(i):
			case rb.IsValid(i):
				out.set(i, rb.Value(i))
			default:
				out.set(i, false)
			}
		}
		return out.finish(n), nil
	}, formFunc, q.Args[1], q.Args[0]), nil
}

// NewQuantified is x op ANY (list) or, with all, x op ALL (list), where op
// is a comparison operator (= <> < <= > >=). x and the elements compare in
// their common type. ANY is true when some element compares true, NULL
// when none does but some comparison is NULL, false otherwise (so false
// for an empty list); ALL is its dual. A NULL list gives NULL.
func NewQuantified(op string, all bool, x, list Expr) (Expr, error) {
	c, err := quantifiedCall(op, all, x, list)
	if err != nil {
		return nil, err
	}
	return &quantified{Call: c, op: op}, nil
}

func quantifiedCall(op string, all bool, x, list Expr) (*Call, error) {
	lt := listOf(list.DataType())
	if lt == nil {
		if !isUnknownLiteral(list) && !isNull(list.DataType()) {
			return nil, fmt.Errorf("op ANY/ALL (array) requires an array on the right, not %s", TypeName(list.DataType()))
		}
		// '{1,2}' takes x's type
		t := x.DataType()
		if isUnknownLiteral(x) || isNull(t) {
			t = tString
		}
		c, err := Coerce(list, arrow.ListOf(t))
		if err != nil {
			return nil, err
		}
		list, lt = c, arrow.ListOf(t)
	}
	var t arrow.DataType
	if isUnknownLiteral(x) {
		t = lt.Elem()
	} else {
		var err error
		if t, err = CommonTypeFor("ANY/ALL", x.DataType(), lt.Elem()); err != nil {
			return nil, fmt.Errorf("operator does not exist: %s %s %s", TypeName(x.DataType()), op, TypeName(list.DataType()))
		}
	}
	cx, err := Coerce(x, t)
	if err != nil {
		return nil, err
	}
	clist, err := Coerce(list, arrow.ListOf(t))
	if err != nil {
		return nil, err
	}
	cmp := compareKernel(op, t)
	if cmp == nil {
		return nil, fmt.Errorf("operator does not exist: %s %s %s", TypeName(t), op, TypeName(t))
	}
	name := "any"
	if all {
		name = "all"
	}
	c := newCall(name, tBool, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		xs, l := a[0], a[1].(*array.List)
		var rows, elems []int32
		for i := 0; i < n; i++ {
			if l.IsNull(i) {
				continue
			}
			start, end := l.ValueOffsets(i)
			for k := start; k < end; k++ {
				rows = append(rows, int32(i))
				elems = append(elems, int32(k))
			}
		}
		out := newBoolOut(ec.Mem, n, true)
		var res *array.Boolean
		if len(rows) > 0 {
			r, err := comparePairs(ec, cmp, xs, rows, l.ListValues(), elems)
			if err != nil {
				return nil, err
			}
			defer r.Release()
			res = r
		}
		k := 0
		for i := 0; i < n; i++ {
			if l.IsNull(i) {
				continue
			}
			start, end := l.ValueOffsets(i)
			decided, sawNull := false, false
			for j := start; j < end; j, k = j+1, k+1 {
				if decided {
					continue
				}
				switch {
				case res.IsNull(k):
					sawNull = true
				case res.Value(k) != all: // true under ANY, false under ALL decides
					decided = true
				}
			}
			switch {
			case decided:
				out.set(i, !all)
			case !sawNull:
				out.set(i, all)
			}
		}
		return out.finish(n), nil
	}, formFunc, cx, clist)
	c.Name = op + " " + strings.ToUpper(name)
	return c, nil
}

// quantified renders as x op ANY (list).
type quantified struct {
	*Call
	op string
}

func (q *quantified) String() string {
	word := "ANY"
	if strings.HasSuffix(q.Name, "ALL") {
		word = "ALL"
	}
	return "(" + q.Args[0].String() + " " + q.op + " " + word + " (" + q.Args[1].String() + "))"
}

// listCast converts a list's elements, keeping its shape.
func listCast(from, to *arrow.ListType) castFn {
	elem := castFunc(from.Elem(), to.Elem())
	if arrow.TypeEqual(from.Elem(), to.Elem()) {
		elem = func(mem memory.Allocator, in arrow.Array, _ bool) (arrow.Array, error) {
			in.Retain()
			return in, nil
		}
	}
	if elem == nil {
		return nil
	}
	return func(mem memory.Allocator, in arrow.Array, try bool) (arrow.Array, error) {
		l := in.(*array.List)
		n := l.Len()
		// only the elements the rows reach, rebased to 0
		first, last := spanOf(l.Offsets(), n)
		vals := array.NewSlice(l.ListValues(), first, last)
		defer vals.Release()
		cv, err := elem(mem, vals, try)
		if err != nil {
			return nil, err
		}
		defer cv.Release()
		return newList(to, n, validityCopy(mem, l), rebasedOffsets(mem, l.Offsets(), n), cv), nil
	}
}

// spanOf is the range of child values the n rows of list offsets offs
// reach.
func spanOf(offs []int32, n int) (first, last int64) {
	if n == 0 {
		return 0, 0
	}
	return int64(offs[0]), int64(offs[n])
}

// rebasedOffsets are n rows' list offsets made to start at 0, for their
// values sliced to spanOf.
func rebasedOffsets(mem memory.Allocator, offs []int32, n int) *memory.Buffer {
	buf, out := newFixed[int32](mem, n+1)
	for i := range out {
		out[i] = offs[i] - offs[0]
	}
	return buf
}

// validityCopy is a's validity as a bitmap from offset 0, nil when no row
// is NULL.
func validityCopy(mem memory.Allocator, a arrow.Array) *memory.Buffer {
	bits, off := validBits(a)
	if bits == nil {
		return nil
	}
	valid := newBitmap(mem, a.Len())
	bitutil.CopyBitmap(bits, off, a.Len(), valid.Bytes(), 0)
	return valid
}

// parseArrayCast reads PostgreSQL's array text ({1,2,NULL}, {"a b",c},
// {{1,2},{3}}) and DuckDB's ([1, 2]) into a list of type to.
func parseArrayCast(to *arrow.ListType) castFn {
	elem := castFunc(tString, to.Elem())
	if isString(to.Elem()) {
		elem = func(mem memory.Allocator, in arrow.Array, _ bool) (arrow.Array, error) {
			in.Retain()
			return in, nil
		}
	}
	if elem == nil {
		return nil
	}
	return func(mem memory.Allocator, in arrow.Array, try bool) (arrow.Array, error) {
		n := in.Len()
		v := newStrView(in)
		sb := array.NewStringBuilder(mem)
		defer sb.Release()
		offBuf, offs := newFixed[int32](mem, n+1)
		valid := newBitmap(mem, n)
		count := int32(0)
		for i := 0; i < n; i++ {
			offs[i] = count
			if in.IsNull(i) {
				continue
			}
			s := v.str(i)
			elems, nulls, ok := parseArrayText(s)
			if !ok {
				if try {
					continue
				}
				offBuf.Release()
				valid.Release()
				return nil, fmt.Errorf("malformed array literal: %q", s)
			}
			for k, e := range elems {
				if nulls[k] {
					sb.AppendNull()
				} else {
					sb.Append(e)
				}
			}
			count += int32(len(elems))
			bitutil.SetBit(valid.Bytes(), i)
		}
		offs[n] = count
		strs := sb.NewArray()
		defer strs.Release()
		cv, err := elem(mem, strs, try)
		if err != nil {
			offBuf.Release()
			valid.Release()
			return nil, err
		}
		defer cv.Release()
		return newList(to, n, valid, offBuf, cv), nil
	}
}

// parseArrayText splits the top level of an array literal into its
// elements' texts: quotes and backslash escapes removed, nested arrays
// kept whole, NULL (unquoted, any case) reported in nulls.
func parseArrayText(s string) (elems []string, nulls []bool, ok bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 {
		return nil, nil, false
	}
	open := s[0]
	var closeCh byte
	switch open {
	case '{':
		closeCh = '}'
	case '[':
		closeCh = ']'
	default:
		return nil, nil, false
	}
	i := 1
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
	}
	skip()
	if i < len(s) && s[i] == closeCh {
		return nil, nil, i == len(s)-1
	}
	for {
		skip()
		if i >= len(s) {
			return nil, nil, false
		}
		var b strings.Builder
		isNull := false
		switch c := s[i]; {
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, nil, false
			}
			i++ // closing quote
		case c == '{' || c == '[':
			start, depth, quoted := i, 0, false
		nested:
			for ; i < len(s); i++ {
				switch ch := s[i]; {
				case ch == '\\' && quoted:
					i++
				case ch == '"':
					quoted = !quoted
				case quoted:
				case ch == '{' || ch == '[':
					depth++
				case ch == '}' || ch == ']':
					depth--
				}
				if depth == 0 {
					break nested
				}
			}
			if i >= len(s) {
				return nil, nil, false
			}
			i++
			b.WriteString(s[start:i])
		default:
			for ; i < len(s) && s[i] != ',' && s[i] != closeCh; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				if s[i] == '"' || s[i] == '{' || s[i] == '}' && open == '{' {
					return nil, nil, false
				}
				b.WriteByte(s[i])
			}
			t := strings.TrimRight(b.String(), " \t\r\n")
			if t == "" {
				return nil, nil, false
			}
			b.Reset()
			b.WriteString(t)
			isNull = strings.EqualFold(t, "NULL")
		}
		elems = append(elems, b.String())
		nulls = append(nulls, isNull)
		skip()
		if i >= len(s) {
			return nil, nil, false
		}
		if s[i] == closeCh {
			return elems, nulls, i == len(s)-1
		}
		if s[i] != ',' {
			return nil, nil, false
		}
		i++
	}
}

// listCompareKernel compares two lists of type lt for equality: = <>
// IS [NOT] DISTINCT FROM. Lists have no order here.
func listCompareKernel(op string, lt *arrow.ListType) kernel {
	switch op {
	case "=", "<>", "is_distinct_from", "is_not_distinct_from":
	default:
		return nil
	}
	same := compareKernel("is_not_distinct_from", lt.Elem())
	if same == nil {
		return nil
	}
	return func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		l, r := a[0].(*array.List), a[1].(*array.List)
		eq := make([]bool, n)
		var rows, li, ri []int32
		for i := 0; i < n; i++ {
			if l.IsNull(i) || r.IsNull(i) {
				continue
			}
			ls, le := l.ValueOffsets(i)
			rs, re := r.ValueOffsets(i)
			if le-ls != re-rs {
				continue
			}
			eq[i] = true
			for k := int64(0); k < le-ls; k++ {
				rows = append(rows, int32(i))
				li = append(li, int32(ls+k))
				ri = append(ri, int32(rs+k))
			}
		}
		if len(rows) > 0 {
			rb, err := comparePairs(ec, same, l.ListValues(), li, r.ListValues(), ri)
			if err != nil {
				return nil, err
			}
			defer rb.Release()
			for k, row := range rows {
				if !rb.Value(k) {
					eq[row] = false
				}
			}
		}
		return equalityResult(ec, op, l, r, eq, n), nil
	}
}

// equalityResult is the answer of op (= <> IS [NOT] DISTINCT FROM) on
// rows of l and r whose values are equal where eq says (non-NULL rows):
// a NULL side makes = and <> NULL, and IS DISTINCT FROM compares the
// NULLs.
func equalityResult(ec *EvalContext, op string, l, r arrow.Array, eq []bool, n int) arrow.Array {
	distinct := op == "is_distinct_from" || op == "is_not_distinct_from"
	out := newBoolOut(ec.Mem, n, true)
	for i := 0; i < n; i++ {
		ln, rn := l.IsNull(i), r.IsNull(i)
		switch {
		case ln || rn:
			if distinct {
				out.set(i, (ln && rn) == (op == "is_not_distinct_from"))
			}
		case op == "=" || op == "is_not_distinct_from":
			out.set(i, eq[i])
		default:
			out.set(i, !eq[i])
		}
	}
	return out.finish(n)
}

// comparePairs applies the comparison kernel cmp to a[ai[k]] and b[bi[k]]
// for every k: the element pairs of a list operation, gathered and
// compared in one vectorized call. The caller releases the result.
func comparePairs(ec *EvalContext, cmp kernel, a arrow.Array, ai []int32, b arrow.Array, bi []int32) (*array.Boolean, error) {
	at, err := takeArray(ec.Mem, a, ai)
	if err != nil {
		return nil, err
	}
	defer at.Release()
	bt, err := takeArray(ec.Mem, b, bi)
	if err != nil {
		return nil, err
	}
	defer bt.Release()
	r, err := cmp(ec, []arrow.Array{at, bt}, len(ai))
	if err != nil {
		return nil, err
	}
	return r.(*array.Boolean), nil
}
