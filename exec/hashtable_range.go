package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// KeyRange is the closed range Lo..Hi of one join key's values, taken as
// the integers behind them (int8 to int64, date32 and date64, time32 and
// time64, timestamp in the key's own unit). Lo > Hi is empty: no value
// lies in it. A key of another type is not bounded by its range.
type KeyRange struct{ Lo, Hi int64 }

// keysOutOfRange marks, per batch of keyCols, the rows with a non-NULL key
// value outside its range (a nil slice: no such row), and counts them.
func keysOutOfRange(ranges []*KeyRange, keyCols [][]arrow.Array) (skip [][]bool, n int) {
	for k, rg := range ranges {
		if rg == nil {
			continue
		}
		for i, cols := range keyCols {
			if k >= len(cols) {
				continue
			}
			if skip == nil {
				skip = make([][]bool, len(keyCols))
			}
			n += markOutside(cols[k], *rg, &skip[i])
		}
	}
	return skip, n
}

// markOutside sets (*skip)[r], allocating *skip when first needed, for
// each row r of c whose value is valid and outside rg and not yet set,
// and returns how many it set.
func markOutside(c arrow.Array, rg KeyRange, skip *[]bool) int {
	switch c.DataType().ID() {
	case arrow.INT8:
		return markOutsideOf(values[int8](c), c, rg, skip)
	case arrow.INT16:
		return markOutsideOf(values[int16](c), c, rg, skip)
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return markOutsideOf(values[int32](c), c, rg, skip)
	case arrow.INT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP:
		return markOutsideOf(values[int64](c), c, rg, skip)
	}
	return 0
}

func markOutsideOf[T ~int8 | ~int16 | ~int32 | ~int64](vals []T, c arrow.Array, rg KeyRange, skip *[]bool) int {
	n := 0
	nulls := c.NullN() > 0
	for r, v := range vals {
		if x := int64(v); x >= rg.Lo && x <= rg.Hi {
			continue
		}
		if nulls && c.IsNull(r) {
			continue
		}
		if *skip == nil {
			*skip = make([]bool, len(vals))
		}
		if !(*skip)[r] {
			(*skip)[r] = true
			n++
		}
	}
	return n
}

// outsideRows is skip (per batch of keyCols) as one bitmap over the rows
// numbered across the batches.
func outsideRows(skip [][]bool, keyCols [][]arrow.Array, rows int) []uint64 {
	bm := make([]uint64, (rows+63)/64)
	base := 0
	for i, cols := range keyCols {
		for r, s := range skip[i] {
			if s {
				row := base + r
				bm[row>>6] |= 1 << (row & 63)
			}
		}
		if len(cols) > 0 {
			base += cols[0].Len()
		}
	}
	return bm
}

// AppendOutOfRange appends to dst up to max build rows >= from that the
// key ranges left out of the table (see HashOptions.KeyRanges), and
// returns dst and the row to resume from (Rows when done).
func (jb *JoinBuild) AppendOutOfRange(dst []int32, from int32, max int) ([]int32, int32) {
	if jb.outside == nil {
		return dst, int32(jb.Rows)
	}
	return htAppendBits(dst, jb.outside, from, int32(jb.Rows), max, true)
}

// OutsideBits is a bitmap of the build rows the key ranges left out of
// Table (bit r%64 of word r/64 for row r; see HashOptions.KeyRanges), or
// nil when none were. It is the build's own: read it, do not change it.
func (jb *JoinBuild) OutsideBits() []uint64 { return jb.outside }
