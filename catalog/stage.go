package catalog

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"
)

// StageMetadata writes meta, computed by the caller (a multi-statement
// transaction applies its changes in memory), as the table's next metadata
// file, durably, without publishing it. base is the metadata location the
// caller's changes started from ("" when the table did not exist); the
// returned Swap moves the pointer from base to the new file, so publishing
// fails with a *ConflictError if the table moved since. created marks
// metadata for a table made inside the transaction (a create, or the new
// table of a replace): Discard then also removes its empty directories.
func (c *Catalog) StageMetadata(ctx context.Context, ident table.Identifier, base string, meta table.Metadata, created bool) (*StagedCommit, error) {
	if c.remote != nil {
		return c.stageRemote(ident, meta, created)
	}
	ident, err := Normalize(ident)
	if err != nil {
		return nil, err
	}
	if meta == nil {
		return nil, fmt.Errorf("stage metadata for %s: no metadata given", identString(ident))
	}
	version := 0
	if base != "" && !created {
		version = metadataVersion(base) + 1
	}
	newLoc, err := c.writeVersion(ctx, ident, meta, version)
	if err != nil {
		if created {
			// the table directory may have been made for the file
			if loc, lerr := newMetadataLocation(meta, version); lerr == nil {
				c.removeEmptyDirs(loc, meta.Location())
			}
		}
		return nil, err
	}
	s := &StagedCommit{
		Ident: ident, Metadata: meta, MetadataLocation: newLoc,
		Swap: PointerSwap{Ident: ident, Expected: base, New: newLoc},
	}
	if !created {
		// Base marks an update for Discard, which then leaves directories
		// alone; only its being non-nil matters there.
		s.Base = meta
	}
	return s, nil
}

// StageDrop is the staged removal of a table whose pointer is base: no file
// is written; publishing it deletes the pointer, if it still is base.
func StageDrop(ident table.Identifier, base string) (*StagedCommit, error) {
	ident, err := Normalize(ident)
	if err != nil {
		return nil, err
	}
	if base == "" {
		return nil, fmt.Errorf("drop table %s: the table does not exist", identString(ident))
	}
	return &StagedCommit{Ident: ident, Swap: PointerSwap{Ident: ident, Expected: base}}, nil
}

// Publish swaps the pointers of staged commits in one bbolt transaction:
// all move or none does. When none moved, the staged metadata files are
// removed and the error is a *ConflictError (wrapping
// table.ErrCommitFailed) naming the first table that had moved. An error
// wrapping ErrCommitStateUnknown leaves the files: the swap may have
// happened.
func (c *Catalog) Publish(ctx context.Context, staged ...*StagedCommit) error {
	if len(staged) == 0 {
		return nil
	}
	if c.remote != nil {
		return c.publishRemote(ctx, staged)
	}
	return c.publish(ctx, staged)
}

// RemoveEmptyDirs removes the directories from the one holding file up to
// and including top while they are empty, and never anything outside the
// lake: what a rolled-back write leaves once its files are gone.
func (c *Catalog) RemoveEmptyDirs(file, top string) { c.removeEmptyDirs(file, top) }
