package parser_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/skadedb/skade/parser"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   []string
	}{
		{"empty", "", nil},
		{"only whitespace and comments", "  -- hi\n /* there */ ;; ", nil},
		{"two statements", "SELECT 1; SELECT 2;", []string{"SELECT 1", "SELECT 2"}},
		{"unterminated last", "SELECT 1;\nSELECT 2", []string{"SELECT 1", "SELECT 2"}},
		{"semicolon in string", "SELECT 'a;b'; SELECT 2", []string{"SELECT 'a;b'", "SELECT 2"}},
		{"semicolon in doubled quote", "SELECT 'it''s;'; SELECT 2", []string{"SELECT 'it''s;'", "SELECT 2"}},
		{"semicolon in quoted identifier", `SELECT "a;b" FROM t; SELECT 2`, []string{`SELECT "a;b" FROM t`, "SELECT 2"}},
		{"semicolon in line comment", "SELECT 1 -- a;b\n; SELECT 2", []string{"SELECT 1 -- a;b", "SELECT 2"}},
		{"leading comments dropped", "-- one\n/* two /* nested */ */ SELECT 1; /* x */", []string{"SELECT 1"}},
		{"semicolon in block comment", "SELECT 1 /* a; /* b; */ c; */; SELECT 2", []string{"SELECT 1 /* a; /* b; */ c; */", "SELECT 2"}},
		{"escape string", `SELECT E'a\';b'; SELECT 2`, []string{`SELECT E'a\';b'`, "SELECT 2"}},
		{"word ending in e", `SELECT name'x'; SELECT 2`, []string{`SELECT name'x'`, "SELECT 2"}},
		{"unterminated string", "SELECT 'a; SELECT 2", []string{"SELECT 'a; SELECT 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range parser.Split(tt.script) {
				got = append(got, s.Text)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Split(%q) = %q, want %q", tt.script, got, tt.want)
			}
		})
	}
}

func TestSplitPositions(t *testing.T) {
	segs := parser.Split("SELECT 1;\n\n  -- c\n  SELECT 'é'; SELECT 3")
	want := []parser.Pos{{Line: 1, Column: 1, Offset: 0}, {Line: 4, Column: 3, Offset: 20}, {Line: 4, Column: 15, Offset: 33}}
	if len(segs) != 3 {
		t.Fatalf("got %d segments", len(segs))
	}
	for i, s := range segs {
		if s.Pos != want[i] {
			t.Errorf("segment %d (%q) at %+v, want %+v", i, s.Text, s.Pos, want[i])
		}
	}
	if !segs[0].Terminated || !segs[1].Terminated || segs[2].Terminated {
		t.Errorf("Terminated = %v %v %v, want true true false", segs[0].Terminated, segs[1].Terminated, segs[2].Terminated)
	}
}

func TestIncomplete(t *testing.T) {
	tests := []struct {
		sql  string
		want bool
	}{
		{"", false},
		{"   ", false},
		{"-- just a comment", false},
		{"SELECT 1;", false},
		{"SELECT 1;  -- done", false},
		{"SELECT 1", true},
		{"SELECT 1;\nSELECT", true},
		{"SELECT 'abc", true},
		{"SELECT 'abc;'", true},
		{"SELECT 'abc';", false},
		{`SELECT "col`, true},
		{"SELECT 1 /* comment", true},
		{"SELECT 1 /* a /* b */ still open", true},
		{"SELECT 1 /* a /* b */ closed */;", false},
		{`SELECT E'\'';`, false},
		{`SELECT E'\';`, true},
	}
	for _, tt := range tests {
		if got := parser.Incomplete(tt.sql); got != tt.want {
			t.Errorf("Incomplete(%q) = %v, want %v", tt.sql, got, tt.want)
		}
	}
}

// TestSplitAgreesWithParse checks that every corpus file splits into as many
// statements as Parse finds.
func TestSplitAgreesWithParse(t *testing.T) {
	for path, segs := range corpusFiles(t) {
		var script string
		for _, s := range segs {
			script += s.Text + "\n;\n"
		}
		stmts, err := parser.Parse(script)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(stmts) != len(segs) {
			t.Errorf("%s: Parse found %d statements, Split %d", path, len(stmts), len(segs))
		}
	}
}

// A script ending inside a block comment keeps the comment as its last
// segment, which does not parse: it was dropped, and the script passed.
func TestSplitUnterminatedComment(t *testing.T) {
	for _, script := range []string{"SELECT 1; /* open", "/* open", "SELECT 1;\n/* a /* nested */ still open\n"} {
		segs := parser.Split(script)
		if len(segs) == 0 {
			t.Fatalf("%q: no segments", script)
		}
		last := segs[len(segs)-1]
		if !strings.HasPrefix(last.Text, "/*") {
			t.Fatalf("%q: last segment %q, want the open comment", script, last.Text)
		}
		if _, err := parser.Parse(last.Text); err == nil || !strings.Contains(err.Error(), "unterminated /* comment") {
			t.Fatalf("%q: parsing the open comment gave %v", script, err)
		}
	}
	if segs := parser.Split("SELECT 1; /* closed */"); len(segs) != 1 {
		t.Fatalf("a closed trailing comment made %d segments", len(segs))
	}
}
