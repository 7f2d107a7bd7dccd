package exec

import (
	"context"
	"slices"
	"testing"
)

// TestJoinBuildMergeShape uses JoinBuild the way MERGE INTO does: build on
// the source keys, probe with target rows, find target rows matched by more
// than one source row, and the source rows that matched nothing.
func TestJoinBuildMergeShape(t *testing.T) {
	mem := hjMem(t)
	ctx := context.Background()
	src := hjSrc(t, mem, hjRightSchema, [][]any{{1, "s1"}, {2, "s2"}}, [][]any{{2, "s2bis"}, {nil, "snull"}, {5, "s5"}})
	budget := NewBudget(0)
	opts := HashOptions{Mem: mem, Budget: budget}
	if err := src.Open(ctx); err != nil {
		t.Fatal(err)
	}
	jb, err := BuildJoin(ctx, src, []Expr{hjCol(hjRightSchema, 0)}, opts, "merge into t: source")
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	if jb.Rows != 5 || jb.Table.Rows() != 5 || jb.Table.NullKeyRows() != 1 || len(jb.Columns) != 2 || jb.Columns[0].Len() != 5 {
		t.Fatalf("rows %d table rows %d nulls %d", jb.Rows, jb.Table.Rows(), jb.Table.NullKeyRows())
	}
	target := hjBatch(t, mem, hjLeftSchema, []any{1, "t1"}, []any{2, "t2"}, []any{3, "t3"}, []any{nil, "tnull"})
	defer target.Release()
	groups, err := jb.Probe(opts.evalContext(ctx), target, []Expr{hjCol(hjLeftSchema, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	for _, g := range groups {
		n := 0
		for s := jb.Table.First(g); s >= 0; s = jb.Table.Next(s) {
			jb.Table.SetMatched(s)
			n++
		}
		counts = append(counts, n)
	}
	if !slices.Equal(counts, []int{1, 2, 0, 0}) || groups[3] != -1 || groups[2] != -1 {
		t.Errorf("matches per target row %v, groups %v", counts, groups)
	}
	un, _ := jb.Table.AppendUnmatched(nil, 0, 100)
	if !slices.Equal(un, []int32{3, 4}) { // the NULL-key row and key 5
		t.Errorf("unmatched source rows %v", un)
	}
	if budget.Used() == 0 {
		t.Error("the build should hold a reservation")
	}
	jb.Release()
	jb.Release()
	if budget.Used() != 0 {
		t.Errorf("budget holds %d after Release", budget.Used())
	}
}
