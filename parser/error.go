package parser

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a syntax error. Line and Column (1-based, Column in characters)
// and Offset (0-based bytes) locate the offending token, Near is its text
// (empty at end of input), Expected lists what would have been accepted
// there, and Msg explains anything more specific.
type Error struct {
	Line     int
	Column   int
	Offset   int
	Near     string
	Expected []string
	Msg      string

	src string // the whole input, for Caret
}

// Error renders the message, e.g.
//
//	syntax error at line 3, column 1 near "WEHRE": expected one of WHERE, GROUP BY, ORDER BY, LIMIT, ";"
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("syntax error at line ")
	b.WriteString(strconv.Itoa(e.Line))
	b.WriteString(", column ")
	b.WriteString(strconv.Itoa(e.Column))
	if e.Near == "" {
		b.WriteString(" at end of input")
	} else {
		b.WriteString(" near ")
		b.WriteString(strconv.Quote(Abbrev(e.Near)))
	}
	sep := ": "
	if len(e.Expected) > 0 {
		b.WriteString(sep)
		if len(e.Expected) == 1 {
			b.WriteString("expected ")
		} else {
			b.WriteString("expected one of ")
		}
		b.WriteString(strings.Join(e.Expected, ", "))
		sep = "; "
	}
	if e.Msg != "" {
		b.WriteString(sep)
		b.WriteString(e.Msg)
	}
	return b.String()
}

// Caret renders the source line holding the error with a caret under the
// error's column, the way psql does:
//
//	WEHRE x = 1
//	^
//
// Tabs before the column are kept so the caret lines up in a terminal.
func (e *Error) Caret() string {
	if e.src == "" && e.Offset == 0 {
		return ""
	}
	off := min(max(e.Offset, 0), len(e.src))
	start := strings.LastIndexByte(e.src[:off], '\n') + 1
	end := strings.IndexByte(e.src[off:], '\n')
	if end < 0 {
		end = len(e.src)
	} else {
		end += off
	}
	line := strings.TrimRight(e.src[start:end], "\r")
	var pad strings.Builder
	for _, r := range e.src[start:off] {
		if r == '\t' {
			pad.WriteByte('\t')
		} else {
			pad.WriteByte(' ')
		}
	}
	return line + "\n" + pad.String() + "^"
}

// Abbrev cuts a token or value echoed in an error message to a readable
// length, saying how long it was: a 200,000-digit literal made a 600 KB
// message.
func Abbrev(s string) string {
	const keep = 48
	if utf8.RuneCountInString(s) <= keep+16 {
		return s
	}
	r := []rune(s)
	return string(r[:keep]) + "…(" + strconv.Itoa(len(r)) + " characters)"
}
