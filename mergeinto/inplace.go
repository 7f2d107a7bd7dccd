package mergeinto

import (
	"math"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Updated rows in place. A copy-on-write MERGE whose row actions are all
// UPDATEs rewrites a batch as its rows in their own order, each updated
// row where it was: the columns no SET assigns are the input's arrays as
// they are, and each SET column is the input's copied whole with the
// updated rows' values written over it. Without this the batch became
// its kept rows gathered row by row (every column, for the 99% of rows a
// typical MERGE keeps) followed by the updated rows; the gather was a
// tenth of a copy-on-write MERGE's CPU. The rows are the same either
// way, so are the files' metrics; the order differs (in place keeps the
// file's).

// inPlace returns b rewritten with its updated rows in place (see above):
// upd are the updated-row batches of b and at[i] the rows of b that
// upd[i]'s rows replace. ok is false, nothing allocated, when it does not
// apply: some changed row is not an updated one, b has columns beyond the
// target's, or a SET column's type is not one patchColumn writes.
func (m *merger) inPlace(b arrow.RecordBatch, upd []arrow.RecordBatch, at [][]int32, changed int) (_ arrow.RecordBatch, ok bool, err error) {
	nt := m.p.target.NumFields()
	if int(b.NumCols()) != nt || !m.patching() {
		return nil, false, nil
	}
	var rows []int32
	for _, a := range at {
		rows = append(rows, a...)
	}
	if len(rows) != changed {
		return nil, false, nil
	}
	for _, c := range m.setCols {
		if !patchable(b.Column(c).DataType()) {
			return nil, false, nil
		}
	}
	// the replacement rows in row order: order[k] is the index, among
	// the updated rows of all upd in turn, of the k-th lowest row
	order := make([]int32, len(rows))
	for k := range order {
		order[k] = int32(k)
	}
	slices.SortFunc(order, func(x, y int32) int { return int(rows[x]) - int(rows[y]) })
	sorted := make([]int32, len(rows))
	for k, o := range order {
		sorted[k] = rows[o]
	}
	for k := 1; k < len(sorted); k++ {
		if sorted[k] == sorted[k-1] {
			return nil, false, nil // a row updated twice: not a MERGE's
		}
	}
	cols := make([]arrow.Array, nt)
	defer func() {
		if err != nil {
			releaseAll(cols)
		}
	}()
	isSet := make([]bool, nt)
	for _, c := range m.setCols {
		isSet[c] = true
	}
	for c := range nt {
		if !isSet[c] {
			cols[c] = b.Column(c)
			cols[c].Retain()
			continue
		}
		parts := make([]arrow.Array, len(upd))
		for i, u := range upd {
			parts[i] = u.Column(c)
		}
		var all arrow.Array
		if len(parts) == 1 {
			all = parts[0]
			all.Retain()
		} else if all, err = array.Concatenate(parts, m.opts.Mem); err != nil {
			return nil, false, err
		}
		vals, err := takeCols(m.ec.Ctx, []arrow.Array{all}, order)
		all.Release()
		if err != nil {
			return nil, false, err
		}
		var ok bool
		cols[c], ok = patchColumn(m.opts.Mem, b.Column(c), sorted, vals[0])
		vals[0].Release()
		if !ok {
			releaseAll(cols)
			return nil, false, nil
		}
	}
	return newBatch(b.Schema(), cols, b.NumRows()), true, nil
}

// patchable reports whether patchColumn writes columns of type dt: the
// flat types the engine's take gathers, but booleans.
func patchable(dt arrow.DataType) bool {
	return dt.ID() != arrow.BOOL && engineTakes(dt)
}

// patchColumn returns a copy of base with row rows[k] (ascending, each
// once) holding vals' k-th value. base's type is patchable, vals's the
// same. ok is false, nothing allocated, when the strings would pass the
// 2 GiB a string array's 32-bit offsets address.
func patchColumn(mem memory.Allocator, base arrow.Array, rows []int32, vals arrow.Array) (_ arrow.Array, ok bool) {
	n := base.Len()
	var size int64 // of the strings, for string and binary columns
	if id := base.DataType().ID(); id == arrow.STRING || id == arrow.BINARY {
		bo, _ := binaryParts(base)
		vo, _ := binaryParts(vals)
		size = int64(bo[n] - bo[0])
		for k, r := range rows {
			size += int64(vo[k+1]-vo[k]) - int64(bo[r+1]-bo[r])
		}
		if size > math.MaxInt32 {
			return nil, false
		}
	}
	var valid *memory.Buffer
	if base.NullN() > 0 || vals.NullN() > 0 {
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		vb := valid.Bytes()
		if bits := base.NullBitmapBytes(); base.NullN() > 0 && bits != nil {
			bitutil.CopyBitmap(bits, base.Data().Offset(), n, vb, 0)
		} else {
			bitutil.SetBitsTo(vb, 0, int64(n), true)
		}
		for k, r := range rows {
			bitutil.SetBitTo(vb, int(r), vals.IsValid(k))
		}
	}
	var bufs []*memory.Buffer
	switch base.DataType().ID() {
	case arrow.STRING, arrow.BINARY:
		bufs = patchBinary(mem, base, rows, vals, int(size))
	default:
		switch base.DataType().(arrow.FixedWidthDataType).BitWidth() {
		case 8:
			bufs = patchFixed[uint8](mem, base, rows, vals)
		case 16:
			bufs = patchFixed[uint16](mem, base, rows, vals)
		case 32:
			bufs = patchFixed[uint32](mem, base, rows, vals)
		case 64:
			bufs = patchFixed[uint64](mem, base, rows, vals)
		default:
			bufs = patchFixed[[2]uint64](mem, base, rows, vals)
		}
	}
	nulls := 0
	if valid != nil {
		nulls = array.UnknownNullCount
	}
	d := array.NewData(base.DataType(), n, append([]*memory.Buffer{valid}, bufs...), nil, nulls, 0)
	defer d.Release()
	if valid != nil {
		valid.Release()
	}
	for _, b := range bufs {
		b.Release()
	}
	return array.MakeFromData(d), true
}

// fixedValues views a fixed-width array's values as []T.
func fixedValues[T uint8 | uint16 | uint32 | uint64 | [2]uint64](a arrow.Array) []T {
	d := a.Data()
	buf := d.Buffers()[1]
	if buf == nil || d.Len() == 0 {
		return make([]T, d.Len())
	}
	var zero T
	b := buf.Bytes()
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(zero)))[d.Offset() : d.Offset()+d.Len()]
}

func patchFixed[T uint8 | uint16 | uint32 | uint64 | [2]uint64](mem memory.Allocator, base arrow.Array, rows []int32, vals arrow.Array) []*memory.Buffer {
	var zero T
	n := base.Len()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(unsafe.Sizeof(zero)))
	if n == 0 {
		return []*memory.Buffer{buf}
	}
	b := buf.Bytes()
	dst := unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
	copy(dst, fixedValues[T](base))
	v := fixedValues[T](vals)
	for k, r := range rows {
		dst[r] = v[k]
	}
	return []*memory.Buffer{buf}
}

// patchBinary is patchColumn's string and binary case; size is the
// patched column's string bytes.
func patchBinary(mem memory.Allocator, base arrow.Array, rows []int32, vals arrow.Array, size int) []*memory.Buffer {
	bo, bd := binaryParts(base)
	vo, vd := binaryParts(vals)
	n := base.Len()
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((n + 1) * 4)
	offs := unsafe.Slice((*int32)(unsafe.Pointer(&offBuf.Bytes()[0])), n+1)
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(size)
	data := dataBuf.Bytes()
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
		pos += int32(copy(data[pos:], bd[bo[prev]:bo[upTo]]))
		prev = upTo
	}
	for k, r := range rows {
		run(int(r))
		offs[r] = pos
		pos += int32(copy(data[pos:], vd[vo[k]:vo[k+1]]))
		prev = int(r) + 1
	}
	run(n)
	offs[n] = pos
	return []*memory.Buffer{offBuf, dataBuf}
}

// binaryParts returns a string or binary array's offsets (len+1 of them,
// from its first row) and its data buffer.
func binaryParts(a arrow.Array) ([]int32, []byte) {
	d := a.Data()
	var offs []int32
	if ob := d.Buffers()[1]; ob != nil && ob.Len() > 0 {
		b := ob.Bytes()
		offs = unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4)[d.Offset() : d.Offset()+d.Len()+1]
	} else {
		offs = make([]int32, d.Len()+1)
	}
	var data []byte
	if db := d.Buffers()[2]; db != nil {
		data = db.Bytes()
	}
	return offs, data
}
