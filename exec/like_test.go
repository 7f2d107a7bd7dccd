package exec

import "testing"

func TestLikePatterns(t *testing.T) {
	tests := []struct {
		s, p string
		want bool
	}{
		{"abc", "abc", true},
		{"abc", "ab", false},
		{"abc", "a%", true},
		{"abc", "%c", true},
		{"abc", "%b%", true},
		{"abc", "%", true},
		{"", "%", true},
		{"", "_", false},
		{"abc", "a_c", true},
		{"abc", "a__c", false},
		{"abc", "_%_", true},
		{"aXbXc", "a%b%c", true},
		{"abcbd", "a%b_", true},
		{"aaa", "a%a%a%a", false},
		{"50%", `50\%`, true},
		{"500", `50\%`, false},
		{"a_b", `a\_b`, true},
		{"axb", `a\_b`, false},
		{`a\b`, `a\\b`, true},
		{"héllo", "h_llo", true},
		{"héllo", "%é%", true},
		{"日本語", "__語", true},
		{"日本語", "_語", false},
		{"mississippi", "%iss%ppi", true},
		{"mississippi", "m%ss%ss%", true},
		{"héllo", "%é_l%", true},
		{"héllo", "%é_é%", false},
		{"aXbXbc", "%X_c", true},
		{"abcbxd", "%b_d", true},
		{"abcabd", "%b_d", false},
		{"abcab", "%b_d", false},
	}
	for _, tc := range tests {
		p, err := compileLike(tc.p, false, '\\')
		if err != nil {
			t.Fatal(err)
		}
		if got := p.match([]byte(tc.s)); got != tc.want {
			t.Errorf("%q LIKE %q = %v, want %v", tc.s, tc.p, got, tc.want)
		}
	}
	if _, err := compileLike(`abc\`, false, '\\'); err == nil || err.Error() != "LIKE pattern must not end with escape character" {
		t.Errorf("got %v", err)
	}
}

func TestLikeKernel(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tString, "Hello", "world", nil, "HELLO there", ""), env.col(tString, "H%", "%o%", "%", nil, ""))
	defer b.Release()
	s, p := colRef(b, 0), colRef(b, 1)
	runCalls(t, env, b, []callCase{
		{name: "like", args: []Expr{s, lit(t, "H%")}, want: "true false NULL true false"},
		{name: "like", args: []Expr{s, lit(t, "%llo%")}, want: "true false NULL false false"},
		{name: "ilike", args: []Expr{s, lit(t, "%llo%")}, want: "true false NULL true false"},
		{name: "not_like", args: []Expr{s, lit(t, "H%")}, want: "false true NULL false true"},
		{name: "not_ilike", args: []Expr{s, lit(t, "h%")}, want: "false true NULL false true"},
		{name: "like", args: []Expr{s, p}, want: "true true NULL NULL true"},
		{name: "like", args: []Expr{s, lit(t, nil)}, want: "NULL NULL NULL NULL NULL"},
		{name: "like", args: []Expr{s, lit(t, `x\`)}, err: "LIKE pattern must not end with escape character"},
		{name: "like", args: []Expr{lit(t, "a%c"), lit(t, "a#%c"), lit(t, "#")}, want: "true true true true true"},
		{name: "like", args: []Expr{lit(t, "abc"), lit(t, "a#%c"), lit(t, "#")}, want: "false false false false false"},
		{name: "like", args: []Expr{lit(t, `a\c`), lit(t, `a\c`), lit(t, "")}, want: "true true true true true"},
		{name: "like", args: []Expr{s, lit(t, "x"), lit(t, "ab")}, err: "invalid escape string; an escape string must be empty or one character"},
		{name: "like", args: []Expr{s, lit(t, 1)}, err: "operator does not exist: text LIKE integer; add an explicit cast"},
	})
}
