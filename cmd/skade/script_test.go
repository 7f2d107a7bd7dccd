package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScriptFromStdin(t *testing.T) {
	dir := t.TempDir()
	lakeDir := filepath.Join(dir, "lake")
	// Semicolons inside strings and comments do not end statements; a
	// statement may span lines; the last one needs no semicolon.
	script := "-- a comment; not a statement\n" +
		"SELECT 'a;b' AS s, /* ; */ 1\n  + 1 AS n;\n" +
		"SELECT 'line\none' AS t; SELECT 3 AS x\n"
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--lake", lakeDir, "sql", "--format", "csv"}, strings.NewReader(script), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "s,n\na;b,2\nt\n\"line\none\"\nx\n3\n"; out.String() != want {
		t.Fatalf("stdout %q, want %q", out.String(), want)
	}
	// An error names the script line of the offending token.
	out.Reset()
	errb.Reset()
	code = run(context.Background(), []string{"--lake", lakeDir, "sql"}, strings.NewReader("SELECT 1 AS one;\n\nSELECT\n  nosuch\nFROM (SELECT 1 AS a) s;\nSELECT 2;\n"), &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if want := "Error: column \"nosuch\" not found"; !strings.HasPrefix(errb.String(), want) {
		t.Fatalf("stderr %q, want it to start with %q", errb.String(), want)
	}
	if !strings.Contains(errb.String(), "LINE 2:   nosuch\n          ^\n") {
		t.Fatalf("stderr %q lacks the caret", errb.String())
	}
}

func TestDotOutputReadLet(t *testing.T) {
	dir := t.TempDir()
	lakeDir := filepath.Join(dir, "lake")
	outFile := filepath.Join(dir, "out.csv")
	inner := filepath.Join(dir, "inner.sql")
	if err := os.WriteFile(inner, []byte("INSERT INTO t VALUES (2);\nSELECT count(*) AS n FROM t;\nSELECT * FROM nosuch;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(dir, "self.sql")
	if err := os.WriteFile(self, []byte(".read "+self+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := strings.Join([]string{
		"CREATE TABLE t (id BIGINT);",
		"INSERT INTO t VALUES (1);",
		".let first ${snapshot}",
		".mode csv",
		".output " + outFile,
		"SELECT id FROM t ORDER BY id;",
		".output",
		".read " + inner,
		"SELECT count(*) AS then FROM t FOR VERSION AS OF ${first};",
		".read " + self,
	}, "\n")
	code, stdout, stderr := skade(t, "--lake", lakeDir, "sql", "--bail=false", "-c", script)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (inner.sql fails)", code)
	}
	got, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "id\n1\n" {
		t.Fatalf(".output file holds %q", got)
	}
	if want := "CREATE TABLE\ninserted 1 row (snapshot "; !strings.HasPrefix(stdout, want) {
		t.Fatalf("stdout %q, want it to start with %q", stdout, want)
	}
	if want := "\ncount,snapshot\n1,"; !strings.Contains(stdout, want) {
		t.Fatalf("stdout %q lacks %q (the DML in inner.sql, in csv)", stdout, want)
	}
	if !strings.Contains(stdout, "\nn\n2\nthen\n1\n") {
		t.Fatalf("stdout %q lacks the counts now and at ${first}", stdout)
	}
	if want := inner + ":3: Error: table \"nosuch\" does not exist\nLINE 1: SELECT * FROM nosuch\n"; !strings.Contains(stderr, want) {
		t.Fatalf("stderr %q lacks %q", stderr, want)
	}
	if want := self + ":1: Error: .read: nested more than 16 deep; does " + self + " read itself?"; !strings.Contains(stderr, want) {
		t.Fatalf("stderr %q lacks %q", stderr, want)
	}
}

// A statement that ends on a line where the next one begins runs at once,
// and errors name the script's line.
func TestScriptLineNumbers(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.sql")
	body := "SELECT 1 AS a; SELECT\n  2 AS b; SELECT 3 AS c;\n\n/* x; */ SELECT\n  4 AS d,\n  nosuch FROM (SELECT 1 AS x) s; SELECT 5 AS e;\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := skade(t, "--lake", filepath.Join(dir, "lake"), "sql", "--format", "csv", "--bail=false", "-f", file)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if want := "a\n1\nb\n2\nc\n3\ne\n5\n"; stdout != want {
		t.Fatalf("stdout %q, want %q", stdout, want)
	}
	if want := file + ":6: Error: column \"nosuch\" not found"; !strings.HasPrefix(stderr, want) {
		t.Fatalf("stderr %q, want it to start with %q", stderr, want)
	}
	if want := "LINE 3:   nosuch FROM (SELECT 1 AS x) s\n          ^\n"; !strings.HasSuffix(stderr, want) {
		t.Fatalf("stderr %q, want it to end with %q", stderr, want)
	}
}

func TestSchemaPartitioned(t *testing.T) {
	lakeDir := filepath.Join(t.TempDir(), "lake")
	code, stdout, stderr := skade(t, "--lake", lakeDir, "sql", "-c",
		"CREATE TABLE p (id BIGINT NOT NULL, \"Mixed Case\" VARCHAR, ts TIMESTAMP) PARTITIONED BY (day(ts), bucket(4, id));\n.schema p")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "CREATE TABLE\nCREATE TABLE main.p (\n    id BIGINT NOT NULL,\n    \"Mixed Case\" TEXT,\n    ts TIMESTAMP\n)\nPARTITIONED BY (day(ts), bucket(4, id))\nWITH (\n    'format-version' = '2'\n);\n"
	if stdout != want {
		t.Fatalf("stdout %q, want %q", stdout, want)
	}
}

// A script that ends inside BEGIN leaves nothing behind and says so; a
// failed statement aborts the transaction, and --bail=false goes on to
// the ROLLBACK.
func TestScriptTransactions(t *testing.T) {
	lakeDir := filepath.Join(t.TempDir(), "lake")
	sql := func(script string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"--lake", lakeDir, "sql", "--format", "csv"}, args...), strings.NewReader(script), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, errs := sql("CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1);"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, _, errs := sql("BEGIN; INSERT INTO t VALUES (2); SELECT count(*) FROM t;")
	if code != 0 || !strings.Contains(errs, "open transaction was rolled back") {
		t.Fatalf("exit %d, stderr %q: want the rollback reported", code, errs)
	}
	code, out, errs := sql("BEGIN; INSERT INTO t VALUES (3); SELECT nosuch FROM t; INSERT INTO t VALUES (4); ROLLBACK; SELECT count(*) AS n FROM t;", "--bail=false")
	if code != 1 || !strings.Contains(errs, "current transaction is aborted") {
		t.Fatalf("exit %d, stderr %q: want the aborted transaction reported", code, errs)
	}
	if !strings.HasSuffix(out, "n\n1\n") {
		t.Fatalf("stdout %q: want one row left", out)
	}
	if code, out, errs := sql("BEGIN; INSERT INTO t VALUES (5); COMMIT; SELECT count(*) AS n FROM t;"); code != 0 || !strings.HasSuffix(out, "n\n2\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
