package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/scan"
)

func TestProgressText(t *testing.T) {
	cases := []struct {
		elapsed time.Duration
		pr      engineProgress
		want    string
	}{
		{1200 * time.Millisecond, engineProgress{}, "⠹ running · 1.2 s · Ctrl-C cancels"},
		{2 * time.Second, engineProgress{rows: 1_234_567}, "⠋ 1.23M rows · 2 s · Ctrl-C cancels"},
		{1500 * time.Millisecond, engineProgress{filesDone: 1, filesTotal: 4, rows: 42_000}, "[█████░░░░░░░░░░░░░░░] 25% · 1/4 files · 42k rows · 1.5 s · ETA 5 s · Ctrl-C cancels"},
		{3 * time.Second, engineProgress{filesDone: 0, filesTotal: 3}, "[░░░░░░░░░░░░░░░░░░░░] 0% · 0/3 files · 3 s · Ctrl-C cancels"},
		{125 * time.Second, engineProgress{filesDone: 7, filesTotal: 7, rows: 9}, "[████████████████████] 100% · 7/7 files · 9 rows · 2m05s · Ctrl-C cancels"},
		// rows planned give a percentage inside one big file
		{10 * time.Second, engineProgress{filesDone: 0, filesTotal: 1, rows: 2_500_000, rowsTotal: 10_000_000}, "[█████░░░░░░░░░░░░░░░] 25% · 0/1 files · 2.5M rows · 10 s · ETA 30 s · Ctrl-C cancels"},
		// a CSV file: the bytes the parser consumed
		{6 * time.Second, engineProgress{filesTotal: 1, rows: 300_000, bytes: 30 << 20, bytesTotal: 120 << 20}, "[█████░░░░░░░░░░░░░░░] 25% · 0/1 files · 300k rows · 6 s · ETA 18 s · Ctrl-C cancels"},
		// a series: rows and no files
		{4 * time.Second, engineProgress{rows: 5_000_000, rowsTotal: 20_000_000}, "[█████░░░░░░░░░░░░░░░] 25% · 5M rows · 4 s · ETA 12 s · Ctrl-C cancels"},
	}
	for _, c := range cases {
		if got := progressText(c.elapsed, c.pr); got != c.want {
			t.Errorf("progressText(%v, %+v) = %q, want %q", c.elapsed, c.pr, got, c.want)
		}
	}
}

// The bar shows what the engine reports into the counter its context
// carries, and erases itself when it stops.
func TestProgressBarShowsEngineCounts(t *testing.T) {
	lk, err := lake.Open(context.Background(), filepath.Join(t.TempDir(), "lake"))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	sess := lk.Session()
	csv := filepath.Join("..", "..", "testdata", "events.csv")
	res, err := sess.SQL(context.Background(), "CREATE TABLE events AS SELECT * FROM read_csv('"+csv+"') WHERE false")
	if err != nil {
		t.Fatal(err)
	}
	res.Close()

	var w bytes.Buffer
	bar := newProgressBar(&w)
	res, err = sess.SQL(bar.context(context.Background()), "COPY events FROM '"+csv+"'")
	if err != nil {
		t.Fatal(err)
	}
	res.Close()
	bar.draw()
	const drawn = "\r[████████████████████] 100% · 1/1 files · 8 rows · "
	if !strings.HasPrefix(w.String(), drawn) {
		t.Fatalf("bar drew %q, want it to start with %q", w.String(), drawn)
	}

	// Output through the bar's writer erases the bar first; the bar does
	// not draw over a line the output has not finished.
	var out bytes.Buffer
	outw := bar.writer(&out)
	w.Reset()
	io.WriteString(outw, "id,status\n1,n")
	if w.String() != "\r\x1b[K" {
		t.Fatalf("writing output: the bar wrote %q, want the erase sequence", w.String())
	}
	bar.draw()
	if w.String() != "\r\x1b[K" {
		t.Fatalf("the bar drew %q mid-line", w.String()[len("\r\x1b[K"):])
	}
	io.WriteString(outw, "ew\n")
	bar.draw()
	if !strings.HasPrefix(w.String(), "\r\x1b[K"+drawn) {
		t.Fatalf("after a whole line the bar wrote %q, want it drawn again", w.String())
	}
	if out.String() != "id,status\n1,new\n" {
		t.Fatalf("output %q was changed", out.String())
	}

	bar.stop()
	if !strings.HasSuffix(w.String(), "Ctrl-C cancels\x1b[K\r\x1b[K") {
		t.Fatalf("bar did not erase itself on stop: %q", w.String())
	}
	n := w.Len()
	bar.draw()
	bar.stop()
	if w.Len() != n {
		t.Fatalf("a stopped bar wrote %q", w.String()[n:])
	}
}

// A nil bar (the output is not a terminal) changes nothing.
func TestNilProgressBar(t *testing.T) {
	var bar *progressBar
	ctx := context.Background()
	if bar.context(ctx) != ctx || bar.progress() != nil {
		t.Fatal("a nil bar attached a counter")
	}
	bar.rows(5)
	var out bytes.Buffer
	if bar.writer(&out) != io.Writer(&out) {
		t.Fatal("a nil bar wrapped the output")
	}
	bar.stop()
	sh := &shell{progress: false}
	if sh.startProgress() != nil {
		t.Fatal("a shell without a terminal started a bar")
	}
}

// import reads its file through countingReader, which reports the file
// and its rows.
func TestCountingReaderReportsFiles(t *testing.T) {
	rdr, err := scan.OpenCSV(filepath.Join("..", "..", "testdata", "events.csv"), scan.DefaultCSVOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var p lake.Progress
	c := newCountingReader(rdr, &p)
	if got := fmt.Sprint(p.FilesTotal.Load(), p.FilesDone.Load()); got != "1 0" {
		t.Fatalf("before reading: files total, done = %s, want 1 0", got)
	}
	for c.Next() {
	}
	if got := fmt.Sprint(p.FilesTotal.Load(), p.FilesDone.Load(), p.Rows.Load(), c.rows); got != "1 1 8 8" {
		t.Fatalf("after reading: files total, done, rows, counted = %s, want 1 1 8 8", got)
	}
}
