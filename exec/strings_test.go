package exec

import "testing"

func TestStringFunctions(t *testing.T) {
	env := newTestEnv(t)
	defer env.mem.AssertSize(t, 0)
	b := env.batch(env.col(tString, "Hello", "héllo wörld", nil, "", "a,b,,c"), env.col(tInt32, 2, 3, 1, nil, -1))
	defer b.Release()
	s, n := colRef(b, 0), colRef(b, 1)
	l := func(v any) Expr { return lit(t, v) }
	runCalls(t, env, b, []callCase{
		{name: "lower", args: []Expr{s}, want: "hello héllo wörld NULL  a,b,,c"},
		{name: "upper", args: []Expr{s}, want: "HELLO HÉLLO WÖRLD NULL  A,B,,C"},
		{name: "length", args: []Expr{s}, want: "5 11 NULL 0 6"},
		{name: "octet_length", args: []Expr{s}, want: "5 13 NULL 0 6"},
		{name: "reverse", args: []Expr{s}, want: "olleH dlröw olléh NULL  c,,b,a"},
		{name: "substring", args: []Expr{s, n}, want: "ello llo wörld NULL NULL a,b,,c"},
		{name: "substring", args: []Expr{s, l(2), l(3)}, want: "ell éll NULL  ,b,"},
		{name: "substr", args: []Expr{s, l(0), l(2)}, want: "H h NULL  a"},
		{name: "substring", args: []Expr{s, l(-5), l(3)}, want: "  NULL  "},
		{name: "substring", args: []Expr{s, l(1), l(-1)}, err: "negative substring length not allowed"},
		{name: "left", args: []Expr{s, n}, want: "He hél NULL NULL a,b,,"},
		{name: "right", args: []Expr{s, n}, want: "lo rld NULL NULL ,b,,c"},
		{name: "strpos", args: []Expr{s, l("l")}, want: "3 3 NULL 0 0"},
		{name: "starts_with", args: []Expr{s, l("He")}, want: "true false NULL false false"},
		{name: "replace", args: []Expr{s, l("l"), l("L")}, want: "HeLLo héLLo wörLd NULL  a,b,,c"},
		{name: "split_part", args: []Expr{s, l(","), l(2)}, want: "  NULL  b"},
		{name: "split_part", args: []Expr{s, l(","), l(0)}, err: "field position must not be zero"},
		{name: "concat", args: []Expr{s, l("-"), n}, want: "Hello-2 héllo wörld-3 -1 - a,b,,c--1"},
		{name: "||", args: []Expr{s, n}, want: "Hello2 héllo wörld3 NULL NULL a,b,,c-1"},
		{name: "||", args: []Expr{n, n}, err: "operator does not exist: integer || integer; add an explicit cast"},
		{name: "trim", args: []Expr{l("  x  ")}, want: "x x x x x"},
		{name: "ltrim", args: []Expr{l("xxaxx"), l("x")}, want: "axx axx axx axx axx"},
		{name: "rtrim", args: []Expr{l("xxaxx"), l("x")}, want: "xxa xxa xxa xxa xxa"},
		{name: "lpad", args: []Expr{l("7"), l(3), l("0")}, want: "007 007 007 007 007"},
		{name: "rpad", args: []Expr{l("abcd"), l(2)}, want: "ab ab ab ab ab"},
		{name: "repeat", args: []Expr{l("ab"), n}, want: "abab ababab ab NULL "},
		{name: "regexp_matches", args: []Expr{s, l("^h.llo")}, want: "false true NULL false false"},
		{name: "regexp_matches", args: []Expr{s, l("^h.llo"), l("i")}, want: "true true NULL false false"},
		{name: "regexp_matches", args: []Expr{s, l("(")}, err: "invalid regular expression: missing closing ): `(`"},
		{name: "regexp_matches", args: []Expr{s, s}, want: "true true NULL true true"},
		{name: "~*", args: []Expr{l("HELLO"), s}, want: "true false NULL true false"},
		{name: "~", args: []Expr{s, l("^h.llo")}, want: "false true NULL false false"},
		{name: "~*", args: []Expr{s, l("^h.llo")}, want: "true true NULL false false"},
		{name: "!~", args: []Expr{s, l("^h.llo")}, want: "true false NULL true true"},
		{name: "!~*", args: []Expr{s, l("^h.llo")}, want: "false false NULL true true"},
		{name: "~", args: []Expr{n, l("x")}, err: "operator does not exist: integer ~ text; add an explicit cast"},
		{name: "concat_ws", args: []Expr{l("/"), s, n, l(nil)}, want: "Hello/2 héllo wörld/3 1  a,b,,c/-1"},
		{name: "concat", args: []Expr{l(true), l(nil), l(false)}, want: "tf tf tf tf tf"},
		{name: "||", args: []Expr{s, l(true)}, want: "Hellot héllo wörldt NULL t a,b,,ct"},
		{name: "concat_ws", args: []Expr{l(nil), s}, want: "NULL NULL NULL NULL NULL"},
		{name: "md5", args: []Expr{l("abc")}, want: "900150983cd24fb0d6963f7d28e17f72 900150983cd24fb0d6963f7d28e17f72 900150983cd24fb0d6963f7d28e17f72 900150983cd24fb0d6963f7d28e17f72 900150983cd24fb0d6963f7d28e17f72"},
		{name: "initcap", args: []Expr{s}, want: "Hello Héllo Wörld NULL  A,B,,C"},
		{name: "lower", args: []Expr{n}, err: "function lower(integer) does not exist; add explicit casts to the arguments"},
	})
}
