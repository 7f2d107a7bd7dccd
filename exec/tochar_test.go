package exec

import "testing"

func TestToChar(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tTimestamp, "2024-01-05T15:04:05.123456", nil, "2023-12-31T00:30:00"))
	defer b.Release()
	ts := colRef(b, 0)
	l := func(v any) Expr { return lit(t, v) }
	runCalls(t, env, b, []callCase{
		{name: "to_char", args: []Expr{ts, l("YYYY-MM-DD HH24:MI:SS.US")}, want: "2024-01-05 15:04:05.123456 NULL 2023-12-31 00:30:00.000000"},
		{name: "to_char", args: []Expr{ts, l("HH12:MI AM, Dy DD Mon YY")}, want: "03:04 PM, Fri 05 Jan 24 NULL 12:30 AM, Sun 31 Dec 23"},
		{name: "to_char", args: []Expr{ts, l("Month|FMMonth|DAY|FMDD|Q|IW|DDD|MS")}, want: "January  |January|FRIDAY   |5|1|01|005|123 NULL December |December|SUNDAY   |31|4|52|365|000"},
		{name: "to_char", args: []Expr{ts, l(`"Year" YYYY`)}, want: "Year 2024 NULL Year 2023"},
		{name: "to_char", args: []Expr{mustCast(t, l("2024-02-29"), tDate), l("FMMM/FMDD/YYYY")}, want: "2/29/2024 2/29/2024 2/29/2024"},
	})
}
