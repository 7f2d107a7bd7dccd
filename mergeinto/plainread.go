package mergeinto

import (
	"context"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/scan"
)

// Plain reads. Every MERGE reads the key columns of each candidate file:
// the probe of a copy-on-write file read key columns first (probeKeys),
// and the whole read of a merge-on-read MERGE, which needs no more than
// the keys and the columns its clauses read (readColumns). A file whose
// columns read are fixed-width in PLAIN pages, or strings in PLAIN or
// dictionary-encoded pages, without NULLs, is read page by page
// (scan.ReadPlain) rather than through iceberg-go's scan; one whose
// deletes are position delete files alone too, with the deleted
// positions dropped as a query's scan drops them (scan.ReadPlainDeleted).
// Only
// the merge's own scans come here (readScan, keyScan, restScan): they
// have no row filter and no limit, which ReadPlain requires.

// plainRead returns the batches of tasks (one task, a whole file) read
// page by page through sc, one of the merge's own scans, with meta the
// file's footer when the caller holds it; nil when the file does not
// qualify, and the caller reads it through the scan.
func (m *merger) plainRead(ctx context.Context, sc *table.Scan, tasks []table.FileScanTask, meta *metadata.FileMetaData) iter.Seq2[arrow.RecordBatch, error] {
	if len(tasks) != 1 || sc == nil || sc != m.readScan && sc != m.keyScan && sc != m.restScan {
		return nil
	}
	proj, err := sc.Projection()
	if err != nil {
		return nil
	}
	fsys, err := m.spec.Target.FS(ctx)
	if err != nil {
		return nil
	}
	if scan.HasDeletes(tasks[0]) {
		return scan.ReadPlainDeleted(ctx, fsys, tasks[0], meta, proj, scan.ReadBatchRows(m.opts.BatchSize), scan.ReadBuffers)
	}
	return scan.ReadPlain(ctx, fsys, tasks[0], meta, proj, scan.ReadBatchRows(m.opts.BatchSize), scan.ReadBuffers)
}
