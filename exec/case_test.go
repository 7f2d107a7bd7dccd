package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

func TestCaseIsLazy(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tInt32, 0, 2, nil, -4, 0, 5))
	defer b.Release()
	x := colRef(b, 0)
	// CASE WHEN x = 0 THEN 0 ELSE 100 / x END never divides by zero
	e, err := NewCase([]When{{Cond: mustCall(t, "=", x, lit(t, 0)), Then: lit(t, 0)}},
		mustCall(t, "/", lit(t, 100), x))
	if err != nil {
		t.Fatal(err)
	}
	got, err := env.eval(e, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := "0 50 NULL -25 0 20"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if s := e.String(); s != "CASE WHEN (c0 = 0) THEN 0 ELSE (100 / c0) END" {
		t.Errorf("String() = %q", s)
	}
	// conditions are lazy too: the second WHEN only sees rows the first missed
	e, err = NewCase([]When{
		{Cond: mustCall(t, "is_null", x), Then: lit(t, "null")},
		{Cond: mustCall(t, "=", x, lit(t, 0)), Then: lit(t, "zero")},
		{Cond: mustCall(t, ">", mustCall(t, "/", lit(t, 10), x), lit(t, 0)), Then: lit(t, "pos")},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err = env.eval(e, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := "zero pos null NULL zero pos"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	// without the guard the division fails
	bad := mustCall(t, "/", lit(t, 100), x)
	if _, err := env.eval(bad, b); err == nil || err.Error() != "division by zero" {
		t.Fatalf("want division by zero, got %v", err)
	}
}

func TestCaseTypes(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tBool, true, false, nil), env.col(tInt16, 1, 2, 3), env.col(tFloat64, 0.5, 1.5, 2.5), env.col(tString, "a", "b", "c"))
	defer b.Release()
	c := func(i int) Expr { return colRef(b, i) }
	e, err := NewCase([]When{{Cond: c(0), Then: c(1)}}, c(2))
	if err != nil {
		t.Fatal(err)
	}
	if !arrow.TypeEqual(e.DataType(), tFloat64) {
		t.Fatalf("type %s", e.DataType())
	}
	if got, _ := env.eval(e, b); got != "1 1.5 2.5" {
		t.Fatalf("got %q", got)
	}
	if _, err := NewCase([]When{{Cond: c(0), Then: c(1)}}, c(3)); err == nil || err.Error() != "CASE types smallint and text cannot be matched" {
		t.Fatalf("got %v", err)
	}
	if _, err := NewCase([]When{{Cond: c(1), Then: c(1)}}, nil); err == nil || err.Error() != "argument of CASE/WHEN must be type boolean, not type smallint" {
		t.Fatalf("got %v", err)
	}
	// a string literal branch takes the other branches' type
	e, err = NewCase([]When{{Cond: c(0), Then: c(1)}}, lit(t, "7"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := env.eval(e, b); got != "1 7 7" || !arrow.TypeEqual(e.DataType(), tInt16) {
		t.Fatalf("got %q %s", got, e.DataType())
	}
	// no ELSE and no match: NULL
	e, _ = NewCase([]When{{Cond: lit(t, false), Then: c(3)}}, nil)
	if got, _ := env.eval(e, b); got != "NULL NULL NULL" {
		t.Fatalf("got %q", got)
	}
}

func TestCommonType(t *testing.T) {
	dec := func(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
	tests := []struct {
		in   []arrow.DataType
		want arrow.DataType
		err  string
	}{
		{[]arrow.DataType{tInt8, tInt32}, tInt32, ""},
		{[]arrow.DataType{tInt64, tNull, tInt16}, tInt64, ""},
		{[]arrow.DataType{tInt32, dec(10, 2)}, dec(12, 2), ""},
		{[]arrow.DataType{dec(5, 4), dec(10, 1)}, dec(13, 4), ""},
		{[]arrow.DataType{dec(10, 2), tFloat32}, tFloat32, ""},
		{[]arrow.DataType{tFloat32, tFloat64}, tFloat64, ""},
		{[]arrow.DataType{tDate, tTimestamp}, tTimestamp, ""},
		{[]arrow.DataType{tTimestamp, tTimestampTZ}, tTimestampTZ, ""},
		{[]arrow.DataType{tNull, tNull}, tString, ""},
		{[]arrow.DataType{tString, tString}, tString, ""},
		{[]arrow.DataType{tInt32, tString}, nil, "types integer and text cannot be matched"},
		{[]arrow.DataType{tBool, tDate}, nil, "types boolean and date cannot be matched"},
	}
	for _, tc := range tests {
		got, err := CommonType(tc.in...)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v: got %v, %v; want %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !arrow.TypeEqual(got, tc.want) {
			t.Errorf("%v: got %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := CommonTypeFor("UNION", tInt32, tString); err == nil || err.Error() != "UNION types integer and text cannot be matched" {
		t.Errorf("got %v", err)
	}
}

func TestTypeName(t *testing.T) {
	for dt, want := range map[arrow.DataType]string{
		tInt16: "smallint", tInt32: "integer", tInt64: "bigint", tFloat32: "real", tFloat64: "double precision",
		&arrow.Decimal128Type{Precision: 10, Scale: 2}: "numeric(10,2)", tString: "text", tBinary: "bytea",
		tDate: "date", tTime: "time", tTimestamp: "timestamp", tTimestampTZ: "timestamp with time zone",
		tBool: "boolean", tInterval: "interval", tNull: "unknown", tInt8: "tinyint",
	} {
		if got := TypeName(dt); got != want {
			t.Errorf("TypeName(%s) = %q, want %q", dt, got, want)
		}
	}
}

func TestCoalesceNullIfGreatestLeast(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tInt32, nil, 1, nil, 4), env.col(tInt64, 2, nil, nil, 3), env.col(tInt32, 0, 1, 5, 0))
	defer b.Release()
	c := func(i int) Expr { return colRef(b, i) }
	runCalls(t, env, b, []callCase{
		{name: "coalesce", args: []Expr{c(0), c(1)}, want: "2 1 NULL 4"},
		{name: "coalesce", args: []Expr{c(0), c(1), lit(t, 9)}, want: "2 1 9 4"},
		{name: "coalesce", args: []Expr{lit(t, nil), c(0)}, want: "NULL 1 NULL 4"},
		{name: "coalesce", args: []Expr{c(0), lit(t, "x")}, err: `invalid input syntax for type integer: "x"`},
		{name: "coalesce", args: []Expr{c(0), lit(t, true)}, err: "COALESCE types integer and boolean cannot be matched"},
		{name: "nullif", args: []Expr{c(2), lit(t, 0)}, want: "NULL 1 5 NULL"},
		{name: "nullif", args: []Expr{c(0), c(2)}, want: "NULL NULL NULL 4"},
		{name: "greatest", args: []Expr{c(0), c(1), c(2)}, want: "2 1 5 4"},
		{name: "least", args: []Expr{c(0), c(1), c(2)}, want: "0 1 5 0"},
		{name: "least", args: []Expr{c(0), c(1)}, want: "2 1 NULL 3"},
		{name: "greatest", args: []Expr{lit(t, "b"), lit(t, "a"), lit(t, "c")}, want: "c c c c"},
	})
	// COALESCE is lazy: the fallback runs only where the first is NULL
	e, err := NewCoalesce(c(2), mustCall(t, "/", lit(t, 1), c(2)))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := env.eval(e, b); err != nil || got != "0 1 5 0" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestInListAndBetween(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tInt32, 1, 2, nil, 3), env.col(tString, "a", "b", "c", nil))
	defer b.Release()
	x, s := colRef(b, 0), colRef(b, 1)
	check := func(e Expr, err error, want string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		got, err := env.eval(e, b)
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", e, got, err, want)
		}
	}
	e, err := NewInList(x, []Expr{lit(t, 1), lit(t, 3)}, false)
	check(e, err, "true false NULL true")
	e, err = NewInList(x, []Expr{lit(t, 1), lit(t, nil)}, false)
	check(e, err, "true NULL NULL NULL")
	e, err = NewInList(x, []Expr{lit(t, 1), lit(t, nil)}, true)
	check(e, err, "false NULL NULL NULL")
	e, err = NewInList(x, []Expr{lit(t, 1), lit(t, 3)}, true)
	check(e, err, "false true NULL false")
	if e.String() != "(c0 NOT IN (1, 3))" {
		t.Errorf("String() = %q", e.String())
	}
	e, err = NewInList(s, []Expr{lit(t, "b"), lit(t, "c")}, false)
	check(e, err, "false true true NULL")
	e, err = NewInList(x, []Expr{lit(t, int64(2)), lit(t, 2.5)}, false)
	check(e, err, "false true NULL false")
	// a list with a column takes the general path: OR of equalities
	e, err = NewInList(x, []Expr{lit(t, 1), mustCall(t, "+", x, lit(t, 0))}, false)
	check(e, err, "true true NULL true")
	e, err = NewInList(x, []Expr{lit(t, 7), lit(t, nil), mustCall(t, "-", x, lit(t, 1))}, true)
	check(e, err, "NULL NULL NULL NULL")
	e, err = NewInList(lit(t, nil), []Expr{lit(t, 1)}, false)
	check(e, err, "NULL NULL NULL NULL")
	if _, err := NewInList(x, []Expr{s}, false); err == nil || err.Error() != "IN types integer and text cannot be matched" {
		t.Errorf("got %v", err)
	}
	e, err = NewCall("in", x, lit(t, 2), lit(t, 3))
	check(e, err, "false true NULL true")
	e, err = NewCall("not_between", x, lit(t, 2), lit(t, 3))
	check(e, err, "true false NULL false")
	e, err = NewCall("-", x)
	check(e, err, "-1 -2 NULL -3")
	e, err = NewCall("+", x)
	check(e, err, "1 2 NULL 3")
	e, err = NewBetween(x, lit(t, 2), lit(t, 3), false)
	check(e, err, "false true NULL true")
	e, err = NewBetween(x, lit(t, 2), lit(t, 3), true)
	check(e, err, "true false NULL false")
}

// TestCaseOnSlices runs CASE and COALESCE over sliced columns (non-zero
// offsets) with unreferenced columns, and a CASE nested in a CASE.
func TestCaseOnSlices(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	full := []arrow.Array{
		env.col(tInt32, 9, 0, 1, nil, 3, 0, 9),
		env.col(tString, "x", "a", "bb", "ccc", nil, "e", "x"),
		env.col(tBool, true, true, false, nil, true, false, true),
		env.col(decType(5, 1), "9.9", "1.0", "2.0", "3.0", nil, "5.5", "9.9"),
	}
	cols := make([]arrow.Array, len(full))
	for i, c := range full {
		cols[i] = array.NewSlice(c, 1, 6)
		c.Release()
	}
	b := env.batch(cols...)
	defer b.Release()
	c := func(i int) Expr { return colRef(b, i) }
	inner, err := NewCase([]When{{Cond: c(2), Then: c(1)}}, lit(t, "no"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewCase([]When{
		{Cond: mustCall(t, "=", c(0), lit(t, 0)), Then: inner},
		{Cond: mustCall(t, ">", mustCall(t, "/", lit(t, 6), c(0)), lit(t, 2)), Then: mustCall(t, "upper", c(1))},
	}, mustCall(t, "||", c(1), lit(t, "!")))
	if err != nil {
		t.Fatal(err)
	}
	got, err := env.eval(e, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a BB ccc! NULL no"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	co, err := NewCoalesce(c(3), mustCall(t, "/", decLit(t, "1"), mustCall(t, "-", c(3), c(3))), lit(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := env.eval(co, b); err != nil || got != "1.0000000000000000 2.0000000000000000 3.0000000000000000 0.0000000000000000 5.5000000000000000" {
		t.Fatalf("got %q, %v", got, err)
	}
}

// TestCaseLazyMatchesEager checks the gathering CASE against the eager one
// on random data: with arms that cannot fail both must agree, for every
// result type and NULL pattern.
func TestCaseLazyMatchesEager(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 500
	mk := func(dt arrow.DataType, gen func() any) arrow.Array {
		vals := make([]any, n)
		for i := range vals {
			if rng.IntN(5) > 0 {
				vals[i] = gen()
			}
		}
		return env.col(dt, vals...)
	}
	b := env.batch(
		mk(tInt32, func() any { return rng.IntN(10) }),
		mk(tString, func() any { return fmt.Sprintf("s%d", rng.IntN(100)) }),
		mk(tBool, func() any { return rng.IntN(2) == 0 }),
		mk(decType(9, 2), func() any { return fmt.Sprintf("%d.%02d", rng.IntN(1000), rng.IntN(100)) }),
		mk(tDate, func() any { return fmt.Sprintf("2024-%02d-%02d", rng.IntN(12)+1, rng.IntN(28)+1) }),
		mk(tFloat64, func() any { return rng.Float64() }),
	)
	defer b.Release()
	c := func(i int) Expr { return colRef(b, i) }
	for trial := range 40 {
		var whens []When
		arm := 1 + rng.IntN(5) // the result column
		for range 1 + rng.IntN(3) {
			var cond Expr
			switch rng.IntN(3) {
			case 0:
				cond = mustCall(t, "<", c(0), lit(t, rng.IntN(10)))
			case 1:
				cond = c(2)
			default:
				cond = mustCall(t, "is_null", c(arm))
			}
			whens = append(whens, When{Cond: cond, Then: c(1 + rng.IntN(5))})
		}
		var els Expr
		if rng.IntN(2) == 0 {
			els = c(arm)
		}
		// keep the arms of one type: use the first arm's column everywhere
		for k := range whens {
			whens[k].Then = whens[0].Then
		}
		if els != nil {
			els = whens[0].Then
		}
		e, err := NewCase(whens, els)
		if err != nil {
			t.Fatal(err)
		}
		ce := e.(*Case)
		eager, err := ce.evalEager(env.ec, b)
		if err != nil {
			t.Fatal(err)
		}
		var used []int
		if trial%2 == 0 {
			used = nil // every column gathered
		} else {
			parts := []Expr{ce.Else}
			for _, w := range ce.Whens {
				parts = append(parts, w.Cond, w.Then)
			}
			used = UsedColumns(parts...)
		}
		lazy, err := ce.evalLazy(env.ec, b, used)
		if err != nil {
			t.Fatal(err)
		}
		if ge, gl := render(t, eager), render(t, lazy); ge != gl {
			t.Fatalf("trial %d: %s\neager %s\nlazy  %s", trial, e, ge, gl)
		}
		eager.Release()
		lazy.Release()
	}
}
