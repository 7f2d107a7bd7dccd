package mergeinto

import (
	"errors"
	"fmt"
	"strings"
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

// CardinalityError reports a target row that more than one source row
// would change: two of its matching source rows each select an UPDATE or
// DELETE clause (PostgreSQL's and Spark's rule; a matching source row
// whose WHEN conditions all fail, or that selects DO NOTHING, changes
// nothing and is no violation). Nothing has been staged when it is
// returned.
type CardinalityError struct {
	Table string
	// File is the data file's path relative to the table location when it
	// lies inside it, else the full path.
	File string
	// Row is the row's 0-based position among the file's live rows.
	Row int64
	// Key renders the row's ON key values ("id=7").
	Key string
	// Sources are the 0-based ordinals, in the order the source produced
	// them, of two source rows that would both change the row.
	Sources [2]int64
	// More are further violations found in the same batch, rendered
	// alike (at most 4).
	More []string
}

func (e *CardinalityError) describe() string {
	return fmt.Sprintf("data file %s, row %d; key %s; source rows %d and %d", e.File, e.Row, e.Key, e.Sources[0], e.Sources[1])
}

func (e *CardinalityError) Error() string {
	more := ""
	if len(e.More) > 0 {
		more = "; also " + strings.Join(e.More, "; ")
	}
	return fmt.Sprintf("merge into %s: target row matched more than one source row (%s)%s; narrow the ON condition or de-duplicate the source",
		e.Table, e.describe(), more)
}

// SQLState is 21000 (cardinality_violation), as in Postgres, Snowflake and
// Spark.
func (e *CardinalityError) SQLState() string { return StateCardinality }
