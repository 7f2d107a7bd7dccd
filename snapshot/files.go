package snapshot

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
)

// FileSet is a set of normalized file paths.
type FileSet map[string]struct{}

// Add inserts a path, normalized.
func (s FileSet) Add(p string) { s[NormalizePath(p)] = struct{}{} }

// Has reports whether the set holds p.
func (s FileSet) Has(p string) bool {
	_, ok := s[NormalizePath(p)]
	return ok
}

// NormalizePath turns a location as Iceberg metadata records it (a plain
// path, a file:/// URI or Hadoop's file:/path) into a clean local path, so that paths from
// manifests and paths from a directory walk compare equal.
func NormalizePath(p string) string {
	p = LocalPath(p) // file:///path and Hadoop's file:/path

	if catalog.IsURL(p) {
		// an object-store location names its key as it is
		return p
	}
	return filepath.Clean(p)
}

// walkFiles walks root: through fsys for an object-store root, on local
// disk otherwise.
func walkFiles(fsys iceio.IO, root string, fn fs.WalkDirFunc) error {
	if catalog.IsURL(root) {
		l, ok := fsys.(iceio.ListableIO)
		if !ok {
			return fmt.Errorf("walk %s: the table's IO cannot list files", root)
		}
		return l.WalkDir(root, fn)
	}
	return filepath.WalkDir(root, fn)
}

// removeDir removes an empty local directory; object stores have none.
func removeDir(d string) {
	if !catalog.IsURL(d) {
		_ = os.Remove(d)
	}
}

// RefsFunc returns the files that other tables in the lake still reach.
// Expiry and orphan cleanup never delete those (tables may share data
// files after CLONE).
type RefsFunc func(ctx context.Context) (FileSet, error)

// Reachable adds to out every file that the given snapshots read: manifest
// lists, manifests, data files and delete files. seen caches manifests
// already visited across calls, since consecutive snapshots share most of
// their manifests.
func Reachable(ctx context.Context, fs iceio.IO, snaps []table.Snapshot, out FileSet, seen map[string]bool) error {
	for i := range snaps {
		if err := ctx.Err(); err != nil {
			return err
		}
		s := &snaps[i]
		if s.ManifestList != "" {
			out.Add(s.ManifestList)
		}
		manifests, err := s.Manifests(fs)
		if err != nil {
			return fmt.Errorf("read manifest list of snapshot %d: %w", s.SnapshotID, err)
		}
		for _, m := range manifests {
			out.Add(m.FilePath())
			if seen[m.FilePath()] {
				continue
			}
			seen[m.FilePath()] = true
			for entry, err := range m.Entries(fs, true /* discardDeleted */) {
				if err != nil {
					return fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
				}
				out.Add(entry.DataFile().FilePath())
			}
		}
	}
	return nil
}

// ReachableFromMetadata is Reachable over every snapshot the metadata holds,
// plus the metadata files themselves (the current one, given by location,
// and those in the metadata log).
func ReachableFromMetadata(ctx context.Context, fs iceio.IO, meta table.Metadata, metadataLocation string, out FileSet) error {
	if metadataLocation != "" {
		out.Add(metadataLocation)
		// the catalog's version hint beside it (catalog.VersionHintFile)
		if i := strings.LastIndex(metadataLocation, "/"); i >= 0 {
			out.Add(metadataLocation[:i+1] + "version-hint.text")
		}
	}
	for entry := range meta.PreviousFiles() {
		out.Add(entry.MetadataFile)
	}
	return Reachable(ctx, fs, meta.Snapshots(), out, map[string]bool{})
}
