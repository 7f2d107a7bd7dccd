package mergeinto

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// Merge-on-read: a changed target row is not rewritten with its file; a
// position delete (file path, row position) hides it, and its new version
// (an UPDATE) goes to a new data file with the inserts. Nothing is
// rewritten; the statement stages one row delta.
//
// INVARIANT: position deletes name physical row positions in the data
// file. The target is read with its deletes applied, so applyBatch's
// positions count live rows; morSink maps them back through the file's
// existing position deletes. Equality deletes cannot be mapped that way
// (which rows they hid depends on sequence numbers and values), so a
// statement whose candidate files carry equality deletes or deletion
// vectors runs as copy-on-write instead (useMergeOnRead).

// useMergeOnRead decides the statement's write mode from its candidates.
func (m *merger) useMergeOnRead(tasks []table.FileScanTask) bool {
	if m.spec.Mode != MergeOnRead {
		return false
	}
	for _, t := range tasks {
		if len(t.EqualityDeleteFiles) > 0 || len(t.DeletionVectorFiles) > 0 {
			return false
		}
	}
	return true
}

// morSink is the merge-on-read state of one data file.
type morSink struct {
	m       *merger
	task    table.FileScanTask
	deleted []int64 // physical positions already deleted, ascending (nil until loaded)
	loaded  bool
	j       int     // deleted[:j] lie before the last mapped position
	pos     []int64 // physical positions to delete, ascending
	rows    int64   // updated rows written
}

var _ fileSink = (*morSink)(nil)

func (s *morSink) releaseBuffer() {}

func (s *morSink) emit(ctx context.Context, _ arrow.RecordBatch, o batchOut) error {
	if !o.changed {
		return nil
	}
	out := o.out
	defer func() { releaseBatches(out) }()
	if !s.loaded {
		d, err := s.m.existingPositions(ctx, s.task)
		if err != nil {
			return err
		}
		s.deleted, s.loaded = d, true
	}
	for _, live := range o.changedPos {
		// The physical position p of the live-th live row is live plus
		// the number of deleted positions at or before p.
		p := live + int64(s.j)
		for s.j < len(s.deleted) && s.deleted[s.j] <= p {
			s.j++
			p = live + int64(s.j)
		}
		s.pos = append(s.pos, p)
	}
	updated := out
	if o.kept > 0 {
		updated = out[1:]
	}
	for i, b := range updated {
		updated[i] = nil
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		s.rows += b.NumRows()
		if s.m.morWriter == nil {
			s.m.morWriter = s.m.newWriter(ctx)
		}
		if err := s.m.morWriter.push(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

func (s *morSink) finish() error {
	if len(s.pos) == 0 {
		return nil
	}
	s.m.posDeletes = append(s.m.posDeletes, filePositions{file: s.task.File, pos: s.pos})
	return nil
}

type filePositions struct {
	file iceberg.DataFile
	pos  []int64
}

// existingPositions reads the physical positions task's position delete
// files hide in its data file, ascending and distinct.
func (m *merger) existingPositions(ctx context.Context, task table.FileScanTask) ([]int64, error) {
	if len(task.DeleteFiles) == 0 {
		return nil, nil
	}
	fsys, err := m.spec.Target.FS(ctx)
	if err != nil {
		return nil, err
	}
	path := task.File.FilePath()
	var out []int64
	for _, df := range task.DeleteFiles {
		if err := readPositions(ctx, fsys, df.FilePath(), path, &out); err != nil {
			return nil, fmt.Errorf("merge into %s: reading position delete file %s: %w", m.p.name, m.relPath(df.FilePath()), err)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func readPositions(ctx context.Context, fsys iceio.IO, deletePath, dataPath string, out *[]int64) error {
	f, err := fsys.Open(deletePath)
	if err != nil {
		return err
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, nil)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	sc := rr.Schema()
	pi, fi := sc.FieldIndices("pos"), sc.FieldIndices("file_path")
	if len(pi) != 1 || len(fi) != 1 {
		return fmt.Errorf("not a position delete file: its columns are %v", sc)
	}
	for rr.Next() {
		b := rr.RecordBatch()
		paths, ok1 := b.Column(fi[0]).(*array.String)
		pos, ok2 := b.Column(pi[0]).(*array.Int64)
		if !ok1 || !ok2 {
			return fmt.Errorf("position delete file has columns of types %s, %s; want string, int64", b.Column(fi[0]).DataType(), b.Column(pi[0]).DataType())
		}
		for i := 0; i < b.Column(0).Len(); i++ {
			if paths.Value(i) == dataPath {
				*out = append(*out, pos.Value(i))
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

var posDeleteArrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "file_path", Type: arrow.BinaryTypes.String, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"2147483546"})},
	{Name: "pos", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"2147483545"})},
}, nil)

// writePositionDeletes writes one position delete file per changed data
// file, with the data file's partition and file_path bounds equal to its
// path (so readers and compaction treat it as scoped to that one file).
func (m *merger) writePositionDeletes(ctx context.Context) error {
	if len(m.posDeletes) == 0 {
		return nil
	}
	fsys, err := m.spec.Target.FS(ctx)
	if err != nil {
		return err
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("merge into %s: the table's storage is read-only", m.p.name)
	}
	meta := m.spec.Target.Metadata()
	for _, fp := range m.posDeletes {
		if err := ctx.Err(); err != nil {
			return err
		}
		df, err := m.writePositionDeleteFile(wfs, meta, fp)
		if err != nil {
			return fmt.Errorf("merge into %s: writing position deletes for %s: %w", m.p.name, m.relPath(fp.file.FilePath()), err)
		}
		m.res.Metrics.BytesWritten += df.FileSizeBytes()
	}
	return nil
}

func (m *merger) writePositionDeleteFile(wfs iceio.WriteFileIO, meta table.Metadata, fp filePositions) (iceberg.DataFile, error) {
	var id [16]byte
	_, _ = rand.Read(id[:])
	path := m.spec.Target.Location() + "/data/merge-" + hex.EncodeToString(id[:]) + "-deletes.parquet"

	bld := array.NewRecordBuilder(m.opts.Mem, posDeleteArrowSchema)
	defer bld.Release()
	paths := bld.Field(0).(*array.StringBuilder)
	for range fp.pos {
		paths.Append(fp.file.FilePath())
	}
	bld.Field(1).(*array.Int64Builder).AppendValues(fp.pos, nil)
	rec := bld.NewRecordBatch()
	defer rec.Release()

	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(false))
	w, err := pqarrow.NewFileWriter(posDeleteArrowSchema, &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, err
	}
	if err := w.Write(rec); err != nil {
		w.Close()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if err := wfs.WriteFile(path, buf.Bytes()); err != nil {
		return nil, err
	}
	m.posDeleteFiles = append(m.posDeleteFiles, path)

	spec := meta.PartitionSpecByID(int(fp.file.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("partition spec %d of the data file is unknown (broken invariant)", fp.file.SpecID())
	}
	pathBound := []byte(fp.file.FilePath())
	posLo, posHi := make([]byte, 8), make([]byte, 8)
	putLE(posLo, fp.pos[0])
	putLE(posHi, fp.pos[len(fp.pos)-1])
	b, err := iceberg.NewDataFileBuilder(*spec, iceberg.EntryContentPosDeletes, path, iceberg.ParquetFile,
		fp.file.Partition(), nil, nil, int64(len(fp.pos)), int64(buf.Len()))
	if err != nil {
		return nil, err
	}
	b.LowerBoundValues(map[int][]byte{2147483546: pathBound, 2147483545: posLo}).
		UpperBoundValues(map[int][]byte{2147483546: pathBound, 2147483545: posHi})
	df := b.Build()
	m.posDeleteAdded = append(m.posDeleteAdded, df)
	return df, nil
}

func putLE(b []byte, v int64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(uint64(v) >> (8 * i))
	}
}

// stageRowDelta stages the merge-on-read change: new data files (updated
// rows and inserts) and position deletes, one snapshot, nothing removed.
func (m *merger) stageRowDelta(ctx context.Context, txn *table.Transaction, props iceberg.Properties) error {
	props["skade.write-mode"] = MergeOnRead.String()
	props["skade.position-delete-files"] = strconv.Itoa(len(m.posDeleteAdded))
	rd := txn.NewRowDelta(props).AddRows(m.added...).AddDeletes(m.posDeleteAdded...)
	if err := rd.Commit(ctx); err != nil {
		return fmt.Errorf("merge into %s: staging the snapshot: %w", m.p.name, err)
	}
	return nil
}

// finishMergeOnRead collects the updated rows' data files and writes the
// position deletes, after every candidate file was read.
func (m *merger) finishMergeOnRead(ctx context.Context) error {
	if !m.mor {
		return nil
	}
	if m.morWriter != nil {
		files, err := m.morWriter.finish()
		if err != nil {
			return fmt.Errorf("merge into %s: writing updated rows: %w", m.p.name, err)
		}
		m.addFiles(files)
	}
	return m.writePositionDeletes(ctx)
}
