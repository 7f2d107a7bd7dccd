package pgwire_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/skadedb/skade/server/pgwire"
)

// TestMaxConnections: a connection over the limit is refused with 53300
// and the others go on.
func TestMaxConnections(t *testing.T) {
	ts := startServer(t, pgwire.Config{MaxConnections: 2})
	ctx := context.Background()
	a, b := ts.connect(t, ""), ts.connect(t, "")
	_, err := pgx.Connect(ctx, ts.url(""))
	if pgCode(err) != "53300" {
		t.Fatalf("third connection: want 53300, got %v", err)
	}
	for _, c := range []*pgx.Conn{a, b} {
		var n int
		if err := c.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	a.Close(ctx)
	// the slot frees once the server has seen the connection end
	var c *pgx.Conn
	for i := 0; i < 50; i++ {
		if c, err = pgx.Connect(ctx, ts.url("")); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("after one closed: %v", err)
	}
	c.Close(ctx)
}

// TestIdleTimeout: a connection idle past the limit is closed with 57P05.
func TestIdleTimeout(t *testing.T) {
	ts := startServer(t, pgwire.Config{IdleTimeout: 150 * time.Millisecond})
	c := ts.connect(t, "")
	nc := c.PgConn().Conn()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	data, _ := io.ReadAll(nc) // the FATAL message, then EOF
	if !bytes.Contains(data, []byte("57P05")) {
		t.Errorf("idle connection got %q", data)
	}
}

// TestTLS: with a certificate, sslmode=require connects over TLS; without
// one, the server answers SSLRequest with N, which sslmode=require
// refuses and sslmode=prefer falls back from.
func TestTLS(t *testing.T) {
	cert := selfSigned(t)
	ts := startServer(t, pgwire.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	ctx := context.Background()
	c, err := pgx.Connect(ctx, "postgres://skade@"+ts.addr+"/lake?sslmode=require")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.PgConn().Conn().(*tls.Conn); !ok {
		t.Errorf("the connection is not TLS: %T", c.PgConn().Conn())
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT 2").Scan(&n); err != nil || n != 2 {
		t.Errorf("over TLS: %v", err)
	}
	c.Close(ctx)

	plain := startServer(t, pgwire.Config{})
	if _, err := pgx.Connect(ctx, "postgres://skade@"+plain.addr+"/lake?sslmode=require"); err == nil {
		t.Error("sslmode=require connected to a server without TLS")
	}
	c, err = pgx.Connect(ctx, "postgres://skade@"+plain.addr+"/lake?sslmode=prefer")
	if err != nil {
		t.Fatalf("sslmode=prefer: %v", err)
	}
	c.Close(ctx)
}

func selfSigned(t *testing.T) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestShutdownGrace: a running statement may finish within the grace
// period; past it, it is canceled (57P01) and Shutdown returns.
func TestShutdownGrace(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "")
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(context.Background(), "SELECT count(*) FROM range(100000000000) a WHERE a.range % 7 = 3")
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := ts.srv.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("shutdown past its grace: %v", err)
	}
	if time.Since(start) > 15*time.Second {
		t.Errorf("shutdown took %s", time.Since(start))
	}
	var pe *pgconn.PgError
	if err := <-done; !errors.As(err, &pe) || pe.Code != "57P01" {
		t.Errorf("the running statement: %v", err)
	}
}
