package lake_test

import (
	"context"
	"testing"

	"github.com/skadedb/skade/lake"
)

func TestResultProgress(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	tbl := mustCreate(t, lk, "events")
	tbl = mustAppend(t, tbl, 0, 1000)
	mustAppend(t, tbl, 1000, 1500)
	sess := lk.Session()

	res, err := sess.SQL(ctx, "SELECT id FROM events WHERE id >= 0")
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Progress(); p.FilesPlanned != 2 || p.RowsScanned != 0 {
		t.Fatalf("before reading: %+v, want 2 files planned and no rows", p)
	}
	bs, err := res.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		b.Release()
	}
	if p := res.Progress(); p.FilesPlanned != 2 || p.FilesSkipped != 0 || p.RowsScanned != 1500 {
		t.Fatalf("after reading: %+v, want 2 files and 1500 rows", p)
	}

	// A materialized result (DML's count) reports nothing.
	res, err = sess.SQL(ctx, "DELETE FROM events WHERE id < 10")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if p := res.Progress(); p != (lake.Progress{}) {
		t.Fatalf("DML result progress %+v, want zero", p)
	}
}
