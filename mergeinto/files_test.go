package mergeinto_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
)

var kvSchema = schemaOf(arrow.Field{Name: "id", Type: i64}, field("v", i64))

// tenFiles is a table of 10 files; file i holds ids i*100 .. i*100+99.
func tenFiles(t *testing.T) *fixture {
	f := newFixture(t, "ten", kvSchema)
	var files [][][]any
	for i := 0; i < 10; i++ {
		var rows [][]any
		for j := 0; j < 100; j++ {
			rows = append(rows, []any{i*100 + j, 0})
		}
		files = append(files, rows)
	}
	f.appendFiles(files...)
	if f.files() != 10 {
		t.Fatalf("%d files", f.files())
	}
	return f
}

func kvUpdate(t *testing.T, ids []int64, opts mergeinto.Options) *mergeinto.Spec {
	var rows [][]any
	for _, id := range ids {
		rows = append(rows, []any{id, 1})
	}
	return &mergeinto.Spec{
		Source:  values(t, kvSchema, rows...),
		Keys:    []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Update(set(1, col(3, i64)))}},
		Options: opts,
	}
}

func TestFileRewrites(t *testing.T) {
	t.Run("concentrated keys rewrite one file", func(t *testing.T) {
		f := tenFiles(t)
		res := f.mustMerge(kvUpdate(t, []int64{3, 17, 42, 99}, mergeinto.Options{}))
		m := res.Metrics
		if m.FilesRewritten != 1 || m.FilesRemoved != 1 || m.FilesScanned != 1 || m.FilesSkipped != 9 || m.RowsCopied != 96 || res.Count != 4 {
			t.Fatalf("metrics %s", m)
		}
		if f.files() != 10 {
			t.Fatalf("%d files", f.files())
		}
	})
	t.Run("spread keys rewrite ten", func(t *testing.T) {
		f := tenFiles(t)
		res := f.mustMerge(kvUpdate(t, []int64{5, 105, 205, 305, 405, 505, 605, 705, 805, 905}, mergeinto.Options{}))
		if m := res.Metrics; m.FilesRewritten != 10 || m.FilesScanned != 10 || m.RowsCopied != 990 || res.Count != 10 {
			t.Fatalf("metrics %s", m)
		}
	})
	t.Run("range pruning past the exact-set limit", func(t *testing.T) {
		f := tenFiles(t)
		res := f.mustMerge(kvUpdate(t, []int64{210, 220, 230, 240, 250, 260}, mergeinto.Options{ExactKeyLimit: 3}))
		if m := res.Metrics; m.FilesRewritten != 1 || m.FilesScanned != 1 || res.Count != 6 {
			t.Fatalf("metrics %s", m)
		}
		// Clusters of keys (old rows in two files, new keys past the end)
		// become separate ranges: the files between them are skipped.
		res = f.mustMerge(kvUpdate(t, []int64{5, 6, 7, 905, 906, 5000, 5001}, mergeinto.Options{ExactKeyLimit: 1}))
		if m := res.Metrics; m.FilesRewritten != 2 || m.FilesScanned != 2 || m.FilesSkipped != 8 || res.Count != 5 {
			t.Fatalf("metrics %s", m)
		}
	})
	t.Run("more exact keys than iceberg-go evaluates in one IN", func(t *testing.T) {
		// 300 distinct keys (under ExactKeyLimit's 1000) in files 3, 4
		// and 8: iceberg-go's evaluators give up on an IN of more than 200
		// values, so the set must go as several INs
		var ids []int64
		for id := int64(300); id < 500; id++ {
			ids = append(ids, id)
		}
		for id := int64(800); id < 900; id++ {
			ids = append(ids, id)
		}
		f := tenFiles(t)
		res := f.mustMerge(kvUpdate(t, ids, mergeinto.Options{}))
		if m := res.Metrics; m.FilesScanned != 3 || m.FilesSkipped != 7 {
			t.Fatalf("metrics %s", m)
		}
	})
	t.Run("small buffer re-reads the unchanged prefix", func(t *testing.T) {
		f := tenFiles(t)
		res := f.mustMerge(kvUpdate(t, []int64{150, 199}, mergeinto.Options{BatchSize: 10, BufferLimit: 1}))
		if m := res.Metrics; m.FilesRewritten != 1 || m.RowsCopied != 98 || res.Count != 2 {
			t.Fatalf("metrics %s", m)
		}
		if got := f.rows(); len(got) != 1000 || got[0] != "0|0" {
			t.Fatalf("%d rows", len(got))
		}
		var ones int
		for _, r := range f.rows() {
			if strings.HasSuffix(r, "|1") {
				ones++
			}
		}
		if ones != 2 {
			t.Fatalf("%d updated rows", ones)
		}
	})
	t.Run("no-op merges stage nothing", func(t *testing.T) {
		f := tenFiles(t)
		head := f.table().CurrentSnapshot().SnapshotID
		for _, spec := range []*mergeinto.Spec{
			kvUpdate(t, []int64{5000, 6000}, mergeinto.Options{}),
			{ // matches, but the condition never holds
				Source: values(t, kvSchema, []any{5, 1}, []any{105, 1}), Keys: []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Cond: call(t, "<", col(3, i64), lit(t, int64(0))), Action: mergeinto.Delete()}},
			},
			{ // every source row matches: nothing to insert
				Source: values(t, kvSchema, []any{5, 1}), Keys: []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
				Clauses: []mergeinto.Clause{{Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Insert(col(2, i64), col(3, i64))}},
			},
		} {
			res := f.mustMerge(spec)
			if res.Staged || res.Count != 0 || res.Metrics.FilesAdded != 0 || res.Metrics.FilesRemoved != 0 {
				t.Fatalf("no-op staged: %+v", res)
			}
		}
		if f.table().CurrentSnapshot().SnapshotID != head {
			t.Fatal("head moved")
		}
	})
	t.Run("not matched by source reads every file", func(t *testing.T) {
		f := tenFiles(t)
		res := f.mustMerge(&mergeinto.Spec{
			Source: values(t, kvSchema, []any{5, 1}), Keys: []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
			Clauses: []mergeinto.Clause{{Kind: mergeinto.NotMatchedBySource, Cond: call(t, ">=", col(0, i64), lit(t, int64(900))), Action: mergeinto.Delete()}},
		})
		if m := res.Metrics; m.FilesScanned != 10 || m.FilesRemoved != 1 || m.FilesRewritten != 0 || res.Count != 100 {
			t.Fatalf("metrics %s", m)
		}
		if f.files() != 9 {
			t.Fatalf("%d files", f.files())
		}
	})
}

// Two merges from one base race to commit: exactly one wins, the loser's
// error wraps table.ErrCommitFailed, its files are gone, and the table is
// the winner's.
func TestRace(t *testing.T) {
	f := tenFiles(t)
	specs := []*mergeinto.Spec{
		kvUpdate(t, []int64{1, 2, 3}, mergeinto.Options{}),
		{
			Source: values(t, kvSchema, []any{2, 7}, []any{2000, 7}), Keys: []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
			Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}, {Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Insert(col(2, i64), col(3, i64))}},
		},
	}
	runs := []*run{f.begin(), f.begin()}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	start := make(chan struct{})
	for i := range runs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := runs[i]
			res, err := mergeinto.Execute(ctx, f.spec(r, specs[i]), r.txn)
			if err != nil {
				errs[i] = err
				return
			}
			if !res.Staged {
				errs[i] = errors.New("nothing staged")
				return
			}
			<-start
			_, errs[i] = r.txn.Commit(ctx)
		}(i)
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			if winner >= 0 {
				t.Fatal("both merges committed")
			}
			winner = i
			continue
		}
		if !errors.Is(err, table.ErrCommitFailed) {
			t.Fatalf("loser's error %v does not wrap table.ErrCommitFailed", err)
		}
		created := runs[i].tracker.Created()
		if len(created) == 0 {
			t.Fatal("the loser wrote nothing?")
		}
		if err := runs[i].tracker.RemoveCreated(); err != nil {
			t.Fatal(err)
		}
		for _, p := range created {
			if _, err := os.Stat(strings.TrimPrefix(p, "file://")); err == nil {
				t.Fatalf("loser's file %s is still there", p)
			}
		}
	}
	if winner < 0 {
		t.Fatalf("no winner: %v", errs)
	}
	got := map[string]bool{}
	for _, r := range f.rows() {
		got[r] = true
	}
	if winner == 0 {
		if len(got) != 1000 || !got["1|1"] || !got["2|1"] || !got["3|1"] || !got["4|0"] {
			t.Fatal("table is not merge 0's result")
		}
	} else {
		if len(got) != 1000 || got["2|0"] || !got["2000|7"] || !got["3|0"] {
			t.Fatal("table is not merge 1's result")
		}
	}
}

// The source's hash table is reserved in the budget.
func TestBudget(t *testing.T) {
	f := basic(t)
	b := exec.NewBudget(64)
	_, err := f.merge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{1, "x", 1}, []any{2, "y", 2}), Keys: onID(), Budget: b,
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}})
	if !errors.Is(err, exec.ErrMemoryLimit) {
		t.Fatalf("error %v", err)
	}
	wantErr(t, err, "merge into events: source: memory limit exceeded: merge into events: the source needs more than the statement memory limit of 64 B")
	b = exec.NewBudget(1 << 20)
	f.mustMerge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{1, "x", 1}), Keys: onID(), Budget: b,
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}})
	if b.Used() != 0 || b.Peak() == 0 {
		t.Fatalf("budget used %d peak %d", b.Used(), b.Peak())
	}
}

// A source that fails, a cancelled statement: errors, nothing staged,
// nothing left behind (merge checks the files).
func TestSourceErrorAndCancellation(t *testing.T) {
	f := basic(t)
	_, err := f.merge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{1, "x", 0}),
		Keys:    []mergeinto.Key{{Target: tID, Source: call(t, "/", lit(t, int64(1)), col(2, i64))}},
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}})
	wantErr(t, err, "merge into events: source: ")
	wantErr(t, err, "division by zero")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	r := f.begin()
	_, err = mergeinto.Execute(cctx, f.spec(r, kvLikeUpsert(t)), r.txn)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	if c := r.tracker.Created(); len(c) != 0 {
		t.Fatalf("cancelled merge left %v", c)
	}
	wantRows(t, f.rows(), "1|a|10", "2|b|20", "3|c|30")
}

func kvLikeUpsert(t *testing.T) *mergeinto.Spec {
	return &mergeinto.Spec{Source: values(t, sourceSchema, []any{1, "x", 0}, []any{9, "y", 0}), Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: upd(t)}, {Kind: mergeinto.NotMatchedByTarget, Action: ins(t)}}}
}

// A widened decimal key whose source values overflow the target column's
// precision cannot prune; the merge still runs.
func TestWidenedDecimalKey(t *testing.T) {
	narrow := &arrow.Decimal128Type{Precision: 5, Scale: 2}
	wide := &arrow.Decimal128Type{Precision: 12, Scale: 2}
	f := newFixture(t, "d", schemaOf(field("k", narrow), field("v", i64)))
	f.appendRows([]any{mustDec(t, "1.25", narrow), 1}, []any{mustDec(t, "2.50", narrow), 2})
	src := schemaOf(field("k", wide), field("v", i64))
	res := f.mustMerge(&mergeinto.Spec{Source: values(t, src, []any{mustDec(t, "2.50", wide), 20}, []any{mustDec(t, "123456789.00", wide), 30}),
		Keys:    []mergeinto.Key{{Target: 0, Source: col(0, wide)}},
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Update(set(1, col(3, i64)))}},
		Options: mergeinto.Options{ExactKeyLimit: -1}})
	wantRows(t, f.rows(), "1.25|1", "2.5|20")
	if res.Count != 1 {
		t.Fatalf("count %d", res.Count)
	}
}

// A data file carrying position deletes (a merge-on-read DELETE) is read
// with its deletes applied; rewriting it keeps the deleted rows out, and a
// cardinality error names the row among the live rows.
func TestTargetWithPositionDeletes(t *testing.T) {
	f := basic(t)
	f.appendRows([]any{4, "d", 40}, []any{5, "e", 50})
	txn := f.cat.WithFS(f.table(), iceio.LocalFS{}).NewTransaction()
	if err := txn.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}); err != nil {
		t.Fatal(err)
	}
	if err := txn.Delete(ctx, iceberg.EqualTo(iceberg.Reference("id"), int64(2)), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tasks, err := f.table().Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deletes := 0
	for _, task := range tasks {
		deletes += len(task.DeleteFiles) + len(task.DeletionVectorFiles)
	}
	if deletes == 0 {
		t.Skip("iceberg-go wrote no position deletes")
	}
	wantRows(t, f.rows(), "1|a|10", "3|c|30", "4|d|40", "5|e|50")
	_, err = f.merge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{3, "x", 0}, []any{3, "y", 0}), Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: upd(t)}}})
	wantErr(t, err, ".parquet, row 1; key id=3; source rows 0 and 1); narrow the ON condition")
	res := f.mustMerge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{3, "x", 0}, []any{2, "gone", 0}), Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: upd(t)}, {Kind: mergeinto.NotMatchedByTarget, Action: ins(t)}}})
	wantRows(t, f.rows(), "1|a|10", "2|gone|0", "3|x|0", "4|d|40", "5|e|50")
	if res.Count != 2 || res.Metrics.RowsCopied != 1 {
		t.Fatalf("metrics %s", res.Metrics)
	}
}

// Two MERGE statements staged into one transaction (issue 8's BEGIN ...
// COMMIT): the second reads the first's staged table; one commit applies
// both.
func TestTwoMergesInOneTransaction(t *testing.T) {
	f := basic(t)
	r := f.begin()
	res1, err := mergeinto.Execute(ctx, f.spec(r, kvLikeUpsert(t)), r.txn)
	if err != nil || !res1.Staged {
		t.Fatalf("first merge: %v %+v", err, res1)
	}
	staged, err := r.txn.StagedTable()
	if err != nil {
		t.Fatal(err)
	}
	spec2 := &mergeinto.Spec{Table: f.name, Target: staged.Table, Snapshot: staged.CurrentSnapshot(),
		Source: values(t, sourceSchema, []any{9, "y2", 99}, []any{1, "x2", 11}), Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Cond: call(t, "=", col(tID, i64), lit(t, int64(9))), Action: mergeinto.Delete()}, {Kind: mergeinto.Matched, Action: upd(t)}}}
	res2, err := mergeinto.Execute(ctx, spec2, r.txn)
	if err != nil || res2.Count != 2 {
		t.Fatalf("second merge: %v %+v", err, res2)
	}
	// A statement that reads the base instead of the staged head is a
	// binder bug, caught before staging.
	spec3 := f.spec(r, kvLikeUpsert(t))
	_, err = mergeinto.Execute(ctx, spec3, r.txn)
	wantErr(t, err, "but the transaction's head is")
	if _, err := r.txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantRows(t, f.rows(), "1|x2|11", "2|b|20", "3|c|30")
}

// After ALTER TABLE ... RENAME COLUMN and ADD COLUMN, a rewrite keeps every
// value: files are read through the current schema.
func TestSchemaEvolution(t *testing.T) {
	f := basic(t)
	txn := f.table().NewTransaction()
	us := txn.UpdateSchema(true, false)
	us.RenameColumn([]string{"status"}, "state")
	us.AddColumn([]string{"note"}, iceberg.PrimitiveTypes.String, "", false, nil)
	if err := us.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	ts, err := mergeinto.TargetSchema(f.table())
	if err != nil {
		t.Fatal(err)
	}
	if ts.NumFields() != 4 || ts.Field(1).Name != "state" {
		t.Fatalf("schema %s", ts)
	}
	// Joined: 0 id, 1 state, 2 amount, 3 note, 4 sid, 5 sstatus, 6 samount.
	res := f.mustMerge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{2, "n", 0}), Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Update(set(3, col(5, str)))}}})
	if res.Count != 1 {
		t.Fatalf("count %d", res.Count)
	}
	wantRows(t, f.rows(), "1|a|10|NULL", "2|b|20|n", "3|c|30|NULL")
}
