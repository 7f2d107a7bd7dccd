package catalog

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/klauspost/compress/zstd"
)

// StagedCommit is a table change whose new metadata file is written and
// durable but not yet published: publishing it is SwapPointers(Swap).
type StagedCommit struct {
	Ident table.Identifier
	// Base is the metadata the change was computed from; nil for a create.
	Base table.Metadata
	// Metadata is the new metadata, written at MetadataLocation.
	Metadata         table.Metadata
	MetadataLocation string
	// Swap moves the pointer from the base metadata file to the new one.
	// For a change without updates, Swap.New == Swap.Expected: publishing it
	// only asserts that the table did not move, and no file was written.
	Swap PointerSwap
	// remote holds the change for a REST catalog, which publishes
	// requirements and updates, not metadata files.
	remote *remoteCommit
}

// Noop reports whether the change had no updates, so no file was written.
func (s *StagedCommit) Noop() bool {
	if s.remote != nil {
		return len(s.remote.updates) == 0
	}
	return s.Swap.New == s.Swap.Expected
}

// StageCommit validates requirements against the table's current metadata
// (none for a table that does not exist: that is a create), applies the
// updates, and writes the new metadata file durably. It does not move the
// pointer: pass the returned Swap, alone or with others, to SwapPointers,
// and call Discard when it is not published. A failed requirement returns
// an error wrapping table.ErrCommitFailed.
func (c *Catalog) StageCommit(ctx context.Context, ident table.Identifier,
	reqs []table.Requirement, updates []table.Update,
) (*StagedCommit, error) {
	if c.remote != nil {
		return nil, errRemote("staging a commit")
	}
	ident, err := Normalize(ident)
	if err != nil {
		return nil, err
	}
	baseLoc, baseTbl, err := c.current(ctx, ident)
	if err != nil {
		return nil, err
	}
	var base table.Metadata
	if baseTbl != nil {
		base = baseTbl.Metadata()
	}
	for _, r := range reqs {
		if err := r.Validate(base); err != nil {
			return nil, requirementError(ident, r, base, err)
		}
	}
	if err := staleSnapshot(ident, base, updates); err != nil {
		return nil, err
	}
	if base != nil && len(updates) == 0 {
		return &StagedCommit{
			Ident: ident, Base: base, Metadata: base, MetadataLocation: baseLoc,
			Swap: PointerSwap{Ident: ident, Expected: baseLoc, New: baseLoc},
		}, nil
	}
	if base == nil && len(updates) == 0 {
		return nil, fmt.Errorf("create table %s: the commit has no updates; pass at least the schema", identString(ident))
	}

	start := base
	version := 0
	if base == nil {
		if err := c.requireNamespace(ctx, ident[0]); err != nil {
			return nil, err
		}
		loc, err := c.NewTableLocation(ident)
		if err != nil {
			return nil, err
		}
		// A create starts from an empty table at a fresh location; the
		// updates (a staged create) may still set another location, which
		// checkLocations then has to accept.
		start, err = table.NewMetadata(iceberg.NewSchema(0), nil, table.UnsortedSortOrder, loc, nil)
		if err != nil {
			return nil, fmt.Errorf("create table %s: %w", identString(ident), err)
		}
	} else {
		version = metadataVersion(baseLoc) + 1
	}
	var meta table.Metadata
	if base == nil && hasAction(updates, table.UpdateAddSchema) {
		// a full staged create: build from nothing, so that the schema,
		// spec and sort order get the IDs the client's snapshots and
		// manifests name (an empty start would hold schema 0 already)
		meta, err = buildCreate(start.Location(), updates)
	} else {
		meta, err = table.UpdateTableMetadata(start, updates, baseLoc)
	}
	if err != nil {
		return nil, fmt.Errorf("commit to table %s: cannot apply the updates: %w", identString(ident), err)
	}
	newLoc, err := c.writeVersion(ctx, ident, meta, version)
	if err != nil {
		return nil, err
	}

	return &StagedCommit{
		Ident: ident, Base: base, Metadata: meta, MetadataLocation: newLoc,
		Swap: PointerSwap{Ident: ident, Expected: baseLoc, New: newLoc},
	}, nil
}

// writeVersion checks that meta keeps the table inside the lake and writes
// it, durably, as metadata version version; it returns the file's location.
func (c *Catalog) writeVersion(ctx context.Context, ident table.Identifier, meta table.Metadata, version int) (string, error) {
	if err := c.checkLocations(ident, meta); err != nil {
		return "", err
	}
	newLoc, err := newMetadataLocation(meta, version)
	if err != nil {
		return "", fmt.Errorf("commit to table %s: %w", identString(ident), err)
	}
	if err := c.checkInLake(ident, "metadata file", newLoc); err != nil {
		return "", err
	}
	if err := c.WriteMetadata(ctx, meta, newLoc); err != nil {
		return "", fmt.Errorf("commit to table %s: %w", identString(ident), err)
	}
	return newLoc, nil
}

// Discard removes the metadata files of staged commits that were not
// published. Files already gone count as removed.
func (c *Catalog) Discard(staged ...*StagedCommit) error {
	var errs []error
	for _, s := range staged {
		if s == nil || s.Noop() || s.MetadataLocation == "" {
			continue
		}
		if err := c.fs.Remove(s.MetadataLocation); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove unpublished metadata file %s: %w", s.MetadataLocation, err))

			continue
		}
		if s.Base == nil {
			c.removeEmptyDirs(s.MetadataLocation, s.Metadata.Location())
		}
	}

	return errors.Join(errs...)
}

// removeEmptyDirs removes the directories from the one holding file up to
// and including top, as long as they are empty, so an unpublished create
// leaves no trace. Non-empty directories stay.
func (c *Catalog) removeEmptyDirs(file, top string) {
	if !c.Local() {
		return // object stores have no directories
	}
	dir, err := localPath(file)
	if err != nil {
		return
	}
	topPath, err := localPath(top)
	if err != nil {
		return
	}
	topPath = filepath.Clean(topPath)
	for dir = filepath.Dir(dir); within(c.dir, dir) && (dir == topPath || within(topPath, dir)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			return
		}
	}
}

// CommitTable commits one table change: StageCommit, then SwapPointers from
// the base metadata file to the new one. When the swap fails and nothing
// moved, the new metadata file is removed. A failed requirement or a lost
// race returns an error wrapping table.ErrCommitFailed, which makes
// iceberg-go's Transaction.Commit refresh and replay (table property
// commit.retry.num-retries). A table that does not exist is created (a
// staged create; use the table.AssertCreate requirement).
func (c *Catalog) CommitTable(ctx context.Context, ident table.Identifier,
	reqs []table.Requirement, updates []table.Update,
) (table.Metadata, string, error) {
	if c.remote != nil {
		return c.remote.CommitTable(ctx, ident, reqs, updates)
	}
	staged, err := c.StageCommit(ctx, ident, reqs, updates)
	if err != nil {
		return nil, "", err
	}
	if staged.Noop() {
		return staged.Metadata, staged.MetadataLocation, nil
	}
	if err := c.publish(ctx, []*StagedCommit{staged}); err != nil {
		return nil, "", err
	}

	return staged.Metadata, staged.MetadataLocation, nil
}

// CommitTransaction commits changes to several tables atomically: every
// change is staged, then one SwapPointers publishes them all, or none. On
// failure every metadata file written is removed, and the error names the
// table that failed.
func (c *Catalog) CommitTransaction(ctx context.Context, commits []table.TableCommit) error {
	if c.remote != nil {
		return c.remote.CommitTransaction(ctx, commits)
	}
	if len(commits) == 0 {
		return fmt.Errorf("commit transaction: %w; pass at least one table commit", icecatalog.ErrEmptyCommitList)
	}
	seen := map[string]bool{}
	for i, tc := range commits {
		if len(tc.Identifier) == 0 {
			return fmt.Errorf("commit transaction: commit %d: %w", i, icecatalog.ErrMissingIdentifier)
		}
		ident, err := Normalize(tc.Identifier)
		if err != nil {
			return fmt.Errorf("commit transaction: %w", err)
		}
		if k := identString(ident); seen[k] {
			return fmt.Errorf("commit transaction: table %s appears twice; merge its changes into one commit", k)
		} else {
			seen[k] = true
		}
	}
	staged := make([]*StagedCommit, 0, len(commits))
	for _, tc := range commits {
		s, err := c.StageCommit(ctx, tc.Identifier, tc.Requirements, tc.Updates)
		if err != nil {
			return errors.Join(fmt.Errorf("commit transaction: %w", err), c.Discard(staged...))
		}
		staged = append(staged, s)
	}

	if err := c.publish(ctx, staged); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}

	return nil
}

// publish swaps the pointers of staged commits and, when nothing moved,
// removes their files.
func (c *Catalog) publish(ctx context.Context, staged []*StagedCommit) error {
	swaps := make([]PointerSwap, len(staged))
	for i, s := range staged {
		swaps[i] = s.Swap
	}
	err := c.SwapPointers(ctx, swaps)
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrCommitStateUnknown) {
		// The pointers may have moved: the files may be live.
		return err
	}
	if rmErr := c.Discard(staged...); rmErr != nil {
		return errors.Join(err, rmErr)
	}

	return err
}

// requirementError turns a failed requirement into an error that wraps
// table.ErrCommitFailed (and the iceberg-go not-found / already-exists
// sentinels where they apply), so iceberg-go retries it.
func requirementError(ident table.Identifier, r table.Requirement, base table.Metadata, err error) error {
	sentinels := []error{table.ErrCommitFailed, err}
	switch {
	case base != nil && r.GetType() == "assert-create":
		sentinels = append(sentinels, icecatalog.ErrTableAlreadyExists)

		return newError(sentinels, "commit to table %s failed: the table already exists; "+
			"choose another name, or drop the table first", identString(ident))
	case base == nil:
		sentinels = append(sentinels, icecatalog.ErrNoSuchTable)

		return newError(sentinels, "commit to table %s failed: the table does not exist; "+
			"check the name, or create the table first", identString(ident))
	}

	return newError(sentinels, "commit to table %s failed: %s; reload the table and retry",
		identString(ident), lowerFirst(err.Error()))
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}

	return string(unicode.ToLower(r)) + s[n:]
}

// checkLocations refuses metadata that would put the table, its data or its
// metadata outside the lake.
func (c *Catalog) checkLocations(ident table.Identifier, meta table.Metadata) error {
	loc := meta.Location()
	if err := c.checkInLake(ident, "location", loc); err != nil {
		return err
	}
	if !locWithin(c.root, locDir(loc)) {
		// A table directory is <lake>/<namespace>/<dir>: never the lake
		// root or a namespace directory, which other tables share.
		return newError([]error{ErrOutsideLake},
			"table %s: location %q is not a table directory of the lake %q; let skade choose the location",
			identString(ident), loc, c.root)
	}
	props := meta.Properties()
	for _, key := range []string{table.WriteDataPathKey, table.WriteMetadataPathKey} {
		if v, ok := props[key]; ok {
			if err := c.checkInLake(ident, "property "+key, v); err != nil {
				return err
			}
		}
	}

	return nil
}

// newMetadataLocation names the next metadata file the standard way:
// <location>/metadata/<version, 5 digits>-<uuid>[.codec].metadata.json.
func newMetadataLocation(meta table.Metadata, version int) (string, error) {
	provider, err := table.LoadLocationProvider(meta.Location(), meta.Properties())
	if err != nil {
		return "", err
	}

	return provider.NewTableMetadataFileLocation(version)
}

// metadataVersion parses the version out of a metadata file name
// (00012-<uuid>.metadata.json), or -1.
func metadataVersion(loc string) int {
	name := path.Base(loc)
	i := strings.IndexByte(name, '-')
	if i <= 0 {
		return -1
	}
	v, err := strconv.Atoi(strings.TrimPrefix(name[:i], "v"))
	if err != nil || v < 0 {
		return -1
	}

	return v
}

// WriteMetadata writes meta as Iceberg metadata JSON at location, which must
// lie inside the lake and not exist yet. The compression follows the file
// name (.gz.metadata.json, .zstd.metadata.json or plain). The file and its
// directory are fsync'd before WriteMetadata returns; on error the partial
// file is removed.
func (c *Catalog) WriteMetadata(ctx context.Context, meta table.Metadata, location string) (err error) {
	if c.remote != nil {
		return errRemote("writing a metadata file")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	w, err := c.fs.CreateExclusive(location)
	if err != nil {
		return fmt.Errorf("write metadata file: %w", err)
	}
	defer func() {
		if cerr := w.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("write metadata file: %w", cerr)
		}
		if err != nil {
			_ = c.fs.Remove(location)
			return
		}
		// The file is durable now; cache what it holds, so the next commit
		// need not parse it back.
		c.metaCache.Add(location, meta)
	}()

	var out io.Writer = w
	var codec io.WriteCloser
	switch {
	case strings.HasSuffix(location, ".gz.metadata.json"):
		codec = gzip.NewWriter(w)
	case strings.HasSuffix(location, ".zstd.metadata.json"):
		enc, zerr := zstd.NewWriter(w)
		if zerr != nil {
			return zerr
		}
		codec = enc
	}
	if codec != nil {
		out = codec
	}
	if err := c.encodeMetadata(out, meta); err != nil {
		if codec != nil {
			_ = codec.Close()
		}

		return fmt.Errorf("write metadata file %s: %w", location, err)
	}
	if codec != nil {
		if err := codec.Close(); err != nil {
			return fmt.Errorf("write metadata file %s: %w", location, err)
		}
	}
	return nil
}

// encodeMetadata writes meta as JSON, with each snapshot's encoding
// reused from earlier commits (see metadataJSON).
func (c *Catalog) encodeMetadata(w io.Writer, meta table.Metadata) error {
	b, err := c.snapJSON.marshalMetadata(meta)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	_, err = w.Write([]byte("\n"))
	return err
}

func hasAction(updates []table.Update, action string) bool {
	return slices.ContainsFunc(updates, func(u table.Update) bool { return u.Action() == action })
}

// buildCreate builds a new table's metadata from its staged create's
// updates alone (assign-uuid, upgrade-format-version, add-schema, …), at
// loc unless they set another location.
func buildCreate(loc string, updates []table.Update) (table.Metadata, error) {
	version := 2
	for _, u := range updates {
		if u.Action() != table.UpdateUpgradeFormatVersion {
			continue
		}
		var v struct {
			FormatVersion int `json:"format-version"`
		}
		b, err := json.Marshal(u)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, err
		}
		version = v.FormatVersion
	}
	b, err := table.NewMetadataBuilder(version)
	if err != nil {
		return nil, err
	}
	if err := b.SetLoc(loc); err != nil {
		return nil, err
	}
	if !hasAction(updates, table.UpdateAssignUUID) {
		if err := b.SetUUID(uuid.New()); err != nil {
			return nil, err
		}
	}
	for _, u := range updates {
		if err := u.Apply(b); err != nil {
			return nil, err
		}
	}
	return b.Build()
}

// staleSnapshot fails a commit whose new snapshot was numbered on an
// older state of the table: its sequence number is not above the table's
// last one, or (v3) its first row id is below the table's next row id. A
// commit to another branch moved those numbers without moving the ref this
// commit asserts, so its requirements pass; the writer must renumber, so
// the error wraps table.ErrCommitFailed, on which iceberg-go refreshes
// and rebuilds the snapshot (and skade rebases).
func staleSnapshot(ident table.Identifier, base table.Metadata, updates []table.Update) error {
	if base == nil || base.Version() < 2 {
		return nil
	}
	for _, u := range updates {
		if u.Action() != table.UpdateAddSnapshot {
			continue
		}
		raw, err := json.Marshal(u)
		if err != nil {
			return nil // applying it reports what is wrong
		}
		var add struct {
			Snapshot struct {
				Parent     *int64 `json:"parent-snapshot-id"`
				Seq        int64  `json:"sequence-number"`
				FirstRowID *int64 `json:"first-row-id"`
			} `json:"snapshot"`
		}
		if json.Unmarshal(raw, &add) != nil {
			return nil
		}
		sn := add.Snapshot
		if sn.Parent != nil && sn.Seq <= base.LastSequenceNumber() {
			return fmt.Errorf("%w: commit to table %s: the new snapshot has sequence number %d, but another commit (to another branch) took the table to %d; refresh and retry",
				table.ErrCommitFailed, identString(ident), sn.Seq, base.LastSequenceNumber())
		}
		if base.Version() >= 3 && sn.FirstRowID != nil && *sn.FirstRowID < base.NextRowID() {
			return fmt.Errorf("%w: commit to table %s: the new snapshot's first row id %d is behind the table's next row id %d after another commit; refresh and retry",
				table.ErrCommitFailed, identString(ident), *sn.FirstRowID, base.NextRowID())
		}
	}
	return nil
}
