package catalog_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
)

// TestLostRace lets two appends start from the same base with an explicit
// snapshot assertion (and no retries): exactly one wins, the loser's error wraps
// table.ErrCommitFailed, and the loser leaves no metadata file behind.
// Committers are goroutines sharing one *Catalog, or each with its own
// *Catalog on the same directory (as two processes would be).
func TestLostRace(t *testing.T) {
	for _, shared := range []bool{true, false} {
		name := map[bool]string{true: "one catalog", false: "two catalogs"}[shared]
		t.Run(name, func(t *testing.T) {
			_, lake := lakeUnder(t)
			cats := []*catalog.Catalog{openLake(t, lake), openLake(t, lake)}
			if shared {
				cats[1] = cats[0]
			}
			base, err := appendRows(t, createTable(t, cats[0], "t"), 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			for round := range 5 {
				baseLoc := mustPointer(t, cats[0], "t")
				before := metadataFiles(t, cats[0])
				tbls := make([]*table.Table, 2)
				for i, c := range cats {
					if tbls[i], err = c.LoadTable(ctx, base.Identifier()); err != nil {
						t.Fatal(err)
					}
				}
				var (
					wg    sync.WaitGroup
					start = make(chan struct{})
					errs  = make([]error, 2)
					locs  = make([]string, 2)
				)
				for i := range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						txn := tbls[i].NewTransaction()
						if errs[i] = txn.AssertRefSnapshotID("main"); errs[i] != nil {
							return
						}
						rdr := records(t, nil, int64(10*round+i), 1)
						defer rdr.Release()
						if errs[i] = txn.Append(ctx, rdr, nil); errs[i] != nil {
							return
						}
						<-start
						var tbl *table.Table
						if tbl, errs[i] = txn.Commit(ctx); errs[i] == nil {
							locs[i] = tbl.MetadataLocation()
						}
					}()
				}
				close(start)
				wg.Wait()

				won := 0
				for i, err := range errs {
					switch {
					case err == nil:
						won++
						if got := mustPointer(t, cats[0], "t"); got != locs[i] {
							t.Errorf("round %d: pointer %s, want the winner's %s", round, got, locs[i])
						}
					default:
						wantErr(t, err, table.ErrCommitFailed, "commit to table main.t failed: ")
						wantErr(t, err, nil, "; reload the table and retry")
					}
				}
				if won != 1 {
					t.Fatalf("round %d: %d commits won, want exactly 1 (errors %v)", round, won, errs)
				}
				// The only new metadata file is the winner's.
				after := metadataFiles(t, cats[0])
				if len(after) != len(before)+1 {
					t.Errorf("round %d: metadata files %d -> %d, want one more", round, len(before), len(after))
				}
				if mustPointer(t, cats[0], "t") == baseLoc {
					t.Errorf("round %d: pointer did not move", round)
				}
			}
		})
	}
}

// TestLoserFileRemoved makes the loser fail at the swap itself (not at the
// requirement check), deterministically: it stages first, then another
// commit lands, then it publishes.
func TestLoserFileRemoved(t *testing.T) {
	c := newLake(t)
	tbl := createTable(t, c, "t")
	loser, err := c.StageCommit(ctx, tbl.Identifier(), nil,
		[]table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"who": "loser"})})
	if err != nil {
		t.Fatal(err)
	}
	_, winnerLoc, err := c.CommitTable(ctx, tbl.Identifier(), nil,
		[]table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"who": "winner"})})
	if err != nil {
		t.Fatal(err)
	}
	err = c.SwapPointers(ctx, []catalog.PointerSwap{loser.Swap})
	wantErr(t, err, table.ErrCommitFailed, "commit to table main.t failed: a concurrent commit moved its metadata from "+
		tbl.MetadataLocation()+" to "+winnerLoc+"; reload the table and retry")
	var ce *catalog.ConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.Ident, table.Identifier{"main", "t"}) {
		t.Errorf("error %v is not a *ConflictError naming main.t", err)
	}
	if err := c.Discard(loser); err != nil {
		t.Fatal(err)
	}
	for _, f := range metadataFiles(t, c) {
		if c.Dir()+"/"+f == loser.MetadataLocation {
			t.Errorf("loser's metadata file %s still exists", f)
		}
	}
	if got := mustPointer(t, c, "t"); got != winnerLoc {
		t.Errorf("pointer %s, want %s", got, winnerLoc)
	}
}

// TestRetryLandsBoth: without an explicit snapshot assertion, iceberg-go's
// refresh-and-replay (commit.retry.num-retries) makes both appends land.
func TestRetryLandsBoth(t *testing.T) {
	props := iceberg.Properties{table.CommitNumRetriesKey: "10", "commit.retry.min-wait-ms": "5"}

	t.Run("sequential stale base", func(t *testing.T) {
		c := newLake(t)
		base, err := c.CreateTable(ctx, table.Identifier{"t"}, testSchema, withProps(props))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := appendRows(t, base, 0, 10); err != nil {
			t.Fatal(err)
		}
		// base is stale now: its commit fails once, then replays.
		if _, err := appendRows(t, base, 10, 5); err != nil {
			t.Fatalf("stale append did not retry: %v", err)
		}
		checkRows(t, c, "t", 15, 2)
	})

	t.Run("explicit assertion fails", func(t *testing.T) {
		c := newLake(t)
		base, err := c.CreateTable(ctx, table.Identifier{"t"}, testSchema, withProps(props))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := appendRows(t, base, 0, 10); err != nil {
			t.Fatal(err)
		}
		txn := base.NewTransaction()
		if err := txn.AssertRefSnapshotID("main"); err != nil {
			t.Fatal(err)
		}
		rdr := records(t, nil, 10, 5)
		defer rdr.Release()
		if err := txn.Append(ctx, rdr, nil); err != nil {
			t.Fatal(err)
		}
		_, err = txn.Commit(ctx)
		// iceberg-go's retry refreshes, sees the pinned assertion can never
		// hold, and stops.
		wantErr(t, err, table.ErrCommitFailed, "requirement failed: branch \"main\" was created concurrently")
		checkRows(t, c, "t", 10, 1)
	})

	t.Run("concurrent, two catalogs", func(t *testing.T) {
		_, lake := lakeUnder(t)
		cats := []*catalog.Catalog{openLake(t, lake), openLake(t, lake)}
		if _, err := cats[0].CreateTable(ctx, table.Identifier{"t"}, testSchema, withProps(props)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, c := range cats {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 3 {
					tbl, err := c.LoadTable(ctx, table.Identifier{"t"})
					if err != nil {
						errs[i] = err

						return
					}
					if _, err := appendRows(t, tbl, int64(i*100+j*10), 10); err != nil {
						errs[i] = err

						return
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("append: %v", err)
			}
		}
		checkRows(t, cats[1], "t", 60, 6)
	})
}

func checkRows(t *testing.T, c *catalog.Catalog, name string, rows int64, snapshots int) {
	t.Helper()
	tbl, err := c.LoadTable(ctx, table.Identifier{name})
	if err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, tbl); n != rows {
		t.Errorf("rows = %d, want %d", n, rows)
	}
	if n := len(tbl.Metadata().Snapshots()); n != snapshots {
		t.Errorf("snapshots = %d, want %d", n, snapshots)
	}
}
