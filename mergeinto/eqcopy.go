package mergeinto

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Equality deletes copied from an upsert's data files. An upsert writes
// its records as data files and their keys as equality deletes: the same
// key values, encoded and compressed twice. In a CPU profile of a
// 1.1M-row upsert, writing the equality-delete file was a fifth of the
// statement (BENCHMARKS.md, session 37). But a data file's key columns
// are column chunks like any other. Copied byte for byte into a file of
// their own (writeRowGroups), under a footer that keeps only them, they
// are exactly that data file's keys: one equality-delete file per data
// file, in its partition, with no value decoded or encoded again.

// EqualityDeletesOf writes the equality-delete file of df, a data file
// this write has just written into tbl. The file holds df's key columns
// (keyIDs, top-level primitive columns of the table), copied from df row
// group by row group, and its entry has df's partition and metrics from
// its own footer. ok is false, with nothing written, when df or its
// footer does not have the layout the copy needs; the caller then writes
// the deletes from its records. On error nothing it wrote is left.
func EqualityDeletesOf(ctx context.Context, tbl *table.Table, df iceberg.DataFile, keyIDs []int) (_ iceberg.DataFile, ok bool, err error) {
	if TestHookKeyCopy != nil && !TestHookKeyCopy(df.FilePath()) {
		return nil, false, nil
	}
	tm := tbl.Metadata()
	spec := tm.PartitionSpecByID(int(df.SpecID()))
	if spec == nil || df.FileFormat() != iceberg.ParquetFile || len(keyIDs) == 0 || df.Count() <= 0 {
		return nil, false, nil
	}
	sc := tm.CurrentSchema()
	// the file's schema: the key columns, in the table's order
	// (iceberg.Schema.Select's schema fails FileToDataFile)
	keys := make([]iceberg.NestedField, 0, len(keyIDs))
	for _, id := range keyIDs {
		f, ok := topLevelField(sc, id)
		if !ok {
			return nil, false, nil
		}
		if _, ok := f.Type.(iceberg.PrimitiveType); !ok {
			return nil, false, nil
		}
		keys = append(keys, f)
	}
	slices.SortFunc(keys, func(a, b iceberg.NestedField) int { return fieldOrder(sc, a.ID) - fieldOrder(sc, b.ID) })
	delSchema := iceberg.NewSchema(sc.ID, keys...)
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, false, err
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return nil, false, nil
	}
	src, err := fsys.Open(df.FilePath())
	if err != nil {
		return nil, false, err
	}
	defer src.Close()
	pr, err := file.NewParquetReader(src)
	if err != nil {
		return nil, false, fmt.Errorf("reading the footer of %s: %w", df.FilePath(), err)
	}
	defer pr.Close()
	out, ok, err := keyFooter(ctx, pr.MetaData(), keyIDs, df.Count())
	if err != nil || !ok {
		return nil, false, err
	}
	dst, err := besideDataFile(tbl, df.FilePath(), "eqdeletes")
	if err != nil {
		return nil, false, err
	}
	w, err := wfs.Create(dst)
	if err != nil {
		return nil, false, err
	}
	defer func() {
		if err != nil {
			if rerr := fsys.Remove(dst); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				err = errors.Join(err, rerr)
			}
		}
	}()
	srcs := make([][]io.ReaderAt, len(out.RowGroups))
	for i, rg := range out.RowGroups {
		srcs[i] = make([]io.ReaderAt, len(rg.Columns))
		for j := range srcs[i] {
			srcs[i][j] = src
		}
	}
	buf := bufio.NewWriterSize(w, 1<<20)
	werr := writeRowGroups(ctx, &countingWriter{w: buf}, srcs, out)
	if werr == nil {
		werr = buf.Flush()
	}
	if cerr := w.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, false, werr
	}
	stats, err := table.FileToDataFile(ctx, fsys, dst, delSchema, *iceberg.UnpartitionedSpec, 0, tm.Properties())
	if err != nil {
		return nil, false, err
	}
	if stats.Count() != df.Count() {
		return nil, false, fmt.Errorf("the equality deletes of %s hold %d rows, the file %d (broken invariant)", df.FilePath(), stats.Count(), df.Count())
	}
	eq, err := rebuildAs(iceberg.EntryContentEqDeletes, stats, *spec, sc, df.Partition(), func(b *iceberg.DataFileBuilder) {
		b.EqualityFieldIDs(keyIDs)
	})
	if err != nil {
		return nil, false, err
	}
	return eq, true, nil
}

// fieldOrder is the position of the top-level field id in sc.
func fieldOrder(sc *iceberg.Schema, id int) int {
	return slices.IndexFunc(sc.Fields(), func(f iceberg.NestedField) bool { return f.ID == id })
}

// TestHookKeyCopy, when set (by tests only), is asked before each copy of
// a data file's keys; false makes EqualityDeletesOf report the file unfit.
var TestHookKeyCopy func(dataFile string) bool

// topLevelField is the top-level field of sc with id id.
func topLevelField(sc *iceberg.Schema, id int) (iceberg.NestedField, bool) {
	for _, f := range sc.Fields() {
		if f.ID == id {
			return f, true
		}
	}
	return iceberg.NestedField{}, false
}

// keyFooter is the footer of a file holding only the key columns keyIDs of
// the file whose footer is meta (rows rows): its schema keeps the root and
// those columns' elements, each row group their column chunks, as the
// file has them; writeRowGroups moves the offsets. ok is false where the
// file is not laid out so: encrypted, a key column missing, nested or
// twice, a chunk without metadata, or rows not rows.
func keyFooter(ctx context.Context, meta *metadata.FileMetaData, keyIDs []int, rows int64) (_ *metadata.FileMetaData, ok bool, err error) {
	if meta.NumRowGroups() == 0 || !copyableFile(meta) {
		return nil, false, nil
	}
	raw, err := meta.Serialize(ctx)
	if err != nil {
		return nil, false, err
	}
	// a copy: meta stays as it is
	out, err := metadata.NewFileMetaData(raw, nil)
	if err != nil {
		return nil, false, err
	}
	elems := out.FileMetaData.Schema
	if len(elems) == 0 {
		return nil, false, nil
	}
	// the top-level columns: their schema element and leaf column
	want := map[int32]bool{}
	for _, id := range keyIDs {
		want[int32(id)] = true
	}
	var keepElem, keepLeaf []int
	pos, leaf := 1, 0
	for range elems[0].GetNumChildren() {
		if pos >= len(elems) {
			return nil, false, nil
		}
		e := elems[pos]
		next, leaves, ok := subtree(elems, pos)
		if !ok {
			return nil, false, nil
		}
		if e.IsSetFieldID() && want[e.GetFieldID()] {
			if leaves != 1 || next != pos+1 || !e.IsSetType() {
				return nil, false, nil // a key must be a primitive column
			}
			keepElem = append(keepElem, pos)
			keepLeaf = append(keepLeaf, leaf)
			delete(want, e.GetFieldID())
		}
		pos, leaf = next, leaf+leaves
	}
	if len(want) > 0 || pos != len(elems) || leaf != meta.Schema.NumColumns() {
		return nil, false, nil
	}
	root := *elems[0]
	n := int32(len(keepElem))
	root.NumChildren = &n
	schema := append(elems[:0:0], &root)
	for _, p := range keepElem {
		schema = append(schema, elems[p])
	}
	out.FileMetaData.Schema = schema
	if co := out.ColumnOrders; co != nil {
		if len(co) != leaf {
			return nil, false, nil
		}
		kept := co[:0:0]
		for _, l := range keepLeaf {
			kept = append(kept, co[l])
		}
		out.ColumnOrders = kept
	}
	size := meta.GetSourceFileSize()
	var total int64
	for i, rg := range out.RowGroups {
		if rg.NumRows < 0 || len(rg.Columns) != leaf {
			return nil, false, nil
		}
		total += rg.NumRows
		cols := rg.Columns[:0:0]
		var bytes, compressed int64
		for _, l := range keepLeaf {
			if !copyableChunk(meta, i, l, size) {
				return nil, false, nil
			}
			c := rg.Columns[l]
			bytes += c.MetaData.TotalUncompressedSize
			compressed += c.MetaData.TotalCompressedSize
			cols = append(cols, c)
		}
		rg.Columns = cols
		rg.TotalByteSize = bytes
		rg.TotalCompressedSize = &compressed
		rg.SortingColumns = nil // they name the file's columns by position
		rg.FileOffset = nil     // writeRowGroups sets it
	}
	if total != rows {
		return nil, false, nil
	}
	// the writer's Arrow schema and the rest name every column
	out.FileMetaData.KeyValueMetadata = nil
	// the footer must parse as a file of its own
	check, err := out.Serialize(ctx)
	if err != nil {
		return nil, false, err
	}
	if _, err := metadata.NewFileMetaData(check, nil); err != nil {
		return nil, false, fmt.Errorf("the key columns' footer: %w", err)
	}
	return out, true, nil
}

// subtree returns the element after the subtree of schema elements rooted
// at elems[pos], and how many leaves it holds; ok is false where the
// elements end inside it.
func subtree[E interface {
	GetNumChildren() int32
	IsSetNumChildren() bool
}](elems []E, pos int) (next, leaves int, ok bool) {
	if pos >= len(elems) {
		return 0, 0, false
	}
	e := elems[pos]
	if !e.IsSetNumChildren() || e.GetNumChildren() == 0 {
		return pos + 1, 1, true
	}
	next = pos + 1
	for range e.GetNumChildren() {
		var l int
		if next, l, ok = subtree(elems, next); !ok {
			return 0, 0, false
		}
		leaves += l
	}
	return next, leaves, true
}

// besideDataFile names a new file of tbl beside the data file p: in the
// table's data location, in p's partition directory when p lies in it.
// kind ends the name.
func besideDataFile(tbl *table.Table, p, kind string) (string, error) {
	name := fmt.Sprintf("00000-0-%s-%s.parquet", uuid.New(), kind)
	data := strings.TrimRight(tbl.Location(), "/") + "/data/"
	lp, err := tbl.LocationProvider()
	if err != nil {
		return "", err
	}
	if rel, ok := strings.CutPrefix(p, data); ok {
		if dir := path.Dir(rel); dir != "." && !strings.Contains(dir, "..") {
			name = dir + "/" + name
		}
	}
	return lp.NewDataLocation(name), nil
}
