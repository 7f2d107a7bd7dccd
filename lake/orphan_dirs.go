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
//
// A directory outside the catalog that still holds valid table metadata
// is kept and listed in Kept: it is a table the catalog lost (restore the
// catalog with Repair), or one dropped with its files kept on purpose.
// ForceTableDirs deletes its unreferenced files too.
func (l *Lake) RemoveOrphanTableDirs(ctx context.Context, olderThan time.Time, opts ...OrphanOption) (OrphanDirsResult, error) {
	var cfg orphanConfig
	for _, o := range opts {
		o(&cfg)
	}
	var res OrphanDirsResult
	fail := func(err error) (OrphanDirsResult, error) {
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
			if !cfg.force && hasMetadata(root) {
				// INVARIANT: files under a directory with table metadata
				// go only when the catalog names the table or the user
				// forces it: a lost catalog must not make a table orphan
				res.Kept = append(res.Kept, root)
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

// OrphanDirsResult is what RemoveOrphanTableDirs deleted, and the table
// directories it kept because they hold table metadata the catalog does
// not name.
type OrphanDirsResult struct {
	snapshot.OrphanResult
	Kept []string
}

// OrphanOption configures RemoveOrphanTableDirs.
type OrphanOption func(*orphanConfig)

type orphanConfig struct{ force bool }

// ForceTableDirs lets RemoveOrphanTableDirs delete the unreferenced files
// of directories that hold table metadata the catalog does not name.
func ForceTableDirs() OrphanOption { return func(c *orphanConfig) { c.force = true } }

// hasMetadata reports whether a table directory holds a metadata file.
func hasMetadata(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "metadata", "*.metadata.json"))
	return len(m) > 0
}
