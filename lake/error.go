package lake

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
	"github.com/skadedb/skade/snapshot"
)

// Error is what a statement's error carries for a program to act on,
// found with errors.As on any error Session.SQL, Session.Run,
// Session.Exec or a Result returns:
//
//	var e *lake.Error
//	if errors.As(err, &e) && e.Code == "42P01" { … }
//
// Its text is the error's text, unchanged; it unwraps to the error
// underneath, so errors.Is with the sentinels (ErrTableNotFound, …) keeps
// working.
type Error struct {
	// Code is the PostgreSQL SQLSTATE: 42601 for a syntax error, 42P01
	// for a missing table, 40001 for a commit conflict, 23502 for a NULL
	// in a NOT NULL column, XX000 when nothing more precise fits.
	Code string
	// Message is the error without its hint.
	Message string
	// Hint is what to do, when skade says (the part of the message after
	// "; "), with its first letter capitalized as PostgreSQL's hints are.
	Hint string
	// Line and Column (1-based) are where in the statement the error
	// points; 0 when it points nowhere. Position is the same place as a
	// 1-based character count into the statement text, as PostgreSQL
	// reports it; 0 when the text is not known (Session.Run).
	Line, Column, Position int

	err error
}

func (e *Error) Error() string { return e.err.Error() }

// Unwrap returns the error underneath.
func (e *Error) Unwrap() error { return e.err }

// SQLState returns Code.
func (e *Error) SQLState() string { return e.Code }

// statementError wraps a statement's error as an *Error, once; text is
// the statement's text when known, for Position.
func statementError(err error, text string) error {
	if err == nil {
		return nil
	}
	var le *Error
	if errors.As(err, &le) {
		return err
	}
	return classify(err, text)
}

// classify builds the *Error of err.
func classify(err error, text string) *Error {
	e := &Error{Code: sqlState(err), err: err}
	msg := err.Error()
	offset := -1
	var pe *parser.Error
	var be *plan.Error
	switch {
	case errors.As(err, &pe):
		// a syntax error's text names what was expected; no hint split
		e.Line, e.Column, offset = pe.Line, pe.Column, pe.Offset
		e.Message = msg
	case errors.As(err, &be) && be.Pos.Line > 0:
		e.Line, e.Column, offset = be.Pos.Line, be.Pos.Column, be.Pos.Offset
		// the message carries the position as text too; drop it
		e.Message, e.Hint = splitHint(strings.Replace(msg, be.Error(), be.Msg, 1))
	default:
		e.Message, e.Hint = splitHint(msg)
	}
	if text != "" && offset >= 0 && offset <= len(text) {
		e.Position = utf8.RuneCountInString(text[:offset]) + 1
	}
	return e
}

// splitHint splits "what: why; what to do" into the message and the hint.
func splitHint(msg string) (string, string) {
	i := strings.Index(msg, "; ")
	if i < 0 {
		return msg, ""
	}
	hint := msg[i+2:]
	if hint == "" {
		return msg, ""
	}
	r, n := utf8.DecodeRuneInString(hint)
	return msg[:i], strings.ToUpper(string(r)) + hint[n:]
}

// sqlState classifies err: by its own SQLState, by lake's sentinels, and
// for binder and execution errors by what their messages say.
func sqlState(err error) string {
	var st interface{ SQLState() string }
	if errors.As(err, &st) && st.SQLState() != "" {
		return st.SQLState()
	}
	var syn *parser.Error
	if errors.As(err, &syn) {
		return "42601"
	}
	var tx *TxAbortedError
	switch {
	case errors.As(err, &tx), errors.Is(err, ErrTxAborted):
		return "25P02"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "57014"
	case errors.Is(err, ErrTableNotFound):
		return "42P01"
	case errors.Is(err, ErrTableExists):
		return "42P07"
	case errors.Is(err, ErrNamespaceNotFound):
		return "3F000"
	case errors.Is(err, ErrCommitConflict):
		return "40001"
	case errors.Is(err, ErrMemoryLimit):
		return "53200"
	case errors.Is(err, ErrLakeBusy):
		return "55P03"
	case errors.Is(err, ErrReadOnly):
		return "25006"
	case errors.Is(err, ErrNotImplemented):
		return "0A000"
	case errors.Is(err, ErrSnapshotNotFound):
		return "22023"
	case errors.Is(err, ErrRefNotFound):
		return "42704"
	case errors.Is(err, ErrRefExists):
		return "42710"
	case errors.Is(err, snapshot.ErrNotFastForward):
		return "40001"
	case errors.Is(err, ErrInvalidName):
		return "42602"
	case errors.Is(err, fs.ErrNotExist):
		return "58P01"
	case errors.Is(err, fs.ErrPermission):
		return "42501"
	}
	msg := err.Error()
	var be *plan.Error
	if errors.As(err, &be) && be.Pos.Line > 0 {
		// without " (line 1, column 8)", whose words would mislead
		msg = strings.Replace(msg, be.Error(), be.Msg, 1)
	}
	if state := messageState(msg); state != "" {
		return state
	}
	if be != nil || errors.Is(err, ErrInvalidArgument) {
		return "42000"
	}
	return "XX000"
}

// messageState classifies errors no type or sentinel names, by the words
// of their message; "" when none fits.
func messageState(msg string) string {
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(msg, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("unrecognized configuration parameter"):
		return "42704"
	case has("specified more than once"):
		return "42712"
	case has("recursive reference to query"):
		return "42P19"
	case has("violates not-null constraint"):
		return "23502"
	case has("division by zero"):
		return "22012"
	case has("invalid byte sequence for encoding"):
		return "22021"
	case has("date/time field value out of range", "date field value out of range", "is invalid for the 12-hour clock"):
		return "22008"
	case has("invalid value \"", "not supported by to_date"):
		return "22007"
	case has("out of range", "overflow", "is not between 0 and 1"):
		return "22003"
	case has("more than one row returned by a subquery", "matched more than one source row"):
		return "21000"
	case has("is ambiguous", "ambiguous column"):
		return "42702"
	case has("but expression is of type", "cannot coerce", "must be type", "argument of"):
		return "42804"
	case has("cannot cast"):
		return "42846"
	case has("invalid input syntax", "cannot parse"):
		return "22P02"
	case has("does not exist", "not found"):
		switch {
		case strings.HasPrefix(msg, "function") || has(" function "):
			return "42883"
		case strings.HasPrefix(msg, "relation ") || strings.HasPrefix(msg, "table "):
			return "42P01"
		case has("column"):
			return "42703"
		case has("schema", "namespace"):
			return "3F000"
		case has("table", "relation"):
			return "42P01"
		}
	}
	return ""
}

// SQLState is the PostgreSQL SQLSTATE of any error: its *Error's Code,
// or the same classification for an error that did not come from a
// statement.
func SQLState(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return sqlState(err)
}

// ErrorAt is err's *Error with Position counted in text, the statement
// it came from: for a caller that ran the statement with Session.Run and
// kept its text (the PostgreSQL server).
func ErrorAt(err error, text string) *Error {
	var e *Error
	if errors.As(err, &e) {
		at := classify(e.err, text)
		at.Code = e.Code
		return at
	}
	return classify(err, text)
}
