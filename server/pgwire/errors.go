package pgwire

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

// sendError sends err as an ErrorResponse; positions are counted in the
// text of the statement that ran (c.text).
func (c *conn) sendError(err error) {
	c.be.Send(errorResponse(err, c.text))
}

// errorResponse maps a statement's error to PostgreSQL's fields: the
// SQLSTATE, the message (and hint, the part after "; " where skade
// says what to do), and the 1-based character position in text.
func errorResponse(err error, text string) *pgproto3.ErrorResponse {
	e := &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: sqlState(err)}
	msg := err.Error()
	position := func(off int) int32 {
		if off < 0 || off > len(text) {
			return 0
		}
		return int32(utf8.RuneCountInString(text[:off])) + 1
	}
	var pe *parser.Error
	var be *plan.Error
	switch {
	case errors.As(err, &pe):
		// a syntax error's text names what was expected; no hint split
		e.Position = position(pe.Offset)
		e.Message = msg
		return e
	case errors.As(err, &be) && be.Pos.Line > 0:
		e.Position = position(be.Pos.Offset)
		// the message carries the position as text too; psql shows the
		// position with a caret instead
		msg = strings.Replace(msg, be.Error(), be.Msg, 1)
	}
	e.Message, e.Hint = splitHint(msg)
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
	var pe *protocolError
	if errors.As(err, &pe) {
		return pe.code
	}
	var ce *canceledError
	if errors.As(err, &ce) {
		if errors.Is(ce.cause, errShutdownCancel) {
			return "57P01"
		}
		return "57014"
	}
	var st interface{ SQLState() string }
	if errors.As(err, &st) && st.SQLState() != "" {
		return st.SQLState()
	}
	var syn *parser.Error
	if errors.As(err, &syn) {
		return "42601"
	}
	var tx *lake.TxAbortedError
	switch {
	case errors.As(err, &tx), errors.Is(err, lake.ErrTxAborted):
		return "25P02"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "57014"
	case errors.Is(err, lake.ErrTableNotFound):
		return "42P01"
	case errors.Is(err, lake.ErrTableExists):
		return "42P07"
	case errors.Is(err, lake.ErrNamespaceNotFound):
		return "3F000"
	case errors.Is(err, lake.ErrCommitConflict):
		return "40001"
	case errors.Is(err, lake.ErrMemoryLimit):
		return "53200"
	case errors.Is(err, lake.ErrLakeBusy):
		return "55P03"
	case errors.Is(err, lake.ErrReadOnly):
		return "25006"
	case errors.Is(err, lake.ErrNotImplemented):
		return "0A000"
	case errors.Is(err, lake.ErrSnapshotNotFound):
		return "22023"
	case errors.Is(err, lake.ErrInvalidName):
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
	if be != nil || errors.Is(err, lake.ErrInvalidArgument) {
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
	case has("out of range", "overflow"):
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
