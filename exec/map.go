package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Maps (Iceberg's map, SQL's MAP(K, V)) are Arrow map arrays: a list of
// key/value entries per row, keys unique and never NULL, in the order they
// were given (DuckDB's maps keep it too).

func init() {
	register("map", resolveMap)
	register("map_keys", mapPart(true))
	register("map_values", mapPart(false))
	for _, name := range []string{"cardinality", "len", "length"} {
		register(name, resolveMapCardinality)
	}
	for _, name := range []string{"element_at", "map_extract_value"} {
		register(name, resolveMapElement)
	}
}

func mapOf(dt arrow.DataType) *arrow.MapType {
	mt, _ := dt.(*arrow.MapType)
	return mt
}

// resolveMap is map(keys, values): the map of two arrays, entry by entry.
func resolveMap(name string, args []Expr) (Expr, error) {
	if len(args) != 2 || listOf(args[0].DataType()) == nil || listOf(args[1].DataType()) == nil {
		return nil, errNoMatch
	}
	// an empty map, or NULL values only, has keys or values of the Null
	// type until a cast or an assignment gives them one
	kt, vt := listOf(args[0].DataType()).Elem(), listOf(args[1].DataType()).Elem()
	mt := arrow.MapOf(kt, vt)
	enc, err := NewKeyEncoder([]arrow.DataType{kt})
	if err != nil {
		return nil, fmt.Errorf("map: keys of type %s: %w", TypeName(kt), err)
	}
	return newCall(name, mt, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		kl, vl := a[0].(*array.List), a[1].(*array.List)
		var kIdx, vIdx []int32
		offBuf, offs := newFixed[int32](ec.Mem, n+1)
		valid := newBitmap(ec.Mem, n)
		release := func() {
			offBuf.Release()
			valid.Release()
		}
		for i := range n {
			offs[i] = int32(len(kIdx))
			if kl.IsNull(i) || vl.IsNull(i) {
				continue
			}
			bitutil.SetBit(valid.Bytes(), i)
			ks, ke := kl.ValueOffsets(i)
			vs, ve := vl.ValueOffsets(i)
			if ke-ks != ve-vs {
				release()
				return nil, fmt.Errorf("map: %d keys but %d values", ke-ks, ve-vs)
			}
			for j := ks; j < ke; j++ {
				if kl.ListValues().IsNull(int(j)) {
					release()
					return nil, fmt.Errorf("map keys must not be NULL")
				}
				kIdx = append(kIdx, int32(j))
				vIdx = append(vIdx, int32(vs+(j-ks)))
			}
		}
		offs[n] = int32(len(kIdx))
		keys, err := takeArray(ec.Mem, kl.ListValues(), kIdx)
		if err != nil {
			release()
			return nil, err
		}
		defer keys.Release()
		vals, err := takeArray(ec.Mem, vl.ListValues(), vIdx)
		if err != nil {
			release()
			return nil, err
		}
		defer vals.Release()
		// keys are unique within a map
		var rk RowKeys
		if err := enc.Encode([]arrow.Array{keys}, &rk); err != nil {
			release()
			return nil, err
		}
		seen := map[string]bool{}
		for i := range n {
			clear(seen)
			for j := offs[i]; j < offs[i+1]; j++ {
				k := string(rk.Key(int(j)))
				if seen[k] {
					release()
					return nil, fmt.Errorf("map: key %s appears twice", keys.ValueStr(int(j)))
				}
				seen[k] = true
			}
		}
		return newMap(mt, n, valid, offBuf, keys, vals), nil
	}, formFunc, args...), nil
}

// newMap assembles a map array from its validity (nil: no NULL map),
// offsets (both of which it takes over) and its entries' keys and values
// (which it retains).
func newMap(mt *arrow.MapType, n int, valid, offsets *memory.Buffer, keys, vals arrow.Array) arrow.Array {
	entries := array.NewData(mt.Elem(), keys.Len(), []*memory.Buffer{nil}, []arrow.ArrayData{keys.Data(), vals.Data()}, 0, 0)
	defer entries.Release()
	nulls := 0
	if valid != nil {
		nulls = n - bitutil.CountSetBits(valid.Bytes(), 0, n)
	}
	data := array.NewData(mt, n, []*memory.Buffer{valid, offsets}, []arrow.ArrayData{entries}, nulls, 0)
	defer data.Release()
	if valid != nil {
		valid.Release()
	}
	offsets.Release()
	return array.MakeFromData(data)
}

// mapPart is map_keys (keys) or map_values: an array per map.
func mapPart(keys bool) overload {
	return func(name string, args []Expr) (Expr, error) {
		if len(args) != 1 || mapOf(args[0].DataType()) == nil {
			return nil, errNoMatch
		}
		mt := mapOf(args[0].DataType())
		et := mt.ItemType()
		if keys {
			et = mt.KeyType()
		}
		lt := arrow.ListOf(et)
		return newCall(name, lt, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
			m := a[0].(*array.Map)
			part := m.Items()
			if keys {
				part = m.Keys()
			}
			first, last := spanOf(m.Offsets(), n)
			vals := array.NewSlice(part, first, last)
			defer vals.Release()
			return newList(lt, n, validityCopy(ec.Mem, m), rebasedOffsets(ec.Mem, m.Offsets(), n), vals), nil
		}, formFunc, args...), nil
	}
}

// resolveMapCardinality is cardinality(m): its number of entries.
func resolveMapCardinality(name string, args []Expr) (Expr, error) {
	if len(args) != 1 || mapOf(args[0].DataType()) == nil {
		return nil, errNoMatch
	}
	return newCall(name, tInt32, func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		m := a[0].(*array.Map)
		offs := m.Offsets()
		b := array.NewInt32Builder(ec.Mem)
		defer b.Release()
		b.Reserve(n)
		for i := range n {
			if m.IsNull(i) {
				b.AppendNull()
				continue
			}
			b.UnsafeAppend(offs[i+1] - offs[i])
		}
		return b.NewArray(), nil
	}, formFunc, args...), nil
}

// resolveMapElement is element_at(m, k) and m[k]: the value of key k, NULL
// when m has no such key.
func resolveMapElement(name string, args []Expr) (Expr, error) {
	if len(args) != 2 || mapOf(args[0].DataType()) == nil {
		return nil, errNoMatch
	}
	mt := mapOf(args[0].DataType())
	k, err := Coerce(args[1], mt.KeyType())
	if err != nil {
		return nil, errNoMatch
	}
	same := compareKernel("is_not_distinct_from", mt.KeyType())
	if same == nil {
		return nil, errNoMatch
	}
	return newCall(name, mt.ItemType(), func(ec *EvalContext, a []arrow.Array, n int) (arrow.Array, error) {
		m, key := a[0].(*array.Map), a[1]
		offs := m.Offsets()
		var rows, ei, ki []int32
		for i := range n {
			if m.IsNull(i) || key.IsNull(i) {
				continue
			}
			for j := offs[i]; j < offs[i+1]; j++ {
				rows, ei, ki = append(rows, int32(i)), append(ei, j), append(ki, int32(i))
			}
		}
		at := make([]int32, n)
		for i := range at {
			at[i] = -1
		}
		if len(rows) > 0 {
			eq, err := comparePairs(ec, same, m.Keys(), ei, key, ki)
			if err != nil {
				return nil, err
			}
			for p, r := range rows {
				if at[r] < 0 && eq.Value(p) {
					at[r] = ei[p]
				}
			}
			eq.Release()
		}
		return takeArray(ec.Mem, m.Items(), at)
	}, formFunc, args[0], k), nil
}

// mapToMapCast converts a map's keys and values, keeping its entries.
func mapToMapCast(from, to *arrow.MapType) castFn {
	same := func(_ memory.Allocator, in arrow.Array, _ bool) (arrow.Array, error) {
		in.Retain()
		return in, nil
	}
	kc, vc := castFunc(from.KeyType(), to.KeyType()), castFunc(from.ItemType(), to.ItemType())
	if arrow.TypeEqual(from.KeyType(), to.KeyType()) {
		kc = same
	}
	if arrow.TypeEqual(from.ItemType(), to.ItemType()) {
		vc = same
	}
	if kc == nil || vc == nil {
		return nil
	}
	return func(mem memory.Allocator, in arrow.Array, try bool) (arrow.Array, error) {
		m := in.(*array.Map)
		n := m.Len()
		first, last := spanOf(m.Offsets(), n)
		ks := array.NewSlice(m.Keys(), first, last)
		defer ks.Release()
		vs := array.NewSlice(m.Items(), first, last)
		defer vs.Release()
		keys, err := kc(mem, ks, false) // a key that does not convert is an error even in TRY_CAST
		if err != nil {
			return nil, err
		}
		defer keys.Release()
		if keys.NullN() > 0 {
			return nil, fmt.Errorf("map keys must not be NULL")
		}
		vals, err := vc(mem, vs, try)
		if err != nil {
			return nil, err
		}
		defer vals.Release()
		return newMap(to, n, validityCopy(mem, m), rebasedOffsets(mem, m.Offsets(), n), keys, vals), nil
	}
}

// mapFormatter renders a map as DuckDB does: {k=v, k2=NULL}.
func mapFormatter(mt *arrow.MapType) func(a arrow.Array) appender {
	kf, vf := textFormatter(mt.KeyType()), textFormatter(mt.ItemType())
	if kf == nil || vf == nil {
		return nil
	}
	return func(a arrow.Array) appender {
		m := a.(*array.Map)
		keys, items := m.Keys(), m.Items()
		ka, va := kf(keys), vf(items)
		offs := m.Offsets()
		return func(b []byte, i int) []byte {
			b = append(b, '{')
			for j := offs[i]; j < offs[i+1]; j++ {
				if j > offs[i] {
					b = append(b, ", "...)
				}
				b = ka(b, int(j))
				b = append(b, '=')
				if items.IsNull(int(j)) {
					b = append(b, "NULL"...)
				} else {
					b = va(b, int(j))
				}
			}
			return append(b, '}')
		}
	}
}
