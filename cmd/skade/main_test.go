package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skadedb/skade/internal/s3test"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/server/rest"
)

func skade(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestSubcommands(t *testing.T) {
	lakeDir := filepath.Join(t.TempDir(), "lake")
	csv := filepath.Join("..", "..", "testdata", "events.csv")
	onceFile := filepath.Join(t.TempDir(), "once.csv")
	copyFile := filepath.Join(t.TempDir(), "copy.csv")
	notLake := t.TempDir()
	if err := os.WriteFile(filepath.Join(notLake, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		args     []string
		code     int
		stdout   string // regexp
		stderr   string // substring
		noStdout bool
	}{
		// a read-only command on a path with no lake says so and creates none
		{args: []string{"--lake", lakeDir, "tables"}, code: 1, noStdout: true, stderr: "skade tables: no lake at " + lakeDir},
		{args: []string{"--lake", lakeDir, "history", "events"}, code: 1, stderr: "no lake at " + lakeDir},
		{args: []string{"--lake", lakeDir, "import", "events", csv}, code: 0, stdout: `^created main\.events and appended 8 rows to main\.events \(snapshot \d+\)\n$`},
		{args: []string{"import", "--lake", lakeDir, "events", csv}, code: 0, stdout: `^appended 8 rows to main\.events \(snapshot \d+\)\n$`},
		{args: []string{"--lake", lakeDir, "tables"}, code: 0, stdout: `^main\.events\n$`},
		{args: []string{"--lake", lakeDir, "history", "events"}, code: 0, stdout: `(?s)^snapshot +committed_at +operation.*\n\d+ +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00 +append +8 +0 +8 +1\n\d+\* +\S+ \S+ +append +\d+ +8 +0 +16 +2\n$`},
		{args: []string{"--lake", lakeDir, "history", "nosuch"}, code: 1, stderr: "skade history: table main.nosuch does not exist"},
		{args: []string{"--lake", lakeDir, "history"}, code: 2, stderr: "skade history: needs one table name"},
		{args: []string{"--lake", lakeDir, "expire", "events", "--older-than", "0s"}, code: 0, stdout: `^expired 1 snapshots of main\.events, deleted 1 files\n$`},
		{args: []string{"--lake", lakeDir, "expire", "events", "--older-than", "soon"}, code: 2, stderr: `--older-than: "soon" is not a duration`},
		{args: []string{"--lake", lakeDir, "expire", "events", "--retain-last", "0"}, code: 1, stderr: "retain_last must be at least 1"},
		{args: []string{"--lake", lakeDir, "orphans", "events", "--older-than", "1h"}, code: 0, stdout: `^deleted 0 orphan files \(0 bytes\) from main\.events\n$`},
		{args: []string{"--lake", lakeDir, "orphans", "--older-than", "1h"}, code: 0, stdout: `^deleted 0 orphan files \(0 bytes\) from the lake \(\d+ tables\)\n$`},
		{args: []string{"--lake", lakeDir, "import", "../bad", csv}, code: 1, stderr: `invalid table name "../bad"`},
		{args: []string{"--lake", lakeDir, "import", "t2", "file.json"}, code: 2, stderr: `cannot tell the format of "file.json"`},
		{args: []string{"--lake", lakeDir, "import", "t3", "missing.csv"}, code: 1, stderr: "no such file"},
		{args: []string{"--lake", lakeDir, "compact", "events"}, code: 0, stdout: `^compacted main\.events: rewrote 2 data files \(\d+ bytes\) into 1 \(\d+ bytes\), removed 0 delete files \(snapshot \d+\)\n$`},
		{args: []string{"--lake", lakeDir, "compact", "events"}, code: 0, stdout: `^main\.events needs no compaction; nothing was written\n$`},
		{args: []string{"--lake", lakeDir, "compact", "events", "--target-mib", "-1"}, code: 2, stderr: "skade compact: --target-mib: -1 is negative; give a size in MiB, or 0 for the table's default"},
		{args: []string{"--lake", lakeDir, "compact", "nosuch"}, code: 1, stderr: "skade compact: table main.nosuch does not exist"},
		{args: []string{"--lake", lakeDir, "compact"}, code: 2, stderr: "skade compact: needs one table name"},
		{args: []string{"compact", "--help"}, code: 0, stderr: "example:\n  skade compact events\n  skade compact events --target-mib 64\n"},
		{args: []string{"--lake", lakeDir, "sql", "-c", "SELECT count(*) AS n FROM events"}, code: 0, stdout: `(?s)│ n +│\n│ bigint │\n.*│ +16 │\n.*\n1 row\n$`},
		{args: []string{"--lake", lakeDir, "sql", "--format", "csv", "-c", "SELECT id FROM events WHERE id < 3 ORDER BY id LIMIT 2;\nSELECT 'x' AS s"}, code: 0, stdout: `^id\n1\n1\ns\nx\n$`},
		{args: []string{"--lake", lakeDir, "sql", "--format", "csv", "-c", "SELECT 1 AS a; SELECT * FORM events; SELECT 2 AS b"}, code: 1, stdout: `^a\n1\n$`, stderr: "Error: syntax error at line 1, column 10 near \"FORM\""},
		{args: []string{"--lake", lakeDir, "sql", "--format", "csv", "--bail=false", "-c", "SELECT 1 AS a; SELECT * FORM events; SELECT 2 AS b"}, code: 1, stdout: `^a\n1\nb\n2\n$`, stderr: "LINE 1: SELECT * FORM events\n                 ^\n"},
		{args: []string{"--lake", lakeDir, "sql", "-c", "SELECT stauts FROM events"}, code: 1, stderr: "Error: column \"stauts\" not found in table \"events\"; did you mean \"status\"?\nLINE 1: SELECT stauts FROM events\n               ^\n"},
		{args: []string{"--lake", lakeDir, "sql", "-f", "nosuch.sql"}, code: 1, stderr: "skade sql: open nosuch.sql: no such file or directory"},
		{args: []string{"--lake", lakeDir, "sql", "-c", "SELECT 1", "-f", "x.sql"}, code: 2, stderr: "skade sql: give -c or -f, not both"},
		{args: []string{"--lake", lakeDir, "sql", "--format", "xml", "-c", "SELECT 1"}, code: 2, stderr: `skade sql: --format: unknown format "xml"; use one of table, csv, tsv, json, markdown, html, insert, line`},
		{args: []string{"--lake", lakeDir, "sql", "extra"}, code: 2, stderr: `skade sql: takes no arguments, got ["extra"]; pass SQL with -c or a file with -f`},
		{args: []string{"sql", "--help"}, code: 0, stderr: "example:\n  skade sql                                   # the shell"},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".mode xml"}, code: 1, stderr: `Error: .mode: unknown mode "xml"; use one of table, csv, tsv, json, markdown, html, insert, line, box or duckbox (insert takes a table name)`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".timer maybe"}, code: 1, stderr: `Error: .timer: want on or off, got "maybe"`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".maxrows -1"}, code: 1, stderr: `Error: .maxrows: want a number of rows (0 for all), got "-1"`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".history"}, code: 1, stderr: `Error: .history: takes one table name`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".history nosuch"}, code: 1, stderr: `Error: .history: table main.nosuch does not exist`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".schema nosuch"}, code: 1, stderr: `Error: .schema: table main.nosuch does not exist`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".read nosuch.sql"}, code: 1, stderr: `Error: .read: open nosuch.sql: no such file or directory`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".read"}, code: 1, stderr: `Error: .read: takes one file name`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".output a b"}, code: 1, stderr: `Error: .output: takes one file name, got "a b"`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".let x"}, code: 1, stderr: `Error: .let: want .let NAME VALUE, e.g. .let before ${snapshot}`},
		{args: []string{"--lake", lakeDir, "sql", "-c", "SELECT ${nope}"}, code: 1, stderr: `Error: variable ${nope} is not set; set it with .let nope VALUE`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".frob"}, code: 1, stderr: `Error: unknown command ".frob"; .help lists the commands`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".tables\n.schema events\n.quit\nSELECT nothing"}, code: 0, stdout: `^main\.events\nCREATE TABLE main\.events \(\n    id BIGINT,\n    status TEXT,\n    amount DOUBLE PRECISION,\n    seen_at TIMESTAMP\n\)\nWITH \(\n    'format-version' = '2'\n\);\n$`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".maxrows 2\nSELECT * FROM range(100000) r(n)"}, code: 0, stdout: `(?s)│      0 │\n│      1 │\n└─+┘\n… 99998 more rows\n100000 rows \(2 shown; \.maxrows 0 shows all\)\n$`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".timer on\nSELECT 1 AS a;\n.mode csv\nSELECT 2 AS b;\n.timer off\nSELECT 3 AS c"}, code: 0, stdout: `(?s)│ +1 │\n└─+┘\n1 row \(\d[\d.]* [µm]?s\)\nb\n2\nRun Time: \d[\d.]* [µm]?s\nc\n3\n$`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".mode\n.maxrows\n.mode line\n.mode"}, code: 0, stdout: "^table\n0\nline\n$"},
		{args: []string{"--lake", csv, "sql", "-c", "SELECT 1"}, code: 1, stderr: "skade sql: create lake directory: mkdir " + csv + ": not a directory"},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".help"}, code: 0, stdout: `(?s)^\.help +show this help\n.*\.quit +leave the shell`},
		{args: []string{"--lake", lakeDir, "sql", "-c", "MERGE INTO events USING (SELECT 100 AS id) s ON events.id = s.id WHEN MATCHED THEN DELETE"}, code: 0, stdout: `^merged 0 rows \(no new snapshot\)\n$`},
		{args: []string{"--lake", lakeDir, "sql", "-c", "MERGE INTO events USING (SELECT 1 AS id) s ON events.id > s.id WHEN MATCHED THEN DELETE"}, code: 1, stderr: "Error: merge into main.events: needs an ON condition that is a conjunction of `target.col = source.col` equalities"},
		{args: []string{"--lake", lakeDir, "sql", "-c", "MERGE INTO events USING (SELECT 1 AS id) s ON events.id = s.id WHEN MATCHED THEN UPDATE SET status = 'merged'"}, code: 0, stdout: `^merged 2 rows: 2 updated \(snapshot \d+\)\n$`},
		{args: []string{"--lake", lakeDir, "sql", "-c", "BEGIN; DELETE FROM events WHERE id = 1; ROLLBACK"}, code: 0, stdout: `^BEGIN\ndeleted 2 rows \(staged; commits with COMMIT\)\nROLLBACK\n$`},
		{args: []string{"version"}, code: 0, stdout: `^skade \S+.* go1\.\d+`},
		{args: []string{"frobnicate"}, code: 2, stderr: `unknown command "frobnicate"`},
		{args: []string{"expire", "--help"}, code: 0, stderr: "example:\n  skade expire events --older-than 7d --retain-last 5"},
		{args: []string{"help", "import"}, code: 0, stdout: "(?s)usage: skade import.*example:"},
		// IF [NOT] EXISTS no-ops say so, as psql shows PostgreSQL's notices
		{args: []string{"--lake", lakeDir, "sql", "-c", "DROP TABLE IF EXISTS nosuch"}, code: 0, stdout: "^DROP TABLE\n$", stderr: `NOTICE:  table "nosuch" does not exist, skipping`},
		// psql's habits map to the shell's commands
		{args: []string{"--lake", lakeDir, "sql", "-c", `\dt`}, code: 0, stdout: `^main\.events\n$`},
		{args: []string{"--lake", lakeDir, "sql", "-c", `\d events`}, code: 0, stdout: `^CREATE TABLE main\.events \(\n    id BIGINT`},
		{args: []string{"--lake", lakeDir, "sql", "-c", `\dn`}, code: 0, stdout: `^main\n$`},
		{args: []string{"--lake", lakeDir, "sql", "-c", `\l`}, code: 0, stdout: "^" + regexp.QuoteMeta(lakeDir) + `\n$`},
		{args: []string{"--lake", lakeDir, "sql", "-c", "\\x\nSELECT 1 AS one, 2 AS two;"}, code: 0, stdout: `^one = 1\ntwo = 2\n`, stderr: "Expanded display is on."},
		{args: []string{"--lake", lakeDir, "sql", "-c", "\\timing on"}, code: 0, stderr: "Timing is on."},
		{args: []string{"--lake", lakeDir, "sql", "-c", `\bogus`}, code: 1, stderr: `unknown psql command \bogus; skade knows \d, \d TABLE, \dt`},
		{args: []string{"--lake", lakeDir, "sql", "--format", "csv", "-c", "SELECT 1 AS a;\nquit\nSELECT 2 AS b;"}, code: 0, stdout: "^a\n1\n$"},
		{args: []string{"--lake", lakeDir, "sql", "--format", "csv", "-c", "SELECT 1 AS a;\n\\q\nSELECT 2 AS b;"}, code: 0, stdout: "^a\n1\n$"},
		{args: []string{"--lake", lakeDir, "sql", "-c", "help"}, code: 0, stdout: `\.import FILE TABLE`},
		{args: []string{"--lake", lakeDir, "sql", "--format", "csv", "-c", ".once " + onceFile + "\nSELECT 5 AS five;\nSELECT 6 AS six;"}, code: 0, stdout: "^six\n6\n$"},
		{args: []string{"--lake", lakeDir, "sql", "--format", "csv", "-c", ".import " + csv + " imported\nSELECT count(*) AS n FROM imported;"}, code: 0, stdout: `^created main\.imported and appended 8 rows to main\.imported \(snapshot \d+\)\nn\n8\n$`},
		{args: []string{"--lake", lakeDir, "sql", "--format", "csv", "-c", "\\copy (SELECT 42 AS v) TO '" + copyFile + "'"}, code: 0},
		// other shells' modes and .headers
		{args: []string{"--lake", lakeDir, "sql", "--format", "box", "-c", "SELECT 1 AS a"}, code: 0, stdout: `^┌─────────┐\n│ a       │\n│ integer │`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".mode tsv\n.headers off\nSELECT 1 AS a, 'x y' AS b"}, code: 0, stdout: "^1\tx y\n$"},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".mode insert events_copy\nSELECT 1 AS a, 'it''s' AS b, NULL AS c"}, code: 0, stdout: `^INSERT INTO "events_copy" VALUES\(1,'it''s',NULL\);\n$`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".mode html\nSELECT '<b>' AS tag"}, code: 0, stdout: "^<table>\n<tr><th>tag</th></tr>\n<tr><td>&lt;b&gt;</td></tr>\n</table>\n$"},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".mode yaml"}, code: 1, stderr: `unknown mode "yaml"`},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".width 3 0\nSELECT 'abcdef' AS long_name, 'x' AS b"}, code: 0, stdout: "^┌─────┬──────┐\n│ lo… │ b    │\n│ te… │ text │\n├─────┼──────┤\n│ ab… │ x    │\n"},
		{args: []string{"--lake", lakeDir, "sql", "-c", ".changes on\nCREATE TABLE ch (x INT);\nINSERT INTO ch VALUES (1), (2);\nDELETE FROM ch WHERE x = 1;"}, code: 0, stdout: "changes: 2   total_changes: 2\n(?s).*changes: 1   total_changes: 3\n$"},
		// bare skade is the shell (here on an empty standard input), and
		// skade DIR the shell on DIR, refused when DIR holds something else
		{args: []string{"--lake", lakeDir}, code: 0, noStdout: true},
		{args: []string{lakeDir}, code: 0, noStdout: true},
		{args: []string{notLake}, code: 1, stderr: notLake + " is not a lake: it holds files but no catalog.db"},
		{args: []string{"tabels"}, code: 2, stderr: `unknown command "tabels"; did you mean "tables"?`},
	}
	for i, c := range cases {
		code, stdout, stderr := skade(t, c.args...)
		if i == 1 {
			if _, err := os.Stat(lakeDir); !os.IsNotExist(err) {
				t.Fatalf("tables and history on a missing lake created %s (%v)", lakeDir, err)
			}
		}
		if code != c.code {
			t.Fatalf("skade %q: exit %d, want %d\nstdout: %s\nstderr: %s", c.args, code, c.code, stdout, stderr)
		}
		if c.stdout != "" && !regexp.MustCompile(c.stdout).MatchString(stdout) {
			t.Fatalf("skade %q: stdout %q does not match %q", c.args, stdout, c.stdout)
		}
		if c.noStdout && stdout != "" {
			t.Fatalf("skade %q: stdout %q, want nothing", c.args, stdout)
		}
		if c.stderr != "" && !strings.Contains(stderr, c.stderr) {
			t.Fatalf("skade %q: stderr %q does not contain %q", c.args, stderr, c.stderr)
		}
	}
	if b, err := os.ReadFile(onceFile); err != nil || string(b) != "five\n5\n" {
		t.Fatalf(".once wrote %q (%v), want the one result", b, err)
	}
	if b, err := os.ReadFile(copyFile); err != nil || !strings.Contains(string(b), "42") {
		t.Fatalf(`\copy wrote %q (%v)`, b, err)
	}
	// A failed first import leaves no table behind.
	if _, err := os.Stat(filepath.Join(lakeDir, "main")); err != nil {
		t.Fatal(err)
	}
	_, stdout, _ := skade(t, "--lake", lakeDir, "tables")
	if stdout != "main.ch\nmain.events\nmain.imported\n" {
		t.Fatalf("tables after failed imports: %q", stdout)
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]string{"7d": "168h0m0s", "1d12h": "36h0m0s", "30m": "30m0s", "0s": "0s"} {
		got, err := parseAge(in)
		if err != nil || got.String() != want {
			t.Errorf("parseAge(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "-1d", "7x", "-5m"} {
		if _, err := parseAge(in); err == nil {
			t.Errorf("parseAge(%q) succeeded, want an error", in)
		}
	}
}

// Every subcommand has --help with an example of itself.
func TestHelpExamples(t *testing.T) {
	for name := range commands {
		code, _, stderr := skade(t, name, "--help")
		if code != 0 || !strings.Contains(stderr, "\nexample:\n  skade ") || !strings.Contains(stderr, name) {
			t.Errorf("skade %s --help: exit %d, output without an example:\n%s", name, code, stderr)
		}
	}
	for _, want := range []string{"sql", "compact", "tables", "history", "import", "expire", "orphans", "version"} {
		if commands[want] == nil {
			t.Errorf("no %s subcommand", want)
		}
	}
}

// The CLI on a lake in an object store: --lake s3://… with --catalog, and
// the error that names --catalog when it is missing.
func TestObjectStoreLakeCLI(t *testing.T) {
	code, _, stderr := skade(t, "--lake", "s3://lake/cli", "tables")
	if code != 1 || !strings.Contains(stderr, "pass one with --catalog FILE") {
		t.Fatalf("no --catalog: exit %d, %q", code, stderr)
	}
	s3test.Start(t)
	catalog := filepath.Join(t.TempDir(), "catalog.db")
	csv := filepath.Join("..", "..", "testdata", "events.csv")
	if code, _, stderr := skade(t, "--lake", "s3://lake/cli", "--catalog", catalog, "tables"); code != 1 || !strings.Contains(stderr, "no lake at s3://lake/cli") {
		t.Fatalf("tables before any lake: exit %d, %q", code, stderr)
	}
	if code, out, stderr := skade(t, "--lake", "s3://lake/cli", "--catalog", catalog, "import", "events", csv); code != 0 || !strings.Contains(out, "appended 8 rows") {
		t.Fatalf("import: exit %d, %q %q", code, out, stderr)
	}
	t.Setenv("SKADE_CATALOG", catalog)
	code, out, stderr := skade(t, "--lake", "s3://lake/cli", "sql", "--format", "csv", "-c", "UPDATE events SET status = 'x' WHERE id = 1; SELECT count(*) AS n, count(*) FILTER (WHERE status = 'x') AS x FROM events")
	if code != 0 || !strings.HasSuffix(out, "n,x\n8,1\n") {
		t.Fatalf("sql: exit %d, %q %q", code, out, stderr)
	}
}

// The CLI on a lake whose catalog is a REST catalog: --lake rest+http://…,
// logging in with $SKADE_CATALOG_CREDENTIAL.
func TestRESTLakeCLI(t *testing.T) {
	ctx := context.Background()
	backing, err := lake.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer backing.Close()
	srv, err := rest.New(rest.Config{Lake: backing, Clients: []rest.Client{{ID: "cli", Secret: "pw"}}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	uri := "rest+" + hs.URL
	if code, _, stderr := skade(t, "--lake", uri, "tables"); code != 1 || !strings.Contains(stderr, "$SKADE_CATALOG_CREDENTIAL") {
		t.Fatalf("without credentials: exit %d, %q", code, stderr)
	}
	t.Setenv("SKADE_CATALOG_CREDENTIAL", "cli:pw")
	code, out, stderr := skade(t, "--lake", uri, "sql", "--format", "csv", "-c", "CREATE TABLE t AS SELECT i AS id FROM range(0, 5) r(i); UPDATE t SET id = id * 10 WHERE id = 4; SELECT sum(id) AS s FROM t")
	if code != 0 || !strings.HasSuffix(out, "s\n46\n") {
		t.Fatalf("sql: exit %d, %q %q", code, out, stderr)
	}
	if code, out, _ := skade(t, "--lake", uri, "tables"); code != 0 || out != "main.t\n" {
		t.Fatalf("tables: exit %d, %q", code, out)
	}
}
