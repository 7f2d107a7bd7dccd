package parser

import (
	"sort"
	"strings"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tEOF     tokKind = iota
	tWord            // a bare word: identifier or keyword
	tQIdent          // "quoted identifier"
	tString          // 'string' or E'string'
	tInteger         // 123
	tDecimal         // 1.5, .5, 1.
	tFloat           // 1e10
	tParam           // $1
	tQMark           // ?
	tOp              // operator or punctuation; text holds it
)

// token is one lexical token, kept small because a 10,000-row INSERT has
// hundreds of thousands of them. val is the decoded value (identifier
// without quotes, string with escapes applied, the operator itself); the raw
// text is src[off:end].
type token struct {
	kind     tokKind
	reserved bool // a word PostgreSQL reserves (cannot be a column or alias)
	off      int32
	end      int32
	line     int32
	col      int32
	val      string
}

// rawTok is how the lexer stores a token: 24 bytes and no pointers, so a
// slice of hundreds of thousands of them is cheap to allocate and costs the
// garbage collector nothing to scan. The value is derived from the source
// span (see parser.at), or is decoded[dec-1] when escapes or doubled quotes
// made it differ from the source.
type rawTok struct {
	kind      tokKind
	reserved  bool
	off, end  int32
	line, col int32
	dec       int32
}

func (t *token) pos() Pos { return Pos{Line: int(t.line), Column: int(t.col), Offset: int(t.off)} }

// describe renders the token for "near …" in error messages.
func (t *token) describe(src string) string {
	if t.kind == tEOF {
		return ""
	}
	s := src[t.off:t.end]
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// reservedWords are PostgreSQL's fully reserved keywords plus the join and
// predicate words PostgreSQL reserves from column names. Everything else
// (status, date, key, value, name, type, year, …) stays usable as a column
// name or alias, as the issue asks.
var reservedWords = map[string]bool{}

func init() {
	for _, w := range []string{
		"ALL", "ANALYSE", "ANALYZE", "AND", "ANY", "ARRAY", "AS", "ASC", "ASYMMETRIC",
		"BOTH", "CASE", "CAST", "CHECK", "COLLATE", "COLUMN", "CONSTRAINT", "CREATE",
		"CURRENT_CATALOG", "CURRENT_DATE", "CURRENT_ROLE", "CURRENT_TIME",
		"CURRENT_TIMESTAMP", "CURRENT_USER", "DEFAULT", "DEFERRABLE", "DESC",
		"DISTINCT", "DO", "ELSE", "END", "EXCEPT", "FALSE", "FETCH", "FOR", "FOREIGN",
		"FROM", "GRANT", "GROUP", "HAVING", "IN", "INITIALLY", "INTERSECT", "INTO",
		"LATERAL", "LEADING", "LIMIT", "LOCALTIME", "LOCALTIMESTAMP", "NOT", "NULL",
		"OFFSET", "ON", "ONLY", "OR", "ORDER", "PLACING", "PRIMARY", "REFERENCES",
		"RETURNING", "SELECT", "SESSION_USER", "SOME", "SYMMETRIC", "SYSTEM_USER",
		"TABLE", "THEN", "TO", "TRAILING", "TRUE", "UNION", "UNIQUE", "USER", "USING",
		"VARIADIC", "WHEN", "WHERE", "WINDOW", "WITH",
		// type_func_name keywords: may name a function, never a column.
		"JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "OUTER",
		"LIKE", "ILIKE", "IS", "ISNULL", "NOTNULL", "SIMILAR",
		// DuckDB clause word that would otherwise be read as an alias.
		"QUALIFY",
	} {
		reservedWords[w] = true
	}
}

// ReservedWords lists the reserved keywords, sorted: a word among them
// must be quoted to name a column or table (pg_get_keywords()).
func ReservedWords() []string {
	out := make([]string, 0, len(reservedWords))
	for w := range reservedWords {
		out = append(out, strings.ToLower(w))
	}
	sort.Strings(out)
	return out
}

// funcNameWords are reserved words that may still name a function:
// left(s, 3), right(s, 2).
var funcNameWords = map[string]bool{"LEFT": true, "RIGHT": true}

// isReserved reports whether the word s (any case) is reserved. It upper-cases
// into a stack buffer so the common case allocates nothing.
func isReserved(s string) bool {
	if len(s) > 20 {
		return false
	}
	var buf [20]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	return reservedWords[string(buf[:len(s)])]
}

// interned maps upper-case keywords to themselves, so internUpper can return
// a canonical spelling without allocating.
var interned = map[string]string{}

func init() {
	for _, m := range []map[string]bool{reservedWords, sqlValueFuncs, literalTypes} {
		for k := range m {
			interned[k] = k
		}
	}
	for _, k := range []string{"TRY_CAST", "EXISTS", "EXTRACT", "INTERVAL", "UNKNOWN",
		"ESCAPE", "BETWEEN", "MAP"} {
		interned[k] = k
	}
	for k := range intervalUnits {
		interned[k] = k
	}
}

// internUpper returns the upper-case spelling of s if it is a keyword the
// parser looks up by spelling, and "" otherwise. It does not allocate.
func internUpper(s string) string {
	if len(s) > 24 {
		return ""
	}
	var buf [24]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	return interned[string(buf[:len(s)])]
}
