package parser_test

import (
	"testing"

	"github.com/skadedb/skade/parser"
)

func mustParse(t *testing.T, sql string) parser.Stmt {
	t.Helper()
	s, err := parser.ParseOne(sql)
	if err != nil {
		t.Fatalf("ParseOne(%q): %v", sql, err)
	}
	return s
}

// guideMerge is the statement of the merge-into guide.
const guideMerge = `MERGE INTO events USING incoming ON events.id = incoming.id
    WHEN MATCHED THEN UPDATE SET status = incoming.status, seen_at = incoming.seen_at
    WHEN NOT MATCHED THEN INSERT (id, status, seen_at)
                        VALUES (incoming.id, incoming.status, incoming.seen_at)`

func TestMergeShape(t *testing.T) {
	m, ok := mustParse(t, guideMerge).(*parser.Merge)
	if !ok {
		t.Fatal("not a *Merge")
	}
	if m.Target.String() != "events" || !m.TargetAlias.Empty() {
		t.Errorf("target = %s alias %q", m.Target, m.TargetAlias.Name)
	}
	if src, ok := m.Source.(*parser.TableName); !ok || src.Name.String() != "incoming" {
		t.Errorf("source = %#v", m.Source)
	}
	if on, ok := m.On.(*parser.BinaryExpr); !ok || on.Op != parser.OpEq {
		t.Errorf("on = %v", m.On)
	}
	if len(m.Clauses) != 2 {
		t.Fatalf("%d clauses", len(m.Clauses))
	}
	c0, c1 := m.Clauses[0], m.Clauses[1]
	if c0.Kind != parser.Matched || c0.Cond != nil {
		t.Errorf("clause 0 = %v", c0)
	}
	if u, ok := c0.Action.(*parser.MergeUpdate); !ok || len(u.Set) != 2 || u.Set[1].Column.String() != "seen_at" {
		t.Errorf("clause 0 action = %v", c0.Action)
	}
	if c1.Kind != parser.NotMatchedByTarget {
		t.Errorf("clause 1 kind = %v", c1.Kind)
	}
	if ins, ok := c1.Action.(*parser.MergeInsert); !ok || len(ins.Columns) != 3 || len(ins.Values) != 3 || ins.Star {
		t.Errorf("clause 1 action = %v", c1.Action)
	}
	if c1.Position().Line != 3 || c1.Position().Column != 5 {
		t.Errorf("clause 1 at %+v, want line 3 column 5", c1.Position())
	}
}

func TestMergeClauseKinds(t *testing.T) {
	tests := []struct {
		clause string
		kind   parser.MatchKind
		action string
		cond   bool
	}{
		{"WHEN MATCHED THEN UPDATE SET a = 1", parser.Matched, "*parser.MergeUpdate", false},
		{"WHEN MATCHED AND s.x THEN DELETE", parser.Matched, "*parser.MergeDelete", true},
		{"WHEN NOT MATCHED THEN INSERT VALUES (1)", parser.NotMatchedByTarget, "*parser.MergeInsert", false},
		{"WHEN NOT MATCHED BY TARGET AND s.y THEN INSERT *", parser.NotMatchedByTarget, "*parser.MergeInsert", true},
		{"WHEN NOT MATCHED BY SOURCE THEN DELETE", parser.NotMatchedBySource, "*parser.MergeDelete", false},
		{"WHEN NOT MATCHED BY SOURCE THEN UPDATE SET a = 0", parser.NotMatchedBySource, "*parser.MergeUpdate", false},
		{"WHEN NOT MATCHED BY SOURCE THEN INSERT (a) VALUES (1)", parser.NotMatchedBySource, "*parser.MergeInsert", false},
		{"WHEN MATCHED THEN DO NOTHING", parser.Matched, "*parser.MergeDoNothing", false},
	}
	for _, tt := range tests {
		m := mustParse(t, "MERGE INTO t USING s ON t.id = s.id "+tt.clause).(*parser.Merge)
		c := m.Clauses[0]
		if c.Kind != tt.kind || typeName(c.Action) != tt.action || (c.Cond != nil) != tt.cond {
			t.Errorf("%s: kind %v action %s cond %v", tt.clause, c.Kind, typeName(c.Action), c.Cond)
		}
	}
}

func typeName(v any) string {
	switch v.(type) {
	case *parser.MergeUpdate:
		return "*parser.MergeUpdate"
	case *parser.MergeDelete:
		return "*parser.MergeDelete"
	case *parser.MergeInsert:
		return "*parser.MergeInsert"
	case *parser.MergeDoNothing:
		return "*parser.MergeDoNothing"
	}
	return "?"
}

func TestNamesKeepTheirParts(t *testing.T) {
	q := mustParse(t, `SELECT 1 FROM skade.main.events, "Skade"."Main"."Ev ents"`).(*parser.Query)
	sel := q.Body.(*parser.Select)
	n := sel.From[0].(*parser.TableName).Name
	if len(n) != 3 || n[0].Name != "skade" || n[2].Name != "events" || n[2].Quoted {
		t.Errorf("name = %#v", n)
	}
	n = sel.From[1].(*parser.TableName).Name
	if len(n) != 3 || n[2].Name != "Ev ents" || !n[2].Quoted {
		t.Errorf("quoted name = %#v", n)
	}
}

func TestMetadataTable(t *testing.T) {
	tests := []struct {
		sql, base, suffix string
		ok                bool
	}{
		{`SELECT * FROM "events$snapshots"`, `"events"`, "snapshots", true},
		{`SELECT * FROM skade.main."events$files"`, `skade.main."events"`, "files", true},
		{`SELECT * FROM events$history`, "events", "history", true},
		{`SELECT * FROM events`, "events", "", false},
		{`SELECT * FROM "events$"`, `"events$"`, "", false},
	}
	for _, tt := range tests {
		q := mustParse(t, tt.sql).(*parser.Query)
		n := q.Body.(*parser.Select).From[0].(*parser.TableName).Name
		base, suffix, ok := n.MetadataTable()
		if base.String() != tt.base || suffix != tt.suffix || ok != tt.ok {
			t.Errorf("%s: MetadataTable() = %s, %q, %v", tt.sql, base, suffix, ok)
		}
	}
}

func TestTimeTravelSpellingsAgree(t *testing.T) {
	canon := mustParse(t, "SELECT * FROM t FOR VERSION AS OF 5").(*parser.Query)
	for _, sql := range []string{"SELECT * FROM t VERSION AS OF 5", "SELECT * FROM t AT (VERSION => 5)"} {
		if d := astDiff(canon, mustParse(t, sql)); d != "" {
			t.Errorf("%s differs from FOR VERSION AS OF at %s", sql, d)
		}
	}
	ts := mustParse(t, "SELECT * FROM t AT (TIMESTAMP => TIMESTAMP '2024-01-01')").(*parser.Query)
	a := ts.Body.(*parser.Select).From[0].(*parser.TableName).AsOf
	if a == nil || a.Kind != parser.AsOfTimestamp {
		t.Fatalf("AsOf = %v", a)
	}
	if lit, ok := a.Value.(*parser.TypedLiteral); !ok || lit.Type.Name != "TIMESTAMP" || lit.Value != "2024-01-01" {
		t.Errorf("value = %v", a.Value)
	}
}

func TestTableFunctionNamedArgs(t *testing.T) {
	q := mustParse(t, "SELECT * FROM read_csv('f.csv', header = true, delim => ';')").(*parser.Query)
	f := q.Body.(*parser.Select).From[0].(*parser.TableFunc)
	if len(f.Args) != 3 {
		t.Fatalf("args = %v", f.Args)
	}
	for i, name := range []string{"", "header", "delim"} {
		na, ok := f.Args[i].(*parser.NamedArg)
		if (name == "") == ok || ok && na.Name.Name != name {
			t.Errorf("arg %d = %v", i, f.Args[i])
		}
	}
}

func TestParams(t *testing.T) {
	e, err := parser.ParseExpr("? + $7 * ?")
	if err != nil {
		t.Fatal(err)
	}
	var got []parser.Param
	parser.Inspect(e, func(n parser.Node) bool {
		if p, ok := n.(*parser.Param); ok {
			got = append(got, *p)
		}
		return true
	})
	if len(got) != 3 || got[0].Index != 1 || !got[0].Positional || got[1].Index != 7 || got[1].Positional || got[2].Index != 2 {
		t.Errorf("params = %+v", got)
	}
}

func TestParseExpr(t *testing.T) {
	tests := []struct{ in, out string }{
		{"a+b*c", "a + b * c"},
		{"(a+b)*c", "(a + b) * c"},
		{"NOT a = b AND c", "NOT a = b AND c"},
		{"x::int IS NOT NULL", "CAST(x AS INTEGER) IS NOT NULL"},
		{"-2 ^ 2", "-2 ^ 2"},
	}
	for _, tt := range tests {
		e, err := parser.ParseExpr(tt.in)
		if err != nil || e.String() != tt.out {
			t.Errorf("ParseExpr(%q) = %v, %v; want %s", tt.in, e, err, tt.out)
		}
	}
	if _, err := parser.ParseExpr("a b"); err == nil {
		t.Error("ParseExpr accepted trailing input")
	}
}

func TestPrecedence(t *testing.T) {
	// Each input is parsed and printed fully parenthesised by walking it.
	tests := []struct{ in, tree string }{
		{"a OR b AND c", "(a OR (b AND c))"},
		{"NOT a AND b", "((NOT a) AND b)"},
		{"NOT a = b", "(NOT (a = b))"},
		{"a = b IS NULL", "((a = b) IS NULL)"},
		{"a < b + c * d", "(a < (b + (c * d)))"},
		{"a || b = c", "((a || b) = c)"},
		{"a + b || c", "((a + b) || c)"},
		{"-a ^ b", "((-a) ^ b)"},
		{"a - b - c", "((a - b) - c)"},
		{"a LIKE b || c", "(a LIKE (b || c))"},
		{"a BETWEEN b AND c AND d", "((a BETWEEN b AND c) AND d)"},
		{"a = b AND c IN (1)", "((a = b) AND (c IN 1))"},
		{"a IS NULL = b", "((a IS NULL) = b)"},
	}
	for _, tt := range tests {
		e, err := parser.ParseExpr(tt.in)
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if got := tree(e); got != tt.tree {
			t.Errorf("%s: tree %s, want %s", tt.in, got, tt.tree)
		}
	}
}

func tree(e parser.Expr) string {
	switch x := e.(type) {
	case *parser.BinaryExpr:
		return "(" + tree(x.L) + " " + x.Op.String() + " " + tree(x.R) + ")"
	case *parser.UnaryExpr:
		sep := ""
		if x.Op == parser.OpNot {
			sep = " "
		}
		return "(" + x.Op.String() + sep + tree(x.X) + ")"
	case *parser.IsExpr:
		return "(" + tree(x.X) + " IS NULL)"
	case *parser.LikeExpr:
		return "(" + tree(x.X) + " LIKE " + tree(x.Pattern) + ")"
	case *parser.BetweenExpr:
		return "(" + tree(x.X) + " BETWEEN " + tree(x.Lo) + " AND " + tree(x.Hi) + ")"
	case *parser.InExpr:
		return "(" + tree(x.X) + " IN " + tree(x.List[0]) + ")"
	}
	return e.String()
}

func TestPositions(t *testing.T) {
	sql := "SELECT a,\n  b + 1 AS c\nFROM t\nWHERE é = 'x'"
	stmt := mustParse(t, sql)
	// Every node's position must point at text that belongs to it: check the
	// offsets are in range and consistent with line/column.
	parser.Inspect(stmt, func(n parser.Node) bool {
		p := n.Position()
		if p.Line < 1 || p.Column < 1 || p.Offset < 0 || p.Offset > len(sql) {
			t.Errorf("%T at %+v", n, p)
		}
		return true
	})
	sel := stmt.(*parser.Query).Body.(*parser.Select)
	b := sel.Items[1].Expr.(*parser.BinaryExpr)
	if b.Position() != (parser.Pos{Line: 2, Column: 3, Offset: 12}) {
		t.Errorf("b + 1 at %+v", b.Position())
	}
	where := sel.Where.(*parser.BinaryExpr)
	if lit := where.R.(*parser.Literal); lit.Position() != (parser.Pos{Line: 4, Column: 11, Offset: 41}) {
		t.Errorf("'x' at %+v", lit.Position())
	}
}

func TestInspectVisitsAll(t *testing.T) {
	stmt := mustParse(t, "MERGE INTO t USING (SELECT id, v FROM s WHERE v > 0) AS s ON t.id = s.id "+
		"WHEN MATCHED AND s.v <> t.v THEN UPDATE SET v = s.v + 1 WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v) RETURNING merge_action()")
	count := map[string]int{}
	parser.Inspect(stmt, func(n parser.Node) bool {
		switch x := n.(type) {
		case *parser.ColumnRef:
			count["col"]++
		case *parser.FuncCall:
			count[x.Name.String()]++
		case *parser.Literal:
			count["lit"]++
		}
		return true
	})
	if count["col"] != 10 || count["merge_action"] != 1 || count["lit"] != 2 {
		t.Errorf("counts = %v", count)
	}
	// Returning false prunes.
	n := 0
	parser.Inspect(stmt, func(parser.Node) bool { n++; return false })
	if n != 1 {
		t.Errorf("pruned walk visited %d nodes", n)
	}
}
