package lake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/skadedb/skade/snapshot"
)

// RemoveOrphanTableDirs deletes what no table references outside the
// tables' own directories: the directories of tables dropped while a clone
// still shared some of their files (once the clone no longer does), and of
// tables a transaction was creating when its process died. Only files
// older than olderThan go, which protects a transaction another process is
// running now; files any table still reaches always stay. Empty
// directories left behind go too. Per-table leftovers are
// Table.RemoveOrphanFiles' job.
func (l *Lake) RemoveOrphanTableDirs(ctx context.Context, olderThan time.Time) (snapshot.OrphanResult, error) {
	var res snapshot.OrphanResult
	fail := func(err error) (snapshot.OrphanResult, error) {
		return res, fmt.Errorf("remove orphan table directories: %w", err)
	}
	names, err := l.Tables(ctx)
	if err != nil {
		return fail(err)
	}
	locations := map[string]bool{}
	for _, n := range names {
		tbl, err := l.Table(ctx, n)
		if errors.Is(err, ErrTableNotFound) {
			continue // dropped meanwhile
		}
		if err != nil {
			return fail(err)
		}
		locations[filepath.Clean(snapshot.NormalizePath(tbl.tbl.Location()))] = true
	}
	live, err := l.otherRefs(nil)(ctx)
	if err != nil {
		return fail(err)
	}
	nss, err := os.ReadDir(l.dir)
	if err != nil {
		return fail(err)
	}
	for _, ns := range nss {
		if !ns.IsDir() {
			continue
		}
		dirs, err := os.ReadDir(filepath.Join(l.dir, ns.Name()))
		if err != nil {
			return fail(err)
		}
		for _, d := range dirs {
			root := filepath.Join(l.dir, ns.Name(), d.Name())
			if !d.IsDir() || locations[root] {
				continue
			}
			if err := removeOrphansUnder(ctx, root, live, olderThan, &res); err != nil {
				return fail(err)
			}
		}
	}
	return res, nil
}

// removeOrphansUnder deletes the files under root that live does not hold
// and that are older than olderThan, then the directories left empty.
func removeOrphansUnder(ctx context.Context, root string, live snapshot.FileSet, olderThan time.Time, res *snapshot.OrphanResult) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if isNotExist(err) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		if live.Has(p) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if isNotExist(err) {
				return nil
			}
			return err
		}
		if !info.ModTime().Before(olderThan) {
			return nil
		}
		if err := os.Remove(p); err != nil && !isNotExist(err) {
			return err
		}
		res.DeletedFiles = append(res.DeletedFiles, p)
		res.DeletedBytes += info.Size()
		return nil
	})
	if err != nil {
		return err
	}
	slices.Reverse(dirs) // deepest first
	for _, d := range dirs {
		_ = os.Remove(d) // only succeeds when empty
	}
	return nil
}
