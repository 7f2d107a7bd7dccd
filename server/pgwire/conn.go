package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/parser"
)

// conn is one client connection: its session, prepared statements and
// portals. Its goroutine reads and runs messages one at a time; only
// cancelStatement and shutdown are called from other goroutines.
type conn struct {
	srv *Server
	nc  net.Conn
	be  *pgproto3.Backend

	pid    uint32
	secret uint32
	user   string
	dbname string

	sess     *lake.Session
	stmts    map[string]*prepared
	portals  map[string]*portal
	skipSync bool   // an extended-protocol error: skip until Sync
	text     string // the running statement's text, for error positions
	timeout  time.Duration

	mu sync.Mutex
	// running is the newest statement's cancel; nil when none runs. A
	// suspended portal's statement keeps its own context.
	running *runToken
	// busy is set while a message is handled: shutdown wakes only a
	// connection that waits for its next message.
	busy    atomic.Bool
	closing atomic.Bool
}

type runToken struct{ cancel context.CancelCauseFunc }

// errCanceled is the cause a CancelRequest gives the running statement.
var errCanceled = errors.New("canceling statement due to user request")

// errShutdownCancel is the cause shutdown gives the running statement.
var errShutdownCancel = errors.New("terminating connection due to administrator command")

func (s *Server) serveConn(nc net.Conn) {
	c := &conn{srv: s, nc: nc, stmts: map[string]*prepared{}, portals: map[string]*portal{}, timeout: s.cfg.StatementTimeout}
	defer nc.Close()
	defer func() {
		if p := recover(); p != nil {
			// a broken invariant: end this connection, keep the server
			s.log.Error("pgwire: connection panic", "panic", p, "stack", string(debug.Stack()))
			c.fatal("XX000", fmt.Sprintf("internal error: %v", p))
		}
	}()
	ok, err := c.startup()
	if err != nil {
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			s.log.Debug("pgwire: startup failed", "remote", nc.RemoteAddr().String(), "err", err)
		}
		return
	}
	if !ok {
		return
	}
	defer s.unregister(c)
	defer c.closeSession()
	c.loop()
}

// closeSession rolls back the open transaction and releases portals.
func (c *conn) closeSession() {
	for name, p := range c.portals {
		p.close()
		delete(c.portals, name)
	}
	if c.sess != nil {
		c.sess.Close()
	}
}

// startup runs the startup phase: SSL negotiation, the startup message,
// authentication and the session's parameters. ok is false when the
// connection ends there (a CancelRequest, refused authentication).
func (c *conn) startup() (ok bool, err error) {
	c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	defer c.nc.SetDeadline(time.Time{})
	c.be = pgproto3.NewBackend(c.nc, c.nc)
	c.be.SetMaxBodyLen(c.srv.cfg.MaxMessageSize)
	tlsDone := false
	for {
		msg, err := c.be.ReceiveStartupMessage()
		if err != nil {
			return false, err
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if c.srv.cfg.TLS == nil || tlsDone {
				if _, err := c.nc.Write([]byte{'N'}); err != nil {
					return false, err
				}
				continue
			}
			if _, err := c.nc.Write([]byte{'S'}); err != nil {
				return false, err
			}
			tc := tls.Server(c.nc, c.srv.cfg.TLS)
			if err := tc.Handshake(); err != nil {
				return false, fmt.Errorf("tls handshake: %w", err)
			}
			c.nc = tc
			c.be = pgproto3.NewBackend(tc, tc)
			c.be.SetMaxBodyLen(c.srv.cfg.MaxMessageSize)
			tlsDone = true
		case *pgproto3.GSSEncRequest:
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return false, err
			}
		case *pgproto3.CancelRequest:
			c.srv.cancel(m.ProcessID, m.SecretKey)
			return false, nil
		case *pgproto3.StartupMessage:
			return c.open(m, tlsDone)
		default:
			return false, fmt.Errorf("unexpected startup message %T", msg)
		}
	}
}

func (c *conn) open(m *pgproto3.StartupMessage, tlsDone bool) (bool, error) {
	c.user = m.Parameters["user"]
	c.dbname = m.Parameters["database"]
	if c.dbname == "" {
		c.dbname = c.user
	}
	if c.user == "" {
		c.fatal("28000", "no PostgreSQL user name specified in startup packet")
		return false, nil
	}
	if m.ProtocolVersion != pgproto3.ProtocolVersion30 {
		// a 3.2 client: we speak 3.0, which it must then use
		c.be.Send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0})
	}
	if c.srv.authRequired() {
		if err := c.authenticate(); err != nil {
			return false, err
		}
	}
	if err := c.srv.register(c); err != nil {
		code := "53300"
		if errors.Is(err, errShuttingDown) {
			code = "57P03"
		}
		c.fatal(code, err.Error())
		return false, nil
	}
	c.sess = c.srv.cfg.Lake.Session()
	c.sess.SetSystemTables(c.systemTables)
	c.sess.SetRelationOIDs(c.relationOID)
	params := map[string]string{
		"server_version":              ServerVersion,
		"server_encoding":             "UTF8",
		"client_encoding":             "UTF8",
		"DateStyle":                   "ISO, MDY",
		"IntervalStyle":               "postgres",
		"TimeZone":                    "UTC",
		"integer_datetimes":           "on",
		"standard_conforming_strings": "on",
		"is_superuser":                "on",
		"session_authorization":       c.user,
		"application_name":            m.Parameters["application_name"],
	}
	if enc := m.Parameters["client_encoding"]; enc != "" && !isUTF8(enc) {
		c.fatal("22023", fmt.Sprintf("invalid value for parameter \"client_encoding\": %q; skade speaks UTF8 only", enc))
		return false, nil
	}
	for name, v := range params {
		c.setting(name, v)
	}
	c.setting("current_database", c.dbname)
	c.setting("pg_backend_pid", strconv.FormatUint(uint64(c.pid), 10))
	c.setting("search_path", "main")
	c.setting("transaction_isolation", "repeatable read")
	c.setting("default_transaction_isolation", "repeatable read")
	if c.srv.cfg.MemoryLimit != "" {
		c.setting("memory_limit", c.srv.cfg.MemoryLimit)
	}
	c.be.Send(&pgproto3.AuthenticationOk{})
	for _, name := range []string{"server_version", "server_encoding", "client_encoding", "DateStyle", "IntervalStyle", "TimeZone", "integer_datetimes", "standard_conforming_strings", "is_superuser", "session_authorization", "application_name"} {
		c.be.Send(&pgproto3.ParameterStatus{Name: name, Value: params[name]})
	}
	c.be.Send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: []byte{byte(c.secret >> 24), byte(c.secret >> 16), byte(c.secret >> 8), byte(c.secret)}})
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	return true, c.be.Flush()
}

func isUTF8(enc string) bool {
	e := strings.ToUpper(strings.ReplaceAll(strings.Trim(enc, `'"`), "-", ""))
	return e == "UTF8" || e == "UNICODE"
}

// setting sets a session variable, as SET would.
func (c *conn) setting(name, value string) {
	st := &parser.SetVar{Name: parser.Name{{Name: strings.ToLower(name)}},
		Values: []parser.Expr{&parser.Literal{Kind: parser.LitString, Value: value}}}
	if res, err := c.sess.Run(context.Background(), st); err == nil {
		res.Close()
	}
}

// loop reads and runs messages until the client leaves or the server
// shuts down.
func (c *conn) loop() {
	for {
		if d := c.srv.cfg.IdleTimeout; d > 0 {
			c.nc.SetReadDeadline(time.Now().Add(d))
		} else {
			c.nc.SetReadDeadline(time.Time{})
		}
		// INVARIANT: checked after the deadline is set, so that a
		// shutdown's wake-up deadline is never overwritten unseen
		if c.closing.Load() {
			c.fatal("57P01", errShutdownCancel.Error())
			return
		}
		msg, err := c.be.Receive()
		if err != nil {
			var ne net.Error
			switch {
			case c.closing.Load():
				c.fatal("57P01", errShutdownCancel.Error())
			case errors.As(err, &ne) && ne.Timeout():
				c.fatal("57P05", "terminating connection due to idle-session timeout")
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed), errors.Is(err, os.ErrDeadlineExceeded):
			default:
				// garbage or an oversized message: tell the client if it
				// still listens, and end only this connection
				c.fatal("08P01", "invalid message: "+err.Error())
			}
			return
		}
		c.nc.SetReadDeadline(time.Time{})
		c.busy.Store(true)
		ok := c.handle(msg)
		c.busy.Store(false)
		if !ok {
			return
		}
	}
}

// handle runs one message; false ends the connection.
func (c *conn) handle(msg pgproto3.FrontendMessage) bool {
	if c.skipSync {
		switch msg.(type) {
		case *pgproto3.Sync:
			c.skipSync = false
		case *pgproto3.Terminate:
			return false
		default:
			return true
		}
	}
	// Replies are flushed at Sync, Flush and the end of a simple query
	// (and while rows stream), not after each message: a client's
	// Parse/Bind/Describe/Execute/Sync batch gets one write back.
	switch m := msg.(type) {
	case *pgproto3.Query:
		c.simpleQuery(m.String)
	case *pgproto3.Parse:
		c.ok(c.parse(m))
		return true
	case *pgproto3.Bind:
		c.ok(c.bind(m))
		return true
	case *pgproto3.Describe:
		c.ok(c.describe(m))
		return true
	case *pgproto3.Execute:
		c.ok(c.execute(m))
		return true
	case *pgproto3.Close:
		c.closeObject(m)
		return true
	case *pgproto3.Sync:
		c.sync()
	case *pgproto3.Flush:
	case *pgproto3.Terminate:
		return false
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// left over from a COPY that already failed: PostgreSQL ignores
		// them too
	default:
		c.fatal("08P01", fmt.Sprintf("unexpected message %T", msg))
		return false
	}
	return c.be.Flush() == nil
}

// ok reports an extended-protocol step's error, after which messages are
// skipped until Sync.
func (c *conn) ok(err error) {
	if err != nil {
		c.sendError(err)
		c.skipSync = true
	}
}

// sync ends an extended-protocol batch: outside a transaction the
// portals end with it.
func (c *conn) sync() {
	if !c.sess.InTransaction() {
		for name, p := range c.portals {
			p.close()
			delete(c.portals, name)
		}
	}
	c.ready()
}

func (c *conn) ready() {
	status := byte('I')
	switch {
	case c.sess.InFailedTransaction():
		status = 'E'
	case c.sess.InTransaction():
		status = 'T'
	}
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: status})
}

// fatal sends a FATAL error and flushes; the caller ends the connection.
func (c *conn) fatal(code, msg string) {
	c.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: msg})
	c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	c.be.Flush()
}

// statementContext starts a statement: its context ends on
// CancelRequest, the statement timeout or shutdown.
func (c *conn) statementContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	// pg_get_constraintdef reads the lake's constraints
	ctx = exec.WithCatalogDefs(ctx, &stmtDefs{c: c})
	var stop func() bool
	if c.timeout > 0 {
		t := time.AfterFunc(c.timeout, func() { cancel(errStatementTimeout) })
		stop = t.Stop
	}
	tok := &runToken{cancel: cancel}
	c.mu.Lock()
	c.running = tok
	c.mu.Unlock()
	return ctx, func() {
		if stop != nil {
			stop()
		}
		c.mu.Lock()
		if c.running == tok {
			c.running = nil
		}
		c.mu.Unlock()
		cancel(nil)
	}
}

var errStatementTimeout = errors.New("canceling statement due to statement timeout")

func (c *conn) cancelStatement() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running != nil {
		c.running.cancel(errCanceled)
	}
}

// shutdown asks the connection to end: at once when idle, after its
// running statement otherwise; hard cancels that statement too.
func (c *conn) shutdown(hard bool) {
	c.closing.Store(true)
	c.mu.Lock()
	running := c.running
	c.mu.Unlock()
	if hard && running != nil {
		running.cancel(errShutdownCancel)
	}
	if hard || !c.busy.Load() {
		// wake the goroutine blocked reading the next message
		c.nc.SetReadDeadline(time.Now())
	}
}
