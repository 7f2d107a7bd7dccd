package rest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	icerest "github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/server/rest"
)

// startREST serves a fresh lake's catalog over REST; it returns the lake
// and iceberg-go's REST catalog client on it.
func startREST(t *testing.T, token string) (*lake.Lake, *icerest.Catalog, string) {
	t.Helper()
	ctx := context.Background()
	lk, err := lake.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lk.Close() })
	srv, err := rest.New(rest.Config{Lake: lk, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	var opts []icerest.Option
	if token != "" {
		opts = append(opts, icerest.WithOAuthToken(token))
	}
	cat, err := icerest.NewCatalog(ctx, "skade", hs.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return lk, cat, hs.URL
}

func arrowRows(t *testing.T, sc *arrow.Schema, ids []int64, names []string) arrow.Table {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	b.Field(1).(*array.StringBuilder).AppendValues(names, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
}

func count(t *testing.T, lk *lake.Lake, q string) string {
	t.Helper()
	ctx := context.Background()
	res, err := lk.Session().SQL(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := res.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range bs {
		for i := 0; i < int(b.NumRows()); i++ {
			var row []string
			for c := 0; c < int(b.NumCols()); c++ {
				row = append(row, b.Column(c).ValueStr(i))
			}
			out = append(out, strings.Join(row, ","))
		}
		b.Release()
	}
	return strings.Join(out, ";")
}

// TestRESTWithIcebergGoClient drives the server with iceberg-go's own REST
// catalog client: namespaces, a table created and appended to over REST
// and read by skade in process, an in-process INSERT seen over REST, a
// stale commit refused with 409, rename and drop.
func TestRESTWithIcebergGoClient(t *testing.T) {
	ctx := context.Background()
	lk, cat, _ := startREST(t, "")
	if err := cat.CreateNamespace(ctx, table.Identifier{"sales"}, iceberg.Properties{"owner": "ada"}); err != nil {
		t.Fatal(err)
	}
	nss, err := cat.ListNamespaces(ctx, nil)
	if err != nil || fmt.Sprint(nss) != "[[main] [sales]]" {
		t.Fatalf("namespaces %v %v", nss, err)
	}
	props, err := cat.LoadNamespaceProperties(ctx, table.Identifier{"sales"})
	if err != nil || props["owner"] != "ada" {
		t.Fatalf("properties %v %v", props, err)
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil); !errors.Is(err, icecatalog.ErrNamespaceAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: false},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String, Required: false})
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "orders"}, schema)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	// an append over REST: data files written by iceberg-go, the commit
	// validated by skade's catalog
	tx := tbl.NewTransaction()
	rows := arrowRows(t, sc, []int64{1, 2, 3}, []string{"a", "b", "c"})
	defer rows.Release()
	if err := tx.AppendTable(ctx, rows, 1024, nil); err != nil {
		t.Fatal(err)
	}
	t1, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := count(t, lk, "SELECT count(*), min(name) FROM sales.orders"); got != "3,a" {
		t.Fatalf("skade reads %q", got)
	}
	// an in-process write, seen over REST
	if err := lk.Session().Exec(ctx, "INSERT INTO sales.orders VALUES (4, 'd')"); err != nil {
		t.Fatal(err)
	}
	fresh, err := cat.LoadTable(ctx, table.Identifier{"sales", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if fresh.CurrentSnapshot() == nil || fresh.CurrentSnapshot().SnapshotID == t1.CurrentSnapshot().SnapshotID {
		t.Fatalf("REST does not see the in-process insert")
	}
	// a commit from the stale table loses: the catalog refuses its
	// requirement (the client's retry then replays on the fresh table,
	// as iceberg-go does for appends)
	if _, _, err := cat.CommitTable(ctx, table.Identifier{"sales", "orders"},
		[]table.Requirement{table.AssertRefSnapshotID("main", &t1.CurrentSnapshot().SnapshotID)},
		[]table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"k": "v"})}); !errors.Is(err, table.ErrCommitFailed) {
		t.Fatalf("stale commit: %v", err)
	}
	if got := count(t, lk, "SELECT count(*) FROM sales.orders"); got != "4" {
		t.Fatalf("after the refused commit: %q", got)
	}
	ids := []string{}
	for id, err := range cat.ListTables(ctx, table.Identifier{"sales"}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strings.Join(id, "."))
	}
	if fmt.Sprint(ids) != "[sales.orders]" {
		t.Fatalf("tables %v", ids)
	}
	if _, err := cat.RenameTable(ctx, table.Identifier{"sales", "orders"}, table.Identifier{"sales", "orders2"}); err != nil {
		t.Fatal(err)
	}
	if got := count(t, lk, "SELECT count(*) FROM sales.orders2"); got != "4" {
		t.Fatalf("renamed: %q", got)
	}
	if _, err := cat.LoadTable(ctx, table.Identifier{"sales", "orders"}); !errors.Is(err, icecatalog.ErrNoSuchTable) {
		t.Fatalf("load of the old name: %v", err)
	}
	if err := cat.DropNamespace(ctx, table.Identifier{"sales"}); !errors.Is(err, icecatalog.ErrNamespaceNotEmpty) {
		t.Fatalf("drop of a non-empty namespace: %v", err)
	}
	if err := cat.DropTable(ctx, table.Identifier{"sales", "orders2"}); err != nil {
		t.Fatal(err)
	}
	if err := cat.DropNamespace(ctx, table.Identifier{"sales"}); err != nil {
		t.Fatal(err)
	}
}

// TestRESTErrorsAndAuth checks the spec's ErrorModel, status codes and the
// bearer token.
func TestRESTErrorsAndAuth(t *testing.T) {
	_, _, url := startREST(t, "s3cret")
	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest("GET", url+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, b.String()
	}
	if code, body := get("/v1/namespaces", ""); code != 401 || !strings.Contains(body, `"type":"NotAuthorizedException"`) {
		t.Errorf("no token: %d %s", code, body)
	}
	if code, _ := get("/v1/namespaces", "wrong"); code != 401 {
		t.Errorf("wrong token: %d", code)
	}
	if code, body := get("/v1/config", ""); code != 200 || !strings.Contains(body, `"defaults"`) {
		t.Errorf("config: %d %s", code, body)
	}
	if code, body := get("/v1/namespaces/main/tables/nope", "s3cret"); code != 404 || !strings.Contains(body, `"type":"NoSuchTableException"`) || !strings.Contains(body, `"code":404`) {
		t.Errorf("missing table: %d %s", code, body)
	}
	if code, body := get("/v1/namespaces/nope", "s3cret"); code != 404 || !strings.Contains(body, "NoSuchNamespaceException") {
		t.Errorf("missing namespace: %d %s", code, body)
	}
	req, _ := http.NewRequest("POST", url+"/v1/namespaces", strings.NewReader("{not json"))
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("bad body: %d", resp.StatusCode)
	}
}

// TestRESTRacesInProcess races appends over REST (iceberg-go's client,
// which replays an append after a conflict) with in-process INSERTs on
// one table: every write that reports success is in the table exactly
// once, and every failure is a clean commit conflict.
func TestRESTRacesInProcess(t *testing.T) {
	ctx := context.Background()
	lk, cat, _ := startREST(t, "")
	if err := lk.Session().Exec(ctx, "CREATE TABLE race (id BIGINT, name VARCHAR)"); err != nil {
		t.Fatal(err)
	}
	const writers = 4
	type result struct {
		ids []int64
		err error
	}
	results := make(chan result, 2*writers)
	for w := 0; w < writers; w++ {
		go func(w int) {
			// over REST
			tbl, err := cat.LoadTable(ctx, table.Identifier{"main", "race"})
			if err != nil {
				results <- result{err: err}
				return
			}
			sc, _ := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
			ids := []int64{int64(100 + w), int64(200 + w)}
			rows := arrowRows(t, sc, ids, []string{"rest", "rest"})
			defer rows.Release()
			tx := tbl.NewTransaction()
			if err := tx.AppendTable(ctx, rows, 1024, nil); err != nil {
				results <- result{err: err}
				return
			}
			_, err = tx.Commit(ctx)
			results <- result{ids: ids, err: err}
		}(w)
		go func(w int) {
			// in process
			id := int64(300 + w)
			err := lk.Session().Exec(ctx, fmt.Sprintf("INSERT INTO race VALUES (%d, 'sql')", id))
			results <- result{ids: []int64{id}, err: err}
		}(w)
	}
	var want []string
	lost := 0
	for i := 0; i < 2*writers; i++ {
		r := <-results
		switch {
		case r.err == nil:
			for _, id := range r.ids {
				want = append(want, fmt.Sprint(id))
			}
		case errors.Is(r.err, table.ErrCommitFailed), errors.Is(r.err, lake.ErrCommitConflict):
			// a clean loss: nothing of it may be in the table
			lost++
		default:
			t.Errorf("a write failed other than by a commit conflict: %v", r.err)
		}
	}
	t.Logf("%d rows written by successful writes, %d writes lost cleanly", len(want), lost)
	sort.Strings(want)
	got := count(t, lk, "SELECT id FROM race ORDER BY id::VARCHAR")
	if got != strings.Join(want, ";") {
		t.Errorf("table holds %s; the successful writes wrote %s", got, strings.Join(want, ";"))
	}
	if len(want) == 0 {
		t.Errorf("no write succeeded")
	}
}

// TestRESTTransaction commits two tables atomically over
// /v1/transactions/commit, and refuses the whole transaction when one
// table's requirement fails.
func TestRESTTransaction(t *testing.T) {
	ctx := context.Background()
	lk, cat, _ := startREST(t, "")
	if err := lk.Session().Exec(ctx, "CREATE TABLE a (id BIGINT); CREATE TABLE b (id BIGINT)"); err != nil {
		t.Fatal(err)
	}
	a, _ := cat.LoadTable(ctx, table.Identifier{"main", "a"})
	b, _ := cat.LoadTable(ctx, table.Identifier{"main", "b"})
	props := func(v string) []table.Update {
		return []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"audit": v})}
	}
	uuid := func(tb *table.Table) []table.Requirement {
		return []table.Requirement{table.AssertTableUUID(tb.Metadata().TableUUID())}
	}
	if err := cat.CommitTransaction(ctx, []table.TableCommit{
		{Identifier: table.Identifier{"main", "a"}, Requirements: uuid(a), Updates: props("one")},
		{Identifier: table.Identifier{"main", "b"}, Requirements: uuid(b), Updates: props("one")},
	}); err != nil {
		t.Fatal(err)
	}
	// b's requirement fails: neither table changes
	err := cat.CommitTransaction(ctx, []table.TableCommit{
		{Identifier: table.Identifier{"main", "a"}, Requirements: uuid(a), Updates: props("two")},
		{Identifier: table.Identifier{"main", "b"}, Requirements: uuid(a), Updates: props("two")},
	})
	if !errors.Is(err, table.ErrCommitFailed) {
		t.Fatalf("a failed requirement: %v", err)
	}
	for _, n := range []string{"a", "b"} {
		tb, err := cat.LoadTable(ctx, table.Identifier{"main", n})
		if err != nil {
			t.Fatal(err)
		}
		if v := tb.Properties()["audit"]; v != "one" {
			t.Errorf("%s: audit = %q after the refused transaction", n, v)
		}
	}
}

// Views made with CREATE VIEW are listed and loaded through iceberg-go's
// REST client, with the query as their SQL representation.
func TestRESTViews(t *testing.T) {
	ctx := context.Background()
	lk, cat, _ := startREST(t, "")
	if err := lk.Session().Exec(ctx, "CREATE TABLE t (id BIGINT); CREATE VIEW v AS SELECT id * 2 AS twice FROM t"); err != nil {
		t.Fatal(err)
	}
	var names []string
	for id, err := range cat.ListViews(ctx, table.Identifier{"main"}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.Join(id, "."))
	}
	if fmt.Sprint(names) != "[main.v]" {
		t.Errorf("views over REST: %v", names)
	}
	v, err := cat.LoadView(ctx, table.Identifier{"main", "v"})
	if err != nil {
		t.Fatal(err)
	}
	cur := v.Metadata().CurrentVersion()
	if cur == nil || len(cur.Representations) != 1 || cur.Representations[0].Sql != "SELECT id * 2 AS twice FROM t" {
		t.Errorf("the view's version over REST: %+v", cur)
	}
	if ok, err := cat.CheckViewExists(ctx, table.Identifier{"main", "v"}); err != nil || !ok {
		t.Errorf("v exists: %v %v", ok, err)
	}
	if ok, err := cat.CheckViewExists(ctx, table.Identifier{"main", "nope"}); err != nil || ok {
		t.Errorf("nope exists: %v %v", ok, err)
	}
	if _, err := cat.LoadView(ctx, table.Identifier{"main", "nope"}); !errors.Is(err, icecatalog.ErrNoSuchView) {
		t.Errorf("loading a missing view: %v", err)
	}
}
