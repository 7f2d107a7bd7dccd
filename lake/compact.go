package lake

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	skscan "github.com/skadedb/skade/scan"
	"github.com/skadedb/skade/snapshot"
)

// CompactOptions configures Compact. The zero value uses the table's
// write.target-file-size-bytes.
type CompactOptions struct {
	// TargetFileSizeBytes is the size of the files compaction writes.
	// Files under three quarters of it are small and get rewritten.
	TargetFileSizeBytes int64
}

// CompactResult reports what Compact did.
type CompactResult struct {
	RewrittenDataFiles int   // data files replaced
	AddedDataFiles     int   // data files written
	RemovedDeleteFiles int   // position and equality delete files removed
	BytesBefore        int64 // size of the replaced data files
	BytesAfter         int64 // size of the written data files
	RewrittenManifests int   // manifests merged away
	AddedManifests     int   // manifests written by the merge
	// MislabeledFiles counts the rewritten data files whose partition
	// tuple disagreed with their rows (see mislabeled).
	MislabeledFiles int
}

// MislabeledNote is what a report of the compaction adds about
// MislabeledFiles: nothing when there were none.
func (r CompactResult) MislabeledNote() string {
	if r.MislabeledFiles == 0 {
		return ""
	}
	return fmt.Sprintf("; %d of the data files had a partition tuple their rows disagree with, and now have their rows' own", r.MislabeledFiles)
}

// Compact rewrites small data files, every data file that carries
// deletes, and every data file whose partition tuple disagrees with its
// rows (which writes before session 22's fix could record for a table
// partitioned on a string), into files of the target size, with the deletes applied; it
// removes the delete files that no longer apply to any data file, merges
// manifests, and commits all of it at once. Contents are unchanged. The
// replaced files stay on disk for time travel until ExpireSnapshots
// removes the snapshots that reach them.
//
// The commit holds two snapshots: the rewrite (operation "replace") and,
// when manifests can be merged, the manifest rewrite. Both land in one
// atomic catalog commit, so no reader sees one without the other.
//
// A table with nothing to compact is returned as is, with no new snapshot.
//
// Compaction never makes a writer fail: a MERGE, UPDATE or DELETE that
// loses the commit race to it is restaged or run again (docs/merge.md,
// "Concurrent writers"). The other way round, a writer that commits while
// compaction runs makes compaction's commit fail; Compact then plans and
// runs again on the new head, up to the table's commit.retry.num-retries
// times with its backoff, and returns the conflict only after that.
func (t *Table) Compact(ctx context.Context, opts CompactOptions) (*Table, CompactResult, error) {
	props := t.tbl.Metadata().Properties()
	retries := props.GetInt(table.CommitNumRetriesKey, snapshot.CommitRetries)
	policy := snapshot.RetryPolicyOf(props, uint64(time.Now().UnixNano()))
	cur := t
	for attempt := 0; ; attempt++ {
		out, res, err := cur.compactOnce(ctx, opts)
		if err == nil || !errors.Is(err, ErrCommitConflict) || attempt >= retries {
			if err != nil && attempt > 0 {
				err = fmt.Errorf("after %d retries: %w", attempt, err)
			}
			return out, res, err
		}
		if serr := snapshot.Sleep(ctx, policy.Wait(attempt)); serr != nil {
			return nil, CompactResult{}, errors.Join(err, serr)
		}
		if cur, err = cur.Refresh(ctx); err != nil {
			return nil, CompactResult{}, err
		}
	}
}

// testHookCompactStaged, when set, runs after compaction has staged its
// change and before it commits; tests race writers with it.
var testHookCompactStaged func()

func (t *Table) compactOnce(ctx context.Context, opts CompactOptions) (*Table, CompactResult, error) {
	var res CompactResult
	if err := t.checkWritable(); err != nil {
		return nil, res, err
	}
	if opts.TargetFileSizeBytes < 0 {
		return nil, res, &sentinelError{ErrInvalidArgument, fmt.Errorf("compact %s: target file size %d is negative; give a size in bytes, or 0 for the table's default", t.Name(), opts.TargetFileSizeBytes)}
	}
	if t.snap == nil {
		return t, res, nil
	}
	meta := t.tbl.Metadata()
	target := opts.TargetFileSizeBytes
	if target == 0 {
		target = int64(meta.Properties().GetInt(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault))
	}
	cfg := compaction.Config{
		TargetFileSizeBytes: target,
		MinFileSizeBytes:    target * 3 / 4,
		MaxFileSizeBytes:    target * 9 / 5,
		MinInputFiles:       1,
		// INVARIANT: every data file carrying a delete is rewritten. A
		// position delete that table.RewriteDataFiles expunges with one
		// group must not also apply to a file left in place, and a
		// compacted table must carry no delete files.
		DeleteFileThreshold: 1,
		PackingLookback:     compaction.DefaultPackingLookback,
	}

	scan := t.tbl.Scan(table.WithSnapshotID(t.snap.SnapshotID))
	// whole files: a file planned as several ranges could otherwise be
	// removed with only some of its ranges rewritten
	tasks, err := skscan.PlanWholeFiles(ctx, scan)
	scan.Close()
	if err != nil {
		return nil, res, translate(fmt.Errorf("compact %s: planning: %w", t.Name(), err))
	}
	plan, err := cfg.PlanCompaction(tasks)
	if err != nil {
		return nil, res, fmt.Errorf("compact %s: %w", t.Name(), err)
	}
	var groups []table.CompactionTaskGroup
	rewritten := map[string]struct{}{}
	reads := map[string]int64{} // the files to rewrite and their rows, for Progress
	cur := int32(meta.DefaultPartitionSpec())
	sorted := !meta.SortOrder().IsUnsorted()
	planned := plan.Groups
	if sorted {
		// sorted: one group per partition, so that its files are sorted
		// as a whole and not per size bin (which would leave every bin
		// spanning the whole key range)
		planned = mergeByPartition(planned)
	}
	for _, g := range planned {
		// A lone small file with no deletes in the current spec would be
		// rewritten into the same file again: skip it, so that compacting
		// twice is a no-op.
		if len(g.Tasks) == 1 && g.DeleteFileCount == 0 && g.Tasks[0].File.SpecID() == cur {
			continue
		}
		groups = append(groups, table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes})
		for _, task := range g.Tasks {
			rewritten[task.File.FilePath()] = struct{}{}
			reads[task.File.FilePath()] = task.File.Count()
		}
	}
	// Files of an older partition spec are rewritten into the current one
	// whatever their size (after ALTER TABLE … PARTITION FIELD), so that a
	// compacted table has one spec and equality deletes reach every row.
	old := table.CompactionTaskGroup{PartitionKey: "older partition specs"}
	for _, task := range tasks {
		if _, done := rewritten[task.File.FilePath()]; !done && task.File.SpecID() != cur {
			old.Tasks = append(old.Tasks, task)
			old.TotalSizeBytes += task.File.FileSizeBytes()
			rewritten[task.File.FilePath()] = struct{}{}
			reads[task.File.FilePath()] = task.File.Count()
		}
	}
	if len(old.Tasks) > 0 {
		groups = append(groups, old)
	}
	// A file whose partition tuple disagrees with its rows (mislabeled)
	// is rewritten whatever its size, alone: its rows are of one
	// partition, which the rewrite takes from them.
	for _, task := range tasks {
		if _, done := rewritten[task.File.FilePath()]; !done && mislabeled(meta, task.File) {
			groups = append(groups, table.CompactionTaskGroup{PartitionKey: "mislabeled " + task.File.FilePath(), Tasks: []table.FileScanTask{task}, TotalSizeBytes: task.File.FileSizeBytes()})
			rewritten[task.File.FilePath()] = struct{}{}
			reads[task.File.FilePath()] = task.File.Count()
			res.MislabeledFiles++
		}
	}

	fsys, err := t.tbl.FS(ctx)
	if err != nil {
		return nil, res, fmt.Errorf("compact %s: %w", t.Name(), err)
	}
	// iceberg-go expunges only the position deletes attached to rewritten
	// tasks; dead equality deletes, and deletes that apply to no live data
	// file (a copy-on-write rewrite removed their file), must be named.
	dead, err := deadDeleteFiles(fsys, t.snap, tasks, rewritten)
	if err != nil {
		return nil, res, fmt.Errorf("compact %s: finding dead delete files: %w", t.Name(), err)
	}
	if len(groups) == 0 {
		if len(dead) == 0 {
			return t, res, nil
		}
		// No data file to rewrite, only delete files that apply to nothing.
		props := iceberg.Properties{"skade.operation": "compact"}
		out, err := t.commitCompaction(ctx, nil /* reads */, func(txn *table.Transaction) error {
			return txn.ReplaceFiles(ctx, nil, nil, dead, props)
		})
		if err != nil {
			return nil, CompactResult{}, err
		}
		res.RemovedDeleteFiles = len(dead)
		return out, res, nil
	}

	// iceberg-go's rewrite reads a file lacking a partition column as
	// NULLs (scan.ReadTasks): such groups are read by skade's reader and
	// written as a sorted table's are (with no sort when none is declared)
	lacking := false
	for _, g := range groups {
		for _, task := range g.Tasks {
			l, err := skscan.LacksPartitionColumn(ctx, t.tbl, task)
			if err != nil {
				return nil, res, fmt.Errorf("compact %s: %w", t.Name(), err)
			}
			lacking = lacking || l
		}
	}
	props := iceberg.Properties{"skade.operation": "compact"}
	out, err := t.commitCompaction(ctx, reads, func(txn *table.Transaction) error {
		ropts := table.RewriteDataFilesOptions{
			SnapshotProps:            props,
			ExtraDeleteFilesToRemove: dead,
			GroupOptions:             []table.CompactionGroupOption{table.WithCompactionTargetFileSize(target)},
		}
		var r *table.RewriteResult
		var err error
		if meta.SortOrder().IsUnsorted() && !lacking {
			r, err = txn.RewriteDataFiles(ctx, groups, ropts)
		} else {
			// a declared sort order: each group is written sorted, through
			// the transaction's table, whose IO tracks what it writes
			st, serr := txn.StagedTable()
			if serr != nil {
				return serr
			}
			r, err = rewriteSorted(ctx, txn, st.Table, groups, ropts, target, exec.NewBudget(t.lk.opts.memoryLimit))
		}
		if err != nil {
			return err
		}
		if err := checkCompaction(ctx, t, txn, groups); err != nil {
			return err
		}
		res.RewrittenDataFiles = r.RemovedDataFiles
		res.AddedDataFiles = r.AddedDataFiles
		res.RemovedDeleteFiles = r.RemovedPositionDeleteFiles + r.RemovedEqualityDeleteFiles + r.RemovedDeletionVectorFiles
		res.BytesBefore, res.BytesAfter = r.BytesBefore, r.BytesAfter
		m, err := txn.RewriteManifests(ctx)
		if err != nil {
			return fmt.Errorf("rewriting manifests: %w", err)
		}
		res.RewrittenManifests, res.AddedManifests = len(m.RewrittenManifests), len(m.AddedManifests)
		if hook := testHookCompactStaged; hook != nil {
			hook()
		}
		return nil
	})
	if err != nil {
		return nil, CompactResult{}, err
	}
	return out, res, nil
}

// commitCompaction is commitWrite for a transaction that stages two
// snapshots (the rewrite and the manifest merge). commitWrite's stray
// removal keeps only the head snapshot's manifest list, which would
// delete the first snapshot's. The commit asserts the planned snapshot is
// still the head, so a successful commit had no retried attempt and left
// no strays; a failed one removes everything it wrote.
//
// The data files in reads (path to row count) are reported to ctx's
// Progress as iceberg-go reads them.
func (t *Table) commitCompaction(ctx context.Context, reads map[string]int64, stage func(*table.Transaction) error) (*Table, error) {
	committed, err := snapshot.Commit(ctx, t.lk.cat, t.tbl, "compact "+t.Name(), snapshot.CommitOptions{
		Assert:     true,
		KeepStrays: true,
		IO: func(fsys snapshot.IdempotentRemove) iceio.IO {
			return newProgressIO(fsys, exec.ProgressFrom(ctx), reads)
		},
	}, stage, func(ctx context.Context) (*table.Table, error) { return t.lk.load(ctx, t.id) })
	if err != nil {
		return nil, translate(err)
	}
	return t.lk.newTable(t.id, committed, committed.CurrentSnapshot()), nil
}

// deadDeleteFiles lists the live delete files of snap that no data file
// left in place needs: scan planning attaches to each data file every
// delete file that applies to it, so a delete file attached to no
// surviving task applies to nothing once the rewritten files are gone
// (their replacements have the deletes applied and a newer sequence
// number, which no existing delete applies to).
func deadDeleteFiles(fsys iceio.IO, snap *table.Snapshot, tasks []table.FileScanTask, rewritten map[string]struct{}) ([]iceberg.DataFile, error) {
	needed := map[string]bool{}
	for _, task := range tasks {
		if _, ok := rewritten[task.File.FilePath()]; ok {
			continue
		}
		for _, group := range [][]iceberg.DataFile{task.DeleteFiles, task.EqualityDeleteFiles, task.DeletionVectorFiles} {
			for _, df := range group {
				needed[df.FilePath()] = true
			}
		}
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return nil, err
	}
	var dead []iceberg.DataFile
	seen := map[string]bool{}
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentDeletes {
			continue
		}
		for e, err := range m.Entries(fsys, true /* discardDeleted */) {
			if err != nil {
				return nil, err
			}
			df := e.DataFile()
			if p := df.FilePath(); !needed[p] && !seen[p] {
				seen[p] = true
				dead = append(dead, df)
			}
		}
	}
	return dead, nil
}

// checkCompaction is the row-count safety net (mergeinto.Ledger) of a
// compaction: the files iceberg-go wrote must hold exactly the live rows
// of the files it removes. It reads the rewrite's snapshot summary.
func checkCompaction(ctx context.Context, t *Table, txn *table.Transaction, groups []table.CompactionTaskGroup) error {
	staged, err := txn.StagedTable()
	if err != nil {
		return err
	}
	head := staged.CurrentSnapshot()
	if head == nil || head.Summary == nil {
		return fmt.Errorf("the rewrite staged no snapshot (broken invariant)")
	}
	// no added-records: the rewrite wrote no file (every row was deleted)
	var written int64
	if v, ok := head.Summary.Properties["added-records"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("the rewrite's snapshot summary has added-records %q (%w)", v, err)
		}
		written = n
	}
	ledger := mergeinto.NewLedger(t.tbl, []table.ScanOption{table.WithSnapshotID(t.snap.SnapshotID)}, "compact "+t.Name(), nil)
	var removed []iceberg.DataFile
	for _, g := range groups {
		for _, task := range g.Tasks {
			if err := ledger.ReadWhole(ctx, task); err != nil {
				return err
			}
			removed = append(removed, task.File)
		}
	}
	return ledger.CheckWritten(ctx, removed, written, 0 /* deleted */, 0 /* inserted */)
}

// mergeByPartition merges the planned groups of each partition into one.
func mergeByPartition(groups []compaction.Group) []compaction.Group {
	var out []compaction.Group
	at := map[string]int{}
	for _, g := range groups {
		if i, ok := at[g.PartitionKey]; ok {
			out[i].Tasks = append(out[i].Tasks, g.Tasks...)
			out[i].TotalSizeBytes += g.TotalSizeBytes
			out[i].DeleteFileCount += g.DeleteFileCount
			continue
		}
		at[g.PartitionKey] = len(out)
		out = append(out, g)
	}
	return out
}
