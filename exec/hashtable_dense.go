package exec

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
)

// A dense filter is Seal's exact alternative to the Bloom filter for
// tables whose keys are one integer each, drawn from a few narrow
// ranges: a bitmap with one bit per value (BlockBits, of the values less
// the smallest). A probe tests its key's bit, and an absent key costs
// two loads and no hash. The bitmap is indexed by the key's value, so probe keys in order
// (a table's ids, a time column) read it in order too, where the Bloom
// filter's words are read at random; and it passes no absent key.
//
// It applies to tables of short fixed-width keys whose first byte (the
// NULL tag of the encoding) is the same for every key: the other bytes,
// at most 8, are then the value the bitmap indexes, and two such keys are
// equal exactly when their values are. A probe key whose first byte
// differs matches no key. The values are read as signed integers (the
// top bit flipped), so that keys around zero form a narrow range.

// htDenseBitsPerKey bounds the bitmap blocks: at most this many bits per
// key, four times the Bloom filter's eight, or htDenseMinWords words
// (2 MiB) when that is more: a table of 100,000 keys one in a hundred
// apart (a MERGE's updated ids, over 10M values) still gets the dense
// filter rather than a Bloom filter, which spares the probe of every
// absent key its encoding and hash. The directory is bounded to one
// 4-byte entry per key.
const (
	htDenseBitsPerKey = 32
	htDenseMinWords   = 1 << 18
)

// htDense is a sealed table's dense filter.
type htDense struct {
	set   *BlockBits // the values less lo
	lo    uint64     // the smallest value (sign-flipped)
	span  uint64     // largest - smallest + 1
	tag   byte       // every key's first byte
	width int        // key width, 2..9
}

// htDenseValue reads a short key's value from its first two words (as
// htInlineKey loads them), sign-flipped so that signed order is unsigned
// order.
func htDenseValue(k0 uint64, k1 uint32, width int) uint64 {
	vb := uint(width-1) * 8
	v := k0 >> 8
	if width == 9 {
		v |= uint64(k1) << 56
	} else {
		v &= 1<<vb - 1
	}
	return v ^ 1<<(vb-1)
}

// buildDense returns the table's dense filter, or nil when its keys do
// not allow one. The table must be in inline mode with keys of 2–9 bytes.
func (t *HashTable) buildDense() *htDense {
	w := t.width
	if !t.inline || w < 2 || w > 9 || t.n == 0 || len(t.arena) != t.n*w {
		return nil
	}
	// The arena holds the keys in a row, a third of the slots' bytes.
	value := func(id int) (uint64, byte) {
		k0, k1 := htInlineKey(t.arena[id*w : id*w+w : id*w+w])
		return htDenseValue(k0, k1, w), byte(k0)
	}
	lo, tag := value(0)
	hi := lo
	for id := 1; id < t.n; id++ {
		v, b := value(id)
		if b != tag {
			return nil
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	// the directory at most one entry per key, the blocks 32 bits per key
	set := NewBlockBits(hi-lo, uint64(t.n), max(uint64(t.n)*htDenseBitsPerKey/64, htDenseMinWords))
	if set == nil {
		return nil
	}
	for id := range t.n {
		v, _ := value(id)
		if _, ok := set.Add(v - lo); !ok {
			return nil // past the bits per key
		}
	}
	return &htDense{set: set, lo: lo, span: hi - lo + 1, tag: tag, width: w}
}

// findDense is FindRows through the dense filter: rows whose key it lacks
// get -1 at once; the rest are looked up. keys are t's width wide.
func (t *HashTable) findDense(keys *RowKeys, ids []int32, skipNull bool) {
	d := t.dense
	n, w := keys.N, d.width
	data := keys.Data[:n*w]
	sel := htGrow(keys.sel, n+1)
	ids = ids[:n]
	vb := uint(w-1) * 8
	flip := uint64(1) << (vb - 1)
	mask := uint64(1)<<vb - 1                         // all ones for 64 bits
	set, lo, span, tag := *d.set, d.lo, d.span, d.tag // in registers across the loop
	// Branch free, as in findFiltered: every row is written to sel and
	// the cursor moves on only for a row the bitmap holds.
	m := 0
	for r := range ids {
		key := data[r*w : r*w+w : r*w+w]
		var v uint64
		switch w {
		case 9:
			v = binary.LittleEndian.Uint64(key[1:])
		case 5:
			v = uint64(binary.LittleEndian.Uint32(key[1:]))
		default:
			v = htTail(key[1:]) & mask
		}
		x := (v ^ flip) - lo
		ids[r] = -1
		sel[m] = int32(r)
		pass := 0
		if x < span && key[0] == tag {
			pass = int(set.bit(x))
		}
		m += pass
	}
	sel = sel[:m]
	keys.sel = sel
	for _, r := range sel {
		if skipNull && keys.AnyNull && keys.Null[r] {
			continue
		}
		ids[r], _ = t.Find(keys.Key(int(r)), keys.Hashes[r])
	}
}

func (d *htDense) bytes() int64 {
	if d == nil {
		return 0
	}
	return d.set.Bytes()
}

// probeDenseRaw is Probe for one key column of 4- or 8-byte integers (or
// dates, timestamps) when the table has a dense filter: it tests each
// value's bit straight from the column, where Encode would first write
// every row's key and hash, and looks up only the rows whose bit is set.
// A non-NULL value's encoded key is a 1 tag then the value's bytes
// (KeyEncoder), so the bit and the lookup are those of the encoded key;
// a NULL matches nothing (a join skips NULL keys, and a build holding
// them has no dense filter: their tag differs). It reports false, doing
// nothing, where it does not apply.
func (t *HashTable) probeDenseRaw(enc *KeyEncoder, cols []arrow.Array, ids []int32, scratch *RowKeys) bool {
	d := t.dense
	if d == nil || t.filterN != t.n || d.tag != 1 || len(cols) != 1 || enc.width != d.width || len(enc.widths) != 1 {
		return false
	}
	w := enc.widths[0]
	c := htStorageOf(cols[0])
	switch c.DataType().ID() {
	case arrow.FLOAT64, arrow.FLOAT32, arrow.FLOAT16, arrow.NULL, arrow.BOOL:
		return false
	}
	if w != 8 && w != 4 || w != d.width-1 {
		return false
	}
	n := c.Len()
	src := htFixedBytes(c, w)
	if len(src) < n*w || len(ids) < n {
		return false
	}
	flip := uint64(1) << (w*8 - 1)
	set, lo, span := *d.set, d.lo, d.span // in registers across the loop
	// Branch free, as in findFiltered: every row is written to sel and
	// the cursor moves on only for a row whose bit is set.
	sel := htGrow(scratch.sel, n+1)
	m := 0
	for r := range n {
		var v uint64
		if w == 8 {
			v = binary.LittleEndian.Uint64(src[r*8:])
		} else {
			v = uint64(binary.LittleEndian.Uint32(src[r*4:]))
		}
		ids[r] = -1
		sel[m] = int32(r)
		x := (v ^ flip) - lo
		bit := set.bit(min(x, span-1)) // past the end: the last value's bit, ruled out below
		if x >= span {
			bit = 0
		}
		m += int(bit)
	}
	sel = sel[:m]
	scratch.sel = sel
	if c.NullN() > 0 {
		k := 0
		for _, r := range sel {
			if c.IsValid(int(r)) {
				sel[k] = r
				k++
			}
		}
		sel = sel[:k]
	}
	// The rows left are matches, at random in the slots: load every home
	// slot first (independent loads the CPU overlaps), then look up.
	hs := htGrow(scratch.Hashes, len(sel))
	var sink uint32
	for k, r := range sel {
		k0, k1 := htRawKey(src, int(r), w)
		h := htMix(k0, uint64(k1), t.width)
		hs[k] = h
		sink += t.islots[h>>t.shift].id
	}
	scratch.Hashes, scratch.sink = hs, scratch.sink+uint64(sink)
	for k, r := range sel {
		k0, k1 := htRawKey(src, int(r), w)
		ids[r] = t.findShortHashed(k0, k1, hs[k])
	}
	return true
}
