package exec

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
)

// GROUP BY several keys of narrow integer ranges: codes of strings
// (aggregate_coded.go), small ids, an expression like id % 10, dates. The
// keys of a row pack into one integer, each key in its own bits (0 for
// NULL, 1 + its value less the key's base otherwise), and that integer
// goes through the same direct map as a single integer key
// (aggregate_intkey.go): a row whose packed value the map has costs one
// load, with no key encoded, hashed or compared. The bits of each key are
// chosen from the first batch's range with room for twice as many
// values; a batch outside them chooses again from the union of both
// ranges and starts an empty map, whose slots the hash table (the one
// source of groups) fills again as values come. Where the bits would
// pass haIntMaxSpan, the batch goes the usual way; haIntGiveUp such
// batches in a row turn packing off.

// haPack is how the keys pack: key k's values base[k]..base[k]+2^bits[k]-2
// in bits shift[k] up.
type haPack struct {
	base  []int64
	seen  []bool // the key had a value: base and nbits hold what it had
	nbits []uint
	shift []uint
	set   bool // base and nbits are chosen
	off   bool // too many batches spanned too wide
	wide  int
	vals  []int64
	m     haIntMap
}

// covers reports whether the chosen bits hold the values lo..hi of key k.
func (p *haPack) covers(k int, lo, hi int64) bool {
	return lo >= p.base[k] && uint64(hi)-uint64(p.base[k]) <= uint64(1)<<p.nbits[k]-2
}

// choose picks each key's base and bits for the ranges given (widened to
// what the current bits cover); false where they would pass
// haIntMaxSpan.
func (p *haPack) choose(los, his []int64, anys []bool) bool {
	base := make([]int64, len(los))
	seen := make([]bool, len(los))
	nbits := make([]uint, len(los))
	shift := make([]uint, len(los))
	var total uint
	for k := range los {
		lo, hi, any := los[k], his[k], anys[k]
		if p.set && p.seen[k] {
			// what the key covered so far stays covered
			clo, chi := p.base[k], p.base[k]+int64(1)<<p.nbits[k]-2
			if !any {
				lo, hi, any = clo, chi, true
			} else {
				lo, hi = min(lo, clo), max(hi, chi)
			}
		}
		seen[k] = any
		if !any {
			lo, hi = 0, 0
		}
		span := uint64(hi) - uint64(lo) // hi >= lo
		if span >= haIntMaxSpan {
			return false
		}
		base[k] = lo
		nbits[k] = uint(bits.Len64(span+1)) + 1 // room for twice as many
		shift[k] = total
		total += nbits[k]
	}
	if uint64(1)<<total > haIntMaxSpan {
		return false
	}
	p.base, p.seen, p.nbits, p.shift, p.set = base, seen, nbits, shift, true
	p.m = haIntMap{}
	return true
}

// haPackInto adds the packed bits of key column c (values T) to vals.
func haPackInto[T haIntKey](c arrow.Array, base int64, shift uint, vals []int64) {
	vs := htFixedValues[T](c)
	if c.NullN() == 0 {
		for r, v := range vs {
			vals[r] |= (int64(v) - base + 1) << shift
		}
		return
	}
	for r, v := range vs {
		if c.IsValid(r) {
			vals[r] |= (int64(v) - base + 1) << shift
		}
	}
}

// addPackedBatch is addBatch, from the evaluated key cols on, for a batch
// grouped by two or more integer keys through their packed values;
// handled is false, with nothing done, where the batch must go the usual
// way (see haPack), or its most new groups do not fit the budget (the
// usual way then spills).
func (h *HashAggregate) addPackedBatch(b arrow.RecordBatch, cols []arrow.Array, idsBuf *[]int32, sel *[]bool) (handled bool, err error) {
	p := &h.pack
	if p.off || h.spill != nil || len(cols) < 2 {
		return false, nil
	}
	n := int(b.NumRows())
	ops := make([]haIntOps, len(cols))
	for k, c := range cols {
		var ok bool
		if ops[k], ok = haIntOpsOf(c.DataType()); !ok || c.Len() != n {
			// (a key coded from a later batch on may come as strings first)
			return false, nil
		}
	}
	los, his := make([]int64, len(cols)), make([]int64, len(cols))
	anys := make([]bool, len(cols))
	fits := p.set
	for k, c := range cols {
		los[k], his[k], anys[k] = ops[k].rng(c)
		if fits && anys[k] && !p.covers(k, los[k], his[k]) {
			fits = false
		}
	}
	if !fits && !p.choose(los, his, anys) {
		if p.wide++; p.wide >= haIntGiveUp {
			p.off = true
		}
		return false, nil
	}
	p.wide = 0
	var top int64 // the largest packed value
	for k := range cols {
		top += (int64(1)<<p.nbits[k] - 1) << p.shift[k]
	}
	// Reserve the most this batch can add: a new group for every row, or
	// every packed value, and the map at its largest.
	most := int(min(int64(n), top+1))
	need := h.stateBytes() + h.table.GrowBytes(most, most*h.enc.Width()) + ArraysBytes(cols) + h.spillReserve() + haIntMaxSpan*4 + int64(n)*8
	if g := h.growCap(h.groups + most); g > h.capGroups {
		need += int64(g) * h.groupBytes()
	}
	if err := h.res.setTo(need); err != nil {
		return false, nil
	}
	p.vals = htGrow(p.vals, n)
	vals := p.vals[:n]
	clear(vals)
	for k, c := range cols {
		ops[k].pack(c, p.base[k], p.shift[k], vals)
	}
	m := &p.m
	if _, ok := m.cover(0, top); !ok {
		return false, nil // (choose kept top under haIntMaxSpan)
	}
	*idsBuf = htGrow(*idsBuf, n)
	ids := (*idsBuf)[:n]
	haLookupVals(vals, nil, m, ids)
	if len(m.fresh) > 0 {
		if err := h.addIntFresh(cols, m, ids); err != nil {
			return true, err
		}
	}
	h.metrics.Inc("packed_batches", 1)
	return true, h.updateKept(b, ids, sel)
}
