package main

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestServeRefusals: serve needs an existing lake, something to serve,
// and authentication to listen beyond loopback.
func TestServeRefusals(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := skade(t, "--lake", filepath.Join(dir, "nolake"), "serve")
	if code != 1 || !strings.Contains(errOut, "no lake") {
		t.Errorf("missing lake: %d %q", code, errOut)
	}
	lakeDir := filepath.Join(dir, "lake")
	if code, _, errOut := skade(t, "--lake", lakeDir, "sql", "-c", "CREATE TABLE t (id INT)"); code != 0 {
		t.Fatal(errOut)
	}
	code, _, errOut = skade(t, "--lake", lakeDir, "serve", "--listen", "0.0.0.0:0")
	if code != 1 || !strings.Contains(errOut, "without authentication") {
		t.Errorf("remote trust: %d %q", code, errOut)
	}
	code, _, errOut = skade(t, "--lake", lakeDir, "serve", "--flight", "0.0.0.0:0", "--listen", "")
	if code != 1 || !strings.Contains(errOut, "without authentication") {
		t.Errorf("remote trust (flight): %d %q", code, errOut)
	}
	code, _, errOut = skade(t, "--lake", lakeDir, "serve", "--listen", "")
	if code != 2 || !strings.Contains(errOut, "nothing to serve") {
		t.Errorf("nothing to serve: %d %q", code, errOut)
	}
}

// TestServeRunsAndStops serves a lake, answers a pgx client, and stops
// when the command's context ends.
func TestServeRunsAndStops(t *testing.T) {
	dir := t.TempDir()
	lakeDir := filepath.Join(dir, "lake")
	if code, _, errOut := skade(t, "--lake", lakeDir, "sql", "-c", "CREATE TABLE t AS SELECT 7 AS v"); code != 0 {
		t.Fatal(errOut)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--lake", lakeDir, "serve", "--listen", addr, "--shutdown-grace", "1s"}, strings.NewReader(""), &syncWriter{b: &out}, &syncWriter{b: &errb})
	}()
	var conn *pgx.Conn
	for i := 0; i < 100; i++ {
		if conn, err = pgx.Connect(context.Background(), "postgres://me@"+addr+"/lake?sslmode=disable"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	var v int
	if err := conn.QueryRow(context.Background(), "SELECT v FROM t").Scan(&v); err != nil || v != 7 {
		t.Errorf("query: %d %v", v, err)
	}
	conn.Close(context.Background())
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// syncWriter serializes writes from the command's goroutines.
type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
