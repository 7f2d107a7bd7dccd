// Package s3test starts a real S3-compatible server for tests: the Versity
// S3 Gateway (versitygw, Apache 2.0, built with `go install
// github.com/versity/versitygw/cmd/versitygw@v1.8.0`) over a temporary
// directory, on loopback. A test that needs it calls Start; without the
// binary the test is skipped, unless SKADE_REQUIRE_S3=1 (as .ci/run sets),
// which makes it fail instead.
//
// Proxy puts a fault-injecting HTTP proxy in front of a server, so tests
// can fail every Nth PUT, slow GETs down or cut an upload off mid-body.
package s3test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

const (
	// AccessKey and SecretKey are the server's root credentials.
	AccessKey = "skade-test"
	SecretKey = "skade-test-secret"
	// Bucket is created on every server Start starts.
	Bucket = "lake"
)

// Server is a running S3-compatible server.
type Server struct {
	Endpoint string // http://127.0.0.1:port
	Dir      string // the directory behind it
}

// Binary finds versitygw: $SKADE_S3_SERVER, then PATH, then $GOBIN or
// $GOPATH/bin.
func Binary() string {
	if p := os.Getenv("SKADE_S3_SERVER"); p != "" {
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	gobin := os.Getenv("GOBIN")
	if gobin == "" {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gobin = filepath.Join(strings.TrimSpace(string(out)), "bin")
		}
	}
	if p := filepath.Join(gobin, "versitygw"); gobin != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Start starts a server for the test, creates Bucket, and points the AWS
// environment (endpoint, credentials, region) at it for the rest of the
// test. It is stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		if os.Getenv("SKADE_REQUIRE_S3") == "1" {
			t.Fatal("SKADE_REQUIRE_S3=1 but versitygw is not installed; go install github.com/versity/versitygw/cmd/versitygw@v1.8.0")
		}
		t.Skip("versitygw is not installed (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0); skipping the S3 test")
	}
	dir := t.TempDir()
	addr := freePort(t)
	cmd := exec.Command(bin, "--access", AccessKey, "--secret", SecretKey, "--port", addr, "posix", dir)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	s := &Server{Endpoint: "http://" + addr, Dir: dir}
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("versitygw exited: %s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen on %s within 20s: %s", addr, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.SetEnv(t, s.Endpoint)
	if _, err := s.Client().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(Bucket)}); err != nil {
		t.Fatalf("create bucket %s: %v", Bucket, err)
	}
	return s
}

// SetEnv points the AWS environment at endpoint (the server, or a proxy
// in front of it) for the rest of the test.
func (s *Server) SetEnv(t testing.TB, endpoint string) {
	t.Setenv("AWS_ENDPOINT_URL", endpoint)
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	t.Setenv("AWS_ACCESS_KEY_ID", AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", SecretKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(s.Dir, "no-aws-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(s.Dir, "no-aws-credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// Client is a plain S3 client of the server, for checks behind skade's
// back.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(s.Endpoint), Region: "us-east-1", UsePathStyle: true,
		Credentials:                aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, "")),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// Keys lists every key in Bucket under prefix.
func (s *Server) Keys(t testing.TB, prefix string) []string {
	t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.Client(), &s3.ListObjectsV2Input{Bucket: aws.String(Bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("list %s: %v", prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys
}

// PendingUploads lists the multipart uploads in Bucket that were neither
// completed nor aborted.
func (s *Server) PendingUploads(t testing.TB) []string {
	t.Helper()
	out, err := s.Client().ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(Bucket)})
	if err != nil {
		t.Fatalf("list multipart uploads: %v", err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, aws.ToString(u.Key))
	}
	return keys
}

func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Proxy is a fault-injecting reverse proxy in front of an S3 server. Its
// counters count the requests that reached it, by method.
type Proxy struct {
	URL string

	mu sync.Mutex
	// FailPutEvery makes every Nth PUT (objects and parts) answer 503
	// SlowDown without reaching the server (0: never).
	failPutEvery int
	// ResetPutEvery cuts every Nth PUT's connection after half its body.
	resetPutEvery int
	// GetDelay is added before every GET.
	getDelay time.Duration
	// FailAll answers every request 500 (an outage).
	failAll bool

	puts, gets, faults atomic.Int64
}

// NewProxy starts a proxy in front of endpoint, closed when the test ends.
func NewProxy(t testing.TB, endpoint string) *Proxy {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = nil
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.serve(w, r, rp)
	}), ErrorLog: nil}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	p.URL = "http://" + l.Addr().String()
	return p
}

// Faults sets the faults; zero values switch them off.
func (p *Proxy) Faults(failPutEvery, resetPutEvery int, getDelay time.Duration, failAll bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failPutEvery, p.resetPutEvery, p.getDelay, p.failAll = failPutEvery, resetPutEvery, getDelay, failAll
}

// Counts returns the PUTs and GETs seen, and the faults injected.
func (p *Proxy) Counts() (puts, gets, faults int64) {
	return p.puts.Load(), p.gets.Load(), p.faults.Load()
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	p.mu.Lock()
	failEvery, resetEvery, delay, failAll := p.failPutEvery, p.resetPutEvery, p.getDelay, p.failAll
	p.mu.Unlock()
	if failAll {
		p.faults.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected outage</Message></Error>`)
		return
	}
	switch r.Method {
	case http.MethodPut:
		n := p.puts.Add(1)
		if failEvery > 0 && n%int64(failEvery) == 0 {
			p.faults.Add(1)
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>injected: reduce your request rate</Message></Error>`)
			return
		}
		if resetEvery > 0 && n%int64(resetEvery) == 0 {
			p.faults.Add(1)
			// read half the body, then drop the connection
			_, _ = io.CopyN(io.Discard, r.Body, r.ContentLength/2)
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					if tc, ok := c.(*net.TCPConn); ok {
						_ = tc.SetLinger(0) // RST, not FIN
					}
					_ = c.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
	case http.MethodGet:
		p.gets.Add(1)
		if delay > 0 {
			time.Sleep(delay)
		}
	}
	next.ServeHTTP(w, r)
}
