package catalog

import (
	"errors"
	"fmt"
	"strings"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// Sentinels of this package. Errors about missing or existing tables and
// namespaces wrap iceberg-go's sentinels (icecatalog.ErrNoSuchTable,
// icecatalog.ErrTableAlreadyExists, ...) so that iceberg-go code and the
// conformance suite recognise them; lost commit races wrap
// table.ErrCommitFailed so that iceberg-go's refresh-and-replay retry runs.
var (
	// ErrInvalidName is wrapped by every error about a table or namespace
	// name that cannot be used (see ValidateName).
	ErrInvalidName = errors.New("invalid name")

	// ErrLockTimeout is wrapped when catalog.db stayed locked by someone
	// else for longer than the lock timeout (see WithLockTimeout).
	ErrLockTimeout = errors.New("catalog lock timeout")

	// ErrCommitStateUnknown is wrapped when writing catalog.db failed while
	// committing, so a pointer may or may not have moved. Files a commit
	// wrote are kept in that case: they may be live.
	ErrCommitStateUnknown = errors.New("commit state unknown")

	// ErrOutsideLake is wrapped when a location would put a file outside
	// the lake directory.
	ErrOutsideLake = errors.New("location outside the lake")

	// ErrCatalogMissing is wrapped when a lake directory holds tables but
	// its catalog.db is missing or empty; Open refuses to create a fresh
	// one over them (Repair rebuilds it).
	ErrCatalogMissing = errors.New("catalog missing")

	// ErrCatalogDamaged is wrapped when catalog.db cannot be read: bbolt
	// found its pages corrupt (Repair rebuilds it).
	ErrCatalogDamaged = errors.New("catalog damaged")
)

// catalogError is an error whose message is written for the user and which
// still matches one or more sentinels through errors.Is.
type catalogError struct {
	msg  string
	errs []error
}

func (e *catalogError) Error() string   { return e.msg }
func (e *catalogError) Unwrap() []error { return e.errs }

// newError returns an error with the given message that wraps sentinels.
func newError(sentinels []error, format string, args ...any) error {
	return &catalogError{msg: fmt.Sprintf(format, args...), errs: sentinels}
}

func identString(ident table.Identifier) string { return strings.Join(ident, ".") }

func errNoSuchTable(ident table.Identifier) error {
	return newError([]error{icecatalog.ErrNoSuchTable},
		"table %s does not exist; check the name, or create the table first", identString(ident))
}

func errTableExists(ident table.Identifier) error {
	return newError([]error{icecatalog.ErrTableAlreadyExists},
		"table %s already exists; choose another name, or drop the table first", identString(ident))
}

func errNoSuchNamespace(ns string) error {
	return newError([]error{icecatalog.ErrNoSuchNamespace},
		"namespace %s does not exist; create it first", ns)
}

// ConflictError reports a pointer that did not hold the expected metadata
// location when SwapPointers ran. It wraps table.ErrCommitFailed, and also
// icecatalog.ErrTableAlreadyExists when the table was expected to be absent,
// or icecatalog.ErrNoSuchTable when it was expected to exist but does not.
type ConflictError struct {
	Ident    table.Identifier
	Expected string // "" = the table was expected not to exist
	Found    string // "" = the table does not exist
	View     bool   // the pointer is a view's
}

func (e *ConflictError) Error() string {
	name, kind := identString(e.Ident), "table"
	if e.View {
		kind = "view"
	}
	switch {
	case e.Expected == "" && e.Found != "":
		return fmt.Sprintf("commit to %s %s failed: the %s already exists; "+
			"choose another name, or drop the %s first", kind, name, kind, kind)
	case e.Expected != "" && e.Found == "":
		return fmt.Sprintf("commit to %s %s failed: the %s was dropped concurrently; "+
			"reload the %s and retry", kind, name, kind, kind)
	default:
		return fmt.Sprintf("commit to %s %s failed: a concurrent commit moved its metadata from %s to %s; "+
			"reload the %s and retry", kind, name, e.Expected, e.Found, kind)
	}
}

func (e *ConflictError) Unwrap() []error {
	errs := []error{table.ErrCommitFailed}
	switch {
	case e.Expected == "" && e.Found != "":
		errs = append(errs, icecatalog.ErrTableAlreadyExists)
	case e.Expected != "" && e.Found == "":
		errs = append(errs, icecatalog.ErrNoSuchTable)
	}

	return errs
}
