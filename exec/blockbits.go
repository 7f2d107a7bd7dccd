package exec

// BlockBits is a set of offsets from 0 to a span: one bit per offset,
// kept in blocks of 4096 offsets (512 bytes) for the blocks that hold
// one, and a directory from block number to bitmap block (0, all clear,
// for a block without offsets). Offsets in a few narrow ranges (ids, and
// new ids past the old) cost about a bit each, and offsets in order read
// it in order. A join's dense filter (hashtable_dense.go) and an
// upsert's check for repeated keys (lake) use it.
type BlockBits struct {
	dir      []uint32 // per block of offsets: its bitmap block, 0 when none
	bits     []uint64 // blockWords words per bitmap block; block 0 is all clear
	maxWords uint64
}

const (
	blockBitsShift = 12 // log2 of the offsets a block covers
	blockWords     = 1 << blockBitsShift / 64
)

// NewBlockBits returns an empty set for offsets 0..last. It returns nil
// when the directory would have maxDir entries or more; Add refuses a
// new block once the bitmap blocks (block 0 included) hold more than
// maxWords words.
func NewBlockBits(last, maxDir, maxWords uint64) *BlockBits {
	if last>>blockBitsShift >= maxDir {
		return nil
	}
	return &BlockBits{
		dir:      make([]uint32, last>>blockBitsShift+1),
		bits:     make([]uint64, blockWords, blockWords+min(maxWords, 1<<16)),
		maxWords: maxWords,
	}
}

// Add puts offset x (at most last) in the set and reports whether it
// was there already; ok is false, nothing added, when x needs a new
// block past maxWords.
func (b *BlockBits) Add(x uint64) (had, ok bool) {
	blk := &b.dir[x>>blockBitsShift]
	if *blk == 0 {
		if uint64(len(b.bits)) > b.maxWords {
			return false, false
		}
		*blk = uint32(len(b.bits) / blockWords)
		b.bits = append(b.bits, make([]uint64, blockWords)...)
	}
	w := &b.bits[uint64(*blk)*blockWords+(x>>6)%blockWords]
	bit := uint64(1) << (x & 63)
	had = *w&bit != 0
	*w |= bit
	return had, true
}

// bit is 1 when offset x (at most last) is in the set, else 0.
func (b *BlockBits) bit(x uint64) uint64 {
	return b.bits[uint64(b.dir[x>>blockBitsShift])*blockWords+(x>>6)%blockWords] >> (x & 63) & 1
}

// Bytes is the memory the set holds.
func (b *BlockBits) Bytes() int64 {
	return int64(len(b.bits))*8 + int64(len(b.dir))*4
}
