package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/peterh/liner"
)

const (
	prompt             = "skade> "
	txPrompt           = "skade*> " // inside BEGIN … COMMIT, as psql's =*>
	continuationPrompt = "   ...> "
	historyFile        = ".skade_history"
)

// repl is the interactive shell: line editing, history in
// ~/.skade_history, multi-line statements, Ctrl-C to clear the input or
// cancel the running statement, Ctrl-D to leave.
func (sh *shell) repl(lakeDir string) error {
	sh.interactive = true
	sh.timer = true
	sh.maxRows = 40
	// Between statements Ctrl-C must not end the shell: a statement routes
	// it to its own context while it runs, and at the prompt the line
	// editor sees it as a key.
	defer interrupts.route(func() {})()
	ed := liner.NewLiner()
	defer ed.Close()
	ed.SetCtrlCAborts(true)
	ed.SetTabCompletionStyle(liner.TabPrints)
	ed.SetWordCompleter(sh.complete)

	histPath := ""
	if home, err := os.UserHomeDir(); err == nil {
		histPath = filepath.Join(home, historyFile)
		if f, err := os.Open(histPath); err == nil {
			ed.ReadHistory(f)
			f.Close()
		}
	}
	saveHistory := func() {
		if histPath == "" {
			return
		}
		f, err := os.OpenFile(histPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return
		}
		ed.WriteHistory(f)
		f.Close()
	}

	fmt.Fprintf(sh.stdout, "skade shell on lake %s\nEnter .help for the commands; end statements with ';'.\n", lakeDir)
	f := &feeder{sh: sh}
	var entry []string // the lines of the statement being typed, for history
	n := 0
	for {
		p := prompt
		if sh.sess.InTransaction() {
			p = txPrompt
		}
		if f.pending() {
			p = continuationPrompt
		}
		text, err := ed.Prompt(p)
		switch {
		case errors.Is(err, liner.ErrPromptAborted):
			f.reset()
			entry = nil
			continue
		case errors.Is(err, io.EOF):
			fmt.Fprintln(sh.stdout)
			return nil
		case err != nil:
			return err
		}
		n++
		if strings.TrimSpace(text) != "" {
			entry = append(entry, strings.TrimSpace(text))
		}
		err = f.line(text, n)
		if !f.pending() && len(entry) > 0 {
			ed.AppendHistory(historyEntry(entry))
			entry = nil
			saveHistory()
		}
		if errors.Is(err, errQuit) {
			return nil
		}
		if sh.ctx.Err() != nil {
			return sh.ctx.Err()
		}
	}
}

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
