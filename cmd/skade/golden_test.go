package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/skadedb/skade/lake"
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

// TestWideResults renders a result wider than the terminal at 80 and 160
// columns: the first and last columns keep their natural width, the
// middle ones that do not fit give way to a "…" column and a count, and
// no value is cut narrower than its column's name.
func TestWideResults(t *testing.T) {
	ctx := context.Background()
	lk, err := lake.Open(ctx, filepath.Join(t.TempDir(), "lake"))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	res, err := lk.Session().SQL(ctx, `SELECT 'data/00000-0-5b6f0a2e-8d3c-4c44-9a57-0e3f3c1d2b7a.parquet' AS file_path,
		'PARQUET' AS file_format, 0 AS spec_id, i AS record_count, 1024 * i AS file_size_in_bytes,
		'{1: 8, 2: 8, 3: 8}' AS column_sizes, '{1: 2, 2: 2, 3: 2}' AS value_counts, '{1: 0, 2: 0, 3: 1}' AS null_value_counts,
		'{1: 1, 2: a, 3: 2026-01-01}' AS lower_bounds, '{1: 2, 2: b, 3: 2026-01-02}' AS upper_bounds, i * 10 AS sort_order_id
		FROM range(1, 3) r(i)`)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := res.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	for _, width := range []int{80, 160} {
		var b strings.Builder
		r := newRenderer("table", &b, renderOptions{width: width})
		cols := columnsOf(bs[0].Schema())
		r.header(cols)
		for _, batch := range bs {
			rows, err := batchRows(ctx, batch)
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range rows {
				r.row(row)
			}
		}
		r.done(2, 0)
		out := b.String()
		golden(t, fmt.Sprintf("table_wide_%d.golden", width), out)
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		for _, l := range lines[:len(lines)-1] {
			if n := runewidth.StringWidth(l); n > width {
				t.Errorf("%d columns: line %q is %d wide", width, l, n)
			}
		}
		header := lines[1]
		for _, name := range []string{"file_path", "sort_order_id"} {
			if !strings.Contains(header, " "+name+" ") {
				t.Errorf("%d columns: the outer column %s is not shown in full: %q", width, name, header)
			}
		}
		if !strings.Contains(out, "data/00000-0-5b6f0a2e-8d3c-4c44-9a57-0e3f3c1d2b7a.parquet") && width == 160 {
			t.Errorf("160 columns: the first column's value is cut:\n%s", out)
		}
		if !strings.Contains(lines[len(lines)-1], "11 columns (") {
			t.Errorf("%d columns: the footer does not count the columns: %q", width, lines[len(lines)-1])
		}
	}
}

// TestExplainWraps: a one-column result whose lines are wider than the
// terminal (EXPLAIN) wraps them instead of cutting them.
func TestExplainWraps(t *testing.T) {
	var b strings.Builder
	r := newRenderer("table", &b, renderOptions{width: 40})
	r.header([]column{{name: "plan", typ: "text"}})
	long := "  Scan main.c@1234 [id, name, tier] pushed=GreaterThan(term=Reference(name='id'), literal=1)"
	r.row([]cell{{text: "logical plan:"}})
	r.row([]cell{{text: long}})
	r.done(2, 0)
	out := b.String()
	var joined strings.Builder
	body := false
	for _, l := range strings.Split(out, "\n") {
		if n := runewidth.StringWidth(l); n > 40 {
			t.Errorf("line %q is %d wide", l, n)
		}
		switch {
		case strings.HasPrefix(l, "├"):
			body = true
		case strings.HasPrefix(l, "└"):
			body = false
		case body:
			joined.WriteString(strings.TrimSpace(strings.Trim(l, "│")))
		}
	}
	if want := strings.ReplaceAll(long, " ", ""); strings.ReplaceAll(joined.String(), " ", "") != "logicalplan:"+want {
		t.Fatalf("the wrapped plan lost text:\n%s", out)
	}
}
