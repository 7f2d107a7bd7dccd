package lake

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
)

var cloneTestSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)

func cloneTestLake(t *testing.T, props map[string]string) (*Lake, *Table) {
	t.Helper()
	ctx := context.Background()
	lk, err := Open(ctx, filepath.Join(t.TempDir(), "lake"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lk.Close() })
	tbl, err := lk.CreateTable(ctx, "src", cloneTestSchema, WithProperties(props))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		tbl = cloneTestAppend(t, tbl, int64(i))
	}
	return lk, tbl
}

func cloneTestAppend(t *testing.T, tbl *Table, ids ...int64) *Table {
	t.Helper()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(ids, nil)
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(cloneTestSchema, []arrow.Array{col}, int64(len(ids)))
	col.Release()
	rdr, err := array.NewRecordReader(cloneTestSchema, []arrow.RecordBatch{rec})
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	out, err := tbl.Append(context.Background(), rdr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cloneMetadata keeps what the shared files need and drops what belongs
// to the source alone.
func TestCloneMetadata(t *testing.T) {
	_, src := cloneTestLake(t, map[string]string{"format-version": "3"})
	hist, err := src.History(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first := hist[0].ID
	head := src.Snapshot().ID

	// Give the source what a clone must not inherit: a tag, a branch,
	// statistics, write paths and a metadata log.
	b, err := table.MetadataBuilderFromBase(src.tbl.Metadata(), src.tbl.MetadataLocation())
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []error{
		b.SetSnapshotRef("v1", first, table.TagRef),
		b.SetSnapshotRef("dev", head, table.BranchRef),
		b.SetStatistics(table.StatisticsFile{SnapshotID: head, StatisticsPath: src.tbl.Location() + "/metadata/stats.puffin"}),
		b.SetProperties(iceberg.Properties{
			table.WriteDataPathKey:     src.tbl.Location() + "/elsewhere",
			table.WriteMetadataPathKey: src.tbl.Location() + "/meta-elsewhere",
			"kept":                     "yes",
		}),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	base, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(slices.Collect(base.PreviousFiles())) == 0 || len(slices.Collect(base.Statistics())) == 0 {
		t.Fatal("fixture: the source should have a metadata log and statistics")
	}

	for _, id := range []int64{first, head} {
		got, err := cloneMetadata(base, id, "/lake/main/clone-00000000")
		if err != nil {
			t.Fatal(err)
		}
		snap := got.CurrentSnapshot()
		var refs []string
		for name := range got.Refs() {
			refs = append(refs, name)
		}
		switch {
		case snap == nil || snap.SnapshotID != id || len(got.Snapshots()) != 1:
			t.Errorf("snapshot %d: clone has current %v of %d snapshots", id, snap, len(got.Snapshots()))
		case snap.ManifestList != base.SnapshotByID(id).ManifestList:
			t.Errorf("snapshot %d: manifest list %s, source's %s", id, snap.ManifestList, base.SnapshotByID(id).ManifestList)
		case !slices.Equal(refs, []string{table.MainBranch}):
			t.Errorf("snapshot %d: refs %v, want main only", id, refs)
		case got.Location() != "/lake/main/clone-00000000" || got.TableUUID() == base.TableUUID():
			t.Errorf("snapshot %d: location %s, uuid %s", id, got.Location(), got.TableUUID())
		case len(slices.Collect(got.PreviousFiles())) != 0:
			t.Errorf("snapshot %d: metadata log %v", id, slices.Collect(got.PreviousFiles()))
		case len(slices.Collect(got.Statistics())) != 0:
			t.Errorf("snapshot %d: statistics %v", id, slices.Collect(got.Statistics()))
		case got.Properties()[table.WriteDataPathKey] != "" || got.Properties()[table.WriteMetadataPathKey] != "" || got.Properties()["kept"] != "yes":
			t.Errorf("snapshot %d: properties %v", id, got.Properties())
		case got.Version() != 3 || got.NextRowID() != base.NextRowID() || got.LastSequenceNumber() < snap.SequenceNumber:
			t.Errorf("snapshot %d: version %d, next row id %d (source %d), last sequence number %d (snapshot %d)",
				id, got.Version(), got.NextRowID(), base.NextRowID(), got.LastSequenceNumber(), snap.SequenceNumber)
		case got.LastColumnID() != base.LastColumnID() || !slices.EqualFunc(got.Schemas(), base.Schemas(), (*iceberg.Schema).Equals):
			t.Errorf("snapshot %d: schemas differ", id)
		case !maps.Equal(got.Properties(), withoutKeys(base.Properties(), table.WriteDataPathKey, table.WriteMetadataPathKey)):
			t.Errorf("snapshot %d: properties %v", id, got.Properties())
		}
	}

	if _, err := cloneMetadata(base, 12345, "/lake/main/clone-00000000"); !errors.Is(err, ErrSnapshotNotFound) {
		t.Errorf("unknown snapshot: %v", err)
	}
}

func withoutKeys(p iceberg.Properties, keys ...string) iceberg.Properties {
	out := maps.Clone(p)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// A v3 clone continues the source's row ids: a write to it is accepted
// (iceberg-go refuses a first-row-id behind the table's next-row-id).
func TestCloneTableFormatV3(t *testing.T) {
	ctx := context.Background()
	lk, src := cloneTestLake(t, map[string]string{"format-version": "3"})
	clone, err := lk.CloneTable(ctx, "src", "clone")
	if err != nil {
		t.Fatal(err)
	}
	clone = cloneTestAppend(t, clone, 10, 11)
	if got, want := clone.tbl.Metadata().NextRowID(), src.tbl.Metadata().NextRowID()+2; got != want {
		t.Errorf("next row id after appending 2 rows to the clone: %d, want %d", got, want)
	}
	src = cloneTestAppend(t, src, 20)
	if got := src.tbl.Metadata().NextRowID(); got != 3 {
		t.Errorf("source's next row id: %d, want 3", got)
	}
}

// A clone that loses a race to publish leaves nothing behind: not its
// metadata file, not its directory.
func TestPublishCloneRaces(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		race     func(t *testing.T, lk *Lake, src *Table)
		sentinel error
		msg      string
	}{
		{"source written", func(t *testing.T, lk *Lake, src *Table) { cloneTestAppend(t, src, 7) },
			ErrCommitConflict, "a table changed while it was being cloned"},
		{"source dropped", func(t *testing.T, lk *Lake, src *Table) {
			if err := lk.DropTable(ctx, "src", false); err != nil {
				t.Fatal(err)
			}
		}, ErrTableNotFound, "table main.src was dropped while it was being cloned"},
		{"destination created", func(t *testing.T, lk *Lake, src *Table) {
			if _, err := lk.CreateTable(ctx, "clone", cloneTestSchema); err != nil {
				t.Fatal(err)
			}
		}, ErrTableExists, "table main.clone was created concurrently"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lk, src := cloneTestLake(t, nil)
			p, err := lk.planClone(ctx, src.id, table.Identifier{"main", "clone"}, cloneConfig{})
			if err != nil {
				t.Fatal(err)
			}
			staged, err := lk.stageClone(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(staged.MetadataLocation); err != nil {
				t.Fatalf("staged metadata file: %v", err)
			}
			tc.race(t, lk, src)
			err = lk.publishClone(ctx, p, staged)
			if !errors.Is(err, tc.sentinel) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v; want %v with %q", err, tc.sentinel, tc.msg)
			}
			if _, err := os.Stat(p.meta.Location()); !os.IsNotExist(err) {
				t.Fatalf("the clone's directory %s is still there (%v)", p.meta.Location(), err)
			}
		})
	}

	// CloneTable itself plans again when the source moved.
	lk, src := cloneTestLake(t, nil)
	p, err := lk.planClone(ctx, src.id, table.Identifier{"main", "clone"}, cloneConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cloneTestAppend(t, src, 7)
	if err := lk.publishClone(ctx, p, mustStage(t, lk, p)); !errors.Is(err, errCloneRaced) {
		t.Fatalf("got %v, want errCloneRaced", err)
	}
	clone, err := lk.CloneTable(ctx, "src", "clone")
	if err != nil {
		t.Fatal(err)
	}
	if cur, _ := lk.Table(ctx, "src"); clone.Snapshot().ID != cur.Snapshot().ID {
		t.Fatalf("clone of snapshot %d, source head %d", clone.Snapshot().ID, cur.Snapshot().ID)
	}
}

func mustStage(t *testing.T, lk *Lake, p *clonePlan) *catalog.StagedCommit {
	t.Helper()
	s, err := lk.stageClone(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// CREATE OR REPLACE TABLE … CLONE purges the replaced table's files,
// except those the clone (or any other table) still reads.
func TestCloneTableReplace(t *testing.T) {
	ctx := context.Background()
	lk, src := cloneTestLake(t, nil)
	plain, err := lk.CreateTable(ctx, "plain", cloneTestSchema)
	if err != nil {
		t.Fatal(err)
	}
	plain = cloneTestAppend(t, plain, 100, 101)
	plainDir := plain.tbl.Location()

	// A plain table replaced by a clone of src: its files go.
	clone, err := lk.CloneTable(ctx, "src", "plain", cloneOrReplace())
	if err != nil {
		t.Fatal(err)
	}
	if clone.Snapshot().ID != src.Snapshot().ID {
		t.Fatalf("replaced table reads snapshot %d, want %d", clone.Snapshot().ID, src.Snapshot().ID)
	}
	if _, err := os.Stat(plainDir); !os.IsNotExist(err) {
		t.Fatalf("the replaced table's directory %s is still there (%v)", plainDir, err)
	}

	// src replaced by a clone of its own clone: the files both read stay.
	if _, err := lk.CloneTable(ctx, "plain", "src", cloneOrReplace()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"src", "plain"} {
		tbl, err := lk.Table(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		rdr, err := tbl.Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for rdr.Next() {
			n += rdr.RecordBatch().NumRows()
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil || n != 2 {
			t.Fatalf("%s after the replace: %d rows, %v", name, n, err)
		}
	}
}
