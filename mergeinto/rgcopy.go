package mergeinto

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/scan"
	"github.com/skadedb/skade/snapshot"
)

// Row-group copy. A copy-on-write rewrite of a data file with several
// row groups copies the row groups in which no row changed into a new
// data file byte for byte (pages, dictionaries, statistics), with a
// footer of their own, instead of decoding and encoding them again; only
// the rows of the row groups a change hit go through the writer. The
// cost of a rewrite then follows the row groups hit, not the files.
//
// fileRewrite does the bookkeeping: batches reach it cut at row-group
// boundaries, it buffers a row group's rows until one changes (then
// everything of that group goes to the writer) or the group ends
// unchanged (then it is listed for the copy and its rows let go).
//
// A file qualifies (rowGroupLayout) only when positions read are file
// positions and the copy keeps everything a reader derives from them:
//   - no delete file applies to it (a copied group would bring deleted
//     rows back);
//   - the table keeps no row lineage (format v3: row ids follow file
//     positions, which the copy changes);
//   - the footer is plain (not encrypted), written by a writer whose
//     column chunk sizes are right (not parquet-mr before 1.2.9), and
//     every column chunk lies inside the file;
//   - skade.write.copy-row-groups is not false;
//   - and, for a DELETE or UPDATE, its plan yields the rows in file order:
//     a plan that joins (a correlated subquery) may not, so each batch's
//     row positions are checked, and at the first row out of order the
//     file is taken as one group again (fileRewrite.unordered).
//
// The new file's metrics (value, null and NaN counts, bounds, split
// offsets) are computed by iceberg-go from its footer, as for a file its
// writer wrote; its partition and sort order are the source file's. Page
// indexes and bloom filters are not carried over. If the copy cannot be
// made, its rows are read again and written like the others.

// TestHookRowGroupCopy, when set (by tests only), is called with the path
// of each row-group copy once its bytes are written; an error it returns
// fails the copy.
var TestHookRowGroupCopy func(path string) error

// rowGroupLayout returns the footer of task's file and the row count at
// the end of each of its row groups when the file's unchanged row groups
// may be copied (see above); nil when not, or when it has one row group.
func (m *merger) rowGroupLayout(ctx context.Context, task table.FileScanTask) (*metadata.FileMetaData, []int64) {
	if m.mor || m.lin != nil || HasDeletes(task) || task.File.FileFormat() != iceberg.ParquetFile ||
		!snapshot.CopyRowGroups(m.spec.Target.Properties()) {
		return nil, nil
	}
	if so := task.File.SplitOffsets(); so != nil && len(so) < 2 {
		return nil, nil // one row group, by the manifest: no footer read
	}
	fsys, err := m.spec.Target.FS(ctx)
	if err != nil {
		return nil, nil
	}
	f, err := fsys.Open(task.File.FilePath())
	if err != nil {
		return nil, nil // the read proper reports it
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, nil
	}
	defer pr.Close()
	meta := pr.MetaData()
	size := meta.GetSourceFileSize()
	if meta.NumRowGroups() < 2 || meta.IsSetEncryptionAlgorithm() || meta.FileDecryptor != nil ||
		meta.WriterVersion().LessThan(metadata.Parquet816FixedVersion) {
		return nil, nil
	}
	ends := make([]int64, meta.NumRowGroups())
	var rows int64
	for i, rg := range meta.RowGroups {
		if rg.NumRows < 0 {
			return nil, nil
		}
		for _, c := range rg.Columns {
			if c.MetaData == nil {
				return nil, nil
			}
			start, length, ok := chunkRange(c.MetaData)
			if !ok || c.CryptoMetadata != nil || len(c.EncryptedColumnMetadata) > 0 || c.FilePath != nil ||
				start < 4 || start+length > size {
				return nil, nil
			}
		}
		rows += rg.NumRows
		ends[i] = rows
	}
	if rows != task.File.Count() {
		return nil, nil
	}
	return meta, ends
}

// chunkRange is where a column chunk's pages lie in its file: from its
// dictionary page, if any, else its first data page, for its compressed
// size. (The footer's thrift types belong to an internal package of
// arrow-go; they are reached through its fields and methods.)
func chunkRange[M interface {
	GetDataPageOffset() int64
	GetDictionaryPageOffset() int64
	IsSetDictionaryPageOffset() bool
	GetTotalCompressedSize() int64
}](md M) (start, length int64, ok bool) {
	start = md.GetDataPageOffset()
	if md.IsSetDictionaryPageOffset() {
		if d := md.GetDictionaryPageOffset(); d > 0 && d < start {
			start = d
		}
	}
	length = md.GetTotalCompressedSize()
	return start, length, start > 0 && length > 0
}

// copyRowGroups writes the row groups rgs of task's file (meta is its
// footer) verbatim into a new data file of the table and returns it and
// its size. On error nothing it wrote is left behind.
func (m *merger) copyRowGroups(ctx context.Context, task table.FileScanTask, meta *metadata.FileMetaData, rgs []int) (_ iceberg.DataFile, err error) {
	tbl := m.spec.Target
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return nil, errors.New("the table's storage cannot write files")
	}
	sub, err := meta.Subset(rgs)
	if err != nil {
		return nil, err
	}
	raw, err := sub.Serialize(ctx)
	if err != nil {
		return nil, err
	}
	// a copy of the footer, whose offsets change; meta stays as it is
	out, err := metadata.NewFileMetaData(raw, nil)
	if err != nil {
		return nil, err
	}
	src, err := fsys.Open(task.File.FilePath())
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := m.copyPath(task)
	if err != nil {
		return nil, err
	}
	w, err := wfs.Create(dst)
	if err != nil {
		return nil, err
	}
	m.copies = append(m.copies, dst)
	defer func() {
		if err != nil {
			if rerr := fsys.Remove(dst); rerr == nil || errors.Is(rerr, fs.ErrNotExist) {
				m.copies = m.copies[:len(m.copies)-1]
			}
		}
	}()
	bw := &countingWriter{w: bufio.NewWriterSize(w, 1<<20)}
	werr := writeRowGroups(ctx, bw, src, out)
	if TestHookRowGroupCopy != nil && werr == nil {
		werr = TestHookRowGroupCopy(dst)
	}
	if werr == nil {
		werr = bw.w.Flush()
	}
	if cerr := w.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, werr
	}
	return m.copiedDataFile(ctx, fsys, task.File, dst)
}

// writeRowGroups writes a Parquet file holding out's row groups, whose
// column chunks it copies from src, moving their offsets to where they
// land, and then out as its footer.
func writeRowGroups(ctx context.Context, w *countingWriter, src io.ReaderAt, out *metadata.FileMetaData) error {
	if _, err := w.Write([]byte("PAR1")); err != nil {
		return err
	}
	out.NumRows = 0
	for i, rg := range out.RowGroups {
		if err := ctx.Err(); err != nil {
			return err
		}
		ord := int16(i)
		rg.Ordinal = &ord
		out.NumRows += rg.NumRows
		// The chunks in file order; a run of adjacent ones is one copy.
		order := make([]int, len(rg.Columns))
		for j := range order {
			order[j] = j
		}
		starts := make([]int64, len(rg.Columns))
		lengths := make([]int64, len(rg.Columns))
		for j, c := range rg.Columns {
			var ok bool
			if c.MetaData == nil {
				return fmt.Errorf("row group %d, column %d: no metadata", i, j)
			}
			if starts[j], lengths[j], ok = chunkRange(c.MetaData); !ok {
				return fmt.Errorf("row group %d, column %d: no pages", i, j)
			}
		}
		slices.SortFunc(order, func(a, b int) int { return int(starts[a] - starts[b]) })
		for k := 0; k < len(order); {
			runStart, runEnd := starts[order[k]], starts[order[k]]
			e := k
			for ; e < len(order) && starts[order[e]] == runEnd; e++ {
				runEnd += lengths[order[e]]
			}
			if e == k { // overlapping chunks: not a file to copy
				return fmt.Errorf("row group %d: column chunks overlap", i)
			}
			delta := w.n - runStart
			n, err := io.Copy(w, io.NewSectionReader(src, runStart, runEnd-runStart))
			if err != nil {
				return err
			}
			if n != runEnd-runStart {
				return fmt.Errorf("row group %d: copied %d bytes of %d", i, n, runEnd-runStart)
			}
			for _, j := range order[k:e] {
				// Shift the chunk's offsets; drop what points outside it
				// (page indexes, bloom filter), which is not copied.
				cc, start, length := rg.Columns[j], starts[j], lengths[j]
				md := cc.MetaData
				md.DataPageOffset += delta
				if d := md.DictionaryPageOffset; d != nil && *d > 0 {
					v := *d + delta
					md.DictionaryPageOffset = &v
				}
				if p := md.IndexPageOffset; p != nil {
					if *p >= start && *p < start+length {
						v := *p + delta
						md.IndexPageOffset = &v
					} else {
						md.IndexPageOffset = nil
					}
				}
				if cc.FileOffset > 0 {
					cc.FileOffset += delta
				}
				md.BloomFilterOffset, md.BloomFilterLength = nil, nil
				cc.OffsetIndexOffset, cc.OffsetIndexLength = nil, nil
				cc.ColumnIndexOffset, cc.ColumnIndexLength = nil, nil
			}
			k = e
		}
		first := rg.Columns[0].MetaData.DataPageOffset
		if d := rg.Columns[0].MetaData.DictionaryPageOffset; d != nil && *d > 0 && *d < first {
			first = *d
		}
		rg.FileOffset = &first
	}
	n, err := out.WriteTo(w, nil)
	if err != nil {
		return err
	}
	var tail [8]byte
	binary.LittleEndian.PutUint32(tail[:4], uint32(n))
	copy(tail[4:], "PAR1")
	_, err = w.Write(tail[:])
	return err
}

// copiedDataFile is the data file entry of the copy at p of src's row
// groups: metrics from its footer, partition and sort order from src.
func (m *merger) copiedDataFile(ctx context.Context, fsys iceio.IO, src iceberg.DataFile, p string) (iceberg.DataFile, error) {
	meta := m.spec.Target.Metadata()
	spec := meta.PartitionSpecByID(int(src.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("partition spec %d of data file %s is unknown", src.SpecID(), m.relPath(src.FilePath()))
	}
	// The partition is the source's, not inferred from the bounds (which
	// a bucket or void transform cannot be).
	stats, err := table.FileToDataFile(ctx, fsys, p, meta.CurrentSchema(), *iceberg.UnpartitionedSpec, 0, meta.Properties())
	if err != nil {
		return nil, err
	}
	return rebuildDataFile(stats, *spec, meta.CurrentSchema(), src.Partition(), func(b *iceberg.DataFileBuilder) {
		if s := src.SortOrderID(); s != nil {
			b.SortOrderID(*s)
		}
	})
}

// copyPath names the copy of task's file: in the table's data location,
// beside the source when the source lies in it (its partition's
// directory).
func (m *merger) copyPath(task table.FileScanTask) (string, error) {
	name := fmt.Sprintf("00000-0-%s-rgcopy.parquet", uuid.New())
	tbl := m.spec.Target
	data := strings.TrimRight(tbl.Location(), "/") + "/data/"
	lp, err := tbl.LocationProvider()
	if err != nil {
		return "", err
	}
	if rel, ok := strings.CutPrefix(task.File.FilePath(), data); ok {
		if dir := path.Dir(rel); dir != "." && !strings.Contains(dir, "..") {
			name = dir + "/" + name
		}
	}
	return lp.NewDataLocation(name), nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Key columns first. A copy-on-write MERGE over a file whose row groups
// may be copied reads the file's ON key columns alone and probes them
// first. The row groups where no key finds a source row cannot change
// (no NOT MATCHED BY SOURCE clause changes rows here, and every other
// clause needs a match), so they are copied without their other columns
// ever being decoded; only the row groups with a hit are read whole, and
// merged with the probe's results, not probed again. A file with no hit
// is left as it is after reading its keys only.

// keyFirst reports whether the merge reads f's file key columns first.
// The row groups are then read by byte ranges, which iceberg-go resolves
// by the manifest's split offsets when it has one per row group: they
// must be the footer's.
func (m *merger) keyFirst(f *fileRewrite) bool {
	if f.ends == nil || m.rw != nil || m.mor || m.lin != nil || !m.canChange || m.bySourceChanges() || len(m.p.keyCols) == 0 {
		return false
	}
	so := f.task.File.SplitOffsets()
	return len(so) != len(f.ends) || slices.Equal(so, rowGroupOffsets(f.meta))
}

// mergeRowGroups is mergeFile for a file read key columns first.
func (m *merger) mergeRowGroups(ctx context.Context, task table.FileScanTask, f *fileRewrite) error {
	task.Residual = nil
	if err := scan.CheckWhole(m.what(), task); err != nil {
		return &Error{State: StateInternal, Msg: err.Error()}
	}
	n := f.ends[len(f.ends)-1]
	groups, err := m.probeKeys(ctx, task, n, f.meta)
	if err != nil {
		return err
	}
	// runs of adjacent row groups with a hit, [a, b)
	var runs [][2]int
	for g := range f.ends {
		lo := int64(0)
		if g > 0 {
			lo = f.ends[g-1]
		}
		if !slices.ContainsFunc(groups[lo:f.ends[g]], func(x int32) bool { return x >= 0 }) {
			continue
		}
		if k := len(runs); k > 0 && runs[k-1][1] == g {
			runs[k-1][1] = g + 1
		} else {
			runs = append(runs, [2]int{g, g + 1})
		}
	}
	if len(runs) == 0 {
		return nil // no row can change: the file stays
	}
	rowAt := func(g int) int64 {
		if g == 0 {
			return 0
		}
		return f.ends[g-1]
	}
	offsets := rowGroupOffsets(f.meta)
	tasks := make([]table.FileScanTask, len(runs))
	for i, r := range runs {
		t := task
		t.Start = offsets[r[0]]
		t.Length = task.File.FileSizeBytes() - t.Start
		if r[1] < len(offsets) {
			t.Length = offsets[r[1]] - t.Start
		}
		m.res.Metrics.BytesRead += t.Length
		tasks[i] = t
	}
	_, seq, err := m.readScan.ReadTasks(compute.WithAllocator(ctx, scan.ReadBuffers), tasks)
	if err != nil {
		return fmt.Errorf("%s: reading data file %s: %w", m.what(), m.relPath(task.File.FilePath()), err)
	}
	run, pos := 0, rowAt(runs[0][0])
	f.skipTo(pos)
	for b, err := range seq {
		if err != nil {
			return fmt.Errorf("%s: reading data file %s: %w", m.what(), m.relPath(task.File.FilePath()), err)
		}
		exec.ProgressFrom(ctx).AddRows(b.NumRows())
		tb, err := m.conform(ctx, b)
		if err != nil {
			return err
		}
		for run < len(runs) && pos == rowAt(runs[run][1]) {
			if run++; run < len(runs) {
				pos = rowAt(runs[run][0])
				f.skipTo(pos)
			}
		}
		rows := tb.NumRows()
		if run == len(runs) || pos+rows > rowAt(runs[run][1]) {
			tb.Release()
			return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: data file %s yielded more rows than its row groups %v hold (broken invariant)", m.what(), m.relPath(task.File.FilePath()), runs)}
		}
		err = f.cut(pos, rows, func(lo, hi int64) error {
			s := tb
			if lo > 0 || hi < rows {
				s = tb.NewSlice(lo, hi)
				defer s.Release()
			}
			o, err := m.applyBatch(s, groups[pos+lo:pos+hi], task, pos+lo)
			if err != nil {
				return err
			}
			return f.emit(ctx, s, o)
		})
		tb.Release()
		if err != nil {
			return err
		}
		pos += rows
	}
	if run < len(runs)-1 || pos != rowAt(runs[len(runs)-1][1]) {
		return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: data file %s yielded fewer rows than its row groups %v hold (broken invariant)", m.what(), m.relPath(task.File.FilePath()), runs)}
	}
	f.skipTo(n)
	return f.finish(ctx, n)
}

// probeKeys reads the key columns of task's file (n rows) and returns
// the source group each row's key probes to (-1 for none).
func (m *merger) probeKeys(ctx context.Context, task table.FileScanTask, n int64, meta *metadata.FileMetaData) ([]int32, error) {
	if m.keyScan == nil {
		m.keyScan = m.spec.Target.Scan(append(m.snapshotOpts(), table.WithArrowBatchSize(m.opts.BatchSize),
			table.WithSelectedFields(m.columnNames(m.p.keyCols)...))...)
	}
	keys := m.columnNames(m.p.keyCols)
	for _, rg := range meta.RowGroups {
		for _, c := range rg.Columns {
			if md := c.MetaData; len(md.PathInSchema) > 0 && slices.Contains(keys, md.PathInSchema[0]) {
				m.res.Metrics.BytesRead += md.TotalCompressedSize
			}
		}
	}
	_, seq, err := m.keyScan.ReadTasks(compute.WithAllocator(ctx, scan.ReadBuffers), []table.FileScanTask{task})
	if err != nil {
		return nil, fmt.Errorf("%s: reading the keys of data file %s: %w", m.what(), m.relPath(task.File.FilePath()), err)
	}
	groups := make([]int32, 0, n)
	for b, err := range seq {
		if err != nil {
			return nil, fmt.Errorf("%s: reading the keys of data file %s: %w", m.what(), m.relPath(task.File.FilePath()), err)
		}
		tb, err := m.conform(ctx, b)
		if err != nil {
			return nil, err
		}
		g, _, err := m.src.Probe(m.ec, tb, m.p.probeKeys)
		tb.Release()
		if err != nil {
			return nil, m.probeError(err)
		}
		groups = append(groups, g...)
	}
	if int64(len(groups)) != n {
		return nil, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: data file %s yielded %d keys for %d rows (broken invariant)", m.what(), m.relPath(task.File.FilePath()), len(groups), n)}
	}
	return groups, nil
}

// rowGroupOffsets are where each row group of meta starts, as iceberg-go
// selects row groups of a ranged task by it: the first column chunk's
// dictionary or first data page.
func rowGroupOffsets(meta *metadata.FileMetaData) []int64 {
	out := make([]int64, len(meta.RowGroups))
	for i, rg := range meta.RowGroups {
		out[i], _, _ = chunkRange(rg.Columns[0].MetaData)
	}
	return out
}
