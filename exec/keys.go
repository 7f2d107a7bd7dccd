package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/zeebo/xxh3"
)

// Row keys.
//
// A row key is the bytes of a row's key values, one field per key column,
// so that two rows have equal keys exactly when every key value is equal
// under grouping semantics (NULL equals NULL, -0.0 equals 0.0, NaN equals
// NaN). A field is a tag byte, 0 for NULL and 1 for a value, then:
//
//   - fixed-width types: the value's bytes as Arrow stores them (little
//     endian), zeroed for NULL, so that every row of an all-fixed-width key
//     has the same width and needs no offsets;
//   - strings and binaries: a 4-byte little-endian length and the bytes,
//     nothing for NULL.
//
// INVARIANT: the encoding depends only on the key column types, never on
// whether a particular batch has NULLs, so keys from different batches of
// the same types compare as bytes. Keys of different type lists must not be
// mixed in one table; constructors check types with arrow.TypeEqual.

// RowKeys holds the encoded keys of one batch.
type RowKeys struct {
	// N is the number of rows.
	N int
	// Width is the width of every key when all key columns are fixed
	// width, else 0 and Offsets locates key i at Data[Offsets[i]:Offsets[i+1]].
	Width   int
	Data    []byte
	Offsets []int
	// Hashes holds a 64-bit hash of each key.
	Hashes []uint64
	// Null reports per row whether any key column is NULL; AnyNull whether
	// any row has a NULL key. Joins skip such rows; grouping keeps them.
	Null    []bool
	AnyNull bool

	pos  []int   // write cursors for variable-width encoding
	sel  []int32 // scratch of HashTable.FindRows: the rows its filter passes
	sink uint64  // HashTable.touch's loads land here
}

// Key returns row i's key. It aliases Data.
func (k *RowKeys) Key(i int) []byte {
	if k.Width > 0 {
		return k.Data[i*k.Width : (i+1)*k.Width : (i+1)*k.Width]
	}
	return k.Data[k.Offsets[i]:k.Offsets[i+1]:k.Offsets[i+1]]
}

// KeyEncoder encodes the key columns of batches into RowKeys.
type KeyEncoder struct {
	// nullSafe reports no NULL keys: a NULL is a value like any other
	// (its tag byte differs from every non-NULL value's), so joins match
	// NULL with NULL
	nullSafe bool
	types    []arrow.DataType
	widths   []int // per column value width; 0 for variable width
	width    int   // total row width when every column is fixed width, else 0
}

// NewKeyEncoder returns an encoder for key columns of the given types. It
// accepts every canonical type (see the package doc) plus the other
// fixed-width Arrow primitives.
func NewKeyEncoder(types []arrow.DataType) (*KeyEncoder, error) {
	if len(types) == 0 {
		return nil, fmt.Errorf("exec: a row key needs at least one column (planner bug)")
	}
	e := &KeyEncoder{types: types, widths: make([]int, len(types))}
	fixed := true
	for i, t := range types {
		w, err := htKeyValueWidth(t)
		if err != nil {
			return nil, err
		}
		e.widths[i] = w
		if w == 0 {
			fixed = false
		} else {
			e.width += 1 + max(w, 0)
		}
	}
	if !fixed {
		e.width = 0
	}
	return e, nil
}

// Width is the width of every key when all columns are fixed width, else 0.
// Pass it to NewHashTable.
func (e *KeyEncoder) Width() int { return e.width }

// Types are the key column types.
func (e *KeyEncoder) Types() []arrow.DataType { return e.types }

// htKeyValueWidth is the encoded width of a value of type t, 0 for variable
// width. The NULL type has width -1 internally mapped to 0 bytes of value.
func htKeyValueWidth(t arrow.DataType) (int, error) {
	switch t.ID() {
	case arrow.NULL:
		return -1, nil
	case arrow.BOOL, arrow.INT8, arrow.UINT8:
		return 1, nil
	case arrow.INT16, arrow.UINT16, arrow.FLOAT16:
		return 2, nil
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32,
		arrow.INTERVAL_MONTHS:
		return 4, nil
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIME64,
		arrow.TIMESTAMP, arrow.DURATION, arrow.INTERVAL_DAY_TIME:
		return 8, nil
	case arrow.DECIMAL128, arrow.INTERVAL_MONTH_DAY_NANO:
		return 16, nil
	case arrow.DECIMAL256:
		return 32, nil
	case arrow.FIXED_SIZE_BINARY:
		return t.(*arrow.FixedSizeBinaryType).ByteWidth, nil
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return 0, nil
	case arrow.EXTENSION:
		return htKeyValueWidth(t.(arrow.ExtensionType).StorageType())
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP:
		if _, err := htKeyValueWidth(t.(arrow.ListLikeType).Elem()); err != nil {
			return 0, err
		}
		return 0, nil
	case arrow.STRUCT:
		for _, f := range t.(*arrow.StructType).Fields() {
			if _, err := htKeyValueWidth(f.Type); err != nil {
				return 0, err
			}
		}
		return 0, nil
	}
	return 0, fmt.Errorf("exec: type %s cannot be used as a grouping or join key", t)
}

// Encode encodes row keys of cols (one array per key column, all of the
// same length) into out, reusing out's buffers.
func (e *KeyEncoder) Encode(cols []arrow.Array, out *RowKeys) error {
	if len(cols) != len(e.types) {
		return fmt.Errorf("exec: key encoder got %d columns, expected %d (planner bug)", len(cols), len(e.types))
	}
	n := cols[0].Len()
	for i, c := range cols {
		if c.Len() != n {
			return fmt.Errorf("exec: key column %d has %d rows, expected %d (planner bug)", i, c.Len(), n)
		}
		if !arrow.TypeEqual(c.DataType(), e.types[i]) {
			return fmt.Errorf("exec: key column %d is %s, expected %s (planner bug)", i, c.DataType(), e.types[i])
		}
	}
	out.N = n
	out.Width = e.width
	out.Null = htGrow(out.Null, n)
	clear(out.Null)
	out.AnyNull = false
	out.Hashes = htGrow(out.Hashes, n)

	if e.encodeOneFixed(cols, out) {
		return nil
	}
	if e.width > 0 {
		out.Data = htGrow(out.Data, n*e.width)
		off := 0
		for i, c := range cols {
			w := e.widths[i]
			if w < 0 {
				w = 0
			}
			htEncodeFixed(c, w, out.Data, e.width, off, out)
			off += 1 + w
		}
	} else {
		// Pass 1: row lengths. Pass 2: write each column at the row cursors.
		out.Offsets = htGrow(out.Offsets, n+1)
		out.pos = htGrow(out.pos, n)
		lens := out.pos
		fixedPart := 0
		for _, w := range e.widths {
			fixedPart++
			if w > 0 {
				fixedPart += w
			}
		}
		for r := 0; r < n; r++ {
			lens[r] = fixedPart
		}
		for i, c := range cols {
			if e.widths[i] == 0 {
				htAddVarLens(c, lens)
			}
		}
		total := 0
		for r := 0; r < n; r++ {
			out.Offsets[r] = total
			total += lens[r]
		}
		out.Offsets[n] = total
		out.Data = htGrow(out.Data, total)
		copy(out.pos, out.Offsets[:n])
		for i, c := range cols {
			w := e.widths[i]
			if w == 0 {
				htEncodeVar(c, out.Data, out.pos, out)
				continue
			}
			if w < 0 {
				w = 0
			}
			htEncodeFixedAt(c, w, out.Data, out.pos, out)
		}
	}
	for r := 0; r < n; r++ {
		out.Hashes[r] = HashKey(out.Key(r))
	}
	if e.nullSafe && out.AnyNull {
		clear(out.Null)
		out.AnyNull = false
	}
	return nil
}

// encodeOneFixed is Encode's fast path for the commonest join and
// grouping key: one integer-like column of 4 or 8 bytes without NULLs
// (BIGINT, INTEGER, DATE, TIMESTAMP). It writes each key and its hash
// straight from the value, which the general path copies byte by byte
// and then reads back to hash; the bytes and hashes are the same.
// Floats are left to the general path, which canonicalizes -0.0 and NaN.
func (e *KeyEncoder) encodeOneFixed(cols []arrow.Array, out *RowKeys) bool {
	if len(cols) != 1 || e.width != 1+e.widths[0] || (e.widths[0] != 8 && e.widths[0] != 4) {
		return false
	}
	c := htStorageOf(cols[0])
	switch c.DataType().ID() {
	case arrow.FLOAT64, arrow.FLOAT32, arrow.NULL, arrow.BOOL:
		return false
	}
	if c.NullN() > 0 {
		return false
	}
	n := out.N
	src := htFixedBytes(c, e.widths[0])
	if len(src) < n*e.widths[0] {
		return false
	}
	out.Data = htGrow(out.Data, n*e.width)
	dst, hs := out.Data, out.Hashes[:n]
	if e.widths[0] == 8 {
		for r := range hs {
			k0, k1 := htRawKey(src, r, 8)
			binary.LittleEndian.PutUint64(dst[r*9:], k0)
			dst[r*9+8] = byte(k1)
			hs[r] = htMix(k0, uint64(k1), 9)
		}
		return true
	}
	for r := range hs {
		k0, _ := htRawKey(src, r, 4)
		dst[r*5] = byte(k0)
		binary.LittleEndian.PutUint32(dst[r*5+1:], uint32(k0>>8))
		hs[r] = htMix(k0, 0, 5)
	}
	return true
}

// htRawKey is the encoded key of row r's value in a column of w-byte
// values, as htInlineKey loads it: a 1 tag, then the value's bytes.
func htRawKey(src []byte, r, w int) (uint64, uint32) {
	if w == 8 {
		v := binary.LittleEndian.Uint64(src[r*8:])
		return 1 | v<<8, uint32(v >> 56)
	}
	return 1 | uint64(binary.LittleEndian.Uint32(src[r*4:]))<<8, 0
}

func htStorageOf(c arrow.Array) arrow.Array {
	if x, ok := c.(array.ExtensionArray); ok {
		return x.Storage()
	}
	return c
}

// htFixedBytes returns the value buffer of a fixed-width array, starting at
// its first value, or nil for booleans and NULL arrays.
func htFixedBytes(c arrow.Array, w int) []byte {
	d := c.Data()
	if w == 0 || c.DataType().ID() == arrow.BOOL || len(d.Buffers()) < 2 || d.Buffers()[1] == nil {
		return nil
	}
	return d.Buffers()[1].Bytes()[d.Offset()*w:]
}

// htEncodeFixed writes column c at byte off of every stride-wide row.
func htEncodeFixed(c arrow.Array, w int, dst []byte, stride, off int, out *RowKeys) {
	c = htStorageOf(c)
	n := c.Len()
	if c.DataType().ID() == arrow.NULL {
		for r := 0; r < n; r++ {
			dst[r*stride+off] = 0
			out.Null[r] = true
		}
		out.AnyNull = out.AnyNull || n > 0
		return
	}
	hasNulls := c.NullN() > 0
	if c.DataType().ID() == arrow.BOOL {
		b := c.(*array.Boolean)
		for r := 0; r < n; r++ {
			p := r*stride + off
			if hasNulls && b.IsNull(r) {
				dst[p], dst[p+1] = 0, 0
				out.Null[r] = true
				out.AnyNull = true
				continue
			}
			dst[p] = 1
			if b.Value(r) {
				dst[p+1] = 1
			} else {
				dst[p+1] = 0
			}
		}
		return
	}
	src := htFixedBytes(c, w)
	for r := 0; r < n; r++ {
		p := r*stride + off
		if hasNulls && c.IsNull(r) {
			dst[p] = 0
			clear(dst[p+1 : p+1+w])
			out.Null[r] = true
			out.AnyNull = true
			continue
		}
		dst[p] = 1
		htCopyValue(dst[p+1:], src, r, w)
	}
	htCanonicalizeFloats(c, dst, stride, off, nil)
}

// htEncodeFixedAt is htEncodeFixed for variable-width rows: it writes at the
// per-row cursors pos and advances them.
func htEncodeFixedAt(c arrow.Array, w int, dst []byte, pos []int, out *RowKeys) {
	c = htStorageOf(c)
	n := c.Len()
	if c.DataType().ID() == arrow.NULL {
		for r := 0; r < n; r++ {
			dst[pos[r]] = 0
			pos[r]++
			out.Null[r] = true
		}
		out.AnyNull = out.AnyNull || n > 0
		return
	}
	hasNulls := c.NullN() > 0
	isBool := c.DataType().ID() == arrow.BOOL
	src := htFixedBytes(c, w)
	for r := 0; r < n; r++ {
		p := pos[r]
		pos[r] += 1 + w
		if hasNulls && c.IsNull(r) {
			dst[p] = 0
			clear(dst[p+1 : p+1+w])
			out.Null[r] = true
			out.AnyNull = true
			continue
		}
		dst[p] = 1
		if isBool {
			dst[p+1] = 0
			if c.(*array.Boolean).Value(r) {
				dst[p+1] = 1
			}
			continue
		}
		htCopyValue(dst[p+1:], src, r, w)
	}
	if !isBool {
		htCanonicalizeFloats(c, dst, 0, 0, pos)
	}
}

// htCanonicalizeFloats rewrites -0.0 as 0.0 and every NaN as one NaN, and
// an interval as its span (htIntervalSpan), so that values equal under
// grouping have equal bytes. With pos nil the value of row r starts at
// r*stride+off+1; else it ends at pos[r].
func htCanonicalizeFloats(c arrow.Array, dst []byte, stride, off int, pos []int) {
	switch c.DataType().ID() {
	case arrow.INTERVAL_MONTH_DAY_NANO:
		for r := 0; r < c.Len(); r++ {
			p := r*stride + off + 1
			if pos != nil {
				p = pos[r] - 16
			}
			if dst[p-1] != 0 {
				htIntervalSpan(dst[p : p+16])
			}
		}
	case arrow.FLOAT64:
		for r := 0; r < c.Len(); r++ {
			p := r*stride + off + 1
			if pos != nil {
				p = pos[r] - 8
			}
			if dst[p-1] == 0 {
				continue
			}
			v := math.Float64frombits(binary.LittleEndian.Uint64(dst[p:]))
			if v == 0 {
				binary.LittleEndian.PutUint64(dst[p:], 0)
			} else if v != v {
				binary.LittleEndian.PutUint64(dst[p:], 0x7ff8000000000001)
			}
		}
	case arrow.FLOAT32:
		for r := 0; r < c.Len(); r++ {
			p := r*stride + off + 1
			if pos != nil {
				p = pos[r] - 4
			}
			if dst[p-1] == 0 {
				continue
			}
			v := math.Float32frombits(binary.LittleEndian.Uint32(dst[p:]))
			if v == 0 {
				binary.LittleEndian.PutUint32(dst[p:], 0)
			} else if v != v {
				binary.LittleEndian.PutUint32(dst[p:], 0x7fc00001)
			}
		}
	}
}

// htIntervalSpan rewrites an interval's 16 key bytes (months and days as
// int32, nanoseconds as int64) as the key '=' compares it by
// (intervalKey: a month is 30 days, a day 24 hours), so that grouping
// agrees with '=': '1 day' and '24 hours' are one key, as in PostgreSQL.
func htIntervalSpan(b []byte) {
	v := arrow.MonthDayNanoInterval{
		Months:      int32(binary.LittleEndian.Uint32(b)),
		Days:        int32(binary.LittleEndian.Uint32(b[4:])),
		Nanoseconds: int64(binary.LittleEndian.Uint64(b[8:])),
	}
	binary.LittleEndian.PutUint64(b, uint64(intervalKey(v)))
	clear(b[8:16])
}

// HashKey is the 64-bit hash of a row key that RowKeys computes and
// HashTable expects. Keys of up to 16 bytes (the fixed-width keys of one or
// two columns) get a short multiply-xorshift mix that the CPU finishes in a
// few cycles, so probes issue their loads early; longer keys get xxh3.
func HashKey(key []byte) uint64 {
	if len(key) > 16 {
		return xxh3.Hash(key)
	}
	if len(key) >= 8 {
		return htMix(binary.LittleEndian.Uint64(key), htTail(key[8:]), len(key))
	}
	return htMix(htTail(key), 0, len(key))
}

// htMix hashes a key of n <= 16 bytes loaded as two zero-padded words:
// two odd multiplies to combine the words, then the murmur3 finalizer,
// whose top bits (the slot index) depend on every input bit.
func htMix(k0, k1 uint64, n int) uint64 {
	h := k0*0x9E3779B97F4A7C15 ^ (k1+uint64(n))*0xC2B2AE3D27D4EB4F
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// htCopyValue copies value r of width w from src to the start of dst. The
// common widths compile to single moves instead of a memmove call.
func htCopyValue(dst, src []byte, r, w int) {
	switch w {
	case 8:
		*(*[8]byte)(dst) = *(*[8]byte)(src[r*8:])
	case 4:
		*(*[4]byte)(dst) = *(*[4]byte)(src[r*4:])
	case 16:
		*(*[16]byte)(dst) = *(*[16]byte)(src[r*16:])
	case 2:
		*(*[2]byte)(dst) = *(*[2]byte)(src[r*2:])
	case 1:
		dst[0] = src[r]
	default:
		copy(dst[:w], src[r*w:(r+1)*w])
	}
}

// htVarValue returns value r of a string or binary array.
func htVarValue(c arrow.Array, r int) []byte {
	switch a := c.(type) {
	case *array.String:
		return htUnsafeBytes(a.Value(r))
	case *array.Binary:
		return a.Value(r)
	case *array.LargeString:
		return htUnsafeBytes(a.Value(r))
	case *array.LargeBinary:
		return a.Value(r)
	}
	return nil
}

func htAddVarLens(c arrow.Array, lens []int) {
	c = htStorageOf(c)
	hasNulls := c.NullN() > 0
	if isNested(c.DataType()) {
		for r := range lens {
			if !hasNulls || !c.IsNull(r) {
				lens[r] += keyValueLen(c, r)
			}
		}
		return
	}
	for r := range lens {
		if hasNulls && c.IsNull(r) {
			continue
		}
		lens[r] += 4 + len(htVarValue(c, r))
	}
}

func htEncodeVar(c arrow.Array, dst []byte, pos []int, out *RowKeys) {
	c = htStorageOf(c)
	hasNulls := c.NullN() > 0
	nested := isNested(c.DataType())
	for r := range pos {
		p := pos[r]
		if hasNulls && c.IsNull(r) {
			dst[p] = 0
			pos[r]++
			out.Null[r] = true
			out.AnyNull = true
			continue
		}
		dst[p] = 1
		if nested {
			pos[r] = p + 1 + putKeyValue(dst[p+1:], c, r)
			continue
		}
		v := htVarValue(c, r)
		binary.LittleEndian.PutUint32(dst[p+1:], uint32(len(v)))
		copy(dst[p+5:], v)
		pos[r] = p + 5 + len(v)
	}
}

// htGrow returns b resized to n, reallocating with 25% headroom only when
// its capacity is short; the contents are not kept.
func htGrow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n, n+n/4)
	}
	return b[:n]
}

// htUnsafeBytes views a string's bytes without copying; the result must not
// be written.
func htUnsafeBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// Nested key values (lists, structs, maps) are encoded recursively: a
// list as a 4-byte element count then each element as a tag byte (0 for
// NULL) and its value; a struct as each field so; a map as its list of
// entries. Scalar values inside are encoded as at the top level (floats
// canonicalised), so equal nested values have equal bytes, and NULL
// elements equal each other, as PostgreSQL's array equality has it.

func isNested(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP, arrow.STRUCT:
		return true
	}
	return false
}

// keyElems returns the elements array and range of nested value i.
func keyElems(a arrow.Array, i int) (arrow.Array, int, int) {
	switch x := a.(type) {
	case array.ListLike:
		s, e := x.ValueOffsets(i)
		return x.ListValues(), int(s), int(e)
	}
	return nil, 0, 0
}

// keyElemLen is the encoded length of element i of a inside a nested
// value: its tag byte, then its value unless NULL.
func keyElemLen(a arrow.Array, i int) int {
	if !a.IsValid(i) {
		return 1
	}
	return 1 + keyValueLen(a, i)
}

// putKeyElem writes element i of a (tag byte, then the value unless
// NULL) and returns its length.
func putKeyElem(dst []byte, a arrow.Array, i int) int {
	if !a.IsValid(i) {
		dst[0] = 0
		return 1
	}
	dst[0] = 1
	return 1 + putKeyValue(dst[1:], a, i)
}

// keyValueLen is the encoded length of value i of a, which is not NULL.
func keyValueLen(a arrow.Array, i int) int {
	a = htStorageOf(a)
	t := a.DataType()
	switch {
	case t.ID() == arrow.STRUCT:
		st := a.(*array.Struct)
		n := 0
		for f := 0; f < st.NumField(); f++ {
			n += keyElemLen(st.Field(f), i)
		}
		return n
	case isNested(t):
		elems, s, e := keyElems(a, i)
		n := 4
		for k := s; k < e; k++ {
			n += keyElemLen(elems, k)
		}
		return n
	}
	if w, _ := htKeyValueWidth(t); w != 0 {
		return max(w, 0)
	}
	return 4 + len(htVarValue(a, i))
}

// putKeyValue writes value i of a (not NULL) at the start of dst and
// returns its length.
func putKeyValue(dst []byte, a arrow.Array, i int) int {
	a = htStorageOf(a)
	t := a.DataType()
	switch {
	case t.ID() == arrow.STRUCT:
		st := a.(*array.Struct)
		p := 0
		for f := 0; f < st.NumField(); f++ {
			p += putKeyElem(dst[p:], st.Field(f), i)
		}
		return p
	case isNested(t):
		elems, s, e := keyElems(a, i)
		binary.LittleEndian.PutUint32(dst, uint32(e-s))
		p := 4
		for k := s; k < e; k++ {
			p += putKeyElem(dst[p:], elems, k)
		}
		return p
	}
	w, _ := htKeyValueWidth(t)
	switch {
	case w < 0:
		return 0
	case t.ID() == arrow.BOOL:
		dst[0] = 0
		if a.(*array.Boolean).Value(i) {
			dst[0] = 1
		}
		return 1
	case w > 0:
		htCopyValue(dst, htFixedBytes(a, w), i, w)
		switch t.ID() {
		case arrow.INTERVAL_MONTH_DAY_NANO:
			htIntervalSpan(dst[:16])
		case arrow.FLOAT64:
			if v := math.Float64frombits(binary.LittleEndian.Uint64(dst)); v == 0 {
				binary.LittleEndian.PutUint64(dst, 0)
			} else if v != v {
				binary.LittleEndian.PutUint64(dst, 0x7ff8000000000001)
			}
		case arrow.FLOAT32:
			if v := math.Float32frombits(binary.LittleEndian.Uint32(dst)); v == 0 {
				binary.LittleEndian.PutUint32(dst, 0)
			} else if v != v {
				binary.LittleEndian.PutUint32(dst, 0x7fc00001)
			}
		}
		return w
	}
	v := htVarValue(a, i)
	binary.LittleEndian.PutUint32(dst, uint32(len(v)))
	copy(dst[4:], v)
	return 4 + len(v)
}
