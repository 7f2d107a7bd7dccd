package driver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/parser"
)

func init() { sql.Register("skade", Driver{}) }

// Driver is the "skade" database/sql driver.
type Driver struct{}

var (
	_ driver.Driver        = Driver{}
	_ driver.DriverContext = Driver{}
)

// Open opens a connection to the lake at dsn (database/sql calls it only
// when OpenConnector is not used).
func (d Driver) Open(dsn string) (driver.Conn, error) {
	c, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	conn, err := c.Connect(context.Background())
	if err != nil {
		return nil, err
	}
	// the connection holds the lake; close it with the connection
	conn.(*Conn).closeLake = c.(*connector).Close
	return conn, nil
}

// OpenConnector returns a connector for the lake directory dsn.
func (Driver) OpenConnector(dsn string) (driver.Connector, error) {
	if dsn == "" {
		return nil, errors.New("skade: the data source name is a lake directory, e.g. ./skade-lake")
	}
	abs, err := filepath.Abs(dsn)
	if err != nil {
		return nil, fmt.Errorf("skade: %w", err)
	}
	return &connector{dir: abs}, nil
}

// shared lakes, by absolute directory: a process opens a lake's catalog
// once, however many sql.DBs use it.
var (
	sharedMu sync.Mutex
	shared   = map[string]*sharedLake{}
)

type sharedLake struct {
	lk   *lake.Lake
	refs int
}

func acquire(ctx context.Context, dir string) (*lake.Lake, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if s, ok := shared[dir]; ok {
		s.refs++
		return s.lk, nil
	}
	lk, err := lake.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	shared[dir] = &sharedLake{lk: lk, refs: 1}
	return lk, nil
}

func release(dir string) error {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	s, ok := shared[dir]
	if !ok {
		return nil
	}
	s.refs--
	if s.refs > 0 {
		return nil
	}
	delete(shared, dir)
	return s.lk.Close()
}

// connector opens sessions on one lake. A DSN connector holds the shared
// lake from its first connection until sql.DB.Close closes it.
type connector struct {
	dir  string
	mu   sync.Mutex
	lk   *lake.Lake
	own  bool // the lake is the shared one of dir, released on Close
	done bool
}

// NewConnector serves lk, which the caller opened and closes: use it with
// sql.OpenDB.
func NewConnector(lk *lake.Lake) driver.Connector { return &connector{lk: lk} }

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return nil, errors.New("skade: the database is closed")
	}
	if c.lk == nil {
		lk, err := acquire(ctx, c.dir)
		if err != nil {
			return nil, err
		}
		c.lk, c.own = lk, true
	}
	return &Conn{sess: c.lk.Session()}, nil
}

func (c *connector) Driver() driver.Driver { return Driver{} }

// Close releases the shared lake (sql.DB.Close calls it).
func (c *connector) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	if c.own {
		c.own = false
		return release(c.dir)
	}
	return nil
}

// Conn is one connection: a lake.Session.
type Conn struct {
	sess      *lake.Session
	tx        bool
	closeLake func() error
}

var (
	_ driver.Conn               = (*Conn)(nil)
	_ driver.ConnBeginTx        = (*Conn)(nil)
	_ driver.ConnPrepareContext = (*Conn)(nil)
	_ driver.ExecerContext      = (*Conn)(nil)
	_ driver.QueryerContext     = (*Conn)(nil)
	_ driver.SessionResetter    = (*Conn)(nil)
	_ driver.Validator          = (*Conn)(nil)
	_ driver.NamedValueChecker  = (*Conn)(nil)
)

// Session is the connection's session, for sql.Conn.Raw callers.
func (c *Conn) Session() *lake.Session { return c.sess }

// QueryArrow runs a statement and returns its Arrow result, which the
// caller reads and closes.
func (c *Conn) QueryArrow(ctx context.Context, query string, args ...any) (*lake.Result, error) {
	return c.sess.SQL(ctx, query, args...)
}

func (c *Conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext parses the statement once; it is planned when it runs.
func (c *Conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	stmt, err := parser.ParseOne(query)
	if err != nil {
		return nil, fmt.Errorf("skade: %w", err)
	}
	return &Stmt{c: c, stmt: stmt, n: lake.NumParams(stmt)}, nil
}

// Close rolls back an open transaction.
func (c *Conn) Close() error {
	err := c.sess.Close()
	if c.closeLake != nil {
		err = errors.Join(err, c.closeLake())
		c.closeLake = nil
	}
	return err
}

func (c *Conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx starts a transaction. skade's transactions are snapshot
// isolation: the default level, sql.LevelSnapshot and
// sql.LevelRepeatableRead get it, and so do the weaker read committed
// and read uncommitted; sql.LevelSerializable, linearizable and
// read-only transactions are refused rather than pretended.
func (c *Conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault, sql.LevelSnapshot, sql.LevelRepeatableRead, sql.LevelReadCommitted, sql.LevelReadUncommitted, sql.LevelWriteCommitted:
	default:
		return nil, fmt.Errorf("skade: isolation level %s is not supported; transactions are snapshot isolation (repeatable read)", sql.IsolationLevel(opts.Isolation))
	}
	if opts.ReadOnly {
		return nil, errors.New("skade: read-only transactions are not supported; use a plain transaction")
	}
	if err := c.sess.Begin(ctx); err != nil {
		return nil, err
	}
	c.tx = true
	return &tx{c: c}, nil
}

type tx struct{ c *Conn }

func (t *tx) Commit() error {
	t.c.tx = false
	return t.c.sess.Commit(context.Background())
}

func (t *tx) Rollback() error {
	t.c.tx = false
	return t.c.sess.Rollback(context.Background())
}

// ResetSession runs before a pooled connection is reused: a transaction
// left open by a caller that lost it is rolled back.
func (c *Conn) ResetSession(ctx context.Context) error {
	if c.sess.InTransaction() && !c.tx {
		return c.sess.Rollback(ctx)
	}
	return nil
}

func (c *Conn) IsValid() bool { return true }

// CheckNamedValue accepts the values lake takes and refuses named
// arguments; others go through database/sql's default conversion.
func (c *Conn) CheckNamedValue(nv *driver.NamedValue) error {
	if nv.Name != "" {
		return fmt.Errorf("skade: named argument %q is not supported; use $%d", nv.Name, nv.Ordinal)
	}
	switch nv.Value.(type) {
	case uint64, uint:
		// database/sql's converter refuses those past int64; the
		// statement takes them as numeric(20)
		return nil
	}
	v, err := driver.DefaultParameterConverter.ConvertValue(nv.Value)
	if err != nil {
		return fmt.Errorf("skade: argument $%d: %w", nv.Ordinal, err)
	}
	nv.Value = v
	return nil
}

func (c *Conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	res, err := c.sess.SQL(ctx, query, values(args)...)
	if err != nil {
		return nil, err
	}
	return execResult(ctx, res)
}

func (c *Conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	res, err := c.sess.SQL(ctx, query, values(args)...)
	if err != nil {
		return nil, err
	}
	return newRows(res), nil
}

func values(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

// execResult reads a statement's result to its end and reports the rows
// it changed.
func execResult(ctx context.Context, res *lake.Result) (driver.Result, error) {
	bs, err := res.Collect(ctx)
	if err != nil {
		return nil, err
	}
	for _, b := range bs {
		b.Release()
	}
	m := res.Metrics()
	return result{m.RowsInserted + m.RowsUpdated + m.RowsDeleted}, nil
}

type result struct{ n int64 }

func (r result) LastInsertId() (int64, error) {
	return 0, errors.New("skade: tables have no auto-increment ids; use RETURNING")
}
func (r result) RowsAffected() (int64, error) { return r.n, nil }

// Stmt is a prepared statement.
type Stmt struct {
	c    *Conn
	stmt parser.Stmt
	n    int
}

var (
	_ driver.StmtExecContext  = (*Stmt)(nil)
	_ driver.StmtQueryContext = (*Stmt)(nil)
)

func (s *Stmt) Close() error  { return nil }
func (s *Stmt) NumInput() int { return s.n }

func (s *Stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *Stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s *Stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	res, err := s.c.sess.Run(ctx, s.stmt, values(args)...)
	if err != nil {
		return nil, err
	}
	return execResult(ctx, res)
}

func (s *Stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	res, err := s.c.sess.Run(ctx, s.stmt, values(args)...)
	if err != nil {
		return nil, err
	}
	return newRows(res), nil
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}
