package lake

import (
	"context"
	"fmt"
	"io"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	skscan "github.com/skadedb/skade/scan"
)

// rewriteSorted is Transaction.RewriteDataFiles for a table with a
// declared sort order: each group's rows, read with their deletes
// applied, are sorted by the order before they are written, so that the
// files compaction writes each hold a narrow range of the keys (the keys
// an INSERT sorts by, plan.WriteSortKeys). The sort spills past budget.
// Everything else is iceberg-go's: ExecuteCompactionGroup's read and
// write options, row lineage kept when every file of the group has it,
// and the rewrite staged with NewRewrite and ApplyResult.
func rewriteSorted(ctx context.Context, txn *table.Transaction, tbl *table.Table, groups []table.CompactionTaskGroup, opts table.RewriteDataFilesOptions, target int64, budget *exec.Budget) (*table.RewriteResult, error) {
	result := &table.RewriteResult{}
	rewrite := txn.NewRewrite(opts.SnapshotProps)
	staged := map[string]struct{}{}
	for _, group := range groups {
		if err := ctx.Err(); err != nil {
			return result, err
		}
		if len(group.Tasks) == 0 {
			continue
		}
		gr, err := sortedGroup(ctx, tbl, group, target, budget)
		if err != nil {
			return result, err
		}
		rewrite.ApplyResult(gr)
		result.RewrittenGroups++
		result.AddedDataFiles += len(gr.NewDataFiles)
		result.RemovedDataFiles += len(gr.OldDataFiles)
		result.RemovedPositionDeleteFiles += len(gr.SafePosDeletes)
		result.RemovedDeletionVectorFiles += len(gr.SafeDeletionVectors)
		result.BytesBefore += gr.BytesBefore
		result.BytesAfter += gr.BytesAfter
		for _, df := range gr.SafePosDeletes {
			staged[df.FilePath()] = struct{}{}
		}
		for _, df := range gr.SafeDeletionVectors {
			staged[df.FilePath()] = struct{}{}
		}
	}
	if result.RewrittenGroups == 0 {
		return result, nil
	}
	for _, df := range opts.ExtraDeleteFilesToRemove {
		if _, ok := staged[df.FilePath()]; ok {
			continue
		}
		staged[df.FilePath()] = struct{}{}
		rewrite.DeleteFile(df)
		switch {
		case df.ContentType() == iceberg.EntryContentEqDeletes:
			result.RemovedEqualityDeleteFiles++
		case table.IsDeletionVector(df):
			result.RemovedDeletionVectorFiles++
		default:
			result.RemovedPositionDeleteFiles++
		}
	}
	if err := rewrite.Commit(ctx); err != nil {
		return result, fmt.Errorf("commit compaction: %w", err)
	}
	return result, nil
}

// sortedGroup is ExecuteCompactionGroup with a sort between the read and
// the write.
func sortedGroup(ctx context.Context, tbl *table.Table, group table.CompactionTaskGroup, target int64, budget *exec.Budget) (table.CompactionGroupResult, error) {
	lineage := tbl.Metadata().Version() >= 3
	for _, task := range group.Tasks {
		lineage = lineage && task.FirstRowID != nil
	}
	var scanOpts []table.ScanOption
	if lineage {
		scanOpts = append(scanOpts, table.WithRowLineage())
	}
	alt := func(fields []string) *table.Scan {
		return tbl.Scan(table.WithSelectedFields(fields...))
	}
	schema, records, err := skscan.ReadTasksSchema(ctx, tbl, tbl.Scan(scanOpts...), alt, group.Tasks)
	if err != nil {
		return table.CompactionGroupResult{}, fmt.Errorf("read tasks for compaction group %q: %w", group.PartitionKey, err)
	}
	writeOpts := []table.WriteRecordOption{table.WithClusteredWrite()}
	if target > 0 {
		writeOpts = append(writeOpts, table.WithTargetFileSize(target))
	}
	if lineage {
		projected := iceberg.SchemaWithRowLineage(tbl.Schema())
		schema, err = table.SchemaToArrowSchemaWithOptions(projected, table.ArrowSchemaOptions{IncludeFieldIDs: true, TableProperties: tbl.Metadata().Properties()})
		if err != nil {
			return table.CompactionGroupResult{}, err
		}
		writeOpts = append(writeOpts, table.WithPreserveRowLineage(projected))
	}
	keys := mergeinto.WriteSortKeys(tbl.Metadata(), schema)
	if len(keys) > 0 {
		next, stop := iter.Pull2(records)
		defer stop()
		src := exec.NewReaderSource("compaction group", schema, func(context.Context) (array.RecordReader, error) {
			return &pullReader{schema: schema, next: next}, nil
		})
		op, err := exec.NewSort(src, keys, exec.SortOptions{Budget: budget})
		if err != nil {
			return table.CompactionGroupResult{}, err
		}
		defer op.Close()
		if err := op.Open(ctx); err != nil {
			return table.CompactionGroupResult{}, err
		}
		records = func(yield func(arrow.RecordBatch, error) bool) {
			for {
				b, err := op.Next(ctx)
				if err == io.EOF {
					return
				}
				if !yield(b, err) || err != nil {
					return
				}
			}
		}
	}
	var newFiles []iceberg.DataFile
	var bytesAfter int64
	for df, err := range table.WriteRecords(ctx, tbl, schema, skscan.DetachingSeq(tbl.Metadata(), records), writeOpts...) {
		if err != nil {
			return table.CompactionGroupResult{}, fmt.Errorf("write compacted files for group %q: %w", group.PartitionKey, err)
		}
		newFiles = append(newFiles, df)
		bytesAfter += df.FileSizeBytes()
	}
	oldFiles := make([]iceberg.DataFile, 0, len(group.Tasks))
	for _, task := range group.Tasks {
		oldFiles = append(oldFiles, task.File)
	}
	return table.CompactionGroupResult{
		PartitionKey:        group.PartitionKey,
		OldDataFiles:        oldFiles,
		NewDataFiles:        newFiles,
		SafePosDeletes:      table.CollectSafePositionDeletes(group.Tasks),
		SafeDeletionVectors: table.CollectSafeDeletionVectors(group.Tasks),
		BytesBefore:         group.TotalSizeBytes,
		BytesAfter:          bytesAfter,
	}, nil
}

// pullReader is an array.RecordReader over a pulled batch iterator.
type pullReader struct {
	schema *arrow.Schema
	next   func() (arrow.RecordBatch, error, bool)
	cur    arrow.RecordBatch
	err    error
}

// Retain is a no-op: the one ReaderSource that holds the reader releases
// it once, at Close.
func (r *pullReader) Retain()               {}
func (r *pullReader) Release()              { r.release() }
func (r *pullReader) Schema() *arrow.Schema { return r.schema }
func (r *pullReader) Err() error            { return r.err }
func (r *pullReader) Record() arrow.RecordBatch {
	return r.cur
}
func (r *pullReader) RecordBatch() arrow.RecordBatch { return r.cur }

func (r *pullReader) release() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

func (r *pullReader) Next() bool {
	r.release()
	if r.err != nil {
		return false
	}
	b, err, ok := r.next()
	if !ok {
		return false
	}
	if err != nil {
		r.err = err
		return false
	}
	r.cur = b
	return true
}
