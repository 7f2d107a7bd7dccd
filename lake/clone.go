package lake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/snapshot"
)

// A clone is a new table whose one snapshot reuses a snapshot of its
// source: the same manifest list, hence the same manifests, data files and
// delete files. Nothing but one metadata file is written. Manifest lists
// and manifests are immutable, so sharing them is safe as long as nothing
// deletes a file another table still reaches; expiry, orphan cleanup and
// purge see every other table's references (Lake.otherRefs).
//
// A clone is made in three steps, kept apart so that a transaction can
// stage several: planClone reads the source and builds the metadata
// (cloneMetadata, pure), stageClone writes it durably, publishClone swaps
// the pointers.

// maxCloneAttempts bounds how often CloneTable re-reads a source that
// moved between reading it and publishing the clone.
const maxCloneAttempts = 10

// CloneOption configures CloneTable.
type CloneOption func(*cloneConfig)

type cloneConfig struct {
	snapshotID *int64
	asOf       *time.Time
	// orReplace replaces an existing destination atomically (CREATE OR
	// REPLACE TABLE … CLONE) and purges the replaced table's files.
	orReplace bool
}

// CloneAt clones the source as of the snapshot with the given id, as
// FOR VERSION AS OF does. The default is the source's current snapshot.
func CloneAt(snapshotID int64) CloneOption {
	return func(c *cloneConfig) { c.snapshotID = &snapshotID; c.asOf = nil }
}

// CloneAsOf clones the snapshot of the source that was current at ts, as
// FOR TIMESTAMP AS OF does.
func CloneAsOf(ts time.Time) CloneOption {
	return func(c *cloneConfig) { c.asOf = &ts; c.snapshotID = nil }
}

// cloneOrReplace replaces an existing destination instead of failing.
func cloneOrReplace() CloneOption { return func(c *cloneConfig) { c.orReplace = true } }

// CloneTable creates dst as a zero-copy clone of src: a new table, at its
// own location, with src's schemas, partition specs, sort orders and
// properties, whose only snapshot is src's current snapshot (or the one
// CloneAt or CloneAsOf picks). It writes one metadata file and copies no
// data; the two tables share data files but never see each other's later
// writes.
//
// Errors: ErrTableNotFound (no src), ErrTableExists (dst is taken, or is
// src), ErrSnapshotNotFound (no such snapshot), ErrNamespaceNotFound (dst's
// namespace does not exist), ErrInvalidArgument (src has no snapshot),
// ErrInvalidName, and ErrCommitConflict when src kept changing while it
// was cloned (each change makes the clone start over, up to 10 times).
func (l *Lake) CloneTable(ctx context.Context, src, dst string, opts ...CloneOption) (*Table, error) {
	srcID, err := l.ident(src)
	if err != nil {
		return nil, err
	}
	dstID, err := l.ident(dst)
	if err != nil {
		return nil, err
	}
	var cfg cloneConfig
	for _, o := range opts {
		o(&cfg)
	}
	for attempt := 1; ; attempt++ {
		p, err := l.planClone(ctx, srcID, dstID, cfg)
		if err != nil {
			return nil, err
		}
		staged, err := l.stageClone(ctx, p)
		if err != nil {
			return nil, err
		}
		err = l.publishClone(ctx, p, staged)
		if err == nil {
			l.purgeReplaced(ctx, p)
			tbl, err := l.cat.LoadTableAt(ctx, dstID, staged.MetadataLocation)
			if err != nil {
				return nil, translate(fmt.Errorf("clone %s into %s: cloned, but reading the clone back failed: %w", displayName(srcID), displayName(dstID), err))
			}
			return l.newTable(dstID, tbl, tbl.CurrentSnapshot()), nil
		}
		if !errors.Is(err, errCloneRaced) || attempt >= maxCloneAttempts {
			return nil, err
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, errors.Join(err, cerr)
		}
	}
}

// clonePlan is a clone computed from one read of its source: everything
// needed to write and publish it.
type clonePlan struct {
	src, dst table.Identifier
	// srcLocation is the source's metadata file as read; publishing
	// asserts that the source still points there.
	srcLocation string
	// dstLocation is the destination's current metadata file when it is
	// replaced, "" for a create; replaced is that table.
	dstLocation string
	replaced    *table.Table
	snapshotID  int64
	meta        table.Metadata
}

// planClone reads the source, resolves the snapshot to clone, checks the
// destination, allocates its location and builds its metadata. It writes
// nothing.
func (l *Lake) planClone(ctx context.Context, src, dst table.Identifier, cfg cloneConfig) (*clonePlan, error) {
	what := fmt.Sprintf("clone %s into %s", displayName(src), displayName(dst))
	if slices.Equal(src, dst) {
		// Replacing a table by a clone of itself would leave the files of
		// its old location to no table's cleanup.
		return nil, &sentinelError{ErrTableExists, fmt.Errorf("%s: a table cannot be cloned into itself; choose another name", what)}
	}
	srcTbl, err := l.load(ctx, src)
	if err != nil {
		return nil, err
	}
	meta := srcTbl.Metadata()
	snap, err := cloneSnapshot(meta, src, cfg, what)
	if err != nil {
		return nil, err
	}

	p := &clonePlan{src: src, dst: dst, srcLocation: srcTbl.MetadataLocation(), snapshotID: snap.SnapshotID}
	old, err := l.load(ctx, dst)
	switch {
	case err == nil && !cfg.orReplace:
		return nil, &sentinelError{ErrTableExists, fmt.Errorf("%s: table %s already exists; choose another name, drop it first, or use CREATE OR REPLACE TABLE", what, displayName(dst))}
	case err == nil:
		p.dstLocation, p.replaced = old.MetadataLocation(), old
	case !errors.Is(err, ErrTableNotFound):
		return nil, err
	}
	exists, err := l.cat.CheckNamespaceExists(ctx, dst[:1])
	if err != nil {
		return nil, translate(fmt.Errorf("%s: %w", what, err))
	}
	if !exists {
		return nil, &sentinelError{ErrNamespaceNotFound, fmt.Errorf("%s: namespace %s does not exist; create it first with CREATE SCHEMA %s", what, dst[0], dst[0])}
	}
	loc, err := l.cat.NewTableLocation(dst)
	if err != nil {
		return nil, translate(fmt.Errorf("%s: %w", what, err))
	}
	if p.meta, err = cloneMetadata(meta, snap.SnapshotID, loc); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return p, nil
}

// cloneSnapshot resolves which snapshot of src (whose metadata is meta) a
// clone takes: CloneAt's, CloneAsOf's, or the current one. what prefixes
// the errors ("clone a into b").
func cloneSnapshot(meta table.Metadata, src table.Identifier, cfg cloneConfig, what string) (*table.Snapshot, error) {
	var snap *table.Snapshot
	var err error
	switch {
	case cfg.snapshotID != nil:
		snap, err = snapshot.ByID(meta, displayName(src), *cfg.snapshotID)
	case cfg.asOf != nil:
		snap, err = snapshot.AsOf(meta, displayName(src), *cfg.asOf)
	default:
		if snap = meta.CurrentSnapshot(); snap == nil {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("%s: table %s has no snapshot yet, so there is nothing to clone; insert rows first, or create an empty table with CREATE TABLE … AS SELECT * FROM %s LIMIT 0",
				what, displayName(src), displayName(src))}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return snap, nil
}

// stageClone writes the clone's metadata file, version 0 at the clone's
// own location, durably. It does not publish it: pass the result to
// publishClone, or to catalog.Discard.
func (l *Lake) stageClone(ctx context.Context, p *clonePlan) (*catalog.StagedCommit, error) {
	provider, err := table.LoadLocationProvider(p.meta.Location(), p.meta.Properties())
	if err != nil {
		return nil, fmt.Errorf("clone %s into %s: %w", displayName(p.src), displayName(p.dst), err)
	}
	metaLoc, err := provider.NewTableMetadataFileLocation(0)
	if err != nil {
		return nil, fmt.Errorf("clone %s into %s: %w", displayName(p.src), displayName(p.dst), err)
	}
	staged := &catalog.StagedCommit{
		Ident: p.dst, Metadata: p.meta, MetadataLocation: metaLoc,
		Swap: catalog.PointerSwap{Ident: p.dst, Expected: p.dstLocation, New: metaLoc},
	}
	if err := l.cat.WriteMetadata(ctx, p.meta, metaLoc); err != nil {
		// WriteMetadata removed its partial file; Discard removes the
		// directories it created.
		return nil, errors.Join(fmt.Errorf("clone %s into %s: %w", displayName(p.src), displayName(p.dst), err), l.cat.Discard(staged))
	}
	return staged, nil
}

// errCloneRaced is wrapped when the source, or the table a clone
// replaces, committed between planClone reading it and publishClone;
// CloneTable then plans again.
var errCloneRaced = errors.New("a table changed while it was being cloned")

// cloneSwaps are the pointer swaps that publish a staged clone: the
// destination's create (or replace), and an assertion that the source still
// points at the metadata the clone was built from.
//
// INVARIANT: a clone is published only if its source has not moved since
// it was read. Expiry and purge first move (or remove) the source's
// pointer and only then list the other tables' references, so either the
// clone is published first and its references are seen, or the source has
// moved and the clone is planned again from the new head.
func (p *clonePlan) cloneSwaps(staged *catalog.StagedCommit) []catalog.PointerSwap {
	return []catalog.PointerSwap{
		staged.Swap,
		{Ident: p.src, Expected: p.srcLocation, New: p.srcLocation},
	}
}

// publishClone swaps the pointers of a staged clone. When nothing moved,
// the metadata file (and the directories made for it) are removed. A
// source or replaced table that moved gives an error wrapping
// errCloneRaced and ErrCommitConflict.
func (l *Lake) publishClone(ctx context.Context, p *clonePlan, staged *catalog.StagedCommit) error {
	what := fmt.Sprintf("clone %s into %s", displayName(p.src), displayName(p.dst))
	err := l.cat.SwapPointers(ctx, p.cloneSwaps(staged))
	if err == nil {
		return nil
	}
	if errors.Is(err, catalog.ErrCommitStateUnknown) {
		// The pointer may have moved: the file may be live.
		return translate(fmt.Errorf("%s: %w", what, err))
	}
	if derr := l.cat.Discard(staged); derr != nil {
		err = errors.Join(err, derr)
	}
	var ce *catalog.ConflictError
	if errors.As(err, &ce) {
		switch {
		case slices.Equal(ce.Ident, p.dst) && p.dstLocation == "" && ce.Found != "":
			return &sentinelError{ErrTableExists, fmt.Errorf("%s: table %s was created concurrently; choose another name, or drop it first", what, displayName(p.dst))}
		case slices.Equal(ce.Ident, p.src) && ce.Found == "":
			return &sentinelError{ErrTableNotFound, fmt.Errorf("%s: table %s was dropped while it was being cloned", what, displayName(p.src))}
		}
		return &sentinelError{ErrCommitConflict, fmt.Errorf("%s: %w: %w", what, errCloneRaced, err)}
	}
	return translate(fmt.Errorf("%s: %w", what, err))
}

// purgeReplaced deletes the files of the table a published clone
// replaced (CREATE OR REPLACE), as a transaction's replace does, except
// those another table, the clone included, still reaches. It only tidies:
// a failure leaves files no table reads, outside every table's directory
// (Lake.RemoveOrphanTableDirs removes them).
func (l *Lake) purgeReplaced(ctx context.Context, p *clonePlan) {
	if p.replaced == nil {
		return
	}
	others, err := l.otherRefs(p.dst)(ctx)
	if err != nil {
		return
	}
	fsys, err := p.replaced.FS(ctx)
	if err != nil {
		return
	}
	if err := snapshot.ReachableFromMetadata(ctx, fsys, p.meta, "", others); err != nil {
		return
	}
	_ = snapshot.Purge(ctx, p.replaced, others)
}

// cloneMetadata builds the metadata of a clone of src at the given
// location: a new table UUID; src's schemas, partition specs, sort orders,
// properties, last column id, last partition id, last sequence number and
// next row id; and one snapshot, src's snapshot snapshotID with its
// manifest list, which main points at. It writes nothing.
//
// What is dropped, and why:
//   - other snapshots, branches and tags: the clone starts its own history;
//   - the metadata log: iceberg-go deletes the files it names after later
//     commits (write.metadata.delete-after-commit.enabled), and they are
//     src's;
//   - statistics files: they are src's files, which expiry of src may
//     delete;
//   - write.data.path and write.metadata.path: they would make the clone
//     write into src's directories.
//
// INVARIANT: the clone's last sequence number is src's, at least the
// cloned snapshot's, so every later commit to the clone gets a sequence
// number above those of the shared manifests and their entries (which
// equality deletes and inherited sequence numbers rely on). Likewise its
// next row id (v3) is src's, above every row id the shared files hold.
func cloneMetadata(src table.Metadata, snapshotID int64, location string) (table.Metadata, error) {
	snap := src.SnapshotByID(snapshotID)
	if snap == nil {
		return nil, &sentinelError{ErrSnapshotNotFound, fmt.Errorf("the source has no snapshot %d", snapshotID)}
	}
	b, err := table.MetadataBuilderFromBase(src, "" /* no metadata log entry for src's file */)
	if err != nil {
		return nil, fmt.Errorf("read the source's metadata: %w", err)
	}
	if err := b.SetUUID(uuid.New()); err != nil {
		return nil, err
	}
	if err := b.SetLoc(location); err != nil {
		return nil, err
	}
	if err := b.SetSnapshotRef(table.MainBranch, snapshotID, table.BranchRef); err != nil {
		return nil, fmt.Errorf("point main at snapshot %d: %w", snapshotID, err)
	}
	for name := range src.Refs() {
		if name == table.MainBranch {
			continue
		}
		if err := b.RemoveSnapshotRef(name); err != nil {
			return nil, fmt.Errorf("drop ref %s: %w", name, err)
		}
	}
	var others []int64
	for _, s := range src.Snapshots() {
		if s.SnapshotID != snapshotID {
			others = append(others, s.SnapshotID)
		}
	}
	if len(others) > 0 {
		if err := b.RemoveSnapshots(others, false /* postCommit */); err != nil {
			return nil, fmt.Errorf("drop the other snapshots: %w", err)
		}
	}
	b.TrimMetadataLogs(0)
	if err := b.RemoveStatistics(snapshotID); err != nil {
		return nil, err
	}
	if err := b.RemovePartitionStatistics(snapshotID); err != nil {
		return nil, err
	}
	var drop []string
	for _, k := range []string{table.WriteDataPathKey, table.WriteMetadataPathKey} {
		if _, ok := src.Properties()[k]; ok {
			drop = append(drop, k)
		}
	}
	if err := b.RemoveProperties(drop); err != nil {
		return nil, err
	}
	meta, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("build the clone's metadata: %w", err)
	}
	if cur := meta.CurrentSnapshot(); cur == nil || cur.SnapshotID != snapshotID || len(meta.Snapshots()) != 1 {
		return nil, fmt.Errorf("build the clone's metadata: expected snapshot %d alone, got %d snapshots; this is a bug, please report it", snapshotID, len(meta.Snapshots()))
	}
	return meta, nil
}
