package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDemo runs the README's first command, `skade sql -f
// testdata/demo.sql`, and checks that its output is what the README shows,
// up to snapshot ids, commit times and the column widths they change.
func TestDemo(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown, ok := demoBlock(string(readme))
	if !ok {
		t.Fatal("README.md has no demo output between <!-- demo output: begin --> and <!-- demo output: end -->")
	}
	if !strings.Contains(string(readme), "\ngo run ./cmd/skade sql -f testdata/demo.sql\n") {
		t.Fatal("README.md's first command is not `go run ./cmd/skade sql -f testdata/demo.sql`")
	}

	t.Chdir(root) // the demo reads testdata/events.csv relative to the repository
	code, stdout, stderr := skade(t, "--lake", filepath.Join(t.TempDir(), "lake"), "sql", "-f", "testdata/demo.sql")
	if code != 0 {
		t.Fatalf("demo exited %d\nstderr: %s", code, stderr)
	}
	got, want := normalizeDemo(stdout+stderr), normalizeDemo(shown)
	if got != want {
		t.Errorf("the demo's output no longer matches README.md; paste this run's output into its Demo section:\n%s\n--- normalized got ---\n%s\n--- normalized README ---\n%s", stdout+stderr, got, want)
	}
	// The time-travel read shows the rows as they were before the change.
	if !strings.Contains(stdout, "│      2 │ paid   │ 2026-01-05 10:02:31 │") {
		t.Errorf("time travel did not read the pre-change snapshot:\n%s", stdout)
	}
}

func demoBlock(readme string) (string, bool) {
	_, rest, ok := strings.Cut(readme, "<!-- demo output: begin -->\n```text\n")
	if !ok {
		return "", false
	}
	block, _, ok := strings.Cut(rest, "```\n<!-- demo output: end -->")
	return block, ok
}

var (
	commitTimes = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00`)
	padding     = regexp.MustCompile(`[ ─]+`)
)

// normalizeDemo numbers snapshot ids in order of appearance (keeping which
// id is whose parent), masks commit times, and drops padding, which
// depends on the widths of the ids.
func normalizeDemo(s string) string {
	ids := map[string]string{}
	s = snapshotIDs.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = "#" + string(rune('A'+len(ids)))
		}
		return ids[id]
	})
	s = commitTimes.ReplaceAllString(s, "<time>")
	return padding.ReplaceAllString(s, "")
}
