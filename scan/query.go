package scan

import (
	"context"
	"runtime"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Query is a query's scan of one table: the snapshot it reads, the
// columns, and the pruning filter. It plans the files (with PlanFilter's
// part of the filter) and says how to read them (with ReadFilter's part);
// exec's TableScan is the operator over it.
type Query struct {
	Table  *table.Table
	SnapID int64
	Fields []string
	Filter iceberg.BooleanExpression
}

// SnapshotOpts pins the scan to its snapshot. A scan of the current
// snapshot is a live scan instead, so that it reads with the table's
// current schema: a column added or renamed since the last write is
// visible (iceberg-go reads a pinned snapshot with its own schema).
func (q Query) SnapshotOpts() []table.ScanOption {
	return PinSnapshot(q.Table, q.SnapID)
}

// PinSnapshot is how a scan of tbl reads its snapshot snapID: as a live
// scan (no option) when it is the current snapshot, so that the scan, and
// a row filter bound to it, see the current schema, where a column added
// or renamed since the last write is; else pinned by id, which iceberg-go
// reads with the snapshot's own schema.
func PinSnapshot(tbl *table.Table, snapID int64) []table.ScanOption {
	if cur := tbl.CurrentSnapshot(); cur != nil && cur.SnapshotID == snapID {
		return nil
	}
	return []table.ScanOption{table.WithSnapshotID(snapID)}
}

// Schema is the Iceberg schema the scan reads with: the snapshot's for a
// pinned scan, else the current one.
func (q Query) Schema() *iceberg.Schema {
	schema := q.Table.Metadata().CurrentSchema()
	if snap := q.Table.Metadata().SnapshotByID(q.SnapID); snap != nil && q.SnapshotOpts() != nil && snap.SchemaID != nil {
		for _, sc := range q.Table.Metadata().Schemas() {
			if sc.ID == *snap.SchemaID {
				schema = sc
			}
		}
	}
	return schema
}

// Plan plans the files to read: partition and min/max pruning with
// PlanFilter's part of the filter, and large files split into ranges of
// row groups for the cores to read side by side (SplitForWorkers).
// Reading manifests only.
func (q Query) Plan(ctx context.Context) ([]table.FileScanTask, error) {
	opts := append(q.SnapshotOpts(), table.WithSelectedFields(q.Fields...))
	if pf := PlanFilter(ctx, q.Table, q.Table.Metadata().SnapshotByID(q.SnapID), q.Filter); pf != nil {
		opts = append(opts, table.WithRowFilter(pf))
	}
	sc := q.Table.Scan(opts...)
	defer sc.Close()
	tasks, err := sc.PlanFiles(ctx)
	if err != nil {
		return nil, err
	}
	return SplitForWorkers(tasks, runtime.GOMAXPROCS(0)), nil
}

// ReadScan is the iceberg-go scan that reads tasks: the snapshot, the
// columns (plus, when some file holds none of them, an anchor column, see
// AnchorField; read returns the columns read), and ReadFilter's part of
// the filter. It also returns the tasks with their residuals dropped: a
// residual is derived from the whole filter, and the read scan's own safe
// filter replaces it. The caller closes the scan.
func (q Query) ReadScan(tasks []table.FileScanTask) (sc *table.Scan, read []string, out []table.FileScanTask) {
	out = slices.Clone(tasks)
	for i := range out {
		out[i].Residual = nil
	}
	opts := q.readOpts()
	// INVARIANT: the planner selects at least one field; iceberg-go reads
	// every column when none is named.
	read = q.Fields
	if anchor, ok := q.AnchorField(out); ok {
		// Some file holds none of the selected columns (they were added
		// by ALTER TABLE after it was written). iceberg-go cannot read a
		// file with no selected column, so read one more column that
		// every such file has; the caller drops it again.
		read = append(read[:len(read):len(read)], anchor)
	}
	return cancellable(q.Table).Scan(append(append(opts, BatchOpts(q.Table)...), table.WithSelectedFields(read...))...), read, out
}

// ReadScanRows is ReadScan's scan of the columns read, in batches of rows
// rows (ReadSpec.ScanRows).
func (q Query) ReadScanRows(read []string, rows int) *table.Scan {
	return cancellable(q.Table).Scan(append(q.readOpts(), table.WithArrowBatchSize(rows), table.WithSelectedFields(read...))...)
}

// readOpts are the snapshot and the row filter (ReadFilter's part of the
// filter) a read scan reads with.
func (q Query) readOpts() []table.ScanOption {
	opts := q.SnapshotOpts()
	if rf := ReadFilter(q.Filter, q.Schema()); rf != nil {
		opts = append(opts, table.WithRowFilter(rf))
	}
	return opts
}

// readBatchRows is the batch size a query reads with when its table sets
// none (read.parquet.batch-size): ReadBatchRows of iceberg-go's default,
// 1<<17.
var readBatchRows = ReadBatchRows(1 << 17)

// ReadBatchRows is the batch size to ask arrow-go's Parquet readers for,
// for batches of about n rows. arrow-go reserves a batch's values and
// levels at the next power of two above the rows asked for, so a power of
// two took, zeroed and gave back buffers twice the size it filled
// (BENCHMARKS.md, session 22); one row fewer does not. Small batches
// (tests') are left as asked.
func ReadBatchRows(n int) int {
	if n >= 1024 && n&(n-1) == 0 {
		return n - 1
	}
	return n
}

// BatchOpts is the batch size option of a query's scan of tbl: none when
// the table sets its own.
func BatchOpts(tbl *table.Table) []table.ScanOption {
	if _, ok := tbl.Properties()[table.ParquetBatchSizeKey]; ok {
		return nil
	}
	return []table.ScanOption{table.WithArrowBatchSize(readBatchRows)}
}

// AnchorField returns a column to read in addition to the selected ones
// when some planned file contains none of them, which happens for columns
// added after the file was written. It is the lowest-id column of the
// schema that every such file contains, judged by the files' column
// statistics; ok is false when no anchor is needed (or none can be found,
// in which case iceberg-go's own error stands).
func (q Query) AnchorField(tasks []table.FileScanTask) (string, bool) {
	schema := q.Schema()
	wanted := make([]int, 0, len(q.Fields))
	for _, name := range q.Fields {
		if f, ok := schema.FindFieldByName(name); ok {
			wanted = append(wanted, f.ID)
		}
	}
	var needy []map[int]int64
	for _, t := range tasks {
		present := t.File.ValueCounts()
		if len(present) == 0 {
			continue // no statistics: nothing to judge by
		}
		found := false
		for _, id := range wanted {
			if _, ok := present[id]; ok {
				found = true
				break
			}
		}
		if !found {
			needy = append(needy, present)
		}
	}
	if len(needy) == 0 {
		return "", false
	}
	best, bestID := "", -1
	for _, f := range schema.Fields() {
		inAll := true
		for _, present := range needy {
			if _, ok := present[f.ID]; !ok {
				inAll = false
				break
			}
		}
		if inAll && (bestID < 0 || f.ID < bestID) {
			best, bestID = f.Name, f.ID
		}
	}
	return best, bestID >= 0
}

// DistinctFiles counts the data files of tasks (a file planned as several
// splits counts once).
func DistinctFiles(tasks []table.FileScanTask) int64 {
	seen := make(map[string]struct{}, len(tasks))
	for _, t := range tasks {
		seen[t.File.FilePath()] = struct{}{}
	}
	return int64(len(seen))
}

// DistinctRows is the record count of the distinct data files of tasks
// (a file split into several tasks counts once).
func DistinctRows(tasks []table.FileScanTask) int64 {
	seen := make(map[string]bool, len(tasks))
	var n int64
	for _, t := range tasks {
		if !seen[t.File.FilePath()] {
			seen[t.File.FilePath()] = true
			n += t.File.Count()
		}
	}
	return n
}

// SnapshotDataFiles is the number of data files in snapshot snapID of
// tbl, from the snapshot summary; -1 when the summary does not say.
func SnapshotDataFiles(tbl *table.Table, snapID int64) int64 {
	snap := tbl.Metadata().SnapshotByID(snapID)
	if snap == nil || snap.Summary == nil {
		return -1
	}
	v, ok := snap.Summary.Properties["total-data-files"]
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return -1
	}
	return n
}
