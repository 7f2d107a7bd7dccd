package exec

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// compute evaluates f over the sorted input sp.
func (w *Window) compute(f *WindowFunc, sp *winSpec) (*winResult, error) {
	n := w.n
	if err := w.reserve(int64(n) * 17); err != nil {
		return nil, err
	}
	r := &winResult{typ: f.typ}
	g := func(i int) int { ref := sp.ord[i]; return w.base[ref.b] + int(ref.r) }
	switch f.kind {
	case winRowNumber, winRank, winDenseRank:
		r.ints = make([]int64, n)
		dense := int64(0)
		for i := 0; i < n; i++ {
			ps := int(sp.partStart[i])
			if i == ps {
				dense = 0
			}
			if i == int(sp.peerStart[i]) {
				dense++
			}
			switch f.kind {
			case winRowNumber:
				r.ints[g(i)] = int64(i - ps + 1)
			case winRank:
				r.ints[g(i)] = int64(int(sp.peerStart[i]) - ps + 1)
			default:
				r.ints[g(i)] = dense
			}
		}
		return r, nil
	case winLag, winLead:
		return r, w.computeLagLead(f, sp, r, g)
	case winPercentRank, winCumeDist:
		r.flts = make([]float64, n)
		for i := 0; i < n; i++ {
			ps, pe := int(sp.partStart[i]), int(sp.partEnd[i])
			switch {
			case f.kind == winCumeDist:
				r.flts[g(i)] = float64(int(sp.peerEnd[i])-ps) / float64(pe-ps)
			case pe-ps > 1:
				r.flts[g(i)] = float64(int(sp.peerStart[i])-ps) / float64(pe-ps-1)
			}
		}
		return r, nil
	case winNtile:
		return r, w.computeNtile(f, sp, r, g)
	}
	fr := f.resolveFrame()
	var arg []arrow.Array
	if len(f.Args) > 0 {
		var err error
		if arg, err = w.evalAll(f.Args[0]); err != nil {
			return nil, err
		}
	}
	switch f.kind {
	case winFirstValue, winLastValue:
		w.valueResult(r, arg, nil)
		for i := 0; i < n; i++ {
			lo, hi := sp.frameAt(&fr, i, f)
			switch {
			case lo >= hi:
			case fr.exclude != ExcludeNoOthers:
				if j := sp.nthKept(&fr, i, lo, hi, 0, f.kind == winLastValue); j >= 0 {
					r.refs[g(i)] = sp.ord[j]
				}
			case f.kind == winFirstValue:
				r.refs[g(i)] = sp.ord[lo]
			default:
				r.refs[g(i)] = sp.ord[hi-1]
			}
		}
		return r, nil
	case winNthValue:
		nth, err := w.evalAll(f.Args[1])
		if err != nil {
			return nil, err
		}
		w.valueResult(r, arg, nil)
		for i := 0; i < n; i++ {
			ref := sp.ord[i]
			k, ok := winIntAt(nth[ref.b], int(ref.r))
			if !ok {
				continue
			}
			if k <= 0 {
				return r, fmt.Errorf("argument of nth_value must be greater than zero")
			}
			lo, hi := sp.frameAt(&fr, i, f)
			switch {
			case fr.exclude != ExcludeNoOthers:
				if k <= int64(hi-lo) {
					if j := sp.nthKept(&fr, i, lo, hi, int(k)-1, false); j >= 0 {
						r.refs[g(i)] = sp.ord[j]
					}
				}
			case k <= int64(hi-lo):
				r.refs[g(i)] = sp.ord[lo+int(k)-1]
			}
		}
		return r, nil
	case winMin, winMax:
		return r, w.computeMinMax(f, sp, &fr, arg, r, g)
	case winCountStar, winCount:
		r.ints = make([]int64, n)
		var isNull func(i int) bool
		if f.kind == winCount {
			isNull = func(i int) bool { ref := sp.ord[i]; return arg[ref.b].IsNull(int(ref.r)) }
		}
		var cnt int64
		slide := winSlider{
			add: func(j int) {
				if isNull == nil || !isNull(j) {
					cnt++
				}
			},
			remove: func(j int) {
				if isNull == nil || !isNull(j) {
					cnt--
				}
			},
			reset: func() { cnt = 0 },
		}
		for i := 0; i < n; i++ {
			lo, hi := sp.frameAt(&fr, i, f)
			slide.move(lo, hi)
			sp.exclusions(&fr, i, lo, hi, slide.remove)
			r.ints[g(i)] = cnt
			sp.exclusions(&fr, i, lo, hi, slide.add)
		}
		return r, nil
	case winSum, winAvg:
		return r, w.computeSumAvg(f, sp, &fr, arg, r, g)
	}
	return nil, fmt.Errorf("exec: window: function %s not implemented (bug)", f.Name)
}

// valueResult prepares r to copy values of arg (and of def, the lag/lead
// default) by reference; unset refs point at a NULL row.
func (w *Window) valueResult(r *winResult, arg, def []arrow.Array) {
	r.srcs = append(append(append(r.srcs, arg...), def...), array.MakeArrayOfNull(w.opts.Mem, r.typ, 1))
	null := skRef{int32(len(r.srcs) - 1), 0}
	r.refs = make([]skRef, w.n)
	for i := range r.refs {
		r.refs[i] = null
	}
}

// winSlider moves a frame [s, e) over positions whose bounds usually only
// grow, adding rows entering and removing rows leaving; when a frame
// moves backwards it starts over.
type winSlider struct {
	s, e        int
	add, remove func(j int)
	reset       func()
	started     bool
}

func (sl *winSlider) move(lo, hi int) {
	if !sl.started || lo < sl.s || hi < sl.e || lo >= sl.e {
		sl.reset()
		sl.s, sl.e, sl.started = lo, lo, true
	}
	for ; sl.e < hi; sl.e++ {
		sl.add(sl.e)
	}
	for ; sl.s < lo; sl.s++ {
		sl.remove(sl.s)
	}
}

func (w *Window) computeLagLead(f *WindowFunc, sp *winSpec, r *winResult, g func(int) int) error {
	arg, err := w.evalAll(f.Args[0])
	if err != nil {
		return err
	}
	var offs []arrow.Array
	constOff, haveConst := int64(1), true
	if len(f.Args) >= 2 {
		if lit, ok := f.Args[1].(*Literal); ok {
			if constOff, haveConst = winScalarInt(lit.Value); !haveConst && lit.Value.IsValid() {
				return fmt.Errorf("window function %s: offset must be an integer", f.Name)
			}
			if !lit.Value.IsValid() {
				haveConst = false
			}
		} else {
			haveConst = false
		}
		if !haveConst {
			if offs, err = w.evalAll(f.Args[1]); err != nil {
				return err
			}
		}
	}
	var def []arrow.Array
	if len(f.Args) == 3 && f.Args[2].DataType().ID() != arrow.NULL {
		if def, err = w.evalAll(f.Args[2]); err != nil {
			return err
		}
	}
	w.valueResult(r, arg, def)
	nb := int32(len(arg))
	for i := 0; i < w.n; i++ {
		ref := sp.ord[i]
		off := constOff
		if !haveConst {
			v, ok := winIntAt(offs[ref.b], int(ref.r))
			if !ok {
				continue // a NULL offset gives NULL
			}
			off = v
		}
		if f.kind == winLag {
			off = -off
		}
		ps, pe := int64(sp.partStart[i]), int64(sp.partEnd[i])
		j := int64(i) + off
		if (off > 0 && j < int64(i)) || (off < 0 && j > int64(i)) { // overflow: far outside
			j = -1
		}
		if j >= ps && j < pe {
			r.refs[g(i)] = sp.ord[j]
		} else if def != nil {
			r.refs[g(i)] = skRef{nb + ref.b, ref.r}
		}
	}
	return nil
}

// winIntAt reads an integer array element.
func winIntAt(a arrow.Array, i int) (int64, bool) {
	if a.IsNull(i) {
		return 0, false
	}
	switch a := a.(type) {
	case *array.Int8:
		return int64(a.Value(i)), true
	case *array.Int16:
		return int64(a.Value(i)), true
	case *array.Int32:
		return int64(a.Value(i)), true
	case *array.Int64:
		return a.Value(i), true
	case *array.Uint8:
		return int64(a.Value(i)), true
	case *array.Uint16:
		return int64(a.Value(i)), true
	case *array.Uint32:
		return int64(a.Value(i)), true
	}
	return 0, false
}

// computeMinMax keeps a monotonic deque of frame positions: the front is
// the frame's min (max); a row that can never be the answer again is
// dropped as a better one enters.
func (w *Window) computeMinMax(f *WindowFunc, sp *winSpec, fr *winFrame, arg []arrow.Array, r *winResult, g func(int) int) error {
	keys, err := newSkRowKeys([]arrow.DataType{f.typ}, []skOrder{{desc: f.kind == winMax}})
	if err != nil {
		return err
	}
	col := make([]arrow.Array, 1)
	for _, a := range arg {
		col[0] = a
		keys.add(col)
	}
	w.valueResult(r, arg, nil)
	var dq []int // sorted positions; values strictly improving front to back
	slide := winSlider{
		add: func(j int) {
			ref := sp.ord[j]
			if arg[ref.b].IsNull(int(ref.r)) {
				return
			}
			for len(dq) > 0 && keys.compare(sp.ord[dq[len(dq)-1]], ref) > 0 {
				dq = dq[:len(dq)-1]
			}
			dq = append(dq, j)
		},
		remove: func(j int) {
			if len(dq) > 0 && dq[0] == j {
				dq = dq[1:]
			}
		},
		reset: func() { dq = dq[:0] },
	}
	for i := 0; i < w.n; i++ {
		lo, hi := sp.frameAt(fr, i, f)
		if fr.exclude != ExcludeNoOthers {
			// the deque cannot take rows out of the middle: scan what
			// EXCLUDE keeps (O(frame) per row)
			best := -1
			sp.frameRows(fr, i, lo, hi, func(j int) {
				ref := sp.ord[j]
				if arg[ref.b].IsNull(int(ref.r)) {
					return
				}
				if best < 0 || keys.compare(sp.ord[best], ref) > 0 {
					best = j
				}
			})
			if best >= 0 {
				r.refs[g(i)] = sp.ord[best]
			}
			continue
		}
		slide.move(lo, hi)
		if len(dq) > 0 {
			r.refs[g(i)] = sp.ord[dq[0]]
		}
	}
	return nil
}

// computeSumAvg slides a running sum. Integers and decimals sum exactly
// in 128 bits; floats keep NaN and infinities aside so that removing a
// row that left the frame never leaves NaN behind.
func (w *Window) computeSumAvg(f *WindowFunc, sp *winSpec, fr *winFrame, arg []arrow.Array, r *winResult, g func(int) int) error {
	n := w.n
	inType := f.Args[0].DataType()
	r.valid = make([]bool, n)
	isFloat := inType.ID() == arrow.FLOAT32 || inType.ID() == arrow.FLOAT64
	var cnt int64
	if isFloat {
		var sum float64
		var nan, pinf, ninf int64
		val := func(j int) (float64, bool) {
			ref := sp.ord[j]
			switch a := arg[ref.b].(type) {
			case *array.Float64:
				return a.Value(int(ref.r)), a.IsValid(int(ref.r))
			case *array.Float32:
				return float64(a.Value(int(ref.r))), a.IsValid(int(ref.r))
			}
			return 0, false
		}
		upd := func(j int, d int64) {
			v, ok := val(j)
			if !ok {
				return
			}
			cnt += d
			switch {
			case math.IsNaN(v):
				nan += d
			case math.IsInf(v, 1):
				pinf += d
			case math.IsInf(v, -1):
				ninf += d
			default:
				sum += float64(d) * v
			}
			if cnt == 0 {
				sum = 0 // no drift carried into the next frame
			}
		}
		slide := winSlider{
			add:    func(j int) { upd(j, 1) },
			remove: func(j int) { upd(j, -1) },
			reset:  func() { sum, cnt, nan, pinf, ninf = 0, 0, 0, 0, 0 },
		}
		r.flts = make([]float64, n)
		for i := 0; i < n; i++ {
			lo, hi := sp.frameAt(fr, i, f)
			slide.move(lo, hi)
			// EXCLUDE: take the rows out for this row's answer, then put
			// the exact state back (re-adding floats could drift)
			s0, c0, n0, p0, m0 := sum, cnt, nan, pinf, ninf
			sp.exclusions(fr, i, lo, hi, slide.remove)
			v, c, rowNaN, rowPInf, rowNInf := sum, cnt, nan, pinf, ninf
			sum, cnt, nan, pinf, ninf = s0, c0, n0, p0, m0
			if c == 0 {
				continue
			}
			switch {
			case rowNaN > 0 || (rowPInf > 0 && rowNInf > 0):
				v = math.NaN()
			case rowPInf > 0:
				v = math.Inf(1)
			case rowNInf > 0:
				v = math.Inf(-1)
			}
			if f.kind == winAvg {
				v /= float64(c)
			}
			r.flts[g(i)], r.valid[g(i)] = v, true
		}
		return nil
	}
	var inScale int32
	if dt, ok := inType.(*arrow.Decimal128Type); ok {
		inScale = dt.Scale
	}
	var sum decimal128.Num
	val := func(j int) (decimal128.Num, bool) {
		ref := sp.ord[j]
		a := arg[ref.b]
		if a.IsNull(int(ref.r)) {
			return decimal128.Num{}, false
		}
		if d, ok := a.(*array.Decimal128); ok {
			return d.Value(int(ref.r)), true
		}
		v, _ := winIntAt(a, int(ref.r))
		return decimal128.FromI64(v), true
	}
	slide := winSlider{
		add: func(j int) {
			if v, ok := val(j); ok {
				sum, cnt = sum.Add(v), cnt+1
			}
		},
		remove: func(j int) {
			if v, ok := val(j); ok {
				sum, cnt = sum.Sub(v), cnt-1
			}
		},
		reset: func() { sum, cnt = decimal128.Num{}, 0 },
	}
	switch f.typ.ID() {
	case arrow.INT64:
		r.ints = make([]int64, n)
	case arrow.FLOAT64:
		r.flts = make([]float64, n)
	default:
		r.decs = make([]decimal128.Num, n)
	}
	outScale := int32(0)
	if dt, ok := f.typ.(*arrow.Decimal128Type); ok {
		outScale = dt.Scale
	}
	for i := 0; i < n; i++ {
		lo, hi := sp.frameAt(fr, i, f)
		slide.move(lo, hi)
		// EXCLUDE: this row's sum without the excluded rows, then the
		// frame's state back
		s0, c0 := sum, cnt
		sp.exclusions(fr, i, lo, hi, slide.remove)
		rowSum, rowCnt := sum, cnt
		sum, cnt = s0, c0
		if rowCnt == 0 {
			continue
		}
		if err := w.sumAvgRow(f, r, g(i), rowSum, rowCnt, inScale, outScale); err != nil {
			return err
		}
	}
	return nil
}

// sumAvgRow writes one row's exact sum or average.
func (w *Window) sumAvgRow(f *WindowFunc, r *winResult, gi int, sum decimal128.Num, cnt int64, inScale, outScale int32) error {
	{
		r.valid[gi] = true
		switch {
		case r.ints != nil:
			fits := (sum.HighBits() == 0 && sum.LowBits() <= math.MaxInt64) || (sum.HighBits() == -1 && sum.LowBits() >= 1<<63)
			if !fits {
				return fmt.Errorf("bigint out of range")
			}
			r.ints[gi] = int64(sum.LowBits())
		case r.flts != nil:
			r.flts[gi] = sum.ToFloat64(inScale) / float64(cnt)
		case f.kind == winSum:
			if !sum.FitsInPrecision(38) {
				return fmt.Errorf("numeric field overflow: sum exceeds 38 digits")
			}
			r.decs[gi] = sum
		default:
			r.decs[gi] = winDecimalAvg(sum, inScale, outScale, cnt)
		}
	}
	return nil
}

// winDecimalAvg divides sum (at scale in) by cnt at scale out, rounding
// half away from zero.
func winDecimalAvg(sum decimal128.Num, in, out int32, cnt int64) decimal128.Num {
	num := sum.IncreaseScaleBy(out - in)
	neg := num.Sign() < 0
	if neg {
		num = num.Negate()
	}
	c := decimal128.FromI64(cnt)
	q, rem := num.Div(c)
	if rem.Add(rem).Cmp(c) >= 0 {
		q = q.Add(decimal128.FromI64(1))
	}
	if neg {
		q = q.Negate()
	}
	return q
}

// computeNtile splits each partition into k buckets as Postgres does: the
// first (rows mod k) buckets get one row more. k is read at the
// partition's first row; NULL gives NULL.
func (w *Window) computeNtile(f *WindowFunc, sp *winSpec, r *winResult, g func(int) int) error {
	buckets, err := w.evalAll(f.Args[0])
	if err != nil {
		return err
	}
	n := w.n
	r.ints = make([]int64, n)
	r.valid = make([]bool, n)
	for ps := 0; ps < n; {
		pe := int(sp.partEnd[ps])
		first := sp.ord[ps]
		k, ok := winIntAt(buckets[first.b], int(first.r))
		if ok && k <= 0 {
			return fmt.Errorf("argument of ntile must be greater than zero")
		}
		if ok {
			total := int64(pe - ps)
			q, rem := total/k, total%k
			big := rem * (q + 1) // rows in the larger buckets
			for i := ps; i < pe; i++ {
				pos := int64(i - ps)
				var b int64
				if pos < big {
					b = pos/(q+1) + 1
				} else {
					b = (pos-big)/q + rem + 1
				}
				r.ints[g(i)], r.valid[g(i)] = b, true
			}
		}
		ps = pe
	}
	return nil
}
