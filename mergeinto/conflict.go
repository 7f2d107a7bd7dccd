package mergeinto

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/scan"
	"github.com/skadedb/skade/snapshot"
)

// A staged MERGE, UPDATE or DELETE that loses the commit race is not
// thrown away: the commits that landed after the snapshot it read are
// checked against the files it touched, as Iceberg's conflict validation
// does, and when none conflicts the same change (the same files added and
// removed) is staged again on the new head. Two writers that touch
// disjoint data files therefore both commit, and a compaction of files a
// writer did not touch is absorbed. docs/merge.md, "Concurrent writers",
// states the rules.

// Delta is a staged row-level write described by its files: what
// snapshot.Commit needs to validate it against later commits and stage it
// again (snapshot.Rebaser).
type Delta struct {
	what      string
	op        string // "merge", "update" or "delete"
	isolation string
	base      *table.Snapshot
	schemaID  int
	specID    int
	// rewritten are the data files the write removes; referenced those
	// it writes position deletes or deletion vectors against.
	rewritten  []iceberg.DataFile
	referenced []iceberg.DataFile
	// removedDeletes are delete files the write removes (dead deletes of
	// rewritten files, deletion vectors it supersedes).
	removedDeletes []iceberg.DataFile
	// filter: a row outside it cannot change what the write does; nil
	// means any row can.
	filter  iceberg.BooleanExpression
	restage func(ctx context.Context, txn *table.Transaction) error
}

var _ snapshot.Rebaser = (*Delta)(nil)

// Restage stages the write's change into txn (snapshot.Rebaser).
func (d *Delta) Restage(ctx context.Context, txn *table.Transaction) error {
	return d.restage(ctx, txn)
}

// ConflictError is a commit that landed after a write read its snapshot
// and conflicts with it. It wraps table.ErrCommitFailed.
type ConflictError struct {
	What      string // "merge into main.t"
	Snapshot  int64  // the conflicting commit; 0 when none is to blame
	Operation string // its operation ("overwrite", "replace", ...)
	Reason    string
	// Maintenance: the conflict comes from table maintenance (a
	// compaction rewrote a file the write touched, or expiry removed the
	// snapshots in between), which changed no row: the statement, planned
	// again on the new head, does what it meant to, so the caller may run
	// it again without asking.
	Maintenance bool
}

func (e *ConflictError) Error() string {
	if e.Snapshot == 0 {
		return fmt.Sprintf("%s: cannot be applied on top of the commits since it read the table: %s", e.What, e.Reason)
	}
	return fmt.Sprintf("%s: conflicts with snapshot %d (%s), committed after it read the table: %s", e.What, e.Snapshot, e.Operation, e.Reason)
}

func (e *ConflictError) Unwrap() error { return table.ErrCommitFailed }

// Validate checks the commits between the write's snapshot and head's
// (snapshot.Rebaser). Under both isolation levels a commit conflicts when
// it removed a data file the write rewrites or deletes rows of, added a
// delete file that applies to one, removed a delete file the write
// removes, or changed the schema or partition spec. Under serializable
// isolation a commit that added data files (not a compaction's rewrite)
// conflicts too when their statistics say they may hold a row matching
// the write's filter.
func (d *Delta) Validate(ctx context.Context, head *table.Table) error {
	meta := head.Metadata()
	cur := head.CurrentSnapshot()
	baseID := int64(-1)
	if d.base != nil {
		baseID = d.base.SnapshotID
	}
	conflict := func(s *table.Snapshot, maintenance bool, format string, args ...any) error {
		e := &ConflictError{What: d.what, Reason: fmt.Sprintf(format, args...), Maintenance: maintenance}
		if s != nil {
			e.Snapshot = s.SnapshotID
			if s.Summary != nil {
				e.Operation = string(s.Summary.Operation)
			}
		}
		return e
	}
	if cur == nil {
		if baseID == -1 {
			return nil
		}
		return conflict(nil, false, "the table no longer has a current snapshot")
	}
	// The commits since the base, newest first.
	var chain []*table.Snapshot
	for s := cur; s.SnapshotID != baseID; {
		chain = append(chain, s)
		if s.ParentSnapshotID == nil {
			if baseID == -1 {
				break
			}
			return conflict(nil, false, "snapshot %d, which it read, is no longer an ancestor of the head (the table was rolled back or replaced)", baseID)
		}
		if *s.ParentSnapshotID == baseID {
			break
		}
		if s = meta.SnapshotByID(*s.ParentSnapshotID); s == nil {
			return conflict(nil, true, "snapshots committed since were expired, so what they changed cannot be checked")
		}
	}
	if meta.CurrentSchema().ID != d.schemaID {
		return conflict(nil, false, "the table's schema changed")
	}
	if meta.DefaultPartitionSpec() != d.specID {
		return conflict(nil, false, "the table's partition spec changed")
	}

	touched := map[string]string{}
	parts := map[string]bool{}
	for _, df := range d.rewritten {
		touched[df.FilePath()] = "rewrites"
		parts[partitionKey(df)] = true
	}
	for _, df := range d.referenced {
		touched[df.FilePath()] = "deletes rows of"
		parts[partitionKey(df)] = true
	}
	removedDeletes := map[string]bool{}
	for _, df := range d.removedDeletes {
		removedDeletes[df.FilePath()] = true
	}
	fsys, err := head.FS(ctx)
	if err != nil {
		return err
	}
	// newData are the data files added by the commits since, with their
	// commit: appends and overwrites, and a compaction's output when it
	// rewrote such a file (its rows are new to the write).
	newData := map[string]*table.Snapshot{}
	var newOrder []string
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		replace := s.Summary != nil && s.Summary.Operation == table.OpReplace
		mans, err := s.Manifests(fsys)
		if err != nil {
			return fmt.Errorf("%s: reading snapshot %d to check it for conflicts: %w", d.what, s.SnapshotID, err)
		}
		var added []string
		carries := false
		for _, mf := range mans {
			if mf.SnapshotID() != s.SnapshotID {
				continue // written by an earlier commit
			}
			for e, err := range mf.Entries(fsys, false) {
				if err != nil {
					return fmt.Errorf("%s: reading snapshot %d to check it for conflicts: %w", d.what, s.SnapshotID, err)
				}
				if e.Status() == iceberg.EntryStatusEXISTING || e.SnapshotID() != s.SnapshotID {
					continue
				}
				df := e.DataFile()
				path := df.FilePath()
				deleted := e.Status() == iceberg.EntryStatusDELETED
				switch df.ContentType() {
				case iceberg.EntryContentData:
					if deleted {
						if role, ok := touched[path]; ok {
							return conflict(s, replace, "it removed data file %s, which this statement %s", relPath(head, path), role)
						}
						if newData[path] != nil {
							carries = true
						}
					} else {
						added = append(added, path)
					}
				case iceberg.EntryContentPosDeletes:
					if deleted {
						if removedDeletes[path] {
							return conflict(s, replace, "it removed delete file %s, which this statement removes too", relPath(head, path))
						}
						continue
					}
					if ref := scan.OnlyDataFile(df); ref != "" {
						if role, ok := touched[ref]; ok {
							return conflict(s, false, "it deleted rows of data file %s, which this statement %s", relPath(head, ref), role)
						}
					} else if parts[partitionKey(df)] {
						return conflict(s, false, "it added position delete file %s, which may delete rows of a data file this statement changes", relPath(head, path))
					}
				case iceberg.EntryContentEqDeletes:
					if deleted {
						if removedDeletes[path] {
							return conflict(s, replace, "it removed delete file %s, which this statement removes too", relPath(head, path))
						}
						continue
					}
					if parts[partitionKey(df)] {
						return conflict(s, false, "it added equality delete file %s in a partition whose data files this statement changes", relPath(head, path))
					}
				}
			}
		}
		if !replace || carries {
			for _, p := range added {
				newData[p] = s
				newOrder = append(newOrder, p)
			}
		}
	}
	if d.isolation != snapshot.IsolationSerializable || len(newData) == 0 {
		return nil
	}
	if _, none := d.filter.(iceberg.AlwaysFalse); none {
		return nil
	}
	if d.filter == nil {
		p := newOrder[0]
		return conflict(newData[p], false, "it added data file %s, and any row of the table may change what this statement does (serializable isolation; %s)", relPath(head, p), d.isolationProp())
	}
	opts := []table.ScanOption{table.WithSnapshotID(cur.SnapshotID)}
	if pf := scan.PlanFilter(ctx, head, cur, d.filter); pf != nil {
		opts = append(opts, table.WithRowFilter(pf))
	}
	sc := head.Scan(opts...)
	tasks, err := sc.PlanFiles(ctx)
	sc.Close()
	if err != nil {
		// the filter could not be evaluated: any new file may match
		p := newOrder[0]
		return conflict(newData[p], false, "it added data file %s, which may hold rows this statement would have matched (serializable isolation; %s)", relPath(head, p), d.isolationProp())
	}
	for _, t := range tasks {
		if s := newData[t.File.FilePath()]; s != nil {
			return conflict(s, false, "it added data file %s, whose statistics say it may hold rows this statement would have matched (serializable isolation; %s)", relPath(head, t.File.FilePath()), d.isolationProp())
		}
	}
	return nil
}

// isolationProp names the property that would let the conflict through.
func (d *Delta) isolationProp() string {
	return snapshot.IsolationKey(d.op) + " = 'snapshot' allows it"
}

// partitionKey identifies a file's partition: its spec and values.
func partitionKey(df iceberg.DataFile) string {
	vals := df.Partition()
	ids := make([]int, 0, len(vals))
	for id := range vals {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	fmt.Fprintf(&b, "%d", df.SpecID())
	for _, id := range ids {
		fmt.Fprintf(&b, "|%d=%v", id, vals[id])
	}
	return b.String()
}
