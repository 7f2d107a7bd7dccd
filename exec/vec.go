package exec

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// This file holds the low-level array helpers every kernel shares: typed
// views of fixed-width and variable-width arrays, validity bitmaps, and a
// take (gather) that works on every canonical type. Kernels work on whole
// arrays through these views so that inner loops touch Go slices only.
//
// arrow-go's compute package is not used: importing it pulls modules that
// go.sum does not list, and its error texts are not Postgres's anyway.

// values returns the fixed-width values of a, honouring its offset.
func values[T arrow.FixedWidthType](a arrow.Array) []T {
	d := a.Data()
	bufs := d.Buffers()
	if d.Len() == 0 {
		return nil
	}
	if len(bufs) < 2 || bufs[1] == nil {
		// some producers omit the values of an all-NULL column; kernels
		// index every row, so give them zeros rather than a panic
		return make([]T, d.Len())
	}
	v := arrow.GetData[T](bufs[1].Bytes())
	return v[d.Offset() : d.Offset()+d.Len()]
}

// newFixed allocates a buffer of n values of T. The caller writes every
// slot, including those under nulls, so the buffer is not cleared.
func newFixed[T arrow.FixedWidthType](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var zero T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(unsafe.Sizeof(zero)))
	if n == 0 {
		return buf, nil
	}
	return buf, arrow.GetData[T](buf.Bytes())[:n]
}

// newBitmap allocates a zeroed bitmap of n bits.
func newBitmap(mem memory.Allocator, n int) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	clear(buf.Bytes())
	return buf
}

// makeArray wraps freshly built buffers into an array and drops the
// caller's references to them. valid may be nil (no nulls); nulls may be
// array.UnknownNullCount.
func makeArray(dt arrow.DataType, n int, valid *memory.Buffer, nulls int, bufs ...*memory.Buffer) arrow.Array {
	if valid == nil {
		nulls = 0
	}
	all := append([]*memory.Buffer{valid}, bufs...)
	data := array.NewData(dt, n, all, nil, nulls, 0)
	out := array.MakeFromData(data)
	data.Release()
	for _, b := range all {
		if b != nil {
			b.Release()
		}
	}
	return out
}

// hasNulls reports whether a may contain a null (an arrow.Null array always
// does).
func hasNulls(a arrow.Array) bool {
	return a.NullN() > 0 || a.DataType().ID() == arrow.NULL
}

// validBits returns a's validity bitmap and offset, or nil when a has no
// nulls.
func validBits(a arrow.Array) ([]byte, int) {
	if a.NullN() == 0 {
		return nil, 0
	}
	return a.NullBitmapBytes(), a.Data().Offset()
}

// andValidity returns the intersection of the validity of arrs, or nil
// when none has a null. A row of the result is valid only when it is valid
// in every input: the rule for every strict (NULL in, NULL out) kernel.
func andValidity(mem memory.Allocator, n int, arrs ...arrow.Array) *memory.Buffer {
	var out *memory.Buffer
	for _, a := range arrs {
		if a == nil || !hasNulls(a) {
			continue // nil is a constant operand, never NULL
		}
		if a.DataType().ID() == arrow.NULL || a.NullN() == a.Len() {
			if out != nil {
				out.Release()
			}
			return newBitmap(mem, n) // all null
		}
		bits, off := validBits(a)
		if out == nil {
			out = newBitmap(mem, n)
			bitutil.CopyBitmap(bits, off, n, out.Bytes(), 0)
			continue
		}
		bitutil.BitmapAnd(out.Bytes(), bits, 0, int64(off), out.Bytes(), 0, int64(n))
	}
	return out
}

// isValid reports whether row i is valid under bitmap bits (nil = all).
func isValid(bits []byte, i int) bool {
	return bits == nil || bitutil.BitIsSet(bits, i)
}

// strView is a zero-copy view of a String or Binary array.
type strView struct {
	offs []int32
	data []byte
}

func newStrView(a arrow.Array) strView {
	d := a.Data()
	bufs := d.Buffers()
	var v strView
	if d.Len() == 0 {
		v.offs = []int32{0}
		return v
	}
	if len(bufs) < 2 || bufs[1] == nil {
		v.offs = make([]int32, d.Len()+1) // all empty (see values)
		return v
	}
	v.offs = arrow.GetData[int32](bufs[1].Bytes())[d.Offset() : d.Offset()+d.Len()+1]
	if bufs[2] != nil {
		v.data = bufs[2].Bytes()
	}
	return v
}

func (v strView) at(i int) []byte { return v.data[v.offs[i]:v.offs[i+1]] }

// str returns row i as a string without copying; the result must not
// outlive the array.
func (v strView) str(i int) string {
	b := v.at(i)
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// bytesLen is the number of data bytes the view spans.
func (v strView) bytesLen() int { return int(v.offs[len(v.offs)-1] - v.offs[0]) }

// newStringBuilder returns a builder for n strings of about dataLen bytes.
func newStringBuilder(mem memory.Allocator, dt arrow.BinaryDataType, n, dataLen int) *array.BinaryBuilder {
	b := array.NewBinaryBuilder(mem, dt)
	b.Reserve(n)
	if dataLen > 0 {
		b.ReserveData(dataLen)
	}
	return b
}

// boolOut builds a boolean array bit by bit.
type boolOut struct {
	vals  *memory.Buffer
	valid *memory.Buffer
	vb    []byte
	nb    []byte
}

func newBoolOut(mem memory.Allocator, n int, withValid bool) *boolOut {
	o := &boolOut{vals: newBitmap(mem, n)}
	o.vb = o.vals.Bytes()
	if withValid {
		o.valid = newBitmap(mem, n)
		o.nb = o.valid.Bytes()
	}
	return o
}

func (o *boolOut) set(i int, v bool) {
	if v {
		bitutil.SetBit(o.vb, i)
	}
	if o.nb != nil {
		bitutil.SetBit(o.nb, i)
	}
}

func (o *boolOut) finish(n int) arrow.Array {
	return makeArray(arrow.FixedWidthTypes.Boolean, n, o.valid, array.UnknownNullCount, o.vals)
}

// boolBits returns the value bitmap and offset of a boolean array.
func boolBits(a arrow.Array) ([]byte, int) {
	d := a.Data()
	if len(d.Buffers()) < 2 || d.Buffers()[1] == nil {
		return make([]byte, bitutil.BytesForBits(int64(d.Len()))), 0 // see values
	}
	return d.Buffers()[1].Bytes(), d.Offset()
}

// nullArray returns n NULLs of type dt.
func nullArray(mem memory.Allocator, dt arrow.DataType, n int) arrow.Array {
	return array.MakeArrayOfNull(mem, dt, n)
}

// Take is takeArray for other packages: a[idx[0]], a[idx[1]], ... as a
// new array allocated from mem, NULL for an index of -1.
func Take(mem memory.Allocator, a arrow.Array, idx []int32) (arrow.Array, error) {
	return takeArray(mem, a, idx)
}

// takeArray gathers a[idx[0]], a[idx[1]], ... into a new array. An index
// of -1 yields NULL. It is the engine's own take because arrow-go's
// compute package is not available (see the top of this file).
func takeArray(mem memory.Allocator, a arrow.Array, idx []int32) (arrow.Array, error) {
	n := len(idx)
	dt := a.DataType()
	if ext, ok := dt.(arrow.ExtensionType); ok {
		storage := a.(array.ExtensionArray).Storage()
		s, err := takeArray(mem, storage, idx)
		if err != nil {
			return nil, err
		}
		defer s.Release()
		return array.NewExtensionArrayWithStorage(ext, s), nil
	}
	if dt.ID() == arrow.NULL {
		return array.NewNull(n), nil
	}
	// validity
	bits, off := validBits(a)
	var valid *memory.Buffer
	hasMissing := false
	for _, j := range idx {
		if j < 0 {
			hasMissing = true
			break
		}
	}
	if bits != nil || hasMissing {
		valid = newBitmap(mem, n)
		vb := valid.Bytes()
		for i, j := range idx {
			if j >= 0 && (bits == nil || bitutil.BitIsSet(bits, off+int(j))) {
				bitutil.SetBit(vb, i)
			}
		}
	}
	switch dt.ID() {
	case arrow.BOOL:
		vals := newBitmap(mem, n)
		src, soff := boolBits(a)
		vb := vals.Bytes()
		for i, j := range idx {
			if j >= 0 && bitutil.BitIsSet(src, soff+int(j)) {
				bitutil.SetBit(vb, i)
			}
		}
		return makeArray(dt, n, valid, array.UnknownNullCount, vals), nil
	case arrow.STRING, arrow.BINARY:
		v := newStrView(a)
		total := 0
		for _, j := range idx {
			if j >= 0 {
				total += int(v.offs[j+1] - v.offs[j])
			}
		}
		offBuf, offs := newFixed[int32](mem, n+1)
		dataBuf := memory.NewResizableBuffer(mem)
		dataBuf.Resize(total)
		data := dataBuf.Bytes()
		pos := int32(0)
		for i, j := range idx {
			offs[i] = pos
			if j >= 0 {
				pos += int32(copy(data[pos:], v.at(int(j))))
			}
		}
		offs[n] = pos
		return makeArray(dt, n, valid, array.UnknownNullCount, offBuf, dataBuf), nil
	}
	fw, ok := dt.(arrow.FixedWidthDataType)
	if !ok {
		if valid != nil {
			valid.Release()
		}
		if dt.ID() == arrow.STRING_VIEW || dt.ID() == arrow.BINARY_VIEW {
			return nil, fmt.Errorf("exec: take does not support type %s (planner bug)", dt)
		}
		return takeNested(mem, a, idx)
	}
	switch fw.BitWidth() {
	case 8:
		return takeFixed[uint8](mem, a, idx, valid), nil
	case 16:
		return takeFixed[uint16](mem, a, idx, valid), nil
	case 32:
		return takeFixed[uint32](mem, a, idx, valid), nil
	case 64:
		return takeFixed[uint64](mem, a, idx, valid), nil
	case 128:
		return takeFixed[[2]uint64](mem, a, idx, valid), nil
	}
	if valid != nil {
		valid.Release()
	}
	return nil, fmt.Errorf("exec: take does not support type %s (planner bug)", dt)
}

// takeNested takes lists, structs, maps and the other nested types by
// concatenating slices of the runs of consecutive indices: nested
// columns are rare on hot paths (catalog relations, array_agg results),
// and slices share the child arrays.
func takeNested(mem memory.Allocator, a arrow.Array, idx []int32) (arrow.Array, error) {
	if len(idx) == 0 {
		return array.MakeArrayOfNull(mem, a.DataType(), 0), nil
	}
	var parts []arrow.Array
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for i := 0; i < len(idx); {
		j := i + 1
		if idx[i] < 0 {
			for j < len(idx) && idx[j] < 0 {
				j++
			}
			parts = append(parts, array.MakeArrayOfNull(mem, a.DataType(), j-i))
		} else {
			for j < len(idx) && idx[j] == idx[j-1]+1 {
				j++
			}
			parts = append(parts, array.NewSlice(a, int64(idx[i]), int64(idx[j-1])+1))
		}
		i = j
	}
	return array.Concatenate(parts, mem)
}

// fixed128 lets takeFixed move 16-byte values (decimals, intervals, UUIDs).
type fixed128 = [2]uint64

func takeFixed[T uint8 | uint16 | uint32 | uint64 | fixed128](mem memory.Allocator, a arrow.Array, idx []int32, valid *memory.Buffer) arrow.Array {
	n := len(idx)
	d := a.Data()
	var src []T
	if buf := d.Buffers()[1]; buf != nil && d.Len() > 0 {
		b := buf.Bytes()
		var zero T
		w := int(unsafe.Sizeof(zero))
		src = unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/w)[d.Offset() : d.Offset()+d.Len()]
	} else {
		src = make([]T, d.Len()) // values omitted by the producer (see values)
	}
	var zero T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(unsafe.Sizeof(zero)))
	var dst []T
	if n > 0 {
		b := buf.Bytes()
		dst = unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
	}
	for i, j := range idx {
		if j >= 0 {
			dst[i] = src[j]
		} else {
			dst[i] = zero
		}
	}
	return makeArray(a.DataType(), n, valid, array.UnknownNullCount, buf)
}

// Patch returns a copy of base with row rows[k] (ascending, each once)
// holding vals' k-th value, vals being of base's type: a copy of each
// buffer with the new values written over, where a take would gather
// every row. It handles strings, binaries and fixed-width types of 8 to
// 128 bits (not booleans); ok is false, nothing allocated, for other
// types and when the strings would pass the 2 GiB 32-bit offsets address.
func Patch(mem memory.Allocator, base arrow.Array, rows []int32, vals arrow.Array) (_ arrow.Array, ok bool) {
	n := base.Len()
	dt := base.DataType()
	var bufs []*memory.Buffer
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		if bufs, ok = patchBinary(mem, newStrView(base), rows, newStrView(vals)); !ok {
			return nil, false
		}
	case arrow.BOOL:
		return nil, false
	default:
		fw, isFixed := dt.(arrow.FixedWidthDataType)
		if !isFixed || dt.ID() == arrow.DICTIONARY {
			return nil, false
		}
		switch fw.BitWidth() {
		case 8:
			bufs = patchFixed[uint8](mem, base, rows, vals)
		case 16:
			bufs = patchFixed[uint16](mem, base, rows, vals)
		case 32:
			bufs = patchFixed[uint32](mem, base, rows, vals)
		case 64:
			bufs = patchFixed[uint64](mem, base, rows, vals)
		case 128:
			bufs = patchFixed[decimal128.Num](mem, base, rows, vals)
		default:
			return nil, false
		}
	}
	var valid *memory.Buffer
	if base.NullN() > 0 || vals.NullN() > 0 {
		valid = newBitmap(mem, n)
		vb := valid.Bytes()
		if bits, off := validBits(base); bits != nil {
			bitutil.CopyBitmap(bits, off, n, vb, 0)
		} else {
			bitutil.SetBitsTo(vb, 0, int64(n), true)
		}
		for k, r := range rows {
			bitutil.SetBitTo(vb, int(r), vals.IsValid(k))
		}
	}
	return makeArray(dt, n, valid, array.UnknownNullCount, bufs...), true
}

func patchFixed[T uint8 | uint16 | uint32 | uint64 | decimal128.Num](mem memory.Allocator, base arrow.Array, rows []int32, vals arrow.Array) []*memory.Buffer {
	buf, dst := newFixed[T](mem, base.Len())
	copy(dst, values[T](base))
	v := values[T](vals)
	for k, r := range rows {
		dst[r] = v[k]
	}
	return []*memory.Buffer{buf}
}

// patchBinary is Patch's string and binary case: the offsets and data
// of base with rows[k] holding val's k-th string; false when they would
// pass 2 GiB.
func patchBinary(mem memory.Allocator, base strView, rows []int32, val strView) ([]*memory.Buffer, bool) {
	n := len(base.offs) - 1
	size := int64(base.bytesLen())
	for k, r := range rows {
		size += int64(len(val.at(k))) - int64(len(base.at(int(r))))
	}
	if size > math.MaxInt32 {
		return nil, false
	}
	offBuf, offs := newFixed[int32](mem, n+1)
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(int(size))
	data := dataBuf.Bytes()
	bo := base.offs
	pos, prev := int32(0), 0
	// copy the rows [prev, upTo) of base as one run
	run := func(upTo int) {
		if upTo <= prev {
			return
		}
		shift := pos - bo[prev]
		for i := prev; i < upTo; i++ {
			offs[i] = bo[i] + shift
		}
		pos += int32(copy(data[pos:], base.data[bo[prev]:bo[upTo]]))
		prev = upTo
	}
	for k, r := range rows {
		run(int(r))
		offs[r] = pos
		pos += int32(copy(data[pos:], val.at(k)))
		prev = int(r) + 1
	}
	run(n)
	offs[n] = pos
	return []*memory.Buffer{offBuf, dataBuf}, true
}

// takeBatch gathers rows idx of every column of batch.
func takeBatch(mem memory.Allocator, batch arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, batch.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range cols {
		c, err := takeArray(mem, batch.Column(i), idx)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return array.NewRecordBatch(batch.Schema(), cols, int64(len(idx))), nil
}

// releaseAll releases every non-nil array.
func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

// constOf returns []T{v} when e is a non-NULL literal of Go type T, so a
// kernel can read a constant operand with index mask 0 (x[i&0] == x[0])
// instead of materialising a column of copies; nil otherwise.
func constOf[T arrow.FixedWidthType](e Expr) []T {
	if e == nil {
		return nil
	}
	v, ok := literalValue(e)
	if !ok {
		return nil
	}
	var x any
	switch s := v.(type) {
	case *scalar.Int8:
		x = s.Value
	case *scalar.Int16:
		x = s.Value
	case *scalar.Int32:
		x = s.Value
	case *scalar.Int64:
		x = s.Value
	case *scalar.Float32:
		x = s.Value
	case *scalar.Float64:
		x = s.Value
	case *scalar.Date32:
		x = s.Value
	case *scalar.Time64:
		x = s.Value
	case *scalar.Timestamp:
		x = s.Value
	}
	if t, ok := x.(T); ok {
		return []T{t}
	}
	return nil
}

// operand returns the values of one side of a binary kernel and the index
// mask to read them with: -1 for a column, 0 for a constant.
func operand[T arrow.FixedWidthType](a arrow.Array, c []T) ([]T, int) {
	if c != nil {
		return c, 0
	}
	return values[T](a), -1
}

// NormalizeBatch rebuilds the columns of b whose Go array type does not
// match their data type (newStringBuilder builds utf8 results with a
// binary builder, which yields *array.Binary), so that consumers can
// type-switch on *array.String. It shares the buffers; nothing is copied.
// It releases b when it returns a new batch.
//
// INVARIANT: every batch handed to iceberg-go's writers is normalized:
// its partitioned writer took a utf8 *array.Binary's values for bytes and
// filed rows of a truncate(W, col) partition under another.
func NormalizeBatch(b arrow.RecordBatch) arrow.RecordBatch {
	var cols []arrow.Array
	for i, c := range b.Columns() {
		if c.DataType().ID() == arrow.STRING {
			if _, ok := c.(*array.String); !ok {
				if cols == nil {
					cols = append([]arrow.Array(nil), b.Columns()...)
				}
				cols[i] = array.MakeFromData(c.Data())
				defer cols[i].Release()
			}
		}
	}
	if cols == nil {
		return b
	}
	out := array.NewRecordBatch(b.Schema(), cols, b.NumRows())
	b.Release()
	return out
}
