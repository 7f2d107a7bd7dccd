package mergeinto_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/scan"
)

// mergeStmt is one generated MERGE, buildable any number of times.
type mergeStmt struct {
	source    [][]any
	clauses   []rclause
	composite bool
	on        *rexpr
	batch     int
}

func (g gen) mergeStmt() mergeStmt {
	s := mergeStmt{source: g.sourceRows(g.r.IntN(20), g.r.IntN(4) == 0), clauses: g.clauses(), composite: g.r.IntN(4) == 0}
	if g.r.IntN(4) == 0 {
		e := g.cond(1)
		s.on = &e
	}
	if g.r.IntN(5) == 0 {
		s.batch = 1 + g.r.IntN(4)
	}
	return s
}

func (s mergeStmt) spec(t *testing.T, mode mergeinto.Mode) *mergeinto.Spec {
	spec := &mergeinto.Spec{Source: values(t, dSource, s.source...), Keys: []mergeinto.Key{{Target: 0, Source: col(0, i64)}}, Mode: mode}
	if s.composite {
		spec.Keys = append(spec.Keys, mergeinto.Key{Target: 1, Source: col(3, i64)})
	}
	if s.on != nil {
		spec.On = s.on.build(t)
	}
	for _, rc := range s.clauses {
		c := mergeinto.Clause{Kind: rc.kind, Action: mergeinto.Action{Kind: rc.action}}
		if rc.cond != nil {
			c.Cond = rc.cond.build(t)
		}
		for i := 0; i < 4; i++ {
			if e, ok := rc.set[i]; ok {
				c.Action.Set = append(c.Action.Set, set(i, e.build(t)))
			}
		}
		for _, v := range rc.values {
			c.Action.Values = append(c.Action.Values, v.build(t))
		}
		spec.Clauses = append(spec.Clauses, c)
	}
	spec.Options.BatchSize = s.batch
	return spec
}

func (s mergeStmt) String() string {
	var out []string
	if s.composite {
		out = append(out, "ON t.k = s.k AND t.g = s.f")
	}
	if s.on != nil {
		out = append(out, "ON residual "+s.on.text)
	}
	for _, c := range s.clauses {
		out = append(out, c.String())
	}
	return fmt.Sprintf("source %v\n %s", s.source, strings.Join(out, "\n "))
}

// TestMergeOnReadMatchesCopyOnWrite runs random sequences of MERGEs on two
// copies of a table, one in each write mode, and compares the tables after
// every statement; then it reads every merge-on-read snapshot again (time
// travel) and compares it with what it held when committed.
func TestMergeOnReadMatchesCopyOnWrite(t *testing.T) {
	// 80 sequences by default; -long runs 200
	sequences, steps := 80, 2
	if *longTests {
		sequences = 200
	}
	if testing.Short() {
		sequences = 50
	}
	cat, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	outcomes := map[string]int{}
	count := func(k string) {
		mu.Lock()
		outcomes[k]++
		mu.Unlock()
	}
	t.Run("seq", func(t *testing.T) {
		for seq := 0; seq < sequences; seq++ {
			t.Run(strconv.Itoa(seq), func(t *testing.T) {
				t.Parallel()
				morSequence(t, cat, seq, steps, count)
			})
		}
	})
	t.Logf("%d sequences: %v", sequences, outcomes)
	if outcomes["staged"] < sequences || outcomes["cardinality error"] == 0 {
		t.Fatalf("the generator is lopsided: %v", outcomes)
	}
}

func morSequence(t *testing.T, cat *catalog.Catalog, seq, steps int, count func(string)) {
	g := gen{rand.New(rand.NewPCG(20261129, uint64(seq)))}
	var parts []string
	if seq%3 == 1 {
		parts = []string{"g"}
	}
	cow := newFixtureIn(t, cat, fmt.Sprintf("cow%d", seq), dTarget, parts...)
	mor := newFixtureIn(t, cat, fmt.Sprintf("mor%d", seq), dTarget, parts...)
	var files [][][]any
	for file := 0; file < 1+g.r.IntN(3); file++ {
		if rows := g.targetRows(g.r.IntN(15), false); len(rows) > 0 {
			files = append(files, rows)
		}
	}
	if len(files) > 0 {
		cow.appendFiles(files...)
		mor.appendFiles(files...)
	}
	type seen struct {
		id   int64
		rows []string
	}
	var history []seen
	var log []string
	for step := 0; step < steps; step++ {
		st := g.mergeStmt()
		log = append(log, st.String())
		desc := func() string {
			return fmt.Sprintf("sequence %d step %d\n initial %v\n %s", seq, step, files, strings.Join(log, "\n---\n "))
		}
		cres, cerr := cow.merge(st.spec(t, mergeinto.CopyOnWrite))
		mres, merr := mor.merge(st.spec(t, mergeinto.MergeOnRead))
		var ce *mergeinto.CardinalityError
		if (cerr == nil) != (merr == nil) || (cerr != nil && !(errors.As(cerr, &ce) && errors.As(merr, &ce))) {
			t.Fatalf("%s\ncopy-on-write: %v\nmerge-on-read: %v", desc(), cerr, merr)
		}
		if cerr != nil {
			count("cardinality error")
			continue
		}
		if cres.Count != mres.Count || cres.Staged != mres.Staged {
			t.Fatalf("%s\ncount %d vs %d, staged %v vs %v", desc(), cres.Count, mres.Count, cres.Staged, mres.Staged)
		}
		if mres.Staged {
			count("staged")
			if mres.Metrics.FilesRemoved != 0 || mres.Metrics.RowsCopied != 0 {
				t.Fatalf("%s\nmerge-on-read rewrote files: %+v", desc(), mres.Metrics)
			}
		}
		want, got := cow.rows(), mor.rows()
		if !slices.Equal(got, want) {
			t.Fatalf("%s\nmerge-on-read %q\ncopy-on-write %q", desc(), got, want)
		}
		if s := mor.table().CurrentSnapshot(); s != nil {
			history = append(history, seen{s.SnapshotID, got})
		}
	}
	tbl := mor.table()
	for _, h := range history {
		scan := tbl.Scan(table.WithSnapshotID(h.id))
		got := stagedRows(t, scan)
		scan.Close()
		if !slices.Equal(got, h.rows) {
			t.Fatalf("sequence %d: time travel to snapshot %d reads %q, committed %q", seq, h.id, got, h.rows)
		}
	}
}

// A merge-on-read MERGE writes position deletes and new files only; a
// second one on the same file maps live rows to the right physical rows
// through the first one's deletes, and its position delete file holds the
// first one's positions too, which it supersedes: the file keeps one.
func TestMergeOnReadWritesPositionDeletes(t *testing.T) {
	f := newFixture(t, "t", dTarget)
	f.appendRows([]any{int64(1), int64(0), int64(10), "a"}, []any{int64(2), int64(0), int64(20), "b"},
		[]any{int64(3), int64(0), int64(30), "c"}, []any{int64(4), int64(0), int64(40), "d"})
	del := func(k int64) *mergeinto.Spec {
		return &mergeinto.Spec{Source: values(t, dSource, []any{k, nil, nil, int64(0)}), Keys: []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
			Mode: mergeinto.MergeOnRead, Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}}
	}
	upd := &mergeinto.Spec{Source: values(t, dSource, []any{int64(3), int64(99), "z", int64(0)}), Keys: []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
		Mode: mergeinto.MergeOnRead, Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Update(set(2, col(5, i64)))}}}
	res := f.mustMerge(del(2))
	if res.Metrics.FilesRemoved != 0 || res.Metrics.RowsDeleted != 1 {
		t.Fatalf("metrics %+v", res.Metrics)
	}
	f.mustMerge(upd)
	f.mustMerge(del(4))
	wantRows(t, f.rows(), "1|0|10|a", "3|0|99|c")
	tbl := f.table()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var deletes []iceberg.DataFile
	for _, task := range tasks {
		deletes = append(deletes, task.DeleteFiles...)
	}
	if len(tasks) != 2 || len(deletes) != 1 || deletes[0].Count() != 3 {
		t.Fatalf("%d data files with %d position delete files, want 2 (the original and the update) and 1 of 3 positions", len(tasks), len(deletes))
	}
	// one snapshot a statement, the last one's removing the file it folded
	cur := tbl.CurrentSnapshot()
	if cur.Summary.Properties["skade.folded-position-delete-files"] != "1" || cur.Summary.Properties["skade.position-delete-files"] != "1" {
		t.Fatalf("last snapshot %v", cur.Summary)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 4 {
		t.Fatalf("%d snapshots, want 4: the append and one for each statement", n)
	}
}

// A position delete file that names several data files (iceberg-go's own
// merge-on-read DELETE writes one for a whole partition) is not folded:
// only the file-scoped ones a statement's new file supersedes go, and the
// rows stay right whichever file holds a position twice.
func TestMergeOnReadFoldsOnlyFileScopedDeletes(t *testing.T) {
	f := newFixture(t, "t", dTarget)
	f.appendFiles(
		[][]any{{int64(1), int64(0), int64(10), "a"}, {int64(2), int64(0), int64(20), "b"}, {int64(3), int64(0), int64(30), "c"}, {int64(4), int64(0), int64(40), "d"}},
		[][]any{{int64(5), int64(0), int64(50), "e"}, {int64(6), int64(0), int64(60), "f"}, {int64(7), int64(0), int64(70), "g"}})
	f.setProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	// iceberg-go deletes k = 2 and k = 6, one in each data file
	txn := f.cat.WithFS(f.table(), iceio.LocalFS{}).NewTransaction()
	if err := txn.Delete(ctx, iceberg.IsIn(iceberg.Reference("k"), int64(2), int64(6)), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantRows(t, f.rows(), "1|0|10|a", "3|0|30|c", "4|0|40|d", "5|0|50|e", "7|0|70|g")
	deletesOf := func() map[string][]iceberg.DataFile {
		tasks, err := f.table().Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]iceberg.DataFile{}
		for _, task := range tasks {
			out[task.File.FilePath()] = task.DeleteFiles
		}
		return out
	}
	var shared string
	for _, dels := range deletesOf() {
		for _, df := range dels {
			if scan.OnlyDataFile(df) == "" {
				shared = df.FilePath()
			}
		}
	}
	if shared == "" {
		// the premise of this test, iceberg-go v0.7.0's writer, changed
		t.Fatal("iceberg-go's merge-on-read DELETE wrote no position delete file naming several data files; this test needs one")
	}
	del := func(k int64) *mergeinto.Spec {
		return &mergeinto.Spec{Source: values(t, dSource, []any{k, nil, nil, int64(0)}), Keys: []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
			Mode: mergeinto.MergeOnRead, Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}}
	}
	f.mustMerge(del(3))
	f.mustMerge(del(1))
	f.mustMerge(del(7))
	wantRows(t, f.rows(), "4|0|40|d", "5|0|50|e")
	for path, dels := range deletesOf() {
		var own []iceberg.DataFile
		hasShared := false
		for _, df := range dels {
			switch scan.OnlyDataFile(df) {
			case "":
				hasShared = hasShared || df.FilePath() == shared
			case path:
				own = append(own, df)
			}
		}
		if !hasShared {
			t.Errorf("data file %s lost the position delete file naming several data files", path)
		}
		// the first file: k = 2 (shared), 3 and 1 (its own file, folded);
		// the second: k = 6 (shared), 7
		if len(own) != 1 {
			t.Errorf("data file %s has %d file-scoped position delete files, want 1", path, len(own))
		}
	}
}

// A file carrying an equality delete that the early filter rules out
// (its key is not among the source keys) is still read with that delete
// applied when it is rewritten (copy-on-write) or when its live rows are
// mapped to positions (merge-on-read): the deleted row must not come back,
// and merge-on-read still rewrites nothing.
func TestMergeRewritesThroughPrunedEqualityDeletes(t *testing.T) {
	for _, mode := range []mergeinto.Mode{mergeinto.CopyOnWrite, mergeinto.MergeOnRead} {
		t.Run(mode.String(), func(t *testing.T) {
			f := newFixture(t, "t", dTarget)
			f.appendRows([]any{int64(1), int64(0), int64(10), "a"}, []any{int64(2), int64(0), int64(20), "b"}, []any{int64(5), int64(0), int64(50), "e"})
			// An equality delete of k = 5, committed as a row delta.
			txn := f.cat.WithFS(f.table(), iceio.LocalFS{}).NewTransaction()
			keys := mustBatch(t, schemaOf(field("k", i64)), []any{int64(5)})
			kf, ok := f.table().Schema().FindFieldByName("k")
			if !ok {
				t.Fatal("no k")
			}
			files, err := txn.WriteEqualityDeletes(ctx, []int{kf.ID}, func(yield func(arrow.RecordBatch, error) bool) { yield(keys, nil) })
			keys.Release()
			if err != nil {
				t.Fatal(err)
			}
			if err := txn.NewRowDelta(nil).AddDeletes(files...).Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := txn.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			wantRows(t, f.rows(), "1|0|10|a", "2|0|20|b")
			res := f.mustMerge(&mergeinto.Spec{Source: values(t, dSource, []any{int64(2), int64(99), "z", int64(0)}), Mode: mode,
				Keys:    []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
				Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Update(set(2, col(5, i64)))}}})
			wantRows(t, f.rows(), "1|0|10|a", "2|0|99|b")
			want := int64(1)
			if mode == mergeinto.MergeOnRead {
				want = 0
			}
			if res.Metrics.FilesRemoved != want {
				t.Errorf("%s: %d files removed, want %d", mode, res.Metrics.FilesRemoved, want)
			}
		})
	}
}

// Merge-on-read over a file whose equality deletes hide rows before the
// changed ones: live positions map past the hidden rows.
func TestMergeOnReadThroughEqualityDeletes(t *testing.T) {
	f := newFixture(t, "t", dTarget)
	f.appendRows([]any{int64(1), int64(0), int64(10), "a"}, []any{int64(2), int64(0), int64(20), "b"},
		[]any{int64(3), int64(0), int64(30), "c"}, []any{int64(4), int64(0), int64(40), "d"}, []any{int64(5), int64(0), int64(50), "e"})
	eqDelete(t, f, 1, 3)
	wantRows(t, f.rows(), "2|0|20|b", "4|0|40|d", "5|0|50|e")
	res := f.mustMerge(&mergeinto.Spec{Source: values(t, dSource, []any{int64(4), int64(99), "z", int64(0)}, []any{int64(5), nil, nil, int64(0)}), Mode: mergeinto.MergeOnRead,
		Keys: []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
		Clauses: []mergeinto.Clause{
			{Kind: mergeinto.Matched, Cond: call(t, "is_null", col(5, i64)), Action: mergeinto.Delete()},
			{Kind: mergeinto.Matched, Action: mergeinto.Update(set(2, col(5, i64)))}}})
	if res.Metrics.FilesRemoved != 0 || res.Count != 2 {
		t.Fatalf("metrics %+v, count %d", res.Metrics, res.Count)
	}
	wantRows(t, f.rows(), "2|0|20|b", "4|0|99|d")
}

// eqDelete commits an equality delete of the keys k.
func eqDelete(t *testing.T, f *fixture, keys ...int64) {
	t.Helper()
	txn := f.cat.WithFS(f.table(), iceio.LocalFS{}).NewTransaction()
	var rows [][]any
	for _, k := range keys {
		rows = append(rows, []any{k})
	}
	b := mustBatch(t, schemaOf(field("k", i64)), rows...)
	kf, ok := f.table().Schema().FindFieldByName("k")
	if !ok {
		t.Fatal("no k")
	}
	files, err := txn.WriteEqualityDeletes(ctx, []int{kf.ID}, func(yield func(arrow.RecordBatch, error) bool) { yield(b, nil) })
	b.Release()
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.NewRowDelta(nil).AddDeletes(files...).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// On a format-version 3 table merge-on-read writes deletion vectors: the
// first one carries the position deletes written before the upgrade (a
// reader ignores those once a vector applies), the second replaces the
// first, and the file never carries two.
func TestMergeOnReadWritesDeletionVectors(t *testing.T) {
	f := newFixture(t, "t", dTarget)
	f.appendRows([]any{int64(1), int64(0), int64(10), "a"}, []any{int64(2), int64(0), int64(20), "b"},
		[]any{int64(3), int64(0), int64(30), "c"}, []any{int64(4), int64(0), int64(40), "d"})
	del := func(k int64) *mergeinto.Spec {
		return &mergeinto.Spec{Source: values(t, dSource, []any{k, nil, nil, int64(0)}), Keys: []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
			Mode: mergeinto.MergeOnRead, Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}}
	}
	f.mustMerge(del(1)) // a version 2 position delete file
	txn := f.cat.WithFS(f.table(), iceio.LocalFS{}).NewTransaction()
	if err := txn.UpgradeFormatVersion(3); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	dvs := func() (dv, pos int) {
		t.Helper()
		tasks, err := f.table().Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			dv += len(task.DeletionVectorFiles)
			pos += len(task.DeleteFiles)
			for _, d := range task.DeletionVectorFiles {
				if d.FileFormat() != "PUFFIN" {
					t.Fatalf("deletion vector in %s", d.FileFormat())
				}
			}
		}
		return dv, pos
	}
	f.mustMerge(del(3))
	wantRows(t, f.rows(), "2|0|20|b", "4|0|40|d")
	if dv, pos := dvs(); dv != 1 || pos != 0 {
		t.Fatalf("after the first v3 delete: %d deletion vectors, %d position delete files applied; want 1 and 0", dv, pos)
	}
	f.mustMerge(del(4))
	wantRows(t, f.rows(), "2|0|20|b")
	if dv, _ := dvs(); dv != 1 {
		t.Fatalf("after the second v3 delete: %d deletion vectors, want 1 (the replaced one removed)", dv)
	}
}
