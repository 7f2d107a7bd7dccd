package mergeinto_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
)

// The usual layout: target (id, status, amount), source (sid, sstatus,
// samount); joined columns 0-2 are the target's, 3-5 the source's.
var (
	targetSchema = schemaOf(arrow.Field{Name: "id", Type: i64}, field("status", str), field("amount", i64))
	sourceSchema = schemaOf(field("sid", i64), field("sstatus", str), field("samount", i64))
)

const (
	tID, tStatus, tAmount = 0, 1, 2
	sID, sStatus, sAmount = 3, 4, 5
)

func basic(t *testing.T) *fixture {
	f := newFixture(t, "events", targetSchema)
	f.appendRows([]any{1, "a", 10}, []any{2, "b", 20}, []any{3, "c", 30})
	return f
}

// onID is ON events.id = src.sid.
func onID() []mergeinto.Key { return []mergeinto.Key{{Target: tID, Source: col(0, i64)}} }

func upd(t *testing.T) mergeinto.Action {
	return mergeinto.Update(set(tStatus, col(sStatus, str)), set(tAmount, col(sAmount, i64)))
}

func ins(t *testing.T) mergeinto.Action {
	return mergeinto.Insert(col(sID, i64), col(sStatus, str), col(sAmount, i64))
}

func TestUpsert(t *testing.T) {
	f := basic(t)
	res := f.mustMerge(&mergeinto.Spec{
		Source: values(t, sourceSchema, []any{2, "B", 21}, []any{4, "d", 40}),
		Keys:   onID(),
		Clauses: []mergeinto.Clause{
			{Kind: mergeinto.Matched, Action: upd(t)},
			{Kind: mergeinto.NotMatchedByTarget, Action: ins(t)},
		},
	})
	wantRows(t, f.rows(), "1|a|10", "2|B|21", "3|c|30", "4|d|40")
	if res.Count != 2 || res.Metrics.RowsUpdated != 1 || res.Metrics.RowsInserted != 1 || !res.Staged {
		t.Fatalf("result %+v", res)
	}
	if m := res.Metrics; m.FilesRewritten != 1 || m.FilesRemoved != 1 || m.FilesAdded != 2 || m.RowsCopied != 2 || m.BytesWritten <= 0 || m.BytesRead <= 0 {
		t.Fatalf("metrics %s", m)
	}
}

// Every clause shape the guide lists.
func TestClauseShapes(t *testing.T) {
	src := func(t *testing.T) exec.Operator {
		return values(t, sourceSchema, []any{1, "x", 1}, []any{2, "y", 2}, []any{5, "z", 5})
	}
	gt := func(t *testing.T, c int, v int64) exec.Expr { return call(t, ">", col(c, i64), lit(t, v)) }
	cases := []struct {
		name    string
		clauses func(t *testing.T) []mergeinto.Clause
		count   int64
		want    []string
	}{
		{"matched update", func(t *testing.T) []mergeinto.Clause {
			return []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Update(set(tStatus, col(sStatus, str)))}}
		}, 2, []string{"1|x|10", "2|y|20", "3|c|30"}},
		{"matched delete", func(t *testing.T) []mergeinto.Clause {
			return []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}
		}, 2, []string{"3|c|30"}},
		{"matched and update", func(t *testing.T) []mergeinto.Clause {
			return []mergeinto.Clause{{Kind: mergeinto.Matched, Cond: gt(t, tAmount, 15), Action: mergeinto.Update(set(tStatus, col(sStatus, str)))}}
		}, 1, []string{"1|a|10", "2|y|20", "3|c|30"}},
		{"matched and delete", func(t *testing.T) []mergeinto.Clause {
			return []mergeinto.Clause{{Kind: mergeinto.Matched, Cond: gt(t, sAmount, 1), Action: mergeinto.Delete()}}
		}, 1, []string{"1|a|10", "3|c|30"}},
		{"not matched insert", func(t *testing.T) []mergeinto.Clause {
			return []mergeinto.Clause{{Kind: mergeinto.NotMatchedByTarget, Action: ins(t)}}
		}, 1, []string{"1|a|10", "2|b|20", "3|c|30", "5|z|5"}},
		{"not matched insert with NULL defaults", func(t *testing.T) []mergeinto.Clause {
			return []mergeinto.Clause{{Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Insert(col(sID, i64), exec.NewNullLiteral(str), exec.NewNullLiteral(i64))}}
		}, 1, []string{"1|a|10", "2|b|20", "3|c|30", "5|NULL|NULL"}},
		{"not matched by source update", func(t *testing.T) []mergeinto.Clause {
			return []mergeinto.Clause{{Kind: mergeinto.NotMatchedBySource, Action: mergeinto.Update(set(tStatus, lit(t, "gone")))}}
		}, 1, []string{"1|a|10", "2|b|20", "3|gone|30"}},
		{"not matched by source delete", func(t *testing.T) []mergeinto.Clause {
			return []mergeinto.Clause{{Kind: mergeinto.NotMatchedBySource, Action: mergeinto.Delete()}}
		}, 1, []string{"1|a|10", "2|b|20"}},
		{"do nothing", func(t *testing.T) []mergeinto.Clause {
			return []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.DoNothing()}, {Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.DoNothing()}}
		}, 0, []string{"1|a|10", "2|b|20", "3|c|30"}},
		{"all three", func(t *testing.T) []mergeinto.Clause {
			return []mergeinto.Clause{
				{Kind: mergeinto.Matched, Action: mergeinto.Update(set(tAmount, call(t, "+", col(tAmount, i64), col(sAmount, i64))))},
				{Kind: mergeinto.NotMatchedByTarget, Action: ins(t)},
				{Kind: mergeinto.NotMatchedBySource, Action: mergeinto.Delete()},
			}
		}, 4, []string{"1|a|11", "2|b|22", "5|z|5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := basic(t)
			head := f.table().CurrentSnapshot().SnapshotID
			res := f.mustMerge(&mergeinto.Spec{Source: src(t), Keys: onID(), Clauses: tc.clauses(t)})
			wantRows(t, f.rows(), tc.want...)
			if res.Count != tc.count {
				t.Fatalf("count %d, want %d", res.Count, tc.count)
			}
			moved := f.table().CurrentSnapshot().SnapshotID != head
			if moved != (tc.count > 0) || res.Staged != moved {
				t.Fatalf("head moved=%v staged=%v for count %d", moved, res.Staged, tc.count)
			}
		})
	}
}

// Clauses are tried in order; the first whose condition is TRUE wins, and
// a NULL condition does not fire.
func TestClauseOrderAndNullPredicate(t *testing.T) {
	f := newFixture(t, "events", targetSchema)
	f.appendRows([]any{1, "a", 10}, []any{2, "b", nil}, []any{3, "c", 30}, []any{4, "d", 5})
	// amount > 8 fires for 1 and 3 (first clause), NULL for 2 (falls to the
	// unconditional second clause), false for 4 (second clause).
	// A third clause is never reached.
	res := f.mustMerge(&mergeinto.Spec{
		Source: values(t, sourceSchema, []any{1, "x", 0}, []any{2, "y", 0}, []any{3, "z", 0}, []any{4, "w", 0}),
		Keys:   onID(),
		Clauses: []mergeinto.Clause{
			{Kind: mergeinto.Matched, Cond: call(t, ">", col(tAmount, i64), lit(t, int64(8))), Action: mergeinto.Update(set(tStatus, lit(t, "first")))},
			{Kind: mergeinto.Matched, Cond: call(t, "is_null", col(tAmount, i64)), Action: mergeinto.Delete()},
			{Kind: mergeinto.Matched, Action: mergeinto.Update(set(tStatus, lit(t, "third")))},
		},
	})
	wantRows(t, f.rows(), "1|first|10", "3|first|30", "4|third|5")
	if res.Count != 4 || res.Metrics.RowsDeleted != 1 || res.Metrics.RowsUpdated != 3 {
		t.Fatalf("metrics %s", res.Metrics)
	}
	// A condition that is NULL for every row fires nowhere.
	res = f.mustMerge(&mergeinto.Spec{
		Source:  values(t, sourceSchema, []any{1, nil, 0}),
		Keys:    onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Cond: call(t, "=", col(sStatus, str), lit(t, "x")), Action: mergeinto.Delete()}},
	})
	if res.Count != 0 || res.Staged {
		t.Fatalf("NULL predicate fired: %+v", res)
	}
}

// A later clause's condition is not evaluated on rows an earlier clause
// took: 100 / (amount - 10) would divide by zero for row 1.
func TestLaterClauseNotEvaluatedOnTakenRows(t *testing.T) {
	f := basic(t)
	f.mustMerge(&mergeinto.Spec{
		Source: values(t, sourceSchema, []any{1, "x", 0}, []any{2, "y", 0}),
		Keys:   onID(),
		Clauses: []mergeinto.Clause{
			{Kind: mergeinto.Matched, Cond: call(t, "=", col(tAmount, i64), lit(t, int64(10))), Action: mergeinto.DoNothing()},
			{Kind: mergeinto.Matched, Cond: call(t, ">", call(t, "/", lit(t, int64(100)), call(t, "-", col(tAmount, i64), lit(t, int64(10)))), lit(t, int64(0))), Action: mergeinto.Delete()},
		},
	})
	wantRows(t, f.rows(), "1|a|10", "3|c|30")
}

func TestReturning(t *testing.T) {
	f := basic(t)
	res := f.mustMerge(&mergeinto.Spec{
		Source: values(t, sourceSchema, []any{1, "x", 1}, []any{2, "y", 2}, []any{9, "z", 9}),
		Keys:   onID(),
		Clauses: []mergeinto.Clause{
			{Kind: mergeinto.Matched, Cond: call(t, "=", col(sID, i64), lit(t, int64(1))), Action: mergeinto.Update(set(tStatus, col(sStatus, str)))},
			{Kind: mergeinto.Matched, Action: mergeinto.Delete()},
			{Kind: mergeinto.NotMatchedByTarget, Action: ins(t)},
		},
		Returning:      []exec.Expr{mergeinto.MergeAction{}, col(tID, i64), col(tStatus, str), col(sAmount, i64)},
		ReturningNames: []string{"action", "id", "status", "samount"},
	})
	defer res.Release()
	var got []string
	for _, b := range res.Returning {
		got = append(got, renderRows(b)...)
	}
	// UPDATE returns the new row, DELETE the old one, INSERT the new one.
	wantRows(t, sortedCopy(got), "DELETE|2|b|2", "INSERT|9|z|9", "UPDATE|1|x|1")
	if res.ReturningSchema.Field(0).Name != "action" || res.Count != 3 {
		t.Fatalf("schema %s count %d", res.ReturningSchema, res.Count)
	}
}

func TestEmptySourceAndEmptyTarget(t *testing.T) {
	t.Run("empty source", func(t *testing.T) {
		f := basic(t)
		res := f.mustMerge(&mergeinto.Spec{
			Source: values(t, sourceSchema), Keys: onID(),
			Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}, {Kind: mergeinto.NotMatchedByTarget, Action: ins(t)}},
		})
		if res.Count != 0 || res.Staged || res.Metrics.FilesScanned != 0 || res.Metrics.FilesSkipped != 1 {
			t.Fatalf("result %+v", res.Metrics)
		}
		wantRows(t, f.rows(), "1|a|10", "2|b|20", "3|c|30")
	})
	t.Run("empty source, not matched by source", func(t *testing.T) {
		f := basic(t)
		res := f.mustMerge(&mergeinto.Spec{
			Source: values(t, sourceSchema), Keys: onID(),
			Clauses: []mergeinto.Clause{{Kind: mergeinto.NotMatchedBySource, Cond: call(t, "<>", col(tID, i64), lit(t, int64(2))), Action: mergeinto.Delete()}},
		})
		if res.Count != 2 {
			t.Fatalf("count %d", res.Count)
		}
		wantRows(t, f.rows(), "2|b|20")
	})
	t.Run("empty target", func(t *testing.T) {
		f := newFixture(t, "events", targetSchema)
		res := f.mustMerge(&mergeinto.Spec{
			Source: values(t, sourceSchema, []any{1, "x", 1}, []any{2, "y", 2}), Keys: onID(),
			Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}, {Kind: mergeinto.NotMatchedByTarget, Action: ins(t)}},
		})
		if res.Count != 2 || !res.Staged {
			t.Fatalf("result %+v", res)
		}
		wantRows(t, f.rows(), "1|x|1", "2|y|2")
	})
	t.Run("everything deleted", func(t *testing.T) {
		f := basic(t)
		res := f.mustMerge(&mergeinto.Spec{
			Source: values(t, sourceSchema, []any{1, "x", 1}, []any{2, "y", 2}, []any{3, "z", 3}), Keys: onID(),
			Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}},
		})
		if res.Count != 3 || res.Metrics.FilesRemoved != 1 || res.Metrics.FilesRewritten != 0 || res.Metrics.FilesAdded != 0 {
			t.Fatalf("metrics %s", res.Metrics)
		}
		wantRows(t, f.rows())
		if f.files() != 0 {
			t.Fatalf("%d files left", f.files())
		}
	})
}

// NULL keys never match: a NULL-keyed source row is NOT MATCHED (and is
// inserted), a NULL-keyed target row is NOT MATCHED BY SOURCE.
func TestNullKeys(t *testing.T) {
	schema := schemaOf(field("k", i64), field("v", str))
	f := newFixture(t, "t", schema)
	f.appendRows([]any{1, "a"}, []any{nil, "null-target"})
	res := f.mustMerge(&mergeinto.Spec{
		Source: values(t, schema, []any{1, "A"}, []any{nil, "null-source"}),
		Keys:   []mergeinto.Key{{Target: 0, Source: col(0, i64)}},
		Clauses: []mergeinto.Clause{
			{Kind: mergeinto.Matched, Action: mergeinto.Update(set(1, col(3, str)))},
			{Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Insert(col(2, i64), col(3, str))},
			{Kind: mergeinto.NotMatchedBySource, Action: mergeinto.Update(set(1, lit(t, "unmatched")))},
		},
	})
	wantRows(t, f.rows(), "1|A", "NULL|null-source", "NULL|unmatched")
	if res.Count != 3 {
		t.Fatalf("count %d", res.Count)
	}
}

func TestUpdateToNull(t *testing.T) {
	f := basic(t)
	f.mustMerge(&mergeinto.Spec{
		Source: values(t, sourceSchema, []any{2, nil, nil}), Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Update(set(tStatus, col(sStatus, str)), set(tAmount, exec.NewNullLiteral(i64)))}},
	})
	wantRows(t, f.rows(), "1|a|10", "2|NULL|NULL", "3|c|30")
}

// ON t.id = s.id AND t.amount < s.samount, and a clause predicate over
// both sides.
func TestPredicatesOverBothSides(t *testing.T) {
	f := basic(t)
	res := f.mustMerge(&mergeinto.Spec{
		Source: values(t, sourceSchema, []any{1, "x", 5}, []any{2, "y", 25}, []any{3, "z", 100}),
		Keys:   onID(),
		On:     call(t, "<", col(tAmount, i64), col(sAmount, i64)),
		Clauses: []mergeinto.Clause{
			{Kind: mergeinto.Matched, Cond: call(t, ">", col(sAmount, i64), call(t, "*", col(tAmount, i64), lit(t, int64(2)))), Action: mergeinto.Delete()},
			{Kind: mergeinto.Matched, Action: mergeinto.Update(set(tStatus, col(sStatus, str)))},
			// Source row 1 fails the residual: it is NOT MATCHED.
			{Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Insert(call(t, "+", col(sID, i64), lit(t, int64(100))), col(sStatus, str), col(sAmount, i64))},
		},
	})
	wantRows(t, f.rows(), "1|a|10", "101|x|5", "2|y|20")
	if res.Count != 3 {
		t.Fatalf("count %d", res.Count)
	}
}

func TestSelfMerge(t *testing.T) {
	f := basic(t)
	tbl := f.table()
	scan, err := exec.NewTableScan("events", tbl, tbl.CurrentSnapshot(), []string{"id", "status", "amount"}, targetSchema, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := f.mustMerge(&mergeinto.Spec{
		Source: scan, Keys: onID(),
		Clauses: []mergeinto.Clause{
			{Kind: mergeinto.Matched, Action: mergeinto.Update(set(tAmount, call(t, "*", col(sAmount, i64), lit(t, int64(2)))))},
			{Kind: mergeinto.NotMatchedByTarget, Action: ins(t)},
		},
	})
	wantRows(t, f.rows(), "1|a|20", "2|b|40", "3|c|60")
	if res.Count != 3 || res.Metrics.RowsInserted != 0 {
		t.Fatalf("metrics %s", res.Metrics)
	}
}

func TestNotNullColumn(t *testing.T) {
	f := basic(t)
	_, err := f.merge(&mergeinto.Spec{
		Source: values(t, sourceSchema, []any{nil, "x", 1}), Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.NotMatchedByTarget, Action: ins(t)}},
	})
	wantErr(t, err, `merge into events: column "id" is NOT NULL, but the INSERT would set it to NULL`)
	var me *mergeinto.Error
	if !errors.As(err, &me) || me.SQLState() != mergeinto.StateNotNull {
		t.Fatalf("error %T %v", err, err)
	}
	_, err = f.merge(&mergeinto.Spec{
		Source: values(t, sourceSchema, []any{1, "x", 1}), Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Update(set(tID, exec.NewNullLiteral(i64)))}},
	})
	wantErr(t, err, `merge into events: column "id" is NOT NULL, but the UPDATE would set it to NULL`)
	wantRows(t, f.rows(), "1|a|10", "2|b|20", "3|c|30")
}

// An error raised by an expression is the statement's error and leaves
// nothing behind.
func TestExpressionErrorLeavesNothing(t *testing.T) {
	f := basic(t)
	head := f.table().CurrentSnapshot().SnapshotID
	_, err := f.merge(&mergeinto.Spec{
		Source: values(t, sourceSchema, []any{1, "x", 0}, []any{7, "y", 0}), Keys: onID(),
		Clauses: []mergeinto.Clause{
			{Kind: mergeinto.Matched, Action: mergeinto.Update(set(tAmount, call(t, "+", col(tAmount, i64), lit(t, int64(1)))))},
			{Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Insert(col(sID, i64), col(sStatus, str), call(t, "/", lit(t, int64(1)), col(sAmount, i64)))},
		},
	})
	wantErr(t, err, "merge into events: INSERT value for amount: ")
	if f.table().CurrentSnapshot().SnapshotID != head {
		t.Fatal("head moved")
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestExplain(t *testing.T) {
	f := basic(t)
	spec := &mergeinto.Spec{
		Source: values(t, sourceSchema, []any{2, "B", 21}),
		Keys:   onID(),
		On:     call(t, "is_not_null", col(sStatus, str)),
		Clauses: []mergeinto.Clause{
			{Kind: mergeinto.Matched, Cond: call(t, ">", col(sAmount, i64), lit(t, int64(0))), Action: mergeinto.Update(set(tStatus, col(sStatus, str)))},
			{Kind: mergeinto.NotMatchedByTarget, Action: ins(t)},
		},
		Returning: []exec.Expr{mergeinto.MergeAction{}},
	}
	r := f.begin()
	f.spec(r, spec)
	got := mergeinto.Explain(spec, nil)
	res, err := mergeinto.Execute(ctx, spec, r.txn)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	want := "MergeInto events (copy-on-write) @" + strconv.FormatInt(spec.Snapshot.SnapshotID, 10) + " on [#0 = #0] and (#4 IS NOT NULL)\n" +
		"  WHEN MATCHED AND (#5 > 0) THEN UPDATE SET #1 = #4\n" +
		"  WHEN NOT MATCHED THEN INSERT VALUES (#3, #4, #5)\n" +
		"  RETURNING merge_action()\n" +
		"  Values (1 rows, 1 batches)\n"
	if got != want {
		t.Fatalf("explain:\n%s\nwant:\n%s", got, want)
	}
	if a := mergeinto.Explain(spec, res); !strings.Contains(a, "(count=1 rows: +0 ~1 -0 copied=2 source=1; files: scanned=1 skipped=0 rewritten=1 removed=1 added=1;") {
		t.Fatalf("analyze:\n%s", a)
	}
}

// The pre-merge snapshot still reads back unchanged after the merge.
func TestHistoryIntact(t *testing.T) {
	f := basic(t)
	before := f.table().CurrentSnapshot().SnapshotID
	f.mustMerge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{2, "B", 21}, []any{3, nil, nil}), Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Cond: call(t, "is_null", col(sStatus, str)), Action: mergeinto.Delete()}, {Kind: mergeinto.Matched, Action: upd(t)}}})
	wantRows(t, f.rows(), "1|a|10", "2|B|21")
	at, err := f.table().Scan(table.WithSnapshotID(before)).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 100)
	defer tr.Release()
	var old []string
	for tr.Next() {
		old = append(old, renderRows(tr.RecordBatch())...)
	}
	wantRows(t, sortedCopy(old), "1|a|10", "2|b|20", "3|c|30")
}

// The source is the target read at an earlier snapshot (time travel):
// restore row 2's old values.
func TestTimeTravelSource(t *testing.T) {
	f := basic(t)
	before := f.table().CurrentSnapshot()
	f.mustMerge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{2, "B", 21}), Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: upd(t)}}})
	wantRows(t, f.rows(), "1|a|10", "2|B|21", "3|c|30")
	scan, err := exec.NewTableScan("events", f.table(), before, []string{"id", "status", "amount"}, targetSchema, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := f.mustMerge(&mergeinto.Spec{Source: scan, Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Cond: call(t, "is_distinct_from", col(tStatus, str), col(sStatus, str)), Action: upd(t)}}})
	wantRows(t, f.rows(), "1|a|10", "2|b|20", "3|c|30")
	if res.Count != 1 {
		t.Fatalf("count %d", res.Count)
	}
}
