package scan

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// A data file need not hold the columns its partition tuple gives by
// identity: a table migrated from Hive (Spark's add_files, or any
// writer's AppendDataFiles of files laid out as region=eu/…) keeps the
// partition column in the directory name only. Iceberg's spec (Column
// Projection) says a reader returns the partition value for such a
// column. iceberg-go v0.7.0 returns NULL, and fails to read a file when
// every column asked for is one of them; a rewrite of such a file would
// then write the NULLs, losing the column.
//
// ReadTasks reads around it: a file lacking such a column is read
// without it, and the column is made from the file's partition value.
//
// iceberg-go's failure on a file holding none of the columns asked for
// meets any read of a few columns (a query's, a merge-on-read MERGE's
// keys) of a file that lacks them: columns added after it was written, or
// another writer's file without some of the table's columns. A query
// reads one more column where the files' column statistics show this
// (Query.AnchorField). Here, a file whose statistics name none of the
// columns, or that has none (as a migration registers files), has its
// footer read (once per process); if it holds none of the columns, it is
// read like a file lacking a partition column: through alt, with a
// column it holds besides, which is then dropped. iceberg-go fills the
// columns it lacks (NULL, or their initial default).

// ScanFunc makes a scan like the caller's, of the named columns, with no
// row filter.
type ScanFunc func(fields []string) *table.Scan

// ReadTasks is sc.ReadTasks over tasks of tbl, except that a file lacking
// a column that an identity field of its partition spec gives is read
// through alt, without that column and without a row filter (its rows are
// all returned, deletes applied, so the caller must filter them itself if
// sc has a filter), and the column is filled with the file's partition
// value. The batches have the columns of sc's projection, by name.
// Telling which files lack a column costs nothing for files whose column
// statistics name it (every file skade writes); other files' footers are
// read once per process.
func ReadTasks(ctx context.Context, tbl *table.Table, sc *table.Scan, alt ScanFunc, tasks []table.FileScanTask) (iter.Seq2[arrow.RecordBatch, error], error) {
	_, seq, err := ReadTasksSchema(ctx, tbl, sc, alt, tasks)
	return seq, err
}

// ReadTasksSchema is ReadTasks that also returns the batches' schema.
func ReadTasksSchema(ctx context.Context, tbl *table.Table, sc *table.Scan, alt ScanFunc, tasks []table.FileScanTask) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	return readTasks(ctx, tbl, sc, alt, tasks, nil)
}

// ReadTasksFiltered is ReadTasks for a scan whose row filter compares
// the timestamp columns timeIDs (field ids) with literals: a file that
// stores one of them in another unit than microseconds (fileCols.stored) is read
// through alt too, with no filter, since iceberg-go would skip row groups
// of it by statistics it misreads. Telling costs a footer read of each
// file once per process.
func ReadTasksFiltered(ctx context.Context, tbl *table.Table, sc *table.Scan, alt ScanFunc, tasks []table.FileScanTask, timeIDs []int) (iter.Seq2[arrow.RecordBatch, error], error) {
	_, seq, err := readTasks(ctx, tbl, sc, alt, tasks, timeIDs)
	return seq, err
}

// readTasks is readTasksRaw with iceberg-go's error for a timestamp
// column stored in a unit it cannot read explained (explainUnits).
func readTasks(ctx context.Context, tbl *table.Table, sc *table.Scan, alt ScanFunc, tasks []table.FileScanTask, timeIDs []int) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	schema, seq, err := readTasksRaw(ctx, tbl, sc, alt, tasks, timeIDs)
	if err != nil {
		return nil, nil, explainUnits(ctx, tbl, tasks, err)
	}
	return schema, func(yield func(arrow.RecordBatch, error) bool) {
		for b, err := range seq {
			if err != nil {
				yield(nil, explainUnits(ctx, tbl, tasks, err))
				return
			}
			if !yield(b, nil) {
				return
			}
		}
	}, nil
}

// explainUnits returns err, iceberg-go's, or when a file of tasks stores
// a timestamp column in a unit iceberg-go cannot read (INT96, as Hive,
// Impala and older Spark wrote timestamps, or nanoseconds for a
// microsecond column), an error that says which file and column, and what
// to do.
func explainUnits(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask, err error) error {
	if !strings.Contains(err.Error(), "cannot promote") {
		return err
	}
	fs, ferr := tbl.FS(ctx)
	if ferr != nil {
		return err
	}
	meta := tbl.Metadata()
	for i, t := range tasks {
		if i > 0 && t.File.FilePath() == tasks[i-1].File.FilePath() {
			continue
		}
		fc, ferr := fileColumns(fs, meta, t.File.FilePath())
		if ferr != nil {
			continue
		}
		for id, how := range fc.stored {
			if how == "TIMESTAMP(MILLIS)" {
				continue // read right
			}
			name, _ := meta.CurrentSchema().FindColumnName(id)
			return fmt.Errorf("data file %s stores column %q as %s, which skade cannot read yet; rewrite the file with microsecond timestamps (Spark: spark.sql.parquet.outputTimestampType = TIMESTAMP_MICROS) (%w)", t.File.FilePath(), name, how, err)
		}
	}
	return err
}

func readTasksRaw(ctx context.Context, tbl *table.Table, sc *table.Scan, alt ScanFunc, tasks []table.FileScanTask, timeIDs []int) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	proj, err := sc.Projection()
	if err != nil {
		return nil, nil, err
	}
	meta := tbl.Metadata()
	if len(timeIDs) == 0 && !slices.ContainsFunc(tasks, func(t table.FileScanTask) bool {
		wide, _ := widened(meta, proj, t)
		return len(identityCandidates(meta, wide, t)) > 0 || mayLackAll(wide, t.File)
	}) {
		return sc.ReadTasks(ctx, tasks)
	}
	schema, err := table.SchemaToArrowSchema(proj, nil, false, false)
	if err != nil {
		return nil, nil, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	// runs of tasks of one file read alike
	type run struct {
		tasks []table.FileScanTask
		fill  *fileFill
	}
	var runs []run
	for _, t := range tasks {
		if n := len(runs); n > 0 && runs[n-1].tasks[0].File.FilePath() == t.File.FilePath() {
			runs[n-1].tasks = append(runs[n-1].tasks, t)
			continue
		}
		fill, err := fillFor(ctx, fs, meta, proj, t)
		if err != nil {
			return nil, nil, err
		}
		if fill == nil && len(timeIDs) > 0 {
			fc, err := fileColumns(fs, meta, t.File.FilePath())
			if err != nil {
				return nil, nil, err
			}
			if slices.ContainsFunc(timeIDs, func(id int) bool { return fc.stored[id] != "" }) {
				// every column, unfiltered
				fill = &fileFill{out: proj.Fields(), consts: map[int]any{}, mem: compute.GetAllocator(ctx)}
				for _, f := range fill.out {
					fill.cols = append(fill.cols, f.Name)
				}
			}
		}
		if fill != nil {
			if err := fill.layout(schema); err != nil {
				return nil, nil, err
			}
		}
		if n := len(runs); n > 0 && fill == nil && runs[n-1].fill == nil {
			runs[n-1].tasks = append(runs[n-1].tasks, t)
			continue
		}
		runs = append(runs, run{tasks: []table.FileScanTask{t}, fill: fill})
	}
	return schema, func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range runs {
			if r.fill == nil {
				_, seq, err := sc.ReadTasks(ctx, r.tasks)
				if err != nil {
					yield(nil, err)
					return
				}
				for b, err := range seq {
					if !yield(b, err) || err != nil {
						return
					}
				}
				continue
			}
			if !r.fill.readTasks(ctx, alt, r.tasks, yield) {
				return
			}
		}
	}, nil
}

// LacksPartitionColumn reports whether t's file lacks a column of the
// table's current schema that an identity field of its partition spec
// gives (see ReadTasks).
func LacksPartitionColumn(ctx context.Context, tbl *table.Table, t table.FileScanTask) (bool, error) {
	meta := tbl.Metadata()
	if len(identityCandidates(meta, meta.CurrentSchema(), t)) == 0 {
		return false, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return false, err
	}
	f, err := fillFor(ctx, fs, meta, meta.CurrentSchema(), t)
	return f != nil, err
}

// fileFill is how to read one file that lacks columns its partition
// tuple gives.
type fileFill struct {
	out     []iceberg.NestedField // the columns to return, in order
	consts  map[int]any           // field id → partition value, for the columns the file lacks
	extra   []iceberg.NestedField // equality key columns read besides out, dropped after the deletes
	cols    []string              // the columns to read from the file
	wide    []iceberg.NestedField // out, then extra (layout)
	fields  []arrow.Field         // wide's Arrow fields: the batches', then extra's
	fs      iceio.IO
	schema0 *iceberg.Schema  // the table's, for its deletes
	mem     memory.Allocator // the context's, as iceberg-go's reader allocates
}

// identityCandidates returns the fields of proj that an identity field of
// t's partition spec gives and that t's column statistics do not show in
// the file, with the partition field ids.
func identityCandidates(meta table.Metadata, proj *iceberg.Schema, t table.FileScanTask) map[int]int {
	var out map[int]int
	for src, pid := range identitySources(meta, t.File) {
		if _, ok := proj.FindFieldByID(src); !ok || inStats(t.File, src) {
			continue
		}
		if out == nil {
			out = map[int]int{}
		}
		out[src] = pid
	}
	return out
}

// identitySources yields the columns an identity field of df's partition
// spec takes, with the partition field ids: a file lacking such a column
// has its value in its partition tuple.
func identitySources(meta table.Metadata, df iceberg.DataFile) iter.Seq2[int, int] {
	return func(yield func(src, pid int) bool) {
		spec := meta.PartitionSpecByID(int(df.SpecID()))
		if spec == nil {
			return
		}
		for _, pf := range spec.Fields() {
			if _, ok := pf.Transform.(iceberg.IdentityTransform); ok && len(pf.SourceIDs) == 1 {
				if !yield(pf.SourceIDs[0], pf.FieldID) {
					return
				}
			}
		}
	}
}

// IdentitySource reports whether an identity field of df's partition
// spec takes column id (identitySources).
func IdentitySource(meta table.Metadata, df iceberg.DataFile, id int) bool {
	for src := range identitySources(meta, df) {
		if src == id {
			return true
		}
	}
	return false
}

// inStats reports whether df's column statistics name column id, which
// only a file holding the column has.
func inStats(df iceberg.DataFile, id int) bool {
	if _, ok := df.ValueCounts()[id]; ok {
		return true
	}
	if _, ok := df.ColumnSizes()[id]; ok {
		return true
	}
	_, ok := df.NullValueCounts()[id]
	return ok
}

// widened is proj with the key columns of t's equality deletes it lacks
// (extra): they are read too, and may be the partition column, when the
// deletes are applied here (fileFill.readTasks).
func widened(meta table.Metadata, proj *iceberg.Schema, t table.FileScanTask) (wide *iceberg.Schema, extra []iceberg.NestedField) {
	for _, d := range t.EqualityDeleteFiles {
		for _, id := range d.EqualityFieldIDs() {
			if _, ok := proj.FindFieldByID(id); ok || slices.ContainsFunc(extra, func(f iceberg.NestedField) bool { return f.ID == id }) {
				continue
			}
			if f, ok := meta.CurrentSchema().FindFieldByID(id); ok {
				extra = append(extra, f)
			}
		}
	}
	if len(extra) == 0 {
		return proj, nil
	}
	return iceberg.NewSchema(proj.ID, append(slices.Clone(proj.Fields()), extra...)...), extra
}

// mayLackAll reports whether df may hold none of proj's columns: its
// column statistics name none of them, or it has none.
func mayLackAll(proj *iceberg.Schema, df iceberg.DataFile) bool {
	return len(proj.Fields()) > 0 && !slices.ContainsFunc(proj.Fields(), func(f iceberg.NestedField) bool { return inStats(df, f.ID) })
}

// fillFor returns how to read t's file, or nil when it holds every column
// of proj that its partition tuple gives, and some column of proj.
func fillFor(ctx context.Context, fs iceio.IO, meta table.Metadata, proj *iceberg.Schema, t table.FileScanTask) (*fileFill, error) {
	wide, extra := widened(meta, proj, t)
	cands := identityCandidates(meta, wide, t)
	if len(cands) == 0 && !mayLackAll(wide, t.File) {
		return nil, nil
	}
	fc, err := fileColumns(fs, meta, t.File.FilePath())
	if err != nil {
		return nil, err
	}
	held := fc.held
	if len(held) == 0 {
		// no column of the file could be identified (no field ids, no
		// name mapping): nothing to judge by, read as iceberg-go does
		return nil, nil
	}
	part := t.File.Partition()
	f := &fileFill{out: proj.Fields(), extra: extra, consts: map[int]any{}, mem: compute.GetAllocator(ctx), fs: fs, schema0: meta.CurrentSchema()}
	for src, pid := range cands {
		if !held[src] {
			f.consts[src] = part[pid]
		}
	}
	anchored := false
	for _, fld := range append(slices.Clone(f.out), extra...) {
		if _, ok := f.consts[fld.ID]; ok {
			continue
		}
		f.cols = append(f.cols, fld.Name)
		anchored = anchored || held[fld.ID]
	}
	if len(f.consts) == 0 && anchored {
		return nil, nil // iceberg-go reads it
	}
	if !anchored {
		// iceberg-go cannot read a file with none of the columns asked
		// for: read the lowest-id column it holds, and drop it
		best := -1
		for _, fld := range meta.CurrentSchema().Fields() {
			if held[fld.ID] && (best < 0 || fld.ID < best) {
				best = fld.ID
			}
		}
		if best < 0 {
			return nil, fmt.Errorf("data file %s holds none of the table's current columns", t.File.FilePath())
		}
		anchor, _ := meta.CurrentSchema().FindColumnName(best)
		f.cols = append(f.cols, anchor)
	}
	return f, nil
}

// readTasks reads tasks (one file) through alt and yields their batches with
// the constant columns filled; false when yield stopped or failed.
func (f *fileFill) readTasks(ctx context.Context, alt ScanFunc, tasks []table.FileScanTask, yield func(arrow.RecordBatch, error) bool) bool {
	tasks = slices.Clone(tasks)
	for i := range tasks {
		tasks[i].Residual = nil // the alternative scan filters nothing
	}
	// iceberg-go fails to apply an equality delete on a column the file
	// lacks: then the deletes are applied here, after the fill, as the
	// scan's delete index applies them (other deletes are iceberg-go's)
	var filter *deleteFilter
	if f.constantKeys(tasks) {
		idx := newDeleteIndex(f.fs, f.mem, f.schema0, func(names []string, batch int) *table.Scan { return alt(names) })
		if len(tasks) != 1 || !idx.accept(tasks[0]) {
			yield(nil, fmt.Errorf("data file %s lacks a column its partition tuple gives and an equality delete keys on, and its deletes cannot be applied here (deletion vectors with them, or a split file)", tasks[0].File.FilePath()))
			return false
		}
		fd, err := idx.forTask(ctx, tasks[0])
		if err != nil {
			yield(nil, err)
			return false
		}
		filter = &deleteFilter{fd: fd}
		tasks[0].DeleteFiles, tasks[0].EqualityDeleteFiles, tasks[0].DeletionVectorFiles = nil, nil, nil
	}
	if !f.readFilled(ctx, alt, tasks, filter, yield) {
		return false
	}
	if filter != nil && filter.next != tasks[0].File.Count() {
		yield(nil, fmt.Errorf("data file %s: read %d rows, its metadata says %d; deletes cannot be applied by position", tasks[0].File.FilePath(), filter.next, tasks[0].File.Count()))
		return false
	}
	return true
}

// constantKeys reports whether an equality delete of tasks has a key
// column the file lacks (one of f.consts).
func (f *fileFill) constantKeys(tasks []table.FileScanTask) bool {
	for _, t := range tasks {
		for _, d := range t.EqualityDeleteFiles {
			if slices.ContainsFunc(d.EqualityFieldIDs(), func(id int) bool { _, ok := f.consts[id]; return ok }) {
				return true
			}
		}
	}
	return false
}

// readFilled is readTasks's read, with filter (when not nil) applying the
// deletes to each batch filled.
func (f *fileFill) readFilled(ctx context.Context, alt ScanFunc, tasks []table.FileScanTask, filter *deleteFilter, yield func(arrow.RecordBatch, error) bool) bool {
	sc := alt(f.cols)
	defer sc.Close()
	_, seq, err := sc.ReadTasks(ctx, tasks)
	if err != nil {
		yield(nil, err)
		return false
	}
	for b, err := range seq {
		if err != nil {
			yield(nil, err)
			return false
		}
		out, err := f.fill(b)
		b.Release()
		if err == nil && filter != nil {
			out, err = filter.apply(ctx, f.mem, out, false)
		}
		if err == nil && len(f.extra) > 0 {
			out = dropLast(out, len(f.extra))
		}
		if err != nil {
			yield(nil, err)
			return false
		}
		if !yield(out, nil) {
			return false
		}
	}
	return true
}

// layout sets the columns fill makes: schema's (the batches', of f.out),
// then f.extra's.
func (f *fileFill) layout(schema *arrow.Schema) error {
	f.wide = append(slices.Clone(f.out), f.extra...)
	f.fields = slices.Clone(schema.Fields())
	for _, e := range f.extra {
		dt, err := table.TypeToArrowType(e.Type, false, false)
		if err != nil {
			return err
		}
		f.fields = append(f.fields, arrow.Field{Name: e.Name, Type: dt, Nullable: true})
	}
	return nil
}

// fill makes b's batch of f.wide: the columns read by name, the constant
// ones made.
func (f *fileFill) fill(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(b.NumRows())
	fields := slices.Clone(f.fields)
	wide := f.wide
	cols := make([]arrow.Array, len(wide))
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	for i, fld := range wide {
		if v, ok := f.consts[fld.ID]; ok {
			c, err := ConstantArray(f.mem, fields[i].Type, v, n)
			if err != nil {
				release()
				return nil, fmt.Errorf("column %q from the partition value: %w", fld.Name, err)
			}
			cols[i] = c
			continue
		}
		idx := b.Schema().FieldIndices(fld.Name)
		if len(idx) == 0 {
			release()
			return nil, fmt.Errorf("column %q missing from the data read (bug)", fld.Name)
		}
		c := b.Column(idx[0])
		c.Retain()
		cols[i] = c
		if !arrow.TypeEqual(c.DataType(), fields[i].Type) {
			fields[i] = b.Schema().Field(idx[0])
		}
	}
	out := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
	release()
	return out, nil
}

// HasDeletes reports whether delete files apply to task's data file.
func HasDeletes(task table.FileScanTask) bool {
	return len(task.DeleteFiles)+len(task.EqualityDeleteFiles)+len(task.DeletionVectorFiles) > 0
}

// dropLast returns b without its last k columns; it consumes b.
func dropLast(b arrow.RecordBatch, k int) arrow.RecordBatch {
	defer b.Release()
	n := int(b.NumCols()) - k
	return array.NewRecordBatch(arrow.NewSchema(b.Schema().Fields()[:n], nil), b.Columns()[:n], b.NumRows())
}

// ConstantArray is an array of n copies of v, an Iceberg value as
// iceberg-go gives partition values (nil for NULL), of type dt.
func ConstantArray(mem memory.Allocator, dt arrow.DataType, v any, n int) (arrow.Array, error) {
	if v == nil {
		return array.MakeArrayOfNull(mem, dt, n), nil
	}
	if ext, ok := dt.(arrow.ExtensionType); ok {
		// a UUID: its storage, wrapped
		st, err := ConstantArray(mem, ext.StorageType(), v, n)
		if err != nil {
			return nil, err
		}
		defer st.Release()
		return array.NewExtensionArrayWithStorage(ext, st), nil
	}
	bld := array.NewBuilder(mem, dt)
	defer bld.Release()
	bld.Reserve(n)
	ok := true
	switch b := bld.(type) {
	case *array.BooleanBuilder:
		ok = repeat(b, v, n, func(x bool) bool { return x })
	case *array.Int32Builder:
		ok = repeat(b, v, n, func(x int32) int32 { return x })
	case *array.Int64Builder:
		ok = repeat(b, v, n, func(x int64) int64 { return x }) ||
			repeat(b, v, n, func(x int32) int64 { return int64(x) })
	case *array.Float32Builder:
		ok = repeat(b, v, n, func(x float32) float32 { return x })
	case *array.Float64Builder:
		ok = repeat(b, v, n, func(x float64) float64 { return x }) ||
			repeat(b, v, n, func(x float32) float64 { return float64(x) })
	case *array.StringBuilder:
		ok = repeat(b, v, n, func(x string) string { return x })
	case *array.LargeStringBuilder:
		ok = repeat(b, v, n, func(x string) string { return x })
	case *array.BinaryBuilder:
		ok = repeat(b, v, n, func(x []byte) []byte { return x })
	case *array.Date32Builder:
		ok = repeat(b, v, n, func(x iceberg.Date) arrow.Date32 { return arrow.Date32(x) })
	case *array.TimestampBuilder:
		if dt.(*arrow.TimestampType).Unit == arrow.Nanosecond {
			ok = repeat(b, v, n, func(x iceberg.TimestampNano) arrow.Timestamp { return arrow.Timestamp(x) })
		} else {
			ok = repeat(b, v, n, func(x iceberg.Timestamp) arrow.Timestamp { return arrow.Timestamp(x) })
		}
	case *array.Time64Builder:
		ok = repeat(b, v, n, func(x iceberg.Time) arrow.Time64 { return arrow.Time64(x) })
	case *array.Decimal128Builder:
		scale := int(dt.(*arrow.Decimal128Type).Scale)
		switch x := v.(type) {
		case iceberg.DecimalLiteral:
			ok = x.Scale == scale && repeat(b, x.Val, n, func(y decimal128.Num) decimal128.Num { return y })
		case iceberg.Decimal:
			ok = x.Scale == scale && repeat(b, x.Val, n, func(y decimal128.Num) decimal128.Num { return y })
		default:
			ok = false
		}
	case *array.FixedSizeBinaryBuilder:
		x, isBytes := v.([]byte)
		if u, isUUID := v.(uuid.UUID); isUUID {
			x, isBytes = u[:], true
		}
		ok = isBytes && len(x) == dt.(*arrow.FixedSizeBinaryType).ByteWidth && repeat(b, x, n, func(y []byte) []byte { return y })
	default:
		return nil, fmt.Errorf("a partition column of type %s cannot be filled from its partition value", dt)
	}
	if !ok {
		return nil, fmt.Errorf("a partition value %v (%T) cannot be a %s", v, v, dt)
	}
	return bld.NewArray(), nil
}

// repeat appends n copies of v, converted by conv, when v is a T; false
// when it is not.
func repeat[T, A any](b interface{ Append(A) }, v any, n int, conv func(T) A) bool {
	x, ok := v.(T)
	if !ok {
		return false
	}
	a := conv(x)
	for range n {
		b.Append(a)
	}
	return true
}

// TestHookFooterRead, when set (by tests only), is called with the path
// of each file whose footer is read to tell which columns it holds.
var TestHookFooterRead func(path string)

// fileCols is what a data file's footer says of its top-level columns,
// by field id: which it holds, and which hold timestamps in another unit
// than their type's (OtherTimeUnit: INT96, or TIMESTAMP(MILLIS) in a file
// another writer made). iceberg-go's reader compares such a column's Parquet
// statistics with microsecond literals as they are, so a row filter on it
// skips row groups it must read (a millisecond file's
// ts > '2026-01-01 00:10' read no row).
type fileCols struct {
	held   map[int]bool
	stored map[int]string // how each column in another unit is stored ("INT96", "TIMESTAMP(MILLIS)", …)
	// perRow is, for each BYTE_ARRAY column, the most bytes a row of a
	// row group holds in it, by the chunk's uncompressed size (wideRows)
	perRow map[int]float64
}

// chunkBytesPerRow is the most uncompressed bytes per row leaf k's chunk
// holds in a row group of md.
func chunkBytesPerRow(md *metadata.FileMetaData, k int) float64 {
	var most float64
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		if rg.NumRows() <= 0 {
			continue
		}
		if cc, err := rg.ColumnChunk(k); err == nil {
			most = max(most, float64(cc.TotalUncompressedSize())/float64(rg.NumRows()))
		}
	}
	return most
}

// OtherTimeUnit reports whether a Parquet leaf stores a timestamp column
// of sch (by its field id) in another unit than the column's Iceberg
// type: INT96, or a unit other than microseconds for timestamp and
// timestamptz (nanoseconds for their _ns kinds).
func OtherTimeUnit(n schema.Node, sch *iceberg.Schema) bool {
	leaf, ok := n.(*schema.PrimitiveNode)
	return ok && n.FieldID() >= 0 && otherUnit(leaf, int(n.FieldID()), sch)
}

func otherUnit(leaf *schema.PrimitiveNode, id int, sch *iceberg.Schema) bool {
	f, ok := sch.FindFieldByID(id)
	if !ok {
		return false
	}
	want := schema.TimeUnitMicros
	switch f.Type.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType:
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		want = schema.TimeUnitNanos
	default:
		return false
	}
	if leaf.PhysicalType() == parquet.Types.Int96 {
		return true
	}
	ts, ok := leaf.LogicalType().(schema.TimestampLogicalType)
	return ok && ts.TimeUnit() != want
}

// footerCols caches fileCols by file path (data files are never
// rewritten in place).
var footerCols = struct {
	sync.Mutex
	m map[string]*fileCols
}{m: map[string]*fileCols{}}

// fileColumns returns what the footer of the Parquet file at path says of
// its top-level columns: their own field ids, or for a file written
// without them, the ids the table's name mapping gives their names.
func fileColumns(fs iceio.IO, meta table.Metadata, path string) (*fileCols, error) {
	footerCols.Lock()
	fc, ok := footerCols.m[path]
	footerCols.Unlock()
	if ok {
		return fc, nil
	}
	if hook := TestHookFooterRead; hook != nil {
		hook(path)
	}
	f, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	defer pr.Close()
	root := pr.MetaData().Schema.Root()
	fc = &fileCols{held: map[int]bool{}, stored: map[int]string{}, perRow: map[int]float64{}}
	mapping := meta.NameMapping()
	for i := range root.NumFields() {
		n := root.Field(i)
		var ids []int
		if id := int(n.FieldID()); id >= 0 {
			ids = append(ids, id)
		} else {
			for _, mf := range mapping {
				if mf.FieldID != nil && slices.Contains(mf.Names, n.Name()) {
					ids = append(ids, *mf.FieldID)
				}
			}
		}
		if leaf, ok := n.(*schema.PrimitiveNode); ok && leaf.PhysicalType() == parquet.Types.ByteArray && leaf.RepetitionType() != parquet.Repetitions.Repeated {
			if k := pr.MetaData().Schema.ColumnIndexByName(n.Name()); k >= 0 {
				per := chunkBytesPerRow(pr.MetaData(), k)
				for _, id := range ids {
					fc.perRow[id] = per
				}
			}
		}
		for _, id := range ids {
			fc.held[id] = true
			if leaf, ok := n.(*schema.PrimitiveNode); ok && otherUnit(leaf, id, meta.CurrentSchema()) {
				fc.stored[id] = "INT96"
				if ts, ok := leaf.LogicalType().(schema.TimestampLogicalType); ok {
					fc.stored[id] = map[schema.TimeUnitType]string{schema.TimeUnitMillis: "TIMESTAMP(MILLIS)", schema.TimeUnitMicros: "TIMESTAMP(MICROS)", schema.TimeUnitNanos: "TIMESTAMP(NANOS)"}[ts.TimeUnit()]
				}
			}
		}
	}
	footerCols.Lock()
	if len(footerCols.m) >= 1<<14 {
		clear(footerCols.m)
	}
	footerCols.m[path] = fc
	footerCols.Unlock()
	return fc, nil
}
