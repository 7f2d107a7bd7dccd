package lake

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skadedb/skade/parser"
)

// Begin opens a transaction: until Commit or Rollback, the session's
// statements see their own writes, and nobody else sees any of them.
// BEGIN in SQL is the same. See Commit for what publishing does.
func (s *Session) Begin(ctx context.Context) error {
	if s.tx != nil {
		return &sentinelError{ErrInvalidArgument, errors.New("begin: a transaction is already open; COMMIT or ROLLBACK it first")}
	}
	s.tx = &txn{s: s, entries: map[string]*txEntry{}, start: time.Now()}
	return nil
}

// Commit publishes every table the transaction created, changed, replaced
// or dropped, all at once. If another writer changed one of them after
// the transaction first read it, nothing is published: the error names
// the table and wraps ErrCommitConflict, and the transaction's files are
// removed. Committing an aborted transaction rolls it back and returns an
// error wrapping ErrTxAborted. The transaction is over either way.
func (s *Session) Commit(ctx context.Context) error {
	if s.tx == nil {
		return &sentinelError{ErrInvalidArgument, errors.New("commit: no transaction is open; BEGIN one first")}
	}
	tx := s.tx
	s.tx = nil
	return tx.commit(ctx)
}

// Rollback ends the transaction, publishing nothing and removing every
// file it wrote.
func (s *Session) Rollback(context.Context) error {
	if s.tx == nil {
		return &sentinelError{ErrInvalidArgument, errors.New("rollback: no transaction is open")}
	}
	tx := s.tx
	s.tx = nil
	return tx.rollback()
}

// InTransaction reports whether a transaction is open.
func (s *Session) InTransaction() bool { return s.tx != nil }

// WithTx runs fn inside a transaction on s and commits it; if fn returns
// an error or panics, the transaction is rolled back instead (and the
// panic goes on).
func (s *Session) WithTx(ctx context.Context, fn func(*Session) error) (err error) {
	if err := s.Begin(ctx); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			_ = s.Rollback(context.WithoutCancel(ctx))
			panic(p)
		}
	}()
	if err := fn(s); err != nil {
		if s.tx != nil {
			return errors.Join(err, s.Rollback(context.WithoutCancel(ctx)))
		}
		return err
	}
	if s.tx == nil {
		return &sentinelError{ErrInvalidArgument, errors.New("with tx: the function ended the transaction itself; leave COMMIT and ROLLBACK to WithTx")}
	}
	return s.Commit(ctx)
}

// Close rolls back an open transaction. A session needs no other cleanup.
func (s *Session) Close() error {
	for name := range s.temps {
		s.dropTemp(parser.Name{{Name: name, Quoted: true}})
	}
	if s.tx == nil {
		return nil
	}
	return s.Rollback(context.Background())
}

// txControl runs BEGIN, COMMIT and ROLLBACK. As in Postgres, COMMIT and
// ROLLBACK with no open transaction do nothing.
func (s *Session) txControl(ctx context.Context, stmt parser.Stmt) (*Result, error) {
	switch st := stmt.(type) {
	case *parser.Begin:
		if st.Isolation == "serializable" {
			return nil, errSerializable
		}
		if st.ReadOnly {
			return nil, errReadOnlyTxn
		}
		if err := s.Begin(ctx); err != nil {
			return nil, err
		}
	case *parser.Commit:
		if s.tx != nil {
			if err := s.Commit(ctx); err != nil {
				return nil, err
			}
		}
	case *parser.Rollback:
		if s.tx != nil {
			if err := s.Rollback(ctx); err != nil {
				return nil, err
			}
		}
	}
	return emptyResult(), nil
}

// autocommit runs one statement that changes several things (CREATE OR
// REPLACE, CREATE TABLE … AS, DROP of several tables) in a transaction of
// its own when none is open, so that it takes effect whole or not at all.
func (s *Session) autocommit(ctx context.Context, fn func() (*Result, error)) (*Result, error) {
	if s.tx != nil {
		return fn()
	}
	s.tx = &txn{s: s, implicit: true, entries: map[string]*txEntry{}}
	res, err := fn()
	tx := s.tx
	s.tx = nil
	if err != nil {
		if res != nil {
			res.Close()
		}
		return nil, errors.Join(err, tx.rollback())
	}
	if err := tx.commit(ctx); err != nil {
		if res != nil {
			res.Close()
		}
		return nil, err
	}
	return res, nil
}

// notInTx refuses a statement that cannot run inside a transaction.
func (s *Session) notInTx(what string) error {
	if s.tx == nil || s.tx.implicit {
		return nil
	}
	return &sentinelError{ErrNotImplemented, fmt.Errorf("%s cannot run inside a transaction block; run it after COMMIT or ROLLBACK", what)}
}
