package mergeinto

import (
	"errors"
	"fmt"
)

// SQLSTATE codes carried by this package's errors.
const (
	// StateCardinality: a target row matched more than one source row.
	StateCardinality = "21000"
	// StateNotSupported: a statement shape MERGE refuses.
	StateNotSupported = "0A000"
	// StateDatatypeMismatch: join keys whose types cannot be compared
	// without loss.
	StateDatatypeMismatch = "42804"
	// StateUndefinedColumn: a column index that does not exist.
	StateUndefinedColumn = "42703"
	// StateSyntax: a clause that cannot be written that way.
	StateSyntax = "42601"
	// StateNotNull: a NULL written to a NOT NULL column.
	StateNotNull = "23502"
	// StateInternal: the Spec is malformed in a way only a binder bug
	// produces.
	StateInternal = "XX000"
)

// ErrRefused is wrapped by every error Validate returns for a statement
// shape that MERGE refuses; the binder may surface them as they are.
var ErrRefused = errors.New("merge refused")

// Error is a MERGE error that carries a SQLSTATE.
type Error struct {
	State string
	Msg   string
	// Err is an underlying cause, or nil.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

// SQLState is the five-character SQLSTATE code.
func (e *Error) SQLState() string { return e.State }

func (e *Error) Unwrap() []error {
	errs := []error{}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	switch e.State {
	case StateNotSupported, StateDatatypeMismatch, StateUndefinedColumn, StateSyntax:
		errs = append(errs, ErrRefused)
	}
	return errs
}

func refusef(state, table, format string, args ...any) error {
	return &Error{State: state, Msg: fmt.Sprintf("merge into %s: ", table) + fmt.Sprintf(format, args...)}
}

// CardinalityError reports a target row matched by more than one source
// row. Nothing has been staged when it is returned.
type CardinalityError struct {
	Table string
	// File is the data file's path relative to the table location when it
	// lies inside it, else the full path.
	File string
	// Row is the row's 0-based position among the file's live rows.
	Row int64
}

func (e *CardinalityError) Error() string {
	return fmt.Sprintf("merge into %s: target row matched more than one source row (data file %s, row %d); narrow the ON condition or de-duplicate the source",
		e.Table, e.File, e.Row)
}

// SQLState is 21000 (cardinality_violation), as in Postgres, Snowflake and
// Spark.
func (e *CardinalityError) SQLState() string { return StateCardinality }
