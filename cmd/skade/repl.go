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
			ed.AppendHistory(strings.Join(entry, " "))
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
