package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/skadedb/skade/server/flightsql"
	"github.com/skadedb/skade/server/pgwire"
	"github.com/skadedb/skade/server/rest"
)

func init() {
	var o serveOptions
	register(&command{
		name:    "serve",
		summary: "serve the lake over the PostgreSQL protocol (psql, pgx, JDBC, BI tools), Arrow Flight SQL and the Iceberg REST catalog API",
		example: "skade --lake L serve --listen 127.0.0.1:5433   # then: psql -h 127.0.0.1 -p 5433",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.listen, "listen", "127.0.0.1:5433", "address the PostgreSQL protocol listens on (\"\" for none)")
			fs.StringVar(&o.flight, "flight", "", "address Arrow Flight SQL listens on, e.g. 127.0.0.1:32010 (off when empty)")
			fs.StringVar(&o.rest, "rest", "", "address the Iceberg REST catalog listens on, e.g. 127.0.0.1:8181 (off when empty)")
			fs.StringVar(&o.restToken, "rest-token", "", "bearer token the REST catalog requires; $SKADE_REST_TOKEN also sets it")
			fs.Func("rest-client", "an OAuth2 client of the REST catalog's token endpoint, id:secret or id:secret:ns1,ns2 to limit it to namespaces (repeat for more; $SKADE_REST_CLIENTS holds more, separated by spaces)", func(v string) error {
				c, err := rest.ParseClient(v)
				if err == nil {
					o.restClients = append(o.restClients, c)
				}
				return err
			})
			fs.BoolVar(&o.vendCredentials, "rest-vend-credentials", false, "hand the object store credentials this server uses to REST clients that load a table they may see")
			fs.StringVar(&o.password, "password", "", "require this password of every user (SCRAM-SHA-256); $SKADE_PASSWORD also sets it")
			fs.StringVar(&o.usersFile, "users", "", "file of user:password lines; clients authenticate with SCRAM-SHA-256")
			fs.StringVar(&o.tlsCert, "tls-cert", "", "TLS certificate (PEM) for sslmode=require")
			fs.StringVar(&o.tlsKey, "tls-key", "", "TLS private key (PEM)")
			fs.BoolVar(&o.allowRemote, "allow-trust-remote", false, "allow listening on a non-loopback address without a password (anyone who reaches it can write the lake)")
			fs.IntVar(&o.maxConns, "max-connections", 100, "most concurrent connections")
			fs.DurationVar(&o.stmtTimeout, "statement-timeout", 0, "cancel statements running longer than this (0: never)")
			fs.DurationVar(&o.idleTimeout, "idle-timeout", 0, "close connections idle longer than this (0: never)")
			fs.StringVar(&o.memoryLimit, "memory-limit", "", "each connection's statement memory limit, e.g. 512MB")
			fs.DurationVar(&o.grace, "shutdown-grace", 10*time.Second, "on SIGINT/SIGTERM, how long running statements may finish before they are canceled")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
			if len(args) != 0 {
				return usagef("takes no arguments")
			}
			return runServe(ctx, e, o)
		},
	})
}

type serveOptions struct {
	listen, flight, rest, restToken, password, usersFile, tlsCert, tlsKey, memoryLimit string
	allowRemote, vendCredentials                                                       bool
	restClients                                                                        []rest.Client
	maxConns                                                                           int
	stmtTimeout, idleTimeout, grace                                                    time.Duration
}

func runServe(ctx context.Context, e *env, o serveOptions) error {
	cfg := pgwire.Config{
		AllowTrustRemote: o.allowRemote,
		MaxConnections:   o.maxConns,
		StatementTimeout: o.stmtTimeout,
		IdleTimeout:      o.idleTimeout,
		MemoryLimit:      o.memoryLimit,
		Logger:           slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if o.password == "" {
		o.password = os.Getenv("SKADE_PASSWORD")
	}
	users, err := loadUsers(o.usersFile)
	if err != nil {
		return err
	}
	cfg.Users, cfg.Password = users, o.password
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	if o.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			return fmt.Errorf("tls: %w", err)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	lk, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer lk.Close()
	cfg.Lake = lk
	if o.listen == "" && o.flight == "" && o.rest == "" {
		return usagef("nothing to serve: give --listen, --flight or --rest")
	}
	auth := "trust (loopback only)"
	if users != nil || o.password != "" {
		auth = "SCRAM-SHA-256"
	}
	served := make(chan error, 3)
	var stops []func(context.Context) error
	if o.listen != "" {
		srv, err := pgwire.New(cfg)
		if err != nil {
			return err
		}
		ln, err := srv.Listen(o.listen)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "skade: serving %s over the PostgreSQL protocol on %s (%s); psql -h %s -p %s\n",
			e.lakeDir, ln.Addr(), auth, hostOf(ln.Addr().String()), portOf(ln.Addr().String()))
		go func() { served <- srv.Serve(ln) }()
		stops = append(stops, srv.Shutdown)
	}
	if o.flight != "" {
		fsrv, err := flightsql.New(flightsql.Config{Lake: lk, Users: users, Password: o.password, TLS: cfg.TLS,
			AllowTrustRemote: o.allowRemote, MemoryLimit: o.memoryLimit})
		if err != nil {
			return err
		}
		ln, err := fsrv.Listen(o.flight)
		if err != nil {
			return err
		}
		fauth := "no authentication (loopback only)"
		if auth != "trust (loopback only)" {
			fauth = "basic authentication"
		}
		fmt.Fprintf(e.stdout, "skade: serving %s over Arrow Flight SQL on %s (%s)\n", e.lakeDir, ln.Addr(), fauth)
		go func() { served <- fsrv.Serve(ln) }()
		stops = append(stops, fsrv.Shutdown)
	}
	if o.rest != "" {
		if o.restToken == "" {
			o.restToken = os.Getenv("SKADE_REST_TOKEN")
		}
		for _, v := range strings.Fields(os.Getenv("SKADE_REST_CLIENTS")) {
			c, err := rest.ParseClient(v)
			if err != nil {
				return fmt.Errorf("$SKADE_REST_CLIENTS: %w", err)
			}
			o.restClients = append(o.restClients, c)
		}
		rsrv, err := rest.New(rest.Config{Lake: lk, Token: o.restToken, AllowTrustRemote: o.allowRemote,
			Clients: o.restClients, VendCredentials: o.vendCredentials})
		if err != nil {
			return err
		}
		ln, err := rsrv.Listen(o.rest)
		if err != nil {
			return err
		}
		rauth := "no authentication (loopback only)"
		switch {
		case o.restToken != "" && len(o.restClients) > 0:
			rauth = fmt.Sprintf("bearer token, or OAuth2 tokens for %d clients", len(o.restClients))
		case o.restToken != "":
			rauth = "bearer token"
		case len(o.restClients) > 0:
			rauth = fmt.Sprintf("OAuth2 tokens for %d clients", len(o.restClients))
		}
		fmt.Fprintf(e.stdout, "skade: serving %s's catalog over the Iceberg REST API on http://%s (%s)\n", e.lakeDir, ln.Addr(), rauth)
		go func() { served <- rsrv.Serve(ln) }()
		stops = append(stops, rsrv.Shutdown)
	}
	stop := make(chan os.Signal, 2)
	signal.Notify(stop, syscall.SIGTERM)
	defer signal.Stop(stop)
	// SIGINT reaches the router main set up, which cancels ctx
	restore := interrupts.route(func() { stop <- os.Interrupt })
	defer restore()
	select {
	case err := <-served:
		return err
	case <-stop:
	case <-ctx.Done():
	}
	fmt.Fprintf(e.stdout, "skade: shutting down; running statements have %s to finish\n", o.grace)
	sctx, cancel := context.WithTimeout(context.Background(), o.grace)
	defer cancel()
	go func() {
		// a second signal cancels at once
		<-stop
		cancel()
	}()
	for _, shutdown := range stops {
		if err := shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	fmt.Fprintln(e.stdout, "skade: stopped")
	return nil
}

// loadUsers reads a users file of user:password lines ('#' comments);
// nil when none is given.
func loadUsers(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--users: %w", err)
	}
	defer f.Close()
	users := map[string]string{}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		user, pw, ok := strings.Cut(text, ":")
		if !ok || user == "" || pw == "" {
			return nil, fmt.Errorf("--users %s:%d: want user:password", path, line)
		}
		users[user] = pw
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--users: %w", err)
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("--users %s: no users", path)
	}
	return users, nil
}

func hostOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return strings.Trim(addr[:i], "[]")
	}
	return addr
}

func portOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[i+1:]
	}
	return ""
}
