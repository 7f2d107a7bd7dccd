package lake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/scan"
	"github.com/skadedb/skade/snapshot"
)

// maxWriteRetries bounds SET write_retries: a write that keeps losing
// races that often is contending on a hot table, and should hear about it.
const maxWriteRetries = 100

// appendRetries is how often an INSERT runs again after losing a commit
// race, at least: appends never conflict with each other's data.
const appendRetries = 20

// SetWriteRetries makes MERGE, UPDATE and DELETE re-plan and re-run up to n
// times against the table's new head when another writer's commit
// conflicts with them (ErrCommitConflict), instead of returning the
// conflict. The default, 0, returns it. A commit that does not conflict
// (it touched other data files; docs/merge.md, "Concurrent writers") needs
// no retry: the statement's files are restaged on the new head. A
// conflict that only maintenance caused (compaction, expiry) re-runs the
// statement whatever n is. An INSERT outside a transaction, which cannot conflict with
// what another writer changed, is retried at least 20 times anyway
// (unless it may read a registered stream). The same setting is `SET write_retries = n`.
//
// A retry re-reads the statement's sources; a registered reader can be
// read only once, so a statement over one fails on its retry with an
// error that says so.
func (s *Session) SetWriteRetries(n int) error {
	if _, err := parseRetries(strconv.Itoa(n)); err != nil {
		return &sentinelError{ErrInvalidArgument, fmt.Errorf("write retries: %w", err)}
	}
	s.settings["write_retries"] = strconv.Itoa(n)
	return nil
}

func parseRetries(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxWriteRetries {
		return 0, fmt.Errorf("%q is not a retry count; use a whole number from 0 to %d", v, maxWriteRetries)
	}
	return n, nil
}

func (s *Session) writeRetries() int {
	n, err := parseRetries(s.settings["write_retries"])
	if err != nil {
		return 0
	}
	return n
}

// run runs one statement. A MERGE, UPDATE or DELETE that loses a commit
// race is planned again from its syntax tree against the new head and run
// again, up to the session's write retries. Nothing of a lost attempt
// remains: the failed commit removed its files.
func (s *Session) run(ctx context.Context, stmt parser.Stmt) (*Result, error) {
	s.lastCommit, s.lastStaged = 0, false
	s.stmts++
	ctx = scan.WithCSVRejects(ctx, &s.rejects, s.stmts)
	leave := func() {}
	if s.lk.opts.runtimeMemoryLimit {
		leave = governor.enter(s.memoryLimit())
	}
	res, err := s.runRetrying(ctx, stmt)
	if res != nil && res.op != nil {
		res.onClose = leave // the statement runs on while its result streams
		res.watchLeak()
	} else {
		leave()
	}
	if err == nil && res != nil {
		res.metrics.SnapshotID, res.metrics.Staged = s.lastCommit, s.lastStaged
	}
	if err != nil && s.tx != nil && s.tx.aborted == nil {
		// As in Postgres, a failed statement aborts the transaction:
		// what it staged before failing cannot be told apart from the
		// rest, so only ROLLBACK is left.
		s.tx.aborted = err
	}
	return res, err
}

func (s *Session) runRetrying(ctx context.Context, stmt parser.Stmt) (*Result, error) {
	if ins, ok := stmt.(*parser.Insert); ok && ins.OnConflict != nil {
		// an upsert is a MERGE: retried as one
		if s.tx != nil || s.readsStream() {
			return s.runOnce(ctx, stmt)
		}
		return s.retrying(ctx, stmt, s.writeRetries())
	}
	switch stmt.(type) {
	case *parser.Insert:
		if s.tx != nil || s.readsStream() {
			// a registered stream (RegisterReader, COPY FROM STDIN) is
			// read once: the statement cannot run again
			return s.runOnce(ctx, stmt)
		}
	case *parser.Merge, *parser.Update, *parser.Delete:
		if s.tx != nil {
			// inside a transaction nobody else writes what it sees: a
			// conflict only shows at COMMIT, for the whole transaction
			return s.runOnce(ctx, stmt)
		}
	default:
		return s.runOnce(ctx, stmt)
	}
	retries := s.writeRetries()
	if _, insert := stmt.(*parser.Insert); insert {
		// an append conflicts only with the race itself, never with what
		// the other writer changed: run it again, whatever write_retries
		// says (nothing of the lost attempt was kept)
		retries = max(retries, appendRetries)
	}
	return s.retrying(ctx, stmt, retries)
}

// retrying runs stmt, again after a commit conflict up to retries times,
// backing off by the target table's commit policy.
func (s *Session) retrying(ctx context.Context, stmt parser.Stmt, retries int) (*Result, error) {
	var policy snapshot.RetryPolicy
	start := time.Now()
	for attempt := 0; ; attempt++ {
		res, err := s.runOnce(ctx, stmt)
		if attempt < vanishedRetries && s.vanished(ctx, stmt, err) {
			continue
		}
		limit := retries
		if maintenance(err) {
			// no row changed: run again as an append is
			limit = max(retries, appendRetries)
		}
		if err == nil || !errors.Is(err, ErrCommitConflict) || attempt >= limit {
			if err != nil && attempt > 0 {
				err = fmt.Errorf("after %d retries: %w", attempt, err)
			}
			return res, err
		}
		if attempt == 0 {
			policy = s.retryPolicyOf(ctx, stmt)
		}
		wait := policy.Wait(attempt)
		if time.Since(start)+wait > policy.Total {
			return res, fmt.Errorf("after %d retries in %s (commit.retry.total-timeout-ms): %w", attempt, time.Since(start).Round(time.Millisecond), err)
		}
		if serr := snapshot.Sleep(ctx, wait); serr != nil {
			return nil, errors.Join(err, serr)
		}
	}
}

// maintenance reports whether a commit conflict came from table
// maintenance alone (a compaction rewrote a file the statement touched,
// or expiry removed the snapshots in between): no row changed, so the
// statement is run again whatever write_retries says, as an append is.
func maintenance(err error) bool {
	var ce *mergeinto.ConflictError
	return errors.As(err, &ce) && ce.Maintenance
}

// vanishedRetries bounds the re-runs of a write whose files vanished
// while it ran: a file that stays missing is not expiry's doing.
const vanishedRetries = 3

// vanished reports whether a write failed because a file it read is gone:
// expiry in another session or process removed the snapshot the
// statement was reading, with the files only that snapshot used. The
// statement committed nothing and removed what it wrote, so it runs again
// on the current head.
// Only a missing file of the statement's target table counts: a missing
// file the statement was asked to read (read_csv) is the user's error.
func (s *Session) vanished(ctx context.Context, stmt parser.Stmt, err error) bool {
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	tbl, _, lerr := s.lookup(ctx, targetOf(stmt))
	if lerr != nil {
		return false
	}
	msg := err.Error()
	loc := strings.TrimSuffix(tbl.tbl.Location(), "/") + "/"
	// the message may name the file by path where the location is a URI
	return strings.Contains(msg, loc) || strings.Contains(msg, strings.TrimSuffix(snapshot.NormalizePath(loc), "/")+"/")
}

// targetOf is the table a write statement changes.
func targetOf(stmt parser.Stmt) parser.Name {
	switch st := stmt.(type) {
	case *parser.Merge:
		return st.Target
	case *parser.Insert:
		return st.Table
	case *parser.Update:
		return st.Table.Name
	case *parser.Delete:
		return st.Table.Name
	}
	return nil
}

// retryPolicyOf is the commit policy of the statement's target table
// (snapshot.RetryPolicyOf), or iceberg-go's defaults when it cannot be
// read.
func (s *Session) retryPolicyOf(ctx context.Context, stmt parser.Stmt) snapshot.RetryPolicy {
	seed := uint64(time.Now().UnixNano())
	tbl, _, err := s.lookup(ctx, targetOf(stmt))
	if err != nil {
		return snapshot.RetryPolicyOf(nil, seed)
	}
	return snapshot.RetryPolicyOf(tbl.tbl.Metadata().Properties(), seed)
}

// readsStream reports whether the session has a registered stream, which
// a statement may read and a retry could not read again.
func (s *Session) readsStream() bool {
	for _, src := range s.sources {
		if _, ok := src.(*readerSource); ok {
			return true
		}
	}
	return false
}
