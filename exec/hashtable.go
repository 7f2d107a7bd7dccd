package exec

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"sync/atomic"
)

// HashTable maps row keys (see RowKeys) to dense group ids 0..Len()-1, in
// order of first insertion. It is an open-addressing table with linear
// probing over a power-of-two slot array, indexed by the top bits of the
// key's hash. Keys live in one arena.
//
// Keys of at most 12 bytes (one or two fixed-width columns: BIGINT, DATE,
// TIMESTAMP, INTEGER pairs, ...) are also stored in their 16-byte slot, so
// a probe reads one cache line and compares two words. Longer keys use
// 8-byte slots packing the upper 32 bits of the hash (the tag) with the
// group id; growth then rehashes from the slots alone, in order.
//
// The batch methods (FindOrInsertRows, FindRows) first read the home slot
// of every row: independent loads the CPU overlaps, where a one-key-at-a-
// time loop waits for each cache miss in turn. Prefer them for large tables.
//
// A HashTable is not safe for concurrent use, except that once sealed
// (Seal) any number of goroutines may call Find and FindRows on it, each
// with its own RowKeys.
//
// INVARIANT: the hash passed with a key is HashKey(key), as RowKeys
// computes it; tables of short keys recompute it when they grow.
// INVARIANT: an arena-mode slot is 0 when empty, else tag<<32 | (id+1);
// a short-key slot has id 0 when empty, else id+1.
// INVARIANT: Len() <= 3/4 of the slots, so probing always ends.
// INVARIANT: the slot array has at most 2^32 slots, so that the tag holds
// every bit of the hash that the slot index uses.
type HashTable struct {
	slots  []uint64 // arena mode: meta per slot
	islots []htSlot // inline mode
	shift  uint     // slot index = hash >> shift
	mask   uint64
	n      int

	width  int // fixed key width, or 0 when offsets locate keys
	inline bool
	arena  []byte
	offs   []int // len Len()+1 when width == 0

	// filter is a blocked Bloom filter over the keys' hashes, built by
	// Seal: three bits in one word per key. A probe whose
	// word lacks a bit misses without reading the slot array, which on a
	// large table is a cache miss. filterN is Len() when it was built;
	// FindRows uses it only while they agree.
	filter  []uint64
	fmask   uint64
	filterN int
	// filterSkip (atomic) is how many batches FindRows is still to probe
	// without the filter: a batch that mostly passes it sets it to
	// htFilterRest, each batch probed without it counts down, and the
	// batch after them goes through the filter again, to see whether it
	// still passes most keys.
	filterSkip int32
	// dense, when Seal could build it, replaces filter: an exact bitmap
	// of the keys' values (hashtable_dense.go), used while filterN is
	// Len() too.
	dense *htDense
	sink  uint64 // loads that only bring memory into the cache land here
	// dirty: islots came from htSlots as a past table left them. Only
	// addPartitioned, which clears them first, may run on such a table.
	dirty bool
}

// htSlot is a slot of a table of short keys: the key itself, zero
// padded, and id+1 (0 when empty). It holds no hash: growth rehashes the
// key, which costs less than the memory a stored hash would take.
type htSlot struct {
	k0 uint64
	k1 uint32
	id uint32
}

const (
	hashTableMinSlots = 16
	// hashTableMaxLoad is the fill above which the slot array doubles,
	// in eighths. 3/4 keeps linear probe sequences short.
	hashTableMaxLoad = 6
	htInlineMax      = 12
)

// NewHashTable returns an empty table for keys of keyWidth bytes each
// (KeyEncoder.Width), or of varying width when keyWidth is 0. sizeHint is
// the expected number of groups; 0 is fine.
func NewHashTable(keyWidth, sizeHint int) *HashTable {
	return newHashTable(keyWidth, sizeHint, false)
}

// newHashTable is NewHashTable; with pooled, a table of short keys large
// enough for addPartitioned takes its slots from htSlots where it holds
// an array of the size, and is then dirty.
func newHashTable(keyWidth, sizeHint int, pooled bool) *HashTable {
	t := &HashTable{width: keyWidth, inline: keyWidth > 0 && keyWidth <= htInlineMax}
	n := hashTableMinSlots
	for n*hashTableMaxLoad/8 < sizeHint {
		n *= 2
	}
	pooled = pooled && htPartitionSized(t.inline, n)
	var s []htSlot
	if pooled {
		s = takeSlots(n)
	}
	if s != nil {
		t.islots, t.dirty = s, true
		t.sized(n)
	} else {
		t.alloc(n)
	}
	if keyWidth == 0 {
		t.offs = append(make([]int, 0, sizeHint+1), 0)
	} else if pooled {
		t.arena = takeList(htArena, sizeHint*keyWidth)
	} else if sizeHint > 0 {
		t.arena = make([]byte, 0, sizeHint*keyWidth)
	}
	return t
}

func (t *HashTable) alloc(n int) {
	if t.inline {
		t.islots = make([]htSlot, n)
	} else {
		t.slots = make([]uint64, n)
	}
	t.sized(n)
}

// sized sets the index mask and shift for a slot array of n slots.
func (t *HashTable) sized(n int) {
	t.mask = uint64(n - 1)
	t.shift = uint(64 - bits.TrailingZeros64(uint64(n)))
}

func (t *HashTable) numSlots() int {
	if t.inline {
		return len(t.islots)
	}
	return len(t.slots)
}

// Len is the number of groups.
func (t *HashTable) Len() int { return t.n }

// Bytes is the memory the table holds, for Budget accounting.
func (t *HashTable) Bytes() int64 {
	return int64(len(t.slots))*8 + int64(len(t.islots))*16 + int64(cap(t.arena)) + int64(cap(t.offs))*8 + int64(len(t.filter))*8 + t.dense.bytes()
}

// GrowBytes is the memory that inserting extra new keys of keyBytes bytes
// in total would newly allocate: the slot arrays the table doubles to, and
// the arena and offsets grown by append (Go grows a large slice by about
// 1.25×; counted as 2× to stay safe). The old arrays stay allocated until
// the collector frees them, so a caller that reserves Bytes()+GrowBytes()
// before inserting covers the transient peak.
func (t *HashTable) GrowBytes(extra, keyBytes int) int64 {
	var n int64
	slots := t.numSlots()
	for (t.n+extra)*8 > slots*hashTableMaxLoad {
		slots *= 2
		if t.inline {
			n += int64(slots) * 16
		} else {
			n += int64(slots) * 8
		}
	}
	if len(t.arena)+keyBytes > cap(t.arena) {
		n += 2 * int64(max(cap(t.arena), len(t.arena)+keyBytes))
	}
	if t.width == 0 && len(t.offs)+extra > cap(t.offs) {
		n += 2 * 8 * int64(max(cap(t.offs), len(t.offs)+extra))
	}
	return n
}

// Key returns group id's key. It aliases the arena; do not modify it.
func (t *HashTable) Key(id int32) []byte {
	if t.width > 0 {
		o := int(id) * t.width
		return t.arena[o : o+t.width : o+t.width]
	}
	return t.arena[t.offs[id]:t.offs[id+1]:t.offs[id+1]]
}

func (t *HashTable) keyEqual(id int32, key []byte) bool {
	if t.width > 0 {
		o := int(id) * t.width
		return bytes.Equal(t.arena[o:o+t.width], key)
	}
	return bytes.Equal(t.arena[t.offs[id]:t.offs[id+1]], key)
}

// htInlineKey loads a key of at most 12 bytes as a zero-padded
// little-endian word and half word.
func htInlineKey(key []byte) (uint64, uint32) {
	if len(key) >= 8 {
		return binary.LittleEndian.Uint64(key), uint32(htTail(key[8:]))
	}
	return htTail(key), 0
}

// htTail loads up to 8 bytes as a zero-padded little-endian word, with
// the common key widths (a tag byte plus 4 or 8 value bytes) unrolled.
func htTail(b []byte) uint64 {
	switch len(b) {
	case 0:
		return 0
	case 1:
		return uint64(b[0])
	case 5:
		return uint64(binary.LittleEndian.Uint32(b)) | uint64(b[4])<<32
	case 8:
		return binary.LittleEndian.Uint64(b)
	}
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// Find returns the group id of key, or (-1, false).
func (t *HashTable) Find(key []byte, hash uint64) (int32, bool) {
	tag := hash &^ 0xffffffff
	i := hash >> t.shift
	if t.inline {
		k0, k1 := htInlineKey(key)
		id := t.findShortHashed(k0, k1, hash)
		return id, id >= 0
	}
	for {
		s := t.slots[i]
		if s == 0 {
			return -1, false
		}
		if s&^0xffffffff == tag {
			id := int32(uint32(s)) - 1
			if t.keyEqual(id, key) {
				return id, true
			}
		}
		i = (i + 1) & t.mask
	}
}

// findShortHashed is Find for a table of short keys, given the key as
// htInlineKey loads it and its hash.
func (t *HashTable) findShortHashed(k0 uint64, k1 uint32, hash uint64) int32 {
	i := hash >> t.shift
	for {
		s := &t.islots[i]
		if s.id == 0 {
			return -1
		}
		if s.k0 == k0 && s.k1 == k1 {
			return int32(s.id) - 1
		}
		i = (i + 1) & t.mask
	}
}

// FindOrInsert returns key's group id, inserting key as group Len() when
// absent; isNew reports the insertion. hash must be the key's hash (as
// RowKeys computes it) and equal keys must come with equal hashes.
func (t *HashTable) FindOrInsert(key []byte, hash uint64) (id int32, isNew bool) {
	tag := hash &^ 0xffffffff
	i := hash >> t.shift
	if t.inline {
		k0, k1 := htInlineKey(key)
		for {
			s := &t.islots[i]
			if s.id == 0 {
				break
			}
			if s.k0 == k0 && s.k1 == k1 {
				return int32(s.id) - 1, false
			}
			i = (i + 1) & t.mask
		}
		if t.full() {
			t.grow()
			i = t.emptySlot(hash)
		}
		id = int32(t.n)
		t.islots[i] = htSlot{k0: k0, k1: k1, id: uint32(id + 1)}
	} else {
		for {
			s := t.slots[i]
			if s == 0 {
				break
			}
			if s&^0xffffffff == tag {
				id := int32(uint32(s)) - 1
				if t.keyEqual(id, key) {
					return id, false
				}
			}
			i = (i + 1) & t.mask
		}
		if t.full() {
			t.grow()
			i = t.emptySlot(hash)
		}
		id = int32(t.n)
		t.slots[i] = tag | uint64(uint32(id+1))
	}
	t.n++
	t.arena = append(t.arena, key...)
	if t.width == 0 {
		t.offs = append(t.offs, len(t.arena))
	}
	return id, true
}

// Insert is FindOrInsert.
func (t *HashTable) Insert(key []byte, hash uint64) (id int32, isNew bool) {
	return t.FindOrInsert(key, hash)
}

func (t *HashTable) full() bool { return (t.n+1)*8 > t.numSlots()*hashTableMaxLoad }

// emptySlot is the first free slot of hash's probe sequence.
func (t *HashTable) emptySlot(hash uint64) uint64 {
	i := hash >> t.shift
	if t.inline {
		for t.islots[i].id != 0 {
			i = (i + 1) & t.mask
		}
		return i
	}
	for t.slots[i] != 0 {
		i = (i + 1) & t.mask
	}
	return i
}

// grow doubles the slot array. The tag holds the hash bits the new index
// needs, so it reads only the old slots, in order.
func (t *HashTable) grow() {
	if t.inline {
		old := t.islots
		t.alloc(2 * len(old))
		for _, s := range old {
			if s.id != 0 {
				t.islots[t.emptySlot(htMix(s.k0, uint64(s.k1), t.width))] = s
			}
		}
		return
	}
	old := t.slots
	t.alloc(2 * len(old))
	for _, m := range old {
		if m != 0 {
			t.slots[t.emptySlot(m&^0xffffffff)] = m
		}
	}
}

// touch reads the home slot of every hash before the probe loop does. The
// loads are independent, so the CPU overlaps their cache misses, which a
// probe loop with branches on each loaded slot cannot; on large tables
// this is most of the cost of a lookup. It only pays for large tables.
func (t *HashTable) touch(hashes []uint64, sink *uint64) {
	if t.numSlots() < htTouchMin {
		return
	}
	var x uint64
	if t.inline {
		for _, h := range hashes {
			x += uint64(t.islots[h>>t.shift].id)
		}
	} else {
		for _, h := range hashes {
			x += t.slots[h>>t.shift]
		}
	}
	*sink += x // keeps the loads from being optimized away
}

// touchSel is touch for the rows of hashes that sel names.
func (t *HashTable) touchSel(hashes []uint64, sel []int32, sink *uint64) {
	var x uint64
	if t.inline {
		for _, r := range sel {
			x += uint64(t.islots[hashes[r]>>t.shift].id)
		}
	} else {
		for _, r := range sel {
			x += t.slots[hashes[r]>>t.shift]
		}
	}
	*sink += x
}

// htTouchMin is the slot count from which touch pays: about 4 MiB of slots.
const htTouchMin = 1 << 18

// htFilterRest is how many batches FindRows probes without the filter
// after one that mostly passed it.
const htFilterRest = 15

// htFilterBitsPerKey sizes Seal's filter (rounded up to a power of two):
// with three bits per key in one word, 8–16 bits per key let through
// about 1–3% of absent keys.
const htFilterBitsPerKey = 8

// Seal is called once the table's keys are all inserted; probes that
// follow (FindRows) go faster. Where the keys are integers of a few
// narrow ranges it builds an exact bitmap of their values (a dense
// filter, hashtable_dense.go), whatever the table's size. Otherwise it
// builds a Bloom filter of the keys, about one byte per key, so that a
// probe for an absent key mostly reads the filter alone: on a table
// whose slots fall out of the CPU caches that spares a cache miss, and
// on a smaller one a lookup that still encodes, compares and branches (a
// MERGE of 10 source rows whose keys lie one in each of ten 1M-row files
// probed 10M absent keys at 17 ns each; BENCHMARKS.md, session 34).
// Probes rest from the filter for htFilterRest batches after one that
// mostly passed it (findFiltered). An insert after Seal turns the filter
// off.
func (t *HashTable) Seal() {
	t.filter, t.dense, t.filterN = nil, nil, -1
	atomic.StoreInt32(&t.filterSkip, 0)
	if t.n == 0 {
		return
	}
	// The dense filter at any size: a probe of an absent key then skips
	// its encoding and hash too (probeDenseRaw), however small the table.
	if t.dense = t.buildDense(); t.dense != nil {
		t.filterN = t.n
		return
	}
	words := 1
	for words*64 < t.n*htFilterBitsPerKey {
		words *= 2
	}
	t.filter = make([]uint64, words)
	t.fmask = uint64(words - 1)
	add := func(h uint64) {
		t.filter[(h>>18)&t.fmask] |= htFilterBits(h)
	}
	if w := t.width; t.inline && len(t.arena) == t.n*w {
		// the keys in a row: a third of the slots' bytes
		for o := 0; o < len(t.arena); o += w {
			k0, k1 := htInlineKey(t.arena[o : o+w : o+w])
			add(htMix(k0, uint64(k1), w))
		}
	} else if t.inline {
		for _, s := range t.islots {
			if s.id != 0 {
				add(htMix(s.k0, uint64(s.k1), t.width))
			}
		}
	} else {
		for id := 0; id < t.n; id++ {
			add(HashKey(t.Key(int32(id))))
		}
	}
	t.filterN = t.n
}

// htFilterBits is the word of a hash's three filter bits, from hash bits
// 0–17; bits 18 up pick the word. The slot index and tag use the top
// bits, so the filter is independent of them for tables up to 2^25
// filter words.
func htFilterBits(h uint64) uint64 {
	return 1<<(h&63) | 1<<((h>>6)&63) | 1<<((h>>12)&63)
}

// FindOrInsertRows assigns a group id to every row of keys, writing it to
// ids (len >= keys.N), and returns how many groups were new. Rows with a
// NULL key get id -1 when skipNull is set (joins), and are grouped like any
// other value otherwise (GROUP BY, DISTINCT, set operations).
func (t *HashTable) FindOrInsertRows(keys *RowKeys, ids []int32, skipNull bool) int {
	before := t.Len()
	t.touch(keys.Hashes[:keys.N], &keys.sink)
	for r := 0; r < keys.N; r++ {
		if skipNull && keys.AnyNull && keys.Null[r] {
			ids[r] = -1
			continue
		}
		ids[r], _ = t.FindOrInsert(keys.Key(r), keys.Hashes[r])
	}
	return t.Len() - before
}

// FindRows looks up every row of keys, writing its group id or -1 (absent,
// or a NULL key when skipNull is set) to ids.
func (t *HashTable) FindRows(keys *RowKeys, ids []int32, skipNull bool) {
	if t.filterN == t.n {
		if t.dense != nil && keys.Width == t.width {
			t.findDense(keys, ids, skipNull)
			return
		}
		if t.filter != nil && (atomic.LoadInt32(&t.filterSkip) <= 0 || atomic.AddInt32(&t.filterSkip, -1) < 0) {
			t.findFiltered(keys, ids, skipNull)
			return
		}
	}
	t.touch(keys.Hashes[:keys.N], &keys.sink)
	for r := 0; r < keys.N; r++ {
		if skipNull && keys.AnyNull && keys.Null[r] {
			ids[r] = -1
			continue
		}
		ids[r], _ = t.Find(keys.Key(r), keys.Hashes[r])
	}
}

// findFiltered is FindRows through the filter: rows the filter rules out
// get -1 at once; the rest are touched and looked up.
func (t *HashTable) findFiltered(keys *RowKeys, ids []int32, skipNull bool) {
	hs := keys.Hashes[:keys.N]
	sel := htGrow(keys.sel, len(hs)+1)
	ids = ids[:len(hs)]
	f, fm := t.filter, t.fmask
	// Branch free: every row is written to sel, and the cursor moves on
	// only when the filter lets the row through. A branch on the loaded
	// word would stall the loop on each rare pass; this way the loads of
	// many rows are in flight at once.
	n := 0
	for r, h := range hs {
		m := htFilterBits(h)
		ids[r] = -1
		sel[n] = int32(r)
		pass := 0
		if f[(h>>18)&fm]&m == m {
			pass = 1
		}
		n += pass
	}
	sel = sel[:n]
	keys.sel = sel
	if 2*n > len(hs) {
		// A row the filter passes costs its check and the lookup: where
		// most rows pass, the check costs more than it spares (a third
		// more per row when all do, at 1,000 keys and at 300,000), so
		// the next batches go without it.
		atomic.StoreInt32(&t.filterSkip, htFilterRest)
	}
	if t.numSlots() >= htTouchMin {
		t.touchSel(hs, sel, &keys.sink)
	}
	for _, r := range sel {
		if skipNull && keys.AnyNull && keys.Null[r] {
			ids[r] = -1
			continue
		}
		ids[r], _ = t.Find(keys.Key(int(r)), hs[r])
	}
}

// JoinTable is a HashTable whose groups chain the build rows that carry
// the group's key, plus a per-build-row "matched" bitmap. Hash joins use it,
// and so does MERGE INTO: build on the source keys, probe with target rows,
// walk a group's rows to see every source row a target row matches
// (Count > 1 is a cardinality violation once residuals are applied), mark
// the source rows that matched, and finally walk the unmatched ones (NOT
// MATCHED [BY TARGET] inserts).
//
// Build rows are numbered 0..Rows()-1 in the order they were added,
// across batches. Rows with a NULL key get a number but join no group:
// they never match, yet outer joins still emit them as unmatched.
//
// INVARIANT: walking First/Next visits a group's rows in build order.
type JoinTable struct {
	*HashTable
	head, tail []int32 // per group: first and last build row
	count      []int32 // per group: number of build rows
	next       []int32 // per build row: the next row of its group, or -1
	matched    []uint64
	nullRows   int
	ids        []int32 // scratch
}

// NewJoinTable returns an empty join table; see NewHashTable.
func NewJoinTable(keyWidth, sizeHint int) *JoinTable {
	return newJoinTable(keyWidth, sizeHint, false)
}

// newJoinTable is NewJoinTable; pooled as for newHashTable. A pooled
// table's arrays go back to their pools with release.
func newJoinTable(keyWidth, sizeHint int, pooled bool) *JoinTable {
	t := newHashTable(keyWidth, sizeHint, pooled)
	ints := func() []int32 { return make([]int32, 0, sizeHint) }
	if pooled && htPartitionSized(t.inline, t.numSlots()) {
		ints = func() []int32 { return takeList(htInts, sizeHint) }
	}
	return &JoinTable{HashTable: t, head: ints(), tail: ints(), count: ints(), next: ints()}
}

// release returns the table's slots, row lists and key arena to their
// pools (hashtable_pool.go); the table must not be used after.
func (j *JoinTable) release() {
	keepSlots(j.islots) // nil unless inline
	keepList(htArena, j.arena, nil)
	for _, s := range [][]int32{j.head, j.tail, j.count, j.next} {
		keepList(htInts, s, &htPoisonRow)
	}
	j.islots, j.slots, j.arena = nil, nil, nil
	j.head, j.tail, j.count, j.next = nil, nil, nil, nil
}

// AddRows appends keys.N build rows numbered from Rows().
func (j *JoinTable) AddRows(keys *RowKeys) {
	base := int32(len(j.next))
	j.ids = htGrow(j.ids, keys.N)
	j.FindOrInsertRows(keys, j.ids, true /* skipNull */)
	for g := len(j.head); g < j.Len(); g++ {
		j.head = append(j.head, -1)
		j.tail = append(j.tail, -1)
		j.count = append(j.count, 0)
	}
	for r := 0; r < keys.N; r++ {
		row := base + int32(r)
		j.next = append(j.next, -1)
		g := j.ids[r]
		if g < 0 {
			j.nullRows++
			continue
		}
		if j.tail[g] < 0 {
			j.head[g] = row
		} else {
			j.next[j.tail[g]] = row
		}
		j.tail[g] = row
		j.count[g]++
	}
	words := (len(j.next) + 63) / 64
	for len(j.matched) < words {
		j.matched = append(j.matched, 0)
	}
}

// Rows is the number of build rows added.
func (j *JoinTable) Rows() int { return len(j.next) }

// NullKeyRows is the number of build rows whose key has a NULL.
func (j *JoinTable) NullKeyRows() int { return j.nullRows }

// Probe writes to groups (len >= keys.N) the group each probe row matches,
// or -1 when its key is absent or NULL.
func (j *JoinTable) Probe(keys *RowKeys, groups []int32) {
	j.FindRows(keys, groups, true /* skipNull */)
}

// First is group's first build row (-1 for group -1).
func (j *JoinTable) First(group int32) int32 {
	if group < 0 {
		return -1
	}
	return j.head[group]
}

// Next is the build row after row in its group, or -1.
func (j *JoinTable) Next(row int32) int32 { return j.next[row] }

// Count is the number of build rows in group (0 for group -1).
func (j *JoinTable) Count(group int32) int {
	if group < 0 {
		return 0
	}
	return int(j.count[group])
}

// SetMatched marks build row row as matched.
func (j *JoinTable) SetMatched(row int32) { j.matched[row>>6] |= 1 << (uint(row) & 63) }

// Matched reports whether build row row was marked.
func (j *JoinTable) Matched(row int32) bool { return j.matched[row>>6]&(1<<(uint(row)&63)) != 0 }

// UnmatchedRows is the number of build rows never marked.
func (j *JoinTable) UnmatchedRows() int {
	n := len(j.next)
	for _, w := range j.matched {
		n -= bits.OnesCount64(w)
	}
	return n
}

// AppendUnmatched appends to dst up to max build rows >= from that were
// never marked, and returns dst and the row to resume from (Rows() when
// done).
func (j *JoinTable) AppendUnmatched(dst []int32, from int32, max int) ([]int32, int32) {
	return htAppendBits(dst, j.matched, from, int32(len(j.next)), max, false)
}

// AppendMatched is AppendUnmatched for marked rows.
func (j *JoinTable) AppendMatched(dst []int32, from int32, max int) ([]int32, int32) {
	return htAppendBits(dst, j.matched, from, int32(len(j.next)), max, true)
}

// htAppendBits appends the positions in [from, n) whose bit equals want.
func htAppendBits(dst []int32, bm []uint64, from, n int32, max int, want bool) ([]int32, int32) {
	added := 0
	r := from
	for r < n && added < max {
		w := bm[r>>6]
		if !want {
			w = ^w
		}
		w >>= uint(r) & 63
		if w == 0 {
			r = (r | 63) + 1
			continue
		}
		r += int32(bits.TrailingZeros64(w))
		if r >= n {
			break
		}
		dst = append(dst, r)
		added++
		r++
	}
	if r > n {
		r = n
	}
	return dst, r
}

// Bytes is the memory the table holds, for Budget accounting.
func (j *JoinTable) Bytes() int64 {
	return j.HashTable.Bytes() + int64(cap(j.head)+cap(j.tail)+cap(j.count)+cap(j.next)+cap(j.ids))*4 +
		int64(cap(j.matched))*8
}
