package main

import (
	"testing"
	"time"
)

func TestProgressText(t *testing.T) {
	cases := []struct {
		elapsed time.Duration
		pr      engineProgress
		want    string
	}{
		{1200 * time.Millisecond, engineProgress{}, "⠹ running · 1.2 s · Ctrl-C cancels"},
		{2 * time.Second, engineProgress{files: 3, rows: 1_234_567}, "⠋ 3 files · 1.23M rows · 2 s · Ctrl-C cancels"},
		{2 * time.Second, engineProgress{files: 1}, "⠋ 1 file · 2 s · Ctrl-C cancels"},
		{1500 * time.Millisecond, engineProgress{filesDone: 1, filesTotal: 4, rows: 42_000}, "[█████░░░░░░░░░░░░░░░] 1/4 files · 42k rows · 1.5 s · Ctrl-C cancels"},
	}
	for _, c := range cases {
		if got := progressText(c.elapsed, c.pr); got != c.want {
			t.Errorf("progressText(%v, %+v) = %q, want %q", c.elapsed, c.pr, got, c.want)
		}
	}
}
