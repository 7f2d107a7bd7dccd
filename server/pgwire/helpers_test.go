package pgwire_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/server/pgwire"
)

// testServer is a server on a random loopback port over a fresh lake.
type testServer struct {
	t    testing.TB
	lake *lake.Lake
	srv  *pgwire.Server
	addr string
	done chan error
}

func startServer(t testing.TB, cfg pgwire.Config) *testServer {
	t.Helper()
	ctx := context.Background()
	if cfg.Lake == nil {
		lk, err := lake.Open(ctx, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lk.Close() })
		cfg.Lake = lk
	}
	srv, err := pgwire.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, lake: cfg.Lake, srv: srv, addr: ln.Addr().String(), done: make(chan error, 1)}
	go func() { ts.done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-ts.done; !errors.Is(err, pgwire.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return ts
}

func (ts *testServer) url(extra string) string {
	host, port, _ := net.SplitHostPort(ts.addr)
	return fmt.Sprintf("postgres://skade@%s:%s/lake?sslmode=disable%s", host, port, extra)
}

// connect opens a pgx connection (extended protocol, statement cache).
func (ts *testServer) connect(t testing.TB, extra string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, ts.url(extra))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
