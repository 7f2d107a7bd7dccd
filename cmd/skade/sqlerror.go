package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

// reportError prints a statement's error. When the error knows where in
// the statement it is (syntax and binder errors do), the offending line is
// printed under it with a caret at the column, as psql does:
//
//	Error: column "stauts" not found in table "events"; did you mean "status"?
//	LINE 1: SELECT stauts FROM events
//	               ^
//
// line is where the statement starts in its script, so that a script's
// errors name the script line.
func (sh *shell) reportError(text string, line int, err error) {
	msg, pos := errorPosition(err)
	var b strings.Builder
	at := line
	if pos.Line > 0 {
		at = line + pos.Line - 1
	}
	b.WriteString(sh.where(at) + "Error: " + msg + "\n")
	if pos.Line > 0 {
		b.WriteString(caret(text, pos))
	}
	fmt.Fprint(sh.stderr, b.String())
}

// errorPosition returns an error's message without the position it
// carries, and that position (Line 0 when it has none).
func errorPosition(err error) (string, parser.Pos) {
	if errors.Is(err, errInterrupted) {
		return "interrupted; the statement was cancelled", parser.Pos{}
	}
	var pe *parser.Error
	if errors.As(err, &pe) {
		return pe.Error(), parser.Pos{Line: pe.Line, Column: pe.Column, Offset: pe.Offset}
	}
	var be *plan.Error
	if errors.As(err, &be) {
		return be.Msg, be.Pos
	}
	return err.Error(), parser.Pos{}
}

// caret renders line pos.Line of text with a caret under pos.Column
// (1-based, in characters), tabs kept so that the caret lines up.
func caret(text string, pos parser.Pos) string {
	lines := strings.Split(text, "\n")
	if pos.Line < 1 || pos.Line > len(lines) {
		return ""
	}
	src := strings.TrimRight(lines[pos.Line-1], "\r")
	prefix := fmt.Sprintf("LINE %d: ", pos.Line)
	// A long line is shown as a window around the column, as psql does,
	// so that a 200,000-character literal does not fill the terminal.
	const window = 60
	if r := []rune(src); len(r) > 2*window+20 {
		lo := max(pos.Column-1-window, 0)
		hi := min(pos.Column-1+window, len(r))
		head, tail := "", ""
		if lo > 0 {
			head = "…"
		}
		if hi < len(r) {
			tail = "…"
		}
		src = head + string(r[lo:hi]) + tail
		pos.Column = pos.Column - lo + len([]rune(head))
	}
	var pad strings.Builder
	pad.WriteString(strings.Repeat(" ", len(prefix)))
	col := 1
	for _, r := range src {
		if col >= pos.Column {
			break
		}
		if r == '\t' {
			pad.WriteByte('\t')
		} else {
			pad.WriteByte(' ')
		}
		col++
	}
	return prefix + src + "\n" + pad.String() + "^\n"
}
