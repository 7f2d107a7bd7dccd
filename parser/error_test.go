package parser_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/skadedb/skade/parser"
)

// TestErrors asserts the full message of every error form a user can
// trigger: lexical errors, "expected" lists, typo suggestions, MERGE
// refusals and the semantic checks the parser makes.
func TestErrors(t *testing.T) {
	tests := []struct {
		name, sql, want string
	}{
		{"typo swallowed as alias", "SELECT a\nFROM t\nWEHRE x = 1",
			`syntax error at line 3, column 1 near "WEHRE": expected one of ",", WHERE, GROUP BY, HAVING, UNION, ORDER BY, LIMIT, ";"; did you mean WHERE?`},
		{"typo of FROM", "SELECT a FORM t",
			`syntax error at line 1, column 10 near "FORM": expected one of ",", FROM, WHERE, GROUP BY, HAVING, UNION, ORDER BY, LIMIT, ";"; did you mean FROM?`},
		{"typo of statement", "SELECT a FROM t;;\nSELEC 1",
			`syntax error at line 2, column 1 near "SELEC": expected one of SELECT, WITH, VALUES, INSERT, UPDATE, DELETE, MERGE, CREATE, DROP, ALTER, TRUNCATE, COPY, EXPLAIN, DESCRIBE, SHOW, SET, BEGIN, COMMIT, ROLLBACK, CALL; did you mean SELECT?`},
		{"unknown statement", "FOO BAR",
			`syntax error at line 1, column 1 near "FOO": expected one of SELECT, WITH, VALUES, INSERT, UPDATE, DELETE, MERGE, CREATE, DROP, ALTER, TRUNCATE, COPY, EXPLAIN, DESCRIBE, SHOW, SET, BEGIN, COMMIT, ROLLBACK, CALL`},
		{"missing expression at end", "SELECT a FROM t WHERE",
			`syntax error at line 1, column 22 at end of input: expected expression`},
		{"missing operand", "SELECT a FROM t WHERE a = ",
			`syntax error at line 1, column 27 at end of input: expected expression`},
		{"unclosed paren", "SELECT (1 + 2",
			`syntax error at line 1, column 14 at end of input: expected ")"`},
		{"unterminated string", "SELECT 1,\n  'abc",
			`syntax error at line 2, column 3 near "'abc": unterminated quoted string that starts at line 2, column 3`},
		{"unterminated multi-line string", "SELECT 'abc\ndef\nghi",
			`syntax error at line 1, column 8 near "'abc": unterminated quoted string that starts at line 1, column 8`},
		{"unterminated quoted identifier", `SELECT "abc`,
			`syntax error at line 1, column 8 near "\"abc": unterminated quoted identifier that starts at line 1, column 8`},
		{"unterminated escape string", `SELECT E'abc\'`,
			`syntax error at line 1, column 8 near "E'abc\\'": unterminated quoted string that starts at line 1, column 8`},
		{"unterminated comment", "SELECT 1 /* abc\n\n",
			`syntax error at line 1, column 10 near "/*": unterminated /* comment that starts at line 1, column 10`},
		{"unterminated nested comment", "/* a /* b */ SELECT 1",
			`syntax error at line 1, column 1 near "/*": unterminated /* comment that starts at line 1, column 1`},
		{"empty quoted identifier", `SELECT "" FROM t`,
			`syntax error at line 1, column 8 near "\"\"": zero-length quoted identifier`},
		{"junk after number", "SELECT 1abc",
			`syntax error at line 1, column 8 near "1abc": trailing junk after numeric literal`},
		{"bad escape", `SELECT E'\x'`,
			`syntax error at line 1, column 10 near "\\x": invalid escape sequence in E'…' string`},
		{"parameter too large", "SELECT $99999999",
			`syntax error at line 1, column 8 near "$99999999": parameter number too large`},
		{"unexpected character", "SELECT 1 @ 2",
			`syntax error at line 1, column 10 near "@": unexpected character`},
		{"merge not matched delete", "MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN DELETE",
			`syntax error at line 1, column 59 near "DELETE": expected one of INSERT, DO NOTHING; DELETE is not allowed in a NOT MATCHED merge clause: there is no target row to delete; did you mean WHEN MATCHED or WHEN NOT MATCHED BY SOURCE?`},
		{"merge not matched by target delete", "MERGE INTO t USING s ON t.id = s.id\nWHEN NOT MATCHED BY TARGET THEN DELETE",
			`syntax error at line 2, column 33 near "DELETE": expected one of INSERT, DO NOTHING; DELETE is not allowed in a NOT MATCHED merge clause: there is no target row to delete; did you mean WHEN MATCHED or WHEN NOT MATCHED BY SOURCE?`},
		{"merge not matched update", "MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY TARGET THEN UPDATE SET a = 1",
			`syntax error at line 1, column 69 near "UPDATE": expected one of INSERT, DO NOTHING; UPDATE is not allowed in a NOT MATCHED merge clause: there is no target row to update; did you mean WHEN MATCHED or WHEN NOT MATCHED BY SOURCE?`},
		{"merge without clauses", "MERGE INTO t USING s ON t.id = s.id",
			`syntax error at line 1, column 36 at end of input: expected WHEN`},
		{"merge insert without values", "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN INSERT",
			`syntax error at line 1, column 61 at end of input: expected one of "(", "*", DEFAULT VALUES, VALUES`},
		{"merge missing THEN", "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED UPDATE SET a = 1",
			`syntax error at line 1, column 50 near "UPDATE": expected one of AND, THEN`},
		{"merge insert arity", "MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (a, b) VALUES (1)",
			`syntax error at line 1, column 73 near "VALUES": INSERT names 2 columns but VALUES has 1`},
		{"merge missing INTO", "MERGE t USING s ON t.id = s.id WHEN MATCHED THEN DELETE",
			`syntax error at line 1, column 7 near "t": expected INTO`},
		{"merge bad action", "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN REMOVE",
			`syntax error at line 1, column 55 near "REMOVE": expected one of UPDATE, DELETE, INSERT, DO NOTHING`},
		{"merge parenthesised join source", "MERGE INTO t USING (a JOIN b ON a.x = b.x) ON t.id = a.id WHEN MATCHED THEN DELETE",
			`syntax error at line 1, column 44 near "ON": a MERGE source must be a table, a subquery, VALUES or a table function`},
		{"unknown partition transform", "CREATE TABLE t (a INT) PARTITIONED BY (foo(a))",
			`syntax error at line 1, column 40 near "foo": unknown partition transform "foo"; expected one of year, month, day, hour, bucket, truncate, identity`},
		{"bucket zero", "CREATE TABLE t (a INT) PARTITIONED BY (bucket(0, a))",
			`syntax error at line 1, column 47 near "0": bucket parameter must be a positive integer`},
		{"create without body", "CREATE TABLE t",
			`syntax error at line 1, column 15 at end of input: expected one of CLONE, PARTITIONED, WITH, AS`},
		{"column without type", "CREATE TABLE t (a)",
			`syntax error at line 1, column 18 near ")": expected type name`},
		{"values arity", "INSERT INTO t VALUES (1, 2),\n (3)",
			`syntax error at line 2, column 2 near "(": VALUES lists must all be the same length: this row has 1 values, the first has 2`},
		{"limit twice", "SELECT a FROM t LIMIT 1 LIMIT 2",
			`syntax error at line 1, column 25 near "LIMIT": LIMIT given twice`},
		{"join without condition", "SELECT * FROM t JOIN u",
			`syntax error at line 1, column 23 at end of input: expected one of ON, USING`},
		{"natural without join", "SELECT * FROM t NATURAL u",
			`syntax error at line 1, column 25 near "u": expected JOIN`},
		{"empty case", "SELECT CASE END",
			`syntax error at line 1, column 13 near "END": expected expression`},
		{"from without table", "SELECT 1 FROM",
			`syntax error at line 1, column 14 at end of input: expected one of LATERAL, table name, "("`},
		{"bad IS", "SELECT a IS 5",
			`syntax error at line 1, column 13 near "5": expected one of NOT, NULL, TRUE, FALSE, UNKNOWN, DISTINCT`},
		{"bad alter action", "ALTER TABLE t FROB",
			`syntax error at line 1, column 15 near "FROB": expected one of EXECUTE, RENAME, ADD, DROP, ALTER, SET; did you mean DROP?`},
		{"trailing comma in select", "SELECT a, FROM t",
			`syntax error at line 1, column 11 near "FROM": expected expression`},
		{"update without set", "UPDATE t WHERE a = 1",
			`syntax error at line 1, column 10 near "WHERE": expected SET`},
		{"delete without from", "DELETE t WHERE a = 1",
			`syntax error at line 1, column 8 near "t": expected FROM`},
		{"unclosed call", "SELECT count(* FROM t",
			`syntax error at line 1, column 16 near "FROM": expected ")"`},
		{"chained comparison", "SELECT a < b = c",
			`syntax error at line 1, column 14 near "=": = cannot follow another operator of its precedence; add parentheses`},
		{"chained IS", "SELECT a IS NULL IS NULL",
			`syntax error at line 1, column 18 near "IS": IS cannot follow another operator of its precedence; add parentheses`},
		{"chained LIKE", "SELECT a LIKE b NOT LIKE c",
			`syntax error at line 1, column 17 near "NOT": expected ESCAPE; NOT cannot follow another operator of its precedence; add parentheses`},
		{"type parameter too large", "SELECT CAST(x AS VARCHAR(99999999))",
			`syntax error at line 1, column 26 near "99999999": type parameter out of range`},
		{"offset twice", "SELECT a FROM t OFFSET 1 OFFSET 2",
			`syntax error at line 1, column 26 near "OFFSET": expected one of ROWS, ROW; OFFSET given twice`},
		{"fetch and limit", "SELECT a FROM t LIMIT 1 FETCH FIRST 2 ROWS ONLY",
			`syntax error at line 1, column 25 near "FETCH": FETCH and LIMIT both given`},
		{"empty property name", "CREATE TABLE t (a INT) WITH ('' = 1)",
			`syntax error at line 1, column 30 near "''": property name must not be empty`},
		{"surrogate unicode escape", `SELECT E'\uD800'`,
			`syntax error at line 1, column 10 near "\\uD800": invalid unicode escape in E'…' string`},
		{"short unicode escape", `SELECT E'\u12'`,
			`syntax error at line 1, column 10 near "\\u12": invalid escape sequence in E'…' string`},
		{"lateral table", "SELECT * FROM LATERAL t",
			`syntax error at line 1, column 23 near "t": LATERAL must be followed by a subquery or a table function`},
		{"interval without unit", "SELECT INTERVAL (1)",
			`syntax error at line 1, column 20 at end of input: expected interval unit`},
		{"double underscore in a number", "SELECT 1__0",
			`syntax error at line 1, column 8 near "1__0": trailing junk after numeric literal`},
		{"trailing underscore in a number", "SELECT 1_",
			`syntax error at line 1, column 8 near "1_": trailing junk after numeric literal`},
		{"copy without file string", "COPY t FROM f",
			`syntax error at line 1, column 13 near "f": expected one of STDIN, file name string`},
		{"bucket without count", "CREATE TABLE t (a INT) PARTITIONED BY (bucket(x, a))",
			`syntax error at line 1, column 47 near "x": expected integer`},
		{"alias missing after AS", "SELECT 1 FROM t AS",
			`syntax error at line 1, column 19 at end of input: expected alias`},
		{"multi-byte column", "SELECT 'héllo', é!",
			`syntax error at line 1, column 18 near "!": unexpected character`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parser.Parse(tt.sql)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded; want error %s", tt.sql, tt.want)
			}
			var pe *parser.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is %T, want *parser.Error", err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Parse(%q)\n got: %s\nwant: %s", tt.sql, got, tt.want)
			}
		})
	}
}

func TestParseOneErrors(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"", `syntax error at line 1, column 1 at end of input: empty statement`},
		{" ; ; ", `syntax error at line 1, column 6 at end of input: empty statement`},
		{"SELECT 1; SELECT 2", `syntax error at line 1, column 11 near "SELECT": expected a single statement, found another`},
	}
	for _, tt := range tests {
		_, err := parser.ParseOne(tt.sql)
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseOne(%q) = %v, want %s", tt.sql, err, tt.want)
		}
	}
}

// TestErrorFields checks the structured fields a CLI or an LSP would use.
func TestErrorFields(t *testing.T) {
	_, err := parser.Parse("SELECT a\nFROM t\nWEHRE x = 1")
	var pe *parser.Error
	if !errors.As(err, &pe) {
		t.Fatalf("got %v", err)
	}
	if pe.Line != 3 || pe.Column != 1 || pe.Offset != 16 || pe.Near != "WEHRE" {
		t.Errorf("position = %d:%d@%d near %q, want 3:1@16 near WEHRE", pe.Line, pe.Column, pe.Offset, pe.Near)
	}
	if len(pe.Expected) == 0 || pe.Expected[1] != "WHERE" {
		t.Errorf("Expected = %q", pe.Expected)
	}
}

func TestCaret(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"SELECT a\nFROM t\nWEHRE x = 1", "WEHRE x = 1\n^"},
		{"SELECT a FROM t WHERE a = ", "SELECT a FROM t WHERE a = \n                          ^"},
		{"SELECT 1\n\tFROM t JOIN u", "\tFROM t JOIN u\n\t             ^"},
		{"SELECT 'é', ', 1 @", "SELECT 'é', ', 1 @\n            ^"},
		{"SELECT 'é', 1 @ 2\r\nFROM t", "SELECT 'é', 1 @ 2\n              ^"},
	}
	for _, tt := range tests {
		_, err := parser.Parse(tt.sql)
		var pe *parser.Error
		if !errors.As(err, &pe) {
			t.Fatalf("Parse(%q) = %v", tt.sql, err)
		}
		if got := pe.Caret(); got != tt.want {
			t.Errorf("Caret for %q:\n%s\nwant:\n%s", tt.sql, got, tt.want)
		}
	}
}

func TestDepthLimit(t *testing.T) {
	deep := func(open, close string, n int) string {
		return "SELECT " + strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	if _, err := parser.Parse(deep("(", ")", 200)); err != nil {
		t.Errorf("200 nested parentheses: %v", err)
	}
	for _, sql := range []string{
		deep("(", ")", 5000),
		deep("- ", "", 5000),
		deep("NOT ", "", 5000),
		deep("(SELECT ", ")", 3000),
		deep("ARRAY[", "]", 5000),
		"SELECT * FROM " + strings.Repeat("(", 200000) + "t",
	} {
		_, err := parser.Parse(sql)
		if err == nil {
			t.Errorf("deeply nested input parsed")
			continue
		}
		want := "statement is nested too deeply (more than 1000 levels); simplify it or split it up"
		var pe *parser.Error
		if !errors.As(err, &pe) || pe.Msg != want {
			t.Errorf("got %v, want message %q", err, want)
		}
	}
}

// SQL text that is not UTF-8 is refused at its first bad byte, as
// PostgreSQL does (22021): it would be stored in TEXT and Parquet.
func TestInvalidUTF8(t *testing.T) {
	_, err := parser.Parse("SELECT 1;\nSELECT 'a\xffb'")
	var pe *parser.Error
	if !errors.As(err, &pe) {
		t.Fatalf("want a parser error, got %v", err)
	}
	if pe.Line != 2 || pe.Column != 10 || !strings.Contains(err.Error(), `invalid byte sequence for encoding "UTF8": 0xff`) {
		t.Fatalf("got line %d column %d: %v", pe.Line, pe.Column, err)
	}
}
