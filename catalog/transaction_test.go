package catalog_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
)

func setProp(k, v string) []table.Update {
	return []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{k: v})}
}

func TestCommitTransaction(t *testing.T) {
	c := newLake(t)
	t1 := createTable(t, c, "t1")
	t2 := createTable(t, c, "t2")

	// Both land.
	err := c.CommitTransaction(ctx, []table.TableCommit{
		{Identifier: t1.Identifier(), Requirements: []table.Requirement{table.AssertTableUUID(t1.Metadata().TableUUID())}, Updates: setProp("k", "1")},
		{Identifier: table.Identifier{"t2"}, Updates: setProp("k", "1")},
	})
	if err != nil {
		t.Fatalf("commit transaction: %v", err)
	}
	for _, name := range []string{"t1", "t2"} {
		tbl, err := c.LoadTable(ctx, table.Identifier{name})
		if err != nil {
			t.Fatal(err)
		}
		if tbl.Properties()["k"] != "1" {
			t.Errorf("%s: property k = %q, want 1", name, tbl.Properties()["k"])
		}
	}

	p1, p2 := mustPointer(t, c, "t1"), mustPointer(t, c, "t2")
	before := files(t, c.Dir())
	tests := []struct {
		name    string
		commits []table.TableCommit
		target  error
		msg     string
	}{
		{
			name: "second fails its requirement",
			commits: []table.TableCommit{
				{Identifier: table.Identifier{"t1"}, Updates: setProp("k", "2")},
				{Identifier: table.Identifier{"t2"}, Requirements: []table.Requirement{table.AssertTableUUID(t1.Metadata().TableUUID())}, Updates: setProp("k", "2")},
			},
			target: table.ErrCommitFailed,
			msg:    "commit transaction: commit to table main.t2 failed: requirement failed: UUID mismatch: " + t2.Metadata().TableUUID().String(),
		},
		{
			name: "second does not exist",
			commits: []table.TableCommit{
				{Identifier: table.Identifier{"t1"}, Updates: setProp("k", "2")},
				{Identifier: table.Identifier{"t3"}, Requirements: []table.Requirement{table.AssertTableUUID(t1.Metadata().TableUUID())}, Updates: setProp("k", "2")},
			},
			target: icecatalog.ErrNoSuchTable,
			msg:    "commit transaction: commit to table main.t3 failed: the table does not exist; check the name, or create the table first",
		},
		{
			name: "same table twice",
			commits: []table.TableCommit{
				{Identifier: table.Identifier{"t1"}, Updates: setProp("k", "2")},
				{Identifier: table.Identifier{"main", "t1"}, Updates: setProp("k", "3")},
			},
			msg: "commit transaction: table main.t1 appears twice; merge its changes into one commit",
		},
		{
			name:   "empty",
			target: icecatalog.ErrEmptyCommitList,
			msg:    "commit transaction: commit list must not be empty; pass at least one table commit",
		},
		{
			name:    "bad name",
			commits: []table.TableCommit{{Identifier: table.Identifier{"a/b"}, Updates: setProp("k", "2")}},
			target:  catalog.ErrInvalidName,
			msg:     `commit transaction: invalid table name "a/b": names cannot contain "/"; use letters, digits and _`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.CommitTransaction(ctx, tt.commits)
			wantErr(t, err, tt.target, tt.msg)
			if mustPointer(t, c, "t1") != p1 || mustPointer(t, c, "t2") != p2 {
				t.Errorf("a pointer moved")
			}
			if got := files(t, c.Dir()); !slices.Equal(got, before) {
				t.Errorf("files changed:\n got %v\nwant %v", got, before)
			}
		})
	}
}

// TestSwapPointersAllOrNothing stages changes to two tables, lets another
// commit move the second, and checks that publishing both moves neither.
func TestSwapPointersAllOrNothing(t *testing.T) {
	c := newLake(t)
	createTable(t, c, "t1")
	createTable(t, c, "t2")
	p1 := mustPointer(t, c, "t1")
	s1, err := c.StageCommit(ctx, table.Identifier{"t1"}, nil, setProp("k", "a"))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := c.StageCommit(ctx, table.Identifier{"t2"}, nil, setProp("k", "a"))
	if err != nil {
		t.Fatal(err)
	}
	_, moved, err := c.CommitTable(ctx, table.Identifier{"t2"}, nil, setProp("k", "b"))
	if err != nil {
		t.Fatal(err)
	}
	before := files(t, c.Dir())

	err = c.SwapPointers(ctx, []catalog.PointerSwap{s1.Swap, s2.Swap})
	wantErr(t, err, table.ErrCommitFailed, "commit to table main.t2 failed: a concurrent commit moved its metadata from "+
		s2.Swap.Expected+" to "+moved+"; reload the table and retry")
	if mustPointer(t, c, "t1") != p1 || mustPointer(t, c, "t2") != moved {
		t.Errorf("a pointer moved")
	}
	if err := c.Discard(s1, s2); err != nil {
		t.Fatal(err)
	}
	after := files(t, c.Dir())
	if len(after) != len(before)-2 {
		t.Errorf("discard removed %d files, want 2", len(before)-len(after))
	}
}

// createUpdates are the updates of a staged create, as iceberg-go's REST
// catalog sends them.
func createUpdates() []table.Update {
	return []table.Update{
		table.NewUpgradeFormatVersionUpdate(2),
		table.NewAddSchemaUpdate(testSchema),
		table.NewSetCurrentSchemaUpdate(-1),
		table.NewAddPartitionSpecUpdate(iceberg.UnpartitionedSpec, true),
		table.NewSetDefaultSpecUpdate(-1),
		table.NewAddSortOrderUpdate(&table.UnsortedSortOrder),
		table.NewSetDefaultSortOrderUpdate(-1),
	}
}

func TestSwapPointersCreateAndDrop(t *testing.T) {
	c := newLake(t)
	createTable(t, c, "old")
	oldLoc := mustPointer(t, c, "old")

	created, err := c.StageCommit(ctx, table.Identifier{"new"}, []table.Requirement{table.AssertCreate()}, createUpdates())
	if err != nil {
		t.Fatalf("stage create: %v", err)
	}
	if created.Swap.Expected != "" || created.Base != nil {
		t.Errorf("a staged create expects %q, base %v; want nothing", created.Swap.Expected, created.Base)
	}
	staged, err := c.StageCreate(ctx, table.Identifier{"other"}, testSchema)
	if err != nil {
		t.Fatalf("stage create: %v", err)
	}
	if _, err := c.LoadTable(ctx, table.Identifier{"new"}); !errors.Is(err, icecatalog.ErrNoSuchTable) {
		t.Fatalf("a staged table is visible before its swap: %v", err)
	}

	err = c.SwapPointers(ctx, []catalog.PointerSwap{
		created.Swap,
		staged.Swap,
		{Ident: table.Identifier{"old"}, Expected: oldLoc}, // drop
	})
	if err != nil {
		t.Fatalf("swap: %v", err)
	}
	for _, name := range []string{"new", "other"} {
		tbl, err := c.LoadTable(ctx, table.Identifier{name})
		if err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
		if got := tbl.Schema().NumFields(); got != 2 {
			t.Errorf("%s has %d fields, want 2", name, got)
		}
	}
	if ok, _ := c.CheckTableExists(ctx, table.Identifier{"old"}); ok {
		t.Errorf("old still exists")
	}

	// A create over an existing table, and a drop of a missing one, move nothing.
	again, err := c.StageCreate(ctx, table.Identifier{"new"}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	newLoc := mustPointer(t, c, "new")
	tests := []struct {
		name   string
		swaps  []catalog.PointerSwap
		target error
		msg    string
	}{
		{"create existing", []catalog.PointerSwap{again.Swap}, icecatalog.ErrTableAlreadyExists,
			"commit to table main.new failed: the table already exists; choose another name, or drop the table first"},
		{"drop missing", []catalog.PointerSwap{{Ident: table.Identifier{"new"}, Expected: newLoc}, {Ident: table.Identifier{"old"}, Expected: oldLoc}},
			icecatalog.ErrNoSuchTable, "commit to table main.old failed: the table was dropped concurrently; reload the table and retry"},
		{"create in missing namespace", []catalog.PointerSwap{{Ident: table.Identifier{"nope", "x"}, New: again.MetadataLocation}},
			icecatalog.ErrNoSuchNamespace, "namespace nope does not exist; create it first"},
		{"twice", []catalog.PointerSwap{{Ident: table.Identifier{"new"}, Expected: newLoc}, {Ident: table.Identifier{"skade", "main", "new"}, Expected: newLoc}},
			nil, "swap pointers: table main.new appears twice; merge its changes into one swap"},
		{"none", nil, nil, "swap pointers: no swaps given; pass at least one"},
		{"outside", []catalog.PointerSwap{{Ident: table.Identifier{"x"}, New: "/etc/passwd"}}, catalog.ErrOutsideLake,
			`table main.x: metadata file "/etc/passwd" is outside the lake directory "` + c.Dir() + `"; skade keeps every file inside its lake`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.SwapPointers(ctx, tt.swaps)
			wantErr(t, err, tt.target, tt.msg)
			if mustPointer(t, c, "new") != newLoc {
				t.Errorf("new moved")
			}
		})
	}
	if err := c.Discard(again); err != nil {
		t.Fatal(err)
	}
	if _, err := c.FS().Stat(again.Metadata.Location()); err == nil {
		t.Errorf("discarding a staged create left its directory %s", again.Metadata.Location())
	}
}

func TestCreateThroughCommitTable(t *testing.T) {
	c := newLake(t)
	_, _, err := c.CommitTable(ctx, table.Identifier{"nope", "t"}, []table.Requirement{table.AssertCreate()}, createUpdates())
	wantErr(t, err, icecatalog.ErrNoSuchNamespace, "namespace nope does not exist; create it first")
	_, err = c.StageCreate(ctx, table.Identifier{"nope", "t"}, testSchema)
	wantErr(t, err, icecatalog.ErrNoSuchNamespace, "namespace nope does not exist; create it first")
	if got := entries(t, c.Dir()); !slices.Equal(got, []string{catalog.DBFile}) {
		t.Errorf("a create in a missing namespace wrote %v", got)
	}

	meta, loc, err := c.CommitTable(ctx, table.Identifier{"staged"}, []table.Requirement{table.AssertCreate()}, createUpdates())
	if err != nil {
		t.Fatalf("staged create: %v", err)
	}
	tbl, err := c.LoadTable(ctx, table.Identifier{"staged"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.MetadataLocation() != loc || tbl.Metadata().TableUUID() != meta.TableUUID() {
		t.Errorf("loaded table differs from the committed one")
	}
	_, _, err = c.CommitTable(ctx, table.Identifier{"staged"}, []table.Requirement{table.AssertCreate()}, createUpdates())
	wantErr(t, err, icecatalog.ErrTableAlreadyExists, "commit to table main.staged failed: the table already exists")

	// A staged create may not move the table out of the lake.
	_, _, err = c.CommitTable(ctx, table.Identifier{"escape"}, []table.Requirement{table.AssertCreate()},
		append(createUpdates(), table.NewSetLocationUpdate(c.Dir()+"/../elsewhere")))
	wantErr(t, err, catalog.ErrOutsideLake, `table main.escape: location "`+c.Dir()+`/../elsewhere" is outside the lake directory`)
	_, _, err = c.CommitTable(ctx, table.Identifier{"escape"}, []table.Requirement{table.AssertCreate()},
		append(createUpdates(), table.NewSetLocationUpdate(c.Dir())))
	wantErr(t, err, catalog.ErrOutsideLake, `table main.escape: location "`+c.Dir()+`" is outside the lake directory`)
	_, _, err = c.CommitTable(ctx, table.Identifier{"escape"}, []table.Requirement{table.AssertCreate()},
		append(createUpdates(), table.NewSetLocationUpdate(c.Dir()+"/main")))
	wantErr(t, err, catalog.ErrOutsideLake, `table main.escape: location "`+c.Dir()+`/main" is not a table directory of the lake`)
	_, _, err = c.CommitTable(ctx, table.Identifier{"staged"}, nil, setProp(table.WriteDataPathKey, "/tmp/x"))
	wantErr(t, err, catalog.ErrOutsideLake, `table main.staged: property write.data.path "/tmp/x" is outside the lake directory`)
}

// TestMultiTableTransaction appends to two tables through iceberg-go's
// MultiTableTransaction: both land together, and a stale one makes neither
// land.
func TestMultiTableTransaction(t *testing.T) {
	c := newLake(t)
	t1, t2 := createTable(t, c, "t1"), createTable(t, c, "t2")
	appendBoth := func(a, b *table.Table) error {
		m, err := icecatalog.NewMultiTableTransaction(c)
		if err != nil {
			return err
		}
		for _, tbl := range []*table.Table{a, b} {
			txn := tbl.NewTransaction()
			rdr := records(t, nil, 0, 4)
			err := txn.Append(ctx, rdr, nil)
			rdr.Release()
			if err != nil {
				return err
			}
			if err := m.AddTransaction(txn); err != nil {
				return err
			}
		}

		return m.Commit(ctx)
	}
	if err := appendBoth(t1, t2); err != nil {
		t.Fatalf("multi-table append: %v", err)
	}
	checkRows(t, c, "t1", 4, 1)
	checkRows(t, c, "t2", 4, 1)

	// t1 is fresh, t2 is the stale table from before the first commit.
	fresh, err := c.LoadTable(ctx, table.Identifier{"t1"})
	if err != nil {
		t.Fatal(err)
	}
	err = appendBoth(fresh, t2)
	wantErr(t, err, table.ErrCommitFailed, "commit to table main.t2 failed: requirement failed")
	checkRows(t, c, "t1", 4, 1)
	checkRows(t, c, "t2", 4, 1)
}
