package lake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

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
	if l.cat.Remote() {
		return fail(&sentinelError{ErrInvalidArgument, errors.New("a lake on a REST catalog does not know every table directory; clean each table with Table.RemoveOrphanFiles, or run this where the catalog is served")})
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
		locations[snapshot.NormalizePath(tbl.tbl.Location())] = true
	}
	// views live in directories of their own, which hold view metadata
	nss, err := l.Namespaces(ctx)
	if err != nil {
		return fail(err)
	}
	for _, ns := range nss {
		views, err := l.cat.ListViews(ctx, ns)
		if err != nil {
			return fail(err)
		}
		for _, v := range views {
			vw, err := l.cat.LoadView(ctx, table.Identifier{ns, v})
			if err != nil {
				return fail(err)
			}
			locations[snapshot.NormalizePath(vw.Metadata.Location())] = true
		}
	}
	live, err := l.otherRefs(nil)(ctx)
	if err != nil {
		return fail(err)
	}
	dirs, err := l.tableDirs()
	if err != nil {
		return fail(err)
	}
	for _, d := range dirs {
		if locations[d.root] {
			continue
		}
		if !cfg.force && d.hasMetadata {
			// INVARIANT: files under a directory with table metadata
			// go only when the catalog names the table or the user
			// forces it: a lost catalog must not make a table orphan
			res.Kept = append(res.Kept, d.root)
			continue
		}
		r, err := snapshot.RemoveUnreferenced(ctx, l.cat.FS(), d.root, live, olderThan, true)
		res.DeletedFiles = append(res.DeletedFiles, r.DeletedFiles...)
		res.DeletedBytes += r.DeletedBytes
		if err != nil {
			return fail(err)
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

// tableDir is a directory <lake>/<namespace>/<dir>, where tables live.
type tableDir struct {
	root        string
	hasMetadata bool // it holds a metadata file
}

// tableDirs lists the lake's table directories, on disk or, in an object
// store, the <namespace>/<dir>/ prefixes that hold objects.
func (l *Lake) tableDirs() ([]tableDir, error) {
	if !l.cat.Local() {
		var out []tableDir
		index := map[string]int{}
		root := strings.TrimSuffix(l.dir, "/")
		err := l.cat.FS().WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			parts := strings.SplitN(strings.TrimPrefix(p, root+"/"), "/", 3)
			if d.IsDir() || len(parts) < 3 {
				return nil
			}
			dir := root + "/" + parts[0] + "/" + parts[1]
			i, ok := index[dir]
			if !ok {
				i = len(out)
				index[dir] = i
				out = append(out, tableDir{root: dir})
			}
			if m, _ := path.Match("metadata/*.metadata.json", parts[2]); m {
				out[i].hasMetadata = true
			}
			return nil
		})
		return out, err
	}
	nss, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, err
	}
	var out []tableDir
	for _, ns := range nss {
		if !ns.IsDir() {
			continue
		}
		dirs, err := os.ReadDir(filepath.Join(l.dir, ns.Name()))
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			if !d.IsDir() {
				continue
			}
			root := filepath.Join(l.dir, ns.Name(), d.Name())
			m, _ := filepath.Glob(filepath.Join(root, "metadata", "*.metadata.json"))
			out = append(out, tableDir{root: root, hasMetadata: len(m) > 0})
		}
	}
	return out, nil
}
