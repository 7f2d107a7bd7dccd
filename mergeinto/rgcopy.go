package mergeinto

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

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

// TestHookPatch, when set (by tests only), is called before a row group
// of rows rows is patched; an error it returns fails the patch.
var TestHookPatch func(rows int64) error

// rowGroupLayout returns the footer of task's file and the row count at
// the end of each of its row groups when the file's unchanged row groups
// may be copied (see above); nil when not, or when it has one row group.
//
// With one, a file of a single row group qualifies too (an UPDATE may
// patch it).
func (m *merger) rowGroupLayout(ctx context.Context, task table.FileScanTask, one bool) (*metadata.FileMetaData, []int64) {
	if m.mor || m.lin != nil || !snapshot.CopyRowGroups(m.spec.Target.Properties()) {
		return nil, nil
	}
	meta, ends := m.footerLayout(ctx, task, one)
	if meta != nil && holdsDropped(meta, m.spec.Target.Schema()) {
		// a copy would keep the dropped column, which iceberg-go's
		// metrics of the new file refuse: such a file is written again,
		// without it
		return nil, nil
	}
	return meta, ends
}

// holdsDropped reports whether the file (footer meta) holds a column,
// by field id, that schema no longer has: one dropped since the file was
// written.
func holdsDropped(meta *metadata.FileMetaData, schema *iceberg.Schema) bool {
	for i := range meta.Schema.NumColumns() {
		node := meta.Schema.Column(i).SchemaNode()
		for ; node != nil && node.Parent() != nil; node = node.Parent() {
			if id := node.FieldID(); id >= 0 && !iceberg.IsMetadataColumn(int(id)) {
				if _, ok := schema.FindFieldByID(int(id)); !ok {
					return true
				}
			}
		}
	}
	return false
}

// footerLayout is rowGroupLayout without its rules for copying: the
// footer and row group ends of a Parquet file without deletes whose row
// groups lie plainly in it.
func (m *merger) footerLayout(ctx context.Context, task table.FileScanTask, one bool) (*metadata.FileMetaData, []int64) {
	if scan.HasDeletes(task) || task.File.FileFormat() != iceberg.ParquetFile {
		return nil, nil
	}
	if so := task.File.SplitOffsets(); !one && so != nil && len(so) < 2 {
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
	if otherTimeUnit(meta, m.spec.Target.Schema()) {
		// a copy would keep the column's unit, and iceberg-go would take
		// its statistics for the new file's bounds as microseconds: such
		// a file is written again, in microseconds
		return nil, nil
	}
	size := meta.GetSourceFileSize()
	if meta.NumRowGroups() < 1 || (!one && meta.NumRowGroups() < 2) || !copyableFile(meta) {
		return nil, nil
	}
	ends := make([]int64, meta.NumRowGroups())
	var rows int64
	for i, rg := range meta.RowGroups {
		if rg.NumRows < 0 {
			return nil, nil
		}
		for j := range rg.Columns {
			if !copyableChunk(meta, i, j, size) {
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

// copyableFile reports whether meta's file may have its column chunks
// copied byte for byte: not encrypted, and written after PARQUET-816 (whose
// writers recorded wrong chunk sizes).
func copyableFile(meta *metadata.FileMetaData) bool {
	return !meta.IsSetEncryptionAlgorithm() && meta.FileDecryptor == nil &&
		!meta.WriterVersion().LessThan(metadata.Parquet816FixedVersion)
}

// copyableChunk reports whether column chunk j of row group i of meta, a
// file of size bytes, can be copied byte for byte: it has metadata, is not
// encrypted, lies in this file, and its pages lie inside it.
func copyableChunk(meta *metadata.FileMetaData, i, j int, size int64) bool {
	c := meta.RowGroups[i].Columns[j]
	if c.MetaData == nil || c.CryptoMetadata != nil || len(c.EncryptedColumnMetadata) > 0 || c.FilePath != nil {
		return false
	}
	start, length, ok := chunkRange(c.MetaData)
	return ok && start >= 4 && start+length <= size
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
// footer) verbatim into a new data file of the table and returns it; a
// row group in patches takes its leaf columns setLeaf from its patch
// instead. On error nothing it wrote is left behind.
func (m *merger) copyRowGroups(ctx context.Context, task table.FileScanTask, meta *metadata.FileMetaData, rgs []int, patches map[int]*patch, setLeaf []int) (_ iceberg.DataFile, err error) {
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
	// each column chunk's source: the file, or a patch
	srcs := make([][]io.ReaderAt, len(rgs))
	for i, g := range rgs {
		srcs[i] = make([]io.ReaderAt, len(out.RowGroups[i].Columns))
		for j := range srcs[i] {
			srcs[i][j] = src
		}
		p := patches[g]
		if p == nil {
			continue
		}
		rg := out.RowGroups[i]
		// one reader, so that adjacent patched chunks copy as one run
		pr := bytes.NewReader(p.raw)
		j := 0 // the next column of raw
		for k, leaf := range setLeaf {
			if fc, ok := p.paged[k]; ok {
				rg.Columns[leaf] = fc.meta.RowGroups[0].Columns[0]
				srcs[i][leaf] = bytes.NewReader(fc.raw)
				continue
			}
			if p.meta == nil || j >= len(p.meta.RowGroups[0].Columns) {
				return nil, fmt.Errorf("a patch lacks SET column %d of %d (broken invariant)", k, len(setLeaf))
			}
			rg.Columns[leaf] = p.meta.RowGroups[0].Columns[j]
			srcs[i][leaf] = pr
			j++
		}
		var size, compressed int64
		for _, c := range rg.Columns {
			size += c.MetaData.TotalUncompressedSize
			compressed += c.MetaData.TotalCompressedSize
		}
		rg.TotalByteSize = size
		rg.TotalCompressedSize = &compressed
		// new values may break the rows' order by a patched column
		rg.SortingColumns = nil
	}
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
	buf := bufio.NewWriterSize(w, 1<<20)
	werr := writeRowGroups(ctx, &countingWriter{w: buf}, srcs, out)
	if TestHookRowGroupCopy != nil && werr == nil {
		werr = TestHookRowGroupCopy(dst)
	}
	if werr == nil {
		werr = buf.Flush()
	}
	if cerr := w.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, werr
	}
	patched := map[int]bool{}
	if len(patches) > 0 {
		for _, leaf := range setLeaf {
			patched[int(meta.Schema.Column(leaf).SchemaNode().FieldID())] = true
		}
	}
	return m.copiedDataFile(ctx, fsys, task.File, dst, patched)
}

// writeRowGroups writes a Parquet file holding out's row groups, whose
// column chunks it copies from srcs (per row group, per column), in
// column order, moving their offsets to where they land, and then out
// as its footer. The chunks are read ahead of the writing, several at
// once (fetchPieces): on an object store each read is a ranged GET, and
// one after another they were most of a copy's time.
func writeRowGroups(ctx context.Context, w *countingWriter, srcs [][]io.ReaderAt, out *metadata.FileMetaData) error {
	if _, err := w.Write([]byte("PAR1")); err != nil {
		return err
	}
	// The chunks in column order; a run of adjacent ones of one source is
	// one copy, read in pieces of at most copyPieceBytes.
	type run struct {
		i, k, e         int
		start, end      int64
		starts, lengths []int64
		pieces          int
	}
	var runs []run
	var pieces []*copyPiece
	out.NumRows = 0
	for i, rg := range out.RowGroups {
		ord := int16(i)
		rg.Ordinal = &ord
		out.NumRows += rg.NumRows
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
		for k := 0; k < len(rg.Columns); {
			r := run{i: i, k: k, start: starts[k], end: starts[k] + lengths[k], starts: starts, lengths: lengths}
			e := k + 1
			for ; e < len(rg.Columns) && srcs[i][e] == srcs[i][k] && starts[e] == r.end; e++ {
				r.end += lengths[e]
			}
			r.e = e
			for off := r.start; off < r.end; off += copyPieceBytes {
				pieces = append(pieces, &copyPiece{src: srcs[i][k], start: off, n: min(copyPieceBytes, r.end-off), done: make(chan struct{})})
				r.pieces++
			}
			runs = append(runs, r)
			k = e
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	f := fetchPieces(ctx, pieces)
	defer f.wait()
	defer cancel() // before wait: reads not started stay so
	next := 0
	for _, r := range runs {
		rg := out.RowGroups[r.i]
		delta := w.n - r.start
		for range r.pieces {
			p := pieces[next]
			next++
			select {
			case <-p.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if p.err != nil {
				return p.err
			}
			if _, err := w.Write(p.data); err != nil {
				return err
			}
			f.release(p)
		}
		if w.n-delta != r.end {
			return fmt.Errorf("row group %d: copied %d bytes of %d", r.i, w.n-delta-r.start, r.end-r.start)
		}
		for j := r.k; j < r.e; j++ {
			// Shift the chunk's offsets; drop what points outside it
			// (page indexes, bloom filter), which is not copied.
			cc, start, length := rg.Columns[j], r.starts[j], r.lengths[j]
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
		if r.e == len(rg.Columns) {
			first, _, _ := chunkRange(rg.Columns[0].MetaData)
			rg.FileOffset = &first
		}
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

// Reading ahead in writeRowGroups: at most copyReads reads at once, of at
// most copyPieceBytes each, and at most copyWindowBytes read and not yet
// written (one piece more when a single piece is larger). Tests shrink
// the last two.
const copyReads = 4

var (
	copyPieceBytes  int64 = 8 << 20
	copyWindowBytes int64 = 16 << 20
)

// copyPiece is one read of writeRowGroups: n bytes of src from start.
type copyPiece struct {
	src   io.ReaderAt
	start int64
	n     int64
	data  []byte
	err   error
	done  chan struct{} // closed once data or err is set
}

// pieceFetcher reads pieces ahead of the writer (fetchPieces).
type pieceFetcher struct {
	mu    sync.Mutex
	cond  sync.Cond
	ahead int64 // bytes of pieces started and not yet released
	wg    sync.WaitGroup
}

// fetchPieces reads pieces, in order, on goroutines of its own, keeping
// at most copyWindowBytes ahead of release. When ctx is done it starts no
// more; wait returns once every read it started has ended.
func fetchPieces(ctx context.Context, pieces []*copyPiece) *pieceFetcher {
	f := &pieceFetcher{}
	f.cond.L = &f.mu
	stop := context.AfterFunc(ctx, func() {
		f.mu.Lock()
		f.cond.Broadcast()
		f.mu.Unlock()
	})
	f.wg.Go(func() {
		defer stop()
		sem := make(chan struct{}, copyReads)
		for _, p := range pieces {
			f.mu.Lock()
			for f.ahead > 0 && f.ahead+p.n > copyWindowBytes && ctx.Err() == nil {
				f.cond.Wait()
			}
			f.ahead += p.n
			f.mu.Unlock()
			if ctx.Err() != nil {
				return
			}
			sem <- struct{}{}
			f.wg.Go(func() {
				defer func() { <-sem }()
				p.data = make([]byte, p.n)
				n, err := p.src.ReadAt(p.data, p.start)
				if int64(n) == p.n {
					err = nil // io.EOF at the end of the source is no error
				} else if err == nil {
					err = io.ErrUnexpectedEOF
				}
				p.err = err
				close(p.done)
			})
		}
	})
	return f
}

// release gives back the window p took, once it is written.
func (f *pieceFetcher) release(p *copyPiece) {
	p.data = nil
	f.mu.Lock()
	f.ahead -= p.n
	f.cond.Broadcast()
	f.mu.Unlock()
}

// wait waits for every read started to end.
func (f *pieceFetcher) wait() { f.wg.Wait() }

// copiedDataFile is the data file entry of the copy at p of src's row
// groups: metrics from its footer, NaN counts from src's (copyNaNCounts),
// partition from src, and src's sort order when no patch changed a value
// (patched: the field ids of the columns patches rewrote).
func (m *merger) copiedDataFile(ctx context.Context, fsys iceio.IO, src iceberg.DataFile, p string, patched map[int]bool) (iceberg.DataFile, error) {
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
		if s := src.SortOrderID(); s != nil && len(patched) == 0 {
			b.SortOrderID(*s)
		}
		if nan := copyNaNCounts(meta.CurrentSchema(), src, stats, patched, &m.patchNaN); len(nan) > 0 {
			b.NaNValueCounts(nan)
		}
	})
}

// copyPath names the copy of task's file: in the table's data location,
// beside the source when the source lies in it (its partition's
// directory).
func (m *merger) copyPath(task table.FileScanTask) (string, error) {
	return besideDataFile(m.spec.Target, task.File.FilePath(), "rgcopy")
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
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
	return rangesReadable(f)
}

// mergeRowGroups is mergeFile for a file read key columns first, here
// and now.
func (m *merger) mergeRowGroups(ctx context.Context, task table.FileScanTask, f *fileRewrite) error {
	m.openKeyScan()
	probe := func(b arrow.RecordBatch) ([]int32, error) { return m.src.Probe(m.ec, b, m.p.probeKeys) }
	var bytes int64
	hit, err := m.readKeyFirst(ctx, task, f, probe, &bytes, func(b arrow.RecordBatch, groups []int32, pos int64) error {
		return f.applyAt(ctx, b, groups, pos)
	})
	m.res.Metrics.BytesRead += bytes
	if err != nil || !hit {
		return err
	}
	return f.finishKeyFirst(ctx)
}

// applyAt applies the statement to b, the file's rows from pos on, whose
// keys probed to groups, and emits the result; the rows before pos not
// yet seen were not read (readKeyFirst), their row groups unchanged.
func (f *fileRewrite) applyAt(ctx context.Context, b arrow.RecordBatch, groups []int32, pos int64) error {
	if err := f.skipTo(ctx, pos); err != nil {
		return err
	}
	return f.pieces(pos, b, func(s arrow.RecordBatch, lo, hi int64) error {
		o, err := f.m.applyBatch(s, groups[lo:hi], f.task, pos+lo, f.sparse)
		if err != nil {
			return err
		}
		return f.emit(ctx, s, o)
	})
}

// finishKeyFirst ends a file read by readKeyFirst with a hit: the row
// groups after the last one read are unchanged.
func (f *fileRewrite) finishKeyFirst(ctx context.Context) error {
	f.m.res.Metrics.ColumnChunksUnread += f.unreadChunks
	n := f.task.File.Count()
	if err := f.skipTo(ctx, n); err != nil {
		return err
	}
	return f.finish(ctx, n)
}

// readKeyFirst reads task's file (f, whose layout keyFirst accepted) key
// columns first: it reads the key columns alone, probes them (probe),
// and then reads whole only the runs of row groups in which a key found
// a source row, calling fn with each batch, the source group of each of
// its rows (-1 for none) and the file position of its first row, in
// file order. hit is false, and fn never called, when no key found one:
// the file stays. Where every row group has a hit and none can be
// patched, the file is read whole as one group (f's layout is dropped).
// The runs are read without the key columns when the probe's could be
// kept (fileKeys; spliced back into each batch), and then through
// pqarrow when the file allows (directread.go). bytes grows by the bytes
// read. It touches no state of m that it does
// not only read, so a read-ahead worker may call it (with a probe of its
// own).
func (m *merger) readKeyFirst(ctx context.Context, task table.FileScanTask, f *fileRewrite, probe func(arrow.RecordBatch) ([]int32, error), bytes *int64, fn func(b arrow.RecordBatch, groups []int32, pos int64) error) (hit bool, err error) {
	task.Residual = nil
	if err := scan.CheckWhole(m.what(), task); err != nil {
		return false, &Error{State: StateInternal, Msg: err.Error()}
	}
	n := f.ends[len(f.ends)-1]
	keys := m.newFileKeys()
	defer keys.release()
	groups, err := m.probeKeys(ctx, task, n, f.meta, probe, bytes, keys)
	if err != nil {
		return false, err
	}
	// runs of adjacent row groups with a hit
	runs := f.groupRuns(func(g int) bool {
		r := f.groupRange(g)
		return slices.ContainsFunc(groups[r[0]:r[1]], func(x int32) bool { return x >= 0 })
	})
	if len(runs) == 0 {
		return false, nil // no row can change: the file stays
	}
	// the runs are read without their key columns when the probe kept
	// them (keys.held)
	sc, spliced := m.readScan, keys.held()
	var direct []directColumn // read through pqarrow (directread.go)
	if spliced {
		sc = m.restScan
		if f.setLeaf != nil && m.sparseUnread != nil {
			// the SET columns too are read when a group is patched
			direct = f.planSparse(task)
		}
		if direct == nil && f.setLeaf != nil && m.unread != nil {
			// a patched row group needs its SET columns and what the
			// statement reads, no more (narrowColumns)
			if direct = m.directColumns(task, f.meta, m.unread); direct != nil {
				f.narrow = true
			}
		}
		if direct == nil {
			direct = m.directColumns(task, f.meta, nil)
		}
	}
	meta, groupRuns := f.meta, runs
	// keyBytes are the key columns' bytes in row groups [from, to), read
	// once only when spliced
	keyBytes := func(from, to int) int64 {
		if !spliced {
			return 0
		}
		return m.keyChunkBytes(f.meta, from, to)
	}
	tasks := []table.FileScanTask{task}
	if len(runs) == 1 && runs[0] == [2]int{0, len(f.ends)} && f.setLeaf == nil {
		*bytes += task.File.FileSizeBytes() - keyBytes(0, len(f.ends))
		f.meta, f.ends = nil, nil // one group
		runs = [][2]int{{0, 1}}
	} else {
		tasks = make([]table.FileScanTask, len(runs))
		for i, r := range runs {
			tasks[i] = f.runTask(task, r)
			if f.narrow {
				*bytes += leafBytes(f.meta, r[0], r[1], direct)
				f.unreadChunks += int64(r[1]-r[0]) * int64(m.unreadCount)
			} else {
				*bytes += tasks[i].Length - keyBytes(r[0], r[1])
			}
		}
	}
	// the runs' rows: f is not read once fn has been called (a worker
	// hands it over then)
	spans := make([][2]int64, len(runs))
	for i, r := range runs {
		spans[i] = [2]int64{0, n}
		if f.ends != nil {
			spans[i][0], spans[i][1] = f.runRows(r)
		}
	}
	run := 0
	pos, end := spans[0][0], spans[0][1]
	each := func(tb arrow.RecordBatch) (bool, error) {
		for pos == end && run < len(runs)-1 {
			run++
			pos, end = spans[run][0], spans[run][1]
		}
		rows := tb.NumRows()
		if pos+rows > end {
			return false, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: data file %s yielded more rows than its row groups %v hold (broken invariant)", m.what(), m.relPath(task.File.FilePath()), runs)}
		}
		if spliced {
			b, err := keys.splice(tb, m.p.keyCols, pos)
			if err != nil {
				return false, err
			}
			defer b.Release()
			tb = b
		}
		err := fn(tb, groups[pos:pos+rows], pos)
		pos += rows
		return err == nil, err
	}
	if direct != nil {
		err = m.readDirect(ctx, task, meta, direct, groupRuns, each)
	} else {
		err = m.readConformed(ctx, sc, tasks, "reading", true, each)
	}
	if err != nil {
		return true, err
	}
	if run < len(runs)-1 || pos != end {
		return true, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: data file %s yielded fewer rows than its row groups %v hold (broken invariant)", m.what(), m.relPath(task.File.FilePath()), runs)}
	}
	return true, nil
}

// leafBytes are the bytes of the column chunks cols reads (directColumn.leaf)
// in row groups [from, to) of meta.
func leafBytes(meta *metadata.FileMetaData, from, to int, cols []directColumn) int64 {
	var size int64
	for _, rg := range meta.RowGroups[from:to] {
		for _, dc := range cols {
			if dc.leaf >= 0 {
				size += rg.Columns[dc.leaf].MetaData.GetTotalCompressedSize()
			}
		}
	}
	return size
}

// probeKeys reads the key columns of task's file (n rows) and returns
// the source group each row's key probes to (-1 for none); bytes grows by
// the bytes of the key columns. keys, when not nil, keeps the key
// columns read, while the budget allows.
func (m *merger) probeKeys(ctx context.Context, task table.FileScanTask, n int64, meta *metadata.FileMetaData, probe func(arrow.RecordBatch) ([]int32, error), bytes *int64, keys *fileKeys) ([]int32, error) {
	*bytes += m.keyChunkBytes(meta, 0, len(meta.RowGroups))
	groups := make([]int32, 0, n)
	err := m.readConformedMeta(ctx, m.keyScan, []table.FileScanTask{task}, meta, "reading the keys of", false, func(tb arrow.RecordBatch) (bool, error) {
		g, err := probe(tb)
		if err != nil {
			return false, m.probeError(err)
		}
		keys.keep(tb, m.p.keyCols)
		groups = append(groups, g...)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if int64(len(groups)) != n {
		return nil, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: data file %s yielded %d keys for %d rows (broken invariant)", m.what(), m.relPath(task.File.FilePath()), len(groups), n)}
	}
	return groups, nil
}

// keyChunkBytes are the bytes of the key columns' chunks in row groups
// [from, to) of meta.
func (m *merger) keyChunkBytes(meta *metadata.FileMetaData, from, to int) int64 {
	names := m.columnNames(m.p.keyCols)
	var size int64
	for _, rg := range meta.RowGroups[from:to] {
		for _, c := range rg.Columns {
			if md := c.MetaData; len(md.PathInSchema) > 0 && slices.Contains(names, md.PathInSchema[0]) {
				size += md.TotalCompressedSize
			}
		}
	}
	return size
}

// openKeyScan makes the scan of the ON key columns alone, and the scan
// of the other columns (nil when there are none), once, before any read
// key columns first (readKeyFirst) may run.
func (m *merger) openKeyScan() {
	if m.keyScan != nil {
		return
	}
	opts := append(m.snapshotOpts(), table.WithArrowBatchSize(scan.ReadBatchRows(m.opts.BatchSize)))
	m.keyScan = m.spec.Target.Scan(append(slices.Clip(opts), table.WithSelectedFields(m.columnNames(m.p.keyCols)...))...)
	var rest []int
	for c := range m.p.target.NumFields() {
		if !slices.Contains(m.p.keyCols, c) {
			rest = append(rest, c)
		}
	}
	if len(rest) > 0 && m.readColumns() == nil {
		m.restScan = m.spec.Target.Scan(append(slices.Clip(opts), table.WithSelectedFields(m.columnNames(rest)...))...)
	}
}

// fileKeys are the key columns of one data file as probeKeys read them,
// kept so that the row groups then read whole need not decode them again
// (a run's batches get them back by splice). The arrays are held in the
// statement's budget; when it cannot hold them, none are kept (held is
// false) and the runs are read with their keys.
type fileKeys struct {
	m       *merger
	chunks  [][]arrow.Array // per key column, the probe's batches
	ends    []int64         // the rows up to the end of each chunk
	bytes   int64           // held in the budget
	dropped bool
}

// newFileKeys returns a holder of a file's key columns, or nil when the
// runs cannot be read without them.
func (m *merger) newFileKeys() *fileKeys {
	if m.restScan == nil {
		return nil
	}
	return &fileKeys{m: m, chunks: make([][]arrow.Array, len(m.p.keyCols))}
}

// keep holds the key columns (cols of the target layout) of b, the
// probe's next batch.
func (k *fileKeys) keep(b arrow.RecordBatch, cols []int) {
	if k == nil || k.dropped {
		return
	}
	var size int64
	for _, c := range cols {
		size += int64(b.Column(c).Data().SizeInBytes())
	}
	if k.m.spec.Budget.Reserve(size, "merge key columns") != nil {
		k.release()
		k.dropped = true
		return
	}
	k.bytes += size
	for i, c := range cols {
		a := b.Column(c)
		a.Retain()
		k.chunks[i] = append(k.chunks[i], a)
	}
	var last int64
	if len(k.ends) > 0 {
		last = k.ends[len(k.ends)-1]
	}
	k.ends = append(k.ends, last+b.NumRows())
}

// held reports whether k holds the whole file's key columns.
func (k *fileKeys) held() bool { return k != nil && !k.dropped }

// splice returns b (rows from file position pos on, read without its key
// columns) with its key columns (cols) put back; the caller releases it.
func (k *fileKeys) splice(b arrow.RecordBatch, cols []int, pos int64) (arrow.RecordBatch, error) {
	n := b.NumRows()
	if pos < 0 || pos+n > k.rows() || len(k.ends) == 0 {
		return nil, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: rows [%d, %d) of a data file past the %d keys read (broken invariant)", k.m.what(), pos, pos+n, k.rows())}
	}
	return k.m.withColumns(b, cols, func(i int) (arrow.Array, error) { return k.slice(i, pos, n) })
}

// withColumns returns b with its column cols[i] replaced by column(i),
// which must be of the same type; the caller releases the result.
func (m *merger) withColumns(b arrow.RecordBatch, cols []int, column func(i int) (arrow.Array, error)) (arrow.RecordBatch, error) {
	out := slices.Clone(b.Columns())
	var made []arrow.Array
	defer func() { releaseAll(made) }()
	for i, c := range cols {
		a, err := column(i)
		if err != nil {
			return nil, err
		}
		made = append(made, a)
		if !arrow.TypeEqual(a.DataType(), out[c].DataType()) {
			return nil, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: a column kept as %s for one read as %s (broken invariant)", m.what(), a.DataType(), out[c].DataType())}
		}
		out[c] = a
	}
	return array.NewRecordBatch(b.Schema(), out, b.NumRows()), nil
}

func (k *fileKeys) rows() int64 {
	if len(k.ends) == 0 {
		return 0
	}
	return k.ends[len(k.ends)-1]
}

// slice is key column i's rows [pos, pos+n).
func (k *fileKeys) slice(i int, pos, n int64) (arrow.Array, error) {
	return sliceChunks(k.m.opts.Mem, k.chunks[i], k.ends, pos, n)
}

// sliceChunks is rows [pos, pos+n) of the column cut in chunks, the j-th
// ending at row ends[j]: a slice of one chunk, or the pieces of several
// concatenated. The caller checked that the rows are there.
func sliceChunks(mem memory.Allocator, chunks []arrow.Array, ends []int64, pos, n int64) (arrow.Array, error) {
	if n == 0 {
		return array.NewSlice(chunks[0], 0, 0), nil
	}
	j, _ := slices.BinarySearch(ends, pos+1) // the first chunk ending past pos
	start := int64(0)
	if j > 0 {
		start = ends[j-1]
	}
	if pos+n <= ends[j] {
		return array.NewSlice(chunks[j], pos-start, pos-start+n), nil
	}
	var parts []arrow.Array
	defer func() { releaseAll(parts) }()
	for at := pos; at < pos+n; j++ {
		to := min(ends[j], pos+n)
		parts = append(parts, array.NewSlice(chunks[j], at-start, to-start))
		at, start = to, ends[j]
	}
	return array.Concatenate(parts, mem)
}

// release lets go of the key columns held.
func (k *fileKeys) release() {
	if k == nil {
		return
	}
	for i, cs := range k.chunks {
		releaseAll(cs)
		k.chunks[i] = nil
	}
	k.ends = nil
	k.m.spec.Budget.Release(k.bytes)
	k.bytes = 0
}

// otherTimeUnit reports whether a file stores a timestamp column in
// another unit than its Iceberg type's (INT96, or TIMESTAMP(MILLIS) for a
// microsecond column, as other writers may).
func otherTimeUnit(meta *metadata.FileMetaData, sch *iceberg.Schema) bool {
	for i := range meta.Schema.NumColumns() {
		c := meta.Schema.Column(i)
		if scan.OtherTimeUnit(c.SchemaNode(), sch) {
			return true
		}
		if c.SchemaNode().FieldID() < 0 {
			// a name-mapped column: judged by its unit alone
			ts, ok := c.LogicalType().(schema.TimestampLogicalType)
			if c.PhysicalType() == parquet.Types.Int96 || (ok && ts.TimeUnit() == schema.TimeUnitMillis) {
				return true
			}
		}
	}
	return false
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

// Column patches. An UPDATE changes only the columns its SET assigns, and
// no row's place; so does a MERGE whose only row actions are UPDATEs. A
// row group it changes then keeps every other column chunk as it is:
// only the SET columns of the group's rows (new values on the updated
// rows, stored ones on the others, in file order) are encoded again,
// into a one-row-group Parquet file in memory, the patch, and the new
// data file's row group takes those chunks from the patch and the rest
// from the source, verbatim. The patch's columns must be the file's
// exactly (type, annotations, field id), so only top-level primitive
// columns that are not partition sources are patched (a row whose
// partition value changes moves to another file).

// patch is one row group's SET columns, encoded.
type patch struct {
	raw  []byte                 // a Parquet file of one row group
	meta *metadata.FileMetaData // its footer
	// paged are the SET columns (by their place in the statement's SET
	// columns) a sparse patch re-encoded page by page (fixedpatch.go,
	// dictpatch.go); raw holds the others, in order
	paged map[int]pagedChunk
	kept  int64 // rows of the group that kept their values
	// done is closed once raw and meta, or err, are set: a patch is
	// encoded on a goroutine of its own (startPatch)
	done chan struct{}
	err  error
	// set holds the group's SET columns (as encodePatch got them, and
	// bytes of the budget) when a MERGE's patch failed: its updated rows'
	// new values are nowhere else (awaitPatches writes them)
	set      [][]arrow.Array
	setBytes int64
	// sparse: a sparse patch (sparse.go), which read its SET columns
	// itself (read bytes); held keeps its updates (heldBytes of the
	// budget) when it failed
	sparse    bool
	read      int64
	held      []deferredUpdates
	heldBytes int64
}

// bytes are the bytes the patch encoded.
func (p *patch) bytes() int64 {
	n := int64(len(p.raw))
	for _, fc := range p.paged {
		n += int64(len(fc.raw))
	}
	return n
}

// freeSet lets go of the SET columns, or the updates, a failed patch kept.
func (p *patch) freeSet(b *exec.Budget) {
	for _, cs := range p.set {
		releaseAll(cs)
	}
	for _, d := range p.held {
		d.release()
	}
	b.Release(p.setBytes + p.heldBytes)
	p.set, p.setBytes, p.held, p.heldBytes = nil, 0, nil, 0
}

// patchesInFlight bounds the patches being encoded at once; the file
// reader waits for one to finish before starting another. Each holds its
// row group's SET columns until it is encoded. One per core: with one
// fewer (to leave the reader a core), a 2-core machine encoded one patch
// at a time, and the last file's patches ran on one core while the other
// idled; a spread MERGE took 7-30% longer (BENCHMARKS.md, session 30).
func patchesInFlight() int {
	return max(1, min(runtime.GOMAXPROCS(0), 4))
}

// startPatch encodes one row group's SET columns (cols, rows rows, which
// hold bytes of the budget; the patch owns and releases them; size is
// what they took in the file) into p on a goroutine, after waiting for a free slot; p.done closes when it is
// encoded or has failed. The merger's end waits for every one started.
//
// Encoding runs beside the reading of the next row groups and files, as
// the writer's does for rows written whole: on a file read in one pass it
// would otherwise hold up the read for as long as the encoding takes.
func (m *merger) startPatch(ctx context.Context, p *patch, meta *metadata.FileMetaData, setLeaf []int, cols [][]arrow.Array, bytes, rows, size int64) {
	m.runPatch(ctx, p, func() (*patch, error) {
		return m.encodePatch(ctx, meta, m.setCols, setLeaf, cols, rows, size)
	}, func() bool {
		if m.rw != nil {
			return false // an UPDATE's statement yields its rows again when they are read again
		}
		p.set, p.setBytes = cols, bytes // a MERGE's updated rows are in cols only
		return true
	}, func() {
		for _, cs := range cols {
			releaseAll(cs)
		}
		m.spec.Budget.Release(bytes)
	})
}

// runPatch encodes a patch into p (encode) on a goroutine, after waiting
// for a free slot; p.done closes when it is encoded or has failed. When
// it fails (but not on cancellation) and keep keeps what the patch was
// made from, p joins m.failed; otherwise free lets that go. The merger's
// end waits for every patch started.
func (m *merger) runPatch(ctx context.Context, p *patch, encode func() (*patch, error), keep func() bool, free func()) {
	if m.patchSlots == nil {
		m.patchSlots = make(chan struct{}, patchesInFlight())
	}
	select {
	case m.patchSlots <- struct{}{}:
	case <-ctx.Done():
		free()
		p.err = ctx.Err()
		close(p.done)
		return
	}
	m.patchWG.Go(func() {
		defer func() { <-m.patchSlots }()
		defer close(p.done)
		var enc *patch
		p.err = recovered(func() (err error) {
			enc, err = encode()
			return err
		})
		if p.err == nil {
			p.raw, p.meta, p.paged = enc.raw, enc.meta, enc.paged
		}
		if p.err != nil && ctx.Err() == nil && keep() {
			m.failedMu.Lock()
			m.failed = append(m.failed, p)
			m.failedMu.Unlock()
			return
		}
		free()
	})
}

// patching reports whether the statement may patch row groups: an UPDATE
// that names its SET columns, or a MERGE whose only row actions are
// UPDATEs (no DELETE, no NOT MATCHED BY SOURCE action that changes
// rows). It sets m.setCols, the columns they assign, ascending.
func (m *merger) patching() bool {
	if m.mor || m.lin != nil {
		return false
	}
	if m.setCols != nil {
		return len(m.setCols) > 0
	}
	m.setCols = []int{}
	if m.rw != nil {
		if m.rw.spec.Update {
			m.setCols = slices.Clone(m.rw.spec.SetColumns)
		}
		return len(m.setCols) > 0
	}
	if m.bySourceChanges() {
		return false
	}
	seen := map[int]bool{}
	for _, c := range m.p.matched {
		switch c.Action.Kind {
		case ActionUpdate:
			for _, a := range c.Action.Set {
				seen[a.Column] = true
			}
		case ActionDelete:
			seen = nil
		}
		if seen == nil {
			break
		}
	}
	for c := range seen {
		m.setCols = append(m.setCols, c)
	}
	slices.Sort(m.setCols)
	if len(m.setCols) > 0 {
		m.narrowColumns()
	}
	return len(m.setCols) > 0
}

// narrowReadOff switches narrow reads off (a test's, export_test.go).
var narrowReadOff = false

// narrowColumns sets m.unread, the target columns a MERGE that only
// updates leaves unread in the row groups its keys hit, when it reads
// them directly (readKeyFirst) and they may be patched: those neither an
// ON key nor a SET column nor read by the ON residual, a condition or an
// expression. A patch copies their column chunks as they are, so their
// values are never needed; the batches carry NULL in their place. Where
// such a group cannot be patched after all, its rows are read again whole
// (fileRewrite.deferFrom), never written from the batches. m.unread stays
// nil when every column is needed, when the statement returns rows
// (RETURNING returns old rows whole) or when an expression hides what it
// reads. patching calls it once, before any read.
func (m *merger) narrowColumns() {
	if narrowReadOff || m.rw != nil || m.mor || m.lin != nil || len(m.spec.Returning) > 0 {
		return
	}
	need := m.clauseColumns()
	if need == nil {
		return // an expression hides what it reads
	}
	if !sparseOff && m.everyUpdateSetsAll() && !slices.ContainsFunc(m.setCols, func(c int) bool { return need[c] }) {
		m.sparseUnread = make([]bool, len(need))
		for c, ok := range need {
			m.sparseUnread[c] = !ok
		}
	}
	for _, c := range m.setCols {
		need[c] = true
	}
	unread := make([]bool, len(need))
	for c, ok := range need {
		if !ok {
			unread[c] = true
			m.unreadCount++
		}
	}
	if m.unreadCount > 0 {
		m.unread = unread
	}
}

// everyUpdateSetsAll reports whether every MATCHED UPDATE assigns every
// SET column (m.setCols): an update row's other SET columns hold the
// target row's values, which a sparse read leaves NULL.
func (m *merger) everyUpdateSetsAll() bool {
	for _, c := range m.p.matched {
		if c.Action.Kind != ActionUpdate {
			continue
		}
		set := map[int]bool{}
		for _, a := range c.Action.Set {
			set[a.Column] = true
		}
		for _, col := range m.setCols {
			if !set[col] {
				return false
			}
		}
	}
	return true
}

// columnLayout returns the Parquet leaf of each SET column in task's file
// (meta), when its row groups may be patched; nil when not.
func (m *merger) columnLayout(task table.FileScanTask, meta *metadata.FileMetaData) []int {
	tmeta := m.spec.Target.Metadata()
	schema := tmeta.CurrentSchema()
	spec := tmeta.PartitionSpecByID(int(task.File.SpecID()))
	if spec == nil {
		return nil
	}
	sources := map[int]bool{}
	for _, pf := range spec.Fields() {
		sources[pf.SourceID()] = true
	}
	set := m.setCols
	if len(set) >= meta.Schema.NumColumns() {
		// every column changes: nothing to copy. (Where all but one do,
		// the patch still pays: on the bench's three columns, a MERGE
		// setting two took 0.88x the time, BENCHMARKS.md.)
		return nil
	}
	leaves := make([]int, len(set))
	for k, c := range set {
		if c < 0 || c >= m.p.target.NumFields() {
			return nil
		}
		field, ok := schema.FindFieldByName(m.p.target.Field(c).Name)
		if !ok || sources[field.ID] {
			return nil
		}
		if _, primitive := field.Type.(iceberg.PrimitiveType); !primitive {
			return nil
		}
		leaves[k] = scan.TopLeaf(meta.Schema, field.ID)
		if leaves[k] < 0 || !m.patchEncodesAs(m.p.target.Field(c), meta.Schema.Column(leaves[k])) {
			return nil
		}
	}
	return leaves
}

// patchEncodesAs reports whether a patch writes the target column f as
// the file's leaf column (encodePatch refuses a patch that does not):
// another writer may store a type otherwise, such as a DECIMAL(9, 2) as
// INT32, where skade writes a fixed-length byte array.
func (m *merger) patchEncodesAs(f arrow.Field, leaf *schema.Column) bool {
	field := arrow.Field{Name: leaf.Name(), Type: f.Type, Nullable: f.Nullable,
		Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(int(leaf.SchemaNode().FieldID()))})}
	props := writerProps(m.spec.Target.Properties(), []arrow.Field{field}, 1)
	sc, err := pqarrow.ToParquet(arrow.NewSchema([]arrow.Field{field}, nil), props, pqarrow.NewArrowWriterProperties())
	return err == nil && sc.NumColumns() == 1 && sameStorage(sc.Column(0).SchemaNode(), leaf.SchemaNode())
}

// sameStorage reports whether a patch's column (node p) stores values as
// the file's (f) does: the same node, or the same but for the legacy
// converted type a timestamp carries. pqarrow builds a timestamp column
// with TIMESTAMP_MICROS forced beside its logical type, while a column
// read from a footer may carry the logical type alone (arrow-go reads a
// local timestamp's so, whoever wrote the file), so the two never
// compared equal. The values, the physical type and the statistics'
// order are the same, and the copy keeps the file's own schema in its
// footer.
func sameStorage(p, f schema.Node) bool {
	if p.Equals(f) {
		return true
	}
	pp, ok1 := p.(*schema.PrimitiveNode)
	fp, ok2 := f.(*schema.PrimitiveNode)
	if !ok1 || !ok2 {
		return false
	}
	_, ok := fp.LogicalType().(schema.TimestampLogicalType)
	if !ok || !pp.LogicalType().Equals(fp.LogicalType()) || pp.PhysicalType() != parquet.Types.Int64 || fp.PhysicalType() != parquet.Types.Int64 {
		return false
	}
	legacy := func(c schema.ConvertedType) bool {
		return c == schema.ConvertedTypes.None || c == schema.ConvertedTypes.TimestampMicros || c == schema.ConvertedTypes.TimestampMillis
	}
	return pp.Name() == fp.Name() && pp.RepetitionType() == fp.RepetitionType() && pp.FieldID() == fp.FieldID() &&
		legacy(pp.ConvertedType()) && legacy(fp.ConvertedType())
}

// encodePatch encodes one row group's SET columns set (target columns,
// the statement's or some of them; cols[k]: the arrays of set[k], rows in
// file order; size: their bytes in the file) as a patch, with the table's
// Parquet writer settings; it fails when a column does not come out as
// the file's leaf setLeaf[k] of meta.
func (m *merger) encodePatch(ctx context.Context, meta *metadata.FileMetaData, set, setLeaf []int, cols [][]arrow.Array, rows, size int64) (*patch, error) {
	if TestHookPatch != nil {
		if err := TestHookPatch(rows); err != nil {
			return nil, err
		}
	}
	fields := make([]arrow.Field, len(set))
	chunked := make([]arrow.Column, len(set))
	defer func() {
		for i := range chunked {
			chunked[i].Release()
		}
	}()
	dictLimit := stringDictLimit(m.spec.Target.Properties())
	dicts := false // some column is written as dictionary chunks
	for k, c := range set {
		f := m.p.target.Field(c)
		leaf := meta.Schema.Column(setLeaf[k])
		id := leaf.SchemaNode().FieldID()
		typ, chunks := f.Type, cols[k]
		if d := sharedDictionary(chunks); d != nil && typ.ID() == arrow.STRING {
			// a sparse patch's, over the file's dictionary (patchDict)
			typ = d.DataType()
			dicts = true
		} else if typ.ID() == arrow.STRING {
			// as the direct writer writes string columns: one dictionary,
			// not arrow-go's memo of every value
			if dc, ok := dictChunks(m.opts.Mem, chunks, dictLimit); ok {
				defer releaseAll(dc)
				typ, chunks = dc[0].DataType(), dc
				dicts = true
			}
		}
		m.patchNaN.note(int(id), chunks...)
		// the file's name for the column: it may predate a rename
		fields[k] = arrow.Field{Name: leaf.Name(), Type: typ, Nullable: f.Nullable,
			Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(int(id))})}
		ch := arrow.NewChunked(typ, chunks)
		if int64(ch.Len()) != rows {
			ch.Release()
			return nil, fmt.Errorf("a row group of %d rows has %d values of %s (broken invariant)", rows, ch.Len(), f.Name)
		}
		chunked[k] = *arrow.NewColumn(fields[k], ch)
		ch.Release()
	}
	sc := arrow.NewSchema(fields, nil)
	var buf bytes.Buffer
	// room for what the columns took in the file, and some: no regrowth
	buf.Grow(int(min(size+size/4+64<<10, 1<<30)))
	props := writerProps(m.spec.Target.Properties(), fields, rows)
	aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(m.opts.Mem))
	if dicts && flatColumns(fields) {
		cols := make([]*arrow.Chunked, len(chunked))
		for k := range chunked {
			cols[k] = chunked[k].Data()
		}
		if _, err := writeRowGroupFile(ctx, &buf, sc, cols, props, aprops); err != nil {
			return nil, err
		}
	} else if err := writeTableFile(&buf, sc, chunked, rows, props, aprops); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pr, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return nil, err
	}
	pm := pr.MetaData()
	pr.Close()
	if pm.NumRowGroups() != 1 || pm.RowGroups[0].NumRows != rows || pm.Schema.NumColumns() != len(set) {
		return nil, fmt.Errorf("the patch came out as %d row groups of %d columns", pm.NumRowGroups(), pm.Schema.NumColumns())
	}
	for k, leaf := range setLeaf {
		if !sameStorage(pm.Schema.Column(k).SchemaNode(), meta.Schema.Column(leaf).SchemaNode()) {
			return nil, fmt.Errorf("column %s encodes as %s, the file has %s", fields[k].Name, pm.Schema.Column(k), meta.Schema.Column(leaf))
		}
	}
	return &patch{raw: buf.Bytes(), meta: pm}, nil
}

// sharedDictionary is the first of chunks when every one is a dictionary
// array over the same dictionary array (patchDict's); nil otherwise.
func sharedDictionary(chunks []arrow.Array) *array.Dictionary {
	var first *array.Dictionary
	for i, c := range chunks {
		d, ok := c.(*array.Dictionary)
		if !ok || i > 0 && d.Data().Dictionary() != first.Data().Dictionary() {
			return nil
		}
		if i == 0 {
			first = d
		}
	}
	return first
}

// writeTableFile writes chunked (rows rows) as a Parquet file of one row
// group through pqarrow.
func writeTableFile(w io.Writer, sc *arrow.Schema, chunked []arrow.Column, rows int64, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties) error {
	tbl := array.NewTable(sc, chunked, rows)
	defer tbl.Release()
	fw, err := pqarrow.NewFileWriter(sc, w, props, aprops)
	if err != nil {
		return err
	}
	if err := fw.WriteTable(tbl, max(rows, 1)); err != nil {
		fw.Close()
		return err
	}
	return fw.Close()
}

// flatColumns reports whether every field is a top-level column of a
// primitive type (no struct, list, map, or extension type), which
// writeRowGroupFile writes.
func flatColumns(fields []arrow.Field) bool {
	for _, f := range fields {
		t := f.Type
		if d, ok := t.(*arrow.DictionaryType); ok {
			t = d.ValueType
		}
		if !primitive(t) {
			return false
		}
	}
	return true
}

// writerProps are the table's Parquet writer settings, as iceberg-go
// writes data files with them (bloom filters aside), for row groups of at
// most rows rows of fields: a patch's rows, or the table's row group limit.
func writerProps(p iceberg.Properties, fields []arrow.Field, rows int64) *parquet.WriterProperties {
	num := p.GetInt64
	dpv := parquet.DataPageV2
	if p.Get("write.parquet.page-version", "2") == "1" {
		dpv = parquet.DataPageV1
	}
	codec, level := snapshot.ParquetCompression(p, false)
	opts := []parquet.WriterProperty{
		parquet.WithMaxRowGroupLength(max(rows, 1)),
		parquet.WithDataPageSize(num("write.parquet.page-size-bytes", 1<<20)),
		parquet.WithDataPageVersion(dpv),
		parquet.WithBatchSize(num("write.parquet.page-row-limit", 20000)),
		parquet.WithDictionaryPageSizeLimit(num("write.parquet.dict-size-bytes", 2<<20)),
		parquet.WithCompression(codec),
		parquet.WithCompressionLevel(level),
		parquet.WithDictionaryDefault(strings.EqualFold(p.Get("parquet.enable.dictionary", "true"), "true")),
		parquet.WithStats(true),
	}
	for _, f := range fields {
		if v, ok := p["write.parquet.dict-encoding-enabled.column."+f.Name]; ok {
			opts = append(opts, parquet.WithDictionaryFor(f.Name, strings.EqualFold(v, "true")))
		}
		opts = append(opts, parquet.WithDictionaryCostFallbackFor(f.Name, true))
	}
	return parquet.NewWriterProperties(opts...)
}
