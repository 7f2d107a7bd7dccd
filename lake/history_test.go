package lake_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skadedb/skade/lake"
)

func TestTimeTravelAndExpiry(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	tbl := mustCreate(t, lk, "events")

	// Three appends, then an overwrite that replaces every data file.
	type point struct {
		id       int64
		from, to int64
	}
	var points []point
	for i := int64(0); i < 3; i++ {
		tbl = mustAppend(t, tbl, i*1000, (i+1)*1000)
		points = append(points, point{tbl.Snapshot().ID, 0, (i + 1) * 1000})
	}
	rdr := eventsReader(10_000, 10_500, 500)
	tbl, err := tbl.Overwrite(ctx, rdr)
	rdr.Release()
	if err != nil {
		t.Fatal(err)
	}
	points = append(points, point{tbl.Snapshot().ID, 10_000, 10_500})

	// Every snapshot reads back exactly as committed, by id and by time.
	for _, p := range points {
		at, err := tbl.At(p.id)
		if err != nil {
			t.Fatal(err)
		}
		r, err := at.Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sumOf(t, r), expectedSums(p.from, p.to); got != want {
			t.Fatalf("snapshot %d:\n got %s\nwant %s", p.id, describe(got), describe(want))
		}
		asOf, err := tbl.AsOf(at.Snapshot().Committed)
		if err != nil {
			t.Fatal(err)
		}
		if asOf.Snapshot().Committed != at.Snapshot().Committed {
			t.Fatalf("AsOf(%v) found snapshot committed at %v", at.Snapshot().Committed, asOf.Snapshot().Committed)
		}
	}
	old, err := tbl.At(points[0].id)
	if err != nil {
		t.Fatal(err)
	}
	rdr = eventsReader(0, 10, 10)
	_, err = old.Append(ctx, rdr)
	rdr.Release()
	if !errors.Is(err, lake.ErrReadOnly) {
		t.Fatalf("append through a time-travel handle: got %v, want ErrReadOnly", err)
	}
	if _, err := tbl.AsOf(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)); !errors.Is(err, lake.ErrSnapshotNotFound) {
		t.Fatalf("AsOf before the first snapshot: got %v, want ErrSnapshotNotFound", err)
	}

	// The appended data files are reached only by the expired snapshots now.
	oldFiles := dataFiles(t, dir)
	res, err := tbl.ExpireSnapshots(ctx, time.Now().Add(time.Minute), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Expired) != 3 {
		t.Fatalf("expired %d snapshots, want 3", len(res.Expired))
	}
	live := dataFiles(t, dir)
	if len(live) != 1 {
		t.Fatalf("%d data files left after expiry, want 1 (the overwrite's); before: %d", len(live), len(oldFiles))
	}
	for _, p := range res.DeletedFiles {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("expiry reported %s deleted, but it is there", p)
		}
	}

	cur, err := lk.Table(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	_, err = cur.At(points[0].id)
	if !errors.Is(err, lake.ErrSnapshotNotFound) {
		t.Fatalf("time travel to an expired snapshot: got %v, want ErrSnapshotNotFound", err)
	}
	if !strings.Contains(err.Error(), "never existed or was expired") {
		t.Fatalf("expired snapshot message: %q", err.Error())
	}
	r, err := cur.Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sumOf(t, r), expectedSums(10_000, 10_500); got != want {
		t.Fatalf("after expiry:\n got %s\nwant %s", describe(got), describe(want))
	}

	if _, err := cur.ExpireSnapshots(ctx, time.Now(), 0); err == nil || !strings.Contains(err.Error(), "retain_last must be at least 1") {
		t.Fatalf("retain_last 0: got %v", err)
	}
}

func TestRemoveOrphanFiles(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	tbl := mustAppend(t, mustCreate(t, lk, "events"), 0, 100)
	dataDir := filepath.Dir(dataFiles(t, dir)[0])
	orphan := filepath.Join(dataDir, "stray.parquet")
	if err := os.WriteFile(orphan, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A fresh file is protected by the age bound.
	res, err := tbl.RemoveOrphanFiles(ctx, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.DeletedFiles) != 0 {
		t.Fatalf("deleted %v, want nothing younger than an hour", res.DeletedFiles)
	}
	res, err = tbl.RemoveOrphanFiles(ctx, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.DeletedFiles) != 1 || res.DeletedFiles[0] != orphan {
		t.Fatalf("deleted %v, want just %s", res.DeletedFiles, orphan)
	}
	r, err := tbl.Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sumOf(t, r), expectedSums(0, 100); got != want {
		t.Fatalf("after orphan cleanup:\n got %s\nwant %s", describe(got), describe(want))
	}
}

func TestDropTable(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	mustAppend(t, mustCreate(t, lk, "kept"), 0, 100)
	mustAppend(t, mustCreate(t, lk, "purged"), 0, 100)
	if err := lk.DropTable(ctx, "kept", false); err != nil {
		t.Fatal(err)
	}
	if err := lk.DropTable(ctx, "purged", true); err != nil {
		t.Fatal(err)
	}
	names, err := lk.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 0 {
		t.Fatalf("tables after drop: %v", names)
	}
	var keptFiles, purgedFiles int
	for p := range allFiles(t, dir) {
		switch {
		case strings.Contains(p, "/kept-"):
			keptFiles++
		case strings.Contains(p, "/purged-"):
			purgedFiles++
		}
	}
	if keptFiles == 0 || purgedFiles != 0 {
		t.Fatalf("after drop: kept table has %d files (want >0), purged table has %d (want 0)", keptFiles, purgedFiles)
	}
	if err := lk.DropTable(ctx, "kept", false); !errors.Is(err, lake.ErrTableNotFound) {
		t.Fatalf("dropping twice: got %v, want ErrTableNotFound", err)
	}
}

func TestBadNames(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	dir := filepath.Join(parent, "lake")
	lk, err := lake.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	for _, name := range []string{"", "../escape", "a/b", `a\b`, "..", "main..x", "x\x00y", "tab\tname", "other.main.t", "a.b.c.d", `"unterminated`} {
		_, err := lk.CreateTable(ctx, name, eventsSchema)
		if !errors.Is(err, lake.ErrInvalidName) {
			t.Errorf("CreateTable(%q): got %v, want ErrInvalidName", name, err)
		}
	}
	// Nothing was written next to the lake.
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "lake" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("files outside the lake: %v", names)
	}
	// Column names are checked too.
	for _, col := range []string{"", "a.b", "tab\tcol"} {
		_, err = lk.CreateTable(ctx, "ok", eventsSchemaWithColumn(col))
		if !errors.Is(err, lake.ErrInvalidName) {
			t.Fatalf("column %q: got %v, want ErrInvalidName", col, err)
		}
	}
	// Quoted SQL identifiers make fine column names, and may partition.
	tbl, err := lk.CreateTable(ctx, "weird", eventsSchemaWithColumn("Weird Name/ü"), lake.PartitionBy("Weird Name/ü"))
	if err != nil {
		t.Fatalf("column with a space, slash and umlaut: %v", err)
	}
	if got := tbl.Schema().Field(4).Name; got != "Weird Name/ü" {
		t.Fatalf("column name round trip: %q", got)
	}
}

// History reads the handle's metadata: a handle taken before a commit
// lists the snapshots it knew until Refresh, and a done context is an
// error rather than a list.
func TestHistoryOfAHandle(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	tbl := mustAppend(t, mustCreate(t, lk, "h"), 0, 10)
	old := tbl
	tbl = mustAppend(t, tbl, 10, 20)
	if n := len(history(t, old)); n != 1 {
		t.Errorf("the old handle lists %d snapshots, want 1", n)
	}
	fresh, err := old.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h := history(t, fresh)
	if len(h) != 2 || h[1].ID != tbl.Snapshot().ID || !h[1].Current || h[0].Current {
		t.Errorf("refreshed history %+v, want two snapshots ending at the current %d", h, tbl.Snapshot().ID)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if h, err := fresh.History(cancelled); !errors.Is(err, context.Canceled) || h != nil {
		t.Errorf("History on a cancelled context: %v, %v; want context.Canceled", h, err)
	}
}

// A lake directory copied elsewhere still names the original's files in
// its catalog and metadata: opening its tables is refused with a message
// that says so, instead of reading (and writing into) the original.
func TestCopiedLakeIsRefused(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	mustAppend(t, mustCreate(t, lk, "events"), 0, 10)
	if err := lk.Close(); err != nil {
		t.Fatal(err)
	}
	copyDir := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(copyDir, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	cp, err := lake.Open(ctx, copyDir)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if _, err := cp.Table(ctx, "events"); err == nil || !strings.Contains(err.Error(), "the lake was copied or moved") {
		t.Fatalf("opening a table of a copied lake: %v, want a refusal", err)
	}
}
