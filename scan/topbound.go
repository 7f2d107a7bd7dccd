package scan

import (
	"encoding/binary"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// ORDER BY col [DESC] LIMIT n over a table scan. The top-N (exec.Sort)
// holds the best n rows seen; once it has n, no row whose col is worse
// than its worst can enter. It tells the scan that value (TopBound.Set),
// and the scan leaves unread every file whose column bounds (Iceberg's
// lower and upper bounds in the manifests) say all its rows are worse.
// The scan reads the files whose bounds are best first, so that the
// top-N fills with good rows early: an `ORDER BY ts DESC LIMIT 10` over
// files written in time order reads the newest file and skips the rest.
//
// Within a file read page by page without deletes applied here, row
// groups go the same way by their Parquet statistics: best first, and
// left out where strictly worse (readPlainQuery).
//
// Only strictly worse files are left out: a row equal to the worst held
// could still enter (the top-N keeps rows by input order among equals),
// and a file that may hold a NULL is read where NULLs sort first. Files
// without bounds for the column are read first and never left out.

// TopBound is what a top-N over one integer-like column (INT, BIGINT,
// DATE, TIMESTAMP, TIMESTAMPTZ) has settled: the worst value it holds,
// once it holds its n rows. Safe for concurrent use.
type TopBound struct {
	FieldID    int          // the Iceberg field sorted by
	Type       iceberg.Type // its type
	Wide       bool         // 8-byte values (BIGINT, TIMESTAMP); else 4 (INT, DATE)
	Desc       bool
	NullsFirst bool

	mu  sync.Mutex
	set bool
	val int64
}

// Set records v, the worst value the top-N holds; the bound only
// tightens.
func (b *TopBound) Set(v int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.set || b.Desc && v > b.val || !b.Desc && v < b.val {
		b.val, b.set = v, true
	}
}

func (b *TopBound) value() (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.val, b.set
}

// bounds are the file's lower and upper bounds of the column; ok is
// false where the manifest has none (or not of the expected width).
func (b *TopBound) bounds(f iceberg.DataFile) (lo, hi int64, ok bool) {
	l, okl := f.LowerBoundValues()[b.FieldID]
	h, okh := f.UpperBoundValues()[b.FieldID]
	if !okl || !okh {
		return 0, 0, false
	}
	read := func(v []byte) (int64, bool) {
		switch {
		case b.Wide && len(v) == 8:
			return int64(binary.LittleEndian.Uint64(v)), true
		case !b.Wide && len(v) == 4:
			return int64(int32(binary.LittleEndian.Uint32(v))), true
		}
		return 0, false
	}
	lo, okl = read(l)
	hi, okh = read(h)
	return lo, hi, okl && okh
}

// mayHoldNull reports whether f may hold a NULL of the column.
func (b *TopBound) mayHoldNull(f iceberg.DataFile) bool {
	n, ok := f.NullValueCounts()[b.FieldID]
	return !ok || n > 0
}

// skips reports whether no row of task can enter the top-N (beaten).
func (b *TopBound) skips(task table.FileScanTask) bool {
	if b == nil {
		return false
	}
	lo, hi, ok := b.bounds(task.File)
	return b.beaten(lo, hi, ok, b.mayHoldNull(task.File))
}

// beaten reports whether values lo..hi (ok: known; nulls: a NULL may be
// among them) are all strictly worse than the worst the top-N holds,
// with no NULL that sorts first.
func (b *TopBound) beaten(lo, hi int64, ok, nulls bool) bool {
	v, set := b.value()
	if !set || !ok || b.NullsFirst && nulls {
		return false
	}
	if b.Desc {
		return hi < v
	}
	return lo > v
}

// topKey is a file's or row group's place in the reading order: those
// without usable bounds (or that may hold a NULL sorting first) first,
// then by key: DESC by upper bound, ASC by lower.
type topKey struct {
	first bool
	key   int64
}

func (b *TopBound) topKey(lo, hi int64, ok, nulls bool) topKey {
	k := topKey{first: !ok || b.NullsFirst && nulls, key: lo}
	if b.Desc {
		k.key = -hi
		if hi == -1<<63 {
			k.key = 1<<63 - 1
		}
	}
	return k
}

func cmpTopKey(x, y topKey) int {
	switch {
	case x.first != y.first:
		if x.first {
			return -1
		}
		return 1
	case x.key < y.key:
		return -1
	case x.key > y.key:
		return 1
	}
	return 0
}

// order sorts tasks so that the files whose bounds are best come first
// (topKey). The sort is stable, so the splits of one file stay together
// and in order.
func (b *TopBound) order(tasks []table.FileScanTask) {
	keys := make(map[string]topKey, len(tasks))
	for _, t := range tasks {
		p := t.File.FilePath()
		if _, ok := keys[p]; !ok {
			lo, hi, ok := b.bounds(t.File)
			keys[p] = b.topKey(lo, hi, ok, b.mayHoldNull(t.File))
		}
	}
	slices.SortStableFunc(tasks, func(x, y table.FileScanTask) int {
		return cmpTopKey(keys[x.File.FilePath()], keys[y.File.FilePath()])
	})
}

// groupBounds are row group g's statistics of the column: its smallest
// and largest value, and whether it may hold a NULL; ok is false where
// the file has no usable statistics for it.
func (b *TopBound) groupBounds(meta *metadata.FileMetaData, g int) (lo, hi int64, nulls, ok bool) {
	leaf := TopLeaf(meta.Schema, b.FieldID)
	if leaf < 0 || b.Type == nil {
		return 0, 0, false, false
	}
	cc, err := meta.RowGroup(g).ColumnChunk(leaf)
	if err != nil {
		return 0, 0, false, false
	}
	if set, err := cc.StatsSet(); err != nil || !set {
		return 0, 0, false, false
	}
	st, err := cc.Statistics()
	if err != nil || st == nil {
		return 0, 0, false, false
	}
	lo, hi, ok = StatsInts(meta.Schema.Column(leaf), st, b.Type)
	return lo, hi, !st.HasNullCount() || st.NullCount() > 0, ok
}

// skipsGroup is skips for row group g of a file.
func (b *TopBound) skipsGroup(meta *metadata.FileMetaData, g int) bool {
	if b == nil {
		return false
	}
	lo, hi, nulls, ok := b.groupBounds(meta, g)
	return b.beaten(lo, hi, ok, nulls)
}

// orderGroups sorts row groups best statistics first, as order sorts
// files.
func (b *TopBound) orderGroups(meta *metadata.FileMetaData, groups []int) []int {
	type keyed struct {
		g int
		k topKey
	}
	ks := make([]keyed, len(groups))
	for i, g := range groups {
		lo, hi, nulls, ok := b.groupBounds(meta, g)
		ks[i] = keyed{g, b.topKey(lo, hi, ok, nulls)}
	}
	slices.SortStableFunc(ks, func(x, y keyed) int { return cmpTopKey(x.k, y.k) })
	out := make([]int, len(ks))
	for i, k := range ks {
		out[i] = k.g
	}
	return out
}
