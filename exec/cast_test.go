package exec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// castCase casts a column of text or values to a type and renders it.
type castCase struct {
	from arrow.DataType
	in   []any
	to   arrow.DataType
	want string
	err  string
}

func runCasts(t *testing.T, env *testEnv, cases []castCase) {
	t.Helper()
	for _, tc := range cases {
		b := env.batch(env.col(tc.from, tc.in...))
		for _, try := range []bool{false, true} {
			e, err := NewCast(colRef(b, 0), tc.to, try)
			if err != nil {
				if tc.err != "" && err.Error() == tc.err {
					continue
				}
				t.Errorf("cast %s to %s: %v", TypeName(tc.from), TypeName(tc.to), err)
				continue
			}
			got, err := env.eval(e, b)
			switch {
			case tc.err != "" && !try:
				if err == nil || err.Error() != tc.err {
					t.Errorf("%s: got %q, %v; want error %q", e, got, err, tc.err)
				}
			case err != nil:
				t.Errorf("%s: %v", e, err)
			case tc.err == "" && got != tc.want:
				t.Errorf("%s: got %q, want %q", e, got, tc.want)
			case tc.err != "" && try && got != tc.want:
				t.Errorf("%s: got %q, want %q", e, got, tc.want)
			}
		}
		b.Release()
	}
}

func TestCasts(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	dec := func(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
	runCasts(t, env, []castCase{
		// numeric <-> numeric
		{from: tInt64, in: []any{1, nil, -2147483648}, to: tInt32, want: "1 NULL -2147483648"},
		{from: tInt64, in: []any{1, 2147483648}, to: tInt32, want: "1 NULL", err: "integer out of range"},
		{from: tInt32, in: []any{1, 40000}, to: tInt16, want: "1 NULL", err: "smallint out of range"},
		{from: tFloat64, in: []any{1.5, 2.5, -0.5, nil}, to: tInt32, want: "2 2 0 NULL"},
		{from: tFloat64, in: []any{1e10}, to: tInt32, want: "NULL", err: "integer out of range"},
		{from: tFloat64, in: []any{9.3e18}, to: tInt64, want: "NULL", err: "bigint out of range"},
		{from: tInt32, in: []any{7, nil}, to: tFloat64, want: "7 NULL"},
		{from: tFloat64, in: []any{2.675, -1.005, 0.1}, to: dec(5, 2), want: "2.68 -1.01 0.10"},
		{from: tFloat64, in: []any{12345.6}, to: dec(5, 2), want: "NULL", err: "numeric field overflow"},
		{from: dec(10, 3), in: []any{"1.2345", "-1.5"}, to: dec(10, 1), want: "1.2 -1.5"},
		{from: dec(10, 2), in: []any{"2.50", "-2.50", "3.49"}, to: tInt32, want: "3 -3 3"},
		{from: dec(10, 2), in: []any{"1.25"}, to: tFloat64, want: "1.25"},
		{from: tInt32, in: []any{123, -5}, to: dec(5, 2), want: "123.00 -5.00"},
		{from: tInt32, in: []any{1234}, to: dec(5, 2), want: "NULL", err: "numeric field overflow"},
		{from: tBool, in: []any{true, false, nil}, to: tInt32, want: "1 0 NULL"},
		{from: tInt32, in: []any{0, 5, nil}, to: tBool, want: "false true NULL"},
		// to text
		{from: tFloat64, in: []any{0.1, 1e20, 1.5e-5, 123456789012345.0, 1e15, -2.0}, to: tString, want: "0.1 1e+20 1.5e-05 123456789012345 1e+15 -2"},
		{from: tFloat32, in: []any{1234567.0, 0.25}, to: tString, want: "1.234567e+06 0.25"},
		{from: tBool, in: []any{true, false}, to: tString, want: "true false"},
		{from: dec(10, 2), in: []any{"0.05", "-12.30", "0"}, to: tString, want: "0.05 -12.30 0.00"},
		{from: tDate, in: []any{"2024-02-29", "1969-12-31"}, to: tString, want: "2024-02-29 1969-12-31"},
		{from: tTimestamp, in: []any{"2024-01-02T03:04:05.120000", "1969-12-31T23:59:59"}, to: tString, want: "2024-01-02 03:04:05.12 1969-12-31 23:59:59"},
		{from: tTimestampTZ, in: []any{"2024-01-02T03:04:05Z"}, to: tString, want: "2024-01-02 03:04:05+00"},
		{from: tBinary, in: []any{"AQI="}, to: tString, want: `\x0102`},
		// from text
		{from: tString, in: []any{" 42 ", "-7", nil}, to: tInt32, want: "42 -7 NULL"},
		{from: tString, in: []any{"abc"}, to: tInt32, want: "NULL", err: `invalid input syntax for type integer: "abc"`},
		{from: tString, in: []any{"99999999999"}, to: tInt32, want: "NULL", err: `value "99999999999" is out of range for type integer`},
		{from: tString, in: []any{"1.5", "NaN", "-Infinity", "1e3"}, to: tFloat64, want: "1.5 NaN -Infinity 1000"},
		{from: tString, in: []any{"x1"}, to: tFloat64, want: "NULL", err: `invalid input syntax for type double precision: "x1"`},
		{from: tString, in: []any{"12.345", "-0.5", "1e2", ".5"}, to: dec(6, 2), want: "12.35 -0.50 100.00 0.50"},
		{from: tString, in: []any{"12345"}, to: dec(6, 2), want: "NULL", err: "numeric field overflow"},
		{from: tString, in: []any{"1.2.3"}, to: dec(6, 2), want: "NULL", err: `invalid input syntax for type numeric: "1.2.3"`},
		{from: tString, in: []any{"t", "FALSE", " yes ", "off", "1", "0"}, to: tBool, want: "true false true false true false"},
		{from: tString, in: []any{"maybe"}, to: tBool, want: "NULL", err: `invalid input syntax for type boolean: "maybe"`},
		{from: tString, in: []any{"2024-01-02", "2024-02-29 10:00:00", "0044-03-15 BC"}, to: tDate, want: "2024-01-02 2024-02-29 0044-03-15 BC"},
		{from: tString, in: []any{"2024-13-01"}, to: tDate, want: "NULL", err: `invalid input syntax for type date: "2024-13-01"`},
		{from: tString, in: []any{"2023-02-29"}, to: tDate, want: "NULL", err: `invalid input syntax for type date: "2023-02-29"`},
		{from: tString, in: []any{"2024-01-02", "2024-01-02 03:04:05", "2024-01-02T03:04:05.123456Z", "2024-01-02 03:04:05+02"}, to: tTimestamp,
			want: "2024-01-02 00:00:00 2024-01-02 03:04:05 2024-01-02 03:04:05.123456 2024-01-02 03:04:05"},
		{from: tString, in: []any{"2024-01-02 03:04:05+02", "2024-01-02T03:04:05-05:30", "2024-01-02 03:04:05+00"}, to: tTimestampTZ,
			want: "2024-01-02 01:04:05+00 2024-01-02 08:34:05+00 2024-01-02 03:04:05+00"},
		{from: tString, in: []any{"2024-01-02 25:00"}, to: tTimestamp, want: "NULL", err: `invalid input syntax for type timestamp: "2024-01-02 25:00"`},
		{from: tString, in: []any{"13:45:01.5", "00:00"}, to: tTime, want: "13:45:01.5 00:00:00"},
		{from: tString, in: []any{"1 day", "2 hours 30 minutes", "1 year 2 mons", "-1 day", "03:04:05", "1.5 days", "1 week ago"}, to: tInterval,
			want: "1 day 02:30:00 1 year 2 mons -1 days 03:04:05 1 day 12:00:00 -7 days"},
		{from: tString, in: []any{"1 fortnight"}, to: tInterval, want: "NULL", err: `invalid input syntax for type interval: "1 fortnight"`},
		{from: tString, in: []any{`\x0a0b`, "ab"}, to: tBinary, want: `\x0a0b \x6162`},
		// temporal <-> temporal
		{from: tDate, in: []any{"2024-01-02", nil}, to: tTimestamp, want: "2024-01-02 00:00:00 NULL"},
		{from: tTimestamp, in: []any{"1969-12-31T23:00:00", "2024-01-02T23:59:59"}, to: tDate, want: "1969-12-31 2024-01-02"},
		{from: tTimestamp, in: []any{"2024-01-02T03:04:05"}, to: tTimestampTZ, want: "2024-01-02 03:04:05+00"},
		{from: tTimestamp, in: []any{"2024-01-02T03:04:05"}, to: tTime, want: "03:04:05"},
	})
}

func TestCastErrors(t *testing.T) {
	if _, err := NewCast(&Column{Type: tDate}, tInt32, false); err == nil || err.Error() != "cannot cast type date to integer" {
		t.Errorf("got %v", err)
	}
	// a literal is cast at bind time, so its error comes from NewCast
	if _, err := NewCast(lit(t, "2024-02-30"), tDate, false); err == nil || err.Error() != `invalid input syntax for type date: "2024-02-30"` {
		t.Errorf("got %v", err)
	}
	l, err := NewCast(lit(t, "2024-02-30"), tDate, true)
	if err != nil || l.(*Literal).Value.IsValid() {
		t.Errorf("TRY_CAST of a bad literal: %v, %v", l, err)
	}
	e, _ := NewCast(&Column{Name: "x", Type: tString}, tInt64, true)
	if e.String() != "TRY_CAST(x AS bigint)" {
		t.Errorf("String() = %q", e.String())
	}
	if _, err := Coerce(&Column{Type: tString}, tInt32); err == nil || err.Error() != "cannot coerce text to integer; add an explicit cast" {
		t.Errorf("got %v", err)
	}
}

// TestCastTextRoundTrip renders random values as text and parses them
// back: the text form must be exact for every type with a text input.
func TestCastTextRoundTrip(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 2000
	build := func(dt arrow.DataType, gen func(b array.Builder)) arrow.Array {
		bld := array.NewBuilder(env.mem, dt)
		defer bld.Release()
		for i := range n {
			if i%17 == 0 {
				bld.AppendNull()
				continue
			}
			gen(bld)
		}
		return bld.NewArray()
	}
	cols := []arrow.Array{
		build(tInt64, func(b array.Builder) { b.(*array.Int64Builder).Append(int64(rng.Uint64())) }),
		build(tFloat64, func(b array.Builder) {
			b.(*array.Float64Builder).Append(math.Float64frombits(rng.Uint64() & 0x7fefffffffffffff))
		}),
		build(tFloat32, func(b array.Builder) { b.(*array.Float32Builder).Append(rng.Float32() * 1e10) }),
		build(decType(38, 9), func(b array.Builder) {
			b.(*array.Decimal128Builder).Append(decimal128.New(int64(rng.Uint64()>>4), rng.Uint64()))
		}),
		build(tDate, func(b array.Builder) { b.(*array.Date32Builder).Append(arrow.Date32(rng.IntN(4_000_000) - 1_000_000)) }),
		build(tTimestamp, func(b array.Builder) {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(rng.Int64N(1<<56) - 1<<55))
		}),
		build(tTimestampTZ, func(b array.Builder) {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(rng.Int64N(1<<50) - 1<<49))
		}),
		build(tTime, func(b array.Builder) { b.(*array.Time64Builder).Append(arrow.Time64(rng.Int64N(usPerDay))) }),
		build(tInterval, func(b array.Builder) {
			b.(*array.MonthDayNanoIntervalBuilder).Append(arrow.MonthDayNanoInterval{
				Months: int32(rng.IntN(2000) - 1000), Days: int32(rng.IntN(2000) - 1000), Nanoseconds: (rng.Int64N(1<<40) - 1<<39) * 1000})
		}),
		build(tBool, func(b array.Builder) { b.(*array.BooleanBuilder).Append(rng.IntN(2) == 0) }),
	}
	b := env.batch(cols...)
	defer b.Release()
	for i := range cols {
		c := colRef(b, i)
		text := mustCast(t, c, tString)
		back := mustCast(t, text, c.Type)
		eq, err := NewCall("is_not_distinct_from", c, back)
		if err != nil {
			t.Fatal(err)
		}
		out, err := eq.Eval(env.ec, b)
		if err != nil {
			t.Fatalf("%s: %v", back, err)
		}
		bs := out.(*array.Boolean)
		for r := range n {
			if !bs.Value(r) {
				s, _ := env.evalConst(&Literal{Value: mustScalarAt(t, b.Column(i), r)})
				t.Errorf("%s: row %d (%s) does not survive a text round trip", TypeName(c.Type), r, s)
				break
			}
		}
		out.Release()
	}
}

func mustScalarAt(t *testing.T, a arrow.Array, i int) scalar.Scalar {
	s, err := scalar.GetScalar(a, i)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
