package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/server"
)

// Config configures a Server. The zero value of every field but Lake is
// a working default.
type Config struct {
	// Lake is the lake every connection's session runs on. Required.
	Lake *lake.Lake
	// Users maps user names to passwords. When set, clients authenticate
	// with SCRAM-SHA-256 (md5 and cleartext are refused). When nil, every
	// client is trusted, which Serve allows on loopback addresses only.
	Users map[string]string
	// Password, when set, is the password of every user Users does not
	// name (SCRAM-SHA-256 too).
	Password string
	// TLS, when set, lets clients upgrade to TLS (sslmode=require).
	TLS *tls.Config
	// AllowTrustRemote lets a Server without Users listen on a
	// non-loopback address. Anyone who can reach it can then read and
	// write the lake.
	AllowTrustRemote bool
	// MaxConnections caps concurrent connections (default 100); more are
	// refused with SQLSTATE 53300.
	MaxConnections int
	// StatementTimeout cancels a statement that runs longer (0: none).
	// Clients change it with SET statement_timeout.
	StatementTimeout time.Duration
	// IdleTimeout closes a connection that sends nothing for this long
	// (0: never).
	IdleTimeout time.Duration
	// MaxMessageSize is the largest message a client may send (default
	// 64 MiB); a larger one closes the connection with an error.
	MaxMessageSize int
	// MemoryLimit is each connection's statement memory limit (SET
	// memory_limit); 0 leaves the lake's.
	MemoryLimit string
	// Logger receives connection errors (default: slog's default).
	Logger *slog.Logger
}

// ServerVersion is what the server reports as server_version: the
// PostgreSQL version whose protocol and catalog it follows.
const ServerVersion = "15.0 (skade)"

// Server accepts PostgreSQL connections for one lake.
type Server struct {
	cfg Config
	log *slog.Logger

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[uint32]*conn
	closing   bool
	wg        sync.WaitGroup
	nextPID   atomic.Uint32
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Lake == nil {
		return nil, errors.New("pgwire: Config.Lake is required")
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = 100
	}
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = 64 << 20
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{cfg: cfg, log: log, listeners: map[net.Listener]struct{}{}, conns: map[uint32]*conn{}}
	s.nextPID.Store(uint32(time.Now().UnixNano()%1_000_000) + 1000)
	return s, nil
}

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = errors.New("pgwire: server closed")

// ListenAndServe listens on addr (host:port) and serves until Shutdown.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := s.Listen(addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Listen opens a listener on addr after checking that the server may
// listen there: without Users, only on loopback unless AllowTrustRemote.
func (s *Server) Listen(addr string) (net.Listener, error) {
	if err := s.checkAddr(addr); err != nil {
		return nil, err
	}
	return net.Listen("tcp", addr)
}

func (s *Server) checkAddr(addr string) error {
	return server.CheckListen("pgwire", addr, s.passwords(), s.cfg.AllowTrustRemote)
}

func (s *Server) passwords() server.Passwords {
	return server.Passwords{Users: s.cfg.Users, Password: s.cfg.Password}
}

func (s *Server) authRequired() bool { return s.passwords().Required() }

// Serve accepts connections on ln until Shutdown or Close, and returns
// ErrServerClosed then.
func (s *Server) Serve(ln net.Listener) error {
	if err := s.checkAddr(ln.Addr().String()); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
	}()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(nc)
		}()
	}
}

// Addr-less helpers for tests and the CLI.

// register adds c under a fresh process id and secret key, unless the
// server is closing or full.
func (s *Server) register(c *conn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return errShuttingDown
	}
	if len(s.conns) >= s.cfg.MaxConnections {
		return errTooManyConnections
	}
	for {
		pid := s.nextPID.Add(1)
		if _, taken := s.conns[pid]; !taken && pid != 0 {
			c.pid = pid
			break
		}
	}
	var key [4]byte
	if _, err := rand.Read(key[:]); err != nil {
		return err
	}
	c.secret = binary.BigEndian.Uint32(key[:])
	s.conns[c.pid] = c
	return nil
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns[c.pid] == c {
		delete(s.conns, c.pid)
	}
}

// cancel cancels the running statement of the connection pid, if the key
// matches; a wrong key is ignored, as in PostgreSQL.
func (s *Server) cancel(pid uint32, key []byte) {
	if len(key) != 4 {
		return
	}
	s.mu.Lock()
	c := s.conns[pid]
	s.mu.Unlock()
	if c != nil && c.secret == binary.BigEndian.Uint32(key) {
		c.cancelStatement()
	}
}

// Shutdown stops accepting connections, ends idle connections, and waits
// for running statements to finish. When ctx ends first, it cancels the
// statements still running and closes their connections. Every open
// transaction is rolled back. The lake stays open: its owner closes it.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	for ln := range s.listeners {
		ln.Close()
	}
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.shutdown(false)
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	for _, c := range s.conns {
		c.shutdown(true)
	}
	s.mu.Unlock()
	<-done
	return ctx.Err()
}

// Close closes the listeners and every connection at once, cancelling
// running statements.
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Shutdown(ctx)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

var (
	errShuttingDown       = errors.New("the server is shutting down")
	errTooManyConnections = errors.New("sorry, too many clients already")
)
