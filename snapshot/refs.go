package snapshot

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// ErrRefNotFound is returned for a branch or tag a table does not have.
var ErrRefNotFound = errors.New("branch or tag not found")

// ErrRefExists is returned when creating a branch or tag whose name is
// taken.
var ErrRefExists = errors.New("branch or tag already exists")

// sentinelError is an error that says msg and matches sentinel with
// errors.Is, without the sentinel's words in front.
type sentinelError struct {
	sentinel error
	msg      string
}

func (e *sentinelError) Error() string { return e.msg }
func (e *sentinelError) Unwrap() error { return e.sentinel }

func sentinelf(sentinel error, format string, args ...any) error {
	return &sentinelError{sentinel, fmt.Sprintf(format, args...)}
}

// Pinned is tbl with its main branch moved to snap, in memory: reads and
// the planner see snap as the current snapshot. It is never committed
// whole; a write through a branch view commits its own updates (the new
// snapshot and the branch's ref), which the catalog applies to the real
// metadata.
func Pinned(tbl *table.Table, snap *table.Snapshot) (*table.Table, error) {
	if cur := tbl.CurrentSnapshot(); cur != nil && cur.SnapshotID == snap.SnapshotID {
		return tbl, nil
	}
	bld, err := table.MetadataBuilderFromBase(tbl.Metadata(), tbl.MetadataLocation())
	if err != nil {
		return nil, err
	}
	if err := bld.SetSnapshotRef(table.MainBranch, snap.SnapshotID, table.BranchRef); err != nil {
		return nil, err
	}
	meta, err := bld.Build()
	if err != nil {
		return nil, err
	}
	fs := func(ctx context.Context) (iceio.IO, error) { return tbl.FS(ctx) }
	return table.New(tbl.Identifier(), meta, tbl.MetadataLocation(), fs, nil), nil
}

// Ref returns the named branch or tag of meta.
func Ref(meta table.Metadata, tableName, name string) (table.SnapshotRef, error) {
	for n, r := range meta.Refs() {
		if n == name {
			return r, nil
		}
	}
	return table.SnapshotRef{}, sentinelf(ErrRefNotFound, "table %s has no branch or tag %q%s", tableName, name, refList(meta))
}

// refList is ", its refs are a, b" for messages, or "".
func refList(meta table.Metadata) string {
	var names []string
	for n := range meta.Refs() {
		names = append(names, n)
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return "; its branches and tags are " + strings.Join(names, ", ")
}

// OnRef is tbl as the branch or tag name sees it (Pinned at the ref's
// snapshot), with the ref.
func OnRef(tbl *table.Table, tableName, name string) (*table.Table, table.SnapshotRef, error) {
	ref, err := Ref(tbl.Metadata(), tableName, name)
	if err != nil {
		return nil, ref, err
	}
	snap := tbl.Metadata().SnapshotByID(ref.SnapshotID)
	if snap == nil {
		return nil, ref, fmt.Errorf("table %s: %s %q points at snapshot %d, which the metadata does not hold", tableName, ref.SnapshotRefType, name, ref.SnapshotID)
	}
	view, err := Pinned(tbl, snap)
	return view, ref, err
}

// Retention is a ref's retention: MaxRefAge for the ref itself (RETAIN),
// and for a branch MinSnapshots and MaxSnapshotAge of its history (WITH
// SNAPSHOT RETENTION). Zero values leave the table's defaults in force.
type Retention struct {
	MaxRefAge      time.Duration
	MinSnapshots   int
	MaxSnapshotAge time.Duration
}

// RefChange is a ref DDL statement's effect: the updates and the
// requirements that make it commit only on the state it was planned on.
type RefChange struct {
	Updates      []table.Update
	Requirements []table.Requirement
}

// assertRef is the requirement that name still points where meta says
// (or still does not exist).
func assertRef(meta table.Metadata, name string) table.Requirement {
	for n, r := range meta.Refs() {
		if n == name {
			id := r.SnapshotID
			return table.AssertRefSnapshotID(name, &id)
		}
	}
	return table.AssertRefSnapshotID(name, nil)
}

// SetRef creates or replaces the branch or tag name at snapshot snapID
// with retention ret. create and replace say which the statement allows
// (CREATE, REPLACE, CREATE OR REPLACE); ifNotExists makes an existing ref
// a no-op (nil change). The current snapshot is snapID's default (the
// caller's).
func SetRef(meta table.Metadata, tableName, name string, kind table.RefType, snapID int64, ret Retention, create, replace, ifNotExists bool) (*RefChange, error) {
	if name == "" {
		return nil, fmt.Errorf("a branch or tag needs a name")
	}
	if meta.SnapshotByID(snapID) == nil {
		return nil, fmt.Errorf("%w: table %s has no snapshot %d (it never existed or was expired); list snapshots with SELECT * FROM %s$snapshots", ErrSnapshotNotFound, tableName, snapID, tableName)
	}
	if name == table.MainBranch {
		return nil, fmt.Errorf("%q is the table's main branch; it moves with every write, and CALL system.fast_forward or rollback_to_snapshot move it explicitly", name)
	}
	existing, err := Ref(meta, tableName, name)
	exists := err == nil
	switch {
	case exists && ifNotExists:
		return nil, nil
	case exists && !replace:
		return nil, sentinelf(ErrRefExists, "table %s already has a %s named %q; use CREATE OR REPLACE or REPLACE to move it", tableName, existing.SnapshotRefType, name)
	case !exists && !create:
		return nil, sentinelf(ErrRefNotFound, "table %s has no %s %q to replace%s", tableName, kind, name, refList(meta))
	case exists && existing.SnapshotRefType != kind:
		return nil, fmt.Errorf("table %s: %q is a %s, not a %s; drop it first", tableName, name, existing.SnapshotRefType, kind)
	}
	if kind == table.TagRef && (ret.MinSnapshots > 0 || ret.MaxSnapshotAge > 0) {
		return nil, fmt.Errorf("a tag keeps one snapshot; WITH SNAPSHOT RETENTION applies to branches")
	}
	for _, d := range []time.Duration{ret.MaxRefAge, ret.MaxSnapshotAge} {
		if d < 0 || (d > 0 && d < time.Millisecond) {
			return nil, fmt.Errorf("a retention period must be positive")
		}
	}
	if ret.MinSnapshots < 0 {
		return nil, fmt.Errorf("WITH SNAPSHOT RETENTION needs a positive number of snapshots")
	}
	upd := table.Update(table.NewSetSnapshotRefUpdate(name, snapID, kind,
		ret.MaxRefAge.Milliseconds(), ret.MaxSnapshotAge.Milliseconds(), ret.MinSnapshots))
	if exists && ret == (Retention{}) {
		// REPLACE keeps the retention the ref had, as Spark does
		bld, err := table.MetadataBuilderFromBase(meta, "")
		if err != nil {
			return nil, err
		}
		upd = bld.NewRetainingSnapshotRefUpdate(name, snapID, kind)
	}
	return &RefChange{
		Updates:      []table.Update{upd},
		Requirements: []table.Requirement{table.AssertTableUUID(meta.TableUUID()), assertRef(meta, name)},
	}, nil
}

// DropRef removes the branch or tag name (kind says which the statement
// named); ifExists makes a missing one a no-op (nil change).
func DropRef(meta table.Metadata, tableName, name string, kind table.RefType, ifExists bool) (*RefChange, error) {
	if name == table.MainBranch {
		return nil, fmt.Errorf("cannot drop the main branch of %s", tableName)
	}
	existing, err := Ref(meta, tableName, name)
	if err != nil {
		if ifExists {
			return nil, nil
		}
		return nil, err
	}
	if existing.SnapshotRefType != kind {
		return nil, fmt.Errorf("table %s: %q is a %s, not a %s; write DROP %s %s", tableName, name, existing.SnapshotRefType,
			kind, strings.ToUpper(string(existing.SnapshotRefType)), name)
	}
	return &RefChange{
		Updates:      []table.Update{table.NewRemoveSnapshotRefUpdate(name)},
		Requirements: []table.Requirement{table.AssertTableUUID(meta.TableUUID()), assertRef(meta, name)},
	}, nil
}

// ErrNotFastForward is returned when a branch cannot be fast-forwarded
// because its head is not an ancestor of the target's.
var ErrNotFastForward = errors.New("not a fast-forward")

// FastForward moves branch to the head of to, which must descend from
// branch's head (Iceberg's fast_forward, Git's). It returns the change and
// the two snapshot ids (before, after); a branch already at to's head is
// a nil change. A missing branch is created at to's head, as Spark does.
func FastForward(meta table.Metadata, tableName, branch, to string) (*RefChange, int64, int64, error) {
	target, err := Ref(meta, tableName, to)
	if err != nil {
		return nil, 0, 0, err
	}
	// a tag's snapshot is as good a target as a branch's head
	if meta.SnapshotByID(target.SnapshotID) == nil {
		return nil, 0, 0, fmt.Errorf("table %s: %s %q points at a missing snapshot", tableName, target.SnapshotRefType, to)
	}
	reqs := []table.Requirement{table.AssertTableUUID(meta.TableUUID()), assertRef(meta, branch), assertRef(meta, to)}
	cur, err := Ref(meta, tableName, branch)
	if err != nil {
		return &RefChange{
			Updates:      []table.Update{table.NewSetSnapshotRefUpdate(branch, target.SnapshotID, table.BranchRef, 0, 0, 0)},
			Requirements: reqs,
		}, -1, target.SnapshotID, nil
	}
	if cur.SnapshotRefType != table.BranchRef {
		return nil, 0, 0, fmt.Errorf("table %s: %q is a tag; only a branch can be fast-forwarded", tableName, branch)
	}
	if cur.SnapshotID == target.SnapshotID {
		return nil, cur.SnapshotID, cur.SnapshotID, nil
	}
	if !IsAncestor(meta, cur.SnapshotID, target.SnapshotID) {
		return nil, 0, 0, sentinelf(ErrNotFastForward, "cannot fast-forward: %s's head %d is not an ancestor of %s's head %d in table %s: %s moved since %s was created from it, or they diverged; "+
			"rebuild %s from %s's head (ALTER TABLE %s REPLACE BRANCH %s AS OF VERSION %d) and write it again",
			branch, cur.SnapshotID, to, target.SnapshotID, tableName, branch, to,
			to, branch, tableName, to, cur.SnapshotID)
	}
	// the branch keeps its retention settings
	bld, err := table.MetadataBuilderFromBase(meta, "")
	if err != nil {
		return nil, 0, 0, err
	}
	upd := bld.NewRetainingSnapshotRefUpdate(branch, target.SnapshotID, table.BranchRef)
	return &RefChange{Updates: []table.Update{upd}, Requirements: reqs}, cur.SnapshotID, target.SnapshotID, nil
}

// IsAncestor reports whether snapshot a is b or one of b's ancestors in
// meta (as far as the retained history reaches).
func IsAncestor(meta table.Metadata, a, b int64) bool {
	seen := map[int64]bool{}
	for id := b; !seen[id]; {
		if id == a {
			return true
		}
		seen[id] = true
		s := meta.SnapshotByID(id)
		if s == nil || s.ParentSnapshotID == nil {
			return false
		}
		id = *s.ParentSnapshotID
	}
	return false
}
