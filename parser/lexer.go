package parser

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// lexer splits SQL text into tokens. It tracks line and column incrementally
// so a single 300 KB line (a big INSERT … VALUES) stays linear.
type lexer struct {
	src       string
	i         int // next byte
	line      int
	lineStart int // offset of the first byte of the current line
	colOff    int // offset whose column is colNum (a cache on the current line)
	colNum    int
	decoded   bool // the last quoted() value is not a slice of src
}

func newLexer(src string) *lexer {
	return &lexer{src: src, line: 1, colNum: 1}
}

// column returns the 1-based rune column of offset off, which must be on the
// current line and not before the last offset asked about.
func (l *lexer) column(off int) int {
	if l.colOff < l.lineStart {
		l.colOff, l.colNum = l.lineStart, 1
	}
	l.colNum += utf8.RuneCountInString(l.src[l.colOff:off])
	l.colOff = off
	return l.colNum
}

func (l *lexer) newline(at int) {
	l.line++
	l.lineStart = at + 1
}

func (l *lexer) errAt(off, line, col int, near, msg string) *Error {
	return &Error{Line: line, Column: col, Offset: off, Near: near, Msg: msg, src: l.src}
}

// all lexes the whole input into compact tokens plus the decoded values of
// strings and identifiers whose text differs from the source. The EOF token
// is always last.
func (l *lexer) all() ([]rawTok, []string, error) {
	toks := make([]rawTok, 0, len(l.src)/4+1)
	var decs []string
	for {
		t, err := l.next()
		if err != nil {
			return nil, nil, err
		}
		r := rawTok{kind: t.kind, reserved: t.reserved, off: t.off, end: t.end, line: t.line, col: t.col}
		if l.decoded {
			decs = append(decs, t.val)
			r.dec = int32(len(decs))
			l.decoded = false
		}
		toks = append(toks, r)
		if t.kind == tEOF {
			return toks, decs, nil
		}
	}
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '$'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// operatorsByFirst lists the operators by first byte, longest first, so the
// scan takes the longest match without trying every operator.
var operatorsByFirst [128][]string

func init() {
	for _, op := range []string{
		"->>", "!~*",
		"::", ":=", "<=", ">=", "<>", "!=", "||", "=>", "->", "<<", ">>", "@>", "<@", "&&", "!~", "~*",
		"(", ")", "[", "]", ",", ";", ".", ":", "+", "-", "*", "/", "%", "^", "<", ">", "=",
		"~", "&", "|", "#", "{", "}",
	} {
		operatorsByFirst[op[0]] = append(operatorsByFirst[op[0]], op)
	}
}

func matchOperator(s string) string {
	if s[0] >= 128 {
		return ""
	}
	for _, op := range operatorsByFirst[s[0]] {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return ""
}

// skipSpace skips whitespace and comments. It returns an error for an
// unterminated block comment, naming where the comment started.
func (l *lexer) skipSpace() error {
	src := l.src
	if l.i == 0 && strings.HasPrefix(src, "\uFEFF") {
		// a UTF-8 byte order mark that editors put at the start of a
		// script is not part of the SQL
		l.i = len("\uFEFF")
	}
	for l.i < len(src) {
		c := src[l.i]
		switch {
		case c == '\n':
			l.newline(l.i)
			l.i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.i++
		case c == '-' && l.i+1 < len(src) && src[l.i+1] == '-':
			for l.i < len(src) && src[l.i] != '\n' {
				l.i++
			}
		case c == '/' && l.i+1 < len(src) && src[l.i+1] == '*':
			start, line, col := l.i, l.line, l.column(l.i)
			depth := 0
			for {
				if l.i+1 >= len(src) {
					l.i = len(src)
					return l.errAt(start, line, col, "/*",
						"unterminated /* comment that starts at line "+strconv.Itoa(line)+", column "+strconv.Itoa(col))
				}
				switch {
				case src[l.i] == '/' && src[l.i+1] == '*':
					// PostgreSQL nests block comments.
					depth++
					l.i += 2
				case src[l.i] == '*' && src[l.i+1] == '/':
					depth--
					l.i += 2
				default:
					if src[l.i] == '\n' {
						l.newline(l.i)
					}
					l.i++
				}
				if depth == 0 {
					break
				}
			}
		default:
			return nil
		}
	}
	return nil
}

func (l *lexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	src := l.src
	start := l.i
	t := token{off: int32(start), end: int32(start), line: int32(l.line)}
	t.col = int32(l.column(start))
	if start >= len(src) {
		t.kind = tEOF
		return t, nil
	}
	c := src[start]
	switch {
	case (c == 'e' || c == 'E') && start+1 < len(src) && src[start+1] == '\'':
		l.i++
		val, err := l.quoted('\'', true, t)
		if err != nil {
			return t, err
		}
		t.kind, t.val = tString, val
	case isIdentStart(c):
		l.i++
		for l.i < len(src) && isIdentChar(src[l.i]) {
			l.i++
		}
		t.kind = tWord
		t.val = src[start:l.i]
		t.reserved = isReserved(t.val)
	case c == '"':
		val, err := l.quoted('"', false, t)
		if err != nil {
			return t, err
		}
		if val == "" {
			return t, l.errAt(start, int(t.line), int(t.col), `""`, "zero-length quoted identifier")
		}
		t.kind, t.val = tQIdent, val
	case c == '\'':
		val, err := l.quoted('\'', false, t)
		if err != nil {
			return t, err
		}
		t.kind, t.val = tString, val
	case isDigit(c) || c == '.' && start+1 < len(src) && isDigit(src[start+1]):
		if err := l.number(&t); err != nil {
			return t, err
		}
	case c == '$' && start+1 < len(src) && isDigit(src[start+1]):
		l.i++
		for l.i < len(src) && isDigit(src[l.i]) {
			l.i++
		}
		t.kind = tParam
		t.val = src[start+1 : l.i]
		if _, err := strconv.Atoi(t.val); err != nil || len(t.val) > 6 {
			return t, l.errAt(start, int(t.line), int(t.col), src[start:l.i], "parameter number too large")
		}
	case c == '?':
		l.i++
		t.kind = tQMark
	default:
		if op := matchOperator(src[start:]); op != "" {
			l.i += len(op)
			t.kind = tOp
			t.val = op
			break
		}
		_, size := utf8.DecodeRuneInString(src[start:])
		return t, l.errAt(start, int(t.line), int(t.col), src[start:start+size], "unexpected character")
	}
	t.end = int32(l.i)
	return t, nil
}

// number lexes an integer, decimal or float. A number running straight into
// a letter is an error, as in PostgreSQL 15+: "1abc" is not 1 AS abc. As
// in PostgreSQL 16, single underscores may group digits (1_000_000); the
// value has them removed.
func (l *lexer) number(t *token) error {
	src := l.src
	start := l.i
	t.kind = tInteger
	grouped := l.digits()
	if l.i < len(src) && src[l.i] == '.' && !(l.i+1 < len(src) && src[l.i+1] == '.') {
		t.kind = tDecimal
		l.i++
		grouped = l.digits() || grouped
	}
	if l.i < len(src) && (src[l.i] == 'e' || src[l.i] == 'E') {
		j := l.i + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < len(src) && isDigit(src[j]) {
			t.kind = tFloat
			l.i = j
			grouped = l.digits() || grouped
		}
	}
	if l.i < len(src) && isIdentStart(src[l.i]) {
		end := l.i
		for end < len(src) && isIdentChar(src[end]) {
			end++
		}
		return l.errAt(start, int(t.line), int(t.col), src[start:end], "trailing junk after numeric literal")
	}
	t.val = src[start:l.i]
	if grouped {
		t.val = strings.ReplaceAll(t.val, "_", "")
		l.decoded = true
	}
	return nil
}

// digits consumes a run of digits, with single underscores between
// digits; it reports whether it saw an underscore.
func (l *lexer) digits() bool {
	src := l.src
	grouped := false
	for l.i < len(src) {
		switch {
		case isDigit(src[l.i]):
			l.i++
		case src[l.i] == '_' && l.i > 0 && isDigit(src[l.i-1]) && l.i+1 < len(src) && isDigit(src[l.i+1]):
			grouped = true
			l.i++
		default:
			return grouped
		}
	}
	return grouped
}

// quoted lexes a string or quoted identifier starting at l.i (the opening
// quote). A doubled quote stands for one. With escapes (E'…'), backslash
// sequences are decoded as PostgreSQL does. The value is a slice of the
// source unless decoding changed it.
func (l *lexer) quoted(q byte, escapes bool, t token) (string, error) {
	tline, tcol, toff := int(t.line), int(t.col), int(t.off)
	src := l.src
	l.i++ // opening quote
	begin := l.i
	var sb *strings.Builder
	flush := func(upto int) {
		if sb == nil {
			sb = &strings.Builder{}
			sb.WriteString(src[begin:upto])
		}
	}
	for l.i < len(src) {
		c := src[l.i]
		switch {
		case c == q:
			if l.i+1 < len(src) && src[l.i+1] == q {
				flush(l.i)
				sb.WriteByte(q)
				l.i += 2
				continue
			}
			l.i++
			if sb != nil {
				l.decoded = true
				return sb.String(), nil
			}
			return src[begin : l.i-1], nil
		case c == '\\' && escapes:
			flush(l.i)
			if err := l.escape(sb, t); err != nil {
				return "", err
			}
			continue
		case c == '\n':
			l.newline(l.i)
		}
		if sb != nil {
			sb.WriteByte(c)
		}
		l.i++
	}
	what := "quoted string"
	if q == '"' {
		what = "quoted identifier"
	}
	near := src[toff:]
	if nl := strings.IndexByte(near, '\n'); nl >= 0 {
		near = near[:nl]
	}
	if len(near) > 20 {
		near = near[:20] + "…"
	}
	return "", l.errAt(toff, tline, tcol, near,
		"unterminated "+what+" that starts at line "+strconv.Itoa(tline)+", column "+strconv.Itoa(tcol))
}

// escape decodes one backslash sequence of an E'…' string at l.i.
func (l *lexer) escape(sb *strings.Builder, t token) error {
	src := l.src
	l.i++ // backslash
	if l.i >= len(src) {
		return nil // the caller reports the unterminated string
	}
	c := src[l.i]
	l.i++
	switch c {
	case 'n':
		sb.WriteByte('\n')
	case 't':
		sb.WriteByte('\t')
	case 'r':
		sb.WriteByte('\r')
	case 'b':
		sb.WriteByte('\b')
	case 'f':
		sb.WriteByte('\f')
	case 'x', 'u', 'U':
		max := 2
		if c == 'u' {
			max = 4
		} else if c == 'U' {
			max = 8
		}
		j := l.i
		for j < len(src) && j-l.i < max && isHex(src[j]) {
			j++
		}
		if j == l.i || c != 'x' && j-l.i != max {
			return l.errAt(l.i-2, l.line, l.column(l.i-2), src[l.i-2:j], "invalid escape sequence in E'…' string")
		}
		v, _ := strconv.ParseUint(src[l.i:j], 16, 32)
		l.i = j
		if c == 'x' {
			sb.WriteByte(byte(v))
		} else {
			if !utf8.ValidRune(rune(v)) {
				start := l.i - max - 2
				return l.errAt(start, l.line, l.column(start), src[start:l.i], "invalid unicode escape in E'…' string")
			}
			sb.WriteRune(rune(v))
		}
	case '0', '1', '2', '3', '4', '5', '6', '7':
		v := int(c - '0')
		for k := 0; k < 2 && l.i < len(src) && src[l.i] >= '0' && src[l.i] <= '7'; k++ {
			v = v*8 + int(src[l.i]-'0')
			l.i++
		}
		sb.WriteByte(byte(v))
	case '\n':
		l.newline(l.i - 1)
		sb.WriteByte(c)
	default:
		sb.WriteByte(c)
	}
	return nil
}

func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
