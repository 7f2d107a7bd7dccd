package parser

import "strings"

// Segment is one statement of a script as found by Split: its text
// (without the terminating semicolon, leading comments and surrounding
// whitespace) and where that text starts.
type Segment struct {
	Text string
	Pos  Pos
	// Terminated reports whether a semicolon ended the statement.
	Terminated bool
}

// scanState is where a byte scan over SQL text stopped.
type scanState uint8

const (
	inCode scanState = iota
	inString
	inEString
	inQIdent
	inBlockComment
)

// Split cuts a script into statements at semicolons that are outside
// strings, quoted identifiers and comments. It never fails: an unterminated
// string or comment runs to the end of the input, which is the last
// segment. Segments holding only whitespace and comments are dropped.
//
// A script that ends inside a block comment keeps that last span as a
// segment, so that parsing it reports the unterminated comment instead of
// the script passing as if the comment were closed.
func Split(script string) []Segment {
	var segs []Segment
	lastStart, lastEnd := -1, -1
	st := splitScan(script, func(start, end int, terminated bool) {
		text := script[start:end]
		rest := skipComments(text)
		trimmed := strings.TrimSpace(rest)
		if !terminated {
			lastStart, lastEnd = start, end
		}
		if trimmed == "" {
			return
		}
		lead := start + len(text) - len(rest)
		segs = append(segs, Segment{Text: trimmed, Pos: posOf(script, lead), Terminated: terminated})
	})
	if st == inBlockComment && lastStart >= 0 && (len(segs) == 0 || segs[len(segs)-1].Terminated) {
		text := script[lastStart:lastEnd]
		lead := lastStart + len(text) - len(strings.TrimLeft(text, " \t\r\n"))
		segs = append(segs, Segment{Text: strings.TrimSpace(text), Pos: posOf(script, lead)})
	}
	return segs
}

// Incomplete reports whether a REPL should keep reading: the input ends
// inside a string, quoted identifier or block comment, or its last statement
// has content but no terminating semicolon yet.
func Incomplete(sql string) bool {
	last := false
	st := splitScan(sql, func(start, end int, terminated bool) {
		last = !terminated && strings.TrimSpace(skipComments(sql[start:end])) != ""
	})
	return st != inCode || last
}

// splitScan walks sql, calling emit for each statement span (the final one
// unterminated), and returns the state at the end of input.
func splitScan(sql string, emit func(start, end int, terminated bool)) scanState {
	st := inCode
	depth := 0
	start := 0
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch st {
		case inCode:
			switch {
			case c == ';':
				emit(start, i, true)
				start = i + 1
			case c == '\'':
				st = inString
				if i > 0 && (sql[i-1] == 'e' || sql[i-1] == 'E') && (i == 1 || !isIdentChar(sql[i-2])) {
					st = inEString
				}
			case c == '"':
				st = inQIdent
			case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
				for i < len(sql) && sql[i] != '\n' {
					i++
				}
			case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
				st, depth = inBlockComment, 1
				i++
			case isIdentChar(c):
				// skip the rest of a word so the E of "nE'" is not a prefix
				for i+1 < len(sql) && isIdentChar(sql[i+1]) {
					i++
				}
			}
		case inString, inQIdent:
			q := byte('\'')
			if st == inQIdent {
				q = '"'
			}
			if c == q {
				if i+1 < len(sql) && sql[i+1] == q {
					i++
				} else {
					st = inCode
				}
			}
		case inEString:
			if c == '\\' {
				i++
			} else if c == '\'' {
				if i+1 < len(sql) && sql[i+1] == '\'' {
					i++
				} else {
					st = inCode
				}
			}
		case inBlockComment:
			if c == '/' && i+1 < len(sql) && sql[i+1] == '*' {
				depth++
				i++
			} else if c == '*' && i+1 < len(sql) && sql[i+1] == '/' {
				depth--
				i++
				if depth == 0 {
					st = inCode
				}
			}
		}
	}
	if start <= len(sql) {
		emit(start, len(sql), false)
	}
	return st
}

// skipComments drops leading whitespace and comments; what is left starts
// with the statement's first token (or is empty).
func skipComments(s string) string {
	for {
		s = strings.TrimLeft(s, " \t\r\n\f\v")
		switch {
		case strings.HasPrefix(s, "--"):
			nl := strings.IndexByte(s, '\n')
			if nl < 0 {
				return ""
			}
			s = s[nl+1:]
		case strings.HasPrefix(s, "/*"):
			depth, i := 0, 0
			for i < len(s) {
				if strings.HasPrefix(s[i:], "/*") {
					depth++
					i += 2
				} else if strings.HasPrefix(s[i:], "*/") {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
			if depth > 0 {
				return ""
			}
			s = s[i:]
		default:
			return s
		}
	}
}

// posOf computes the Pos of byte offset off in src.
func posOf(src string, off int) Pos {
	line := 1 + strings.Count(src[:off], "\n")
	ls := strings.LastIndexByte(src[:off], '\n') + 1
	return Pos{Line: line, Column: 1 + len([]rune(src[ls:off])), Offset: off}
}
