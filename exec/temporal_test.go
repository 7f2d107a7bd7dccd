package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestTemporal(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(
		env.col(tTimestamp, "2024-01-31T10:30:45.123456", "2023-12-31T23:59:59", nil, "1969-07-20T20:17:40"),
		env.col(tDate, "2024-01-31", "2024-02-29", "2024-03-01", nil),
		env.col(tInterval, nil, nil, nil, nil),
	)
	defer b.Release()
	ts, d := colRef(b, 0), colRef(b, 1)
	l := func(v any) Expr { return lit(t, v) }
	iv := func(s string) Expr {
		e, err := NewCast(l(s), tInterval, false)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	runCalls(t, env, b, []callCase{
		{name: "+", args: []Expr{ts, iv("1 month")}, want: "2024-02-29 10:30:45.123456 2024-01-31 23:59:59 NULL 1969-08-20 20:17:40"},
		{name: "-", args: []Expr{ts, iv("1 month")}, want: "2023-12-31 10:30:45.123456 2023-11-30 23:59:59 NULL 1969-06-20 20:17:40"},
		{name: "+", args: []Expr{ts, l("1 day 2 hours")}, want: "2024-02-01 12:30:45.123456 2024-01-02 01:59:59 NULL 1969-07-21 22:17:40"},
		{name: "+", args: []Expr{iv("1 year"), d}, want: "2025-01-31 00:00:00 2025-02-28 00:00:00 2025-03-01 00:00:00 NULL"},
		{name: "+", args: []Expr{d, l(1)}, want: "2024-02-01 2024-03-01 2024-03-02 NULL"},
		{name: "-", args: []Expr{d, l(31)}, want: "2023-12-31 2024-01-29 2024-01-30 NULL"},
		{name: "-", args: []Expr{d, l("2024-01-01")}, err: `invalid input syntax for type interval: "2024-01-01"`},
		{name: "-", args: []Expr{d, mustCast(t, l("2024-01-01"), tDate)}, want: "30 59 60 NULL"},
		{name: "-", args: []Expr{ts, mustCast(t, l("2024-01-01"), tTimestamp)}, want: "30 days 10:30:45.123456 -00:00:01 NULL -19887 days -03:42:20"},
		{name: "-", args: []Expr{iv("1 day"), iv("2 hours")}, want: "1 day -02:00:00 1 day -02:00:00 1 day -02:00:00 1 day -02:00:00"},
		{name: "negate", args: []Expr{iv("1 mon 2 days")}, want: "-1 mons -2 days -1 mons -2 days -1 mons -2 days -1 mons -2 days"},
		{name: "date_trunc", args: []Expr{l("month"), ts}, want: "2024-01-01 00:00:00 2023-12-01 00:00:00 NULL 1969-07-01 00:00:00"},
		{name: "date_trunc", args: []Expr{l("hour"), ts}, want: "2024-01-31 10:00:00 2023-12-31 23:00:00 NULL 1969-07-20 20:00:00"},
		{name: "date_trunc", args: []Expr{l("week"), ts}, want: "2024-01-29 00:00:00 2023-12-25 00:00:00 NULL 1969-07-14 00:00:00"},
		{name: "date_trunc", args: []Expr{l("quarter"), d}, want: "2024-01-01 00:00:00 2024-01-01 00:00:00 2024-01-01 00:00:00 NULL"},
		{name: "date_trunc", args: []Expr{l("year"), ts}, want: "2024-01-01 00:00:00 2023-01-01 00:00:00 NULL 1969-01-01 00:00:00"},
		{name: "date_trunc", args: []Expr{l("fortnight"), ts}, err: `unit "fortnight" not recognized for type timestamp`},
		{name: "extract", args: []Expr{l("year"), ts}, want: "2024 2023 NULL 1969"},
		{name: "extract", args: []Expr{l("month"), d}, want: "1 2 3 NULL"},
		{name: "extract", args: []Expr{l("dow"), d}, want: "3 4 5 NULL"},
		{name: "extract", args: []Expr{l("isodow"), ts}, want: "3 7 NULL 7"},
		{name: "extract", args: []Expr{l("doy"), d}, want: "31 60 61 NULL"},
		{name: "extract", args: []Expr{l("week"), ts}, want: "5 52 NULL 29"},
		{name: "extract", args: []Expr{l("quarter"), ts}, want: "1 4 NULL 3"},
		{name: "extract", args: []Expr{l("second"), ts}, want: "45.123456 59 NULL 40"},
		{name: "extract", args: []Expr{l("epoch"), ts}, want: "1706697045.123456 1704067199 NULL -14182940"},
		{name: "date_part", args: []Expr{l("hour"), ts}, want: "10 23 NULL 20"},
		{name: "extract", args: []Expr{l("century"), ts}, want: "21 21 NULL 20"},
		{name: "extract", args: []Expr{l("fortnight"), ts}, err: `unit "fortnight" not supported for type timestamp`},
		{name: "extract", args: []Expr{l("day"), iv("3 days 4 hours")}, want: "3 3 3 3"},
		{name: "strftime", args: []Expr{ts, l("%Y/%m/%d %H:%M:%S.%f %a %b %j")}, want: "2024/01/31 10:30:45.123456 Wed Jan 031 2023/12/31 23:59:59.000000 Sun Dec 365 NULL 1969/07/20 20:17:40.000000 Sun Jul 201"},
		{name: "epoch", args: []Expr{d}, want: "1706659200 1709164800 1709251200 NULL"},
		{name: "to_timestamp", args: []Expr{l(1.5)}, want: "1970-01-01 00:00:01.5+00 1970-01-01 00:00:01.5+00 1970-01-01 00:00:01.5+00 1970-01-01 00:00:01.5+00"},
		{name: "make_date", args: []Expr{l(2024), l(2), l(29)}, want: "2024-02-29 2024-02-29 2024-02-29 2024-02-29"},
		{name: "make_date", args: []Expr{l(2023), l(2), l(29)}, err: "date field value out of range: 2023-02-29"},
		{name: "now", want: "2024-03-15 10:30:45.123456+00 2024-03-15 10:30:45.123456+00 2024-03-15 10:30:45.123456+00 2024-03-15 10:30:45.123456+00"},
		{name: "current_date", want: "2024-03-15 2024-03-15 2024-03-15 2024-03-15"},
		{name: "today", want: "2024-03-15 2024-03-15 2024-03-15 2024-03-15"},
		{name: "localtimestamp", want: "2024-03-15 10:30:45.123456 2024-03-15 10:30:45.123456 2024-03-15 10:30:45.123456 2024-03-15 10:30:45.123456"},
		{name: "current_time", want: "10:30:45.123456 10:30:45.123456 10:30:45.123456 10:30:45.123456"},
		{name: "*", args: []Expr{iv("1 mon 1 day"), l(1.5)}, want: "1 mon 16 days 12:00:00 1 mon 16 days 12:00:00 1 mon 16 days 12:00:00 1 mon 16 days 12:00:00"},
		{name: "*", args: []Expr{l(2), iv("1 hour")}, want: "02:00:00 02:00:00 02:00:00 02:00:00"},
		{name: "/", args: []Expr{iv("1 day"), l(4)}, want: "06:00:00 06:00:00 06:00:00 06:00:00"},
		{name: "/", args: []Expr{iv("1 day"), l(0)}, err: "division by zero"},
		{name: "+", args: []Expr{mustCast(t, l("23:30:00"), tTime), iv("1 hour")}, want: "00:30:00 00:30:00 00:30:00 00:30:00"},
		{name: "+", args: []Expr{d, mustCast(t, l("12:00:00"), tTime)}, want: "2024-01-31 12:00:00 2024-02-29 12:00:00 2024-03-01 12:00:00 NULL"},
		{name: "make_timestamp", args: []Expr{l(2024), l(2), l(29), l(13), l(5), l(6.5)}, want: "2024-02-29 13:05:06.5 2024-02-29 13:05:06.5 2024-02-29 13:05:06.5 2024-02-29 13:05:06.5"},
		{name: "make_timestamp", args: []Expr{l(2024), l(2), l(29), l(24), l(5), l(6.5)}, err: "time field value out of range: 24:05:6.5"},
		{name: "date_diff", args: []Expr{l("day"), d, ts}, want: "0 -60 NULL NULL"},
		{name: "date_diff", args: []Expr{l("month"), mustCast(t, l("2023-12-31"), tDate), d}, want: "1 2 3 NULL"},
		{name: "date_diff", args: []Expr{l("year"), ts, d}, want: "0 1 NULL NULL"},
		{name: "date_diff", args: []Expr{l("hour"), ts, d}, want: "-10 1417 NULL NULL"},
		{name: "date_diff", args: []Expr{l("eon"), ts, d}, err: `unit "eon" not recognized for date_diff`},
		{name: "age", args: []Expr{mustCast(t, l("2024-03-01"), tDate), ts}, want: "1 mon 13:29:14.876544 2 mons 00:00:01 NULL 54 years 7 mons 11 days 03:42:20"},
		{name: "age", args: []Expr{d}, want: "1 mon 15 days 15 days 14 days NULL"},
		{name: "age", args: []Expr{ts, mustCast(t, l("2024-03-01"), tDate)}, want: "-1 mons -13:29:14.876544 -2 mons -00:00:01 NULL -54 years -7 mons -11 days -03:42:20"},
		{name: "+", args: []Expr{d, d}, err: "operator does not exist: date + date; add an explicit cast"},
	})
}

func mustCast(t *testing.T, e Expr, to arrow.DataType) Expr {
	t.Helper()
	c, err := NewCast(e, to, false)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCalendar(t *testing.T) {
	for _, days := range []int64{-719468, -1, 0, 1, 59, 60, 19782, 2932896} {
		y, m, d := civilFromDays(days)
		if got := daysFromCivil(y, m, d); got != days {
			t.Errorf("round trip of %d: %d-%d-%d -> %d", days, y, m, d, got)
		}
	}
}
