package exec

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// skGather builds one array from rows of several arrays of type dt:
// element i of the result is row refs[i].r of srcs[refs[i].b]. Sort, the
// spill merge, top-N and Window use it to assemble output batches from
// rows scattered over many input batches.
func skGather(mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []skRef) (arrow.Array, error) {
	n := len(refs)
	if ext, ok := dt.(arrow.ExtensionType); ok {
		storage := make([]arrow.Array, len(srcs))
		for i, s := range srcs {
			if s != nil {
				storage[i] = s.(array.ExtensionArray).Storage()
			}
		}
		st, err := skGather(mem, ext.StorageType(), storage, refs)
		if err != nil {
			return nil, err
		}
		defer st.Release()
		return array.NewExtensionArrayWithStorage(ext, st), nil
	}
	valid, nulls := skGatherValidity(mem, srcs, refs)
	switch dt.ID() {
	case arrow.NULL:
		if valid != nil {
			valid.Release()
		}
		return array.NewNull(n), nil
	case arrow.BOOL:
		buf := skNewBitmap(mem, n)
		out := buf.Bytes()
		arrs := make([]*array.Boolean, len(srcs))
		for i, s := range srcs {
			if s != nil {
				arrs[i] = s.(*array.Boolean)
			}
		}
		for i, r := range refs {
			if arrs[r.b].Value(int(r.r)) {
				bitutil.SetBit(out, i)
			}
		}
		return skMakeArray(dt, n, valid, nulls, buf), nil
	case arrow.INT8, arrow.UINT8:
		return skGatherFixed[uint8](mem, dt, srcs, refs, valid, nulls), nil
	case arrow.INT16, arrow.UINT16:
		return skGatherFixed[uint16](mem, dt, srcs, refs, valid, nulls), nil
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32, arrow.INTERVAL_MONTHS:
		return skGatherFixed[uint32](mem, dt, srcs, refs, valid, nulls), nil
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION, arrow.INTERVAL_DAY_TIME:
		return skGatherFixed[uint64](mem, dt, srcs, refs, valid, nulls), nil
	case arrow.DECIMAL128, arrow.INTERVAL_MONTH_DAY_NANO:
		return skGatherFixed[decimal128.Num](mem, dt, srcs, refs, valid, nulls), nil
	case arrow.FIXED_SIZE_BINARY:
		w := dt.(*arrow.FixedSizeBinaryType).ByteWidth
		buf := memory.NewResizableBuffer(mem)
		buf.Resize(n * w)
		out := buf.Bytes()
		datas := make([][]byte, len(srcs))
		for i, s := range srcs {
			if s != nil && s.Data().Buffers()[1] != nil {
				datas[i] = s.Data().Buffers()[1].Bytes()[s.Data().Offset()*w:]
			}
		}
		for i, r := range refs {
			if d := datas[r.b]; d != nil {
				copy(out[i*w:i*w+w], d[int(r.r)*w:])
			}
		}
		return skMakeArray(dt, n, valid, nulls, buf), nil
	case arrow.STRING, arrow.BINARY:
		var v skBytesVals
		for _, s := range srcs {
			if s == nil {
				v.offs, v.data = append(v.offs, nil), append(v.data, nil)
				continue
			}
			v.add(s)
		}
		total := 0
		for _, r := range refs {
			o := v.offs[r.b]
			total += int(o[r.r+1] - o[r.r])
		}
		if total > 1<<31-1 {
			if valid != nil {
				valid.Release()
			}
			return nil, fmt.Errorf("exec: a batch of %d rows holds more than 2 GiB of %s data", n, dt)
		}
		offBuf := memory.NewResizableBuffer(mem)
		offBuf.Resize((n + 1) * 4)
		offs := arrow.GetData[int32](offBuf.Bytes())[:n+1]
		dataBuf := memory.NewResizableBuffer(mem)
		dataBuf.Resize(total)
		data := dataBuf.Bytes()
		pos := int32(0)
		for i, r := range refs {
			offs[i] = pos
			pos += int32(copy(data[pos:], v.at(r.b, r.r)))
		}
		offs[n] = pos
		return skMakeArray(dt, n, valid, nulls, offBuf, dataBuf), nil
	case arrow.DICTIONARY:
		if a := skGatherDict(mem, dt, srcs, refs, valid, nulls); a != nil {
			return a, nil
		}
	}
	if valid != nil {
		valid.Release()
	}
	return skGatherFallback(mem, srcs, refs)
}

// skGatherDict gathers dictionary arrays with Int32 indices that share
// one dictionary (a scan's batches of one row group, filtered: exec's only
// dictionary arrays, TableScan.SetDictionary) by their indices, the
// dictionary kept; nil, with valid untouched, for any others.
func skGatherDict(mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []skRef, valid *memory.Buffer, nulls int) arrow.Array {
	if dt.(*arrow.DictionaryType).IndexType.ID() != arrow.INT32 {
		return nil
	}
	var dict arrow.ArrayData
	idx := make([]arrow.Array, len(srcs))
	for i, s := range srcs {
		if s == nil {
			continue
		}
		d, ok := s.(*array.Dictionary)
		if !ok || d.Indices().DataType().ID() != arrow.INT32 || dict != nil && d.Dictionary().Data() != dict {
			return nil
		}
		dict = d.Dictionary().Data()
		idx[i] = d.Indices()
	}
	if dict == nil {
		return nil
	}
	ia := skGatherFixed[uint32](mem, arrow.PrimitiveTypes.Int32, idx, refs, valid, nulls)
	defer ia.Release()
	d := array.NewDataWithDictionary(dt, len(refs), ia.Data().Buffers(), nulls, 0, dict.(*array.Data))
	defer d.Release()
	return array.MakeFromData(d)
}

// skGatherFallback handles types without a fast path (nested types) by
// concatenating the sources and taking.
func skGatherFallback(mem memory.Allocator, srcs []arrow.Array, refs []skRef) (arrow.Array, error) {
	base := make([]int64, len(srcs))
	var parts []arrow.Array
	var at int64
	for i, s := range srcs {
		base[i] = at
		if s != nil {
			parts = append(parts, s)
			at += int64(s.Len())
		}
	}
	all, err := array.Concatenate(parts, mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	ib.Reserve(len(refs))
	for _, r := range refs {
		ib.UnsafeAppend(base[r.b] + int64(r.r))
	}
	idx := ib.NewArray()
	defer idx.Release()
	return compute.TakeArray(compute.WithAllocator(context.Background(), mem), all, idx)
}

func skGatherFixed[T uint8 | uint16 | uint32 | uint64 | decimal128.Num](mem memory.Allocator, dt arrow.DataType, srcs []arrow.Array, refs []skRef, valid *memory.Buffer, nulls int) arrow.Array {
	n := len(refs)
	var zero T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(unsafe.Sizeof(zero)))
	out := arrow.GetData[T](buf.Bytes())[:n]
	vals := make([][]T, len(srcs))
	for i, s := range srcs {
		if s != nil {
			vals[i] = arrow.GetValues[T](s.Data(), 1)
		}
	}
	for i, r := range refs {
		if v := vals[r.b]; v != nil {
			out[i] = v[r.r]
		} else {
			out[i] = zero
		}
	}
	return skMakeArray(dt, n, valid, nulls, buf)
}

// skGatherValidity returns the gathered validity bitmap, or nil when no
// gathered row is NULL.
func skGatherValidity(mem memory.Allocator, srcs []arrow.Array, refs []skRef) (*memory.Buffer, int) {
	anyNull := false
	for _, s := range srcs {
		if s != nil && s.NullN() > 0 {
			anyNull = true
			break
		}
	}
	if !anyNull {
		return nil, 0
	}
	buf := skNewBitmap(mem, len(refs))
	out := buf.Bytes()
	nulls := 0
	for i, r := range refs {
		if srcs[r.b].IsValid(int(r.r)) {
			bitutil.SetBit(out, i)
		} else {
			nulls++
		}
	}
	if nulls == 0 {
		buf.Release()
		return nil, 0
	}
	return buf, nulls
}

func skNewBitmap(mem memory.Allocator, n int) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	clear(buf.Bytes())
	return buf
}

// skMakeArray wraps new buffers in an array, taking over their references.
func skMakeArray(dt arrow.DataType, n int, valid *memory.Buffer, nulls int, bufs ...*memory.Buffer) arrow.Array {
	all := append([]*memory.Buffer{valid}, bufs...)
	data := array.NewData(dt, n, all, nil, nulls, 0)
	for _, b := range all {
		if b != nil {
			b.Release()
		}
	}
	defer data.Release()
	return array.MakeFromData(data)
}

// skGatherBatch gathers every column of schema from a list of batches.
// cols limits the output to the first cols columns of each batch.
func skGatherBatch(mem memory.Allocator, schema *arrow.Schema, batches []arrow.RecordBatch, refs []skRef) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	srcs := make([]arrow.Array, len(batches))
	for c := range cols {
		for i, b := range batches {
			if b != nil {
				srcs[i] = b.Column(c)
			} else {
				srcs[i] = nil
			}
		}
		a, err := skGather(mem, schema.Field(c).Type, srcs, refs)
		if err != nil {
			releaseArrays(cols)
			return nil, err
		}
		cols[c] = a
	}
	out := array.NewRecordBatch(schema, cols, int64(len(refs)))
	releaseArrays(cols)
	return out, nil
}
