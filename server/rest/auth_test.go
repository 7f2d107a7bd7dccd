package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/catalogtest"
	icerest "github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/internal/s3test"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/server/rest"
)

func serveLake(t *testing.T, lk *lake.Lake, cfg rest.Config) string {
	t.Helper()
	cfg.Lake = lk
	srv, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs.URL
}

func twoNamespaces(t *testing.T, lk *lake.Lake) {
	t.Helper()
	if err := lk.Session().Exec(context.Background(), `CREATE SCHEMA sales;
		CREATE TABLE main.a (id BIGINT); INSERT INTO main.a VALUES (1);
		CREATE TABLE sales.b (id BIGINT); INSERT INTO sales.b VALUES (2)`); err != nil {
		t.Fatal(err)
	}
}

func token(t *testing.T, base string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(base+"/v1/oauth/tokens", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func get(t *testing.T, u, tok string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// The OAuth2 client-credentials endpoint, as iceberg-go's REST client
// uses it (credential "id:secret"), and clients limited to namespaces.
func TestRESTOAuth2(t *testing.T) {
	ctx := context.Background()
	lk, err := lake.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	twoNamespaces(t, lk)
	base := serveLake(t, lk, rest.Config{TokenTTL: time.Second, Clients: []rest.Client{
		{ID: "etl", Secret: "s3cret"},
		{ID: "analyst", Secret: "pw", Namespaces: []string{"sales"}},
	}})

	// a client with every namespace
	etl, err := icerest.NewCatalog(ctx, "skade", base, icerest.WithCredential("etl:s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	nss, err := etl.ListNamespaces(ctx, nil)
	if err != nil || len(nss) != 2 {
		t.Fatalf("etl sees namespaces %v, %v; want main and sales", nss, err)
	}
	if _, err := etl.LoadTable(ctx, table.Identifier{"main", "a"}); err != nil {
		t.Fatalf("etl loads main.a: %v", err)
	}

	// a client limited to sales
	analyst, err := icerest.NewCatalog(ctx, "skade", base, icerest.WithCredential("analyst:pw"))
	if err != nil {
		t.Fatal(err)
	}
	nss, err = analyst.ListNamespaces(ctx, nil)
	if err != nil || len(nss) != 1 || nss[0][0] != "sales" {
		t.Fatalf("analyst sees namespaces %v, %v; want only sales", nss, err)
	}
	if _, err := analyst.LoadTable(ctx, table.Identifier{"sales", "b"}); err != nil {
		t.Fatalf("analyst loads sales.b: %v", err)
	}
	if _, err := analyst.LoadTable(ctx, table.Identifier{"main", "a"}); err == nil || !strings.Contains(err.Error(), "may not use namespace") {
		t.Fatalf("analyst loads main.a: %v, want a refusal", err)
	}
	if err := analyst.CreateNamespace(ctx, table.Identifier{"hr"}, nil); err == nil {
		t.Fatal("analyst created a namespace outside its list")
	}
	if _, err := analyst.RenameTable(ctx, table.Identifier{"sales", "b"}, table.Identifier{"main", "b"}); err == nil {
		t.Fatal("analyst renamed a table into main")
	}
	if _, err := analyst.CreateTable(ctx, table.Identifier{"main", "x"}, iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64})); err == nil {
		t.Fatal("analyst created a table in main")
	}

	// the endpoint's own errors, OAuth2's shapes
	if code, body := token(t, base, url.Values{"grant_type": {"client_credentials"}, "client_id": {"etl"}, "client_secret": {"wrong"}}); code != 401 || body["error"] != "invalid_client" {
		t.Fatalf("wrong secret: %d %v", code, body)
	}
	if code, body := token(t, base, url.Values{"grant_type": {"password"}, "client_id": {"etl"}, "client_secret": {"s3cret"}}); code != 400 || body["error"] != "unsupported_grant_type" {
		t.Fatalf("password grant: %d %v", code, body)
	}
	if _, err := icerest.NewCatalog(ctx, "skade", base, icerest.WithCredential("etl:nope")); err == nil {
		t.Fatal("iceberg-go's client got in with a wrong secret")
	}
	code, body := token(t, base, url.Values{"grant_type": {"client_credentials"}, "client_id": {"analyst"}, "client_secret": {"pw"}})
	tok, _ := body["access_token"].(string)
	if code != 200 || tok == "" || body["token_type"] != "bearer" || body["expires_in"] != float64(1) {
		t.Fatalf("token: %d %v", code, body)
	}
	if code, _ := get(t, base+"/v1/namespaces/sales/tables/b", tok); code != 200 {
		t.Fatalf("load with a fresh token: %d", code)
	}
	if code, body := get(t, base+"/v1/namespaces/main/tables/a", tok); code != 403 || !strings.Contains(body["error"].(map[string]any)["type"].(string), "Forbidden") {
		t.Fatalf("load of another namespace: %d %v", code, body)
	}
	if code, _ := get(t, base+"/v1/namespaces", ""); code != 401 {
		t.Fatalf("no token: %d, want 401", code)
	}
	if code, _ := get(t, base+"/v1/namespaces", "made-up"); code != 401 {
		t.Fatalf("a made-up token: %d, want 401", code)
	}
	time.Sleep(1100 * time.Millisecond)
	if code, _ := get(t, base+"/v1/namespaces/sales/tables/b", tok); code != 401 {
		t.Fatalf("an expired token: %d, want 401", code)
	}
}

func TestParseClient(t *testing.T) {
	for _, tc := range []struct {
		in  string
		ok  bool
		nss []string
	}{
		{"a:SECRET", true, nil}, {"a:SECRET:x,y", true, []string{"x", "y"}}, {"a:SECRET:c:d", true, []string{"c:d"}},
		{"a", false, nil}, {":SECRET", false, nil}, {"a:", false, nil}, {"a:SECRET:", false, nil}, {"a:SECRET: , ", false, nil},
	} {
		c, err := rest.ParseClient(tc.in)
		if (err == nil) != tc.ok || (tc.ok && !slices.Equal(c.Namespaces, tc.nss)) {
			t.Errorf("ParseClient(%q) = %+v, %v", tc.in, c, err)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("ParseClient(%q) error shows the secret: %v", tc.in, err)
		}
	}
}

// A lake in an object store: table loads tell clients how to reach the
// store, and with VendCredentials, hand out the keys, only for tables the
// client may see.
func TestRESTObjectStoreConfig(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	lk, err := lake.Open(ctx, "s3://lake/rest", lake.WithCatalogFile(filepath.Join(t.TempDir(), "catalog.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	twoNamespaces(t, lk)
	clients := []rest.Client{{ID: "analyst", Secret: "pw", Namespaces: []string{"sales"}}}
	for _, vend := range []bool{false, true} {
		base := serveLake(t, lk, rest.Config{Clients: clients, VendCredentials: vend})
		_, body := token(t, base, url.Values{"grant_type": {"client_credentials"}, "client_id": {"analyst"}, "client_secret": {"pw"}})
		tok := body["access_token"].(string)
		code, res := get(t, base+"/v1/namespaces/sales/tables/b", tok)
		if code != 200 {
			t.Fatalf("load: %d %v", code, res)
		}
		if loc := res["metadata-location"].(string); !strings.HasPrefix(loc, "s3://lake/rest/sales/b-") {
			t.Fatalf("metadata location %q", loc)
		}
		config := res["config"].(map[string]any)
		if config["s3.endpoint"] != srv.Endpoint || config["s3.path-style-access"] != "true" || config["client.region"] != "us-east-1" {
			t.Fatalf("vend=%v: config %v lacks the store's endpoint, addressing and region", vend, config)
		}
		_, hasKey := config["s3.access-key-id"]
		if hasKey != vend || (vend && (config["s3.access-key-id"] != s3test.AccessKey || config["s3.secret-access-key"] != s3test.SecretKey)) {
			t.Fatalf("vend=%v: config %v", vend, config)
		}
		if code, res := get(t, base+"/v1/namespaces/main/tables/a", tok); code != 403 || res["config"] != nil {
			t.Fatalf("vend=%v: a table of another namespace: %d %v", vend, code, res)
		}
	}
}

// iceberg-go's catalog conformance suite, through its REST client against
// the server: each test gets a fresh lake.
func TestRESTConformance(t *testing.T) {
	catalogtest.RunCatalogTests(t, catalogtest.Config{
		NewCatalog: func(t *testing.T) icecatalog.Catalog {
			_, cat, _ := startREST(t, "")
			return cat
		},
		SupportsNamespaceProperties: true,
	})
}

// Register adopts a table whose metadata lies in the lake (here one
// dropped with its files kept), and refuses metadata elsewhere and a
// directory another table uses.
func TestRESTRegister(t *testing.T) {
	ctx := context.Background()
	lk, cat, _ := startREST(t, "")
	s := lk.Session()
	if err := s.Exec(ctx, `CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1), (2), (3); CREATE TABLE u (id BIGINT)`); err != nil {
		t.Fatal(err)
	}
	loc, err := lk.Catalog().MetadataLocation(ctx, table.Identifier{"main", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.DropTable(ctx, "t", false); err != nil {
		t.Fatal(err)
	}
	back, err := cat.RegisterTable(ctx, table.Identifier{"main", "back"}, loc)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	if back.MetadataLocation() != loc {
		t.Fatalf("registered at %s, want %s", back.MetadataLocation(), loc)
	}
	if got := count(t, lk, `SELECT sum(id) FROM back`); got != "6" {
		t.Fatalf("the registered table holds sum %s, want 6", got)
	}
	// the same directory again, under another name
	if _, err := cat.RegisterTable(ctx, table.Identifier{"main", "again"}, loc); err == nil || !strings.Contains(err.Error(), "already uses the directory") {
		t.Fatalf("a second register of one directory: %v", err)
	}
	if _, err := cat.RegisterTable(ctx, table.Identifier{"main", "x"}, "/etc/hosts"); err == nil || !strings.Contains(err.Error(), "outside the lake") {
		t.Fatalf("metadata outside the lake: %v", err)
	}
	if _, err := cat.RegisterTable(ctx, table.Identifier{"main", "u"}, loc); err == nil {
		t.Fatal("registered over an existing table")
	}
}
