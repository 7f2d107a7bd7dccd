package parser

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of expressions, subqueries and joins. Deeper
// input is a syntax error rather than a stack overflow.
const MaxDepth = 1000

// parser is a recursive-descent parser over a pre-lexed token slice.
//
// Errors unwind with panic(bailout{…}) and are recovered in statement(); the
// recover re-panics anything else, so a real bug still crashes (and the fuzz
// test finds it) instead of being reported as a syntax error.
type parser struct {
	src   string
	toks  []rawTok
	decs  []string // decoded token values (see rawTok)
	p     int      // index of the current token
	cur   token    // toks[p], materialised
	tok   *token   // &cur
	depth int

	nparams int // ? placeholders seen in the current statement

	// Expectations recorded at the furthest offset reached, for "expected
	// one of …" in the error message.
	expOff   int32
	expected []string

	// noAliasAt is an offset where an implicit (AS-less) alias may not be
	// taken. The error path re-parses with it set when a typo such as WEHRE
	// was swallowed as an alias, so the error points at the typo.
	noAliasAt      int32
	lastAliasIndex int // token index of the last implicit alias taken
}

type bailout struct{ err *Error }

func newParser(src string) (*parser, error) {
	if len(src) >= math.MaxInt32 {
		return nil, &Error{Line: 1, Column: 1, Msg: "input too large: SQL text must be under 2 GiB"}
	}
	if !utf8.ValidString(src) {
		return nil, invalidUTF8(src)
	}
	toks, decs, err := newLexer(src).all()
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks, decs: decs, expOff: -1, noAliasAt: -1, lastAliasIndex: -1}
	p.tok = &p.cur
	p.cur = p.at(0)
	return p, nil
}

// at materialises token i; the value is a slice of src (no allocation) or
// a decoded string.
func (p *parser) at(i int) token {
	r := &p.toks[i]
	t := token{kind: r.kind, reserved: r.reserved, off: r.off, end: r.end, line: r.line, col: r.col}
	// INVARIANT: the value spans below match what lexer.next put in val
	// for every token it did not have to decode.
	switch {
	case r.dec > 0:
		t.val = p.decs[r.dec-1]
	case r.kind == tString && p.src[r.off] != '\'':
		t.val = p.src[r.off+2 : r.end-1] // E'…'
	case r.kind == tString || r.kind == tQIdent:
		t.val = p.src[r.off+1 : r.end-1]
	case r.kind == tParam:
		t.val = p.src[r.off+1 : r.end] // $n
	case r.kind != tEOF:
		t.val = p.src[r.off:r.end]
	}
	return t
}

// invalidUTF8 is PostgreSQL's error for SQL text that is not UTF-8
// (SQLSTATE 22021), at the first bad byte: such text would be stored in
// TEXT columns and written to Parquet, which requires UTF-8.
func invalidUTF8(src string) *Error {
	off := 0
	for off < len(src) {
		r, n := utf8.DecodeRuneInString(src[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	line, col := 1, 1
	for _, r := range src[:off] {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &Error{Line: line, Column: col, Offset: off, Near: src[off : off+1], Msg: fmt.Sprintf("invalid byte sequence for encoding \"UTF8\": 0x%02x", src[off]), src: src}
}

// Parse parses a script of zero or more statements separated by semicolons.
func Parse(sql string) ([]Stmt, error) {
	p, err := newParser(sql)
	if err != nil {
		return nil, err
	}
	var stmts []Stmt
	for {
		for p.isOp(";") {
			p.next()
		}
		if p.tok.kind == tEOF {
			return stmts, nil
		}
		s, err := p.statementRecover()
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, s)
	}
}

// ParseOne parses exactly one statement (a trailing semicolon is allowed).
func ParseOne(sql string) (Stmt, error) {
	p, err := newParser(sql)
	if err != nil {
		return nil, err
	}
	for p.isOp(";") {
		p.next()
	}
	if p.tok.kind == tEOF {
		return nil, p.errorAt(p.tok, "empty statement")
	}
	s, err := p.statementRecover()
	if err != nil {
		return nil, err
	}
	for p.isOp(";") {
		p.next()
	}
	if p.tok.kind != tEOF {
		return nil, p.errorAt(p.tok, "expected a single statement, found another")
	}
	return s, nil
}

// ParseExpr parses a lone scalar expression.
func ParseExpr(sql string) (Expr, error) {
	return parseWhole(sql, func(p *parser) Expr { return p.expr(0) })
}

// parseWhole parses sql with f, which must read all of it, turning a
// bailout into an error.
func parseWhole[T any](sql string, f func(*parser) T) (out T, err error) {
	var zero T
	p, err := newParser(sql)
	if err != nil {
		return zero, err
	}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			out, err = zero, b.err
		}
	}()
	out = f(p)
	if p.tok.kind != tEOF {
		p.fail()
	}
	return out, nil
}

// statementRecover parses one statement and its terminator, turning a
// bailout into an error. When the failing token follows an implicit alias
// that looks like a misspelt keyword, it re-parses with that alias refused so
// the error lands on the typo.
func (p *parser) statementRecover() (Stmt, error) {
	start := p.p
	s, err := p.tryStatement()
	if err == nil {
		return s, nil
	}
	if a := p.lastAliasIndex; a >= start && a == p.p-1 && p.noAliasAt < 0 &&
		nearKeyword(p.at(a).val) != "" {
		p.reset(start)
		p.noAliasAt = p.toks[a].off
		if _, err2 := p.tryStatement(); err2 != nil {
			err = err2
		}
		p.noAliasAt = -1
	}
	return nil, err
}

func (p *parser) reset(i int) {
	p.p = i
	p.cur = p.at(i)
	p.expOff, p.expected = -1, p.expected[:0]
	p.depth = 0
}

func (p *parser) tryStatement() (s Stmt, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			s, err = nil, b.err
		}
	}()
	p.nparams = 0
	s = p.statement()
	p.note(`";"`)
	if !p.isOp(";") && p.tok.kind != tEOF {
		p.fail()
	}
	return s, nil
}

// --- token helpers ---

func (p *parser) next() {
	if p.p < len(p.toks)-1 {
		p.p++
		p.cur = p.at(p.p)
	}
}

// peek returns the token n ahead of the current one (EOF past the end).
func (p *parser) peek(n int) token {
	if p.p+n < len(p.toks) {
		return p.at(p.p + n)
	}
	return p.at(len(p.toks) - 1)
}

func (t token) isKw(kw string) bool {
	return t.kind == tWord && len(t.val) == len(kw) && strings.EqualFold(t.val, kw)
}

func (t token) isOp(op string) bool { return t.kind == tOp && t.val == op }

func (p *parser) isKw(kw string) bool { return p.tok.isKw(kw) }
func (p *parser) isOp(op string) bool { return p.tok.isOp(op) }

// note records that label would have been accepted at the current token.
func (p *parser) note(label string) {
	off := p.tok.off
	if off > p.expOff {
		p.expOff = off
		p.expected = p.expected[:0]
	} else if off < p.expOff {
		return
	}
	for _, e := range p.expected {
		if e == label {
			return
		}
	}
	p.expected = append(p.expected, label)
}

// acceptKw consumes kw if it is the current token, noting it as expected.
func (p *parser) acceptKw(kw string) bool {
	p.note(kw)
	if p.isKw(kw) {
		p.next()
		return true
	}
	return false
}

// acceptKwQuiet is acceptKw for rarely used words that would only lengthen
// the "expected one of" list.
func (p *parser) acceptKwQuiet(kw string) bool {
	if p.isKw(kw) {
		p.next()
		return true
	}
	return false
}

// quoteOp returns op in double quotes for "expected" lists, without
// allocating for the punctuation the hot paths check.
func quoteOp(op string) string {
	switch op {
	case "(":
		return `"("`
	case ")":
		return `")"`
	case ",":
		return `","`
	case ";":
		return `";"`
	case "=":
		return `"="`
	case "=>":
		return `"=>"`
	case "*":
		return `"*"`
	case "]":
		return `"]"`
	}
	return `"` + op + `"`
}

func (p *parser) acceptOp(op string) bool {
	p.note(quoteOp(op))
	if p.isOp(op) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectKw(kw string) Pos {
	pos := p.tok.pos()
	if !p.acceptKw(kw) {
		p.fail()
	}
	return pos
}

func (p *parser) expectOp(op string) {
	if !p.acceptOp(op) {
		p.fail()
	}
}

func (p *parser) enter() {
	p.depth++
	if p.depth > MaxDepth {
		panic(bailout{p.errorAt(p.tok, "statement is nested too deeply (more than "+
			strconv.Itoa(MaxDepth)+" levels); simplify it or split it up")})
	}
}

func (p *parser) leave() { p.depth-- }

// --- errors ---

// fail reports a syntax error at the current token with what was expected.
func (p *parser) fail() {
	panic(bailout{p.errorAt(p.tok, "")})
}

// failMsg reports a syntax error at the current token with a message.
func (p *parser) failMsg(msg string) {
	panic(bailout{p.errorAt(p.tok, msg)})
}

// failAtToken reports a syntax error with a message at an earlier token
// (index i), such as the VALUES whose row count is wrong.
func (p *parser) failAtToken(i int, msg string) {
	t := p.at(i)
	panic(bailout{p.errorAt(&t, msg)})
}

func (p *parser) errorAt(t *token, msg string) *Error {
	e := &Error{Line: int(t.line), Column: int(t.col), Offset: int(t.off), Near: t.describe(p.src), Msg: msg, src: p.src}
	if t.off == p.expOff && len(p.expected) > 0 {
		e.Expected = append([]string(nil), p.expected...)
		if msg == "" && t.kind == tWord {
			if s := suggest(t.val, e.Expected); s != "" {
				e.Msg = "did you mean " + s + "?"
			}
		}
	}
	return e
}

// clauseKeywords are the words a misspelling of which is worth re-parsing
// for (see statementRecover).
var clauseKeywords = []string{"WHERE", "FROM", "GROUP", "ORDER", "HAVING", "LIMIT",
	"OFFSET", "JOIN", "LEFT", "RIGHT", "INNER", "UNION", "EXCEPT", "WINDOW", "SET",
	"USING", "WHEN", "VALUES", "SELECT", "RETURNING", "QUALIFY", "INTERSECT", "ON"}

func nearKeyword(word string) string {
	return suggest(word, clauseKeywords)
}

// suggest returns the candidate (or its first word) within edit distance 2
// of word, for "did you mean …?". Short words are left alone: with two
// edits, anything of three letters is near everything.
func suggest(word string, candidates []string) string {
	if len(word) < 4 {
		return ""
	}
	w := upper(word)
	best, bestD := "", 3
	for _, c := range candidates {
		head := c
		if i := strings.IndexByte(c, ' '); i > 0 {
			head = c[:i]
		}
		if strings.HasPrefix(head, `"`) || head == w {
			continue
		}
		if d := editDistance(w, head); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 32 || len(b) > 32 {
		return 99
	}
	// optimal string alignment distance: a transposition (WEHRE for WHERE)
	// counts as one edit
	var d [33][33]int
	for i := 0; i <= len(a); i++ {
		d[i][0] = i
	}
	for j := 0; j <= len(b); j++ {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// ParseConstraint parses one table constraint, [CONSTRAINT name] CHECK (e)
// | UNIQUE (cols) | PRIMARY KEY (cols), as a table's metadata keeps it.
func ParseConstraint(sql string) (*Constraint, error) {
	return parseWhole(sql, (*parser).tableConstraint)
}
