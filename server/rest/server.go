package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/server"
)

// Config configures a REST catalog server.
type Config struct {
	Lake *lake.Lake
	// Token, when set, is the bearer token every request must carry.
	Token string
	// AllowTrustRemote lets a server without a token listen on a
	// non-loopback address.
	AllowTrustRemote bool
	// MaxBody bounds a request body (default 64 MiB).
	MaxBody int64
	// Clients are the OAuth2 clients /v1/oauth/tokens issues tokens to
	// (client-credentials grant); with any, every request but config and
	// the token endpoint's needs a bearer token.
	Clients []Client
	// TokenTTL is how long an issued token is valid (default 1h).
	TokenTTL time.Duration
	// VendCredentials makes table loads of a lake in an object store
	// carry the store credentials the server itself uses (s3.access-key-id,
	// …) in the LoadTableResult config, for principals that may see the
	// table. Without it only the endpoint, addressing style and region are
	// sent.
	VendCredentials bool
}

// Server serves one lake's catalog.
type Server struct {
	cfg    Config
	cat    *catalog.Catalog
	mux    *http.ServeMux
	mu     sync.Mutex
	http   *http.Server
	tokens tokens
}

// New returns a server for cfg.Lake's catalog.
func New(cfg Config) (*Server, error) {
	if cfg.Lake == nil {
		return nil, errors.New("rest: no lake")
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 64 << 20
	}
	s := &Server{cfg: cfg, cat: cfg.Lake.Catalog(), mux: http.NewServeMux()}
	s.routes()
	return s, nil
}

// Handler is the server's HTTP handler, for tests and for mounting.
func (s *Server) Handler() http.Handler { return s }

// Listen opens addr, refusing a non-loopback address without a token
// (unless Config.AllowTrustRemote).
func (s *Server) Listen(addr string) (net.Listener, error) {
	// a token is this server's authentication
	var auth server.Passwords
	if s.authRequired() {
		auth.Password = "token" // any authentication counts
	}
	if err := server.CheckListen("rest catalog", addr, auth, s.cfg.AllowTrustRemote); err != nil {
		return nil, err
	}
	return net.Listen("tcp", addr)
}

// Serve serves on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second}
	hs := s.http
	s.mu.Unlock()
	err := hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting and waits for the requests in flight, until
// ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	hs := s.http
	s.mu.Unlock()
	if hs == nil {
		return nil
	}
	return hs.Shutdown(ctx)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			writeError(w, http.StatusInternalServerError, "InternalServerError", fmt.Sprintf("rest: %v (bug)", v))
		}
	}()
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	if r.URL.Path != "/v1/config" && r.URL.Path != "/v1/oauth/tokens" {
		p, ok := s.authenticate(r)
		if !ok {
			writeError(w, http.StatusUnauthorized, "NotAuthorizedException", "a valid bearer token is required")
			return
		}
		if ns, ok := pathNamespace(r.URL.Path); ok && !p.may(strings.Split(ns, "\x1f")[0]) {
			forbid(w, ns)
			return
		}
		r = withPrincipal(r, p)
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /v1/config", s.config)
	m.HandleFunc("POST /v1/oauth/tokens", s.oauthTokens)
	m.HandleFunc("GET /v1/namespaces", s.listNamespaces)
	m.HandleFunc("POST /v1/namespaces", s.createNamespace)
	m.HandleFunc("GET /v1/namespaces/{ns}", s.loadNamespace)
	m.HandleFunc("HEAD /v1/namespaces/{ns}", s.namespaceExists)
	m.HandleFunc("DELETE /v1/namespaces/{ns}", s.dropNamespace)
	m.HandleFunc("POST /v1/namespaces/{ns}/properties", s.updateNamespace)
	m.HandleFunc("GET /v1/namespaces/{ns}/tables", s.listTables)
	m.HandleFunc("POST /v1/namespaces/{ns}/tables", s.createTable)
	m.HandleFunc("GET /v1/namespaces/{ns}/tables/{table}", s.loadTable)
	m.HandleFunc("HEAD /v1/namespaces/{ns}/tables/{table}", s.tableExists)
	m.HandleFunc("POST /v1/namespaces/{ns}/tables/{table}", s.commitTable)
	m.HandleFunc("DELETE /v1/namespaces/{ns}/tables/{table}", s.dropTable)
	m.HandleFunc("POST /v1/namespaces/{ns}/tables/{table}/metrics", s.metrics)
	m.HandleFunc("POST /v1/namespaces/{ns}/register", s.register)
	m.HandleFunc("POST /v1/tables/rename", s.renameTable)
	m.HandleFunc("POST /v1/transactions/commit", s.commitTransaction)
	m.HandleFunc("GET /v1/namespaces/{ns}/views", s.listViews)
	m.HandleFunc("GET /v1/namespaces/{ns}/views/{view}", s.loadView)
	m.HandleFunc("HEAD /v1/namespaces/{ns}/views/{view}", s.viewExists)
	// the optional prefix form (/v1/{prefix}/…) is not used: config
	// returns no prefix
}

// errorModel is the spec's ErrorModel, wrapped in IcebergErrorResponse.
type errorModel struct {
	Message string   `json:"message"`
	Type    string   `json:"type"`
	Code    int      `json:"code"`
	Stack   []string `json:"stack,omitempty"`
}

func writeError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]errorModel{"error": {Message: msg, Type: typ, Code: code}})
}

// fail maps a catalog error onto the spec's status and exception type.
func fail(w http.ResponseWriter, err error) {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, "BadRequestException", err.Error())
	case errors.Is(err, icecatalog.ErrNoSuchTable):
		writeError(w, http.StatusNotFound, "NoSuchTableException", err.Error())
	case errors.Is(err, catalog.ErrViewNotFound):
		writeError(w, http.StatusNotFound, "NoSuchViewException", err.Error())
	case errors.Is(err, icecatalog.ErrNoSuchNamespace):
		writeError(w, http.StatusNotFound, "NoSuchNamespaceException", err.Error())
	case errors.Is(err, icecatalog.ErrTableAlreadyExists), errors.Is(err, icecatalog.ErrNamespaceAlreadyExists):
		writeError(w, http.StatusConflict, "AlreadyExistsException", err.Error())
	case errors.Is(err, icecatalog.ErrNamespaceNotEmpty):
		writeError(w, http.StatusConflict, "NamespaceNotEmptyException", err.Error())
	case errors.Is(err, table.ErrCommitFailed):
		writeError(w, http.StatusConflict, "CommitFailedException", err.Error())
	case errors.Is(err, icecatalog.ErrInvalidIdentifier), errors.Is(err, errBadRequest),
		errors.Is(err, table.ErrInvalidRequirement), errors.Is(err, catalog.ErrInvalidName):
		writeError(w, http.StatusBadRequest, "BadRequestException", err.Error())
	case errors.Is(err, catalog.ErrOutsideLake):
		writeError(w, http.StatusBadRequest, "BadRequestException", err.Error())
	case errors.Is(err, errUnsupported):
		writeError(w, http.StatusNotImplemented, "UnsupportedOperationException", err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "InternalServerError", err.Error())
	}
}

var (
	errBadRequest  = errors.New("bad request")
	errUnsupported = errors.New("not supported")
)

func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if v != nil {
		json.NewEncoder(w).Encode(v)
	}
}

// decode reads a JSON body into v, refusing unknown shapes clearly.
func decode(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: request body: %v", errBadRequest, err)
	}
	return nil
}

// namespace reads the {ns} path element: levels joined by the unit
// separator (%1F), as the spec encodes them.
func namespace(r *http.Request) table.Identifier {
	return strings.Split(r.PathValue("ns"), "\x1f")
}

func ident(r *http.Request) table.Identifier {
	return append(namespace(r), r.PathValue("table"))
}

func (s *Server) config(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, map[string]any{
		"defaults":  map[string]string{},
		"overrides": map[string]string{},
		// the spec's endpoint names ({prefix} is empty here)
		"endpoints": []string{
			"GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces",
			"GET /v1/{prefix}/namespaces/{namespace}", "HEAD /v1/{prefix}/namespaces/{namespace}",
			"DELETE /v1/{prefix}/namespaces/{namespace}", "POST /v1/{prefix}/namespaces/{namespace}/properties",
			"GET /v1/{prefix}/namespaces/{namespace}/tables", "POST /v1/{prefix}/namespaces/{namespace}/tables",
			"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}", "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
			"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}", "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
			"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics", "POST /v1/{prefix}/tables/rename",
			"POST /v1/{prefix}/transactions/commit", "POST /v1/{prefix}/namespaces/{namespace}/register",
			"GET /v1/{prefix}/namespaces/{namespace}/views", "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
			"HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
		},
	})
}
