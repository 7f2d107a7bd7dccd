package lake

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/snapshot"
)

// A transaction (BEGIN … COMMIT, or Session.Begin) stages every change in
// memory and in files no pointer names yet:
//
//   - Each table the transaction touches, read or written, is pinned at
//     its committed metadata when first touched (an entry). Later
//     statements resolve the name to the entry, so they see the
//     transaction's own writes and nobody else's.
//   - A write runs the same iceberg-go stage functions as autocommit, on a
//     table whose catalog is the entry itself: "committing" applies the
//     updates to the entry's metadata in memory. Data files and manifests
//     are written at once, through a Tracker per table incarnation.
//   - CREATE makes an entry with fresh metadata at a new location; DROP
//     empties the entry; CREATE OR REPLACE does both.
//   - COMMIT writes one metadata file per changed table and publishes them
//     all with one catalog.Publish: a compare-and-swap of every pointer
//     from the location the transaction started from, in one bbolt
//     transaction. If any table moved meanwhile nothing is published, the
//     error names the table and wraps ErrCommitConflict, and every file the
//     transaction wrote is removed.
//   - ROLLBACK removes every file the transaction wrote, and the
//     directories it made for them.
//
// A statement that fails inside a transaction aborts it: later statements
// are refused until ROLLBACK (COMMIT then rolls back too), as in Postgres.
type txn struct {
	s *Session
	// implicit transactions wrap one autocommit DDL statement.
	implicit bool
	// start is when BEGIN ran: now() inside the transaction.
	start time.Time
	// aborted is the error of the statement that aborted the transaction.
	aborted error
	entries map[string]*txEntry
	order   []*txEntry
	// garbage are incarnations superseded inside the transaction (a table
	// created, written, then dropped or replaced): nothing will reference
	// their files, so they go at COMMIT as at ROLLBACK.
	garbage []*incarnation
	// views the transaction touched (txn_views.go)
	views     map[string]*txView
	viewOrder []*txView
}

// txEntry is one table as the transaction sees it.
type txEntry struct {
	id table.Identifier
	// baseLoc and baseMeta are the committed table when the transaction
	// first touched it; "" and nil when it did not exist.
	baseLoc  string
	baseMeta table.Metadata
	// meta is the table now; nil when it does not exist (dropped, or it
	// never did).
	meta table.Metadata
	// created means meta is a table made inside the transaction, written
	// whole at COMMIT; otherwise COMMIT replays updates on baseMeta.
	created bool
	updates []table.Update
	// cur tracks the files written for the current incarnation.
	cur *incarnation
	// dirty entries have something to publish.
	dirty bool
	// replaced means COMMIT drops or replaces the committed table, whose
	// files are then purged.
	replaced bool
	// assert makes COMMIT require that the committed table has not moved
	// even if the transaction did not change it (a clone's source).
	assert bool
}

// incarnation is one life of a table inside a transaction, with the files
// written for it.
type incarnation struct {
	tracker  *catalog.Tracker
	location string
	// created incarnations made their table directory: a rollback removes
	// it, where for a committed table only directories under data/ go.
	created bool
}

// TxAbortedError is what statements in an aborted transaction return.
// It matches ErrTxAborted; Cause is the error that aborted the
// transaction, named in the message but not wrapped, so that callers
// looking for a statement's position (plan errors) do not find the old
// statement's.
type TxAbortedError struct{ Cause error }

func (e *TxAbortedError) Error() string {
	return fmt.Sprintf("current transaction is aborted, commands ignored until end of transaction block; ROLLBACK it (it failed on: %v)", e.Cause)
}

func (e *TxAbortedError) Unwrap() error { return ErrTxAborted }

func txKey(id table.Identifier) string { return strings.Join(id, "\x00") }

func (tx *txn) newIncarnation(location string, created bool) *incarnation {
	return &incarnation{tracker: catalog.NewTracker(tx.s.lk.cat.FS()), location: location, created: created}
}

// entry returns the transaction's view of table id, pinning the
// committed table on first touch.
func (tx *txn) entry(ctx context.Context, id table.Identifier) (*txEntry, error) {
	if e, ok := tx.entries[txKey(id)]; ok {
		return e, nil
	}
	e := &txEntry{id: slices.Clone(id)}
	tbl, err := tx.s.lk.load(ctx, id)
	switch {
	case err == nil:
		e.baseLoc, e.baseMeta, e.meta = tbl.MetadataLocation(), tbl.Metadata(), tbl.Metadata()
		e.cur = tx.newIncarnation(tbl.Location(), false)
	case errors.Is(err, ErrTableNotFound):
		// absent for the whole transaction, unless it creates the table
	default:
		return nil, err
	}
	tx.entries[txKey(id)] = e
	tx.order = append(tx.order, e)
	return e, nil
}

// table returns the iceberg-go table for the entry's current state, whose
// commits stage into the entry.
func (tx *txn) table(e *txEntry) *table.Table {
	loc := e.baseLoc
	if e.created {
		loc = ""
	}
	cur := e.cur
	return table.New(e.id, e.meta, loc,
		func(context.Context) (iceio.IO, error) { return txIO{cur.tracker}, nil }, txCatalog{tx: tx, e: e})
}

// lookup resolves id for a statement in the transaction.
func (tx *txn) lookup(ctx context.Context, id table.Identifier) (*table.Table, error) {
	e, err := tx.entry(ctx, id)
	if err != nil {
		return nil, err
	}
	if e.meta == nil {
		return nil, &sentinelError{ErrTableNotFound, fmt.Errorf("table %s does not exist", displayName(id))}
	}
	return tx.table(e), nil
}

// create makes id a new table with metadata meta, replacing the table of
// that name if there is one (the caller decides whether that is allowed).
func (tx *txn) create(ctx context.Context, id table.Identifier, meta table.Metadata) (*txEntry, error) {
	if v := tx.views[txKey(id)]; v != nil && v.cur != nil {
		return nil, &sentinelError{ErrTableExists, fmt.Errorf("table %s: a view has that name (created in this transaction); a name is a table's or a view's", displayName(id))}
	}
	e, err := tx.entry(ctx, id)
	if err != nil {
		return nil, err
	}
	tx.supersede(e)
	e.meta, e.created, e.updates, e.dirty = meta, true, nil, true
	e.cur = tx.newIncarnation(meta.Location(), true)
	return e, nil
}

// drop removes table id inside the transaction.
func (tx *txn) drop(ctx context.Context, id table.Identifier) error {
	e, err := tx.entry(ctx, id)
	if err != nil {
		return err
	}
	if e.meta == nil {
		return &sentinelError{ErrTableNotFound, fmt.Errorf("drop table %s: the table does not exist", displayName(id))}
	}
	tx.supersede(e)
	e.meta, e.created, e.updates, e.dirty = nil, false, nil, true
	return nil
}

// supersede ends the entry's current incarnation: its files become
// garbage, and a committed table is marked replaced.
func (tx *txn) supersede(e *txEntry) {
	if e.cur != nil {
		tx.garbage = append(tx.garbage, e.cur)
		e.cur = nil
	}
	if e.baseMeta != nil {
		e.replaced = true
	}
}

// write runs a statement's stage function on the transaction's copy of
// tbl: the change lands in the entry, not in the catalog.
func (tx *txn) write(ctx context.Context, tbl *Table, op string, assert bool, stage func(*table.Transaction) error) error {
	e, err := tx.entry(ctx, tbl.id)
	if err != nil {
		return err
	}
	if e.meta == nil {
		return &sentinelError{ErrTableNotFound, fmt.Errorf("%s %s: the table does not exist", op, tbl.Name())}
	}
	base := tx.table(e)
	if tbl.branch != "" {
		// the branch's view, committing into the entry
		view, _, err := snapshot.OnRef(base, tbl.Name(), tbl.branch)
		if err != nil {
			return translate(tbl.opError(op, err))
		}
		base = table.New(e.id, view.Metadata(), base.MetadataLocation(), base.FS, txCatalog{tx: tx, e: e})
	}
	if assert && snapshotID(tbl.tbl.Metadata()) != snapshotID(base.Metadata()) {
		return &sentinelError{ErrCommitConflict, fmt.Errorf("%s %s: the table changed in this transaction after the statement read it", op, tbl.Name())}
	}
	itxn, err := snapshot.BranchTransaction(base, tbl.branch, false)
	if err != nil {
		return translate(tbl.opError(op, err))
	}
	if err := stage(itxn); err != nil {
		return translate(tbl.opError(op, err))
	}
	if err := checkConstraints(ctx, tbl.Name(), base, tbl.branch, itxn); err != nil {
		return translate(tbl.opError(op, err))
	}
	committed, err := itxn.Commit(ctx)
	if err != nil {
		return translate(tbl.opError(op, err))
	}
	if tbl.branch != "" {
		if committed, _, err = snapshot.OnRef(committed, tbl.Name(), tbl.branch); err != nil {
			return translate(tbl.opError(op, err))
		}
	}
	if snap := committed.CurrentSnapshot(); snap != nil && snap.SnapshotID != snapshotID(tbl.tbl.Metadata()) {
		if tx.implicit {
			// the statement's own transaction (CREATE TABLE … AS)
			// publishes this snapshot when the statement ends
			tx.s.lastCommit = snap.SnapshotID
		} else {
			tx.s.lastStaged = true
		}
	}
	return nil
}

func snapshotID(m table.Metadata) int64 {
	if m == nil || m.CurrentSnapshot() == nil {
		return -1
	}
	return m.CurrentSnapshot().SnapshotID
}

// testHookBeforePublish, when set, runs inside COMMIT after every metadata
// file is written and before the catalog swap; an error it returns fails
// the commit there. Tests inject faults with it.
var testHookBeforePublish func() error

// commit publishes every changed table at once.
func (tx *txn) commit(ctx context.Context) error {
	if tx.aborted != nil {
		cause := tx.aborted
		err := tx.rollback()
		return errors.Join(&sentinelError{ErrTxAborted, fmt.Errorf("commit: the transaction was aborted and has been rolled back (it failed on: %v)", cause)}, err)
	}
	cat := tx.s.lk.cat
	var staged []*catalog.StagedCommit
	fail := func(err error) error {
		return errors.Join(err, cat.Discard(staged...), tx.rollback())
	}
	for _, e := range tx.order {
		if !e.dirty {
			if e.assert && e.baseLoc != "" {
				staged = append(staged, &catalog.StagedCommit{Ident: e.id, Metadata: e.baseMeta, MetadataLocation: e.baseLoc,
					Swap: catalog.PointerSwap{Ident: e.id, Expected: e.baseLoc, New: e.baseLoc}})
			}
			continue
		}
		var sc *catalog.StagedCommit
		var err error
		switch {
		case e.meta == nil && e.baseLoc == "":
			continue // created and dropped inside the transaction
		case e.meta == nil:
			sc, err = catalog.StageDrop(e.id, e.baseLoc)
		case e.created:
			sc, err = cat.StageMetadata(ctx, e.id, e.baseLoc, e.meta, true)
		case len(e.updates) == 0:
			continue
		default:
			sc, err = cat.StageUpdates(ctx, e.id, e.baseLoc, e.baseMeta, e.updates)
		}
		if err != nil {
			return fail(translate(err))
		}
		staged = append(staged, sc)
	}
	staged = append(staged, tx.viewCommits()...)
	if len(staged) == 0 {
		// nothing to publish; files of tables created and dropped inside
		// the transaction still go
		tx.viewsPublished()
		return tx.removeGarbage()
	}
	if hook := testHookBeforePublish; hook != nil {
		if err := hook(); err != nil {
			return fail(fmt.Errorf("commit: %w", err))
		}
	}
	if err := cat.Publish(ctx, staged...); err != nil {
		if errors.Is(err, catalog.ErrCommitStateUnknown) {
			// The pointers may have moved: keep every file.
			return fmt.Errorf("commit: the outcome is unknown and the transaction's files were kept: %w", err)
		}
		var ce *catalog.ConflictError
		if errors.As(err, &ce) {
			rb := tx.rollback()
			return errors.Join(&sentinelError{ErrCommitConflict, fmt.Errorf("commit: table %s was changed by another writer after this transaction first read it; nothing was committed; run the transaction again: %w", displayName(ce.Ident), err)}, rb)
		}
		return errors.Join(translate(fmt.Errorf("commit: %w", err)), tx.rollback())
	}
	// Published. What follows only tidies: a failure leaves unreferenced
	// files, never a wrong table.
	_ = tx.removeGarbage()
	tx.viewsPublished()
	if cat.Remote() {
		// the REST catalog wrote the metadata and keeps its log
		return nil
	}
	for _, sc := range staged {
		e := tx.entries[txKey(sc.Ident)]
		if e == nil || sc.Swap.View || sc.Noop() {
			continue
		}
		if e.replaced && e.baseMeta != nil {
			tx.purgeBase(ctx, e)
		} else if !e.created && sc.Metadata != nil {
			removeOldMetadata(cat.FS(), e.baseMeta, sc.Metadata)
		}
	}
	return nil
}

// purgeBase deletes the files of a committed table that the transaction
// dropped or replaced, except those another table still references.
func (tx *txn) purgeBase(ctx context.Context, e *txEntry) {
	lk := tx.s.lk
	old := table.New(e.id, e.baseMeta, e.baseLoc, func(context.Context) (iceio.IO, error) { return lk.cat.FS(), nil }, lk.cat)
	others, err := lk.otherRefs(e.id)(ctx)
	if err != nil {
		return
	}
	if e.meta != nil {
		// the replacement is another table now; its files are new, but be
		// safe should it ever share some
		_ = snapshot.ReachableFromMetadata(ctx, lk.cat.FS(), e.meta, "", others)
	}
	_ = snapshot.Purge(ctx, old, others)
}

// removeOldMetadata deletes the metadata files that dropped out of the
// table's metadata log with this commit, as iceberg-go does after its
// own commits when write.metadata.delete-after-commit.enabled is on.
func removeOldMetadata(fsys iceio.IO, base, next table.Metadata) {
	if !next.Properties().GetBool(table.MetadataDeleteAfterCommitEnabledKey, table.MetadataDeleteAfterCommitEnabledDefault) {
		return
	}
	keep := map[string]bool{}
	for e := range next.PreviousFiles() {
		keep[e.MetadataFile] = true
	}
	for e := range base.PreviousFiles() {
		if !keep[e.MetadataFile] {
			// best effort, as iceberg-go's own cleanup: the commit stands,
			// and a file left behind is only an old version
			_ = fsys.Remove(e.MetadataFile)
		}
	}
}

// rollback removes every file the transaction wrote.
func (tx *txn) rollback() error {
	var errs []error
	for _, e := range tx.order {
		if e.cur != nil {
			errs = append(errs, tx.removeFiles(e.cur))
		}
	}
	errs = append(errs, tx.removeGarbage())
	tx.viewsRolledBack()
	tx.order, tx.entries, tx.garbage = nil, map[string]*txEntry{}, nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("rollback: some files the transaction wrote could not be removed: %w", err)
	}
	return nil
}

func (tx *txn) removeGarbage() error {
	var errs []error
	for _, in := range tx.garbage {
		errs = append(errs, tx.removeFiles(in))
	}
	tx.garbage = nil
	return errors.Join(errs...)
}

// removeFiles removes an incarnation's files and the directories that held
// them, when empty: up to the table directory for a table the transaction
// made, up to data/ for a committed one.
func (tx *txn) removeFiles(in *incarnation) error {
	files := in.tracker.Created()
	err := in.tracker.RemoveCreated()
	top := path.Join(in.location, "data")
	if in.created {
		top = in.location
	}
	for _, f := range files {
		tx.s.lk.cat.RemoveEmptyDirs(f, top)
	}
	return err
}

// txCatalog is the catalog iceberg-go commits to inside a transaction:
// the entry, in memory.
type txCatalog struct {
	tx *txn
	e  *txEntry
}

func (c txCatalog) LoadTable(context.Context, table.Identifier) (*table.Table, error) {
	if c.e.meta == nil {
		return nil, &sentinelError{ErrTableNotFound, fmt.Errorf("table %s does not exist", displayName(c.e.id))}
	}
	return c.tx.table(c.e), nil
}

func (c txCatalog) CommitTable(_ context.Context, _ table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if c.e.meta == nil {
		return nil, "", &sentinelError{ErrTableNotFound, fmt.Errorf("table %s was dropped in this transaction", displayName(c.e.id))}
	}
	for _, r := range reqs {
		// Nothing else writes the entry, so a failed requirement is a
		// statement that planned against an older state of it. Not
		// table.ErrCommitFailed: replaying cannot help.
		if err := r.Validate(c.e.meta); err != nil {
			return nil, "", fmt.Errorf("the table changed in this transaction after the statement read it: %w", err)
		}
	}
	next, err := table.UpdateTableMetadata(c.e.meta, updates, "")
	if err != nil {
		return nil, "", err
	}
	c.e.meta = next
	if !c.e.created {
		c.e.updates = append(c.e.updates, updates...)
	}
	c.e.dirty = true
	loc := c.e.baseLoc
	if c.e.created {
		loc = ""
	}
	return next, loc, nil
}

// txIO writes through the incarnation's tracker and removes only files
// the transaction wrote: until COMMIT publishes, every committed file is
// still live.
type txIO struct{ *catalog.Tracker }

func (t txIO) Remove(name string) error {
	if !slices.Contains(t.Tracker.Created(), name) {
		return nil
	}
	if err := t.Tracker.Remove(name); err != nil && !isNotExist(err) {
		return err
	}
	return nil
}

func (t txIO) DeleteFiles(ctx context.Context, paths []string) ([]string, error) {
	created := t.Tracker.Created()
	var own []string
	for _, p := range paths {
		if slices.Contains(created, p) {
			own = append(own, p)
		}
	}
	return t.Tracker.DeleteFiles(ctx, own)
}

// newTableMetadata is version 0 of a new table's metadata, at a fresh
// location, for a create inside a transaction.
func (l *Lake) newTableMetadata(ctx context.Context, id table.Identifier, schema *iceberg.Schema, spec *iceberg.PartitionSpec, props iceberg.Properties) (table.Metadata, error) {
	loc, err := l.newLocation(ctx, id)
	if err != nil {
		return nil, err
	}
	meta, err := table.NewMetadata(schema, spec, table.UnsortedSortOrder, loc, props)
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", displayName(id), err)
	}
	return meta, nil
}

// newLocation allocates a new table directory for id, whose namespace
// must exist.
func (l *Lake) newLocation(ctx context.Context, id table.Identifier) (string, error) {
	if ok, err := l.cat.CheckNamespaceExists(ctx, id[:1]); err != nil {
		return "", translate(err)
	} else if !ok {
		return "", &sentinelError{ErrNamespaceNotFound, fmt.Errorf("create table %s: schema %q does not exist; create it first with CREATE SCHEMA %s", displayName(id), id[0], id[0])}
	}
	return l.cat.PlaceTable(ctx, id)
}
