package exec

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// htAggState is the per-group state of one aggregate. Group ids are dense
// (HashTable ids); resize is called before ids >= the previous size appear.
type htAggState interface {
	resize(groups int)
	// update folds rows into their groups; args are Aggregate.inputs()
	// evaluated on the batch; sel, when non-nil, selects rows (FILTER and
	// DISTINCT).
	update(ctx context.Context, ids []int32, args []arrow.Array, sel []bool) error
	// finish returns the results of groups 0..groups-1.
	finish(ctx context.Context, groups int) (arrow.Array, error)
	bytes() int64
	// groupBytes is the fixed memory of one group's state (what resize
	// allocates per group); state that grows with the rows a group sees
	// is counted by bytes alone.
	groupBytes() int64
	release()
}

func newAggState(a *Aggregate, mem memory.Allocator) (htAggState, error) {
	var t arrow.DataType
	if len(a.Args) > 0 {
		t = a.Args[0].DataType()
	}
	switch a.kind {
	case aggCountStar, aggCount:
		return &htCount{star: a.kind == aggCountStar, mem: mem}, nil
	case aggSum, aggAvg:
		avg := a.kind == aggAvg
		switch t.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
			return &htSumInt{out: a.typ, avg: avg, mem: mem}, nil
		case arrow.FLOAT32, arrow.FLOAT64:
			return &htSumFloat{avg: avg, mem: mem}, nil
		case arrow.DECIMAL128:
			return &htSumDecimal{in: t.(*arrow.Decimal128Type), out: a.typ.(*arrow.Decimal128Type), avg: avg, mem: mem}, nil
		}
	case aggMin, aggMax:
		isMax := a.kind == aggMax
		switch t.ID() {
		case arrow.INT8:
			return newHTMinMax[int8](t, isMax, mem), nil
		case arrow.INT16:
			return newHTMinMax[int16](t, isMax, mem), nil
		case arrow.INT32, arrow.DATE32, arrow.TIME32:
			return newHTMinMax[int32](t, isMax, mem), nil
		case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
			return newHTMinMax[int64](t, isMax, mem), nil
		case arrow.UINT8:
			return newHTMinMax[uint8](t, isMax, mem), nil
		case arrow.UINT16:
			return newHTMinMax[uint16](t, isMax, mem), nil
		case arrow.UINT32:
			return newHTMinMax[uint32](t, isMax, mem), nil
		case arrow.UINT64:
			return newHTMinMax[uint64](t, isMax, mem), nil
		case arrow.FLOAT32:
			s := newHTMinMax[float32](t, isMax, mem)
			s.less = func(a, b float32) bool { return htFloatLess(float64(a), float64(b)) }
			return s, nil
		case arrow.FLOAT64:
			s := newHTMinMax[float64](t, isMax, mem)
			s.less = htFloatLess
			return s, nil
		case arrow.DECIMAL128:
			s := &htMinMax[decimal128.Num]{dt: t, isMax: isMax, mem: mem}
			s.less = func(a, b decimal128.Num) bool { return a.Less(b) }
			return s, nil
		case arrow.BOOL:
			return &htBool{and: !isMax, mem: mem}, nil
		case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY, arrow.EXTENSION:
			return &htMinMaxBytes{dt: t, isMax: isMax, mem: mem}, nil
		case arrow.LIST, arrow.MAP, arrow.STRUCT:
			return &htMinMaxNested{dt: t, isMax: isMax, mem: mem}, nil
		}
	case aggBoolAnd, aggBoolOr:
		return &htBool{and: a.kind == aggBoolAnd, mem: mem}, nil
	case aggStringAgg, aggArrayAgg, aggAnyValue:
		return &htCollect{agg: a, mem: mem}, nil
	}
	return nil, fmt.Errorf("%s: no implementation for %s (bug)", a, t)
}

// htFixedValues views the values of a fixed-width array as []T.
func htFixedValues[T any](a arrow.Array) []T {
	d := a.Data()
	if len(d.Buffers()) < 2 || d.Buffers()[1] == nil || d.Len() == 0 {
		return nil
	}
	b := d.Buffers()[1].Bytes()
	var z T
	all := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(z)))
	return all[d.Offset() : d.Offset()+d.Len()]
}

// htBitmap packs valid into a validity bitmap, or nil when all are valid.
func htBitmap(mem memory.Allocator, valid []bool) (*memory.Buffer, int) {
	nulls := 0
	for _, v := range valid {
		if !v {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(valid)))))
	bm := buf.Bytes()
	clear(bm)
	for i, v := range valid {
		if v {
			bitutil.SetBit(bm, i)
		}
	}
	return buf, nulls
}

// htBuildFixed makes an array of type dt from fixed-width values.
func htBuildFixed[T any](mem memory.Allocator, dt arrow.DataType, vals []T, valid []bool) arrow.Array {
	var z T
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vals))), len(vals)*int(unsafe.Sizeof(z)))
	vb := memory.NewResizableBuffer(mem)
	vb.Resize(len(raw))
	copy(vb.Bytes(), raw)
	nb, nulls := htBitmap(mem, valid)
	d := array.NewData(dt, len(vals), []*memory.Buffer{nb, vb}, nil, nulls, 0)
	vb.Release()
	if nb != nil {
		nb.Release()
	}
	defer d.Release()
	return array.MakeFromData(d)
}

func htGrowTo[T any](s []T, n int) []T {
	if len(s) >= n {
		return s
	}
	return append(s, make([]T, n-len(s))...)
}

// htCount is count(*) and count(x).
type htCount struct {
	star   bool
	counts []int64
	mem    memory.Allocator
}

func (s *htCount) resize(n int)      { s.counts = htGrowTo(s.counts, n) }
func (s *htCount) groupBytes() int64 { return 8 }
func (s *htCount) bytes() int64      { return int64(cap(s.counts)) * 8 }
func (s *htCount) release()          {}
func (s *htCount) update(_ context.Context, ids []int32, args []arrow.Array, sel []bool) error {
	var a arrow.Array
	if !s.star {
		a = args[0]
		if a.DataType().ID() == arrow.NULL {
			return nil // count(NULL): every value is NULL, whatever NullN says
		}
		if a.NullN() == 0 {
			a = nil
		}
	}
	if len(s.counts) == 1 && sel == nil {
		// one group (no GROUP BY): every id is 0
		n := int64(len(ids))
		if a != nil {
			n -= int64(a.NullN())
		}
		s.counts[0] += n
		return nil
	}
	if sel == nil && a == nil && htRunsOfIDs(ids) {
		// a run of one group adds its length (htRunsOfIDs)
		g, run := ids[0], 0
		for r, id := range ids {
			if id != g {
				s.counts[g] += int64(r - run)
				g, run = id, r
			}
		}
		s.counts[g] += int64(len(ids) - run)
		return nil
	}
	for r, g := range ids {
		if (sel == nil || sel[r]) && (a == nil || a.IsValid(r)) {
			s.counts[g]++
		}
	}
	return nil
}
func (s *htCount) finish(_ context.Context, n int) (arrow.Array, error) {
	return htBuildFixed(s.mem, arrow.PrimitiveTypes.Int64, s.counts[:n], nil), nil
}

// htSumInt sums integers exactly in 128 bits: sum and avg of integers.
type htSumInt struct {
	out arrow.DataType
	avg bool
	hi  []int64
	lo  []uint64
	cnt []int64
	mem memory.Allocator
}

func (s *htSumInt) resize(n int) {
	s.hi, s.lo, s.cnt = htGrowTo(s.hi, n), htGrowTo(s.lo, n), htGrowTo(s.cnt, n)
}
func (s *htSumInt) groupBytes() int64 { return 24 }
func (s *htSumInt) bytes() int64      { return int64(cap(s.hi)+cap(s.lo)+cap(s.cnt)) * 8 }
func (s *htSumInt) release()          {}

func htSumInts[T int8 | int16 | int32 | int64](s *htSumInt, a arrow.Array, ids []int32, sel []bool) {
	vs := htFixedValues[T](a)
	nulls := a.NullN() > 0
	if len(s.lo) == 1 && sel == nil && !nulls {
		// one group (no GROUP BY): every id is 0
		lo, hi := s.lo[0], s.hi[0]
		for _, x := range vs[:len(ids)] {
			v := int64(x)
			var c uint64
			lo, c = bits.Add64(lo, uint64(v), 0)
			hi += int64(c) + v>>63
		}
		s.lo[0], s.hi[0] = lo, hi
		s.cnt[0] += int64(len(ids))
		return
	}
	for r, g := range ids {
		if (sel != nil && !sel[r]) || (nulls && a.IsNull(r)) {
			continue
		}
		v := int64(vs[r])
		lo, c := bits.Add64(s.lo[g], uint64(v), 0)
		s.lo[g] = lo
		s.hi[g] += int64(c) + v>>63
		s.cnt[g]++
	}
}

func (s *htSumInt) update(_ context.Context, ids []int32, args []arrow.Array, sel []bool) error {
	switch a := args[0]; a.DataType().ID() {
	case arrow.INT8:
		htSumInts[int8](s, a, ids, sel)
	case arrow.INT16:
		htSumInts[int16](s, a, ids, sel)
	case arrow.INT32:
		htSumInts[int32](s, a, ids, sel)
	default:
		htSumInts[int64](s, a, ids, sel)
	}
	return nil
}

func (s *htSumInt) finish(_ context.Context, n int) (arrow.Array, error) {
	valid := make([]bool, n)
	for g := range valid {
		valid[g] = s.cnt[g] > 0
	}
	switch {
	case s.avg:
		vals := make([]float64, n)
		for g := range vals {
			if valid[g] {
				vals[g] = int128Float(s.hi[g], s.lo[g]) / float64(s.cnt[g])
			}
		}
		return htBuildFixed(s.mem, arrow.PrimitiveTypes.Float64, vals, valid), nil
	case s.out.ID() == arrow.INT64:
		vals := make([]int64, n)
		for g := range vals {
			if s.hi[g] != int64(s.lo[g])>>63 {
				return nil, fmt.Errorf("bigint out of range; cast the argument to bigint to sum it as numeric")
			}
			vals[g] = int64(s.lo[g])
		}
		return htBuildFixed(s.mem, s.out, vals, valid), nil
	default:
		vals := make([]decimal128.Num, n)
		for g := range vals {
			vals[g] = decimal128.New(s.hi[g], s.lo[g])
			if !vals[g].FitsInPrecision(38) {
				return nil, fmt.Errorf("numeric field overflow: the sum does not fit in decimal(38,0); cast the argument to double to sum it approximately")
			}
		}
		return htBuildFixed(s.mem, s.out, vals, valid), nil
	}
}

// int128Float is the two's-complement 128-bit integer hi:lo as a float.
// Adding float64(hi)·2⁶⁴ and float64(lo) would not do: for a small
// negative sum both halves round to ±2⁶⁴ and cancel to 0.
func int128Float(hi int64, lo uint64) float64 {
	if hi == int64(lo)>>63 {
		return float64(int64(lo)) // fits in 64 bits
	}
	return decimal128.New(hi, lo).ToFloat64(0)
}

// htSumFloat is sum and avg of floats, in float64.
type htSumFloat struct {
	avg  bool
	sums []float64
	cnt  []int64
	mem  memory.Allocator
}

func (s *htSumFloat) resize(n int)      { s.sums, s.cnt = htGrowTo(s.sums, n), htGrowTo(s.cnt, n) }
func (s *htSumFloat) groupBytes() int64 { return 16 }
func (s *htSumFloat) bytes() int64      { return int64(cap(s.sums)+cap(s.cnt)) * 8 }
func (s *htSumFloat) release()          {}
func (s *htSumFloat) update(_ context.Context, ids []int32, args []arrow.Array, sel []bool) error {
	a := args[0]
	nulls := a.NullN() > 0
	// the validity bits, read in place where a.IsNull was a call a row
	// (a tenth of a scan's profile over a column with NULLs,
	// BENCHMARKS.md, session 40)
	bm, off := a.NullBitmapBytes(), a.Data().Offset()
	if a.DataType().ID() == arrow.FLOAT32 {
		vs := htFixedValues[float32](a)
		for r, g := range ids {
			if (sel == nil || sel[r]) && !(nulls && !bitutil.BitIsSet(bm, off+r)) {
				s.sums[g] += float64(vs[r])
				s.cnt[g]++
			}
		}
		return nil
	}
	vs := htFixedValues[float64](a)
	if len(s.sums) == 1 && sel == nil && !nulls {
		// one group (no GROUP BY): every id is 0; the same additions in
		// the same order, without the per-row checks
		sum := s.sums[0]
		for _, v := range vs[:len(ids)] {
			sum += v
		}
		s.sums[0] = sum
		s.cnt[0] += int64(len(ids))
		return nil
	}
	if len(s.sums) == 1 && sel == nil {
		// one group, with NULLs
		sum, cnt := s.sums[0], int64(0)
		for r, v := range vs[:len(ids)] {
			if bitutil.BitIsSet(bm, off+r) {
				sum += v
				cnt++
			}
		}
		s.sums[0] = sum
		s.cnt[0] += cnt
		return nil
	}
	if sel == nil && !nulls && htRunsOfIDs(ids) {
		// runs of one group: its sum stays in a register through the run
		// (the same additions in the same order); a row at a time, each
		// addition waits for the last one's store to the same group
		sums, cnt := s.sums, s.cnt
		g, run := ids[0], 0
		sum := sums[g]
		for r, id := range ids {
			if id != g {
				sums[g] = sum
				cnt[g] += int64(r - run)
				g, run = id, r
				sum = sums[g]
			}
			sum += vs[r]
		}
		sums[g] = sum
		cnt[g] += int64(len(ids) - run)
		return nil
	}
	for r, g := range ids {
		if (sel == nil || sel[r]) && !(nulls && !bitutil.BitIsSet(bm, off+r)) {
			s.sums[g] += vs[r]
			s.cnt[g]++
		}
	}
	return nil
}

// htRunsOfIDs reports whether ids (a batch's groups, at least one) change
// at most once in 8 rows: long runs of one group, as a GROUP BY of a
// column that files store in clusters (an insert's rows, a sorted table)
// sees. Row by row, the update of a group waits for the last one's store
// to it; in runs, an aggregate keeps the group's state in registers. For
// ids that change more often a branch a row mispredicts.
func htRunsOfIDs(ids []int32) bool {
	changes := 0
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1] {
			changes++
		}
	}
	return len(ids) > 0 && changes*8 <= len(ids)
}
func (s *htSumFloat) finish(_ context.Context, n int) (arrow.Array, error) {
	vals := slices.Clone(s.sums[:n])
	valid := make([]bool, n)
	for g := range vals {
		valid[g] = s.cnt[g] > 0
		if s.avg && valid[g] {
			vals[g] /= float64(s.cnt[g])
		}
	}
	return htBuildFixed(s.mem, arrow.PrimitiveTypes.Float64, vals, valid), nil
}

// htSumDecimal is sum and avg of decimals, exact, failing past 38 digits.
type htSumDecimal struct {
	in, out *arrow.Decimal128Type
	avg     bool
	sums    []decimal128.Num
	cnt     []int64
	mem     memory.Allocator
}

func (s *htSumDecimal) resize(n int)      { s.sums, s.cnt = htGrowTo(s.sums, n), htGrowTo(s.cnt, n) }
func (s *htSumDecimal) groupBytes() int64 { return 24 }
func (s *htSumDecimal) bytes() int64      { return int64(cap(s.sums))*16 + int64(cap(s.cnt))*8 }
func (s *htSumDecimal) release()          {}

func (s *htSumDecimal) overflow() error {
	return fmt.Errorf("numeric field overflow: the sum does not fit in decimal(38,%d); cast the argument to double to sum it approximately", s.in.Scale)
}

func (s *htSumDecimal) update(_ context.Context, ids []int32, args []arrow.Array, sel []bool) error {
	a := args[0]
	nulls := a.NullN() > 0
	vs := htFixedValues[decimal128.Num](a)
	for r, g := range ids {
		if (sel != nil && !sel[r]) || (nulls && a.IsNull(r)) {
			continue
		}
		x := s.sums[g]
		v := vs[r]
		sum := x.Add(v)
		// Signed overflow of 128 bits, or past 38 digits.
		if (x.Sign() == v.Sign() && sum.Sign() != x.Sign() && sum.Sign() != 0) || !sum.FitsInPrecision(38) {
			return s.overflow()
		}
		s.sums[g] = sum
		s.cnt[g]++
	}
	return nil
}

func (s *htSumDecimal) finish(_ context.Context, n int) (arrow.Array, error) {
	vals := make([]decimal128.Num, n)
	valid := make([]bool, n)
	for g := range vals {
		if s.cnt[g] == 0 {
			continue
		}
		valid[g] = true
		v := s.sums[g]
		if s.avg {
			r, err := v.Rescale(s.in.Scale, s.out.Scale)
			if err != nil || !r.FitsInPrecision(38) {
				return nil, fmt.Errorf("numeric field overflow: the average does not fit in decimal(38,%d)", s.out.Scale)
			}
			c := decimal128.FromI64(s.cnt[g])
			q, rem := r.Div(c)
			// Round half away from zero, as Postgres rounds numeric.
			if rem.Abs().Mul(decimal128.FromI64(2)).GreaterEqual(c) {
				if r.Sign() < 0 {
					q = q.Sub(decimal128.FromI64(1))
				} else {
					q = q.Add(decimal128.FromI64(1))
				}
			}
			v = q
		}
		vals[g] = v
	}
	return htBuildFixed(s.mem, s.out, vals, valid), nil
}

// htFloatLess orders floats as Postgres does: NaN above every number.
func htFloatLess(a, b float64) bool {
	if math.IsNaN(a) {
		return false
	}
	return math.IsNaN(b) || a < b
}

// htMinMax is min or max of a fixed-width orderable type.
type htMinMax[T any] struct {
	dt    arrow.DataType
	isMax bool
	less  func(a, b T) bool
	vals  []T
	valid []bool
	mem   memory.Allocator
}

func newHTMinMax[T cmp.Ordered](dt arrow.DataType, isMax bool, mem memory.Allocator) *htMinMax[T] {
	return &htMinMax[T]{dt: dt, isMax: isMax, mem: mem, less: func(a, b T) bool { return a < b }}
}

func (s *htMinMax[T]) resize(n int) { s.vals, s.valid = htGrowTo(s.vals, n), htGrowTo(s.valid, n) }
func (s *htMinMax[T]) groupBytes() int64 {
	var z T
	return int64(unsafe.Sizeof(z)) + 1
}
func (s *htMinMax[T]) bytes() int64 {
	var z T
	return int64(cap(s.vals))*int64(unsafe.Sizeof(z)) + int64(cap(s.valid))
}
func (s *htMinMax[T]) release() {}
func (s *htMinMax[T]) update(_ context.Context, ids []int32, args []arrow.Array, sel []bool) error {
	a := args[0]
	vs := htFixedValues[T](a)
	nulls := a.NullN() > 0
	for r, g := range ids {
		if (sel != nil && !sel[r]) || (nulls && a.IsNull(r)) {
			continue
		}
		v := vs[r]
		switch {
		case !s.valid[g]:
			s.vals[g], s.valid[g] = v, true
		case s.isMax && s.less(s.vals[g], v):
			s.vals[g] = v
		case !s.isMax && s.less(v, s.vals[g]):
			s.vals[g] = v
		}
	}
	return nil
}
func (s *htMinMax[T]) finish(_ context.Context, n int) (arrow.Array, error) {
	return htBuildFixed(s.mem, s.dt, s.vals[:n], s.valid[:n]), nil
}

// htMinMaxBytes is min or max of strings, binaries and fixed-size binaries
// (UUID), compared bytewise.
type htMinMaxBytes struct {
	dt    arrow.DataType
	isMax bool
	vals  [][]byte
	valid []bool
	size  int64
	mem   memory.Allocator
}

func (s *htMinMaxBytes) resize(n int)      { s.vals, s.valid = htGrowTo(s.vals, n), htGrowTo(s.valid, n) }
func (s *htMinMaxBytes) groupBytes() int64 { return 25 }
func (s *htMinMaxBytes) bytes() int64      { return int64(cap(s.vals))*24 + int64(cap(s.valid)) + s.size }
func (s *htMinMaxBytes) release()          {}

func htBytesAt(a arrow.Array, r int) []byte {
	if f, ok := a.(*array.FixedSizeBinary); ok {
		return f.Value(r)
	}
	return htVarValue(a, r)
}

func (s *htMinMaxBytes) update(_ context.Context, ids []int32, args []arrow.Array, sel []bool) error {
	a := htStorageOf(args[0])
	nulls := a.NullN() > 0
	for r, g := range ids {
		if (sel != nil && !sel[r]) || (nulls && a.IsNull(r)) {
			continue
		}
		v := htBytesAt(a, r)
		c := 0
		if s.valid[g] {
			c = bytes.Compare(v, s.vals[g])
		}
		if !s.valid[g] || (s.isMax && c > 0) || (!s.isMax && c < 0) {
			s.size += int64(len(v) - len(s.vals[g]))
			s.vals[g] = append(s.vals[g][:0], v...)
			s.valid[g] = true
		}
	}
	return nil
}

func (s *htMinMaxBytes) finish(_ context.Context, n int) (arrow.Array, error) {
	storage := s.dt
	if ext, ok := s.dt.(arrow.ExtensionType); ok {
		storage = ext.StorageType()
	}
	b := array.NewBuilder(s.mem, storage)
	defer b.Release()
	for g := 0; g < n; g++ {
		if !s.valid[g] {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.StringBuilder:
			b.BinaryBuilder.Append(s.vals[g])
		case *array.LargeStringBuilder:
			b.BinaryBuilder.Append(s.vals[g])
		case *array.BinaryBuilder:
			b.Append(s.vals[g])
		case *array.FixedSizeBinaryBuilder:
			b.Append(s.vals[g])
		default:
			return nil, fmt.Errorf("min/max: no builder for %s (bug)", s.dt)
		}
	}
	out := b.NewArray()
	if ext, ok := s.dt.(arrow.ExtensionType); ok {
		defer out.Release()
		return array.NewExtensionArrayWithStorage(ext, out), nil
	}
	return out, nil
}

// htBool is bool_and (and min of booleans) or bool_or (and max).
type htBool struct {
	and   bool
	vals  []bool
	valid []bool
	mem   memory.Allocator
}

func (s *htBool) resize(n int)      { s.vals, s.valid = htGrowTo(s.vals, n), htGrowTo(s.valid, n) }
func (s *htBool) groupBytes() int64 { return 2 }
func (s *htBool) bytes() int64      { return int64(cap(s.vals) + cap(s.valid)) }
func (s *htBool) release()          {}
func (s *htBool) update(_ context.Context, ids []int32, args []arrow.Array, sel []bool) error {
	a := args[0].(*array.Boolean)
	for r, g := range ids {
		if (sel != nil && !sel[r]) || a.IsNull(r) {
			continue
		}
		v := a.Value(r)
		switch {
		case !s.valid[g]:
			s.vals[g], s.valid[g] = v, true
		case s.and:
			s.vals[g] = s.vals[g] && v
		default:
			s.vals[g] = s.vals[g] || v
		}
	}
	return nil
}
func (s *htBool) finish(_ context.Context, n int) (arrow.Array, error) {
	b := array.NewBooleanBuilder(s.mem)
	defer b.Release()
	b.AppendValues(s.vals[:n], s.valid[:n])
	return b.NewArray(), nil
}

// htCollect keeps the selected input rows (value, separator, ORDER BY
// keys) of string_agg, array_agg and any_value, and orders them per group
// at the end.
type htCollect struct {
	agg    *Aggregate
	mem    memory.Allocator
	chunks [][]arrow.Array
	groups []int32 // group of each kept row, in arrival order
	have   []bool  // any_value: the group has its value
	size   int64
	idx    []int32
}

func (s *htCollect) resize(n int) {
	if s.agg.kind == aggAnyValue {
		s.have = htGrowTo(s.have, n)
	}
}
func (s *htCollect) groupBytes() int64 {
	if s.agg.kind == aggAnyValue {
		return 1
	}
	return 0
}
func (s *htCollect) bytes() int64 { return s.size + int64(cap(s.groups))*4 + int64(cap(s.have)) }
func (s *htCollect) release() {
	for _, c := range s.chunks {
		htReleaseArrays(c)
	}
	s.chunks = nil
}

func (s *htCollect) update(ctx context.Context, ids []int32, args []arrow.Array, sel []bool) error {
	v := args[0]
	skipNull := s.agg.kind != aggArrayAgg && v.NullN() > 0
	s.idx = s.idx[:0]
	for r, g := range ids {
		if (sel != nil && !sel[r]) || (skipNull && v.IsNull(r)) {
			continue
		}
		if s.agg.kind == aggAnyValue {
			if s.have[g] {
				continue
			}
			s.have[g] = true
		}
		s.idx = append(s.idx, int32(r))
		s.groups = append(s.groups, g)
	}
	if len(s.idx) == 0 {
		return nil
	}
	cols, err := htTakeColumns(ctx, args, s.idx)
	if err != nil {
		return err
	}
	s.chunks = append(s.chunks, cols)
	s.size += ArraysBytes(cols)
	return nil
}

func (s *htCollect) finish(ctx context.Context, n int) (arrow.Array, error) {
	inputs := s.agg.inputs()
	cols := make([]arrow.Array, len(inputs))
	defer func() { htReleaseArrays(cols) }()
	for i, e := range inputs {
		parts := make([]arrow.Array, len(s.chunks))
		for c, ch := range s.chunks {
			parts[c] = ch[i]
		}
		switch len(parts) {
		case 0:
			cols[i] = array.MakeArrayOfNull(s.mem, e.DataType(), 0)
		case 1:
			cols[i] = parts[0]
			cols[i].Retain()
		default:
			c, err := array.Concatenate(parts, s.mem)
			if err != nil {
				return nil, err
			}
			cols[i] = c
		}
	}
	s.release()
	m := len(s.groups)
	order := make([]int32, m)
	for i := range order {
		order[i] = int32(i)
	}
	firstKey := 1
	if s.agg.kind == aggStringAgg {
		firstKey = 2
	}
	var cmps []func(i, j int) int
	if s.agg.kind != aggAnyValue {
		for k := range s.agg.OrderBy {
			cmps = append(cmps, htSortKeyCmp(cols[firstKey+k], s.agg.OrderBy[k]))
		}
	}
	slices.SortStableFunc(order, func(x, y int32) int {
		if c := cmp.Compare(s.groups[x], s.groups[y]); c != 0 {
			return c
		}
		for _, f := range cmps {
			if c := f(int(x), int(y)); c != 0 {
				return c
			}
		}
		return 0
	})
	// starts[g]..starts[g+1] are group g's rows in order.
	starts := make([]int32, n+1)
	for _, g := range s.groups {
		starts[g+1]++
	}
	for g := 0; g < n; g++ {
		starts[g+1] += starts[g]
	}
	valid := make([]bool, n)
	for g := range valid {
		valid[g] = starts[g+1] > starts[g]
	}
	switch s.agg.kind {
	case aggAnyValue:
		ib := array.NewInt32Builder(s.mem)
		defer ib.Release()
		for g := 0; g < n; g++ {
			if valid[g] {
				ib.Append(order[starts[g]])
			} else {
				ib.AppendNull()
			}
		}
		ia := ib.NewArray()
		defer ia.Release()
		return htTakeNullable(ctx, cols[0], ia)
	case aggArrayAgg:
		vals, err := htTakeColumns(ctx, cols[:1], order)
		if err != nil {
			return nil, err
		}
		defer htReleaseArrays(vals)
		ob := memory.NewResizableBuffer(s.mem)
		ob.Resize((n + 1) * 4)
		copy(ob.Bytes(), arrow.Int32Traits.CastToBytes(starts))
		nb, nulls := htBitmap(s.mem, valid)
		d := array.NewData(s.agg.typ, n, []*memory.Buffer{nb, ob}, []arrow.ArrayData{vals[0].Data()}, nulls, 0)
		ob.Release()
		if nb != nil {
			nb.Release()
		}
		defer d.Release()
		return array.MakeFromData(d), nil
	default: // string_agg
		val, sep := cols[0], cols[1]
		b := array.NewBinaryBuilder(s.mem, s.agg.typ.(arrow.BinaryDataType))
		defer b.Release()
		var sb strings.Builder
		for g := 0; g < n; g++ {
			if !valid[g] {
				b.AppendNull()
				continue
			}
			sb.Reset()
			for k, e := range order[starts[g]:starts[g+1]] {
				if k > 0 && sep.IsValid(int(e)) {
					sb.Write(htVarValue(sep, int(e)))
				}
				sb.Write(htVarValue(val, int(e)))
			}
			b.AppendString(sb.String())
		}
		return b.NewArray(), nil
	}
}

// htTakeNullable gathers values by an index array that may hold NULLs.
func htTakeNullable(ctx context.Context, vals, idx arrow.Array) (arrow.Array, error) {
	cols, err := htTakeColumnsArr(ctx, []arrow.Array{vals}, idx)
	if err != nil {
		return nil, err
	}
	return cols[0], nil
}

// htSortKeyCmp compares rows i and j of col under k's direction and NULL
// placement.
func htSortKeyCmp(col arrow.Array, k SortKey) func(i, j int) int {
	c := htCmpArray(col)
	return func(i, j int) int {
		ni, nj := col.IsNull(i), col.IsNull(j)
		switch {
		case ni && nj:
			return 0
		case ni:
			if k.NullsFirst {
				return -1
			}
			return 1
		case nj:
			if k.NullsFirst {
				return 1
			}
			return -1
		}
		if k.Descending {
			return -c(i, j)
		}
		return c(i, j)
	}
}

// htOrderable reports whether values of t can be compared by htCmpArray.
func htOrderable(t arrow.DataType) error {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL128, arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION,
		arrow.FIXED_SIZE_BINARY:
		return nil
	case arrow.EXTENSION:
		return htOrderable(t.(arrow.ExtensionType).StorageType())
	case arrow.LIST:
		return htOrderable(t.(*arrow.ListType).Elem())
	case arrow.MAP:
		return htOrderable(t.(*arrow.MapType).Elem())
	case arrow.STRUCT:
		for _, f := range t.(*arrow.StructType).Fields() {
			if err := htOrderable(f.Type); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("type %s is not orderable", htSQLType(t))
}

func htCmpFixed[T cmp.Ordered](a arrow.Array) func(i, j int) int {
	vs := htFixedValues[T](a)
	return func(i, j int) int { return cmp.Compare(vs[i], vs[j]) }
}

// htCmpNullsLast compares values x and y of a, the elements or fields of
// nested values, by cmp, a NULL after every value and equal to a NULL.
func htCmpNullsLast(a arrow.Array, x, y int, cmp func(x, y int) int) int {
	xn, yn := a.IsNull(x), a.IsNull(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return cmp(x, y)
}

// htCmpArray compares two non-NULL values of a; a's type must pass
// htOrderable.
func htCmpArray(a arrow.Array) func(i, j int) int {
	a = htStorageOf(a)
	switch a.DataType().ID() {
	case arrow.BOOL:
		b := a.(*array.Boolean)
		return func(i, j int) int {
			x, y := b.Value(i), b.Value(j)
			if x == y {
				return 0
			}
			if y {
				return -1
			}
			return 1
		}
	case arrow.INT8:
		return htCmpFixed[int8](a)
	case arrow.INT16:
		return htCmpFixed[int16](a)
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return htCmpFixed[int32](a)
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return htCmpFixed[int64](a)
	case arrow.UINT8:
		return htCmpFixed[uint8](a)
	case arrow.UINT16:
		return htCmpFixed[uint16](a)
	case arrow.UINT32:
		return htCmpFixed[uint32](a)
	case arrow.UINT64:
		return htCmpFixed[uint64](a)
	case arrow.FLOAT32, arrow.FLOAT64:
		return func(i, j int) int {
			x, y := htFloatAt(a, i), htFloatAt(a, j)
			switch {
			case htFloatLess(x, y):
				return -1
			case htFloatLess(y, x):
				return 1
			}
			return 0
		}
	case arrow.DECIMAL128:
		vs := htFixedValues[decimal128.Num](a)
		return func(i, j int) int { return vs[i].Cmp(vs[j]) }
	case arrow.LIST, arrow.MAP:
		// as skListVals: element by element (a map's entries in their
		// order), NULL elements last, a prefix first
		l := listArray(a)
		child := l.ListValues()
		elem := htCmpArray(child)
		return func(i, j int) int {
			alo, ahi := l.ValueOffsets(i)
			blo, bhi := l.ValueOffsets(j)
			for x, y := alo, blo; x < ahi && y < bhi; x, y = x+1, y+1 {
				if c := htCmpNullsLast(child, int(x), int(y), elem); c != 0 {
					return c
				}
			}
			return cmp.Compare(ahi-alo, bhi-blo)
		}
	case arrow.STRUCT:
		// as skStructVals: field by field, NULL fields last
		st := a.(*array.Struct)
		fields := make([]arrow.Array, st.NumField())
		cmps := make([]func(i, j int) int, st.NumField())
		for k := range fields {
			fields[k] = st.Field(k)
			cmps[k] = htCmpArray(fields[k])
		}
		return func(i, j int) int {
			for k, f := range fields {
				if c := htCmpNullsLast(f, i, j, cmps[k]); c != 0 {
					return c
				}
			}
			return 0
		}
	}
	return func(i, j int) int { return bytes.Compare(htBytesAt(a, i), htBytesAt(a, j)) }
}

func htFloatAt(a arrow.Array, i int) float64 {
	if f, ok := a.(*array.Float32); ok {
		return float64(f.Value(i))
	}
	return a.(*array.Float64).Value(i)
}

// htMinMaxNested is min or max of arrays or structs (in htCmpArray's
// order): each group keeps a copy of its best value so far, a one-row
// array. Each batch first finds every group's best row among its own,
// so a group compares against its kept value once per batch.
type htMinMaxNested struct {
	dt    arrow.DataType
	isMax bool
	best  []arrow.Array // per group; nil before its first value
	size  int64
	mem   memory.Allocator
}

func (s *htMinMaxNested) resize(n int)      { s.best = htGrowTo(s.best, n) }
func (s *htMinMaxNested) groupBytes() int64 { return 16 }
func (s *htMinMaxNested) bytes() int64      { return int64(cap(s.best))*16 + s.size }

func (s *htMinMaxNested) release() {
	for i, b := range s.best {
		if b != nil {
			b.Release()
			s.best[i] = nil
		}
	}
	s.size = 0
}

// better reports whether c (a comparison of a new value with the kept
// one) makes the new value the group's.
func (s *htMinMaxNested) better(c int) bool { return s.isMax && c > 0 || !s.isMax && c < 0 }

func (s *htMinMaxNested) update(_ context.Context, ids []int32, args []arrow.Array, sel []bool) error {
	a := args[0]
	cmpRows := htCmpArray(a)
	cand := map[int32]int{}
	for r, g := range ids {
		if (sel != nil && !sel[r]) || a.IsNull(r) {
			continue
		}
		if c, ok := cand[g]; !ok || s.better(cmpRows(r, c)) {
			cand[g] = r
		}
	}
	for g, r := range cand {
		row := array.NewSlice(a, int64(r), int64(r)+1)
		if kept := s.best[g]; kept != nil {
			pair, err := array.Concatenate([]arrow.Array{kept, row}, s.mem)
			if err != nil {
				row.Release()
				return err
			}
			c := htCmpArray(pair)(1, 0)
			pair.Release()
			if !s.better(c) {
				row.Release()
				continue
			}
		}
		// a copy, so that the batch's buffers are not kept
		own, err := array.Concatenate([]arrow.Array{row}, s.mem)
		row.Release()
		if err != nil {
			return err
		}
		if kept := s.best[g]; kept != nil {
			s.size -= htArrayBytes(kept)
			kept.Release()
		}
		s.best[g] = own
		s.size += htArrayBytes(own)
	}
	return nil
}

func (s *htMinMaxNested) finish(_ context.Context, n int) (arrow.Array, error) {
	parts := make([]arrow.Array, n)
	for g := range n {
		if s.best[g] != nil {
			parts[g] = s.best[g]
			parts[g].Retain()
		} else {
			parts[g] = array.MakeArrayOfNull(s.mem, s.dt, 1)
		}
	}
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	if n == 0 {
		return array.MakeArrayOfNull(s.mem, s.dt, 0), nil
	}
	return array.Concatenate(parts, s.mem)
}

// htArrayBytes is the memory an array's buffers hold.
func htArrayBytes(a arrow.Array) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
		for _, c := range d.Children() {
			walk(c)
		}
	}
	walk(a.Data())
	return n
}
