package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/apache/iceberg-go/table"
)

// Purge deletes a dropped table's files: everything under its location,
// and every file its snapshots reach elsewhere, except the files in
// others (files another table still reaches, e.g. after CLONE). Empty
// directories under the location are removed too.
func Purge(ctx context.Context, tbl *table.Table, others FileSet) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	reach := FileSet{}
	if err := ReachableFromMetadata(ctx, fsys, tbl.Metadata(), tbl.MetadataLocation(), reach); err != nil {
		return fmt.Errorf("list files: %w", err)
	}
	root := NormalizePath(tbl.Location())
	var dirs []string
	err = walkFiles(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		reach.Add(p)
		return nil
	})
	if err != nil {
		return err
	}
	for p := range reach {
		if err := ctx.Err(); err != nil {
			return err
		}
		if others.Has(p) {
			continue
		}
		if err := removeFile(fsys, p); err != nil {
			return fmt.Errorf("delete %s: %w", p, err)
		}
	}
	// Deepest first, so that parents are empty when we reach them. A
	// directory that still holds a shared file stays.
	slices.Reverse(dirs)
	for _, d := range dirs {
		removeDir(d)
	}
	return nil
}
