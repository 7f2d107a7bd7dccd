package lake

import (
	"errors"
	"io/fs"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/plan"
	"github.com/skadedb/skade/snapshot"
)

// Errors about names and the objects they name.
var (
	// ErrInvalidName is returned for a table or namespace name that cannot
	// be used (empty, a path separator, "..", a control character).
	ErrInvalidName = catalog.ErrInvalidName
	// ErrTableNotFound is returned when a named table does not exist.
	ErrTableNotFound = errors.New("table not found")
	// ErrTableExists is returned when creating a table whose name is taken.
	ErrTableExists = errors.New("table already exists")
	// ErrNamespaceNotFound is returned when a namespace does not exist.
	ErrNamespaceNotFound = errors.New("namespace not found")
)

// Errors from commits.
var (
	// ErrCommitConflict is returned when another writer committed first and
	// this write cannot be replayed on top of it. Nothing of the failed
	// write is left behind; retry it.
	ErrCommitConflict = errors.New("commit conflict")
	// ErrLakeBusy is returned when another process held the catalog file
	// for longer than the lock timeout.
	ErrLakeBusy = catalog.ErrLockTimeout
	// ErrTxAborted is returned for statements in a transaction that an
	// earlier statement's error aborted (SQLSTATE 25P02), and by COMMIT of
	// such a transaction, which rolls it back. ROLLBACK ends it.
	ErrTxAborted = errors.New("transaction aborted")
)

// ErrLakeNotFound is returned by Open WithoutCreate when the directory
// holds no lake.
var ErrLakeNotFound = errors.New("no lake")

// Errors from opening a lake whose catalog file was lost or damaged; both
// leave the lake untouched and name `skade repair` (Repair) as the way out.
var (
	// ErrCatalogMissing: the lake holds tables but catalog.db is missing
	// or empty.
	ErrCatalogMissing = catalog.ErrCatalogMissing
	// ErrCatalogDamaged: catalog.db cannot be read.
	ErrCatalogDamaged = catalog.ErrCatalogDamaged
)

// Errors from reads and arguments.
var (
	// ErrSnapshotNotFound is returned by time travel to a snapshot that
	// does not exist or was expired.
	ErrSnapshotNotFound = snapshot.ErrSnapshotNotFound
	// ErrRefNotFound is returned for a branch or tag the table does not
	// have.
	ErrRefNotFound = snapshot.ErrRefNotFound
	// ErrRefExists is returned by CREATE BRANCH or TAG for a name taken.
	ErrRefExists = snapshot.ErrRefExists
	// ErrReadOnly is returned for a write through a read-only handle.
	ErrReadOnly = errors.New("read-only")
	// ErrInvalidArgument is returned for a bad option or argument.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotImplemented is returned for features not built yet.
	ErrNotImplemented = errors.New("not implemented")
	// ErrMemoryLimit is returned when a statement needs to hold more than
	// its memory limit (WithMemoryLimit, SET memory_limit) in a join build
	// side, a window partition or MERGE's source; the message names the
	// limit. Sorts and GROUP BY spill to disk instead (GROUP BY can still
	// fail when the groups it keeps in memory grow with their rows:
	// DISTINCT, string_agg, array_agg).
	ErrMemoryLimit = exec.ErrMemoryLimit
)

// sentinelError keeps the message of the underlying error but also
// matches a lake sentinel with errors.Is.
type sentinelError struct {
	sentinel error
	err      error
}

func (e *sentinelError) Error() string   { return e.err.Error() }
func (e *sentinelError) Unwrap() []error { return []error{e.sentinel, e.err} }

// translate maps errors from the layers below to lake's sentinels, keeping
// their messages. It is applied at the API boundary: once per SQL
// statement (Session.runOnce, for every statement kind), and in the
// exported methods of Lake, Table and Result that reach the catalog or
// iceberg-go without SQL (they are boundaries of their own), plus the
// table lookup, whose ErrTableNotFound statements test for IF EXISTS. It
// is idempotent: an error that already carries a sentinel passes through.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var s *sentinelError
	if errors.As(err, &s) {
		return err
	}
	switch {
	case errors.Is(err, plan.ErrNotSupported):
		return &sentinelError{ErrNotImplemented, err}
	case errors.Is(err, table.ErrCommitFailed):
		return &sentinelError{ErrCommitConflict, err}
	case errors.Is(err, icecatalog.ErrNoSuchTable):
		return &sentinelError{ErrTableNotFound, err}
	case errors.Is(err, icecatalog.ErrTableAlreadyExists):
		return &sentinelError{ErrTableExists, err}
	case errors.Is(err, icecatalog.ErrNoSuchNamespace):
		return &sentinelError{ErrNamespaceNotFound, err}
	}
	return err
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
