package rest

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Client is an OAuth2 client the token endpoint accepts.
type Client struct {
	ID, Secret string
	// Namespaces, when not empty, are the only namespaces the client's
	// tokens may see: list, load, create in, commit to. Tables elsewhere
	// answer 403, and their locations and credentials are never sent.
	Namespaces []string
}

// ParseClient reads "id:secret" or "id:secret:ns1,ns2" (the form of
// skade serve --rest-client).
func ParseClient(s string) (Client, error) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return Client{}, fmt.Errorf("rest client %q: want id:secret or id:secret:namespace,…", redact(s))
	}
	c := Client{ID: parts[0], Secret: parts[1]}
	if len(parts) == 3 {
		for _, ns := range strings.Split(parts[2], ",") {
			if ns = strings.TrimSpace(ns); ns != "" {
				c.Namespaces = append(c.Namespaces, ns)
			}
		}
		if len(c.Namespaces) == 0 {
			return Client{}, fmt.Errorf("rest client %q: the namespace list is empty; leave it out to allow every namespace", c.ID)
		}
	}
	return c, nil
}

func redact(s string) string {
	id, _, _ := strings.Cut(s, ":")
	return id + ":…"
}

// principal is who a request acts for.
type principal struct {
	client     string   // "" for the static token or an open server
	namespaces []string // nil: every namespace
}

// may reports whether p may see namespace ns.
func (p *principal) may(ns string) bool {
	return p == nil || p.namespaces == nil || slices.Contains(p.namespaces, ns)
}

type principalKey struct{}

func principalOf(r *http.Request) *principal {
	p, _ := r.Context().Value(principalKey{}).(*principal)
	return p
}

// tokens are the access tokens the endpoint issued.
type tokens struct {
	mu     sync.Mutex
	issued map[string]issued
}

type issued struct {
	p       *principal
	expires time.Time
}

// authRequired reports whether requests need a bearer token.
func (s *Server) authRequired() bool { return s.cfg.Token != "" || len(s.cfg.Clients) > 0 }

// authenticate finds the request's principal; ok is false when the
// request must be refused.
func (s *Server) authenticate(r *http.Request) (*principal, bool) {
	if !s.authRequired() {
		return &principal{}, true
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return nil, false
	}
	if s.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1 {
		return &principal{}, true
	}
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	now := time.Now()
	for t, is := range s.tokens.issued {
		if now.After(is.expires) {
			delete(s.tokens.issued, t)
		}
	}
	is, found := s.tokens.issued[tok]
	if !found {
		return nil, false
	}
	return is.p, true
}

// oauthTokens is the spec's /v1/oauth/tokens: the client-credentials
// grant, with the client's id and secret in the form or in HTTP Basic
// auth. Errors are OAuth2's (RFC 6749 §5.2).
func (s *Server) oauthTokens(w http.ResponseWriter, r *http.Request) {
	oauthErr := func(code int, typ, desc string) {
		w.Header().Set("Cache-Control", "no-store")
		reply(w, code, map[string]string{"error": typ, "error_description": desc})
	}
	if err := r.ParseForm(); err != nil {
		oauthErr(http.StatusBadRequest, "invalid_request", "the body is not a form: "+err.Error())
		return
	}
	if g := r.PostForm.Get("grant_type"); g != "client_credentials" {
		oauthErr(http.StatusBadRequest, "unsupported_grant_type", fmt.Sprintf("grant_type %q is not supported; use client_credentials", g))
		return
	}
	id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if bid, bsecret, ok := r.BasicAuth(); ok {
		id, secret = bid, bsecret
	}
	var client *Client
	for i := range s.cfg.Clients {
		c := &s.cfg.Clients[i]
		// compare every client's secret, so timing says nothing
		idOK := subtle.ConstantTimeCompare([]byte(id), []byte(c.ID)) == 1
		secretOK := subtle.ConstantTimeCompare([]byte(secret), []byte(c.Secret)) == 1
		if idOK && secretOK {
			client = c
		}
	}
	if client == nil {
		oauthErr(http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		oauthErr(http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	tok := hex.EncodeToString(b[:])
	ttl := s.cfg.TokenTTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	s.tokens.mu.Lock()
	if s.tokens.issued == nil {
		s.tokens.issued = map[string]issued{}
	}
	s.tokens.issued[tok] = issued{p: &principal{client: client.ID, namespaces: client.Namespaces}, expires: time.Now().Add(ttl)}
	s.tokens.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	reply(w, http.StatusOK, map[string]any{
		"access_token":      tok,
		"token_type":        "bearer",
		"expires_in":        int(ttl.Seconds()),
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
	})
}

// pathNamespace is the namespace a /v1/namespaces/{ns}/… path names, or
// "" for other paths.
func pathNamespace(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/v1/namespaces/")
	if !ok {
		return "", false
	}
	ns, _, _ := strings.Cut(rest, "/")
	return ns, ns != ""
}

// forbid answers 403 for a namespace the principal may not see.
func forbid(w http.ResponseWriter, ns string) {
	writeError(w, http.StatusForbidden, "ForbiddenException", fmt.Sprintf("this client may not use namespace %q", ns))
}

func withPrincipal(r *http.Request, p *principal) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
}
