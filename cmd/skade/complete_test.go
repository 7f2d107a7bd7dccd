package main

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skadedb/skade/lake"
)

func TestComplete(t *testing.T) {
	ctx := context.Background()
	lk, err := lake.Open(ctx, filepath.Join(t.TempDir(), "lake"))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	var out bytes.Buffer
	sh := newShell(ctx, lk, &out, &out)
	if err := sh.runScript(bytes.NewReader([]byte("CREATE TABLE events (id BIGINT, status VARCHAR, seen_at TIMESTAMP);\nCREATE TABLE evidence (x INT);")), "", true); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	cases := []struct {
		line string
		want []string
	}{
		{"sel", []string{"select "}},
		{"SEL", []string{"SELECT "}},
		{"SELECT * FROM ev", []string{"events", "evidence"}},
		{"SELECT * FROM even", []string{"events "}},
		{"SELECT s", []string{"select", "set", "show", "smallint", "sum"}},
		{"SELECT st FROM events", nil}, // the cursor is set below
		{"SELECT events.s", []string{"events.seen_at", "events.status"}},
		{"SELECT stat FROM events", nil},
		{"SELECT * FROM events$s", []string{"events$snapshots "}},
		{"SELECT * FROM evidence$", []string{"evidence$all_data_files", "evidence$all_delete_files", "evidence$all_entries", "evidence$all_files", "evidence$all_manifests", "evidence$data_files", "evidence$delete_files", "evidence$entries", "evidence$files", "evidence$history", "evidence$manifests", "evidence$metadata_log_entries", "evidence$partitions", "evidence$position_deletes", "evidence$properties", "evidence$refs", "evidence$snapshots"}},
		{".mo", []string{".mode "}},
		{".mode j", []string{"json "}},
		{".history ev", []string{"events", "evidence"}},
		{"SELECT 'x", nil},
	}
	if head, _, tail := sh.complete("SELECT st FROM events", len("SELECT st")); head != "SELECT " || tail != " FROM events" {
		t.Errorf("mid-line completion: head %q, tail %q", head, tail)
	}
	for _, c := range cases {
		pos := len([]rune(c.line))
		switch c.line {
		case "SELECT st FROM events":
			pos = len("SELECT st")
			c.want = []string{"status "}
		case "SELECT stat FROM events":
			pos = len("SELECT stat")
			c.want = []string{"status "}
		}
		head, got, tail := sh.complete(c.line, pos)
		if !slices.Equal(got, c.want) {
			t.Errorf("complete(%q, %d) = %q, want %q", c.line, pos, got, c.want)
		}
		if rs := []rune(c.line); head+string(rs[len([]rune(head)):pos])+tail != c.line {
			t.Errorf("complete(%q, %d): head %q and tail %q do not surround the word", c.line, pos, head, tail)
		}
	}
}
