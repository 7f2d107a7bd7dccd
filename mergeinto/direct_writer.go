package mergeinto

import (
	"context"
	"encoding/base64"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/skadedb/skade/scan"
)

// The direct writer writes a table's data files itself instead of through
// iceberg-go's WriteRecords, for one reason: string columns. arrow-go
// dictionary-encodes a string column by putting every value through a
// memo table that boxes it (about 85 ns and one allocation a value, 15% of
// a 10M-row copy-on-write MERGE's CPU). Handed an Arrow dictionary array
// instead, it writes the dictionary once and the indices as they are. So
// the direct writer dictionary-encodes the string columns itself, with one
// Go map per column kept for the whole file, and hands arrow-go dictionary
// arrays.
//
// It covers only the tables where WriteRecords would do nothing else:
// unpartitioned, unsorted, format version 1 or 2 (no row lineage),
// top-level primitive columns arriving in the table's own Arrow layout,
// and no Parquet setting it does not reproduce (bloom filters). Everything else goes through
// WriteRecords. The files it writes are what WriteRecords writes (same
// writer settings, footer key-value metadata and Iceberg metrics), except
// for the encoding of string column chunks, which arrow-go chooses from
// the dictionary it is given.
//
// INVARIANT: a string column's dictionary grows only by appending, so an
// index once written keeps its value. arrow-go keeps the dictionary
// written first in a column chunk and falls back to plain encoding for the
// rest of the chunk when a later batch brings another; a batch with new
// values does that (correct, just not dictionary-encoded), and the next
// row group starts again from the grown dictionary.

// directPlan is what the direct writer needs of a table, computed once
// per statement.
type directPlan struct {
	tbl        *table.Table
	fs         iceio.WriteFileIO
	loc        table.LocationProvider
	schema     *iceberg.Schema
	arrow      *arrow.Schema  // the table's Arrow layout, with field IDs
	meta       arrow.Metadata // arrow's, and arrow itself as ARROW:schema
	strs       []int          // the string columns
	props      *parquet.WriterProperties
	targetSize int64
	groupBytes int64
	dictLimit  int64 // a string column dictionary's bytes (stringDictLimit)
	uuid       uuid.UUID
	files      atomic.Int64 // files opened, numbering their names
}

// directQueue is how many batches the direct writer's file writer holds
// beyond its own two, as WriteRecords queues 64 before its rolling writer:
// the statement reads and joins the next batches while one is encoded.
const directQueue = 64

// maxDictEntries caps a column's dictionary; beyond it each batch brings
// its own (and arrow-go writes the column plain).
const maxDictEntries = 1 << 16

// planDirect returns the direct writer's plan for writing batches of in
// into tbl, or nil when the table needs WriteRecords (see above) or has no
// string column to gain on. targetSize overrides the table's target file
// size when positive.
func planDirect(ctx context.Context, tbl *table.Table, in *arrow.Schema, targetSize int64) *directPlan {
	meta := tbl.Metadata()
	if !tbl.Spec().IsUnpartitioned() || !tbl.SortOrder().IsUnsorted() || meta.Version() > 2 {
		return nil
	}
	props := meta.Properties()
	for k := range props {
		if strings.HasPrefix(k, table.ParquetBloomFilterColumnEnabledKeyPrefix) {
			return nil
		}
	}
	sc := tbl.Schema()
	as, err := table.SchemaToArrowSchema(sc, nil, true /* field IDs */, false /* large types */)
	if err != nil || as.NumFields() != in.NumFields() {
		return nil
	}
	var strs []int
	for i, f := range as.Fields() {
		g := in.Field(i)
		if f.Name != g.Name || !arrow.TypeEqual(f.Type, g.Type) || !primitive(f.Type) {
			return nil
		}
		if f.Type.ID() == arrow.STRING {
			strs = append(strs, i)
		}
	}
	if len(strs) == 0 {
		return nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return nil
	}
	loc, err := tbl.LocationProvider()
	if err != nil {
		return nil
	}
	num := props.GetInt64
	if targetSize <= 0 {
		targetSize = num(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault)
	}
	// The stored Arrow schema is the table's layout, as WriteRecords
	// stores it, not the dictionary one the writer is given.
	md := as.Metadata()
	keys := append(slices.Clone(md.Keys()), "ARROW:schema")
	vals := append(slices.Clone(md.Values()), base64.StdEncoding.EncodeToString(flight.SerializeSchema(as, memory.DefaultAllocator)))
	return &directPlan{
		tbl: tbl, fs: wfs, loc: loc, schema: sc, arrow: as,
		meta:       arrow.NewMetadata(keys, vals),
		strs:       strs,
		props:      writerProps(props, as.Fields(), num(table.ParquetRowGroupLimitKey, table.ParquetRowGroupLimitDefault)),
		targetSize: targetSize,
		groupBytes: max(num(table.ParquetRowGroupSizeBytesKey, table.ParquetRowGroupSizeBytesDefault), 1),
		dictLimit:  stringDictLimit(props),
		uuid:       uuid.New(),
	}
}

func primitive(t arrow.DataType) bool {
	switch t.(type) {
	case arrow.NestedType, arrow.ExtensionType:
		return false
	}
	return true
}

// writeRecords writes records to data files, yielding each file once it is
// complete and an error (then stopping) when one fails. Like WriteRecords
// it releases every batch it consumes; a file it was writing when it
// failed is removed.
func (p *directPlan) writeRecords(ctx context.Context, records iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[iceberg.DataFile, error] {
	return func(yield func(iceberg.DataFile, error) bool) {
		var cur *directFile
		defer func() {
			if cur != nil {
				cur.abort()
			}
		}()
		// finish closes cur; on failure cur stays, for the abort above
		finish := func() (df iceberg.DataFile, err error) {
			if err = recovered(func() (err error) { df, err = cur.close(); return err }); err == nil {
				cur = nil
			}
			return df, err
		}
		for b, err := range records {
			if err == nil {
				err = ctx.Err()
			}
			if err == nil && cur == nil && b.NumRows() > 0 {
				cur, err = p.open(int(p.files.Add(1)), b)
			}
			if err == nil && cur != nil {
				err = recovered(func() error { return cur.write(b) })
			}
			if b != nil {
				b.Release()
			}
			if err == nil && cur != nil && cur.counter.n >= p.targetSize {
				var df iceberg.DataFile
				if df, err = finish(); err == nil && !yield(df, nil) {
					return
				}
			}
			if err != nil {
				yield(nil, err)
				return
			}
		}
		if cur != nil {
			yield(finish())
		}
	}
}

// recovered runs fn, turning a panic in arrow-go's writer into an error,
// as iceberg-go's rolling writer does: the statement fails, the process
// does not.
func recovered(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("writing a data file: %v", r)
		}
	}()
	return fn()
}

// directFile is one data file being written.
type directFile struct {
	p       *directPlan
	path    string
	file    iceio.FileWriter
	counter *countingWriter
	w       *bufferedFileWriter
	layout  *arrow.Schema // the writer's: the dictionary columns as such
	dicts   []*stringDict // per string column; nil where it is written as is
}

// sampleRows is the least first batch whose distinct values can mark a
// string column as not worth a dictionary.
const sampleRows = 1024

// open starts the count-th file of the write. Its first batch, first,
// decides which string columns go as dictionaries: all but those whose
// values in a batch of at least sampleRows rows are mostly distinct (a
// dictionary of them would only be thrown away), and those holding an
// empty string (see stringDict.encode).
func (p *directPlan) open(count int, first arrow.RecordBatch) (*directFile, error) {
	mem := memory.DefaultAllocator
	d := &directFile{p: p, dicts: make([]*stringDict, len(p.strs))}
	fields := append([]arrow.Field(nil), p.arrow.Fields()...)
	for k, c := range p.strs {
		if hasEmpty(first.Column(c)) || mostlyDistinct(first.Column(c)) {
			continue
		}
		d.dicts[k] = newStringDict(mem, p.dictLimit)
		fields[c].Type = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	}
	d.layout = arrow.NewSchema(fields, &p.meta)
	d.path = p.loc.NewDataLocation(fmt.Sprintf("00000-0-%s-%05d.parquet", p.uuid, count))
	f, err := p.fs.Create(d.path)
	if err != nil {
		return nil, err
	}
	d.file = f
	d.counter = &countingWriter{w: f}
	d.w, err = newBufferedFileWriter(context.Background(), d.counter, d.layout, p.props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		d.abort()
		return nil, err
	}
	return d, nil
}

// hasEmpty reports whether the string column a holds an empty string.
func hasEmpty(a arrow.Array) bool {
	s, ok := a.(*array.String)
	if !ok {
		return false
	}
	for i := range s.Len() {
		if s.IsValid(i) && s.ValueLen(i) == 0 {
			return true
		}
	}
	return false
}

// mostlyDistinct reports whether a, a first batch of at least sampleRows
// rows, has more distinct values than half its rows: a dictionary of them
// would only be thrown away.
func mostlyDistinct(a arrow.Array) bool {
	n := a.Len()
	return n >= sampleRows && distinctOver(a, n/2)
}

// distinctOver reports whether the string column a has more than limit
// distinct values.
func distinctOver(a arrow.Array, limit int) bool {
	s, ok := a.(*array.String)
	if !ok {
		return false
	}
	seen := make(map[string]struct{}, 64)
	for i := range s.Len() {
		if s.IsValid(i) {
			seen[s.Value(i)] = struct{}{}
			if len(seen) > limit {
				return true
			}
		}
	}
	return false
}

func (d *directFile) write(b arrow.RecordBatch) error {
	if b.NumRows() == 0 {
		return nil
	}
	cols := make([]arrow.Array, b.NumCols())
	copy(cols, b.Columns())
	for i, f := range d.p.arrow.Fields() {
		if !f.Nullable && cols[i].NullN() > 0 {
			return fmt.Errorf("column %s is NOT NULL and cannot take NULL", f.Name)
		}
	}
	for k, c := range d.p.strs {
		if d.dicts[k] == nil {
			continue
		}
		s, ok := cols[c].(*array.String)
		if !ok {
			s = array.NewStringData(cols[c].Data())
			defer s.Release()
		}
		a := d.dicts[k].encode(s)
		defer a.Release()
		cols[c] = a
	}
	rec := array.NewRecordBatch(d.layout, cols, b.NumRows())
	defer rec.Release()
	// a new row group once the open one holds the target bytes, as
	// iceberg-go's writer does it
	if d.w.RowGroupTotalBytesWritten() >= d.p.groupBytes {
		if err := d.w.NewBufferedRowGroupChecked(); err != nil {
			return err
		}
	}
	return d.w.WriteBuffered(rec)
}

// close finishes the file and returns its data file entry; on failure
// the file is removed.
func (d *directFile) close() (iceberg.DataFile, error) {
	err := d.w.Close()
	if cerr := d.file.Close(); err == nil {
		err = cerr
	}
	d.release()
	var df iceberg.DataFile
	if err == nil {
		var fm *metadata.FileMetaData
		if fm, err = d.w.FileMetadata(); err == nil {
			df, err = table.DataFileFromMetadata(table.DataFileArgs{
				Schema:        d.p.schema,
				Spec:          d.p.tbl.Spec(),
				Format:        iceberg.ParquetFile,
				Metadata:      fm,
				FilePath:      d.path,
				FileSize:      d.counter.n,
				Content:       iceberg.EntryContentData,
				Properties:    d.p.tbl.Metadata().Properties(),
				FormatVersion: d.p.tbl.Metadata().Version(),
			})
		}
	}
	if err != nil {
		d.remove()
		return nil, err
	}
	return df, nil
}

// abort drops the file.
func (d *directFile) abort() {
	_ = d.file.Close()
	d.release()
	d.remove()
}

// remove deletes the file. Its error is dropped: the file was never
// yielded, so the statement cannot report it as written. Where the writer
// writes through a transaction's IO (snapshot.Commit's tracker), a failed
// statement removes it again; otherwise orphan removal is the backstop.
func (d *directFile) remove() {
	_ = d.p.fs.Remove(d.path)
}

func (d *directFile) release() {
	for _, s := range d.dicts {
		if s != nil {
			s.release()
		}
	}
	d.dicts = nil
}

// stringDictLimit is the bytes a string column's dictionary may hold in
// tables of props: half the Parquet dictionary page limit.
func stringDictLimit(props iceberg.Properties) int64 {
	return props.GetInt64(table.ParquetDictSizeBytesKey, table.ParquetDictSizeBytesDefault) / 2
}

// stringDict dictionary-encodes one string column of a file.
type stringDict struct {
	mem      memory.Allocator
	index    map[string]int32
	vals     []string
	bytes    int64 // of vals as a Parquet dictionary page holds them
	limit    int64
	dict     arrow.Array // vals as an array, rebuilt when vals grows
	restarts int         // times the dictionary started again
}

func newStringDict(mem memory.Allocator, limit int64) *stringDict {
	return &stringDict{mem: mem, index: make(map[string]int32), limit: max(limit, 1)}
}

// encode returns s as a dictionary array over the column's dictionary,
// which it grows by s's new values. Past maxDictEntries or the byte limit
// the dictionary starts again from s's values alone (without limit: a
// batch's values all need an index).
//
// INVARIANT: a batch holding an empty string reaches arrow-go's plain
// encoder. arrow-go's statistics of a dictionary batch
// (ByteArrayStatistics.UpdateFromArrow) skip empty values, so its
// column chunk's minimum would be wrong, and pruning on it would lose the
// row. The dictionary of such a batch repeats a value: arrow-go then
// falls back to plain encoding for the rest of the column chunk, and the
// plain path's statistics count the empty string.
func (sd *stringDict) encode(s *array.String) arrow.Array {
	n := s.Len()
	idx := memory.NewResizableBuffer(sd.mem)
	idx.Resize(n * arrow.Int32SizeBytes)
	ix := arrow.Int32Traits.CastFromBytes(idx.Bytes())
	grown, restarted, empty := false, false, false
	nulls := s.NullN() > 0
	for i := 0; i < n; i++ {
		if nulls && s.IsNull(i) {
			ix[i] = 0
			continue
		}
		v := s.Value(i)
		empty = empty || len(v) == 0
		k, ok := sd.lookup(v)
		if !ok {
			if !restarted && (len(sd.vals) >= maxDictEntries || sd.bytes+int64(len(v))+4 > sd.limit) {
				sd.reset()
				sd.restarts++
				restarted, i = true, -1
				continue
			}
			k = int32(len(sd.vals))
			v = strings.Clone(v)
			sd.index[v] = k
			sd.vals = append(sd.vals, v)
			sd.bytes += int64(len(v)) + 4
			grown = true
		}
		ix[i] = k
	}
	if grown || sd.dict == nil {
		if sd.dict != nil {
			sd.dict.Release()
		}
		sd.dict = stringArray(sd.mem, sd.vals)
	}
	var valid *memory.Buffer
	if nulls {
		valid = memory.NewResizableBuffer(sd.mem)
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		bitutil.CopyBitmap(s.NullBitmapBytes(), s.Data().Offset(), n, valid.Bytes(), 0)
	}
	data := array.NewData(arrow.PrimitiveTypes.Int32, n, []*memory.Buffer{valid, idx}, nil, s.NullN(), 0)
	if valid != nil {
		valid.Release()
	}
	idx.Release()
	indices := array.MakeFromData(data)
	data.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	dict := sd.dict
	if empty {
		// one value twice: not the chunk's dictionary, nor a usable one
		dict = stringArray(sd.mem, append(sd.vals[:len(sd.vals):len(sd.vals)], sd.vals[0]))
		defer dict.Release()
	}
	out := array.NewDictionaryArray(dt, indices, dict)
	indices.Release()
	return out
}

// smallDict is the dictionary size up to which lookup compares values
// in turn rather than hashing them: a status column's handful of values.
const smallDict = 4

// lookup returns v's index in the dictionary.
func (sd *stringDict) lookup(v string) (int32, bool) {
	if len(sd.vals) <= smallDict {
		for k, w := range sd.vals {
			if w == v {
				return int32(k), true
			}
		}
		return 0, false
	}
	k, ok := sd.index[v]
	return k, ok
}

// stringArray is vals as an Arrow string array.
func stringArray(mem memory.Allocator, vals []string) arrow.Array {
	bld := array.NewStringBuilder(mem)
	defer bld.Release()
	bld.AppendValues(vals, nil)
	return bld.NewArray()
}

func (sd *stringDict) reset() {
	clear(sd.index)
	sd.vals = sd.vals[:0]
	sd.bytes = 0
	if sd.dict != nil {
		sd.dict.Release()
		sd.dict = nil
	}
}

func (sd *stringDict) release() {
	if sd.dict != nil {
		sd.dict.Release()
		sd.dict = nil
	}
}

// dictChunks returns the chunks of one string column chunk, written at
// once (a patch's row group), as dictionary arrays over one dictionary of
// all their values, so that arrow-go writes the dictionary once and the
// indices as they are; ok is false, and nothing is returned, where a
// dictionary does not serve: the values are mostly distinct (by the first
// chunk, as open judges it), one is empty (see stringDict.encode), all
// are NULL, or they outgrow the dictionary's limits. The caller releases the arrays.
func dictChunks(mem memory.Allocator, chunks []arrow.Array, limit int64) (out []arrow.Array, ok bool) {
	strs := make([]*array.String, len(chunks))
	for i, c := range chunks {
		s, isStr := c.(*array.String)
		if !isStr || hasEmpty(s) {
			return nil, false
		}
		strs[i] = s
	}
	if len(strs) == 0 || mostlyDistinct(strs[0]) {
		return nil, false
	}
	sd := newStringDict(mem, limit)
	defer sd.release()
	enc := make([]arrow.Array, 0, len(strs))
	defer func() { releaseAll(enc) }()
	for _, s := range strs {
		enc = append(enc, sd.encode(s))
		if sd.restarts > 0 {
			return nil, false
		}
	}
	if len(sd.vals) == 0 {
		return nil, false // all NULL: nothing to put in a dictionary
	}
	// INVARIANT: the dictionary only grew, so every chunk's indices hold
	// in the final one.
	out = make([]arrow.Array, len(enc))
	for i, a := range enc {
		d := a.(*array.Dictionary)
		out[i] = array.NewDictionaryArray(d.DataType(), d.Indices(), sd.dict)
	}
	return out, true
}

// WriteRecords writes records, in schema's layout, as data files of tbl:
// by the direct writer where it takes the table (see above), otherwise by
// iceberg-go's table.WriteRecords (string columns that partition values
// come from copied out of the read buffers first). targetFileSize
// overrides the table's target file size when positive. Like
// table.WriteRecords it releases each batch it consumes.
func WriteRecords(ctx context.Context, tbl *table.Table, schema *arrow.Schema, records iter.Seq2[arrow.RecordBatch, error], targetFileSize int64) iter.Seq2[iceberg.DataFile, error] {
	var opts []table.WriteRecordOption
	if targetFileSize > 0 {
		opts = append(opts, table.WithTargetFileSize(targetFileSize))
	}
	return writeFiles(ctx, tbl, schema, records, planDirect(ctx, tbl, schema, targetFileSize), opts...)
}

// writeFiles writes records by the direct plan when there is one, and
// otherwise by iceberg-go's WriteRecords with opts, the string columns
// that partition values come from copied out of the read buffers first
// (scan.StringPartitionSources).
func writeFiles(ctx context.Context, tbl *table.Table, schema *arrow.Schema, records iter.Seq2[arrow.RecordBatch, error], direct *directPlan, opts ...table.WriteRecordOption) iter.Seq2[iceberg.DataFile, error] {
	return watchNaN(tbl, records, func(records iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[iceberg.DataFile, error] {
		if direct != nil {
			return direct.writeRecords(ctx, records)
		}
		return table.WriteRecords(ctx, tbl, schema, scan.DetachingSeq(tbl.Metadata(), records), opts...)
	})
}

// WriteDirect is WriteRecords by the direct writer alone: ok is false, and
// records are not read, when the table needs iceberg-go's writer. Its
// files then need no more of iceberg-go than staging them.
func WriteDirect(ctx context.Context, tbl *table.Table, schema *arrow.Schema, records iter.Seq2[arrow.RecordBatch, error], targetFileSize int64) (files iter.Seq2[iceberg.DataFile, error], ok bool) {
	p := planDirect(ctx, tbl, schema, targetFileSize)
	if p == nil {
		return nil, false
	}
	return writeFiles(ctx, tbl, schema, records, p), true
}
