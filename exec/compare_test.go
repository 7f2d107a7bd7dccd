package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// callCase is one table row for a function or operator test: the call,
// its arguments and the rendered result (or the error text).
type callCase struct {
	name string
	args []Expr
	want string
	err  string
}

func runCalls(t *testing.T, env *testEnv, b arrow.RecordBatch, cases []callCase) {
	t.Helper()
	for _, tc := range cases {
		e, err := NewCall(tc.name, tc.args...)
		if err != nil {
			if tc.err != "" && err.Error() == tc.err {
				continue
			}
			t.Errorf("%s%v: bind: %v", tc.name, tc.args, err)
			continue
		}
		got, err := env.eval(e, b)
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: got %q, %v; want error %q", e, got, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", e, err)
		case got != tc.want:
			t.Errorf("%s: got %q, want %q", e, got, tc.want)
		}
	}
}

func TestCompare(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(
		env.col(tInt32, 1, 2, nil, 4),
		env.col(tInt64, 1, 3, 3, nil),
		env.col(tString, "a", "b", "", nil),
		env.col(tFloat64, 1.5, nil, 2.0, 0.0),
		env.col(tDate, "2024-01-01", "2024-02-29", nil, "1999-12-31"),
		env.col(tBool, true, false, nil, true),
		env.col(&arrow.Decimal128Type{Precision: 10, Scale: 2}, "1.00", "2.50", "3.33", nil),
		env.col(tTimestamp, "2024-01-01T00:00:00", "2024-01-01T12:00:00", nil, "2023-06-01T00:00:00"),
	)
	defer b.Release()
	c := func(i int) Expr { return colRef(b, i) }
	runCalls(t, env, b, []callCase{
		{name: "=", args: []Expr{c(0), c(1)}, want: "true false NULL NULL"},
		{name: "<>", args: []Expr{c(0), c(1)}, want: "false true NULL NULL"},
		{name: "!=", args: []Expr{c(0), c(1)}, want: "false true NULL NULL"},
		{name: "<", args: []Expr{c(0), c(1)}, want: "false true NULL NULL"},
		{name: ">=", args: []Expr{c(0), c(3)}, want: "false NULL NULL true"},
		{name: "<=", args: []Expr{c(2), lit(t, "a")}, want: "true false true NULL"},
		{name: ">", args: []Expr{c(2), lit(t, "")}, want: "true true false NULL"},
		{name: "<", args: []Expr{c(4), lit(t, "2024-02-01")}, want: "true false NULL true"},
		{name: "=", args: []Expr{c(5), lit(t, true)}, want: "true false NULL true"},
		{name: "<", args: []Expr{c(5), lit(t, true)}, want: "false true NULL false"},
		{name: ">", args: []Expr{c(6), c(0)}, want: "false true NULL NULL"},
		{name: "=", args: []Expr{c(6), decLit(t, "2.5")}, want: "false true false NULL"},
		{name: ">", args: []Expr{c(7), c(4)}, want: "false false NULL true"},
		{name: "<=", args: []Expr{c(7), lit(t, "2024-01-01 06:00")}, want: "true false NULL true"},
		{name: "is_distinct_from", args: []Expr{c(0), c(1)}, want: "false true true true"},
		{name: "is_not_distinct_from", args: []Expr{c(0), c(1)}, want: "true false false false"},
		{name: "is_not_distinct_from", args: []Expr{c(0), lit(t, nil)}, want: "false false true false"},
		{name: "=", args: []Expr{c(0), lit(t, nil)}, want: "NULL NULL NULL NULL"},
		{name: "=", args: []Expr{c(4), lit(t, "2024-13-01")}, err: `invalid input syntax for type date: "2024-13-01"`},
		{name: "=", args: []Expr{c(5), c(0)}, err: "operator does not exist: boolean = integer; add an explicit cast"},
		{name: "<", args: []Expr{c(2), c(4)}, err: "operator does not exist: text < date; add an explicit cast"},
	})
}

func TestCompareFloatNaN(t *testing.T) {
	for _, tc := range []struct {
		a, b float64
		want int
	}{{1, 2, -1}, {nan(), nan(), 0}, {nan(), 1e308, 1}, {-1, nan(), -1}, {0, 0, 0}} {
		if got := floatCompare(tc.a, tc.b); got != tc.want {
			t.Errorf("floatCompare(%v, %v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestLogic(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	// every pair of TRUE, FALSE, NULL
	b := env.batch(
		env.col(tBool, true, true, true, false, false, false, nil, nil, nil),
		env.col(tBool, true, false, nil, true, false, nil, true, false, nil),
	)
	defer b.Release()
	x, y := colRef(b, 0), colRef(b, 1)
	runCalls(t, env, b, []callCase{
		{name: "and", args: []Expr{x, y}, want: "true false NULL false false false NULL false NULL"},
		{name: "or", args: []Expr{x, y}, want: "true true true true false NULL true NULL NULL"},
		{name: "not", args: []Expr{x}, want: "false false false true true true NULL NULL NULL"},
		{name: "is_true", args: []Expr{y}, want: "true false false true false false true false false"},
		{name: "is_false", args: []Expr{y}, want: "false true false false true false false true false"},
		{name: "is_not_true", args: []Expr{y}, want: "false true true false true true false true true"},
		{name: "is_not_false", args: []Expr{y}, want: "true false true true false true true false true"},
		{name: "is_null", args: []Expr{y}, want: "false false true false false true false false true"},
		{name: "is_not_null", args: []Expr{y}, want: "true true false true true false true true false"},
		{name: "and", args: []Expr{x, lit(t, nil)}, want: "NULL NULL NULL false false false NULL NULL NULL"},
		{name: "or", args: []Expr{x, lit(t, "true")}, want: "true true true true true true true true true"},
		{name: "and", args: []Expr{x, lit(t, 1)}, err: "operator does not exist: boolean AND integer; add an explicit cast"},
	})
}

func TestEmptyBatch(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tInt32), env.col(tString), env.col(tBool))
	defer b.Release()
	c := func(i int) Expr { return colRef(b, i) }
	whenThen, err := NewCase([]When{{Cond: c(2), Then: c(0)}}, lit(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	coalesce, err := NewCoalesce(c(0), lit(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Expr{
		mustCall(t, "+", c(0), lit(t, 1)),
		mustCall(t, "/", c(0), lit(t, 0)),
		mustCall(t, "=", c(1), lit(t, "x")),
		mustCall(t, "like", c(1), lit(t, "%x%")),
		mustCall(t, "upper", c(1)),
		mustCall(t, "and", c(2), lit(t, true)),
		mustCall(t, "is_null", c(0)),
		mustCall(t, "concat", c(1), c(0)),
		whenThen, coalesce,
	} {
		got, err := env.eval(e, b)
		if err != nil || got != "" {
			t.Errorf("%s on no rows: %q, %v", e, got, err)
		}
	}
}

// TestConstantOperands covers kernels reading a literal in place, on
// either side and on both.
func TestConstantOperands(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tInt32, 1, nil, 5), env.col(tString, "a", "b", nil))
	defer b.Release()
	x, s := colRef(b, 0), colRef(b, 1)
	l := func(v any) Expr { return lit(t, v) }
	runCalls(t, env, b, []callCase{
		{name: ">", args: []Expr{l(3), x}, want: "true NULL false"},
		{name: "<=", args: []Expr{l(5), x}, want: "false NULL true"},
		{name: "=", args: []Expr{l(5), l(5)}, want: "true true true"},
		{name: "<", args: []Expr{l("a"), s}, want: "false true NULL"},
		{name: "-", args: []Expr{l(10), x}, want: "9 NULL 5"},
		{name: "/", args: []Expr{l(10), x}, want: "10 NULL 2"},
		{name: "*", args: []Expr{l(2), l(3)}, want: "6 6 6"},
		{name: "-", args: []Expr{l(1.5), x}, want: "0.5 NULL -3.5"},
		{name: "/", args: []Expr{x, l(0)}, err: "division by zero"},
		{name: "+", args: []Expr{l(2147483647), x}, err: "integer out of range"},
		{name: "is_distinct_from", args: []Expr{x, l(5)}, want: "true true false"},
	})
}

func TestUnknownLiteralKeepsScale(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(decType(10, 0), "2", "1", nil))
	defer b.Release()
	runCalls(t, env, b, []callCase{
		{name: "=", args: []Expr{colRef(b, 0), lit(t, "1.5")}, want: "false false NULL"},
		{name: "<", args: []Expr{colRef(b, 0), lit(t, "1.5")}, want: "false true NULL"},
		{name: "+", args: []Expr{colRef(b, 0), lit(t, "0.25")}, want: "2.25 1.25 NULL"},
	})
}

func TestCompareMoreTypes(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tInterval, nil, nil, nil), env.col(tTime, "10:00:00", "23:59:59.5", nil), env.col(tBinary, "AQI=", "AQ==", ""))
	defer b.Release()
	iv := func(s string) Expr { return mustCast(t, lit(t, s), tInterval) }
	runCalls(t, env, b, []callCase{
		{name: "=", args: []Expr{iv("1 mon"), iv("30 days")}, want: "true true true"},
		{name: "<", args: []Expr{iv("1 day"), iv("25 hours")}, want: "true true true"},
		{name: ">", args: []Expr{colRef(b, 1), lit(t, "12:00")}, want: "false true NULL"},
		{name: "<", args: []Expr{colRef(b, 2), mustCast(t, lit(t, `\x0102`), tBinary)}, want: "false true true"},
		{name: "=", args: []Expr{lit(t, nan()), lit(t, nan())}, want: "true true true"},
		{name: ">", args: []Expr{lit(t, nan()), lit(t, 1e308)}, want: "true true true"},
	})
}
