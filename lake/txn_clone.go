package lake

import (
	"context"
	"fmt"
	"slices"
)

// cloneInTx stages CREATE TABLE dst CLONE src in the open transaction: the
// clone is created from the source as the transaction pinned it, and
// COMMIT asserts that the source's pointer has not moved since (the
// invariant publishClone keeps for an autocommit clone: expiry and purge of
// the source then always see the clone's references).
func (s *Session) cloneInTx(ctx context.Context, src, dst string, opts ...CloneOption) error {
	srcID, err := s.lk.ident(src)
	if err != nil {
		return err
	}
	dstID, err := s.lk.ident(dst)
	if err != nil {
		return err
	}
	var cfg cloneConfig
	for _, o := range opts {
		o(&cfg)
	}
	what := fmt.Sprintf("clone %s into %s", displayName(srcID), displayName(dstID))
	if slices.Equal(srcID, dstID) {
		return &sentinelError{ErrTableExists, fmt.Errorf("%s: a table cannot be cloned into itself; choose another name", what)}
	}
	se, err := s.tx.entry(ctx, srcID)
	if err != nil {
		return err
	}
	if se.meta == nil {
		return &sentinelError{ErrTableNotFound, fmt.Errorf("%s: table %s does not exist", what, displayName(srcID))}
	}
	if se.dirty || se.created {
		// its new files belong to this transaction, which could still
		// drop them; a clone must only share committed files
		return &sentinelError{ErrNotImplemented, fmt.Errorf("%s: %s was changed in this transaction; clone it after COMMIT, or clone it before changing it", what, displayName(srcID))}
	}
	meta := se.meta
	snap, err := cloneSnapshot(meta, srcID, cfg, what)
	if err != nil {
		return err
	}
	de, err := s.tx.entry(ctx, dstID)
	if err != nil {
		return err
	}
	if de.meta != nil && !cfg.orReplace {
		return &sentinelError{ErrTableExists, fmt.Errorf("%s: table %s already exists; choose another name, drop it first, or use CREATE OR REPLACE TABLE", what, displayName(dstID))}
	}
	loc, err := s.lk.newLocation(ctx, dstID)
	if err != nil {
		return err
	}
	cmeta, err := cloneMetadata(meta, snap.SnapshotID, loc)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if _, err := s.tx.create(ctx, dstID, cmeta); err != nil {
		return err
	}
	se.assert = true
	return nil
}
