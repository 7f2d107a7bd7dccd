package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestArithmetic(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	i32 := env.col(tInt32, 1, nil, 2147483647, -7, 0)
	i64 := env.col(tInt64, 2, 5, 1, 2, 3)
	f64 := env.col(tFloat64, 1.5, nil, 2.0, -0.5, 0.0)
	i16 := env.col(tInt16, 32767, 1, nil, 3, 2)
	b := env.batch(i32, i64, f64, i16)
	defer b.Release()
	c0, c1, c2 := colRef(b, 0), colRef(b, 1), colRef(b, 2)
	tests := []struct {
		name string
		op   string
		args []Expr
		want string
		typ  arrow.DataType
	}{
		{"int+bigint widens", "+", []Expr{c0, c1}, "3 NULL 2147483648 -5 3", tInt64},
		{"int*int", "*", []Expr{c0, lit(t, 2)}, "", nil},
		{"int/int truncates", "/", []Expr{c0, lit(t, 2)}, "0 NULL 1073741823 -3 0", tInt32},
		{"int%int", "%", []Expr{c0, lit(t, 3)}, "1 NULL 1 -1 0", tInt32},
		{"float", "*", []Expr{c2, c0}, "1.5 NULL 4294967294 3.5 0", tFloat64},
		{"negate", "negate", []Expr{c0}, "-1 NULL -2147483647 7 0", tInt32},
		{"unknown literal", "+", []Expr{c1, lit(t, "10")}, "12 15 11 12 13", tInt64},
		{"numeric", "+", []Expr{c1, decLit(t, "1.25")}, "3.25 6.25 2.25 3.25 4.25", nil},
		{"numeric div", "/", []Expr{decLit(t, "10"), c1}, "5.0000000000000000 2.0000000000000000 10.0000000000000000 5.0000000000000000 3.3333333333333333", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewCall(tc.op, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if tc.typ != nil && !arrow.TypeEqual(e.DataType(), tc.typ) {
				t.Fatalf("type %s, want %s", e.DataType(), tc.typ)
			}
			got, err := env.eval(e, b)
			if tc.want == "" {
				if err == nil || err.Error() != "integer out of range" {
					t.Fatalf("got %q, %v; want integer out of range", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %q want %q", got, tc.want)
			}
		})
	}
}

func decLit(t *testing.T, s string) *Literal {
	l, err := NewDecimalLiteral(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestArithmeticErrors(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tInt32, 5, nil), env.col(tInt32, 0, 0), env.col(tInt16, 32767, nil),
		env.col(tInt64, 9223372036854775807, nil), env.col(tFloat64, 1.0, nil))
	defer b.Release()
	c := func(i int) Expr { return colRef(b, i) }
	tests := []struct {
		op   string
		args []Expr
		want string
	}{
		{"/", []Expr{c(0), c(1)}, "division by zero"},
		{"%", []Expr{c(0), c(1)}, "division by zero"},
		{"/", []Expr{c(4), c(1)}, "division by zero"},
		{"+", []Expr{c(2), c(2)}, "smallint out of range"},
		{"+", []Expr{c(3), lit(t, 1)}, "bigint out of range"},
		{"*", []Expr{c(3), lit(t, 2)}, "bigint out of range"},
		{"negate", []Expr{mustCall(t, "-", lit(t, int64(-9223372036854775807)), lit(t, 1))}, "bigint out of range"},
		{"/", []Expr{decLit(t, "1.5"), mustCall(t, "-", c(1), c(1))}, "division by zero"},
	}
	for _, tc := range tests {
		e, err := NewCall(tc.op, tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.op, err)
		}
		if got, err := env.eval(e, b); err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %q, %v; want error %q", e, got, err, tc.want)
		}
	}
	// the NULL row of a division by zero is not an error
	e := mustCall(t, "/", lit(t, 1), mustCall(t, "*", c(2), c(1)))
	if _, err := env.eval(e, b); err == nil {
		t.Fatal("want division by zero on row 0")
	}
}

func TestCallErrors(t *testing.T) {
	i := &Column{Index: 0, Type: tInt32}
	s := &Column{Index: 1, Type: tString}
	tests := []struct {
		name string
		args []Expr
		want string
	}{
		{"+", []Expr{i, s}, "operator does not exist: integer + text; add an explicit cast"},
		{"negate", []Expr{s}, "operator does not exist: - text; add an explicit cast"},
		{"foo", []Expr{i, s}, `function foo(integer, text) does not exist; did you mean "floor"?`},
		{"zzzzzzzzzz", nil, `function zzzzzzzzzz() does not exist`},
		{"=", []Expr{i, s}, "operator does not exist: integer = text; add an explicit cast"},
		{"+", []Expr{i, lit(t, "abc")}, `invalid input syntax for type integer: "abc"`},
	}
	for _, tc := range tests {
		_, err := NewCall(tc.name, tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestDecimalArithmetic(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(decType(10, 2), "10.25", "-7.50", nil, "0.00"), env.col(decType(6, 3), "3.000", "2.125", "1.000", "-0.333"),
		env.col(tInt8, 100, -100, 1, 0))
	defer b.Release()
	x, y, i8 := colRef(b, 0), colRef(b, 1), colRef(b, 2)
	runCalls(t, env, b, []callCase{
		{name: "+", args: []Expr{x, y}, want: "13.250 -5.375 NULL -0.333"},
		{name: "-", args: []Expr{x, y}, want: "7.250 -9.625 NULL 0.333"},
		{name: "*", args: []Expr{x, y}, want: "30.75000 -15.93750 NULL 0.00000"},
		{name: "/", args: []Expr{x, y}, want: "3.4166666666666667 -3.5294117647058824 NULL 0.0000000000000000"},
		{name: "%", args: []Expr{x, y}, want: "1.250 -1.125 NULL 0.000"},
		{name: "negate", args: []Expr{x}, want: "-10.25 7.50 NULL 0.00"},
		{name: "+", args: []Expr{x, i8}, want: "110.25 -107.50 NULL 0.00"},
		{name: "*", args: []Expr{x, lit(t, 0.5)}, want: "5.125 -3.75 NULL 0"},
		{name: "/", args: []Expr{y, x}, err: "division by zero"},
		{name: "%", args: []Expr{y, x}, err: "division by zero"},
		{name: "+", args: []Expr{i8, i8}, err: "tinyint out of range"},
		{name: "*", args: []Expr{decLit(t, "99999999999999999999"), decLit(t, "99999999999999999999")}, err: "value overflows numeric format"},
	})
}
