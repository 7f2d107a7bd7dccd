package mergeinto

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// pagedChunk is one SET column of a patch, re-encoded page by page
// (fixedpatch.go, dictpatch.go): a Parquet file's bytes (raw) whose
// footer (meta) has one row group of that one column.
type pagedChunk struct {
	raw  []byte
	meta *metadata.FileMetaData
}

// pageFile is the file a page-by-page patch writes its column chunk to:
// arrow-go's page writer over a byteSink, and the metadata builders for
// its footer, with the table's writer settings.
type pageFile struct {
	col        *schema.Column // the column, as the file being patched has it
	fb         *metadata.FileMetaDataBuilder
	rgb        *metadata.RowGroupMetaDataBuilder
	ccb        *metadata.ColumnChunkMetaDataBuilder
	sink       byteSink
	codec      compress.Compression
	pw         file.PageWriter
	v2         bool // data pages v2
	maxStats   int
	pageStats  metadata.TypedStatistics // nil where the column keeps no statistics
	chunkStats metadata.TypedStatistics
	scratch    *pageScratch
}

// pageScratch is what pageFile lays a page out and compresses it in.
// Pooled: zeroing fresh buffers took 7% of the patches' CPU in a spread
// MERGE.
type pageScratch struct {
	body       []byte // its levels and values (pageBody)
	compressed bytes.Buffer
	combined   []byte // a V2 page's levels and compressed values
}

var pageScratches = sync.Pool{New: func() any { return new(pageScratch) }}

// newPageFile starts the file of column descr, of about size bytes; ok is
// false where the column cannot be written as the file has it.
func newPageFile(descr *schema.Column, size int64, props *parquet.WriterProperties, mem memory.Allocator) (_ *pageFile, ok bool, err error) {
	sch := pagedSchema(descr)
	if sch == nil {
		return nil, false, nil
	}
	f := &pageFile{col: sch.Column(0), fb: metadata.NewFileMetadataBuilder(sch, props, nil)}
	f.rgb = f.fb.AppendRowGroup()
	f.ccb = f.rgb.NextColumnChunk()
	f.sink.Grow(int(min(size+size/4+64<<10, 1<<30)))
	f.sink.WriteString("PAR1")
	path := f.col.Path()
	f.codec = props.CompressionFor(path)
	if f.pw, err = file.NewPageWriter(&f.sink, f.codec, props.CompressionLevelFor(path), f.ccb, 0, 0, mem, false, nil, nil); err != nil {
		return nil, false, err
	}
	if f.codec != compress.Codecs.Uncompressed && !f.pw.HasCompressor() {
		return nil, false, fmt.Errorf("no %s compressor (broken invariant)", f.codec)
	}
	if props.StatisticsEnabledFor(path) && f.col.SortOrder() != schema.SortUNKNOWN {
		f.chunkStats = metadata.NewStatistics(f.col, mem)
		f.pageStats = metadata.NewStatistics(f.col, mem)
	}
	f.maxStats = int(props.MaxStatsSizeFor(path))
	f.v2 = props.DataPageVersion() == parquet.DataPageV2
	f.scratch = pageScratches.Get().(*pageScratch)
	return f, true, nil
}

// release gives back the scratch; f is done with.
func (f *pageFile) release() {
	if f.scratch != nil {
		pageScratches.Put(f.scratch)
		f.scratch = nil
	}
}

// encoded is what f's statistics make of what went into their own
// (ApplyStatSizeLimits, the sort order's sign), as the column writer
// encodes them.
func (f *pageFile) encoded(st metadata.TypedStatistics) (metadata.EncodedStatistics, error) {
	enc, err := st.Encode()
	if err != nil {
		return enc, err
	}
	enc.ApplyStatSizeLimits(f.maxStats)
	enc.Signed = f.col.SortOrder() == schema.SortSIGNED
	return enc, nil
}

// pageBody starts a data page's body in f's scratch (writePage takes it
// back): the definition levels levels appends (none where levels is nil),
// laid out for f's page version, in a V1 page after their length; n is
// the bytes they take.
func (f *pageFile) pageBody(levels func([]byte) []byte) (body []byte, n int) {
	body = f.scratch.body[:0]
	switch {
	case levels == nil:
	case f.v2:
		body = levels(body)
	default:
		body = levels(append(body, 0, 0, 0, 0))
		binary.LittleEndian.PutUint32(body, uint32(len(body)-4))
	}
	return body, len(body)
}

// writePage writes a data page of rows rows (nulls of them NULL) whose
// body (uncompressed) is its levels (the first levels bytes, laid out for
// f's page version) and values, encoded as enc, with the statistics
// pageStats holds, which it then merges into the chunk's.
func (f *pageFile) writePage(body []byte, levels, rows, nulls int, enc parquet.Encoding) error {
	var stats metadata.EncodedStatistics
	if f.pageStats != nil {
		var err error
		if stats, err = f.encoded(f.pageStats); err != nil {
			return err
		}
		f.chunkStats.Merge(f.pageStats)
		f.pageStats.Reset()
	}
	sc, data := f.scratch, body
	sc.body = body // its room, grown, for the next page
	var page file.DataPage
	if f.v2 {
		if f.pw.HasCompressor() {
			sc.compressed.Reset()
			c := f.pw.Compress(&sc.compressed, body[levels:])
			sc.combined = append(append(sc.combined[:0], body[:levels]...), c...)
			data = sc.combined
		}
		page = file.NewDataPageV2WithStats(memory.NewBufferBytes(data), int32(rows), int32(nulls), int32(rows), enc,
			int32(levels), 0, int32(len(body)), f.pw.HasCompressor(), stats)
	} else {
		if f.pw.HasCompressor() {
			sc.compressed.Reset()
			data = f.pw.Compress(&sc.compressed, body)
		}
		page = file.NewDataPageV1WithStats(memory.NewBufferBytes(data), int32(rows), enc, parquet.Encodings.RLE, parquet.Encodings.RLE,
			int32(len(body)), stats)
	}
	_, err := f.pw.WriteDataPage(page)
	page.Release()
	return err
}

// finish writes the chunk's statistics and footer, once pages, the
// chunk's pages read, are done: rows were read, as many as the group's
// (rows), and u of its updates put in place; dict says whether a
// dictionary page came first.
func (f *pageFile) finish(pages file.PageReader, rows, read int64, u, updates int, dict bool) (pagedChunk, error) {
	if err := pages.Err(); err != nil {
		return pagedChunk{}, err
	}
	if read != rows || u != updates {
		return pagedChunk{}, fmt.Errorf("pages of %d rows and %d of %d updates in a row group of %d rows (broken invariant)", read, u, updates, rows)
	}
	if f.chunkStats != nil && rows > 0 {
		enc, err := f.encoded(f.chunkStats)
		if err != nil {
			return pagedChunk{}, err
		}
		if enc.IsSet() {
			f.ccb.SetStats(enc)
		}
	}
	if err := f.pw.Close(dict, false /* fallback */); err != nil {
		return pagedChunk{}, err
	}
	f.rgb.SetNumRows(int(rows))
	if err := f.rgb.Finish(0, 0); err != nil {
		return pagedChunk{}, err
	}
	fm, err := f.fb.Finish()
	if err != nil {
		return pagedChunk{}, err
	}
	return pagedChunk{raw: f.sink.Bytes(), meta: fm}, nil
}

// pagedSchema is the schema of a file of column descr alone, as the file
// has it; nil where it cannot be made so.
func pagedSchema(descr *schema.Column) *schema.Schema {
	node, ok := descr.SchemaNode().(*schema.PrimitiveNode)
	if !ok {
		return nil
	}
	col, err := schema.NewPrimitiveNodeLogical(node.Name(), node.RepetitionType(), node.LogicalType(), node.PhysicalType(), node.TypeLength(), node.FieldID())
	if err != nil {
		return nil
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Repeated, schema.FieldList{col}, -1)
	if err != nil {
		return nil
	}
	sch := schema.NewSchema(root)
	if !sameStorage(sch.Column(0).SchemaNode(), node) {
		return nil
	}
	return sch
}

// byteSink is a bytes.Buffer that tells where it is, as arrow-go's page
// writer needs.
type byteSink struct{ bytes.Buffer }

func (s *byteSink) Tell() int64 { return int64(s.Len()) }
