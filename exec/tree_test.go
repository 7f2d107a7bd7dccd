package exec

import "testing"

func TestTransformRenumbersColumns(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tInt32, 1, 2, nil), env.col(tString, "a", "b", "c"))
	defer b.Release()
	// written against columns (#1 int, #0 text); renumbered to the batch
	x := &Column{Index: 1, Type: tInt32, Name: "x"}
	s := &Column{Index: 0, Type: tString, Name: "s"}
	in, err := NewInList(x, []Expr{lit(t, 2), mustCall(t, "+", x, lit(t, 0))}, false)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := NewCase([]When{{Cond: in, Then: mustCall(t, "upper", s)}}, mustCast(t, x, tString))
	if err != nil {
		t.Fatal(err)
	}
	co, err := NewCoalesce(cs, lit(t, "none"))
	if err != nil {
		t.Fatal(err)
	}
	swapped, err := Transform(co, func(e Expr) (Expr, error) {
		if c, ok := e.(*Column); ok {
			return &Column{Index: 1 - c.Index, Type: c.Type, Name: c.Name}, nil
		}
		return e, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := env.eval(swapped, b)
	if err != nil || got != "A B none" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := WithChildren(mustCall(t, "upper", s), []Expr{x}); err == nil ||
		err.Error() != "exec: child 0 of upper(s) changes type from text to integer (planner bug)" {
		t.Fatalf("got %v", err)
	}
}
