package lake_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/mergeinto"
)

var keyStatusSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "status", Type: arrow.BinaryTypes.String},
}, nil)

// mergeDirect runs a MERGE through mergeinto on the table's iceberg-go
// handle, in the mode given whatever the table's write.merge.mode says:
// matched rows get the source's status, or are deleted when del is set.
func mergeDirect(t *testing.T, tbl *lake.Table, mode mergeinto.Mode, del bool, ids ...int64) *lake.Table {
	t.Helper()
	out, res := mergeStatus(t, tbl, mode, del, "merged", ids...)
	if mode == mergeinto.MergeOnRead && res.Metrics.FilesRemoved != 0 {
		t.Fatalf("merge-on-read removed %d files", res.Metrics.FilesRemoved)
	}
	return out
}

// mergeStatus runs the MERGE and returns its result.
func mergeStatus(t *testing.T, tbl *lake.Table, mode mergeinto.Mode, del bool, status string, ids ...int64) (*lake.Table, *mergeinto.Result) {
	t.Helper()
	ctx := context.Background()
	bld := array.NewRecordBuilder(memory.DefaultAllocator, keyStatusSchema)
	for _, id := range ids {
		bld.Field(0).(*array.Int64Builder).Append(id)
		bld.Field(1).(*array.StringBuilder).Append(status)
	}
	rec := bld.NewRecordBatch()
	bld.Release()
	src, err := exec.NewValues(keyStatusSchema, []arrow.RecordBatch{rec})
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	action := mergeinto.Update(mergeinto.Assignment{Column: 1, Expr: &exec.Column{Index: 5, Type: arrow.BinaryTypes.String}})
	if del {
		action = mergeinto.Delete()
	}
	it := tbl.Iceberg()
	txn := it.NewTransaction()
	spec := &mergeinto.Spec{Table: "ev", Target: it, Snapshot: it.CurrentSnapshot(), Source: src, Mode: mode,
		Keys:    []mergeinto.Key{{Target: 0, Source: &exec.Column{Index: 0, Type: arrow.PrimitiveTypes.Int64}}},
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: action}}}
	res, err := mergeinto.Execute(ctx, spec, txn)
	if err != nil {
		t.Fatal(err)
	}
	if res.Staged {
		if _, err := txn.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	out, err := tbl.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

// Compaction after merge-on-read MERGEs (position deletes), an upsert
// (equality deletes) and a copy-on-write MERGE that rewrote a file
// carrying position deletes (leaving them dangling) keeps the contents
// and leaves no delete file; every snapshot still reads as committed.
func TestCompactAfterMergeOnRead(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	tbl := mustCreate(t, lk, "ev")
	for lo := int64(0); lo < 400; lo += 100 {
		tbl = mustAppend(t, tbl, lo, lo+100)
	}
	type seen struct {
		id   int64
		rows map[int64]string
	}
	var history []seen
	record := func() {
		history = append(history, seen{tbl.Snapshot().ID, rowsByID(t, tbl)})
	}
	tbl = mergeDirect(t, tbl, mergeinto.MergeOnRead, false, 1, 150, 399)
	record()
	tbl = mergeDirect(t, tbl, mergeinto.MergeOnRead, true, 2, 151, 250)
	record()
	tbl = mergeDirect(t, tbl, mergeinto.MergeOnRead, false, 3, 152, 1)
	record()
	rows := rowsByID(t, tbl)
	if len(rows) != 397 || rows[1] != "merged" || rows[152] != "merged" {
		t.Fatalf("after merge-on-read merges: %d rows, id 1 %q, id 152 %q", len(rows), rows[1], rows[152])
	}
	// Copy-on-write rewrites file [300, 400), which carries a position
	// delete; the delete now names a removed file.
	tbl = mergeDirect(t, tbl, mergeinto.CopyOnWrite, false, 305)
	record()
	up := upsertBatch([]int64{4, 153, 5000})
	tbl, err := tbl.Upsert(ctx, []string{"id"}, up)
	up.Release()
	if err != nil {
		t.Fatal(err)
	}
	record()
	want := rowsByID(t, tbl)
	if n := deleteFileCount(t, tbl); n < 4 {
		t.Fatalf("setup: %d delete files, want several", n)
	}

	out, res, err := tbl.Compact(ctx, lake.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsByID(t, out); !maps.Equal(got, want) {
		t.Fatalf("compaction changed contents: %d rows, want %d", len(got), len(want))
	}
	if n := deleteFileCount(t, out); n != 0 {
		t.Fatalf("after compaction %d delete files remain (result %+v)", n, res)
	}
	for _, h := range history {
		old, err := out.At(h.id)
		if err != nil {
			t.Fatal(err)
		}
		if got := rowsByID(t, old); !maps.Equal(got, h.rows) {
			t.Fatalf("snapshot %d reads %d rows, committed %d", h.id, len(got), len(h.rows))
		}
	}
}

// Random sequences of merge-on-read and copy-on-write MERGEs, upserts and
// equality deletes, checked against a map after every step, after
// compaction (which must leave no delete file), and by time travel.
func TestMergeOnReadSequencesAndCompaction(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	r := rand.New(rand.NewPCG(6, 2026))
	for seq := 0; seq < 12; seq++ {
		name := fmt.Sprintf("s%d", seq)
		tbl, err := lk.CreateTable(ctx, name, eventsSchema)
		if err != nil {
			t.Fatal(err)
		}
		oracle := map[int64]string{}
		for lo := int64(0); lo < 120; lo += 40 {
			rdr := eventsReader(lo, lo+40, 100)
			tbl, err = tbl.Append(ctx, rdr)
			rdr.Release()
			if err != nil {
				t.Fatal(err)
			}
			for id := lo; id < lo+40; id++ {
				oracle[id] = []string{"new", "paid", "shipped", "returned"}[id%4]
			}
		}
		type seen struct {
			id   int64
			rows map[int64]string
		}
		var history []seen
		var log []string
		for step := 0; step < 6; step++ {
			ids := make([]int64, 1+r.IntN(8))
			for i := range ids {
				ids[i] = int64(r.IntN(140)) // some ids do not exist
			}
			slices.Sort(ids)
			ids = slices.Compact(ids)
			status := fmt.Sprintf("s%d-%d", seq, step)
			switch op := r.IntN(5); op {
			case 0, 1:
				mode := mergeinto.MergeOnRead
				if op == 1 && r.IntN(3) == 0 {
					mode = mergeinto.CopyOnWrite
				}
				del := r.IntN(3) == 0
				log = append(log, fmt.Sprintf("merge %s del=%v %v", mode, del, ids))
				tbl, _ = mergeStatus(t, tbl, mode, del, status, ids...)
				for _, id := range ids {
					if _, ok := oracle[id]; ok {
						if del {
							delete(oracle, id)
						} else {
							oracle[id] = status
						}
					}
				}
			case 2, 3:
				log = append(log, fmt.Sprintf("upsert %v", ids))
				up := upsertBatch(ids)
				tbl, err = tbl.Upsert(ctx, []string{"id"}, up)
				up.Release()
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range ids {
					oracle[id] = "upserted"
				}
			case 4:
				log = append(log, fmt.Sprintf("delete %v", ids))
				keys := idReader(ids...)
				tbl, err = tbl.DeleteEquality(ctx, []string{"id"}, keys)
				keys.Release()
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range ids {
					delete(oracle, id)
				}
			}
			if got := rowsByID(t, tbl); !maps.Equal(got, oracle) {
				t.Fatalf("sequence %d step %d: %d rows, want %d\n%v", seq, step, len(got), len(oracle), log)
			}
			history = append(history, seen{tbl.Snapshot().ID, maps.Clone(oracle)})
		}
		out, _, err := tbl.Compact(ctx, lake.CompactOptions{})
		if err != nil {
			t.Fatalf("sequence %d: compact: %v\n%v", seq, err, log)
		}
		if got := rowsByID(t, out); !maps.Equal(got, oracle) {
			t.Fatalf("sequence %d: compaction changed contents: %d rows, want %d\n%v", seq, len(got), len(oracle), log)
		}
		if n := deleteFileCount(t, out); n != 0 {
			t.Fatalf("sequence %d: %d delete files after compaction\n%v", seq, n, log)
		}
		for _, h := range history {
			old, err := out.At(h.id)
			if err != nil {
				t.Fatal(err)
			}
			if got := rowsByID(t, old); !maps.Equal(got, h.rows) {
				t.Fatalf("sequence %d: snapshot %d reads %d rows, committed %d", seq, h.id, len(got), len(h.rows))
			}
		}
	}
}

// A copy-on-write MERGE that replaces a file drops the deletes that
// applied only to it: its position deletes, and an equality delete no
// other file needs.
func TestCopyOnWriteMergeDropsDeadDeletes(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	tbl := mustCreate(t, lk, "ev")
	tbl = mustAppend(t, tbl, 0, 50)
	tbl = mergeDirect(t, tbl, mergeinto.MergeOnRead, true, 6)
	keys := idReader(7)
	tbl, err := tbl.DeleteEquality(ctx, []string{"id"}, keys)
	keys.Release()
	if err != nil {
		t.Fatal(err)
	}
	if n := deleteFileCount(t, tbl); n != 2 {
		t.Fatalf("setup: %d delete files, want 2", n)
	}
	tbl = mergeDirect(t, tbl, mergeinto.CopyOnWrite, false, 8)
	if n := deleteFileCount(t, tbl); n != 0 {
		t.Fatalf("after the copy-on-write merge: %d delete files, want 0", n)
	}
	got := rowsByID(t, tbl)
	if _, ok := got[6]; ok || len(got) != 48 || got[8] != "merged" {
		t.Fatalf("rows %d, id 8 %q", len(got), got[8])
	}
}

// A table whose only data file needs no rewrite but which still lists a
// position delete for a data file removed behind its back (iceberg-go's
// ReplaceDataFilesWithDataFiles, which leaves deletes alone): compaction
// removes just the dangling delete file.
func TestCompactRemovesDanglingDeletesAlone(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	tbl := mustCreate(t, lk, "ev")
	tbl = mustAppend(t, tbl, 0, 50)
	tbl = mustAppend(t, tbl, 50, 100)
	tbl = mergeDirect(t, tbl, mergeinto.MergeOnRead, true, 7)
	tasks, err := tbl.Iceberg().Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	txn := tbl.Iceberg().NewTransaction()
	for _, task := range tasks {
		if len(task.DeleteFiles) > 0 {
			if err := txn.ReplaceDataFilesWithDataFiles(ctx, []iceberg.DataFile{task.File}, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tbl.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	want := rowsByID(t, tbl)
	files, err := tbl.PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].DeleteFiles != 0 || deleteFileCount(t, tbl) != 1 {
		t.Fatalf("setup: %+v, %d delete files", files, deleteFileCount(t, tbl))
	}
	out, res, err := tbl.Compact(ctx, lake.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.RemovedDeleteFiles != 1 || res.RewrittenDataFiles != 0 || deleteFileCount(t, out) != 0 {
		t.Fatalf("result %+v, %d delete files left", res, deleteFileCount(t, out))
	}
	if got := rowsByID(t, out); !maps.Equal(got, want) || len(got) != 50 {
		t.Fatalf("contents changed: %d rows", len(got))
	}
	again, res, err := out.Compact(ctx, lake.CompactOptions{})
	if err != nil || res != (lake.CompactResult{}) || again.Snapshot().ID != out.Snapshot().ID {
		t.Fatalf("second compaction: %+v, %v", res, err)
	}
}
