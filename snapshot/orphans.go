package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// OrphanResult reports what orphan cleanup deleted.
type OrphanResult struct {
	DeletedFiles []string
	DeletedBytes int64
}

// RemoveOrphans deletes files under the table's location that no snapshot
// of the table (nor of any other table, through refs) reaches and that are
// older than olderThan. The age bound protects files that a writer in
// another process has written but not yet committed: pick it longer than
// your longest write.
func RemoveOrphans(ctx context.Context, tbl *table.Table, olderThan time.Time, refs RefsFunc) (OrphanResult, error) {
	var res OrphanResult
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return res, err
	}
	live := FileSet{}
	if err := ReachableFromMetadata(ctx, fsys, tbl.Metadata(), tbl.MetadataLocation(), live); err != nil {
		return res, fmt.Errorf("remove orphan files: list live files: %w", err)
	}
	if refs != nil {
		other, err := refs(ctx)
		if err != nil {
			return res, fmt.Errorf("remove orphan files: list other tables' files: %w", err)
		}
		for p := range other {
			live[p] = struct{}{}
		}
	}
	r, err := RemoveUnreferenced(ctx, fsys, NormalizePath(tbl.Location()), live, olderThan, false)
	if err != nil {
		return r, fmt.Errorf("remove orphan files: %w", err)
	}
	return r, nil
}

// RemoveUnreferenced deletes, through fsys, the regular files under root
// that live does not hold and that are older than olderThan; with
// pruneDirs, also the directories that are left empty. A root that does
// not exist holds nothing.
func RemoveUnreferenced(ctx context.Context, fsys iceio.IO, root string, live FileSet, olderThan time.Time, pruneDirs bool) (OrphanResult, error) {
	var res OrphanResult
	var orphans, dirs []string
	var sizes []int64
	err := walkFiles(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && isNotExist(err) {
				return fs.SkipAll
			}
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		if !d.Type().IsRegular() || live.Has(p) {
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
		orphans = append(orphans, p)
		sizes = append(sizes, info.Size())
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("walk %s: %w", root, err)
	}
	for i, p := range orphans {
		if err := removeFile(fsys, p); err != nil {
			return res, fmt.Errorf("delete %s: %w", p, err)
		}
		res.DeletedFiles = append(res.DeletedFiles, p)
		res.DeletedBytes += sizes[i]
	}
	if pruneDirs {
		for _, d := range slices.Backward(dirs) { // deepest first
			removeDir(d) // only empty directories go
		}
	}
	return res, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
