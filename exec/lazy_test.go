package exec

import "testing"

func TestShortCircuit(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tInt32, 0, 5, nil, 20, 0), env.col(tString, "a", "b", "c", "d", "e"))
	defer b.Release()
	x := colRef(b, 0)
	l := func(v any) Expr { return lit(t, v) }
	div := mustCall(t, ">", mustCall(t, "/", l(10), x), l(1)) // 10 / x > 1
	runCalls(t, env, b, []callCase{
		// the right side never sees x = 0
		{name: "and", args: []Expr{mustCall(t, "<>", x, l(0)), div}, want: "false true NULL false false"},
		{name: "or", args: []Expr{mustCall(t, "=", x, l(0)), div}, want: "true true NULL false true"},
		// NULL on the left still evaluates the right; here it is NULL too
		{name: "and", args: []Expr{mustCall(t, "is_not_null", x), mustCall(t, "and", mustCall(t, "<>", x, l(0)), div)}, want: "false true false false false"},
		// without the guard the error surfaces
		{name: "and", args: []Expr{mustCall(t, ">=", x, l(0)), div}, err: "division by zero"},
		// a right side that cannot fail is evaluated whole (same answers)
		{name: "and", args: []Expr{mustCall(t, "<>", x, l(0)), mustCall(t, "=", colRef(b, 1), l("b"))}, want: "false true false false false"},
	})
	if canFail(mustCall(t, "=", colRef(b, 1), l("b"))) || !canFail(div) {
		t.Error("canFail misjudges")
	}
}
