package mergeinto

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Row lineage (Iceberg v3). Every row of a format-version 3 table has a
// _row_id, unique in the table and kept for the row's life, and a
// _last_updated_sequence_number, the data sequence number of the commit
// that last changed it. A data file leaves both null when they follow
// from the file (first_row_id + position, the file's data sequence
// number); a rewrite must write them explicitly, or every row it copies
// would take a new identity:
//
//   - a row copied unchanged keeps both values;
//   - an updated row keeps its _row_id and takes a null sequence number,
//     which the new file's data sequence number (this commit's) fills;
//   - an inserted row has both null: the new file's first_row_id gives it
//     a fresh id.
//
// The merger carries the two values as two trailing columns after the
// target's (LineageColumns) from the read to the writer: target batches
// are laid out as lineage.schema, the writer writes that schema, and
// copy-on-write stages the new files with explicit first_row_ids
// (assignFirstRowIDs), which iceberg-go requires of a v3 rewrite.
type lineage struct {
	// schema is the target's columns, then _row_id and
	// _last_updated_sequence_number, with Iceberg field ids.
	schema *arrow.Schema
	// file is the table's schema with the lineage fields, what the
	// writer writes (table.WithPreserveRowLineage).
	file *iceberg.Schema
	nt   int // the target's column count
}

// LineageColumns are the names of the two row-lineage columns, in the
// order the merger carries them after a target row.
var LineageColumns = []string{iceberg.RowIDColumnName, iceberg.LastUpdatedSequenceNumberColumnName}

// TracksLineage reports whether tbl's rows carry row lineage: format
// version 3 or later.
func TracksLineage(tbl *table.Table) bool { return tbl.Metadata().Version() >= 3 }

// newLineage is the lineage layout for target rows in the target Arrow
// layout, or nil when tbl keeps no lineage.
func newLineage(tbl *table.Table, target *arrow.Schema, what string) (*lineage, error) {
	if !TracksLineage(tbl) {
		return nil, nil
	}
	file := iceberg.SchemaWithRowLineage(tbl.Metadata().CurrentSchema())
	ws, err := table.SchemaToArrowSchemaWithOptions(file, table.ArrowSchemaOptions{IncludeFieldIDs: true, TableProperties: tbl.Metadata().Properties()})
	if err != nil {
		return nil, fmt.Errorf("%s: row lineage: %w", what, err)
	}
	nt := target.NumFields()
	if ws.NumFields() != nt+2 {
		return nil, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: row lineage: the table has %d columns, the write %d (binder bug)", what, ws.NumFields()-2, nt)}
	}
	fields := ws.Fields()
	for i, f := range target.Fields() {
		if fields[i].Name != f.Name || !arrow.TypeEqual(fields[i].Type, f.Type) {
			return nil, &Error{State: StateInternal, Msg: fmt.Sprintf("%s: row lineage: column %d is %s %s in the table, %s %s in the write (binder bug)", what, i, fields[i].Name, fields[i].Type, f.Name, f.Type)}
		}
		// The write's nullability is what checks run against.
		fields[i].Nullable = f.Nullable
	}
	for i := nt; i < nt+2; i++ {
		fields[i].Nullable = true
	}
	return &lineage{schema: arrow.NewSchema(fields, nil), file: file, nt: nt}, nil
}

// writeOptions are the writer options that write the lineage columns.
func (l *lineage) writeOptions() []table.WriteRecordOption {
	if l == nil {
		return nil
	}
	return []table.WriteRecordOption{table.WithPreserveRowLineage(l.file)}
}

// attach returns b (target layout, n rows, released) with the lineage
// columns rowID and seq appended (released too); a nil one is all NULL.
func (l *lineage) attach(mem memory.Allocator, b arrow.RecordBatch, rowID, seq arrow.Array) arrow.RecordBatch {
	n := int(b.NumRows())
	cols := make([]arrow.Array, 0, l.nt+2)
	for _, c := range b.Columns()[:l.nt] {
		c.Retain()
		cols = append(cols, c)
	}
	b.Release()
	for _, c := range []arrow.Array{rowID, seq} {
		if c == nil {
			c = array.MakeArrayOfNull(mem, arrow.PrimitiveTypes.Int64, n)
		}
		cols = append(cols, c)
	}
	return newBatch(l.schema, cols, int64(n))
}

// narrow is b's target columns alone, as the target layout (b is not
// released).
func (l *lineage) narrow(target *arrow.Schema, b arrow.RecordBatch) arrow.RecordBatch {
	cols := make([]arrow.Array, l.nt)
	for i := range cols {
		cols[i] = b.Column(i)
		cols[i].Retain()
	}
	return newBatch(target, cols, b.NumRows())
}

// updatedIDs is the _row_id column of wide batch b at rows idx: what
// the updated rows keep (their sequence number is left NULL, for the
// commit's to fill). b is not released.
func (l *lineage) updatedIDs(ctx context.Context, b arrow.RecordBatch, idx []int32) (arrow.Array, error) {
	ids, err := takeCols(ctx, []arrow.Array{b.Column(l.nt)}, idx)
	if err != nil {
		return nil, err
	}
	return ids[0], nil
}

// clearSeq returns seq with the sequence number NULL at the rows where
// hit is set: those rows were updated.
func clearSeq(mem memory.Allocator, seq arrow.Array, hit []int32) arrow.Array {
	in := seq.(*array.Int64)
	bld := array.NewInt64Builder(mem)
	defer bld.Release()
	bld.Reserve(in.Len())
	h := 0
	for r := 0; r < in.Len(); r++ {
		if h < len(hit) && int(hit[h]) == r {
			bld.AppendNull()
			h++
			continue
		}
		if in.IsNull(r) {
			bld.AppendNull()
		} else {
			bld.UnsafeAppend(in.Value(r))
		}
	}
	return bld.NewArray()
}

// assignFirstRowIDs gives the data files a copy-on-write commit adds
// their first_row_id, which iceberg-go requires on every file a v3
// rewrite adds: consecutive ranges from the table's next-row-id as of
// txn, in order. The snapshot then advances next-row-id past all of them
// (its added rows count every added file's rows), so no id is reused. A
// restage on a newer head assigns them again from that head's
// next-row-id.
func assignFirstRowIDs(txn *table.Transaction, files []iceberg.DataFile) ([]iceberg.DataFile, error) {
	staged, err := txn.StagedTable()
	if err != nil {
		return nil, err
	}
	meta := staged.Metadata()
	if meta.Version() < 3 {
		return files, nil
	}
	next := meta.NextRowID()
	out := make([]iceberg.DataFile, len(files))
	for i, df := range files {
		spec := meta.PartitionSpecByID(int(df.SpecID()))
		if spec == nil {
			return nil, fmt.Errorf("data file %s: partition spec %d not found", df.FilePath(), df.SpecID())
		}
		if out[i], err = withFirstRowID(df, *spec, meta.CurrentSchema(), next); err != nil {
			return nil, err
		}
		next += df.Count()
	}
	return out, nil
}

// withFirstRowID is df with first_row_id id, everything else the same.
func withFirstRowID(df iceberg.DataFile, spec iceberg.PartitionSpec, schema *iceberg.Schema, id int64) (iceberg.DataFile, error) {
	return rebuildDataFile(df, spec, schema, df.Partition(), func(b *iceberg.DataFileBuilder) {
		b.FirstRowID(id)
		if s := df.SortOrderID(); s != nil {
			b.SortOrderID(*s)
		}
	})
}

// rebuildDataFile is df's entry (path, format, counts, metrics, split
// offsets, key metadata) in spec with partition, then edited by edit.
func rebuildDataFile(df iceberg.DataFile, spec iceberg.PartitionSpec, schema *iceberg.Schema, partition map[int]any, edit func(*iceberg.DataFileBuilder)) (iceberg.DataFile, error) {
	return rebuildAs(df.ContentType(), df, spec, schema, partition, edit)
}

// rebuildAs is rebuildDataFile with the entry's content set to content.
func rebuildAs(content iceberg.ManifestEntryContent, df iceberg.DataFile, spec iceberg.PartitionSpec, schema *iceberg.Schema, partition map[int]any, edit func(*iceberg.DataFileBuilder)) (iceberg.DataFile, error) {
	logical := map[int]string{}
	for _, f := range spec.Fields() {
		src, ok := schema.FindFieldByID(f.SourceID())
		if !ok {
			continue
		}
		switch f.Transform.ResultType(src.Type).(type) {
		case iceberg.DateType:
			logical[f.FieldID] = "date"
		case iceberg.TimeType:
			logical[f.FieldID] = "time-micros"
		case iceberg.TimestampType, iceberg.TimestampTzType:
			logical[f.FieldID] = "timestamp-micros"
		case iceberg.DecimalType:
			logical[f.FieldID] = "decimal"
		case iceberg.UUIDType:
			logical[f.FieldID] = "uuid"
		}
	}
	b, err := iceberg.NewDataFileBuilder(spec, content, df.FilePath(), df.FileFormat(), partition, logical, nil, df.Count(), df.FileSizeBytes())
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", df.FilePath(), err)
	}
	b.ColumnSizes(df.ColumnSizes()).ValueCounts(df.ValueCounts()).NullValueCounts(df.NullValueCounts()).
		NaNValueCounts(df.NaNValueCounts()).LowerBoundValues(df.LowerBoundValues()).UpperBoundValues(df.UpperBoundValues()).
		SplitOffsets(df.SplitOffsets())
	if k := df.KeyMetadata(); k != nil {
		b.KeyMetadata(k)
	}
	edit(b)
	return b.Build(), nil
}
