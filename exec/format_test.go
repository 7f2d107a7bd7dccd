package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestTextFormatter(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	a := env.col(tTimestampTZ, "2024-01-02T03:04:05.5Z", nil)
	defer a.Release()
	f, err := NewTextFormatter(a)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.String(0); got != "2024-01-02 03:04:05.5+00" {
		t.Errorf("got %q", got)
	}
	if got := f.String(1); got != "NULL" || !f.IsNull(1) || len(f.Append(nil, 1)) != 0 {
		t.Errorf("NULL row: %q", got)
	}
	if got := string(f.Append([]byte("t="), 0)); got != "t=2024-01-02 03:04:05.5+00" {
		t.Errorf("got %q", got)
	}
}

func TestLiteralSQL(t *testing.T) {
	l := func(v any) *Literal { return lit(t, v) }
	cast := func(s string, dt arrow.DataType) *Literal { return mustCast(t, l(s), dt).(*Literal) }
	for _, tc := range []struct {
		l    *Literal
		want string
	}{
		{l(42), "42"},
		{l(int64(1) << 40), "1099511627776"},
		{l(true), "true"},
		{l("it's"), "'it''s'"},
		{l(nil), "NULL"},
		{NewNullLiteral(tInt32), "NULL::integer"},
		{l(1.5), "'1.5'::double precision"},
		{decLit(t, "12.50"), "12.50"},
		{cast("2024-01-02", tDate), "'2024-01-02'::date"},
		{cast("1 day", tInterval), "'1 day'::interval"},
		{cast("2024-01-02 03:04:05", tTimestampTZ), "'2024-01-02 03:04:05+00'::timestamp with time zone"},
		{l(int16(7)), "'7'::smallint"},
	} {
		if got := LiteralSQL(tc.l); got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
}
