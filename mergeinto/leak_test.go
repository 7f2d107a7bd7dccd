package mergeinto_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
)

// Everything Execute allocates through Options.Mem is released, on
// success (RETURNING included, once the caller releases it) and on error.
func TestNoLeaks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	source := func(rows ...[]any) exec.Operator {
		b, err := exec.BuildBatch(mem, sourceSchema, rows)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Release()
		v, err := exec.NewValues(sourceSchema, []arrow.RecordBatch{b})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	f := basic(t)
	res := f.mustMerge(&mergeinto.Spec{
		Source: source([]any{1, "x", 1}, []any{2, "y", 2}, []any{9, "z", 9}),
		Keys:   onID(),
		On:     call(t, "is_not_null", col(sStatus, str)),
		Clauses: []mergeinto.Clause{
			{Kind: mergeinto.Matched, Cond: call(t, "=", col(sID, i64), lit(t, int64(1))), Action: upd(t)},
			{Kind: mergeinto.Matched, Action: mergeinto.Delete()},
			{Kind: mergeinto.NotMatchedByTarget, Action: ins(t)},
			{Kind: mergeinto.NotMatchedBySource, Action: mergeinto.Update(set(tStatus, lit(t, "old")))},
		},
		Returning: []exec.Expr{mergeinto.MergeAction{}, col(tID, i64)},
		Options:   mergeinto.Options{Mem: mem},
	})
	if res.Count != 4 || len(res.Returning) == 0 {
		t.Fatalf("result %+v", res)
	}
	res.Release()
	wantRows(t, f.rows(), "1|x|1", "3|old|30", "9|z|9")

	_, err := f.merge(&mergeinto.Spec{
		// The update makes RETURNING rows; the insert then fails.
		Source:    source([]any{9, "x", 1}, []any{nil, "y", 2}),
		Keys:      onID(),
		Clauses:   []mergeinto.Clause{{Kind: mergeinto.Matched, Action: upd(t)}, {Kind: mergeinto.NotMatchedByTarget, Action: ins(t)}},
		Returning: []exec.Expr{mergeinto.MergeAction{}, col(tID, i64)},
		Options:   mergeinto.Options{Mem: mem, BatchSize: 1},
	})
	// The error is the *Error itself, not a wrapper.
	if e, ok := err.(*mergeinto.Error); !ok || e.SQLState() != mergeinto.StateNotNull {
		t.Fatalf("error %T %v", err, err)
	}
}
