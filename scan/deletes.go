package scan

import (
	"bytes"
	"container/list"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
)

// deleteIndex applies a scan's position and equality delete files itself,
// instead of leaving them to iceberg-go, which re-derives them per data file
// and per batch (a hash-set probe per row, a Take per batch, equality sets
// merged again for every data file).
//
// Each delete file is read once per scan, whichever data files it touches:
// a position delete file into its positions grouped by data file path, an
// equality delete file into one index of keys per set of equality columns,
// each key naming the delete files that hold it. A data file's deletes are
// then a sorted list of positions plus, per equality index, the delete files
// that apply to it; filtering a batch walks the positions and probes each
// row's key once.
//
// Which delete file applies to which data file is iceberg-go's planning:
// FileScanTask lists the position deletes with a data sequence number >= the
// data file's and the equality deletes with a strictly greater one, in the
// same partition (or global). The index never widens that choice.
//
// INVARIANT: a task read through the index is read whole (Start 0, the
// whole file) with no row filter and no residual, so that its rows come in
// file order from position 0; the pushed filter is only ever implied by the
// query's own predicate, which the planner evaluates above the scan.
type deleteIndex struct {
	fs     iceio.IO
	mem    memory.Allocator
	schema *iceberg.Schema // the schema the scan reads with

	// eqScan reads an equality delete file's key columns (by field id, so
	// renamed columns and promoted types read as the data does).
	eqScan func(names []string, batch int) *table.Scan

	pos map[string]*posDeleteFile // by delete file path
	dvs map[string]*posDeleteFile // deletion vectors, by dvKey

	eqOnce sync.Once
	eqErr  error
	eqIdx  map[string]*eqIndex // by equality field ids, "1,3"
	eqFile map[string]int      // delete file path -> ordinal in its eqIndex
}

// posDeleteFile is one position delete file, read on first use.
type posDeleteFile struct {
	df     iceberg.DataFile
	once   sync.Once
	byPath map[string][]int64
	err    error
}

// eqIndex holds the keys of every equality delete file of the scan that
// deletes on one set of columns. A key maps to the delete files holding it:
// a non-negative posting is one file's ordinal, a negative one indexes
// multi (-p-1) for keys in several files.
type eqIndex struct {
	ids   []int
	names []string // the key columns in the scan's schema
	files []iceberg.DataFile
	ints  map[int64]int32 // one integer key column
	// dense replaces ints when the keys are dense: dense[k-denseMin] is
	// k's posting or noPosting.
	dense    []int32
	denseMin int64
	// bits is a one-hash Bloom filter over ints, probed before the map:
	// most data rows are not deleted, and a bit test stays in cache where
	// a map probe does not. bitsShift makes a hash an index into it.
	bits      []uint64
	bitsShift uint
	strs      map[string]int32 // any other key
	multi     [][]int32
	// nulls is the posting of the all-NULL key in the integer form (a NULL
	// key in an equality delete matches NULL in the data).
	nulls    int32
	hasNulls bool
}

func newDeleteIndex(fs iceio.IO, mem memory.Allocator, schema *iceberg.Schema, eqScan func(names []string, batch int) *table.Scan) *deleteIndex {
	return &deleteIndex{fs: fs, mem: mem, schema: schema, eqScan: eqScan, pos: map[string]*posDeleteFile{}, dvs: map[string]*posDeleteFile{}, eqIdx: map[string]*eqIndex{}, eqFile: map[string]int{}}
}

// accept reports whether the index can apply task's deletes, and registers
// its delete files if so. A task it refuses is read by iceberg-go with its
// deletes, as before: split files, formats other than Parquet, deletion
// vectors that do not name the task's file, equality keys on dropped
// columns or of types without a key encoding here.
func (x *deleteIndex) accept(t table.FileScanTask) bool {
	if len(t.DeleteFiles) == 0 && len(t.EqualityDeleteFiles) == 0 && len(t.DeletionVectorFiles) == 0 {
		return false
	}
	if t.File.FileFormat() != iceberg.ParquetFile {
		return false
	}
	for _, d := range t.DeletionVectorFiles {
		ref := d.ReferencedDataFile()
		if d.FileFormat() != iceberg.PuffinFile || ref == nil || *ref != t.File.FilePath() || d.ContentOffset() == nil || d.ContentSizeInBytes() == nil {
			return false
		}
	}
	if t.Start != 0 || (t.Length > 0 && t.Length < t.File.FileSizeBytes()) {
		return false
	}
	for _, d := range t.DeleteFiles {
		if d.FileFormat() != iceberg.ParquetFile || d.ContentType() != iceberg.EntryContentPosDeletes {
			return false
		}
	}
	for _, d := range t.EqualityDeleteFiles {
		if d.FileFormat() != iceberg.ParquetFile || d.ContentType() != iceberg.EntryContentEqDeletes || len(d.EqualityFieldIDs()) == 0 {
			return false
		}
		for _, id := range d.EqualityFieldIDs() {
			// top-level columns only: a nested key would be read by path
			i := slices.IndexFunc(x.schema.Fields(), func(f iceberg.NestedField) bool { return f.ID == id })
			if i < 0 || !eqKeyType(x.schema.Field(i).Type) {
				return false
			}
		}
	}
	for _, d := range t.DeleteFiles {
		if _, ok := x.pos[d.FilePath()]; !ok {
			x.pos[d.FilePath()] = &posDeleteFile{df: d}
		}
	}
	for _, d := range t.DeletionVectorFiles {
		if _, ok := x.dvs[dvKey(d)]; !ok {
			x.dvs[dvKey(d)] = &posDeleteFile{df: d}
		}
	}
	for _, d := range t.EqualityDeleteFiles {
		key := idsKey(d.EqualityFieldIDs())
		ix := x.eqIdx[key]
		if ix == nil {
			ix = &eqIndex{ids: slices.Clone(d.EqualityFieldIDs())}
			for _, id := range ix.ids {
				f, _ := x.schema.FindFieldByID(id)
				ix.names = append(ix.names, f.Name)
			}
			x.eqIdx[key] = ix
		}
		if _, ok := x.eqFile[d.FilePath()]; !ok {
			x.eqFile[d.FilePath()] = len(ix.files)
			ix.files = append(ix.files, d)
		}
	}
	return true
}

// eqColumns are the columns an accepted task must read besides the
// selected ones: every equality key column of the scan.
func (x *deleteIndex) eqColumns() []string {
	var out []string
	for _, ix := range x.eqIdx {
		for _, n := range ix.names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

func idsKey(ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(id))
	}
	return b.String()
}

// eqKeyType reports whether keys of type t are encoded here. Iceberg
// refuses float and double equality keys.
func eqKeyType(t iceberg.Type) bool {
	switch t.(type) {
	case iceberg.BooleanType, iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimeType,
		iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType,
		iceberg.StringType, iceberg.BinaryType, iceberg.UUIDType, iceberg.FixedType, iceberg.DecimalType:
		return true
	}
	return false
}

// fileDeletes is what the index knows of one data file's deletes.
type fileDeletes struct {
	positions []int64 // sorted, distinct
	eq        []eqApplied
}

// eqApplied is one equality index and which of its files apply to the
// data file.
type eqApplied struct {
	ix      *eqIndex
	applies []bool // by file ordinal
}

// forTask gathers the deletes of an accepted task, reading delete files it
// is the first to need.
func (x *deleteIndex) forTask(ctx context.Context, t table.FileScanTask) (*fileDeletes, error) {
	fd := &fileDeletes{}
	path := t.File.FilePath()
	// read the delete files not read yet side by side: every worker's
	// first file tends to need all of them
	var wg sync.WaitGroup
	for _, d := range t.DeleteFiles {
		pf := x.pos[d.FilePath()]
		wg.Go(func() { pf.once.Do(func() { pf.byPath, pf.err = x.positionsOf(ctx, pf.df) }) })
	}
	for _, d := range t.DeletionVectorFiles {
		pf := x.dvs[dvKey(d)]
		wg.Go(func() { pf.once.Do(func() { pf.byPath, pf.err = x.vectorOf(pf.df) }) })
	}
	wg.Wait()
	lists := make([][]int64, 0, len(t.DeleteFiles)+len(t.DeletionVectorFiles))
	for _, d := range t.DeleteFiles {
		pf := x.pos[d.FilePath()]
		if pf.err != nil {
			return nil, pf.err
		}
		if ps := pf.byPath[path]; len(ps) > 0 {
			lists = append(lists, ps)
		}
	}
	for _, d := range t.DeletionVectorFiles {
		pf := x.dvs[dvKey(d)]
		if pf.err != nil {
			return nil, pf.err
		}
		if ps := pf.byPath[path]; len(ps) > 0 {
			lists = append(lists, ps)
		}
	}
	fd.positions = mergePositions(lists)
	if len(t.EqualityDeleteFiles) == 0 {
		return fd, nil
	}
	x.eqOnce.Do(func() { x.eqErr = x.readEqualities(ctx) })
	if x.eqErr != nil {
		return nil, x.eqErr
	}
	for _, d := range t.EqualityDeleteFiles {
		ix := x.eqIdx[idsKey(d.EqualityFieldIDs())]
		i := slices.IndexFunc(fd.eq, func(a eqApplied) bool { return a.ix == ix })
		if i < 0 {
			fd.eq = append(fd.eq, eqApplied{ix: ix, applies: make([]bool, len(ix.files))})
			i = len(fd.eq) - 1
		}
		fd.eq[i].applies[x.eqFile[d.FilePath()]] = true
	}
	return fd, nil
}

// mergePositions is the positions of lists in order, without repeats
// when there are several lists. The lists are shared (the cache's) and
// left as they are. The spec orders a delete file's positions, so sorted
// lists are merged pairwise, O(n log k); a writer that did not sort them
// costs a sort.
func mergePositions(lists [][]int64) []int64 {
	sorted := true
	for _, l := range lists {
		if !slices.IsSorted(l) {
			sorted = false
			break
		}
	}
	switch {
	case len(lists) == 0:
		return nil
	case len(lists) == 1 && sorted:
		return lists[0]
	case !sorted:
		var all []int64
		for _, l := range lists {
			all = append(all, l...)
		}
		slices.Sort(all)
		return slices.Compact(all)
	}
	for len(lists) > 1 {
		next := make([][]int64, 0, (len(lists)+1)/2)
		for i := 0; i+1 < len(lists); i += 2 {
			next = append(next, mergeTwo(lists[i], lists[i+1]))
		}
		if len(lists)%2 == 1 {
			next = append(next, lists[len(lists)-1])
		}
		lists = next
	}
	return lists[0]
}

// mergeTwo merges two sorted lists into a new one, each value once.
func mergeTwo(a, b []int64) []int64 {
	out := make([]int64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		var v int64
		switch {
		case a[i] < b[j]:
			v = a[i]
			i++
		case b[j] < a[i]:
			v = b[j]
			j++
		default:
			v = a[i]
			i++
			j++
		}
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	for _, v := range a[i:] {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	for _, v := range b[j:] {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

// positionsOf is readPositions through the process-wide cache.
func (x *deleteIndex) positionsOf(ctx context.Context, df iceberg.DataFile) (map[string][]int64, error) {
	key := df.FilePath() + "\x00" + strconv.FormatInt(df.FileSizeBytes(), 10)
	if m, ok := positionCache.get(key); ok {
		return m, nil
	}
	m, err := x.readPositions(ctx, df)
	if err != nil {
		return nil, err
	}
	var n int64
	for _, ps := range m {
		n += int64(len(ps))
	}
	positionCache.put(key, m, n)
	return m, nil
}

// FilePositions returns the positions that position delete file df
// deletes in data file dataPath, in the file's order (the spec orders
// them; a writer may not have), or, for a deletion vector, every position
// it holds, ascending; read through the process-wide cache, as the delete
// index reads them. The slice is shared with the cache: the caller must
// not modify it.
func FilePositions(ctx context.Context, fs iceio.IO, mem memory.Allocator, df iceberg.DataFile, dataPath string) ([]int64, error) {
	x := newDeleteIndex(fs, mem, nil, nil)
	if df.FileFormat() != iceberg.PuffinFile {
		m, err := x.positionsOf(ctx, df)
		if err != nil {
			return nil, err
		}
		return m[dataPath], nil
	}
	ref := df.ReferencedDataFile()
	if ref == nil || df.ContentOffset() == nil || df.ContentSizeInBytes() == nil {
		// (what vectorOf keys on is missing: iceberg-go's reader says which)
		if _, err := dv.ReadDV(fs, df); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("deletion vector %s lacks its data file, blob offset or blob length", df.FilePath())
	}
	m, err := x.vectorOf(df)
	if err != nil {
		return nil, err
	}
	return m[*ref], nil
}

// MergePositions merges two ascending position lists into a new one,
// each value once.
func MergePositions(a, b []int64) []int64 { return mergeTwo(a, b) }

// dvKey identifies a deletion vector: one blob of a Puffin file.
func dvKey(d iceberg.DataFile) string {
	return d.FilePath() + "\x00" + strconv.FormatInt(*d.ContentOffset(), 10) + "\x00" + strconv.FormatInt(*d.ContentSizeInBytes(), 10)
}

// vectorOf reads deletion vector d (accept checked its fields) into its
// positions, ascending, keyed by the data file it names, through the
// process-wide cache as positionsOf.
func (x *deleteIndex) vectorOf(d iceberg.DataFile) (map[string][]int64, error) {
	key := "dv\x00" + dvKey(d)
	if m, ok := positionCache.get(key); ok {
		return m, nil
	}
	bm, err := dv.ReadDV(x.fs, d)
	if err != nil {
		return nil, fmt.Errorf("read deletion vector %s: %w", d.FilePath(), err)
	}
	var ps []int64
	for p := range bm.Positions() {
		ps = append(ps, int64(p))
	}
	m := map[string][]int64{*d.ReferencedDataFile(): ps}
	positionCache.put(key, m, int64(len(ps)))
	return m, nil
}

// positionCache keeps the positions of recently read position delete
// files, so that a table scanned again does not parse its delete files
// again. Iceberg never rewrites a file in place, and the key includes
// the size besides the path. INVARIANT: cached maps are never modified.
var positionCache = newLRU[map[string][]int64](8 << 20 /* positions, 64 MiB */)

// eqCache keeps built equality indexes, keyed by their columns and files:
// scans of one snapshot share them. INVARIANT: a cached index is never
// modified.
var eqCache = newLRU[*eqIndex](8 << 20 /* keys */)

// DropDeleteCaches empties the caches of parsed delete files, so that the
// next scans read their delete files again (a benchmark's cold scan; a
// process shedding memory).
func DropDeleteCaches() {
	positionCache.clear()
	eqCache.clear()
}

// lru is a cache bounded by the sum of its entries' sizes.
type lru[V any] struct {
	mu      sync.Mutex
	max     int64
	size    int64
	entries map[string]*list.Element
	order   list.List // of *lruEntry[V], most recent first
}

type lruEntry[V any] struct {
	key  string
	val  V
	size int64
}

func newLRU[V any](max int64) *lru[V] {
	return &lru[V]{max: max, entries: map[string]*list.Element{}}
}

func (c *lru[V]) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = map[string]*list.Element{}
	c.order.Init()
	c.size = 0
}

func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry[V]).val, true
}

func (c *lru[V]) put(key string, val V, size int64) {
	if size > c.max/4 {
		return // one entry would crowd out the rest
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; ok {
		return
	}
	c.entries[key] = c.order.PushFront(&lruEntry[V]{key: key, val: val, size: size})
	c.size += size
	for c.size > c.max {
		last := c.order.Back()
		ent := last.Value.(*lruEntry[V])
		c.order.Remove(last)
		delete(c.entries, ent.key)
		c.size -= ent.size
	}
}

// readPositions reads a position delete file into its positions grouped by
// data file path.
func (x *deleteIndex) readPositions(ctx context.Context, df iceberg.DataFile) (_ map[string][]int64, err error) {
	f, err := x.fs.Open(df.FilePath())
	if err != nil {
		return nil, fmt.Errorf("read position deletes %s: %w", df.FilePath(), err)
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, fmt.Errorf("read position deletes %s: %w", df.FilePath(), err)
	}
	defer pr.Close()
	sc := pr.MetaData().Schema
	pathCol, posCol := sc.ColumnIndexByName("file_path"), sc.ColumnIndexByName("pos")
	if pathCol < 0 || posCol < 0 {
		return nil, fmt.Errorf("read position deletes %s: no file_path and pos columns; is it a position delete file?", df.FilePath())
	}
	// file_path repeats a few paths: when the file stores it as a
	// dictionary, read it so, and a row costs an index, not a string (a
	// plainly encoded column would be hashed into one: slower)
	// a batch sized to the file: delete files are often tiny, and the
	// reader allocates a whole batch up front
	props := pqarrow.ArrowReadProperties{BatchSize: int64(ReadBatchRows(int(min(max(df.Count(), 1024), 1<<16))))}
	props.SetReadDict(pathCol, dictEncoded(pr, pathCol))
	fr, err := pqarrow.NewFileReader(pr, props, x.mem)
	if err != nil {
		return nil, fmt.Errorf("read position deletes %s: %w", df.FilePath(), err)
	}
	if only := OnlyDataFile(df); only != "" {
		// one data file: its positions are the pos column
		rr, err := fr.GetRecordReader(ctx, []int{posCol}, nil)
		if err != nil {
			return nil, fmt.Errorf("read position deletes %s: %w", df.FilePath(), err)
		}
		defer rr.Release()
		positions := make([]int64, 0, df.Count())
		for rr.Next() {
			pos, ok := rr.RecordBatch().Column(0).(*array.Int64)
			if !ok || pos.NullN() > 0 {
				return nil, fmt.Errorf("read position deletes %s: pos is %s with %d NULLs, want int64 and none", df.FilePath(), rr.RecordBatch().Column(0).DataType(), rr.RecordBatch().Column(0).NullN())
			}
			positions = append(positions, pos.Int64Values()...)
		}
		if err := rr.Err(); err != nil {
			return nil, fmt.Errorf("read position deletes %s: %w", df.FilePath(), err)
		}
		return map[string][]int64{only: positions}, nil
	}
	rr, err := fr.GetRecordReader(ctx, []int{pathCol, posCol}, nil)
	if err != nil {
		return nil, fmt.Errorf("read position deletes %s: %w", df.FilePath(), err)
	}
	defer rr.Release()
	out := map[string][]int64{}
	for rr.Next() {
		rec := rr.RecordBatch()
		pos, ok := rec.Column(1).(*array.Int64)
		if !ok {
			return nil, fmt.Errorf("read position deletes %s: pos is %s, want int64", df.FilePath(), rec.Column(1).DataType())
		}
		if pos.NullN() > 0 || rec.Column(0).NullN() > 0 {
			return nil, fmt.Errorf("read position deletes %s: row with a NULL file_path or pos", df.FilePath())
		}
		switch paths := rec.Column(0).(type) {
		case *array.Dictionary:
			dict, ok := paths.Dictionary().(interface{ Value(int) string })
			if !ok {
				return nil, fmt.Errorf("read position deletes %s: file_path is %s, want a string", df.FilePath(), paths.DataType())
			}
			names := make([]string, paths.Dictionary().Len())
			lists := make([][]int64, len(names))
			for i := range names {
				names[i] = strings.Clone(dict.Value(i))
				lists[i] = out[names[i]]
			}
			for i := 0; i < pos.Len(); i++ {
				d := paths.GetValueIndex(i)
				lists[d] = append(lists[d], pos.Value(i))
			}
			for i, n := range names {
				if lists[i] != nil {
					out[n] = lists[i]
				}
			}
		case interface{ Value(int) string }:
			var cur string
			var curPos []int64
			have := false
			for i := 0; i < pos.Len(); i++ {
				if p := paths.Value(i); !have || p != cur {
					if have {
						out[cur] = curPos
					}
					cur = strings.Clone(p)
					curPos = out[cur]
					have = true
				}
				curPos = append(curPos, pos.Value(i))
			}
			if have {
				out[cur] = curPos
			}
		default:
			return nil, fmt.Errorf("read position deletes %s: file_path is %s, want a string", df.FilePath(), paths.DataType())
		}
	}
	if err := rr.Err(); err != nil {
		return nil, fmt.Errorf("read position deletes %s: %w", df.FilePath(), err)
	}
	return out, nil
}

// posDeletePathID is the field id of a position delete file's file_path.
const posDeletePathID = 2147483546

// OnlyDataFile is the one data file a position delete file or deletion
// vector df applies to, or "" when it may name several: its referenced
// data file, or equal lower and upper bounds of file_path (a truncated
// bound never equals its upper counterpart, which is incremented).
func OnlyDataFile(df iceberg.DataFile) string {
	if ref := df.ReferencedDataFile(); ref != nil {
		return *ref
	}
	lo, hi := df.LowerBoundValues()[posDeletePathID], df.UpperBoundValues()[posDeletePathID]
	if lo != nil && bytes.Equal(lo, hi) {
		return string(lo)
	}
	return ""
}

// dictEncoded reports whether every row group stores column col with a
// dictionary.
func dictEncoded(pr *file.Reader, col int) bool {
	md := pr.MetaData()
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		cc, err := md.RowGroup(rg).ColumnChunk(col)
		if err != nil || !cc.HasDictionaryPage() {
			return false
		}
	}
	return md.NumRowGroups() > 0
}

// readEqualities reads every equality delete file of the scan into the
// indexes.
func (x *deleteIndex) readEqualities(ctx context.Context) error {
	for key, ix := range x.eqIdx {
		var ck strings.Builder
		ck.WriteString(key)
		for _, df := range ix.files {
			fmt.Fprintf(&ck, "\x00%s\x00%d", df.FilePath(), df.FileSizeBytes())
		}
		if cached, ok := eqCache.get(ck.String()); ok {
			x.eqIdx[key] = cached
			continue
		}
		keys := make([]*eqKeys, len(ix.files))
		errs := make([]error, len(ix.files))
		var wg sync.WaitGroup
		sem := make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))
		for ord, df := range ix.files {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				keys[ord], errs[ord] = x.readEquality(ctx, ix.names, df)
			})
		}
		wg.Wait()
		for ord, df := range ix.files {
			if errs[ord] != nil {
				return fmt.Errorf("read equality deletes %s: %w", df.FilePath(), errs[ord])
			}
		}
		ix.planDense(keys)
		for ord := range ix.files {
			ix.merge(int32(ord), keys[ord])
		}
		ix.buildBits()
		eqCache.put(ck.String(), ix, int64(len(ix.ints)+len(ix.dense)/8+len(ix.strs)))
	}
	return nil
}

// planDense allocates the dense slot array when the files' integer keys
// span at most 16 slots per key: a probe is then one load, and building it
// skips a map.
func (ix *eqIndex) planDense(files []*eqKeys) {
	n := 0
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, f := range files {
		n += len(f.ints)
		for _, k := range f.ints {
			lo, hi = min(lo, k), max(hi, k)
		}
	}
	if n < 64 || uint64(hi-lo) >= uint64(16*n) {
		return
	}
	ix.dense = make([]int32, hi-lo+1)
	for i := range ix.dense {
		ix.dense[i] = noPosting
	}
	ix.denseMin = lo
}

// noPosting marks a key absent in eqIndex.dense.
const noPosting = math.MinInt32

// buildBits sizes the Bloom filter at 16 bits per key (a false positive
// rate near 6%).
func (ix *eqIndex) buildBits() {
	if len(ix.ints) == 0 {
		return
	}
	logBits := uint(6)
	for 1<<logBits < 16*len(ix.ints) {
		logBits++
	}
	ix.bits = make([]uint64, 1<<(logBits-6))
	ix.bitsShift = 64 - logBits
	for k := range ix.ints {
		h := ix.hash(k)
		ix.bits[h>>6] |= 1 << (h & 63)
	}
}

func (ix *eqIndex) hash(k int64) uint64 { return (uint64(k) * 0x9e3779b97f4a7c15) >> ix.bitsShift }

// mayHold reports whether integer key k may be in the index.
func (ix *eqIndex) mayHold(k int64) bool {
	if ix.bits == nil {
		return false
	}
	h := ix.hash(k)
	return ix.bits[h>>6]&(1<<(h&63)) != 0
}

// eqKeys are one equality delete file's keys.
type eqKeys struct {
	ints  []int64
	strs  []string
	nulls bool // an all-NULL integer key
}

// readEquality reads one equality delete file's keys; it touches no
// shared state, so files are read side by side.
func (x *deleteIndex) readEquality(ctx context.Context, names []string, df iceberg.DataFile) (*eqKeys, error) {
	sc := x.eqScan(names, min(max(int(df.Count()), 1024), 1<<16))
	defer sc.Close()
	_, seq, err := sc.ReadTasks(ctx, []table.FileScanTask{{File: df, Start: 0, Length: df.FileSizeBytes()}})
	if err != nil {
		return nil, err
	}
	keys := &eqKeys{}
	var buf []byte
	for rec, err := range seq {
		if err != nil {
			return nil, err
		}
		cols, err := keyColumns(rec, names)
		if err != nil {
			rec.Release()
			return nil, err
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			if k, null, ok := intKey(cols, r); ok {
				if null {
					keys.nulls = true
				} else {
					keys.ints = append(keys.ints, k)
				}
				continue
			}
			buf = appendKey(buf[:0], cols, r)
			keys.strs = append(keys.strs, string(buf))
		}
		rec.Release()
	}
	return keys, nil
}

// merge adds file ord's keys to the index.
func (ix *eqIndex) merge(ord int32, keys *eqKeys) {
	if keys.nulls {
		ix.nulls = ix.add(ix.nulls, ix.hasNulls, ord)
		ix.hasNulls = true
	}
	if ix.dense != nil {
		for _, k := range keys.ints {
			slot := &ix.dense[k-ix.denseMin]
			*slot = ix.add(*slot, *slot != noPosting, ord)
		}
	} else {
		if len(keys.ints) > 0 && ix.ints == nil {
			ix.ints = make(map[int64]int32, len(keys.ints))
		}
		for _, k := range keys.ints {
			p, had := ix.ints[k]
			ix.ints[k] = ix.add(p, had, ord)
		}
	}
	if len(keys.strs) > 0 && ix.strs == nil {
		ix.strs = make(map[string]int32, len(keys.strs))
	}
	for _, k := range keys.strs {
		p, had := ix.strs[k]
		ix.strs[k] = ix.add(p, had, ord)
	}
}

// add returns posting p (if had) with ordinal ord added.
func (ix *eqIndex) add(p int32, had bool, ord int32) int32 {
	switch {
	case !had:
		return ord
	case p >= 0:
		if p == ord {
			return p
		}
		ix.multi = append(ix.multi, []int32{p, ord})
		return -int32(len(ix.multi))
	default:
		m := &ix.multi[-p-1]
		if !slices.Contains(*m, ord) {
			*m = append(*m, ord)
		}
		return p
	}
}

// hit reports whether posting p names a file that applies.
func (ix *eqIndex) hit(p int32, applies []bool) bool {
	if p >= 0 {
		return applies[p]
	}
	for _, o := range ix.multi[-p-1] {
		if applies[o] {
			return true
		}
	}
	return false
}

// keyColumns finds the key columns of rec by name.
func keyColumns(rec arrow.RecordBatch, names []string) ([]arrow.Array, error) {
	cols := make([]arrow.Array, len(names))
	for i, n := range names {
		idx := rec.Schema().FieldIndices(n)
		if len(idx) == 0 {
			return nil, fmt.Errorf("equality key column %q missing from the data read (bug)", n)
		}
		cols[i] = rec.Column(idx[0])
	}
	return cols, nil
}

// intKey is row r's key when it is one integer column; ok is false for
// any other key.
func intKey(cols []arrow.Array, r int) (k int64, null, ok bool) {
	if len(cols) != 1 {
		return 0, false, false
	}
	c := cols[0]
	if c.IsNull(r) {
		switch c.(type) {
		case *array.Int32, *array.Int64, *array.Date32, *array.Time64, *array.Timestamp:
			return 0, true, true
		}
		return 0, false, false
	}
	switch a := c.(type) {
	case *array.Int32:
		return int64(a.Value(r)), false, true
	case *array.Int64:
		return a.Value(r), false, true
	case *array.Date32:
		return int64(a.Value(r)), false, true
	case *array.Time64:
		return int64(a.Value(r)), false, true
	case *array.Timestamp:
		return int64(a.Value(r)), false, true
	}
	return 0, false, false
}

// appendKey encodes row r of cols: per column a NULL tag, then the value
// (integers widened to 8 bytes, variable-length values length-prefixed),
// so distinct keys encode distinctly.
func appendKey(dst []byte, cols []arrow.Array, r int) []byte {
	for _, c := range cols {
		if c.IsNull(r) {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, 1)
		switch a := c.(type) {
		case *array.Boolean:
			if a.Value(r) {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		case *array.Int32:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Value(r)))
		case *array.Int64:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Value(r)))
		case *array.Date32:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Value(r)))
		case *array.Time64:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Value(r)))
		case *array.Timestamp:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Value(r)))
		case *array.String:
			dst = appendString(dst, a.Value(r))
		case *array.LargeString:
			dst = appendString(dst, a.Value(r))
		case *array.Binary:
			dst = appendBytes(dst, a.Value(r))
		case *array.LargeBinary:
			dst = appendBytes(dst, a.Value(r))
		case *array.FixedSizeBinary:
			dst = appendBytes(dst, a.Value(r))
		case *array.Decimal128:
			v := a.Value(r)
			dst = binary.LittleEndian.AppendUint64(dst, v.LowBits())
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v.HighBits()))
		default:
			// INVARIANT: eqKeyType admits only the types above; a key
			// encoded as the value's text still compares correctly, only
			// slower.
			dst = appendBytes(dst, []byte(c.ValueStr(r)))
		}
	}
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// deleteFilter applies one data file's deletes to its batches in file
// order.
type deleteFilter struct {
	fd   *fileDeletes
	next int64 // file position of the next batch's first row
	pi   int   // first entry of fd.positions not below next
	buf  []byte
	runs [][2]int // scratch: the kept runs of a batch
}

// apply returns rec without its deleted rows; it consumes rec. A batch
// with nothing deleted is returned as is. With position deletes alone,
// the kept runs come straight from the sorted positions; equality
// deletes mark rows in a bitmap the runs are then read from. owned: rec
// is the reader's alone (see keep).
func (f *deleteFilter) apply(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, owned bool) (arrow.RecordBatch, error) {
	n := rec.NumRows()
	lo, hi := f.next, f.next+n
	f.next = hi
	ps := f.fd.positions
	for f.pi < len(ps) && ps[f.pi] < lo {
		f.pi++
	}
	first := f.pi
	for f.pi < len(ps) && ps[f.pi] < hi {
		f.pi++
	}
	batchPs := ps[first:f.pi]
	if len(f.fd.eq) == 0 {
		if len(batchPs) == 0 {
			return rec, nil
		}
		f.runs = f.runs[:0]
		start := 0 // the first row of the run being read
		for _, p := range batchPs {
			if r := int(p - lo); r >= start { // a repeated position is below start
				if r > start {
					f.runs = append(f.runs, [2]int{start, r})
				}
				start = r + 1
			}
		}
		if start < int(n) {
			f.runs = append(f.runs, [2]int{start, int(n)})
		}
		return f.keep(ctx, mem, rec, nil, owned)
	}
	var keep []byte // bit-packed, allocated at the first deleted row
	drop := func(i int64) {
		if keep == nil {
			keep = make([]byte, bitutil.BytesForBits(n))
			for j := range keep {
				keep[j] = 0xff
			}
		}
		bitutil.ClearBit(keep, int(i))
	}
	for _, p := range batchPs {
		drop(p - lo)
	}
	for _, e := range f.fd.eq {
		cols, err := keyColumns(rec, e.ix.names)
		if err != nil {
			rec.Release()
			return nil, err
		}
		for r := 0; r < int(n); r++ {
			if k, null, ok := intKey(cols, r); ok {
				var p int32
				var found bool
				if null {
					p, found = e.ix.nulls, e.ix.hasNulls
				} else if e.ix.dense != nil {
					if i := uint64(k - e.ix.denseMin); i < uint64(len(e.ix.dense)) {
						p = e.ix.dense[i]
						found = p != noPosting
					}
				} else if e.ix.mayHold(k) {
					p, found = e.ix.ints[k]
				}
				if found && e.ix.hit(p, e.applies) {
					drop(int64(r))
				}
				continue
			}
			f.buf = appendKey(f.buf[:0], cols, r)
			if p, found := e.ix.strs[string(f.buf)]; found && e.ix.hit(p, e.applies) {
				drop(int64(r))
			}
		}
	}
	if keep == nil {
		return rec, nil
	}
	f.runs = f.runs[:0]
	for i := 0; i < int(n); {
		for i < int(n) && !bitutil.BitIsSet(keep, i) {
			i++
		}
		start := i
		for i < int(n) && bitutil.BitIsSet(keep, i) {
			i++
		}
		if i > start {
			f.runs = append(f.runs, [2]int{start, i})
		}
	}
	return f.keep(ctx, mem, rec, keep, owned)
}

// keep returns the rows of rec in f.runs; it consumes rec. keep, when
// not nil, is the same rows as a bitmap. owned: rec is the reader's alone
// (a plain read's), whose fixed-width columns may be compacted in place.
func (f *deleteFilter) keep(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, keep []byte, owned bool) (arrow.RecordBatch, error) {
	defer rec.Release()
	kept := 0
	for _, r := range f.runs {
		kept += r[1] - r[0]
	}
	if kept == 0 {
		return array.NewRecordBatch(rec.Schema(), emptyColumns(mem, rec.Schema()), 0), nil
	}
	if owned {
		if out, ok := keepRunsInPlace(rec, f.runs, kept); ok {
			return out, nil
		}
	}
	if out, ok := keepRuns(mem, rec, f.runs, kept); ok {
		return out, nil
	}
	n := int(rec.NumRows())
	if keep == nil {
		keep = make([]byte, bitutil.BytesForBits(int64(n)))
		for _, r := range f.runs {
			bitutil.SetBitsTo(keep, int64(r[0]), int64(r[1]-r[0]), true)
		}
	}
	mask := array.NewBoolean(n, memory.NewBufferBytes(keep), nil, 0)
	defer mask.Release()
	out, err := compute.FilterRecordBatch(compute.WithAllocator(ctx, mem), rec, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, fmt.Errorf("apply deletes: %w", err)
	}
	return out, nil
}

// keepRuns copies the rows of rec in runs ([start, end) of kept rows, in
// order), run by run, which beats arrow's Filter (a gather per row) when
// deletes are sparse. ok is false for a column type it does not handle
// (nested, dictionary, boolean); the caller filters that batch the
// general way.
func keepRuns(mem memory.Allocator, rec arrow.RecordBatch, runs [][2]int, kept int) (arrow.RecordBatch, bool) {
	for _, c := range rec.Columns() {
		if _, ok := runWidth(c); !ok {
			return nil, false
		}
	}
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		cols[i] = copyRuns(mem, c, runs, kept)
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(kept))
	for _, c := range cols {
		c.Release()
	}
	return out, true
}

// keepRunsInPlace is keepRuns for a batch nothing else holds (a plain
// read's: apply's owned), of fixed-width columns without NULLs or
// offsets: each column's kept runs are moved to the front of its own
// buffer, which the result keeps. A new buffer for each batch, and a copy
// out of one buffer into another, cost more (BENCHMARKS.md, session 38).
// ok is false, with nothing changed, for any other batch.
func keepRunsInPlace(rec arrow.RecordBatch, runs [][2]int, kept int) (arrow.RecordBatch, bool) {
	for _, c := range rec.Columns() {
		w, ok := runWidth(c)
		if !ok || w == 0 || c.NullN() > 0 || c.Data().Offset() != 0 || c.Data().Buffers()[1] == nil {
			return nil, false
		}
	}
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		w, _ := runWidth(c)
		buf := c.Data().Buffers()[1]
		b, at := buf.Bytes(), 0
		for _, r := range runs {
			if r[0]*w != at {
				copy(b[at:], b[r[0]*w:r[1]*w])
			}
			at += (r[1] - r[0]) * w
		}
		d := array.NewData(c.DataType(), kept, []*memory.Buffer{nil, buf}, nil, 0, 0)
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(kept))
	for _, c := range cols {
		c.Release()
	}
	return out, true
}

// runWidth is the byte width of a fixed-width column's values, 0 for a
// string or binary column (int32 offsets); ok is false for other types.
func runWidth(c arrow.Array) (int, bool) {
	switch c.DataType().ID() {
	case arrow.STRING, arrow.BINARY:
		return 0, true
	case arrow.BOOL, arrow.DICTIONARY, arrow.EXTENSION:
		return 0, false
	}
	fw, ok := c.DataType().(arrow.FixedWidthDataType)
	if !ok || fw.BitWidth() == 0 || fw.BitWidth()%8 != 0 || len(c.Data().Buffers()) != 2 || len(c.Data().Children()) != 0 {
		return 0, false
	}
	return fw.BitWidth() / 8, true
}

func copyRuns(mem memory.Allocator, c arrow.Array, runs [][2]int, kept int) arrow.Array {
	d := c.Data()
	off := d.Offset()
	w, _ := runWidth(c)
	var valid *memory.Buffer
	nulls := 0
	if c.NullN() > 0 {
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(kept))))
		dst, at := valid.Bytes(), 0
		src := d.Buffers()[0].Bytes()
		for _, r := range runs {
			bitutil.CopyBitmap(src, off+r[0], r[1]-r[0], dst, at)
			at += r[1] - r[0]
		}
		nulls = kept - bitutil.CountSetBits(dst, 0, kept)
	}
	if w > 0 {
		src := d.Buffers()[1].Bytes()
		vals := memory.NewResizableBuffer(mem)
		vals.Resize(kept * w)
		dst, at := vals.Bytes(), 0
		for _, r := range runs {
			at += copy(dst[at:], src[(off+r[0])*w:(off+r[1])*w])
		}
		return arrayOf(c.DataType(), kept, nulls, valid, vals)
	}
	offs := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[off : off+d.Len()+1]
	src := d.Buffers()[2].Bytes()
	size := 0
	for _, r := range runs {
		size += int(offs[r[1]] - offs[r[0]])
	}
	obuf := memory.NewResizableBuffer(mem)
	obuf.Resize(arrow.Int32Traits.BytesRequired(kept + 1))
	dbuf := memory.NewResizableBuffer(mem)
	dbuf.Resize(size)
	newOffs := arrow.Int32Traits.CastFromBytes(obuf.Bytes())
	data := dbuf.Bytes()
	at, row := int32(0), 0
	for _, r := range runs {
		base := offs[r[0]]
		for i := r[0]; i < r[1]; i++ {
			newOffs[row] = at + offs[i] - base
			row++
		}
		at += int32(copy(data[at:], src[base:offs[r[1]]]))
	}
	newOffs[row] = at
	return arrayOf(c.DataType(), kept, nulls, valid, obuf, dbuf)
}

// arrayOf makes an array of the buffers, taking them over.
func arrayOf(dt arrow.DataType, n, nulls int, bufs ...*memory.Buffer) arrow.Array {
	data := array.NewData(dt, n, bufs, nil, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	defer data.Release()
	return array.MakeFromData(data)
}

func emptyColumns(mem memory.Allocator, sc *arrow.Schema) []arrow.Array {
	cols := make([]arrow.Array, sc.NumFields())
	for i, f := range sc.Fields() {
		cols[i] = array.MakeArrayOfNull(mem, f.Type, 0)
	}
	return cols
}
