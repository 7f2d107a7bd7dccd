package lake_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/snapshot"
)

// reachable lists every file the table's metadata reaches: metadata
// files, manifest lists, manifests, data and delete files.
func reachable(t *testing.T, tbl *lake.Table) snapshot.FileSet {
	t.Helper()
	ctx := context.Background()
	it := tbl.Iceberg()
	fsys, err := it.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := snapshot.FileSet{}
	if err := snapshot.ReachableFromMetadata(ctx, fsys, it.Metadata(), it.MetadataLocation(), out); err != nil {
		t.Fatalf("list files of %s: %v", tbl.Name(), err)
	}
	return out
}

// requireIntact fails unless every file the named table reaches exists
// and its rows read back as want.
func requireIntact(t *testing.T, lk *lake.Lake, name string, want sums) {
	t.Helper()
	tbl, err := lk.Table(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	for p := range reachable(t, tbl) {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("table %s reaches %s, which is gone: %v", name, p, err)
		}
	}
	if got := sumOf(t, mustScan(t, tbl)); got != want {
		t.Fatalf("table %s:\n got %s\nwant %s", name, describe(got), describe(want))
	}
}

// newFiles returns the files in after that are not in before.
func newFiles(before, after map[string]bool) []string {
	var out []string
	for p := range after {
		if !before[p] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func TestCloneTableCopiesNoData(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	src := mustCreate(t, lk, "events", lake.PartitionBy("status"), lake.WithProperties(map[string]string{"skade.test": "kept"}))
	src = mustAppend(t, src, 0, 1000)
	src = mustAppend(t, src, 1000, 2000)

	before := allFiles(t, dir)
	clone, err := lk.CloneTable(ctx, "events", "copy")
	if err != nil {
		t.Fatal(err)
	}
	added := newFiles(before, allFiles(t, dir))
	// one metadata file and its version hint (catalog.VersionHintFile)
	if len(added) != 2 || !strings.HasSuffix(added[0], ".metadata.json") || !strings.HasSuffix(added[1], "/metadata/version-hint.text") ||
		!within(clone.Iceberg().Location(), added[0]) || !within(clone.Iceberg().Location(), added[1]) {
		t.Fatalf("clone wrote %v; want one metadata file and the version hint under %s", added, clone.Iceberg().Location())
	}
	if gone := newFiles(allFiles(t, dir), before); len(gone) != 0 {
		t.Fatalf("clone removed %v", gone)
	}

	requireIntact(t, lk, "copy", expectedSums(0, 2000))
	sm, cm := src.Iceberg().Metadata(), clone.Iceberg().Metadata()
	switch {
	case clone.Snapshot().ID != src.Snapshot().ID:
		t.Errorf("clone snapshot %d, source %d", clone.Snapshot().ID, src.Snapshot().ID)
	case cm.CurrentSnapshot().ManifestList != sm.CurrentSnapshot().ManifestList:
		t.Errorf("clone reads manifest list %s, source %s", cm.CurrentSnapshot().ManifestList, sm.CurrentSnapshot().ManifestList)
	case len(history(t, clone)) != 1:
		t.Errorf("clone history has %d snapshots, want 1", len(history(t, clone)))
	case cm.TableUUID() == sm.TableUUID():
		t.Errorf("clone shares the source's table uuid %s", cm.TableUUID())
	case cm.Location() == sm.Location():
		t.Errorf("clone shares the source's location %s", cm.Location())
	case cm.LastSequenceNumber() != sm.LastSequenceNumber():
		t.Errorf("clone last sequence number %d, source %d", cm.LastSequenceNumber(), sm.LastSequenceNumber())
	case cm.LastColumnID() != sm.LastColumnID():
		t.Errorf("clone last column id %d, source %d", cm.LastColumnID(), sm.LastColumnID())
	case !cm.CurrentSchema().Equals(sm.CurrentSchema()):
		t.Errorf("clone schema %s, source %s", cm.CurrentSchema(), sm.CurrentSchema())
	case !cm.PartitionSpec().Equals(sm.PartitionSpec()):
		t.Errorf("clone partition spec %s, source %s", cm.PartitionSpec(), sm.PartitionSpec())
	case !maps.Equal(cm.Properties(), sm.Properties()):
		t.Errorf("clone properties %v, source %v", cm.Properties(), sm.Properties())
	case len(slices.Collect(cm.PreviousFiles())) != 0:
		t.Errorf("clone inherited the source's metadata log %v", slices.Collect(cm.PreviousFiles()))
	}
	// The clone is a table like any other: time travel to its snapshot,
	// listing, and reading through SQL.
	if _, err := clone.At(src.Snapshot().ID); err != nil {
		t.Error(err)
	}
	if names, err := lk.Tables(ctx); err != nil || !slices.Equal(names, []string{"main.copy", "main.events"}) {
		t.Errorf("tables %v, %v", names, err)
	}
	if got := query(t, lk.Session(), "SELECT count(*), count(DISTINCT status) FROM copy"); !slices.Equal(got, []string{"2000|4"}) {
		t.Errorf("SQL on the clone: %v", got)
	}
}

func TestCloneTableAtVersion(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	src := mustAppend(t, mustCreate(t, lk, "events"), 0, 1000)
	first := src.Snapshot()
	time.Sleep(5 * time.Millisecond) // the AS OF lookup below needs distinct commit times
	mustAppend(t, src, 1000, 2000)

	if _, err := lk.CloneTable(ctx, "events", "v1", lake.CloneAt(first.ID)); err != nil {
		t.Fatal(err)
	}
	requireIntact(t, lk, "v1", expectedSums(0, 1000))
	if _, err := lk.CloneTable(ctx, "events", "t1", lake.CloneAsOf(first.Committed)); err != nil {
		t.Fatal(err)
	}
	requireIntact(t, lk, "t1", expectedSums(0, 1000))
	// The source is untouched by cloning an old snapshot of it.
	requireIntact(t, lk, "events", expectedSums(0, 2000))

	// A write to the clone of an old snapshot builds on that snapshot.
	v1, err := lk.Table(ctx, "v1")
	if err != nil {
		t.Fatal(err)
	}
	v1 = mustAppend(t, v1, 5000, 5100)
	if got, want := sumOf(t, mustScan(t, v1)), add(expectedSums(0, 1000), expectedSums(5000, 5100)); got != want {
		t.Fatalf("v1 after append:\n got %s\nwant %s", describe(got), describe(want))
	}
	requireIntact(t, lk, "events", expectedSums(0, 2000))
}

func add(a, b sums) sums {
	return sums{a.rows + b.rows, a.id + b.id, a.status + b.status, a.amount + b.amount, a.ts + b.ts}
}

func TestCloneTableErrors(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	mustAppend(t, mustCreate(t, lk, "events"), 0, 10)
	mustCreate(t, lk, "empty")
	mustAppend(t, mustCreate(t, lk, "taken"), 0, 10)

	for _, tc := range []struct {
		name, src, dst string
		opts           []lake.CloneOption
		sentinel       error
		msg            string
	}{
		{"missing source", "nope", "c", nil, lake.ErrTableNotFound, "table main.nope does not exist"},
		{"destination exists", "events", "taken", nil, lake.ErrTableExists, "clone main.events into main.taken: table main.taken already exists"},
		{"into itself", "events", "events", nil, lake.ErrTableExists, "a table cannot be cloned into itself"},
		{"no snapshot", "empty", "c", nil, lake.ErrInvalidArgument, "table main.empty has no snapshot yet, so there is nothing to clone"},
		{"unknown snapshot", "events", "c", []lake.CloneOption{lake.CloneAt(12345)}, lake.ErrSnapshotNotFound, "table main.events has no snapshot 12345"},
		{"before the first snapshot", "events", "c", []lake.CloneOption{lake.CloneAsOf(time.Unix(0, 0))}, lake.ErrSnapshotNotFound, "has no snapshot at or before 1970-01-01"},
		{"missing namespace", "events", "other.c", nil, lake.ErrNamespaceNotFound, "namespace other does not exist"},
		{"bad name", "events", "a/b", nil, lake.ErrInvalidName, "invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := allFiles(t, dir)
			_, err := lk.CloneTable(ctx, tc.src, tc.dst, tc.opts...)
			if !errors.Is(err, tc.sentinel) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v; want %v with %q", err, tc.sentinel, tc.msg)
			}
			if added := newFiles(before, allFiles(t, dir)); len(added) != 0 {
				t.Fatalf("a failed clone left %v", added)
			}
		})
	}
	if names, err := lk.Tables(ctx); err != nil || len(names) != 3 {
		t.Fatalf("tables after failed clones: %v, %v", names, err)
	}
}

func TestCloneTableIntoNamespace(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	mustAppend(t, mustCreate(t, lk, "events"), 0, 100)
	s := lk.Session()
	mustExec(t, s, "CREATE SCHEMA staging")
	clone, err := lk.CloneTable(ctx, "events", "staging.events")
	if err != nil {
		t.Fatal(err)
	}
	if clone.Name() != "staging.events" || !strings.Contains(clone.Iceberg().Location(), string(filepath.Separator)+"staging"+string(filepath.Separator)) {
		t.Fatalf("clone %s at %s", clone.Name(), clone.Iceberg().Location())
	}
	requireIntact(t, lk, "staging.events", expectedSums(0, 100))
}

// Every kind of write to either table leaves the other as it was: its
// rows, its metadata pointer, and every file under its directory.
func TestCloneTableWritesIsolated(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE src (id BIGINT, v VARCHAR);
		INSERT INTO src VALUES (1, 'a'), (2, 'b'), (3, 'c');
		INSERT INTO src VALUES (4, 'd');
		CREATE TABLE cl CLONE src`)

	writes := []string{
		"INSERT INTO %s VALUES (10, 'x')",
		"UPDATE %s SET v = 'u' WHERE id = 1",
		"DELETE FROM %s WHERE id = 2",
		"MERGE INTO %[1]s USING (VALUES (3, 'm'), (20, 'n')) AS s(id, v) ON %[1]s.id = s.id " +
			"WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v)",
		"ALTER TABLE %s ADD COLUMN extra INTEGER",
		"INSERT INTO %s VALUES (30, 'y', 7)",
		"ALTER TABLE %s EXECUTE compact",
	}
	state := func(name string) (rows []string, metaLoc, loc string) {
		tbl, err := lk.Table(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return query(t, s, "SELECT * FROM "+name+" ORDER BY id"), tbl.Iceberg().MetadataLocation(), tbl.Iceberg().Location()
	}
	run := func(writer, other string) {
		for _, w := range writes {
			stmt := fmt.Sprintf(w, writer)
			rows, metaLoc, loc := state(other)
			_, _, writerLoc := state(writer)
			before := allFiles(t, dir)
			mustExec(t, s, stmt)
			after := allFiles(t, dir)
			rows2, metaLoc2, _ := state(other)
			if !slices.Equal(rows, rows2) || metaLoc != metaLoc2 {
				t.Fatalf("%s changed %s:\n%v\n->\n%v", stmt, other, rows, rows2)
			}
			for _, p := range newFiles(before, after) {
				if !within(writerLoc, p) {
					t.Fatalf("%s wrote %s outside %s", stmt, p, writerLoc)
				}
			}
			for _, p := range newFiles(after, before) {
				if within(loc, p) {
					t.Fatalf("%s removed %s of %s", stmt, p, other)
				}
			}
		}
	}
	run("cl", "src")
	run("src", "cl")

	want := []string{"1|u|(null)", "3|m|(null)", "4|d|(null)", "10|x|(null)", "20|n|(null)", "30|y|7"}
	for _, name := range []string{"src", "cl"} {
		if got, _, _ := state(name); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}

// Equality deletes apply to data files with a lower sequence number: a
// clone must continue the source's sequence numbers, or a delete on the
// clone would not reach the shared files.
func TestCloneTableSequenceNumbers(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	src := mustCreate(t, lk, "events")
	src = mustAppend(t, src, 0, 100)
	src = mustAppend(t, src, 100, 200)
	clone, err := lk.CloneTable(ctx, "events", "copy")
	if err != nil {
		t.Fatal(err)
	}
	keys := idReader(1, 150)
	clone, err = clone.DeleteEquality(ctx, []string{"id"}, keys)
	keys.Release()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := clone.Iceberg().CurrentSnapshot().SequenceNumber, src.Iceberg().CurrentSnapshot().SequenceNumber+1; got != want {
		t.Errorf("the clone's first write has sequence number %d, want %d", got, want)
	}
	rows := rowsByID(t, clone)
	if _, ok := rows[1]; ok || len(rows) != 198 {
		t.Errorf("clone after deleting ids 1 and 150: %d rows, id 1 present: %v", len(rows), ok)
	}
	requireIntact(t, lk, "events", expectedSums(0, 200))
}

// cloneFixture builds a source whose history replaced its first files
// (append [0,1000), append [1000,2000), overwrite with [5000,5500)) and two
// clones: "old" of the first snapshot, "cur" of the head.
func cloneFixture(t *testing.T) (*lake.Lake, string, *lake.Table) {
	t.Helper()
	ctx := context.Background()
	lk, dir := openLake(t)
	src := mustAppend(t, mustCreate(t, lk, "events"), 0, 1000)
	first := src.Snapshot().ID
	src = mustAppend(t, src, 1000, 2000)
	rdr := eventsReader(5000, 5500, 500)
	src, err := src.Overwrite(ctx, rdr)
	rdr.Release()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lk.CloneTable(ctx, "events", "old", lake.CloneAt(first)); err != nil {
		t.Fatal(err)
	}
	if _, err := lk.CloneTable(ctx, "events", "cur"); err != nil {
		t.Fatal(err)
	}
	return lk, dir, src
}

func requireFixtureIntact(t *testing.T, lk *lake.Lake, names ...string) {
	t.Helper()
	want := map[string]sums{"events": expectedSums(5000, 5500), "cur": expectedSums(5000, 5500), "old": expectedSums(0, 1000)}
	for _, n := range names {
		requireIntact(t, lk, n, want[n])
	}
}

func TestCloneTableSurvivesSourceExpiry(t *testing.T) {
	ctx := context.Background()
	lk, _, src := cloneFixture(t)
	old, err := lk.Table(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	shared := reachable(t, old)
	secondAppend := dataFilesOf(t, src, 1)

	res, err := src.ExpireSnapshots(ctx, time.Now().Add(time.Hour), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Expired) != 2 {
		t.Fatalf("expired %v, want the two appends", res.Expired)
	}
	for _, p := range res.DeletedFiles {
		if shared.Has(p) {
			t.Errorf("expiry of the source deleted %s, which the clone still reads", p)
		}
	}
	// Not vacuous: what only the source reached is gone.
	for _, p := range secondAppend {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s, reached only by an expired snapshot of the source, is still there (%v)", p, err)
		}
	}
	requireFixtureIntact(t, lk, "events", "old", "cur")
}

// dataFilesOf lists the data files the i-th snapshot (oldest first) of
// tbl added.
func dataFilesOf(t *testing.T, tbl *lake.Table, i int) []string {
	t.Helper()
	at, err := tbl.At(history(t, tbl)[i].ID)
	if err != nil {
		t.Fatal(err)
	}
	files, err := at.PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	prev := map[string]bool{}
	if i > 0 {
		before, err := tbl.At(history(t, tbl)[i-1].ID)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := before.PlanFiles(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range pf {
			prev[f.Path] = true
		}
	}
	var out []string
	for _, f := range files {
		if !prev[f.Path] {
			out = append(out, snapshot.NormalizePath(f.Path))
		}
	}
	if len(out) == 0 {
		t.Fatalf("snapshot %d of %s added no data file", i, tbl.Name())
	}
	return out
}

func TestCloneTableSurvivesCloneExpiry(t *testing.T) {
	ctx := context.Background()
	lk, _, _ := cloneFixture(t)
	cur, err := lk.Table(ctx, "cur")
	if err != nil {
		t.Fatal(err)
	}
	// Replace every row of the clone, then expire its cloned snapshot: the
	// files it shared with the source stay.
	rdr := eventsReader(9000, 9100, 100)
	cur, err = cur.Overwrite(ctx, rdr)
	rdr.Release()
	if err != nil {
		t.Fatal(err)
	}
	res, err := cur.ExpireSnapshots(ctx, time.Now().Add(time.Hour), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Expired) != 1 {
		t.Fatalf("expired %v, want the cloned snapshot", res.Expired)
	}
	requireIntact(t, lk, "cur", expectedSums(9000, 9100))
	requireFixtureIntact(t, lk, "events", "old")
}

func TestCloneTableSurvivesOrphanCleanup(t *testing.T) {
	ctx := context.Background()
	lk, _, src := cloneFixture(t)
	// After expiry, the source's directory holds files that only the clone
	// "old" reaches: orphans to the source, live to the lake.
	if _, err := src.ExpireSnapshots(ctx, time.Now().Add(time.Hour), 1); err != nil {
		t.Fatal(err)
	}
	// A stray file in each table's data directory is an orphan, and goes.
	var strays []string
	for _, n := range []string{"events", "old", "cur"} {
		tbl, err := lk.Table(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(tbl.Iceberg().Location(), "data", "stray.parquet")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		strays = append(strays, p)
	}
	for _, n := range []string{"events", "old", "cur"} {
		tbl, err := lk.Table(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.RemoveOrphanFiles(ctx, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range strays {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("orphan %s survived (%v)", p, err)
		}
	}
	requireFixtureIntact(t, lk, "events", "old", "cur")
}

func TestCloneTablePurge(t *testing.T) {
	ctx := context.Background()
	t.Run("source first", func(t *testing.T) {
		lk, dir, _ := cloneFixture(t)
		if err := lk.DropTable(ctx, "events", true); err != nil {
			t.Fatal(err)
		}
		requireFixtureIntact(t, lk, "old", "cur")
		if err := lk.DropTable(ctx, "old", true); err != nil {
			t.Fatal(err)
		}
		requireFixtureIntact(t, lk, "cur")
		if err := lk.DropTable(ctx, "cur", true); err != nil {
			t.Fatal(err)
		}
		// Once no table reads them, the shared files go with the last one.
		if left := dataFiles(t, dir); len(left) != 0 {
			t.Fatalf("after purging every table, %d data files remain: %v", len(left), left)
		}
	})
	t.Run("clones first", func(t *testing.T) {
		lk, dir, _ := cloneFixture(t)
		for _, n := range []string{"cur", "old"} {
			if err := lk.DropTable(ctx, n, true); err != nil {
				t.Fatal(err)
			}
			requireFixtureIntact(t, lk, "events")
		}
		if err := lk.DropTable(ctx, "events", true); err != nil {
			t.Fatal(err)
		}
		if left := dataFiles(t, dir); len(left) != 0 {
			t.Fatalf("after purging every table, %d data files remain: %v", len(left), left)
		}
	})
}

// A name registered as a session source is not a table: it can be neither
// cloned nor shadowed by a clone.
func TestCloneTableSessionSources(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	mustAppend(t, mustCreate(t, lk, "events"), 0, 10)
	s := lk.Session()
	rec := eventsBatch(0, 3)
	defer rec.Release()
	if err := s.RegisterBatch(ctx, "staged", rec); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"CREATE TABLE c CLONE staged":      "create table c clone staged: staged is a source registered in this session, not a table of the lake; only tables can be cloned",
		"CREATE TABLE staged CLONE events": "create table staged clone events: the name is registered as a source in this session, which would shadow the table",
	} {
		_, err := s.SQL(ctx, q)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", q, err, want)
		}
	}
	if names, err := lk.Tables(ctx); err != nil || len(names) != 1 {
		t.Errorf("tables %v, %v", names, err)
	}
}

// Manifest merging on the clone writes a merged manifest under the clone's
// directory and leaves the source's manifests as they were.
func TestCloneTableManifestMerge(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	src := mustCreate(t, lk, "events", lake.WithProperties(map[string]string{"commit.manifest.min-count-to-merge": "2"}))
	for i := int64(0); i < 3; i++ {
		src = mustAppend(t, src, i*100, (i+1)*100)
	}
	clone, err := lk.CloneTable(ctx, "events", "copy")
	if err != nil {
		t.Fatal(err)
	}
	type stamp struct {
		size int64
		mod  time.Time
	}
	stamps := func(dir string) map[string]stamp {
		out := map[string]stamp{}
		for p := range allFiles(t, dir) {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = stamp{fi.Size(), fi.ModTime()}
		}
		return out
	}
	manifests := func(tbl *lake.Table) []string {
		it := tbl.Iceberg()
		fsys, err := it.FS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := it.CurrentSnapshot().Manifests(fsys)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms {
			out = append(out, m.FilePath())
		}
		return out
	}
	srcDir := src.Iceberg().Location()
	before := stamps(srcDir)
	shared := manifests(clone)

	clone = mustAppend(t, clone, 1000, 1100)
	merged := manifests(clone)
	if len(merged) >= len(shared)+1 {
		t.Fatalf("no merge: the clone reads %d manifests after adding one to %d", len(merged), len(shared))
	}
	for _, m := range merged {
		if !slices.Contains(shared, m) && !within(clone.Iceberg().Location(), snapshot.NormalizePath(m)) {
			t.Errorf("merged manifest %s is outside the clone's directory", m)
		}
	}
	if after := stamps(srcDir); !maps.Equal(before, after) {
		t.Errorf("the clone's merge changed the source's directory:\n%v\n->\n%v", before, after)
	}
	requireIntact(t, lk, "events", expectedSums(0, 300))
	requireIntact(t, lk, "copy", add(expectedSums(0, 300), expectedSums(1000, 1100)))
}

// A clone is a table of its own from the start, and costs one metadata
// file: a dev copy of production data, written to without touching it.
func ExampleLake_CloneTable() {
	dir, _ := os.MkdirTemp("", "skade-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	lk, err := lake.Open(ctx, dir)
	if err != nil {
		panic(err)
	}
	defer lk.Close()
	sess := lk.Session()
	if err := sess.Exec(ctx, "CREATE TABLE orders (id BIGINT); INSERT INTO orders VALUES (1), (2)"); err != nil {
		panic(err)
	}
	if _, err := lk.CloneTable(ctx, "orders", "orders_dev"); err != nil {
		panic(err)
	}
	if err := sess.Exec(ctx, "INSERT INTO orders_dev VALUES (3)"); err != nil {
		panic(err)
	}
	for _, name := range []string{"orders", "orders_dev"} {
		tbl, err := lk.Table(ctx, name)
		if err != nil {
			panic(err)
		}
		fmt.Println(name, tbl.Snapshot().Summary["total-records"])
	}
	// Output:
	// orders 2
	// orders_dev 3
}

// Clones taken while the source is overwritten and expired concurrently
// never lose a file. (The narrow window between reading the source and
// publishing the clone is tested deterministically by
// TestPublishCloneRaces; this runs the whole path under real
// interleavings.)
func TestCloneTableConcurrentExpiry(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	src := mustAppend(t, mustCreate(t, lk, "events"), 0, 100)
	done := make(chan error, 1)
	go func() {
		tbl := src
		for i := int64(1); i <= 8; i++ {
			rdr := eventsReader(i*100, (i+1)*100, 100)
			next, err := tbl.Overwrite(ctx, rdr)
			rdr.Release()
			if err != nil {
				done <- err
				return
			}
			tbl = next
			if _, err := tbl.ExpireSnapshots(ctx, time.Now().Add(time.Hour), 1); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var clones []string
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("c%d", i)
		if _, err := lk.CloneTable(ctx, "events", name); err != nil {
			t.Fatalf("clone %s: %v", name, err)
		}
		clones = append(clones, name)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, name := range clones {
		tbl, err := lk.Table(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		// Each clone holds one overwrite's rows: 100 consecutive ids.
		got := sumOf(t, mustScan(t, tbl))
		from := (got.id/got.rows - 49)
		if want := expectedSums(from, from+100); got != want || from%100 != 0 {
			t.Errorf("%s:\n got %s\nwant %s", name, describe(got), describe(want))
		}
		for p := range reachable(t, tbl) {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s reaches %s, which is gone", name, p)
			}
		}
	}
}
