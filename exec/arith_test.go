package exec

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
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

// TestUDiv: the multiply-and-shift division is floor(x/d) for every
// non-negative int64 x, over divisors of every bit length, powers of two
// and the largest.
func TestUDiv(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 42))
	divisors := []uint64{2, 3, 5, 6, 7, 10, 100, 641, 1000, 1 << 31, 1<<31 + 1, 1<<62 - 1, 1 << 62, 1<<62 + 1, math.MaxInt64 - 1, math.MaxInt64}
	for l := 2; l < 63; l++ {
		divisors = append(divisors, 1<<(l-1)+1+rng.Uint64N(1<<(l-1)-1))
	}
	xs := []uint64{0, 1, 2, math.MaxInt64, math.MaxInt64 - 1, 1 << 62, 1<<62 - 1}
	for _, d := range divisors {
		u := newUDiv(d)
		for _, x := range append(xs, d-1, d, d+1, 2*d-1, 2*d, (math.MaxInt64/d)*d, (math.MaxInt64/d)*d-1) {
			if x > math.MaxInt64 {
				continue
			}
			if got := u.div(x); got != x/d {
				t.Fatalf("%d / %d: got %d, want %d", x, d, got, x/d)
			}
		}
		for range 2000 {
			x := rng.Uint64() >> 1
			if got := u.div(x); got != x/d {
				t.Fatalf("%d / %d: got %d, want %d", x, d, got, x/d)
			}
		}
	}
}

// TestDivisionByConstant: x / d and x % d with a constant d > 1 (udiv for
// x >= 0) agree with Go's truncating division on every integer type, at
// the ends of each type's range, around zero and at random, NULLs kept.
func TestDivisionByConstant(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(14, 7))
	for _, c := range []struct {
		dt       arrow.DataType
		min, max int64
		lit      func(int64) any
	}{
		{tInt8, math.MinInt8, math.MaxInt8, func(v int64) any { return int8(v) }},
		{tInt16, math.MinInt16, math.MaxInt16, func(v int64) any { return int16(v) }},
		{tInt32, math.MinInt32, math.MaxInt32, func(v int64) any { return int32(v) }},
		{tInt64, math.MinInt64, math.MaxInt64, func(v int64) any { return v }},
	} {
		vals := []int64{c.min, c.min + 1, -1, 0, 1, 2, c.max - 1, c.max}
		for range 400 {
			v := int64(rng.Uint64())
			if c.max < math.MaxInt64 {
				v = c.min + rng.Int64N(c.max-c.min+1)
			}
			vals = append(vals, v)
		}
		in := make([]any, len(vals)+1)
		for i, v := range vals {
			in[i] = int(v)
		}
		col := env.col(c.dt, in...) // the last is NULL
		b := env.batch(col)
		divisors := []int64{2, 3, 7, 10, 16, 100, c.max / 3, c.max - 1, c.max}
		for range 10 {
			divisors = append(divisors, 2+rng.Int64N(c.max-1))
		}
		for _, d := range divisors {
			for _, op := range []string{"/", "%"} {
				e, err := NewCall(op, colRef(b, 0), lit(t, c.lit(d)))
				if err != nil {
					t.Fatal(err)
				}
				if !arrow.TypeEqual(e.DataType(), c.dt) {
					t.Fatalf("%s: type %s, want %s", e, e.DataType(), c.dt)
				}
				got, err := env.eval(e, b)
				if err != nil {
					t.Fatalf("%s: %v", e, err)
				}
				want := make([]string, 0, len(vals)+1)
				for _, v := range vals {
					r := v / d
					if op == "%" {
						r = v % d
					}
					want = append(want, strconv.FormatInt(r, 10))
				}
				want = append(want, "NULL")
				if w := strings.Join(want, " "); got != w {
					g, ws := strings.Fields(got), strings.Fields(w)
					for i := range ws {
						if i < len(g) && g[i] != ws[i] {
							t.Fatalf("%s %s %d, x = %s: got %s, want %s", c.dt, op, d, in[i], g[i], ws[i])
						}
					}
					t.Fatalf("%s %s %d: got %q, want %q", c.dt, op, d, got, w)
				}
			}
		}
		b.Release()
		col.Release()
	}
}
