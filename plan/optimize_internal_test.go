package plan

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/parser"
)

// TestIcebergFilterKeepsSQLMeaning checks which predicates become file
// pruning filters: only those whose Iceberg meaning equals SQL's.
func TestIcebergFilterKeepsSQLMeaning(t *testing.T) {
	b := &binder{ctx: context.Background(), now: time.Now()}
	s := &Scan{Fields: []string{"id", "name", "d"}}
	s.All = []Column{
		b.newCol("id", "t", arrow.PrimitiveTypes.Int64, true),
		b.newCol("name", "t", arrow.BinaryTypes.String, true),
		b.newCol("d", "t", arrow.FixedWidthTypes.Date32, true),
	}
	sc := newScope(s.All, nil)
	for _, tc := range []struct {
		sql  string
		want string // "" means not pushed
	}{
		{"id = 5", "Equal(term=Reference(name='id'), literal=5)"},
		{"5 < id", "GreaterThan(term=Reference(name='id'), literal=5)"},
		{"d >= '2024-01-02'", "GreaterThanEqual(term=Reference(name='d'), literal=2024-01-02)"},
		{"id IN (1, 2)", "In(term=Reference(name='id')"},
		{"id BETWEEN 1 AND 3", "And("},
		{"name IS NULL", "IsNull(term=Reference(name='name'))"},
		{"id = 1 OR name = 'x'", "Or("},
		{"id <> 5", ""},
		{"id NOT IN (1, 2)", ""},
		{"NOT (id = 5)", ""},
		{"id + 1 = 5", ""},
		{"id = 1 OR id + 1 = 3", ""},
		{"id > 2.5", ""},
	} {
		e, err := parser.ParseExpr(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		x, err := b.bindExpr(e, &exprCtx{sc: sc, clause: "WHERE"})
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		got := toIceberg(s, x)
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: pushed %s, want not pushed", tc.sql, got)
		case tc.want != "" && (got == nil || !strings.HasPrefix(got.String(), tc.want)):
			t.Errorf("%s: got %v, want %s…", tc.sql, got, tc.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	cands := []string{"status", "amount", "region"}
	for in, want := range map[string]string{"stauts": "status", "STATUS": "status", "amont": "amount", "xyz": "", "regoin": "region"} {
		if got := suggest(in, cands); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConstantFolding(t *testing.T) {
	b := &binder{ctx: context.Background(), now: time.Now()}
	for sql, want := range map[string]string{
		"1 + 2 * 3":                             "7",
		"lower('ABC')":                          "'abc'",
		"CASE WHEN 1 = 1 THEN 'a' ELSE 'b' END": "'a'",
	} {
		e, _ := parser.ParseExpr(sql)
		x, err := b.bindExpr(e, &exprCtx{sc: newScope(nil, nil)})
		if err != nil {
			t.Fatal(err)
		}
		c, ok := x.(*Const)
		if !ok || c.String() != want {
			t.Errorf("%s folded to %v, want %s", sql, x, want)
		}
	}
	// a failing call is left for run time, where CASE may skip it
	e, _ := parser.ParseExpr("1 / 0")
	x, err := b.bindExpr(e, &exprCtx{sc: newScope(nil, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := x.(*Const); ok {
		t.Errorf("1 / 0 must not fold")
	}
}
