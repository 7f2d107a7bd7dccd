package main

import (
	"bufio"
	"errors"
	"io"
	"strings"

	"github.com/skadedb/skade/parser"
)

// errQuit is returned by .quit: stop reading input, successfully.
var errQuit = errors.New("quit")

// feeder gathers input lines into statements, which end at a semicolon
// outside strings, quoted names and comments, and runs each as soon as it
// is complete. A line starting with "." between statements is a dot command.
type feeder struct {
	sh      *shell
	bail    bool // stop at the first error
	buf     strings.Builder
	bufLine int // the input line the buffer starts on
	failed  bool
}

// pending reports whether a statement has begun but not ended.
func (f *feeder) pending() bool { return strings.TrimSpace(f.buf.String()) != "" }

// reset forgets a half-typed statement (Ctrl-C at the prompt).
func (f *feeder) reset() { f.buf.Reset() }

// completes reports whether feeding text, a buffer of lines, would leave
// no statement pending: every statement in it ends with ';', or its first
// line is a dot or psql command. The line editor asks it on Enter, to
// decide between running the buffer and opening another line.
func (f *feeder) completes(text string) bool {
	pending := f.buf.String()
	for line := range strings.Lines(text + "\n") {
		line = strings.TrimSuffix(line, "\n")
		if strings.TrimSpace(pending) == "" {
			pending = ""
			trimmed := strings.TrimSpace(line)
			if trimmed == "" {
				continue
			}
			if _, _, ok := psqlLine(trimmed); ok || strings.HasPrefix(trimmed, ".") {
				continue
			}
		}
		pending += line + "\n"
		if !parser.Incomplete(pending) {
			pending = ""
		}
	}
	return strings.TrimSpace(pending) == ""
}

// line feeds one line of input, numbered n. It returns errQuit, or
// errReported when something failed and the feeder bails.
func (f *feeder) line(text string, n int) error {
	if !f.pending() {
		f.buf.Reset()
		trimmed := strings.TrimSpace(text)
		if trimmed == "" {
			return nil
		}
		if dot, sql, ok := psqlLine(trimmed); ok {
			if sql != "" {
				return f.result(f.sh.statement(sql, n))
			}
			return f.result(f.sh.dot(dot, n, f.bail))
		}
		if strings.HasPrefix(trimmed, ".") {
			return f.result(f.sh.dot(trimmed, n, f.bail))
		}
		f.bufLine = n
	}
	f.buf.WriteString(text)
	f.buf.WriteByte('\n')
	if parser.Incomplete(f.buf.String()) {
		return f.runTerminated()
	}
	return f.run()
}

// runTerminated runs the statements that have ended when the input's last
// one has not ("SELECT 1; SELECT" runs the first), keeping the rest.
func (f *feeder) runTerminated() error {
	script := f.buf.String()
	var done []parser.Segment
	end := -1
	for _, seg := range parser.Split(script) {
		if !seg.Terminated {
			break
		}
		done = append(done, seg)
		// INVARIANT: Split trims only whitespace after a statement's text,
		// so its semicolon is the next non-space byte.
		stop := seg.Pos.Offset + len(seg.Text)
		end = stop + strings.IndexByte(script[stop:], ';')
	}
	if len(done) == 0 || end < 0 {
		return nil
	}
	rest := script[end+1:]
	startLine := f.bufLine
	f.buf.Reset()
	f.buf.WriteString(rest)
	f.bufLine = startLine + strings.Count(script[:end+1], "\n")
	for _, seg := range done {
		if err := f.result(f.sh.statement(seg.Text, startLine+seg.Pos.Line-1)); err != nil {
			return err
		}
	}
	return nil
}

// flush runs what is left at the end of input, even without a semicolon.
func (f *feeder) flush() error {
	if !f.pending() {
		return nil
	}
	return f.run()
}

func (f *feeder) run() error {
	script := f.buf.String()
	f.buf.Reset()
	for _, seg := range parser.Split(script) {
		if err := f.result(f.sh.statement(seg.Text, f.bufLine+seg.Pos.Line-1)); err != nil {
			return err
		}
	}
	return nil
}

func (f *feeder) result(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errQuit):
		return errQuit
	}
	f.failed = true
	if f.bail {
		return errReported
	}
	return nil
}

// runScript runs a script read from r; source names it in error messages.
// It returns errQuit, errReported when a statement failed (after the
// first with bail, after all without), or an error reading r.
func (sh *shell) runScript(r io.Reader, source string, bail bool) error {
	prev := sh.source
	sh.source = source
	defer func() { sh.source = prev }()
	f := &feeder{sh: sh, bail: bail}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 256<<20)
	n := 0
	for sc.Scan() {
		n++
		if err := f.line(sc.Text(), n); err != nil {
			return err
		}
		if err := sh.ctx.Err(); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := f.flush(); err != nil {
		return err
	}
	if f.failed {
		return errReported
	}
	return nil
}
