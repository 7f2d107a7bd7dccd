package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/reeflective/readline"
)

const (
	prompt             = "skade> "
	txPrompt           = "skade*> " // inside BEGIN … COMMIT, as psql's =*>
	continuationPrompt = "   ...> "
	historyFile        = ".skade_history"
)

// repl is the interactive shell: line editing with long lines wrapped and
// a statement edited as one multi-line buffer until it ends, history in
// ~/.skade_history, Ctrl-C to clear the input or cancel the running
// statement, Ctrl-D to leave.
func (sh *shell) repl(lakeDir string) error {
	sh.interactive = true
	sh.timer = true
	sh.maxRows = 40
	// Between statements Ctrl-C must not end the shell: a statement routes
	// it to its own context while it runs, and at the prompt the line
	// editor sees it as a key.
	defer interrupts.route(func() {})()
	f := &feeder{sh: sh}
	ed := newLineEditor(sh, f)

	fmt.Fprintf(sh.stdout, "skade shell on lake %s\nEnter .help for the commands; end statements with ';'.\n", lakeDir)
	n := 0
	for {
		text, err := ed.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			f.reset()
			continue
		case errors.Is(err, io.EOF):
			fmt.Fprintln(sh.stdout)
			return nil
		case err != nil:
			return err
		}
		for line := range strings.Lines(text + "\n") {
			n++
			err = f.line(strings.TrimSuffix(line, "\n"), n)
			if errors.Is(err, errQuit) {
				return nil
			}
			if sh.ctx.Err() != nil {
				return sh.ctx.Err()
			}
		}
	}
}

// newLineEditor is the shell's line editor (reeflective/readline, which
// wraps long lines and edits a statement of several lines as one buffer):
// Enter inserts a newline until the buffer ends a statement or is a dot
// or psql command, tab completes names, and history is kept in
// ~/.skade_history.
func newLineEditor(sh *shell, f *feeder) *readline.Shell {
	ed := readline.NewShell()
	// The editor asks the terminal where the cursor is unless told not to;
	// a terminal that never answers (a pty harness, a minimal emulator)
	// would hang it. The prompt always starts a line, so its width is
	// known without asking.
	ed.Config.Set("cursor-position-probe", false)
	// Mark the lines of a statement after its first: "│" on each, "└" on
	// the last.
	ed.Config.Set("multiline-column", true)
	ed.Prompt.Primary(func() string {
		switch {
		case f.pending():
			return continuationPrompt
		case sh.sess.InTransaction():
			return txPrompt
		}
		return prompt
	})
	ed.AcceptMultiline = func(line []rune) bool { return f.completes(string(line)) }
	ed.Completer = func(line []rune, pos int) readline.Completions {
		// A lone candidate ends with a space, which the editor inserts.
		head, words, _ := sh.complete(string(line), pos)
		c := readline.CompleteValues(words...)
		c.PREFIX = string(line[len([]rune(head)):pos])
		return c
	}
	if home, err := os.UserHomeDir(); err == nil {
		ed.History.Add("history", openHistory(filepath.Join(home, historyFile)))
	}
	return ed
}

// historyLimit is how many statements the history file keeps.
const historyLimit = 1000

// historyLog is the shell's history: in memory, statements as typed
// (several lines each); in the file, one statement a line, as
// historyEntry joins them, so the file stays readable and older files
// still load. The file is rewritten with the newest historyLimit entries
// after each statement.
type historyLog struct {
	path    string
	entries []string
}

func openHistory(path string) *historyLog {
	h := &historyLog{path: path}
	if data, err := os.ReadFile(path); err == nil {
		for line := range strings.Lines(string(data)) {
			if line = strings.TrimRight(line, "\r\n"); strings.TrimSpace(line) != "" {
				h.entries = append(h.entries, line)
			}
		}
	}
	if len(h.entries) > historyLimit {
		h.entries = h.entries[len(h.entries)-historyLimit:]
	}
	return h
}

// Write adds an accepted statement and saves the file. A history file
// that cannot be written costs only the history, never the session.
func (h *historyLog) Write(line string) (int, error) {
	if strings.TrimSpace(line) == "" {
		return len(h.entries), nil
	}
	h.entries = append(h.entries, strings.TrimRight(line, "\n"))
	if len(h.entries) > historyLimit {
		h.entries = h.entries[len(h.entries)-historyLimit:]
	}
	var b strings.Builder
	for _, e := range h.entries {
		if one := historyEntry(strings.Split(e, "\n")); one != "" {
			b.WriteString(one)
			b.WriteByte('\n')
		}
	}
	_ = os.WriteFile(h.path, []byte(b.String()), 0o600)
	return len(h.entries), nil
}

// GetLine is the entry at i, oldest first.
func (h *historyLog) GetLine(i int) (string, error) {
	if i < 0 || i >= len(h.entries) {
		return "", fmt.Errorf("no history entry %d", i)
	}
	return h.entries[i], nil
}

// Len is the number of entries.
func (h *historyLog) Len() int { return len(h.entries) }

// Dump is the entries, oldest first.
func (h *historyLog) Dump() any { return h.entries }

// historyEntry joins a statement's lines into one history line (the
// history file holds one entry a line), dropping -- comments, which would
// otherwise swallow the lines joined after them.
func historyEntry(lines []string) string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if l = strings.TrimSpace(stripLineComment(l)); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, " ")
}

// stripLineComment cuts a -- comment outside quotes from one line. A line
// that continues a string or block comment from the line before can fool
// it; then the comment stays, which costs only a worse history entry.
func stripLineComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '-' && i+1 < len(line) && line[i+1] == '-':
			return line[:i]
		}
	}
	return line
}
