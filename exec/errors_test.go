package exec

import (
	"math"
	"testing"
)

// TestUserErrors asserts the text of every remaining error a user can
// trigger from SQL in the expression layer.
func TestUserErrors(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tString, "day"), env.col(tTimestamp, "2024-01-01T00:00:00"), env.col(tInt32, 2), env.col(tDate, "2024-01-01"))
	defer b.Release()
	s, ts, i, d := colRef(b, 0), colRef(b, 1), colRef(b, 2), colRef(b, 3)
	l := func(v any) Expr { return lit(t, v) }
	iv := mustCast(t, l("1 day"), tInterval)
	runCalls(t, env, b, []callCase{
		{name: "date_trunc", args: []Expr{s, ts}, err: "date_trunc: the unit must be a constant string such as 'day'"},
		{name: "extract", args: []Expr{s, ts}, err: "extract: the field must be a constant string such as 'year'"},
		{name: "extract", args: []Expr{l("dow"), iv}, err: `unit "dow" not supported for type interval`},
		{name: "extract", args: []Expr{l("year"), mustCast(t, l("10:00"), tTime)}, err: `unit "year" not supported for type time`},
		{name: "date_diff", args: []Expr{s, ts, ts}, err: "date_diff: the part must be a constant string such as 'day'"},
		{name: "round", args: []Expr{decLit(t, "1.25"), i}, err: "round: the number of digits must be a constant for type numeric(3,2)"},
		{name: "repeat", args: []Expr{l("ab"), l(1 << 30)}, err: "requested length too large"},
		{name: "lpad", args: []Expr{l("ab"), l(1 << 30)}, err: "requested length too large"},
		{name: "regexp_matches", args: []Expr{s, l("a"), l("z")}, err: `invalid regular expression option: "z"`},
		{name: "exp", args: []Expr{l(1000.0)}, err: "value out of range: overflow"},
		{name: "to_timestamp", args: []Expr{l(1e300)}, err: `timestamp out of range: "1e+300"`},
		{name: "+", args: []Expr{d, l(math.MaxInt32)}, err: "date out of range"},
		{name: "*", args: []Expr{iv, l(1e300)}, err: "interval out of range"},
	})
	for _, tc := range []struct {
		e    func() (Expr, error)
		want string
	}{
		{func() (Expr, error) { return NewCast(l(math.NaN()), decType(5, 2), false) }, "cannot convert NaN to numeric"},
		{func() (Expr, error) { return NewCast(l(math.Inf(1)), decType(5, 2), false) }, "cannot convert infinity to numeric"},
		{func() (Expr, error) { return NewCast(l("1e400"), tFloat64, false) }, `"1e400" is out of range for type double precision`},
		{func() (Expr, error) { return NewDecimalLiteral("123456789012345678901234567890123456789") }, "numeric constant 123456789012345678901234567890123456789 has more than 38 digits"},
		{func() (Expr, error) { _, err := TypeFromSQL("DECIMAL", []int{1, 2, 3}); return nil, err }, "type numeric takes at most two parameters"},
		{func() (Expr, error) { _, err := TypeFromSQL("VARCHAR", []int{1, 2}); return nil, err }, "type varchar takes at most one parameter"},
		{func() (Expr, error) { return NewCast(l(int64(3000000000)), tInt32, false) }, "integer out of range"},
	} {
		if _, err := tc.e(); err == nil || err.Error() != tc.want {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}
