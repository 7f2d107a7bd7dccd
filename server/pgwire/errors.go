package pgwire

import (
	"errors"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/skadedb/skade/lake"
)

// sendError sends err as an ErrorResponse; positions are counted in the
// text of the statement that ran (c.text).
func (c *conn) sendError(err error) {
	c.be.Send(errorResponse(err, c.text))
}

// errorResponse maps a statement's error to PostgreSQL's fields: the
// SQLSTATE, the message and hint (lake.Error's), and the 1-based
// character position in text.
func errorResponse(err error, text string) *pgproto3.ErrorResponse {
	le := lake.ErrorAt(err, text)
	return &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: sqlState(err),
		Message: le.Message, Hint: le.Hint, Position: int32(le.Position)}
}

// sqlState classifies err: the server's own protocol and cancellation
// errors, else as lake does (the statement's lake.Error, or any error's
// own SQLState).
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
	return lake.SQLState(err)
}
