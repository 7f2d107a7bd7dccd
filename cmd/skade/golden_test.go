package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/cli")

// cliTestdata is the repository's testdata/cli, where golden output lives.
var cliTestdata = filepath.Join("..", "..", "testdata", "cli")

// snapshotIDs are Iceberg snapshot ids, random on every run.
var snapshotIDs = regexp.MustCompile(`\b\d{12,19}\b`)

// maskIDs replaces snapshot ids with <id>.
func maskIDs(s string) string { return snapshotIDs.ReplaceAllString(s, "<id>") }

// golden compares got with the file, or rewrites the file under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(cliTestdata, name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/skade -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test ./cmd/skade -update rewrites it; review the diff)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// TestFormats runs one script under every --format and every .mode.
func TestFormats(t *testing.T) {
	script := filepath.Join(cliTestdata, "formats.sql")
	for _, mode := range modes {
		t.Run("format="+mode, func(t *testing.T) {
			lakeDir := filepath.Join(t.TempDir(), "lake")
			code, stdout, stderr := skade(t, "--lake", lakeDir, "sql", "--format", mode, "-f", script)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			golden(t, "format_"+mode+".golden", maskIDs(stdout))
		})
		t.Run("mode="+mode, func(t *testing.T) {
			// .mode in a script gives the same output as --format.
			lakeDir := filepath.Join(t.TempDir(), "lake")
			body, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := skade(t, "--lake", lakeDir, "sql", "-c", ".mode "+mode+"\n"+string(body))
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			golden(t, "format_"+mode+".golden", maskIDs(stdout))
		})
	}
}

// TestTableFits checks the table mode's width fitting and row cut, which
// only the interactive shell uses.
func TestTableFits(t *testing.T) {
	var b strings.Builder
	r := newRenderer("table", &b, renderOptions{width: 40, maxRows: 2})
	r.header([]column{{name: "id", typ: "bigint", numeric: true}, {name: "long_text", typ: "text"}, {name: "more", typ: "text"}, {name: "even_more", typ: "text"}})
	for i := 0; i < 5; i++ {
		r.row([]cell{{text: "1"}, {text: strings.Repeat("x", 50)}, {text: "NULL", null: true}, {text: "y"}})
	}
	r.done(5, 0)
	// Too many columns for the width: the rightmost are left out.
	r = newRenderer("table", &b, renderOptions{width: 30})
	r.header([]column{{name: "a", typ: "text"}, {name: "b", typ: "text"}, {name: "c", typ: "text"}, {name: "d", typ: "text"}, {name: "e", typ: "text"}})
	r.row([]cell{{text: "1"}, {text: "2"}, {text: "3"}, {text: "4"}, {text: "5"}})
	r.done(1, 0)
	golden(t, "table_fit.golden", b.String())
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		if n := len([]rune(l)); n > 40 && strings.HasPrefix(l, "│") || strings.Contains(l, "│ a ") && n > 30 {
			t.Errorf("line %q is %d wide, want at most 40", l, n)
		}
	}
}
