package exec

import (
	"testing"
)

func TestFoldConstant(t *testing.T) {
	env := newTestEnv(t)
	l := func(v any) Expr { return lit(t, v) }
	x := &Column{Index: 0, Type: tInt32, Name: "x"}
	sum := mustCall(t, "+", l(1), mustCall(t, "*", l(2), l(3)))
	if !IsConstant(sum) || IsConstant(mustCall(t, "+", x, l(1))) || IsConstant(mustCall(t, "random")) {
		t.Fatal("IsConstant misjudges")
	}
	v, err := FoldConstant(env.ec, sum)
	if err != nil || v.String() != "7" {
		t.Fatalf("got %v, %v", v, err)
	}
	if _, err := FoldConstant(env.ec, mustCall(t, "/", l(1), l(0))); err == nil || err.Error() != "division by zero" {
		t.Fatalf("got %v", err)
	}
	v, err = FoldConstant(env.ec, mustCall(t, "current_date"))
	if err != nil || v.String() != "2024-03-15" {
		t.Fatalf("got %v, %v", v, err)
	}
	if _, err := FoldConstant(env.ec, x); err == nil {
		t.Fatal("folded a column")
	}
	r, err := env.evalConst(mustCall(t, "<", mustCall(t, "random"), l(1.0)))
	if err != nil || r != "true" {
		t.Fatalf("random() < 1: %q, %v", r, err)
	}
}
