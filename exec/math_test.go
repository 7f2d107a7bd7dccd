package exec

import "testing"

func TestMath(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tInt32, -3, nil, 4, -2147483648), env.col(tFloat64, -2.5, 0.5, 2.5, nil),
		env.col(decType(10, 2), "-2.55", "1.50", nil, "2.45"))
	defer b.Release()
	i, f, d := colRef(b, 0), colRef(b, 1), colRef(b, 2)
	l := func(v any) Expr { return lit(t, v) }
	runCalls(t, env, b, []callCase{
		{name: "abs", args: []Expr{mustCall(t, "+", i, l(1))}, want: "2 NULL 5 2147483647"},
		{name: "abs", args: []Expr{i}, err: "integer out of range"},
		{name: "abs", args: []Expr{f}, want: "2.5 0.5 2.5 NULL"},
		{name: "abs", args: []Expr{d}, want: "2.55 1.50 NULL 2.45"},
		{name: "sign", args: []Expr{f}, want: "-1 1 1 NULL"},
		{name: "round", args: []Expr{f}, want: "-2 0 2 NULL"},
		{name: "round", args: []Expr{d}, want: "-3 2 NULL 2"},
		{name: "round", args: []Expr{d, l(1)}, want: "-2.6 1.5 NULL 2.5"},
		{name: "round", args: []Expr{decLit(t, "1234.5"), l(-2)}, want: "1200 1200 1200 1200"},
		{name: "round", args: []Expr{f, l(1)}, want: "-2.5 0.5 2.5 NULL"},
		{name: "floor", args: []Expr{d}, want: "-3 1 NULL 2"},
		{name: "ceil", args: []Expr{d}, want: "-2 2 NULL 3"},
		{name: "ceiling", args: []Expr{f}, want: "-2 1 3 NULL"},
		{name: "floor", args: []Expr{i}, want: "-3 NULL 4 -2147483648"},
		{name: "trunc", args: []Expr{f}, want: "-2 0 2 NULL"},
		{name: "mod", args: []Expr{i, l(3)}, want: "0 NULL 1 -2"},
		{name: "mod", args: []Expr{i, l(0)}, err: "division by zero"},
		{name: "power", args: []Expr{l(2), l(10)}, want: "1024 1024 1024 1024"},
		{name: "power", args: []Expr{l(0), l(-1)}, err: "zero raised to a negative power is undefined"},
		{name: "power", args: []Expr{l(-8), l(0.5)}, err: "a negative number raised to a non-integer power yields a complex result"},
		{name: "^", args: []Expr{l(2), l(3)}, want: "8 8 8 8"},
		{name: "sqrt", args: []Expr{l(16)}, want: "4 4 4 4"},
		{name: "sqrt", args: []Expr{f}, err: "cannot take square root of a negative number"},
		{name: "ln", args: []Expr{l(0)}, err: "cannot take logarithm of zero"},
		{name: "log", args: []Expr{l(-1)}, err: "cannot take logarithm of a negative number"},
		{name: "log", args: []Expr{l(100)}, want: "2 2 2 2"},
		{name: "log", args: []Expr{l(2), l(8)}, want: "3 3 3 3"},
		{name: "exp", args: []Expr{l(0)}, want: "1 1 1 1"},
		{name: "abs", args: []Expr{l(true)}, err: "function abs(boolean) does not exist; add explicit casts to the arguments"},
	})
}
