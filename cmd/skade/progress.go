package main

import (
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
// has run for progressDelay: the files read of those planned, when the
// engine says, and the rows so far. A nil *progressBar does nothing.
type progressBar struct {
	w     io.Writer
	width int
	start time.Time

	nrows atomic.Int64
	res   atomic.Pointer[lake.Result]

	mu     sync.Mutex
	drawn  bool
	closed bool
	quit   chan struct{}
	wg     sync.WaitGroup
}

func (sh *shell) startProgress() *progressBar {
	if !sh.progress {
		return nil
	}
	return startProgress(sh.stderr)
}

// startProgress starts a bar on w; stop it when the work ends.
func startProgress(w io.Writer) *progressBar {
	p := &progressBar{w: w, width: terminalWidth(w), start: time.Now(), quit: make(chan struct{})}
	p.wg.Add(1)
	go p.loop()
	return p
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

// watch gives the bar the running result to ask for engine progress.
func (p *progressBar) watch(res *lake.Result) {
	if p != nil {
		p.res.Store(res)
	}
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
	if p.closed {
		return
	}
	var pr engineProgress
	if res := p.res.Load(); res != nil {
		pr = progressOf(res)
	}
	pr.rows = max(pr.rows, p.nrows.Load())
	s := progressText(time.Since(p.start), pr)
	if p.width > 0 && len([]rune(s)) > p.width {
		s = string([]rune(s)[:p.width])
	}
	io.WriteString(p.w, "\r"+s+"\x1b[K")
	p.drawn = true
}

// progressText is the bar's line: a bar when the files done of the total
// are known, else a spinner; then what is known of files and rows.
func progressText(elapsed time.Duration, pr engineProgress) string {
	var parts []string
	if pr.filesTotal > 0 {
		const n = 20
		k := min(n, int(float64(pr.filesDone)/float64(pr.filesTotal)*n))
		parts = append(parts, "["+strings.Repeat("█", k)+strings.Repeat("░", n-k)+"]", fmt.Sprintf("%d/%d files", pr.filesDone, pr.filesTotal))
	} else {
		parts = append(parts, spinner[int(elapsed/(100*time.Millisecond))%len(spinner)])
		if pr.files > 0 {
			parts = append(parts, plural(pr.files, "file", "files"))
		}
	}
	if pr.rows > 0 {
		parts = append(parts, humanCount(pr.rows)+" rows")
	} else if pr.files == 0 && pr.filesTotal == 0 {
		parts = append(parts, "running")
	}
	parts = append(parts, formatElapsed(elapsed.Truncate(100*time.Millisecond)), "Ctrl-C cancels")
	return parts[0] + " " + strings.Join(parts[1:], " · ")
}

// clear erases the bar before results are printed; it redraws on the next tick.
func (p *progressBar) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
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
	if p.drawn {
		io.WriteString(p.w, "\r\x1b[K")
		p.drawn = false
	}
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

// engineProgress is what the engine tells about a running statement.
type engineProgress struct {
	filesDone, filesTotal, files, rows int64
}

// progressOf asks the result for its scans' progress. The engine counts
// the files a scan planned and the rows it produced, not the files it has
// finished, so the bar cannot show a fraction yet: filesDone and
// filesTotal stay 0 and the bar spins.
func progressOf(res *lake.Result) engineProgress {
	p := res.Progress()
	return engineProgress{files: p.FilesPlanned, rows: p.RowsScanned}
}
