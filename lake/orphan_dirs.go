package lake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
			r, err := snapshot.RemoveUnreferenced(ctx, l.cat.FS(), root, live, olderThan, true)
			res.DeletedFiles = append(res.DeletedFiles, r.DeletedFiles...)
			res.DeletedBytes += r.DeletedBytes
			if err != nil {
				return fail(err)
			}
		}
	}
	return res, nil
}
