package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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

	cases := []struct {
		args     []string
		code     int
		stdout   string // regexp
		stderr   string // substring
		noStdout bool
	}{
		{args: []string{"--lake", lakeDir, "tables"}, code: 0, noStdout: true},
		{args: []string{"--lake", lakeDir, "import", "events", csv}, code: 0, stdout: `^created main\.events and appended 8 rows to main\.events \(snapshot \d+\)\n$`},
		{args: []string{"import", "--lake", lakeDir, "events", csv}, code: 0, stdout: `^appended 8 rows to main\.events \(snapshot \d+\)\n$`},
		{args: []string{"--lake", lakeDir, "tables"}, code: 0, stdout: `^main\.events\n$`},
		{args: []string{"--lake", lakeDir, "history", "events"}, code: 0, stdout: `(?s)^snapshot +committed_at +operation.*\n\d+ +\S+ +append +8 +0 +8 +1\n\d+\* +\S+ +append +\d+ +8 +0 +16 +2\n$`},
		{args: []string{"--lake", lakeDir, "history", "nosuch"}, code: 1, stderr: "skade history: table main.nosuch does not exist"},
		{args: []string{"--lake", lakeDir, "history"}, code: 2, stderr: "skade history: needs one table name"},
		{args: []string{"--lake", lakeDir, "expire", "events", "--older-than", "0s"}, code: 0, stdout: `^expired 1 snapshots of main\.events, deleted 1 files\n$`},
		{args: []string{"--lake", lakeDir, "expire", "events", "--older-than", "soon"}, code: 2, stderr: `--older-than: "soon" is not a duration`},
		{args: []string{"--lake", lakeDir, "expire", "events", "--retain-last", "0"}, code: 1, stderr: "retain_last must be at least 1"},
		{args: []string{"--lake", lakeDir, "orphans", "events", "--older-than", "1h"}, code: 0, stdout: `^deleted 0 orphan files \(0 bytes\) from main\.events\n$`},
		{args: []string{"--lake", lakeDir, "import", "../bad", csv}, code: 1, stderr: `invalid table name "../bad"`},
		{args: []string{"--lake", lakeDir, "import", "t2", "file.json"}, code: 2, stderr: `cannot tell the format of "file.json"`},
		{args: []string{"--lake", lakeDir, "import", "t3", "missing.csv"}, code: 1, stderr: "no such file"},
		{args: []string{"version"}, code: 0, stdout: `^skade \S+.* go1\.\d+`},
		{args: []string{"frobnicate"}, code: 2, stderr: `unknown command "frobnicate"`},
		{args: []string{"expire", "--help"}, code: 0, stderr: "example:\n  skade expire events --older-than 7d --retain-last 5"},
		{args: []string{"help", "import"}, code: 0, stdout: "(?s)usage: skade import.*example:"},
		{args: nil, code: 2, stderr: "usage: skade [--lake DIR] COMMAND"},
	}
	for _, c := range cases {
		code, stdout, stderr := skade(t, c.args...)
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
	// A failed first import leaves no table behind.
	if _, err := os.Stat(filepath.Join(lakeDir, "main")); err != nil {
		t.Fatal(err)
	}
	_, stdout, _ := skade(t, "--lake", lakeDir, "tables")
	if stdout != "main.events\n" {
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
