package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// GROUP BY one integer key of a narrow range: small ids and codes, dates,
// an expression like id % 1000. The aggregate keeps a direct map from the
// values it has seen, less the smallest, to their groups (haIntMap), and a
// row whose value the map has costs one load: no encoding, hash or probe.
// A value the map lacks (or NULL) is encoded and looked up in the hash
// table like any key, once per batch, and the map remembers its group.
// The table stays the one source of groups, so batches the map does not
// take (a batch whose values span too wide a range, a spilling aggregate)
// go the usual way and mix with the rest; groups come out in order of
// first appearance either way.

const (
	// haIntMaxSpan bounds the map: at most this many values from the
	// smallest to the largest (512 KiB of group ids).
	haIntMaxSpan = 1 << 17
	// haIntGiveUp is how many batches in a row may span too wide before
	// the aggregate stops trying the map.
	haIntGiveUp = 8
)

// haIntMap maps the values lo..lo+len(slots)-1 of a one-integer group key
// to their groups.
type haIntMap struct {
	lo    int64
	hi    int64   // the largest value the map was asked to cover
	slots []int32 // group id + 1 of value lo+i; 0 while unknown (past hi: room to grow into)
	null  int32   // group id + 1 of NULL; 0 while unknown
	wide  int     // batches in a row whose values spanned too wide
	off   bool    // the key is no integer, or too many batches spanned too wide

	// a batch's values (and NULL) the map lacks: the first row of each
	// (fresh), its place in the map (at: a slot, or null), their groups,
	// their keys encoded
	fresh []int32
	at    []*int32
	gids  []int32
	keys  RowKeys
}

func (m *haIntMap) bytes() int64 { return int64(cap(m.slots)) * 4 }

// release lets go of the map and its scratch.
func (m *haIntMap) release() {
	m.slots, m.fresh, m.at, m.gids, m.keys = nil, nil, nil, nil, RowKeys{}
}

// haIntKey is the integer types the map takes (DATE32 is stored as int32).
type haIntKey interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32
}

// haIntRange is the smallest and largest non-NULL value of a; ok is false
// when it has none.
func haIntRange[T haIntKey](a arrow.Array) (lo, hi int64, ok bool) {
	vals := htFixedValues[T](a)
	if len(vals) != a.Len() {
		return 0, 0, false
	}
	first := true
	var mn, mx T
	if a.NullN() == 0 {
		if len(vals) == 0 {
			return 0, 0, false
		}
		mn, mx = vals[0], vals[0]
		for _, v := range vals {
			mn, mx = min(mn, v), max(mx, v)
		}
		return int64(mn), int64(mx), true
	}
	for r, v := range vals {
		if a.IsNull(r) {
			continue
		}
		if first {
			mn, mx, first = v, v, false
		}
		mn, mx = min(mn, v), max(mx, v)
	}
	return int64(mn), int64(mx), !first
}

// haIntLookup gives each row of a its group from the map, where the map
// has its value. Each value (or NULL) the map lacks is marked in the map
// with -(j+1), j its place in m.fresh, where its first row is appended
// (and its place in the map to m.at); its rows get -(j+1) for now.
func haIntLookup[T haIntKey](a arrow.Array, m *haIntMap, ids []int32) {
	var nulls arrow.Array
	if a.NullN() > 0 {
		nulls = a
	}
	haLookupVals(htFixedValues[T](a), nulls, m, ids)
}

// haLookupVals is haIntLookup of values vals, NULL where nulls (when not
// nil) is.
func haLookupVals[T haIntKey](vals []T, nulls arrow.Array, m *haIntMap, ids []int32) {
	slots, lo := m.slots, m.lo
	m.fresh, m.at = m.fresh[:0], m.at[:0]
	for r, v := range vals {
		var p *int32
		if nulls != nil && nulls.IsNull(r) {
			p = &m.null
		} else {
			p = &slots[int64(v)-lo]
		}
		s := *p
		if s == 0 {
			m.fresh, m.at = append(m.fresh, int32(r)), append(m.at, p)
			s = -int32(len(m.fresh))
			*p = s
		}
		if s > 0 {
			s--
		}
		ids[r] = s
	}
}

// haIntOps are what the direct maps do with a key column of one integer
// type: its range (haIntRange), its lookup in a map (haIntLookup), its
// packing with other keys (haPackInto).
type haIntOps struct {
	rng    func(arrow.Array) (lo, hi int64, any bool)
	lookup func(arrow.Array, *haIntMap, []int32)
	pack   func(c arrow.Array, base int64, shift uint, vals []int64)
}

func haOpsOf[T haIntKey]() haIntOps {
	return haIntOps{rng: haIntRange[T], lookup: haIntLookup[T], pack: haPackInto[T]}
}

// haIntOpsOf is the operations on keys of type t; ok is false for a type
// the maps do not take.
func haIntOpsOf(t arrow.DataType) (ops haIntOps, ok bool) {
	switch t.ID() {
	case arrow.INT8:
		return haOpsOf[int8](), true
	case arrow.INT16:
		return haOpsOf[int16](), true
	case arrow.INT32, arrow.DATE32:
		return haOpsOf[int32](), true
	case arrow.INT64:
		return haOpsOf[int64](), true
	case arrow.UINT8:
		return haOpsOf[uint8](), true
	case arrow.UINT16:
		return haOpsOf[uint16](), true
	case arrow.UINT32:
		return haOpsOf[uint32](), true
	}
	return haIntOps{}, false
}

// cover makes the map cover lo..hi, with room to grow past hi when it
// grows; ok is false, with the map as it was, when the values asked for
// so far would span more than haIntMaxSpan.
func (m *haIntMap) cover(lo, hi int64) (newBytes int64, ok bool) {
	if len(m.slots) > 0 {
		if lo >= m.lo && uint64(hi)-uint64(m.lo) < uint64(len(m.slots)) {
			m.hi = max(m.hi, hi)
			return 0, true
		}
		lo, hi = min(lo, m.lo), max(hi, m.hi)
	}
	span := uint64(hi) - uint64(lo) // hi >= lo: exact, even across the int64 range
	if span >= haIntMaxSpan {
		return 0, false
	}
	n := int64(span) + 1
	// room above: values that rise batch by batch (ids, dates in order)
	// then grow the map a few times, not once a batch
	grow := min(max(n, int64(len(m.slots))*2, 1024), haIntMaxSpan)
	if hi > (1<<63-1)-(grow-n) {
		grow = n
	}
	slots := make([]int32, grow)
	if len(m.slots) > 0 {
		copy(slots[m.lo-lo:], m.slots[:m.hi-m.lo+1]) // past m.hi: no group yet
	}
	m.lo, m.hi, m.slots = lo, hi, slots
	return grow * 4, true
}

// addIntBatch is addBatch, from the evaluated key cols on, for a batch
// grouped by one integer key through the map; handled is false, with
// nothing done, where the batch must go the usual way: the key is not
// such an integer, the aggregate is spilling, the batch's values span
// too wide, or the batch's most new groups do not fit the budget (the
// usual way then spills).
func (h *HashAggregate) addIntBatch(b arrow.RecordBatch, cols []arrow.Array, idsBuf *[]int32, sel *[]bool) (handled bool, err error) {
	m := &h.intMap
	if m.off || h.spill != nil || len(cols) != 1 {
		return false, nil
	}
	c := cols[0]
	ops, ok := haIntOpsOf(c.DataType())
	if !ok {
		m.off = true
		return false, nil
	}
	lo, hi, any := ops.rng(c)
	n := c.Len()
	// Reserve the most this batch can add: every value of its range,
	// and NULL, a new group, and the map grown to its largest.
	most := n
	if any && uint64(hi)-uint64(lo) < uint64(n) {
		most = int(hi-lo) + 2
	}
	need := h.stateBytes() + h.table.GrowBytes(most, most*h.enc.Width()) + ArraysBytes(cols) + h.spillReserve() + 2*haIntMaxSpan*4
	if g := h.growCap(h.groups + most); g > h.capGroups {
		need += int64(g) * h.groupBytes()
	}
	if err := h.res.setTo(need); err != nil {
		return false, nil
	}
	if any { // (a batch of NULL keys needs no values' slots)
		if _, ok := m.cover(lo, hi); !ok {
			if m.wide++; m.wide >= haIntGiveUp {
				m.off = true
			}
			return false, nil
		}
		m.wide = 0
	}
	*idsBuf = htGrow(*idsBuf, n)
	ids := (*idsBuf)[:n]
	ops.lookup(c, m, ids)
	if len(m.fresh) > 0 {
		if err := h.addIntFresh(cols, m, ids); err != nil {
			return true, err
		}
	}
	h.metrics.Inc("intkey_batches", 1)
	return true, h.updateKept(b, ids, sel)
}

// addIntFresh finds or inserts the groups of the values (and NULL) the
// map lacked, at their first rows m.fresh, records them in the map, and
// gives their rows (marked -(j+1) by haIntLookup) their groups; cols are
// the batch's group keys.
func (h *HashAggregate) addIntFresh(cols []arrow.Array, m *haIntMap, ids []int32) error {
	fresh := m.fresh
	kc, err := htTakeColumns(h.cctx, cols, fresh)
	if err != nil {
		return err
	}
	defer htReleaseArrays(kc)
	if err := h.enc.Encode(kc, &m.keys); err != nil {
		return err
	}
	gids := htGrow(m.gids, len(fresh))[:len(fresh)]
	m.gids = gids
	before := int32(h.table.Len())
	var newAt []int32 // places in fresh of the new groups, in order
	for j := range fresh {
		g, isNew := h.table.FindOrInsert(m.keys.Key(j), m.keys.Hashes[j])
		gids[j] = g
		if isNew {
			newAt = append(newAt, int32(j))
		}
		*m.at[j] = g + 1
	}
	for r, s := range ids {
		if s < 0 {
			ids[r] = gids[-s-1]
		}
	}
	if len(newAt) == 0 {
		return nil
	}
	keys := kc
	if len(newAt) < len(fresh) {
		if keys, err = htTakeColumns(h.cctx, kc, newAt); err != nil {
			return err
		}
	} else {
		for _, k := range kc {
			k.Retain()
		}
	}
	h.addKeys(keys, before)
	return nil
}
