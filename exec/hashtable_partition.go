package exec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
)

// Building a large join table in slot order.
//
// Inserting build rows in their arrival order writes the slot array at
// random: once the slots outgrow the CPU caches every insert is a cache
// miss (and, on a virtual machine, often a TLB miss too). A hash join or
// MERGE knows all its build rows before it inserts any, so it can insert
// them by partition instead: rows grouped by the top bits of their hash,
// which are the top bits of their home slot. Each partition's inserts
// then stay inside one small window of the slots, which the cache holds,
// and the windows follow each other through the array.

// htPartSlotBits is log2 of the slots one partition covers: 2^14 slots of
// 16 bytes are 256 KiB, inside a core's L2.
const htPartSlotBits = 14

// htPartEntry is one build row's short key, as its slot holds it, and the
// row's number.
type htPartEntry struct {
	k0  uint64
	k1  uint32
	row uint32
}

// partitioned reports whether addPartitioned pays for this table: short
// keys kept in their slots, and slots beyond the caches.
func (j *JoinTable) partitioned() bool {
	return htPartitionSized(j.inline, j.numSlots()) && len(j.next) == 0
}

// htPartitionSized reports whether a table of n slots, of short keys
// (inline) or not, is one addPartitioned builds once its rows are known;
// the pools serve such tables alone.
func htPartitionSized(inline bool, n int) bool {
	return inline && n >= htTouchMin
}

// addPartitioned adds nb batches of build rows, numbered from 0, to an
// empty table; see partitioned. It stops with ctx's error when ctx ends.
// encode(i, rk) encodes batch i's keys. It is called twice per batch and
// must give the same keys both times. reserve is asked for the scratch
// memory before it is allocated.
//
// The result is the table AddRows would build from the same batches, but
// for the numbering of the groups: they are numbered in order of
// insertion, which here is partition order. A group's rows still chain
// in build order, since a partition keeps its rows in build order.
func (j *JoinTable) addPartitioned(ctx context.Context, nb int, encode func(i int, rk *RowKeys) error, reserve func(int64) error) error {
	pbits := min(max(bits.TrailingZeros(uint(j.numSlots()))-htPartSlotBits, 1), 10)
	shift := uint(64 - pbits)
	np := 1 << pbits
	// Slots fresh from the allocator have their pages faulted in
	// (written) on another core while the keys are partitioned, instead
	// of one by one under the inserts; slots from htSlots are cleared
	// there.
	var faulted sync.WaitGroup
	if j.dirty {
		faulted.Go(func() { clear(j.islots) })
	} else {
		faulted.Go(j.prefault)
	}
	defer faulted.Wait()

	// The batches are encoded and partitioned by up to htPartWorkers
	// goroutines, each a contiguous share of the batches. Worker w's rows
	// of partition p go after those of the workers before it, so each
	// partition keeps its rows in build order.
	shares := partShares(nb)
	counts := make([][]int, len(shares))
	rowsOf := make([]int, len(shares))
	err := forShares(ctx, shares, encode, func(w int) func(rk *RowKeys, base int) error {
		c := make([]int, np)
		counts[w] = c
		return func(rk *RowKeys, _ int) error {
			for r, h := range rk.Hashes[:rk.N] {
				if !rk.AnyNull || !rk.Null[r] {
					c[h>>shift]++
				}
			}
			return nil
		}
	}, rowsOf)
	if err != nil {
		return err
	}
	rows := 0
	bases := make([]int, len(shares))
	for w, n := range rowsOf {
		bases[w] = rows
		rows += n
	}
	if rows > math.MaxInt32 {
		return fmt.Errorf("exec: a join build side of %d rows is more than a join table holds", rows)
	}
	// starts[p]: partition p's first entry; pos[w][p]: worker w's next
	// entry of partition p, which must stay below end[w][p]
	starts := make([]int, np+1)
	pos := make([][]int, len(shares))
	end := make([][]int, len(shares))
	for w := range shares {
		pos[w], end[w] = make([]int, np), make([]int, np)
	}
	at := 0
	for p := range np {
		starts[p] = at
		for w := range shares {
			pos[w][p] = at
			at += counts[w][p]
			end[w][p] = at
		}
	}
	starts[np] = at
	keyed := at
	if err := reserve(int64(keyed) * 16); err != nil {
		return err
	}
	entries := takeList(htEntries, keyed)[:keyed] // every entry is written below before it is read
	defer keepList(htEntries, entries, nil)
	again := make([]int, len(shares))
	err = forShares(ctx, shares, encode, func(w int) func(rk *RowKeys, base int) error {
		pw, ew, bw := pos[w], end[w], bases[w]
		return func(rk *RowKeys, base int) error {
			for r, h := range rk.Hashes[:rk.N] {
				if rk.AnyNull && rk.Null[r] {
					continue
				}
				p := h >> shift
				if pw[p] >= ew[p] {
					return fmt.Errorf("exec: a join build's keys changed between two encodings (bug)")
				}
				k0, k1 := htInlineKey(rk.Key(r))
				entries[pw[p]] = htPartEntry{k0: k0, k1: k1, row: uint32(bw + base + r)}
				pw[p]++
			}
			return nil
		}
	}, again)
	if err != nil {
		return err
	}
	if !slices.Equal(again, rowsOf) {
		return fmt.Errorf("exec: a join build's batches changed between two encodings (bug)")
	}
	for w := range shares {
		if !slices.Equal(pos[w], end[w]) {
			return fmt.Errorf("exec: a join build's keys changed between two encodings (bug)")
		}
	}
	faulted.Wait()
	j.dirty = false

	if cap(j.next) >= rows {
		j.next = j.next[:rows] // NewJoinTable sized it
	} else {
		j.next = make([]int32, rows)
	}
	for r := range j.next {
		j.next[r] = -1
	}
	j.nullRows += rows - keyed
	// at most one group a keyed row: no growth (and copy) on the way
	if len(j.head) == 0 && cap(j.head) < keyed {
		j.head = make([]int32, 0, keyed)
		j.tail = make([]int32, 0, keyed)
		j.count = make([]int32, 0, keyed)
	}
	var kb [16]byte
	window := j.numSlots() >> pbits
	for p := range np {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Read the partition's window of slots in order first: the
		// hardware prefetcher streams it into the cache, where the
		// inserts below, at random within it, would each wait for a
		// miss (BENCHMARKS.md, "The join's build and probe, ...").
		var x uint32
		for i := p * window; i < (p+1)*window; i += 4 {
			x += j.islots[i].id
		}
		j.sink += uint64(x)
		for _, e := range entries[starts[p]:starts[p+1]] {
			g := j.findOrInsertShort(e.k0, e.k1, &kb)
			row := int32(e.row)
			if int(g) == len(j.head) {
				j.head = append(j.head, row)
				j.tail = append(j.tail, row)
				j.count = append(j.count, 1)
				continue
			}
			j.next[j.tail[g]] = row
			j.tail[g] = row
			j.count[g]++
		}
	}
	j.matched = make([]uint64, (rows+63)/64)
	return nil
}

// htPartWorkers bounds the goroutines that partition a build's keys.
const htPartWorkers = 4

// partShares splits nb batches into contiguous shares [from, to), one a
// worker: one per core (at most htPartWorkers), at least a batch each. A
// table built by partition holds some 200,000 keys or more, enough for
// every core.
func partShares(nb int) [][2]int {
	w := max(1, min(runtime.GOMAXPROCS(0), htPartWorkers, nb))
	shares := make([][2]int, w)
	for i := range shares {
		shares[i] = [2]int{nb * i / w, nb * (i + 1) / w}
	}
	return shares
}

// forShares runs forBatchKeys over each share of batches on a goroutine
// of its own (the first on the caller's), with the batch function
// fnFor(w) gives share w and the row numbers of each share from 0; rows[w]
// is share w's rows. It returns the first error.
func forShares(ctx context.Context, shares [][2]int, encode func(i int, rk *RowKeys) error, fnFor func(w int) func(rk *RowKeys, base int) error, rows []int) error {
	errs := make([]error, len(shares))
	one := func(w int) {
		from, to := shares[w][0], shares[w][1]
		rows[w], errs[w] = forBatchKeys(ctx, to-from, func(i int, rk *RowKeys) error { return encode(from+i, rk) }, fnFor(w))
	}
	var wg sync.WaitGroup
	for w := 1; w < len(shares); w++ {
		wg.Go(func() { one(w) })
	}
	one(0)
	wg.Wait()
	return errors.Join(errs...)
}

// prefault writes each page of the inline slots once (a zero over the
// zero there), so that the kernel maps them before the inserts need
// them. It must end before the first insert.
func (t *HashTable) prefault() {
	const stride = 4096 / 16 // slots a page
	for i := 0; i < len(t.islots); i += stride {
		t.islots[i].id = 0
	}
}

// forBatchKeys encodes the nb batches in turn (encode, as addPartitioned
// takes it) and calls fn with each batch's keys and the build row number
// of its first row. It returns the rows of every batch.
func forBatchKeys(ctx context.Context, nb int, encode func(i int, rk *RowKeys) error, fn func(rk *RowKeys, base int) error) (int, error) {
	var rk RowKeys
	base := 0
	for i := 0; i < nb; i++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := encode(i, &rk); err != nil {
			return 0, err
		}
		if err := fn(&rk, base); err != nil {
			return 0, err
		}
		base += rk.N
	}
	return base, nil
}

// findOrInsertShort is FindOrInsert for a table of short keys, given the
// key as htInlineKey loads it; kb is scratch for the key's bytes.
func (t *HashTable) findOrInsertShort(k0 uint64, k1 uint32, kb *[16]byte) int32 {
	hash := htMix(k0, uint64(k1), t.width)
	i := hash >> t.shift
	for {
		s := &t.islots[i]
		if s.id == 0 {
			break
		}
		if s.k0 == k0 && s.k1 == k1 {
			return int32(s.id) - 1
		}
		i = (i + 1) & t.mask
	}
	if t.full() {
		t.grow()
		i = t.emptySlot(hash)
	}
	id := int32(t.n)
	t.islots[i] = htSlot{k0: k0, k1: k1, id: uint32(id + 1)}
	t.n++
	if o := len(t.arena); t.width == 9 && o+9 <= cap(t.arena) {
		// the common BIGINT key, into the arena sized up front, without
		// append's copy of a variable length
		t.arena = t.arena[:o+9]
		binary.LittleEndian.PutUint64(t.arena[o:o+8], k0)
		t.arena[o+8] = byte(k1)
		return id
	}
	binary.LittleEndian.PutUint64(kb[:8], k0)
	binary.LittleEndian.PutUint32(kb[8:12], k1)
	t.arena = append(t.arena, kb[:t.width]...)
	return id
}
