package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skadedb/skade/lake"
)

// progressDelay is how long a statement runs before its progress shows:
// quick statements should not flicker.
const progressDelay = time.Second

// progressBar draws a statement's progress on stderr (a terminal) once it
// has run for progressDelay, redrawn every 100 ms: how much of the
// planned work is done, as a bar and a percentage (rows read of those
// planned when the engine knows them, else data files), the files, the
// rows read, the time so far and an estimate of the time left. The engine reports into the
// bar's counter through the statement's context (see context). A nil
// *progressBar does nothing, so that callers need not ask whether the
// output is a terminal.
type progressBar struct {
	w     io.Writer
	width int
	start time.Time

	counter lake.Progress
	// nrows is the result rows the shell has read: what a query with no
	// table scan (SELECT ... FROM range(...)) can show.
	nrows atomic.Int64

	mu     sync.Mutex
	drawn  bool
	closed bool
	// midLine: output written through writer left the cursor inside a
	// line, where drawing would overwrite it.
	midLine bool
	quit    chan struct{}
	wg      sync.WaitGroup
}

func (sh *shell) startProgress() *progressBar {
	if !sh.progress {
		return nil
	}
	return startProgress(sh.stderr)
}

// startProgress starts a bar on w; stop it when the work ends.
func startProgress(w io.Writer) *progressBar {
	p := newProgressBar(w)
	p.wg.Add(1)
	go p.loop()
	return p
}

// newProgressBar returns a bar that draws only when asked (draw); the
// tests use it without the ticker.
func newProgressBar(w io.Writer) *progressBar {
	return &progressBar{w: w, width: terminalWidth(w), start: time.Now(), quit: make(chan struct{})}
}

// terminalProgress starts a bar on e.stderr when the command's output is
// a terminal, else returns nil: the subcommands' bar.
func (e *env) terminalProgress() *progressBar {
	if isTerminal(e.stdout) && isTerminal(e.stderr) {
		return startProgress(e.stderr)
	}
	return nil
}

func (p *progressBar) loop() {
	defer p.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			return
		case <-t.C:
			if time.Since(p.start) >= progressDelay {
				p.draw()
			}
		}
	}
}

// context returns ctx carrying the bar's counter, for the statement (or
// compaction) whose progress the bar shows.
func (p *progressBar) context(ctx context.Context) context.Context {
	if p == nil {
		return ctx
	}
	return lake.WithProgress(ctx, &p.counter)
}

// progress is the counter the engine reports into; nil for a nil bar
// (lake.Progress's methods accept a nil receiver).
func (p *progressBar) progress() *lake.Progress {
	if p == nil {
		return nil
	}
	return &p.counter
}

// rows records how many result rows the shell has read.
func (p *progressBar) rows(n int64) {
	if p != nil {
		p.nrows.Store(n)
	}
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (p *progressBar) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.midLine {
		return
	}
	s := progressText(time.Since(p.start), p.snapshot())
	if p.width > 0 && len([]rune(s)) > p.width {
		s = string([]rune(s)[:p.width])
	}
	io.WriteString(p.w, "\r"+s+"\x1b[K")
	p.drawn = true
}

// snapshot reads the counters. FilesDone is read before FilesTotal: a
// file is planned before it is done, so done never exceeds total.
func (p *progressBar) snapshot() engineProgress {
	done := p.counter.FilesDone.Load()
	total := p.counter.FilesTotal.Load()
	return engineProgress{
		filesDone:  min(done, total),
		filesTotal: total,
		rows:       max(p.counter.Rows.Load(), p.nrows.Load()),
		rowsTotal:  p.counter.RowsTotal.Load(),
		bytes:      p.counter.Bytes.Load(),
		bytesTotal: p.counter.BytesTotal.Load(),
	}
}

// engineProgress is what the bar knows of a running statement.
type engineProgress struct {
	filesDone, filesTotal, rows int64
	// rowsTotal is the rows the planned work will read, when known
	rowsTotal int64
	// bytes of bytesTotal read from inputs whose rows are not known (CSV)
	bytes, bytesTotal int64
}

// fraction is how much of the planned work is done, from the rows read
// of those planned when known, else from the bytes of CSV input read,
// else from the files; ok is false when
// neither is known. Rows deleted by delete files are planned but never
// read, so with them it ends short of 1.
func (pr engineProgress) fraction() (f float64, ok bool) {
	switch {
	case pr.rowsTotal > 0:
		f = float64(min(pr.rows, pr.rowsTotal)) / float64(pr.rowsTotal)
	case pr.bytesTotal > 0:
		f = float64(min(pr.bytes, pr.bytesTotal)) / float64(pr.bytesTotal)
	case pr.filesTotal > 0:
		f = float64(pr.filesDone) / float64(pr.filesTotal)
	default:
		return 0, false
	}
	return min(f, 1), true
}

// progressText is the bar's line: a bar of the files done when files are
// planned, else a spinner; then the files, the rows and the time so far.
func progressText(elapsed time.Duration, pr engineProgress) string {
	var parts []string
	f, known := pr.fraction()
	if known {
		const n = 20
		k := int(f * n)
		parts = append(parts, "["+strings.Repeat("█", k)+strings.Repeat("░", n-k)+"]", fmt.Sprintf("%d%%", int(f*100)))
	} else {
		parts = append(parts, spinner[int(elapsed/(100*time.Millisecond))%len(spinner)])
	}
	if pr.filesTotal > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d files", pr.filesDone, pr.filesTotal))
	}
	if pr.rows > 0 {
		parts = append(parts, humanCount(pr.rows)+" rows")
	} else if !known {
		parts = append(parts, "running")
	}
	parts = append(parts, formatElapsed(elapsed.Truncate(100*time.Millisecond)))
	if known && f >= 0.01 && f < 1 {
		// what is left at the rate so far
		left := time.Duration(float64(elapsed) * (1 - f) / f)
		parts = append(parts, "ETA "+formatElapsed(left.Round(time.Second)))
	}
	parts = append(parts, "Ctrl-C cancels")
	return parts[0] + " " + strings.Join(parts[1:], " · ")
}

// writer wraps w, where results go, so that the bar is erased before
// every write, under the bar's lock: a tick cannot draw into the middle of
// the output, and the bar comes back below it on the next tick.
func (p *progressBar) writer(w io.Writer) io.Writer {
	if p == nil {
		return w
	}
	return &barWriter{p: p, w: w}
}

type barWriter struct {
	p *progressBar
	w io.Writer
}

func (b *barWriter) Write(s []byte) (int, error) {
	b.p.mu.Lock()
	defer b.p.mu.Unlock()
	b.p.erase()
	n, err := b.w.Write(s)
	if n > 0 {
		b.p.midLine = s[n-1] != '\n'
	}
	return n, err
}

// erase removes a drawn bar; the caller holds p.mu.
func (p *progressBar) erase() {
	if p.drawn {
		io.WriteString(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// stop ends the bar and erases it; it is safe to call twice.
func (p *progressBar) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.quit)
	p.erase()
	p.mu.Unlock()
	p.wg.Wait()
}

// humanCount prints 1234567 as 1.23M.
func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.3gG", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.3gM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.3gk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
