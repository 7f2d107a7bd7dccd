package exec

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// This file orders rows by sort keys. Sort, top-N, the spill merge and
// Window all compare rows through skRowKeys: rows live in a list of
// batches and are named by skRef (batch, row); each key keeps typed views
// of its column in every batch so that a comparison is a couple of slice
// loads, not an interface call per value.
//
// Orderings follow Postgres: NaN sorts above every other float and equals
// itself; -0 equals 0; strings and binary compare bytewise (the C
// collation); false < true; NULL placement is NullsFirst, independent of
// the direction.

// skRef names row r of batch b in a list of batches.
type skRef struct{ b, r int32 }

// skOrder is the direction and NULL placement of one key.
type skOrder struct {
	desc, nullsFirst bool
}

// skRowKeys compares rows by several keys.
type skRowKeys struct {
	keys []skKey
}

type skKey struct {
	skOrder
	valid [][]byte // per batch; nil when the batch's column has no NULLs
	voff  []int
	vals  skVals
}

// skVals holds one key column's values in each batch.
type skVals interface {
	add(a arrow.Array)
	truncate(n int) // keep the first n batches
	drop(i int)     // forget batch i's values (its index stays taken)
	// cmp orders two non-NULL values ascending.
	cmp(ab, ar, bb, br int32) int
	// prefix maps a non-NULL value to a uint64 whose order agrees with
	// cmp: prefix(a) < prefix(b) implies a < b. When exact() the converse
	// holds too, so equal prefixes mean equal values.
	prefix(b, r int32) uint64
	exact() bool
}

// skKeyTypeSupported reports whether rows can be ordered by dt.
func skKeyTypeSupported(dt arrow.DataType) error {
	_, err := newSkVals(dt)
	return err
}

func newSkVals(dt arrow.DataType) (skVals, error) {
	if ext, ok := dt.(arrow.ExtensionType); ok {
		v, err := newSkVals(ext.StorageType())
		if err != nil {
			return nil, err
		}
		return &skExtVals{inner: v}, nil
	}
	switch dt.ID() {
	case arrow.INT8:
		return &skPrimVals[int8]{}, nil
	case arrow.INT16:
		return &skPrimVals[int16]{}, nil
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return &skPrimVals[int32]{}, nil
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return &skPrimVals[int64]{}, nil
	case arrow.UINT8:
		return &skPrimVals[uint8]{}, nil
	case arrow.UINT16:
		return &skPrimVals[uint16]{}, nil
	case arrow.UINT32:
		return &skPrimVals[uint32]{}, nil
	case arrow.UINT64:
		return &skPrimVals[uint64]{}, nil
	case arrow.FLOAT32:
		return &skFloatVals[float32]{}, nil
	case arrow.FLOAT64:
		return &skFloatVals[float64]{}, nil
	case arrow.DECIMAL128:
		return &skDecimalVals{}, nil
	case arrow.BOOL:
		return &skBoolVals{}, nil
	case arrow.STRING, arrow.BINARY:
		return &skBytesVals{}, nil
	case arrow.FIXED_SIZE_BINARY:
		return &skFixedBytesVals{width: dt.(*arrow.FixedSizeBinaryType).ByteWidth}, nil
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return &skIntervalVals{}, nil
	case arrow.NULL:
		return skNullVals{}, nil
	case arrow.LIST:
		inner, err := newSkVals(dt.(*arrow.ListType).Elem())
		if err != nil {
			return nil, err
		}
		return &skListVals{elem: inner}, nil
	case arrow.MAP:
		// the list of its entries, in their order
		inner, err := newSkVals(dt.(*arrow.MapType).Elem())
		if err != nil {
			return nil, err
		}
		return &skListVals{elem: inner}, nil
	case arrow.STRUCT:
		st := dt.(*arrow.StructType)
		s := &skStructVals{fields: make([]skVals, st.NumFields())}
		for i, f := range st.Fields() {
			v, err := newSkVals(f.Type)
			if err != nil {
				return nil, err
			}
			s.fields[i] = v
		}
		return s, nil
	}
	return nil, fmt.Errorf("cannot order values of type %s", TypeName(dt))
}

// newSkRowKeys returns a comparator for keys of the given types.
func newSkRowKeys(types []arrow.DataType, orders []skOrder) (*skRowKeys, error) {
	k := &skRowKeys{keys: make([]skKey, len(types))}
	for i, dt := range types {
		v, err := newSkVals(dt)
		if err != nil {
			return nil, err
		}
		k.keys[i] = skKey{skOrder: orders[i], vals: v}
	}
	return k, nil
}

// add appends one batch: cols holds one array per key, all of one length.
func (k *skRowKeys) add(cols []arrow.Array) {
	for i := range k.keys {
		key := &k.keys[i]
		a := cols[i]
		if a.NullN() > 0 {
			var bits []byte
			if buf := a.Data().Buffers()[0]; buf != nil {
				bits = buf.Bytes()
			} else { // the Null type has no bitmap: every bit is clear
				bits = make([]byte, bitutil.BytesForBits(int64(a.Data().Offset()+a.Len())))
			}
			key.valid = append(key.valid, bits)
		} else {
			key.valid = append(key.valid, nil)
		}
		key.voff = append(key.voff, a.Data().Offset())
		key.vals.add(a)
	}
}

// truncate drops all batches from the n-th on.
func (k *skRowKeys) truncate(n int) {
	for i := range k.keys {
		key := &k.keys[i]
		clear(key.valid[n:])
		key.valid = key.valid[:n]
		key.voff = key.voff[:n]
		key.vals.truncate(n)
	}
}

// drop forgets batch i, so that its memory can be freed; rows of batch i
// must not be compared afterwards.
func (k *skRowKeys) drop(i int) {
	for j := range k.keys {
		k.keys[j].valid[i] = nil
		k.keys[j].vals.drop(i)
	}
}

// compare orders rows a and b by the keys (ties return 0).
func (k *skRowKeys) compare(a, b skRef) int { return k.compareRange(a, b, 0, len(k.keys)) }

// compareRange orders rows a and b by keys lo..hi-1 only.
func (k *skRowKeys) compareRange(a, b skRef, lo, hi int) int {
	for i := lo; i < hi; i++ {
		key := &k.keys[i]
		av, bv := key.valid[a.b], key.valid[b.b]
		an := av != nil && !bitutil.BitIsSet(av, key.voff[a.b]+int(a.r))
		bn := bv != nil && !bitutil.BitIsSet(bv, key.voff[b.b]+int(b.r))
		if an || bn {
			switch {
			case an && bn:
				continue
			case an == key.nullsFirst:
				return -1
			default:
				return 1
			}
		}
		if c := key.vals.cmp(a.b, a.r, b.b, b.r); c != 0 {
			if key.desc {
				return -c
			}
			return c
		}
	}
	return 0
}

type skPrimVals[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64] struct{ v [][]T }

func (s *skPrimVals[T]) add(a arrow.Array) { s.v = append(s.v, arrow.GetValues[T](a.Data(), 1)) }
func (s *skPrimVals[T]) truncate(n int)    { clear(s.v[n:]); s.v = s.v[:n] }
func (s *skPrimVals[T]) drop(i int)        { s.v[i] = nil }
func (s *skPrimVals[T]) cmp(ab, ar, bb, br int32) int {
	return cmp.Compare(s.v[ab][ar], s.v[bb][br])
}

type skFloatVals[T float32 | float64] struct{ v [][]T }

func (s *skFloatVals[T]) add(a arrow.Array) { s.v = append(s.v, arrow.GetValues[T](a.Data(), 1)) }
func (s *skFloatVals[T]) truncate(n int)    { clear(s.v[n:]); s.v = s.v[:n] }
func (s *skFloatVals[T]) drop(i int)        { s.v[i] = nil }
func (s *skFloatVals[T]) cmp(ab, ar, bb, br int32) int {
	return skCompareFloat(s.v[ab][ar], s.v[bb][br])
}

// skCompareFloat is Postgres's float order: NaN is greater than every
// other value and equal to itself; -0 equals 0.
func skCompareFloat[T float32 | float64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	case x == y:
		return 0
	}
	xn, yn := x != x, y != y
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	}
	return -1
}

type skDecimalVals struct{ v [][]decimal128.Num }

func (s *skDecimalVals) add(a arrow.Array) {
	s.v = append(s.v, arrow.GetValues[decimal128.Num](a.Data(), 1))
}
func (s *skDecimalVals) truncate(n int) { clear(s.v[n:]); s.v = s.v[:n] }
func (s *skDecimalVals) drop(i int)     { s.v[i] = nil }
func (s *skDecimalVals) cmp(ab, ar, bb, br int32) int {
	return s.v[ab][ar].Cmp(s.v[bb][br])
}

type skIntervalVals struct {
	v [][]arrow.MonthDayNanoInterval
}

func (s *skIntervalVals) add(a arrow.Array) {
	s.v = append(s.v, arrow.GetValues[arrow.MonthDayNanoInterval](a.Data(), 1))
}
func (s *skIntervalVals) truncate(n int) { clear(s.v[n:]); s.v = s.v[:n] }
func (s *skIntervalVals) drop(i int)     { s.v[i] = nil }

// cmp orders intervals as Postgres does, by their length with a month of
// 30 days: '1 month' = '30 days'.
func (s *skIntervalVals) cmp(ab, ar, bb, br int32) int {
	x, y := s.v[ab][ar], s.v[bb][br]
	const dayNanos = 86400 * 1e9
	xd, yd := int64(x.Months)*30+int64(x.Days)+x.Nanoseconds/dayNanos, int64(y.Months)*30+int64(y.Days)+y.Nanoseconds/dayNanos
	if c := cmp.Compare(xd, yd); c != 0 {
		return c
	}
	return cmp.Compare(x.Nanoseconds%dayNanos, y.Nanoseconds%dayNanos)
}

type skBoolVals struct{ v []*array.Boolean }

func (s *skBoolVals) add(a arrow.Array) { s.v = append(s.v, a.(*array.Boolean)) }
func (s *skBoolVals) truncate(n int)    { clear(s.v[n:]); s.v = s.v[:n] }
func (s *skBoolVals) drop(i int)        { s.v[i] = nil }
func (s *skBoolVals) cmp(ab, ar, bb, br int32) int {
	x, y := s.v[ab].Value(int(ar)), s.v[bb].Value(int(br))
	switch {
	case x == y:
		return 0
	case y:
		return -1
	}
	return 1
}

// skBytesVals holds STRING or BINARY columns (int32 offsets).
type skBytesVals struct {
	offs [][]int32
	data [][]byte
}

func (s *skBytesVals) add(a arrow.Array) {
	d := a.Data()
	s.offs = append(s.offs, arrow.GetOffsets[int32](d, 1))
	var data []byte
	if b := d.Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	s.data = append(s.data, data)
}
func (s *skBytesVals) truncate(n int) {
	clear(s.offs[n:])
	clear(s.data[n:])
	s.offs, s.data = s.offs[:n], s.data[:n]
}
func (s *skBytesVals) drop(i int) { s.offs[i], s.data[i] = nil, nil }
func (s *skBytesVals) at(b, r int32) []byte {
	o := s.offs[b]
	return s.data[b][o[r]:o[r+1]]
}
func (s *skBytesVals) cmp(ab, ar, bb, br int32) int {
	return bytes.Compare(s.at(ab, ar), s.at(bb, br))
}

type skFixedBytesVals struct {
	width int
	data  [][]byte // already offset to the array's first row
}

func (s *skFixedBytesVals) add(a arrow.Array) {
	d := a.Data()
	var data []byte
	if b := d.Buffers()[1]; b != nil {
		data = b.Bytes()[d.Offset()*s.width:]
	}
	s.data = append(s.data, data)
}
func (s *skFixedBytesVals) truncate(n int) { clear(s.data[n:]); s.data = s.data[:n] }
func (s *skFixedBytesVals) drop(i int)     { s.data[i] = nil }
func (s *skFixedBytesVals) cmp(ab, ar, bb, br int32) int {
	w := s.width
	x := s.data[ab][int(ar)*w : int(ar)*w+w]
	y := s.data[bb][int(br)*w : int(br)*w+w]
	return bytes.Compare(x, y)
}

// skExtVals orders extension arrays (UUID) by their storage.
type skExtVals struct{ inner skVals }

func (s *skExtVals) add(a arrow.Array) {
	if e, ok := a.(array.ExtensionArray); ok {
		a = e.Storage()
	}
	s.inner.add(a)
}
func (s *skExtVals) truncate(n int)               { s.inner.truncate(n) }
func (s *skExtVals) drop(i int)                   { s.inner.drop(i) }
func (s *skExtVals) cmp(ab, ar, bb, br int32) int { return s.inner.cmp(ab, ar, bb, br) }

// skNullVals is an all-NULL column; the NULL check decides before cmp.
type skNullVals struct{}

func (skNullVals) add(arrow.Array)          {}
func (skNullVals) truncate(int)             {}
func (skNullVals) drop(int)                 {}
func (skNullVals) cmp(_, _, _, _ int32) int { return 0 }

func (s *skPrimVals[T]) prefix(b, r int32) uint64 {
	v := s.v[b][r]
	var zero T
	if ^zero < 0 { // signed: flip the sign bit so negatives sort first
		return uint64(int64(v)) ^ 1<<63
	}
	return uint64(v)
}
func (s *skPrimVals[T]) exact() bool { return true }

func (s *skFloatVals[T]) prefix(b, r int32) uint64 { return skFloatPrefix(float64(s.v[b][r])) }
func (s *skFloatVals[T]) exact() bool              { return true }

// skFloatPrefix orders float bits like skCompareFloat: -0 as 0, NaN last.
func skFloatPrefix(f float64) uint64 {
	if f != f {
		return math.MaxUint64
	}
	if f == 0 {
		f = 0
	}
	u := math.Float64bits(f)
	if u>>63 != 0 {
		return ^u
	}
	return u | 1<<63
}

func (s *skDecimalVals) prefix(b, r int32) uint64 { return uint64(s.v[b][r].HighBits()) ^ 1<<63 }
func (s *skDecimalVals) exact() bool              { return false }

func (s *skIntervalVals) prefix(b, r int32) uint64 { return 0 }
func (s *skIntervalVals) exact() bool              { return false }

func (s *skBoolVals) prefix(b, r int32) uint64 {
	if s.v[b].Value(int(r)) {
		return 1
	}
	return 0
}
func (s *skBoolVals) exact() bool { return true }

func (s *skBytesVals) prefix(b, r int32) uint64 { return skBytesPrefix(s.at(b, r)) }
func (s *skBytesVals) exact() bool              { return false }

func (s *skFixedBytesVals) prefix(b, r int32) uint64 {
	w := s.width
	return skBytesPrefix(s.data[b][int(r)*w : int(r)*w+w])
}
func (s *skFixedBytesVals) exact() bool { return false }

// skBytesPrefix is the first 8 bytes, big-endian, zero-padded.
func skBytesPrefix(v []byte) uint64 {
	if len(v) >= 8 {
		return binary.BigEndian.Uint64(v)
	}
	var buf [8]byte
	copy(buf[:], v)
	return binary.BigEndian.Uint64(buf[:])
}

func (s *skExtVals) prefix(b, r int32) uint64 { return s.inner.prefix(b, r) }
func (s *skExtVals) exact() bool              { return s.inner.exact() }

func (skNullVals) prefix(_, _ int32) uint64 { return 0 }
func (skNullVals) exact() bool              { return true }

// skSortEntry is a row with its first key normalized for fast sorting.
type skSortEntry struct {
	p   uint64 // the first key's prefix, inverted for DESC
	ref skRef
	nr  uint8 // NULL rank: 0 NULLS FIRST, 1 not NULL, 2 NULLS LAST
}

// sortStable sorts refs by the keys, ties in the order of (batch, row).
//
// Each key in turn is normalized to a uint64 prefix and the rows are
// radix-sorted by it (stably, so input order survives among ties); runs of
// rows with equal prefixes are then sorted by the next key the same way.
// A key whose prefix is inexact (strings, decimals) ends the recursion:
// its tie runs are sorted by comparing rows from that key on.
func (k *skRowKeys) sortStable(refs []skRef) {
	if len(k.keys) == 0 {
		slices.SortFunc(refs, func(a, b skRef) int {
			if c := cmp.Compare(a.b, b.b); c != 0 {
				return c
			}
			return cmp.Compare(a.r, b.r)
		})
		return
	}
	es := make([]skSortEntry, len(refs))
	for i, r := range refs {
		es[i].ref = r
	}
	k.sortRun(es, 0, make([]skSortEntry, len(es)))
	for i := range es {
		refs[i] = es[i].ref
	}
}

// sortRun sorts es, whose rows tie on keys before ki, by keys ki and on.
// tmp is scratch space of at least len(es).
func (k *skRowKeys) sortRun(es []skSortEntry, ki int, tmp []skSortEntry) {
	key := &k.keys[ki]
	for i := range es {
		e := &es[i]
		r := e.ref
		e.p, e.nr = 0, 1
		if v := key.valid[r.b]; v != nil && !bitutil.BitIsSet(v, key.voff[r.b]+int(r.r)) {
			e.nr = 2
			if key.nullsFirst {
				e.nr = 0
			}
			continue
		}
		e.p = key.vals.prefix(r.b, r.r)
		if key.desc {
			e.p = ^e.p
		}
	}
	skRadixSort(es, tmp)
	exact := key.vals.exact()
	n := len(k.keys)
	if exact && ki+1 == n {
		return
	}
	full := func(a, b skSortEntry) int {
		if c := k.compareRange(a.ref, b.ref, ki, n); c != 0 {
			return c
		}
		if a.ref.b != b.ref.b {
			return cmp.Compare(a.ref.b, b.ref.b)
		}
		return cmp.Compare(a.ref.r, b.ref.r)
	}
	for lo := 0; lo < len(es); {
		hi := lo + 1
		for hi < len(es) && es[hi].nr == es[lo].nr && es[hi].p == es[lo].p {
			hi++
		}
		switch {
		case hi-lo == 1:
		case exact || es[lo].nr != 1: // equal on key ki (NULLs tie with NULLs)
			if ki+1 < n {
				k.sortRun(es[lo:hi], ki+1, tmp)
			}
		default:
			slices.SortFunc(es[lo:hi], full)
		}
		lo = hi
	}
}

// skRadixSort sorts es stably by (nr, p), skipping byte positions where
// every entry agrees (small key ranges need few passes).
func skRadixSort(es, tmp []skSortEntry) {
	if len(es) < 2 {
		return
	}
	if len(es) <= 64 {
		slices.SortStableFunc(es, func(a, b skSortEntry) int {
			if a.nr != b.nr {
				return int(a.nr) - int(b.nr)
			}
			return cmp.Compare(a.p, b.p)
		})
		return
	}
	src, dst := es, tmp[:len(es)]
	var count [256]int
	// Passes 0..7 take byte i of p; pass 8 takes the NULL rank.
	for pass := 0; pass <= 8; pass++ {
		shift := uint(pass * 8)
		clear(count[:])
		if pass < 8 {
			for i := range src {
				count[uint8(src[i].p>>shift)]++
			}
			if count[uint8(src[0].p>>shift)] == len(src) {
				continue
			}
		} else {
			for i := range src {
				count[src[i].nr]++
			}
			if count[src[0].nr] == len(src) {
				continue
			}
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		if pass < 8 {
			for i := range src {
				d := uint8(src[i].p >> shift)
				dst[count[d]] = src[i]
				count[d]++
			}
		} else {
			for i := range src {
				d := src[i].nr
				dst[count[d]] = src[i]
				count[d]++
			}
		}
		src, dst = dst, src
	}
	if &src[0] != &es[0] {
		copy(es, src)
	}
}

// skListVals orders arrays as PostgreSQL does: element by element, a NULL
// element after every non-NULL one (and equal to a NULL), and a shorter
// array before a longer one it is a prefix of.
type skListVals struct {
	offs  [][]int32 // per batch: the list offsets, from the array's first row
	valid [][]byte  // per batch: the elements' validity; nil when none is NULL
	voff  []int
	elem  skVals // the elements, one "batch" per batch
}

func (s *skListVals) add(a arrow.Array) {
	l := listArray(a)
	d := l.Data()
	s.offs = append(s.offs, arrow.GetOffsets[int32](d, 1))
	child := l.ListValues()
	s.valid = append(s.valid, skValidity(child))
	s.voff = append(s.voff, child.Data().Offset())
	s.elem.add(child)
}

func (s *skListVals) truncate(n int) {
	clear(s.offs[n:])
	clear(s.valid[n:])
	s.offs, s.valid, s.voff = s.offs[:n], s.valid[:n], s.voff[:n]
	s.elem.truncate(n)
}

func (s *skListVals) drop(i int) {
	s.offs[i], s.valid[i] = nil, nil
	s.elem.drop(i)
}

func (s *skListVals) cmp(ab, ar, bb, br int32) int {
	ao, bo := s.offs[ab], s.offs[bb]
	alo, ahi, blo, bhi := ao[ar], ao[ar+1], bo[br], bo[br+1]
	for i, j := alo, blo; i < ahi && j < bhi; i, j = i+1, j+1 {
		c, decided := skNullsLast(s.valid[ab], s.voff[ab]+int(i), s.valid[bb], s.voff[bb]+int(j))
		if !decided {
			c = s.elem.cmp(ab, i, bb, j)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(ahi-alo, bhi-blo)
}

func (s *skListVals) prefix(b, r int32) uint64 { return 0 }
func (s *skListVals) exact() bool              { return false }

// skNullsLast orders two nested values (an array's elements, a struct's
// fields) by NULL alone, a NULL after every other and equal to a NULL:
// decided is false when neither is NULL (av, bv: validity bitmaps, nil
// when none is NULL; a, b: bit positions).
func skNullsLast(av []byte, a int, bv []byte, b int) (c int, decided bool) {
	an := av != nil && !bitutil.BitIsSet(av, a)
	bn := bv != nil && !bitutil.BitIsSet(bv, b)
	switch {
	case an && bn:
		return 0, true
	case an:
		return 1, true
	case bn:
		return -1, true
	}
	return 0, false
}

// skValidity is a's validity bitmap for ordering its values, nil when
// none is NULL.
func skValidity(a arrow.Array) []byte {
	if a.NullN() == 0 {
		return nil
	}
	if buf := a.Data().Buffers()[0]; buf != nil {
		return buf.Bytes()
	}
	// the Null type has no bitmap: every bit is clear
	return make([]byte, bitutil.BytesForBits(int64(a.Data().Offset()+a.Len())))
}

// skStructVals orders structs as PostgreSQL orders rows: field by field,
// a NULL field after every non-NULL one (and equal to a NULL).
type skStructVals struct {
	fields []skVals
	valid  [][][]byte // per field, per batch: the field's validity; nil when none is NULL
	voff   [][]int    // per field, per batch: the field array's offset
}

func (s *skStructVals) add(a arrow.Array) {
	st := a.(*array.Struct)
	if s.valid == nil {
		s.valid, s.voff = make([][][]byte, len(s.fields)), make([][]int, len(s.fields))
	}
	for k, f := range s.fields {
		// the field's row r is the struct's row r
		child := st.Field(k)
		s.valid[k] = append(s.valid[k], skValidity(child))
		s.voff[k] = append(s.voff[k], child.Data().Offset())
		f.add(child)
	}
}

func (s *skStructVals) truncate(n int) {
	for k, f := range s.fields {
		clear(s.valid[k][n:])
		s.valid[k], s.voff[k] = s.valid[k][:n], s.voff[k][:n]
		f.truncate(n)
	}
}

func (s *skStructVals) drop(i int) {
	for k, f := range s.fields {
		s.valid[k][i] = nil
		f.drop(i)
	}
}

func (s *skStructVals) cmp(ab, ar, bb, br int32) int {
	for k, f := range s.fields {
		c, decided := skNullsLast(s.valid[k][ab], s.voff[k][ab]+int(ar), s.valid[k][bb], s.voff[k][bb]+int(br))
		if !decided {
			c = f.cmp(ab, ar, bb, br)
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func (s *skStructVals) prefix(b, r int32) uint64 { return 0 }
func (s *skStructVals) exact() bool              { return false }
