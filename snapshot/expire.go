package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// ExpireResult reports what an expiry did.
type ExpireResult struct {
	// Expired lists the snapshot ids removed from the table's history.
	Expired []int64
	// DeletedFiles are the files that only expired snapshots reached.
	DeletedFiles []string
	// Table is the table after the expiry commit.
	Table *table.Table
}

// Expire removes from tbl's history every snapshot older than olderThan,
// except the newest retainLast snapshots of the current branch (and any
// snapshot a branch or tag points at), commits that, and then deletes the
// files that only the expired snapshots reached.
//
// INVARIANT: files are deleted only after the commit landed, and only when
// neither a retained snapshot of tbl nor refs (the other tables) reach them.
func Expire(ctx context.Context, tbl *table.Table, olderThan time.Time, retainLast int, refs RefsFunc) (ExpireResult, error) {
	if retainLast < 1 {
		return ExpireResult{}, fmt.Errorf("expire snapshots: retain_last must be at least 1, got %d; the current snapshot is always kept", retainLast)
	}
	age := time.Since(olderThan)
	if age < 0 {
		age = 0
	}
	before := tbl.Metadata()
	if len(before.Snapshots()) == 0 {
		return ExpireResult{Table: tbl}, nil
	}

	txn := tbl.NewTransaction()
	if err := txn.ExpireSnapshots(table.WithOlderThan(age), table.WithRetainLast(retainLast), table.WithPostCommit(false)); err != nil {
		return ExpireResult{}, fmt.Errorf("expire snapshots: %w", err)
	}
	after, err := txn.Commit(ctx)
	if err != nil {
		return ExpireResult{}, fmt.Errorf("expire snapshots: %w", err)
	}

	res := ExpireResult{Table: after}
	kept := map[int64]bool{}
	for _, s := range after.Metadata().Snapshots() {
		kept[s.SnapshotID] = true
	}
	var expired []table.Snapshot
	for _, s := range before.Snapshots() {
		if !kept[s.SnapshotID] {
			expired = append(expired, s)
			res.Expired = append(res.Expired, s.SnapshotID)
		}
	}
	if len(expired) == 0 {
		return res, nil
	}

	fsys, err := after.FS(ctx)
	if err != nil {
		return res, err
	}
	live := FileSet{}
	if err := ReachableFromMetadata(ctx, fsys, after.Metadata(), after.MetadataLocation(), live); err != nil {
		return res, fmt.Errorf("expire snapshots: the expiry committed, but listing live files failed, so no file was deleted: %w", err)
	}
	if refs != nil {
		other, err := refs(ctx)
		if err != nil {
			return res, fmt.Errorf("expire snapshots: the expiry committed, but listing other tables' files failed, so no file was deleted: %w", err)
		}
		for p := range other {
			live[p] = struct{}{}
		}
	}
	dead := FileSet{}
	if err := Reachable(ctx, fsys, expired, dead, map[string]bool{}); err != nil {
		return res, fmt.Errorf("expire snapshots: the expiry committed, but reading expired manifests failed, so no file was deleted: %w", err)
	}
	for p := range dead {
		if _, ok := live[p]; ok {
			continue
		}
		if err := removeFile(fsys, p); err != nil {
			return res, fmt.Errorf("expire snapshots: delete %s: %w", p, err)
		}
		res.DeletedFiles = append(res.DeletedFiles, p)
	}
	return res, nil
}

func removeFile(fsys iceio.IO, p string) error {
	err := fsys.Remove(p)
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
