package plan

import (
	"fmt"
	"strings"

	"github.com/skadedb/skade/parser"
)

// Error is a binding error at a position of the statement text.
type Error struct {
	Pos parser.Pos
	Msg string
	// Err is the error this one adds a position to, if any (a catalog
	// lookup's, which may wrap a lake sentinel such as ErrTableNotFound).
	Err error
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	if e.Pos.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("%s (line %d, column %d)", e.Msg, e.Pos.Line, e.Pos.Column)
}

func errorf(pos parser.Pos, format string, args ...any) error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// atPos gives err a position when it has none (errors from exec
// constructors, which know types but not text).
func atPos(pos parser.Pos, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*Error); ok {
		return err
	}
	return &Error{Pos: pos, Msg: err.Error(), Err: err}
}

// suggest returns the candidate nearest to name by edit distance, or ""
// when none is near enough to be a likely typo.
func suggest(name string, candidates []string) string {
	best, bestD := "", 1<<30
	lname := strings.ToLower(name)
	for _, c := range candidates {
		d := editDistance(lname, strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(1, len(name)/3)
	if bestD <= limit {
		return best
	}
	return ""
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours cost 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// DidYouMean renders "; did you mean \"x\"?", naming the candidate
// nearest to name by edit distance, or "" when none is near enough to be a
// likely typo. Every "does not exist" message of plan and lake uses it.
func DidYouMean(name string, candidates []string) string { return didYouMean(name, candidates) }

// Errorf is an error at pos in the statement's text, for lake's own
// checks of a bound statement (ALTER TABLE's columns).
func Errorf(pos parser.Pos, format string, args ...any) error { return errorf(pos, format, args...) }

func didYouMean(name string, candidates []string) string {
	if s := suggest(name, candidates); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// SQLState is an error class by PostgreSQL's SQLSTATE code, for errors
// whose message alone does not name it: an Error's Err, or wrapped by the
// lake.
type SQLState string

func (s SQLState) Error() string    { return "SQLSTATE " + string(s) }
func (s SQLState) SQLState() string { return string(s) }

// prefixError puts prefix before a binder error's message, keeping its
// position and class.
func prefixError(prefix string, err error) error {
	if e, ok := err.(*Error); ok {
		return &Error{Pos: e.Pos, Msg: prefix + e.Msg, Err: e.Err}
	}
	return fmt.Errorf("%s%w", prefix, err)
}
