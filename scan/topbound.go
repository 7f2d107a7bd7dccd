package scan

import (
	"encoding/binary"
	"math"
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
//
// A DOUBLE or REAL column's values are compared as FloatKey orders them:
// NaN above every number, as the engine sorts, and -0 equal to 0. Bounds
// leave NaN out, so in a descending order, where NaN comes first, a file
// is read first and never left out unless it counts no NaN (its Iceberg
// NaN count is 0), and its row groups likewise.

// TopBound is what a top-N over one integer-like or floating-point
// column (INT, BIGINT, DATE, TIMESTAMP, TIMESTAMPTZ, REAL, DOUBLE) has
// settled: the worst value it holds (as FloatKey for floats), once it
// holds its n rows. Safe for concurrent use.
type TopBound struct {
	FieldID    int          // the Iceberg field sorted by
	Type       iceberg.Type // its type
	Wide       bool         // 8-byte values (BIGINT, TIMESTAMP, DOUBLE); else 4 (INT, DATE, REAL)
	Float      bool         // REAL or DOUBLE: values are FloatKeys
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

// FloatKey maps a float to an int64 in the order the engine sorts
// floats: -Inf first, -0 and 0 as one, +Inf, then NaN (every NaN one
// key, above all numbers).
func FloatKey(x float64) int64 {
	switch {
	case x != x:
		return math.MaxInt64
	case x == 0:
		x = 0 // -0 as 0
	}
	u := math.Float64bits(x)
	if u>>63 == 1 {
		u = ^u // negative: larger magnitude first
	} else {
		u |= 1 << 63
	}
	return int64(u ^ 1<<63)
}

// bounds are the file's lower and upper bounds of the column; ok is
// false where the manifest has none (or not of the expected width, or a
// NaN: some writers' bounds hold one, and then say nothing).
func (b *TopBound) bounds(f iceberg.DataFile) (lo, hi int64, ok bool) {
	l, okl := f.LowerBoundValues()[b.FieldID]
	h, okh := f.UpperBoundValues()[b.FieldID]
	if !okl || !okh {
		return 0, 0, false
	}
	read := func(v []byte) (int64, bool) {
		switch {
		case b.Float && b.Wide && len(v) == 8:
			x := math.Float64frombits(binary.LittleEndian.Uint64(v))
			return FloatKey(x), x == x
		case b.Float && !b.Wide && len(v) == 4:
			x := float64(math.Float32frombits(binary.LittleEndian.Uint32(v)))
			return FloatKey(x), x == x
		case b.Float:
			return 0, false
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

// nanFirst reports whether f may hold a NaN of the column that sorts
// first (a descending order of a float column), which no bound shows.
func (b *TopBound) nanFirst(f iceberg.DataFile) bool {
	if b == nil || !b.Float || !b.Desc {
		return false
	}
	n, ok := f.NaNValueCounts()[b.FieldID]
	return !ok || n > 0
}

// skips reports whether no row of task can enter the top-N (beaten).
func (b *TopBound) skips(task table.FileScanTask) bool {
	if b == nil {
		return false
	}
	lo, hi, ok := b.bounds(task.File)
	return b.beaten(lo, hi, ok && !b.nanFirst(task.File), b.mayHoldNull(task.File))
}

// beaten reports whether values lo..hi (ok: known, and no NaN sorting
// first among them; nulls: a NULL may be among them) are all strictly
// worse than the worst the top-N holds, with no NULL that sorts first.
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
// without usable bounds (or that may hold a NULL or NaN sorting first)
// first, then by key: DESC by upper bound, ASC by lower.
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
			keys[p] = b.topKey(lo, hi, ok && !b.nanFirst(t.File), b.mayHoldNull(t.File))
		}
	}
	slices.SortStableFunc(tasks, func(x, y table.FileScanTask) int {
		return cmpTopKey(keys[x.File.FilePath()], keys[y.File.FilePath()])
	})
}

// groupBounds are row group g's statistics of the column: its smallest
// and largest value, and whether it may hold a NULL; ok is false where
// the file has no usable statistics for it, or (nanFirst: its data file
// may hold a NaN sorting first) may hold a NaN they do not show.
func (b *TopBound) groupBounds(meta *metadata.FileMetaData, g int, nanFirst bool) (lo, hi int64, nulls, ok bool) {
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
	if b.Float {
		lo, hi, ok = statsFloatKeys(st)
		ok = ok && !nanFirst
	} else {
		lo, hi, ok = StatsInts(meta.Schema.Column(leaf), st, b.Type)
	}
	return lo, hi, !st.HasNullCount() || st.NullCount() > 0, ok
}

// statsFloatKeys are a float chunk's minimum and maximum as FloatKeys;
// ok is false without them, or where one is a NaN.
func statsFloatKeys(st metadata.TypedStatistics) (lo, hi int64, ok bool) {
	l, h, ok := statsFloats(st)
	return FloatKey(l), FloatKey(h), ok
}

// statsFloats are a REAL or DOUBLE chunk's minimum and maximum; ok is
// false without them, or where one is a NaN (some writers' statistics
// hold one, and then say nothing).
func statsFloats(st metadata.TypedStatistics) (lo, hi float64, ok bool) {
	if !st.HasMinMax() {
		return 0, 0, false
	}
	switch s := st.(type) {
	case *metadata.Float64Statistics:
		lo, hi = s.Min(), s.Max()
	case *metadata.Float32Statistics:
		lo, hi = float64(s.Min()), float64(s.Max())
	default:
		return 0, 0, false
	}
	return lo, hi, lo == lo && hi == hi
}

// skipsGroup is skips for row group g of a file (nanFirst: the data file
// may hold a NaN sorting first).
func (b *TopBound) skipsGroup(meta *metadata.FileMetaData, g int, nanFirst bool) bool {
	if b == nil {
		return false
	}
	lo, hi, nulls, ok := b.groupBounds(meta, g, nanFirst)
	return b.beaten(lo, hi, ok, nulls)
}

// orderGroups sorts row groups best statistics first, as order sorts
// files.
func (b *TopBound) orderGroups(meta *metadata.FileMetaData, groups []int, nanFirst bool) []int {
	type keyed struct {
		g int
		k topKey
	}
	ks := make([]keyed, len(groups))
	for i, g := range groups {
		lo, hi, nulls, ok := b.groupBounds(meta, g, nanFirst)
		ks[i] = keyed{g, b.topKey(lo, hi, ok, nulls)}
	}
	slices.SortStableFunc(ks, func(x, y keyed) int { return cmpTopKey(x.k, y.k) })
	out := make([]int, len(ks))
	for i, k := range ks {
		out[i] = k.g
	}
	return out
}
