package lake

import (
	"context"
	"errors"
)

// Session runs SQL against the lake. Sessions are not safe for concurrent
// use; open one per goroutine.
//
// SQL execution arrives with the SQL sessions work; until then every
// statement returns ErrNotImplemented.
type Session struct {
	lk *Lake
}

// Session opens a SQL session on the lake.
func (l *Lake) Session() *Session { return &Session{lk: l} }

// SQL runs one statement.
func (s *Session) SQL(ctx context.Context, query string) (*Result, error) {
	return nil, &sentinelError{ErrNotImplemented, errors.New("sql: statements cannot run yet; this build has the table API only (lake.Table, Append, Scan)")}
}

// Result is a statement's result.
type Result struct{}
