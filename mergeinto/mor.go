package mergeinto

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/skadedb/skade/scan"
	"github.com/skadedb/skade/snapshot"
)

// Merge-on-read: a changed target row is not rewritten with its file; a
// position delete (file path, row position) hides it, and its new version
// (an UPDATE) goes to a new data file with the inserts. Nothing is
// rewritten; the statement stages one row delta.
//
// PositionDeletes is the part SQL UPDATE and DELETE share with MERGE: the
// caller reads each candidate file with its deletes applied and reports
// the live rows it changes; PositionDeletes maps them to physical
// positions, writes them (position delete files on format version 2,
// deletion vectors on version 3) and stages the row delta.
//
// INVARIANT: position deletes name physical row positions in the data
// file. The target is read with its deletes applied, so the caller's
// positions count live rows; FileDeletes.Add maps them back through every
// delete that already hides rows of the file: position delete files,
// a deletion vector, and equality deletes (see equalityDeleted).
//
// INVARIANT: on a version 3 table a data file carries at most one
// deletion vector. A new one holds the file's earlier deletion vector and
// position deletes too, and the row delta removes the vector it replaces
// (iceberg-go's readers ignore position delete files once a vector
// applies, as the spec says).
//
// On a version 2 table the same holds for file-scoped position delete
// files (scan.OnlyDataFile): a new one holds the file's earlier deletes
// too, and the file-scoped ones it supersedes are removed, so a data file
// changed by any number of statements keeps one. The removal is in the
// statement's one snapshot when foldAdditions can build it, else in a
// second snapshot of the same commit (Stage). Delete files naming several
// data files, which other writers may write, stay; their positions
// repeated in the new file are redundant, never wrong.

// PositionDeletes collects one statement's merge-on-read deletes.
type PositionDeletes struct {
	tbl   *table.Table // the target, through the transaction's IO
	what  string       // "merge into main.t", for errors
	mem   memory.Allocator
	scan  []table.ScanOption
	useDV bool

	files      []*FileDeletes
	written    []string           // paths written, for Abort
	added      []iceberg.DataFile // delete files to stage
	superseded []iceberg.DataFile // deletion vectors or file-scoped position delete files the new ones replace
	// version 2, by added file: the position delete files it folds in,
	// and its data file's data sequence number (Stage)
	folds    [][]iceberg.DataFile
	dataSeqs []*int64
	bytes    int64
}

// NewPositionDeletes starts collecting deletes against tbl, which the
// caller's scans read with scanOpts (the snapshot). what prefixes errors
// ("update main.t"). On a format version 3 table it writes deletion
// vectors.
func NewPositionDeletes(tbl *table.Table, scanOpts []table.ScanOption, what string, mem memory.Allocator) *PositionDeletes {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &PositionDeletes{tbl: tbl, what: what, mem: mem, scan: scanOpts, useDV: tbl.Metadata().Version() >= 3}
}

// DeletionVectors reports whether the deletes are written as deletion
// vectors (format version 3) rather than position delete files.
func (d *PositionDeletes) DeletionVectors() bool { return d.useDV }

// File starts the deletes of one data file. Call it once per file.
func (d *PositionDeletes) File(task table.FileScanTask) *FileDeletes {
	f := &FileDeletes{d: d, task: task}
	d.files = append(d.files, f)
	return f
}

// FileDeletes is the merge-on-read state of one data file.
type FileDeletes struct {
	d       *PositionDeletes
	task    table.FileScanTask
	loaded  bool
	deleted []int64 // physical positions already deleted by anything, ascending
	prior   []int64 // those hidden by position deletes or a deletion vector
	j       int     // deleted[:j] lie before the last mapped position
	pos     []int64 // physical positions to delete, ascending
}

// Add records live rows of the file (their positions among the rows the
// file yields with its deletes applied) as deleted. Calls must come in
// ascending position order.
func (f *FileDeletes) Add(ctx context.Context, live []int64) error {
	if len(live) == 0 {
		return nil
	}
	if !f.loaded {
		if err := f.load(ctx); err != nil {
			return err
		}
	}
	for _, l := range live {
		// The physical position p of the l-th live row is l plus the
		// number of deleted positions at or before p.
		p := l + int64(f.j)
		for f.j < len(f.deleted) && f.deleted[f.j] <= p {
			f.j++
			p = l + int64(f.j)
		}
		if n := len(f.pos); n > 0 && f.pos[n-1] >= p {
			return fmt.Errorf("%s: positions in data file %s are not ascending (broken invariant)", f.d.what, f.d.relPath(f.task.File.FilePath()))
		}
		f.pos = append(f.pos, p)
	}
	return nil
}

// Rows is how many rows of the file Add deleted.
func (f *FileDeletes) Rows() int64 { return int64(len(f.pos)) }

// load reads which physical rows of the file are already deleted.
func (f *FileDeletes) load(ctx context.Context) error {
	f.loaded = true
	d := f.d
	if !scan.HasDeletes(f.task) {
		return nil
	}
	fsys, err := d.tbl.FS(ctx)
	if err != nil {
		return err
	}
	path := f.task.File.FilePath()
	// through scan's cache, which the read of the file fills too
	// (shared with it: copied, never changed)
	for _, group := range []struct {
		what  string
		files []iceberg.DataFile
	}{{"position delete file", f.task.DeleteFiles}, {"deletion vector", f.task.DeletionVectorFiles}} {
		for _, df := range group.files {
			ps, err := scan.FilePositions(ctx, fsys, d.mem, df, path)
			if err != nil {
				return fmt.Errorf("%s: reading %s %s: %w", d.what, group.what, d.relPath(df.FilePath()), err)
			}
			f.prior = append(f.prior, ps...)
		}
	}
	slices.Sort(f.prior)
	f.prior = slices.Compact(f.prior)
	eq, err := d.equalityDeleted(ctx, f.task)
	if err != nil {
		return fmt.Errorf("%s: applying the equality deletes of data file %s: %w", d.what, d.relPath(path), err)
	}
	f.deleted = append(append(make([]int64, 0, len(f.prior)+len(eq)), f.prior...), eq...)
	slices.Sort(f.deleted)
	f.deleted = slices.Compact(f.deleted)
	return nil
}

// equalityDeleted returns the physical positions of the rows of task's
// file that its equality deletes hide, ascending.
//
// Whether an equality delete hides a row depends only on the row's values
// in the delete's key columns (the planner already chose which delete
// files apply to the file by sequence number). So it reads just those
// columns twice, raw and with the equality deletes applied, and walks the
// two in step: the rows with deletes applied are a subsequence of the raw
// rows, and a raw row whose key equals the next surviving row's key
// survived too (equal keys share their fate), so every raw row that does
// not match the next surviving one is hidden. No key is held in memory.
func (d *PositionDeletes) equalityDeleted(ctx context.Context, task table.FileScanTask) ([]int64, error) {
	if len(task.EqualityDeleteFiles) == 0 {
		return nil, nil
	}
	sc := d.tbl.Schema()
	var names []string
	seen := map[int]bool{}
	for _, df := range task.EqualityDeleteFiles {
		for _, id := range df.EqualityFieldIDs() {
			if seen[id] {
				continue
			}
			seen[id] = true
			n, ok := sc.FindColumnName(id)
			if !ok {
				return nil, fmt.Errorf("the key column (field id %d) of equality delete file %s is no longer in the table; compact the table first (ALTER TABLE %s EXECUTE compact)", id, d.relPath(df.FilePath()), d.tbl.Identifier())
			}
			names = append(names, n)
		}
	}
	withEq := task
	withEq.DeleteFiles, withEq.DeletionVectorFiles, withEq.Residual = nil, nil, nil
	raw := withEq
	raw.EqualityDeleteFiles = nil

	next, stop := iter.Pull2(d.keys(ctx, withEq, names))
	defer stop()
	var cur []byte
	have := false
	advance := func() error {
		k, err, ok := next()
		if err != nil {
			return err
		}
		have = ok
		cur = append(cur[:0], k...)
		return nil
	}
	if err := advance(); err != nil {
		return nil, err
	}
	var out []int64
	var pos int64
	for k, err := range d.keys(ctx, raw, names) {
		if err != nil {
			return nil, err
		}
		if have && bytes.Equal(k, cur) {
			if err := advance(); err != nil {
				return nil, err
			}
		} else {
			out = append(out, pos)
		}
		pos++
	}
	if have {
		return nil, fmt.Errorf("the rows that survive its equality deletes are not a subsequence of the file's rows (broken invariant)")
	}
	return out, nil
}

// keys reads the named columns of task's file and yields each row's
// encoded tuple, in file order. The slice is reused: copy it to keep it.
func (d *PositionDeletes) keys(ctx context.Context, task table.FileScanTask, names []string) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		alt := func(fields []string) *table.Scan {
			return d.tbl.Scan(append(slices.Clone(d.scan), table.WithSelectedFields(fields...))...)
		}
		sc := alt(names)
		defer sc.Close()
		seq, err := scan.ReadTasks(ctx, d.tbl, sc, alt, []table.FileScanTask{task})
		if err != nil {
			yield(nil, err)
			return
		}
		var key []byte
		for b, err := range seq {
			if err != nil {
				yield(nil, err)
				return
			}
			enc := make([]func([]byte, int) []byte, len(names))
			for i, n := range names {
				idx := b.Schema().FieldIndices(n)
				if len(idx) != 1 {
					b.Release()
					yield(nil, fmt.Errorf("equality delete key column %q is not a top-level column of the read; compact the table first", n))
					return
				}
				enc[i] = keyEncoder(b.Column(idx[0]))
			}
			for r := 0; r < int(b.NumRows()); r++ {
				key = key[:0]
				for _, e := range enc {
					key = e(key, r)
				}
				if !yield(key, nil) {
					b.Release()
					return
				}
			}
			b.Release()
		}
	}
}

// keyEncoder appends row i of c to a key: a null flag, then the value's
// bytes (fixed width, or length-prefixed). Both reads of a file decode it
// to the same types, so equal values encode equally.
func keyEncoder(c arrow.Array) func([]byte, int) []byte {
	fixed := func(f func(int) uint64) func([]byte, int) []byte {
		return func(dst []byte, i int) []byte {
			if c.IsNull(i) {
				return append(dst, 0)
			}
			return binary.LittleEndian.AppendUint64(append(dst, 1), f(i))
		}
	}
	bytesOf := func(f func(int) string) func([]byte, int) []byte {
		return func(dst []byte, i int) []byte {
			if c.IsNull(i) {
				return append(dst, 0)
			}
			v := f(i)
			return append(binary.AppendUvarint(append(dst, 1), uint64(len(v))), v...)
		}
	}
	switch a := c.(type) {
	case *array.Int64:
		return fixed(func(i int) uint64 { return uint64(a.Value(i)) })
	case *array.Int32:
		return fixed(func(i int) uint64 { return uint64(a.Value(i)) })
	case *array.Int16:
		return fixed(func(i int) uint64 { return uint64(a.Value(i)) })
	case *array.Int8:
		return fixed(func(i int) uint64 { return uint64(a.Value(i)) })
	case *array.Date32:
		return fixed(func(i int) uint64 { return uint64(a.Value(i)) })
	case *array.Date64:
		return fixed(func(i int) uint64 { return uint64(a.Value(i)) })
	case *array.Timestamp:
		return fixed(func(i int) uint64 { return uint64(a.Value(i)) })
	case *array.Time64:
		return fixed(func(i int) uint64 { return uint64(a.Value(i)) })
	case *array.Boolean:
		return fixed(func(i int) uint64 {
			if a.Value(i) {
				return 1
			}
			return 0
		})
	case *array.String:
		return bytesOf(a.Value)
	case *array.LargeString:
		return bytesOf(a.Value)
	case *array.Binary:
		return bytesOf(func(i int) string { return string(a.Value(i)) })
	default:
		return bytesOf(c.ValueStr)
	}
}

// Write writes the collected deletes: one position delete file per
// changed data file, or one Puffin file of deletion vectors. It returns
// the bytes written.
func (d *PositionDeletes) Write(ctx context.Context) (int64, error) {
	fsys, err := d.tbl.FS(ctx)
	if err != nil {
		return 0, err
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return 0, fmt.Errorf("%s: the table's storage is read-only", d.what)
	}
	if d.useDV {
		err := d.writeDVs(ctx, wfs)
		return d.bytes, err
	}
	// The files are independent: they are encoded and written on every
	// core, and recorded in d.files' order.
	meta := d.tbl.Metadata()
	var todo []*FileDeletes
	for _, f := range d.files {
		if len(f.pos) > 0 {
			todo = append(todo, f)
		}
	}
	type out struct {
		path string
		df   iceberg.DataFile
		err  error
	}
	outs := make([]out, len(todo))
	folds := make([][]iceberg.DataFile, len(todo))
	for i, f := range todo {
		folds[i] = f.scopedDeletes()
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))
	for i, f := range todo {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			o := &outs[i]
			if o.err = ctx.Err(); o.err == nil {
				o.path = d.newPath("deletes.parquet")
				pos := f.pos
				if len(folds[i]) > 0 {
					pos = scan.MergePositions(f.pos, f.prior)
				}
				o.df, o.err = d.writePositionDeleteFile(wfs, meta, o.path, f.task.File, pos)
			}
		})
	}
	wg.Wait()
	var errs []error
	for i, o := range outs {
		if o.path != "" {
			// Recorded even when the write failed: it may have left a
			// partial file for Abort to remove.
			d.written = append(d.written, o.path)
		}
		if o.err != nil {
			errs = append(errs, fmt.Errorf("%s: writing position deletes for %s: %w", d.what, d.relPath(todo[i].task.File.FilePath()), o.err))
			continue
		}
		d.added = append(d.added, o.df)
		d.folds = append(d.folds, folds[i])
		d.dataSeqs = append(d.dataSeqs, todo[i].task.DataSequenceNumber)
		d.superseded = append(d.superseded, folds[i]...)
		d.bytes += o.df.FileSizeBytes()
	}
	return d.bytes, errors.Join(errs...)
}

// scopedDeletes returns the position delete files of the file's task that
// apply to it alone, which its new position delete file supersedes.
func (f *FileDeletes) scopedDeletes() []iceberg.DataFile {
	var out []iceberg.DataFile
	path := f.task.File.FilePath()
	for _, df := range f.task.DeleteFiles {
		if df.ContentType() == iceberg.EntryContentPosDeletes && scan.OnlyDataFile(df) == path {
			out = append(out, df)
		}
	}
	return out
}

// writeDVs writes one deletion vector per changed data file, holding the
// file's earlier deletes too, into one Puffin file.
func (d *PositionDeletes) writeDVs(ctx context.Context, wfs iceio.WriteFileIO) error {
	meta := d.tbl.Metadata()
	w := dv.NewDVWriter(wfs, func(id int32) *iceberg.PartitionSpec { return meta.PartitionSpecByID(int(id)) })
	n := 0
	for _, f := range d.files {
		if len(f.pos) == 0 {
			continue
		}
		df := f.task.File
		if err := w.Add(df.FilePath(), f.prior, df.SpecID(), df.Partition()); err != nil {
			return err
		}
		if err := w.Add(df.FilePath(), f.pos, df.SpecID(), df.Partition()); err != nil {
			return err
		}
		d.superseded = append(d.superseded, f.task.DeletionVectorFiles...)
		n++
	}
	if n == 0 {
		return nil
	}
	path := d.newPath("deletes.puffin")
	// Record the path first: a failed flush may leave a partial file.
	d.written = append(d.written, path)
	files, err := w.Flush(ctx, path)
	if err != nil {
		return fmt.Errorf("%s: writing deletion vectors: %w", d.what, err)
	}
	d.added = append(d.added, files...)
	if len(files) > 0 {
		d.bytes += files[0].FileSizeBytes()
	}
	return nil
}

func (d *PositionDeletes) newPath(suffix string) string {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return d.tbl.Location() + "/data/mor-" + hex.EncodeToString(id[:]) + "-" + suffix
}

// Empty reports whether no row was deleted.
func (d *PositionDeletes) Empty() bool {
	for _, f := range d.files {
		if len(f.pos) > 0 {
			return false
		}
	}
	return true
}

// Targets returns the data files that get deletes.
func (d *PositionDeletes) Targets() []iceberg.DataFile {
	var out []iceberg.DataFile
	for _, f := range d.files {
		if len(f.pos) > 0 {
			out = append(out, f.task.File)
		}
	}
	return out
}

// DeleteFiles returns the delete files Write wrote.
func (d *PositionDeletes) DeleteFiles() []iceberg.DataFile { return d.added }

// Stage stages the row delta: the data files rows (updated rows and
// inserts) and the deletes Write wrote, replacing superseded deletion
// vectors, as one snapshot that removes no data file.
func (d *PositionDeletes) Stage(ctx context.Context, txn *table.Transaction, props iceberg.Properties, rows []iceberg.DataFile) error {
	if props == nil {
		props = iceberg.Properties{}
	}
	props["skade.write-mode"] = MergeOnRead.String()
	if d.useDV {
		props["skade.deletion-vectors"] = strconv.Itoa(len(d.added))
	} else {
		props["skade.position-delete-files"] = strconv.Itoa(len(d.added))
	}
	if !d.useDV && len(d.superseded) > 0 {
		adds, err := d.foldAdditions(ctx, txn)
		if err != nil {
			return fmt.Errorf("%s: staging the snapshot: %w", d.what, err)
		}
		if adds != nil {
			props["skade.folded-position-delete-files"] = strconv.Itoa(len(d.superseded))
			if err := txn.ReplaceFilesWithDeleteFiles(ctx, nil, rows, d.superseded, adds, props); err != nil {
				return fmt.Errorf("%s: staging the snapshot: %w", d.what, err)
			}
			return nil
		}
	}
	rd := txn.NewRowDelta(props).AddRows(rows...).AddDeletes(d.added...)
	if d.useDV && len(d.superseded) > 0 {
		rd.RemoveDeletes(d.superseded...)
	}
	if err := rd.Commit(ctx); err != nil {
		return fmt.Errorf("%s: staging the snapshot: %w", d.what, err)
	}
	if d.useDV || len(d.superseded) == 0 {
		return nil
	}
	// Version 2, when the one snapshot cannot be built: the files the new
	// ones hold are removed by a second snapshot of the same commit,
	// which changes no row. Both land or neither does; a lost race
	// restages both.
	fold := maps.Clone(props)
	delete(fold, "skade.position-delete-files")
	fold["skade.folded-position-delete-files"] = strconv.Itoa(len(d.superseded))
	if err := txn.ReplaceFiles(ctx, nil, nil, d.superseded, fold); err != nil {
		return fmt.Errorf("%s: staging the removal of the position delete files it folded: %w", d.what, err)
	}
	return nil
}

// foldAdditions returns the position delete files Write wrote, each with
// the data sequence number it can be committed with in one snapshot that
// also removes the file-scoped position delete files they hold
// (superseded); nil when some cannot, and Stage commits the row delta and
// the removal as two snapshots.
//
// iceberg-go's row delta removes only deletion vectors, so on format
// version 2 the snapshot is a replace of delete files
// (ReplaceFilesWithDeleteFiles, an overwrite), whose added delete files
// must each carry the data sequence number of a file it removes. A
// position delete applies to the data files its file_path names whose
// data sequence number is at most its own, so a folded file keeps the
// largest of the files it supersedes (each at least its data file's: the
// planner attached them to it), and a data file's first one takes the
// largest of all removed when that is at least its data file's.
func (d *PositionDeletes) foldAdditions(ctx context.Context, txn *table.Transaction) ([]table.DeleteFileAddition, error) {
	staged, err := txn.StagedTable()
	if err != nil {
		return nil, err
	}
	snap := staged.CurrentSnapshot()
	if snap == nil {
		return nil, nil
	}
	fsys, err := d.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(d.superseded))
	for _, df := range d.superseded {
		want[df.FilePath()] = true
	}
	seqs := make(map[string]int64, len(want))
	for _, mf := range manifests {
		if mf.ManifestContent() != iceberg.ManifestContentDeletes {
			continue
		}
		for e, err := range mf.Entries(fsys, true) {
			if err != nil {
				return nil, err
			}
			if p := e.DataFile().FilePath(); want[p] && e.SequenceNum() >= 0 {
				seqs[p] = e.SequenceNum()
			}
		}
	}
	if len(seqs) != len(want) {
		return nil, nil // (a conflict the commit's validation reports)
	}
	top := int64(-1)
	for _, s := range seqs {
		top = max(top, s)
	}
	adds := make([]table.DeleteFileAddition, len(d.added))
	for i, df := range d.added {
		seq := int64(-1)
		for _, old := range d.folds[i] {
			seq = max(seq, seqs[old.FilePath()])
		}
		if seq < 0 {
			if d.dataSeqs[i] == nil || *d.dataSeqs[i] > top {
				return nil, nil
			}
			seq = top
		}
		adds[i] = table.DeleteFileAddition{File: df, DataSequenceNumber: seq}
	}
	return adds, nil
}

// Abort removes every file Write wrote.
func (d *PositionDeletes) Abort() error {
	if len(d.written) == 0 {
		return nil
	}
	fsys, err := d.tbl.FS(context.Background())
	if err != nil {
		return fmt.Errorf("%s: removing the files it wrote: %w", d.what, err)
	}
	var errs []error
	for _, p := range d.written {
		if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("%s: removing the file it wrote: %w", d.what, err))
		}
	}
	d.written = nil
	return errors.Join(errs...)
}

func (d *PositionDeletes) relPath(path string) string { return relPath(d.tbl, path) }

// DeadDeleteFiles returns the delete files that die with the data files
// of removed, which the caller removes (and replaces by files with the
// deletes applied, whose newer sequence number no existing delete reaches).
//
// With all, the unfiltered plan of the snapshot, a delete file attached to
// a removed task is dead when no task of all that survives carries it:
// scan planning attaches to each data file every delete that applies to
// it (equality deletes by sequence number and partition). Without all,
// only position delete files scoped to one removed data file (the ones
// merge-on-read writes) and deletion vectors are known dead; equality
// deletes and position delete files naming several data files are left
// to compaction.
func DeadDeleteFiles(removed, all []table.FileScanTask) []iceberg.DataFile {
	gone := make(map[string]bool, len(removed))
	for _, t := range removed {
		gone[t.File.FilePath()] = true
	}
	var needed map[string]bool
	if all != nil {
		needed = map[string]bool{}
		for _, t := range all {
			if gone[t.File.FilePath()] {
				continue
			}
			for _, group := range [][]iceberg.DataFile{t.DeleteFiles, t.EqualityDeleteFiles, t.DeletionVectorFiles} {
				for _, df := range group {
					needed[DeleteKey(df)] = true
				}
			}
		}
	}
	var out []iceberg.DataFile
	seen := map[string]bool{}
	for _, t := range removed {
		for _, group := range [][]iceberg.DataFile{t.DeleteFiles, t.EqualityDeleteFiles, t.DeletionVectorFiles} {
			for _, df := range group {
				key := DeleteKey(df)
				if seen[key] {
					continue
				}
				seen[key] = true
				dead := false
				if needed != nil {
					dead = !needed[key]
				} else if df.ContentType() == iceberg.EntryContentPosDeletes {
					ref := scan.OnlyDataFile(df)
					dead = ref != "" && gone[ref]
				}
				if dead {
					out = append(out, df)
				}
			}
		}
	}
	return out
}

// DeleteKey identifies a delete file: its path, and for a deletion vector
// the data file it references (one Puffin file holds many vectors).
func DeleteKey(df iceberg.DataFile) string {
	if ref := df.ReferencedDataFile(); ref != nil {
		return df.FilePath() + "\x00" + *ref
	}
	return df.FilePath()
}

// morSink is the merge-on-read state of one data file of a MERGE.
type morSink struct {
	m  *merger
	fd *FileDeletes
}

var _ fileSink = (*morSink)(nil)

func (s *morSink) releaseBuffer() {}

func (s *morSink) emit(ctx context.Context, _ arrow.RecordBatch, o batchOut) error {
	if !o.changed {
		return nil
	}
	out := o.out
	defer func() { releaseBatches(out) }()
	if err := s.fd.Add(ctx, o.changedPos); err != nil {
		return err
	}
	// out holds only the updated rows: merge-on-read leaves the kept rows
	// out (applyBatch)
	for i, b := range out {
		out[i] = nil
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		if s.m.morWriter == nil {
			s.m.morWriter = s.m.newWriter(ctx)
		}
		if err := s.m.morWriter.push(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

func (s *morSink) finish(context.Context, int64) error { return nil }

// Field ids of a position delete file's columns (Iceberg's reserved ids).
const (
	posDeletePathID = 2147483546
	posDeletePosID  = 2147483545
)

// posDeleteDictType is file_path's type as writePositionDeleteFile hands
// it to the writer.
var posDeleteDictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// posDeleteSchema is a position delete file's, as writePositionDeleteFile
// hands it to the writer: file_path a dictionary.
var posDeleteSchema = arrow.NewSchema([]arrow.Field{
	{Name: "file_path", Type: posDeleteDictType, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(posDeletePathID)})},
	{Name: "pos", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(posDeletePosID)})},
}, nil)

// writePositionDeleteFile writes the position delete file of one data
// file, with the data file's partition and file_path bounds equal to its
// path (so readers and compaction treat it as scoped to that one file).
func (d *PositionDeletes) writePositionDeleteFile(wfs iceio.WriteFileIO, meta table.Metadata, path string, data iceberg.DataFile, pos []int64) (iceberg.DataFile, error) {
	// file_path is one value repeated: a dictionary of that one value
	// and an index per row, written as a dictionary page and run lengths
	// (writeRowGroupFile), without the path copied and hashed for each row
	n := len(pos)
	sb := array.NewStringBuilder(d.mem)
	sb.Append(data.FilePath())
	dict := sb.NewArray()
	sb.Release()
	defer dict.Release()
	zeros := memory.NewResizableBuffer(d.mem)
	zeros.Resize(n * arrow.Int32SizeBytes)
	clear(zeros.Bytes())
	idxData := array.NewData(arrow.PrimitiveTypes.Int32, n, []*memory.Buffer{nil, zeros}, nil, 0, 0)
	zeros.Release()
	idx := array.MakeFromData(idxData)
	idxData.Release()
	defer idx.Release()
	paths := array.NewDictionaryArray(posDeleteDictType, idx, dict)
	defer paths.Release()
	posData := array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(pos))}, nil, 0, 0)
	positions := array.MakeFromData(posData)
	posData.Release()
	defer positions.Release()
	cols := []*arrow.Chunked{arrow.NewChunked(posDeleteDictType, []arrow.Array{paths}), arrow.NewChunked(arrow.PrimitiveTypes.Int64, []arrow.Array{positions})}
	defer cols[0].Release()
	defer cols[1].Release()

	var buf bytes.Buffer
	codec, level := snapshot.ParquetCompression(meta.Properties(), true)
	props := parquet.NewWriterProperties(parquet.WithCompression(codec), parquet.WithCompressionLevel(level),
		parquet.WithDictionaryDefault(false), parquet.WithDictionaryFor("file_path", true), parquet.WithAllocator(d.mem))
	if _, err := writeRowGroupFile(context.Background(), &buf, posDeleteSchema, cols, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(d.mem))); err != nil {
		return nil, err
	}
	if err := wfs.WriteFile(path, buf.Bytes()); err != nil {
		return nil, err
	}

	spec := meta.PartitionSpecByID(int(data.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("partition spec %d of the data file is unknown (broken invariant)", data.SpecID())
	}
	pathBound := []byte(data.FilePath())
	posLo, posHi := make([]byte, 8), make([]byte, 8)
	binary.LittleEndian.PutUint64(posLo, uint64(pos[0]))
	binary.LittleEndian.PutUint64(posHi, uint64(pos[len(pos)-1]))
	b, err := iceberg.NewDataFileBuilder(*spec, iceberg.EntryContentPosDeletes, path, iceberg.ParquetFile,
		data.Partition(), nil, nil, int64(len(pos)), int64(buf.Len()))
	if err != nil {
		return nil, err
	}
	b.LowerBoundValues(map[int][]byte{posDeletePathID: pathBound, posDeletePosID: posLo}).
		UpperBoundValues(map[int][]byte{posDeletePathID: pathBound, posDeletePosID: posHi})
	return b.Build(), nil
}

// finishWrites ends the writes of a statement whose every candidate file
// was read (Execute with insert set, Rewrite without): a merge-on-read
// statement's updated rows and position deletes, and a MERGE's inserted
// rows (insertUnmatched). A writer holds its open row group until its
// input closes, so every input is closed before any writer is waited
// for, and the position deletes, which need only the positions the scan
// collected, are written beside them. The data files are recorded in the
// order they always were: the updated rows', then the inserted rows'.
func (m *merger) finishWrites(ctx context.Context, insert bool) (err error) {
	var updates func() error
	if m.mor {
		if m.morWriter != nil {
			m.morWriter.closeInput()
			updates = func() error {
				files, err := m.morWriter.finish()
				if err != nil {
					return fmt.Errorf("%s: writing updated rows: %w", m.what(), err)
				}
				m.addFiles(files)
				return nil
			}
		}
		wait := m.startDeleteWrite(ctx)
		defer func() {
			// a failure elsewhere stops the deletes; theirs is then moot
			if derr := wait(err != nil); err == nil {
				err = derr
			}
		}()
	}
	if insert {
		return m.insertUnmatched(ctx, updates)
	}
	if updates != nil {
		return updates()
	}
	return nil
}

// startDeleteWrite writes the position deletes (PositionDeletes.Write) on
// a goroutine of its own. wait cancels them first when stop is set, waits
// for them, counts their bytes and returns their error; the statement
// must call it before it returns (its abort removes what they wrote).
func (m *merger) startDeleteWrite(ctx context.Context) (wait func(stop bool) error) {
	dctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var n int64
	var err error
	go func() {
		defer close(done)
		err = recovered(func() (err error) {
			n, err = m.pd.Write(dctx)
			return err
		})
	}()
	return func(stop bool) error {
		if stop {
			cancel()
		}
		<-done
		cancel()
		m.res.Metrics.BytesWritten += n
		return err
	}
}

// relPath is path relative to tbl's location when inside it.
func relPath(tbl *table.Table, path string) string {
	loc := tbl.Location()
	for len(loc) > 0 && loc[len(loc)-1] == '/' {
		loc = loc[:len(loc)-1]
	}
	loc += "/"
	if len(path) > len(loc) && path[:len(loc)] == loc {
		return path[len(loc):]
	}
	return path
}
