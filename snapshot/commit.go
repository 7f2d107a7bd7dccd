package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
)

// Commit runs one write transaction on tbl whose new files all go through
// a catalog.Tracker, so that a write that fails removes exactly what it
// wrote: stage stages the change into the transaction, and Commit commits
// it through cat. what prefixes errors ("delete main.t").
//
// With opts.Assert, the commit requires that the main branch still points
// at tbl's snapshot (a conflict instead of a replay on a newer head).
//
// When the commit fails, the written files are removed, unless the
// outcome is unknown: then reload reads the table again, and if its head
// is this write's snapshot the write landed and Commit returns it; if the
// table cannot be read the files are kept (orphan cleanup removes them if
// they are not referenced), since deleting them could lose committed data.
// A lost race wraps table.ErrCommitFailed.
//
// After a commit that iceberg-go retried internally, the manifests and
// manifest lists of the attempts that lost are removed (unless
// opts.KeepStrays).
func Commit(ctx context.Context, cat *catalog.Catalog, tbl *table.Table, what string, opts CommitOptions, stage func(*table.Transaction) error, reload func(context.Context) (*table.Table, error)) (*table.Table, error) {
	opError := func(err error) error {
		if strings.HasPrefix(err.Error(), what+":") {
			return err
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	tracker := catalog.NewTracker(cat.FS())
	var fsys iceio.IO = IdempotentRemove{tracker}
	if opts.IO != nil {
		fsys = opts.IO(IdempotentRemove{tracker})
	}
	if opts.Branch != "" {
		// tbl is the branch's view (OnRef); so are the tables this
		// function compares with it after the commit
		load := reload
		reload = func(ctx context.Context) (*table.Table, error) {
			cur, err := load(ctx)
			if err != nil {
				return nil, err
			}
			view, _, err := OnRef(cur, strings.Join(cur.Identifier(), "."), opts.Branch)
			return view, err
		}
	}
	txn, err := newTransaction(tbl, fsys, cat, opts.Assert, opts.Branch)
	if err != nil {
		return nil, opError(err)
	}
	if err := stage(txn); err != nil {
		return nil, errors.Join(opError(err), tracker.RemoveCreated())
	}
	unlock := cat.LockTable(tbl.Identifier())
	committed, err := txn.Commit(ctx)
	unlock()
	if err != nil && errors.Is(err, table.ErrCommitFailed) && opts.Rebase != nil {
		if rb := opts.Rebase(); rb != nil {
			committed, err = rebase(ctx, cat, tbl, fsys, rb, reload, opts.Branch)
		}
	}
	if err != nil {
		return failedCommit(ctx, tracker, opError(err), err, reload)
	}
	if opts.Branch != "" {
		view, _, verr := OnRef(committed, strings.Join(committed.Identifier(), "."), opts.Branch)
		if verr != nil {
			return nil, fmt.Errorf("%s: committed, but reading the branch back failed: %w", what, verr)
		}
		committed = view
	}
	if opts.KeepStrays {
		return committed, nil
	}
	if err := removeStrays(tbl, committed, tracker); err != nil {
		return nil, fmt.Errorf("%s: committed, but removing files of retried attempts failed: %w", what, err)
	}
	return committed, nil
}

// CommitOptions tune Commit.
type CommitOptions struct {
	// Assert requires the branch written (main, or Branch) to still point
	// at the table's snapshot.
	Assert bool
	// Branch, when set, commits to that branch instead of main: tbl is
	// then the branch's view (OnRef), and so is the table Commit returns.
	Branch string
	// IO wraps the tracked IO the transaction writes through (progress
	// reporting); nil uses it as it is.
	IO func(IdempotentRemove) iceio.IO
	// KeepStrays skips the removal of retried attempts' manifests, for a
	// transaction that commits several snapshots (compaction: the check
	// keeps only the head's manifest list and would delete the first
	// snapshot's). Such a commit must Assert, so that it had no retried
	// attempt.
	KeepStrays bool
	// Rebase, when set and returning non-nil, lets a write that asserted
	// its snapshot survive losing the race: the commits that landed since
	// are validated against it (Rebaser.Validate) and, if none conflicts,
	// the same change is staged again on the new head and committed (see
	// rebase). It is called after stage, once the change is known.
	Rebase func() Rebaser
}

// A Rebaser is a staged row-level write (MERGE, UPDATE, DELETE) that can
// be checked against the commits that landed after the snapshot it read,
// and staged again on top of them: Iceberg's refresh-and-replay with
// conflict validation, per data file.
type Rebaser interface {
	// Validate returns nil when no commit between the write's snapshot
	// and head's conflicts with it, else an error wrapping
	// table.ErrCommitFailed that says which commit and why.
	Validate(ctx context.Context, head *table.Table) error
	// Restage stages the write's change, the same files added and
	// removed, into txn, a transaction on a newer head.
	Restage(ctx context.Context, txn *table.Transaction) error
}

// rebase commits rb on the table's current head after the first attempt
// lost the race: reload, validate the commits since, stage again with
// the head asserted, and commit, as often as the table's commit policy
// allows (commit.retry.num-retries, with its backoff). The files it
// writes go through fsys, so a failure removes them with the rest.
func rebase(ctx context.Context, cat *catalog.Catalog, tbl *table.Table, fsys iceio.IO, rb Rebaser, reload func(context.Context) (*table.Table, error), branch string) (*table.Table, error) {
	props := tbl.Metadata().Properties()
	retries := props.GetInt(table.CommitNumRetriesKey, CommitRetries)
	policy := RetryPolicyOf(props, uint64(time.Now().UnixNano()))
	start := time.Now()
	var lastErr error
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			wait := policy.Wait(attempt - 1)
			if time.Since(start)+wait > policy.Total {
				break
			}
			if err := Sleep(ctx, wait); err != nil {
				return nil, errors.Join(lastErr, err)
			}
		}
		committed, err := rebaseOnce(ctx, cat, tbl.Identifier(), fsys, rb, reload, branch)
		if err == nil || !errors.Is(err, table.ErrCommitFailed) {
			return committed, err
		}
		var ve *validationError
		if errors.As(err, &ve) {
			return nil, ve.err
		}
		lastErr = err
	}
	return nil, fmt.Errorf("lost the commit race %d times (commit.retry.num-retries, commit.retry.total-timeout-ms): %w", retries+1, lastErr)
}

// rebaseOnce is one attempt of rebase, under the process's commit lock
// on the table.
func rebaseOnce(ctx context.Context, cat *catalog.Catalog, id table.Identifier, fsys iceio.IO, rb Rebaser, reload func(context.Context) (*table.Table, error), branch string) (*table.Table, error) {
	defer cat.LockTable(id)()
	head, err := reload(ctx)
	if err != nil {
		return nil, fmt.Errorf("reloading the table after losing a commit race: %w", err)
	}
	if err := rb.Validate(ctx, head); err != nil {
		return nil, &validationError{err}
	}
	txn, err := newTransaction(head, fsys, cat, true, branch)
	if err != nil {
		return nil, err
	}
	if err := rb.Restage(ctx, txn); err != nil {
		return nil, err
	}
	return txn.Commit(ctx)
}

// newTransaction starts a transaction on t that writes through fsys and
// commits through cat, to branch (main when empty); with assert it
// requires that the branch still points at t's snapshot.
func newTransaction(t *table.Table, fsys iceio.IO, cat *catalog.Catalog, assert bool, branch string) (*table.Transaction, error) {
	staged := table.New(t.Identifier(), t.Metadata(), t.MetadataLocation(),
		func(context.Context) (iceio.IO, error) { return fsys, nil }, cat)
	return BranchTransaction(staged, branch, assert)
}

// BranchTransaction starts a transaction on t that commits to branch
// (main when empty). t is the branch's view (OnRef) for a branch other
// than main. With assert the transaction requires that the branch still
// points at the snapshot t read.
func BranchTransaction(t *table.Table, branch string, assert bool) (*table.Transaction, error) {
	if branch == "" {
		branch = table.MainBranch
	}
	txn, err := t.NewTransactionOnBranchWithError(branch)
	if err != nil {
		return nil, err
	}
	if assert {
		if err := txn.AssertRefSnapshotID(branch); err != nil {
			return nil, err
		}
	}
	return txn, nil
}

// validationError is a conflict Rebaser.Validate found: final, where a
// lost race is retried.
type validationError struct{ err error }

func (e *validationError) Error() string { return e.err.Error() }
func (e *validationError) Unwrap() error { return e.err }

// failedCommit removes the files of a commit that failed, unless its
// outcome is unknown and the write may have landed (see Commit).
func failedCommit(ctx context.Context, tracker *catalog.Tracker, wrapped, err error, reload func(context.Context) (*table.Table, error)) (*table.Table, error) {
	if !errors.Is(err, table.ErrCommitFailed) {
		cur, lerr := reload(context.WithoutCancel(ctx))
		if lerr != nil {
			return nil, errors.Join(wrapped, fmt.Errorf("the commit's outcome is unknown and its files were kept: %w", lerr))
		}
		if head := cur.CurrentSnapshot(); head != nil && slices.Contains(tracker.Created(), head.ManifestList) {
			return cur, nil
		}
	}
	if cerr := tracker.RemoveCreated(); cerr != nil {
		wrapped = errors.Join(wrapped, fmt.Errorf("removing the failed write's files: %w", cerr))
	}
	if errors.Is(err, table.ErrCommitFailed) {
		return nil, fmt.Errorf("%w; another writer committed first and nothing of this write was kept; retry it", wrapped)
	}
	return nil, wrapped
}

// removeStrays removes the manifests and manifest lists that attempts of
// a retried commit wrote and the committed snapshot does not use.
func removeStrays(before, committed *table.Table, tracker *catalog.Tracker) error {
	created := tracker.Created()
	head := committed.CurrentSnapshot()
	if head == nil || len(created) == 0 {
		return nil
	}
	var meta []string
	for _, p := range created {
		if strings.HasSuffix(p, ".avro") {
			meta = append(meta, p)
		}
	}
	if len(meta) <= 2 {
		// The common case: one manifest and one manifest list, both used
		// (an attempt that was retried writes at least two more).
		return nil
	}
	keep := FileSet{}
	old := map[int64]bool{}
	for _, s := range before.Metadata().Snapshots() {
		old[s.SnapshotID] = true
	}
	for _, s := range committed.Metadata().Snapshots() {
		if old[s.SnapshotID] && s.SnapshotID != head.SnapshotID {
			continue
		}
		keep.Add(s.ManifestList)
		manifests, err := s.Manifests(tracker)
		if err != nil {
			return err
		}
		for _, m := range manifests {
			keep.Add(m.FilePath())
		}
	}
	for _, p := range meta {
		if !keep.Has(p) {
			if err := tracker.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// IdempotentRemove is a Tracker that treats removing a missing file as
// done, as object stores do. iceberg-go deletes old metadata files after
// each commit, and two writers racing on one table may both delete the
// same file.
type IdempotentRemove struct{ *catalog.Tracker }

func (r IdempotentRemove) Remove(name string) error {
	if err := r.Tracker.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
