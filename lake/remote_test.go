package lake_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skadedb/skade/internal/s3test"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/server/rest"
)

// restLakes serves a fresh local lake's catalog over REST (skade's own
// server) and opens two lakes on it, as two processes on two machines
// would.
func restLakes(t *testing.T, cfg rest.Config, opts ...lake.Option) (backing *lake.Lake, dir, uri string, a, b *lake.Lake) {
	t.Helper()
	ctx := context.Background()
	dir = filepath.Join(t.TempDir(), "lake")
	backing, err := lake.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backing.Close() })
	cfg.Lake = backing
	srv, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	uri = "rest+" + hs.URL
	open := func() *lake.Lake {
		lk, err := lake.Open(ctx, uri, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lk.Close() })
		return lk
	}
	return backing, dir, uri, open(), open()
}

// Two lakes on one REST catalog behave like two processes on one catalog
// file: each sees the other's writes, MERGE in both modes, UPDATE, DELETE,
// CTAS, multi-table transactions, and a clean conflict for the loser of a
// race, whose files go.
func TestRESTCatalogLakes(t *testing.T) {
	backing, dir, _, a, b := restLakes(t, rest.Config{}, lake.WithTableDefaults(splitDefaults))
	sa, sb, s0 := a.Session(), b.Session(), backing.Session()
	same := func(q string) []string {
		t.Helper()
		ra, rb, r0 := query(t, sa, q), query(t, sb, q), query(t, s0, q)
		if !slices.Equal(ra, r0) || !slices.Equal(rb, r0) {
			t.Fatalf("%s:\n  lake a: %v\n  lake b: %v\n  served: %v", q, ra, rb, r0)
		}
		return r0
	}
	mustExec(t, sa, `CREATE TABLE t (id BIGINT, v VARCHAR, n INTEGER);
		INSERT INTO t SELECT i, 'v' || i, (i % 7)::INTEGER FROM range(0, 3000) r(i)`)
	if got := same(`SELECT count(*), sum(id) FROM t`); !slices.Equal(got, []string{"3000|4498500"}) {
		t.Fatalf("after INSERT: %v", got)
	}
	mustExec(t, sb, `MERGE INTO t USING (SELECT i * 3 AS id FROM range(0, 1200) r(i)) s ON t.id = s.id
		WHEN MATCHED AND s.id % 2 = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET v = 'merged' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'new', 0)`)
	mustExec(t, sa, `UPDATE t SET n = n + 10 WHERE id % 5 = 1`)
	mustExec(t, sb, `DELETE FROM t WHERE id BETWEEN 100 AND 200`)
	same(`SELECT count(*), sum(id), sum(n), count(*) FILTER (WHERE v = 'merged') FROM t`)

	// merge-on-read, and a table made by CTAS
	mustExec(t, sa, `CREATE TABLE m (id BIGINT, v VARCHAR) WITH ('write.merge.mode' = 'merge-on-read', 'write.delete.mode' = 'merge-on-read');
		INSERT INTO m SELECT id, v FROM t`)
	mustExec(t, sb, `MERGE INTO m USING (SELECT id FROM t WHERE id % 4 = 1) s ON m.id = s.id WHEN MATCHED THEN UPDATE SET v = 'mor'`)
	mustExec(t, sa, `DELETE FROM m WHERE id < 50`)
	same(`SELECT count(*), sum(id), count(*) FILTER (WHERE v = 'mor') FROM m`)
	if got := same(`SELECT content, count(*) FROM m$files GROUP BY content ORDER BY content`); len(got) < 2 {
		t.Fatalf("merge-on-read wrote no delete files: %v", got)
	}

	// a transaction over two tables commits both or neither
	mustExec(t, sa, `BEGIN; INSERT INTO t VALUES (-1, 'tx', 0); INSERT INTO m VALUES (-1, 'tx'); COMMIT`)
	same(`SELECT (SELECT count(*) FROM t WHERE v = 'tx'), (SELECT count(*) FROM m WHERE v = 'tx')`)

	// the loser of a race gets a conflict, and its files go
	before := allFiles(t, dir)
	mustExec(t, sa, `BEGIN; UPDATE t SET v = 'a' WHERE id < 1000`)
	mustExec(t, sb, `UPDATE t SET v = 'b' WHERE id < 1000`)
	afterB := allFiles(t, dir)
	err := sa.Exec(context.Background(), `COMMIT`)
	if !errors.Is(err, lake.ErrCommitConflict) {
		t.Fatalf("the second writer's COMMIT: %v, want ErrCommitConflict", err)
	}
	if got := same(`SELECT DISTINCT v FROM t WHERE id < 1000 AND id >= 0`); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("rows both changed hold %v, want the winner's", got)
	}
	for p := range allFiles(t, dir) {
		if !afterB[p] {
			t.Errorf("the loser left %s behind", p)
		}
	}
	if len(afterB) <= len(before) {
		t.Fatal("the winner wrote no file: the check above checks nothing")
	}

	// 8 writers in two lakes append at once; every row is kept once
	writeConcurrently(t, []*lake.Lake{a, b}, 8, 3, func(w, r int) string {
		return fmt.Sprintf(`INSERT INTO m SELECT 100000 + %d * 1000 + i, 'w' FROM range(%d, %d) r(i)`, w, r*10, r*10+10)
	})
	if got := same(`SELECT count(*), count(DISTINCT id) FROM m WHERE v = 'w'`); !slices.Equal(got, []string{"240|240"}) {
		t.Fatalf("after 8 writers × 3 inserts of 10 rows: %v", got)
	}

	// tables created with rows in one commit (CTAS, and a partitioned
	// table created and filled in a transaction) keep their schema and
	// spec IDs, so later writes bind
	mustExec(t, sa, `CREATE TABLE c AS SELECT id, v FROM t WHERE id BETWEEN 0 AND 99;
		BEGIN; CREATE TABLE p (id BIGINT, v VARCHAR) PARTITIONED BY (bucket(4, id)); INSERT INTO p SELECT id, v FROM t WHERE id >= 0; COMMIT`)
	mustExec(t, sb, `UPDATE c SET v = 'u' WHERE id < 50; MERGE INTO p USING c ON p.id = c.id WHEN MATCHED THEN UPDATE SET v = c.v`)
	same(`SELECT count(*), count(*) FILTER (WHERE v = 'u') FROM c`)
	same(`SELECT count(*), count(*) FILTER (WHERE v = 'u'), sum(id) FROM p`)
	same(`SELECT count(*) FROM p$partitions`)

	// DDL through the catalog
	mustExec(t, sb, `CREATE SCHEMA s2; CREATE TABLE s2.c AS SELECT * FROM t WHERE id < 10; ALTER TABLE s2.c RENAME TO s2.c2`)
	same(`SELECT count(*) FROM s2.c2`)
	mustExec(t, sa, `DROP TABLE s2.c2`)
	if _, err := backing.Table(context.Background(), "s2.c2"); !errors.Is(err, lake.ErrTableNotFound) {
		t.Fatalf("dropped over REST, the served lake still has it: %v", err)
	}

	// what a REST catalog cannot do is refused clearly, and changes nothing
	err = sa.Exec(context.Background(), `BEGIN; DROP TABLE m; INSERT INTO t VALUES (-2, 'x', 0); COMMIT`)
	if err == nil || !strings.Contains(err.Error(), "not supported on a REST catalog") {
		t.Fatalf("a transaction that drops and writes: %v", err)
	}
	_ = sa.Exec(context.Background(), `ROLLBACK`)
	same(`SELECT count(*) FROM t WHERE id = -2`)
	if _, err := backing.Table(context.Background(), "m"); err != nil {
		t.Fatalf("the refused transaction dropped m: %v", err)
	}
	if err := sa.Exec(context.Background(), `CREATE TABLE t2 CLONE t`); err == nil || !strings.Contains(err.Error(), "not supported on a REST catalog") {
		t.Fatalf("CLONE on a REST catalog: %v", err)
	}
}

// A lake on a REST catalog that wants OAuth2 logs in with client
// credentials, and is refused without them.
func TestRESTCatalogAuth(t *testing.T) {
	backing, _, uri, a, _ := restLakes(t, rest.Config{Clients: []rest.Client{{ID: "etl", Secret: "pw"}}},
		lake.WithCatalogAuth("", "etl:pw"))
	mustExec(t, a.Session(), `CREATE TABLE t (a INT); INSERT INTO t VALUES (1), (2)`)
	if got := query(t, backing.Session(), `SELECT sum(a) FROM t`); !slices.Equal(got, []string{"3"}) {
		t.Fatalf("the served lake holds %v", got)
	}
	if _, err := lake.Open(context.Background(), uri, lake.WithCatalogAuth("", "etl:wrong")); err == nil {
		t.Fatal("opened with a wrong secret")
	}
	_, err := lake.Open(context.Background(), uri)
	if err == nil || !strings.Contains(err.Error(), "it refused this client") || !strings.Contains(err.Error(), "WithCatalogAuth") {
		t.Fatalf("without credentials: %v", err)
	}
}

// A REST catalog over a lake in an object store: the client lake writes
// its files to the store the catalog's locations name.
func TestRESTCatalogOverObjectStore(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	backing, err := lake.Open(ctx, "s3://lake/served", lake.WithCatalogFile(filepath.Join(t.TempDir(), "catalog.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer backing.Close()
	rs, err := rest.New(rest.Config{Lake: backing})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(rs.Handler())
	defer hs.Close()
	client, err := lake.Open(ctx, "rest+"+hs.URL, lake.WithTableDefaults(splitDefaults))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	s := client.Session()
	mustExec(t, s, `CREATE TABLE t (id BIGINT, v VARCHAR) WITH ('write.merge.mode' = 'merge-on-read');
		INSERT INTO t SELECT i, 'v' || i FROM range(0, 2000) r(i);
		MERGE INTO t USING (SELECT i * 2 AS id FROM range(0, 1500) r(i)) s ON t.id = s.id
			WHEN MATCHED THEN UPDATE SET v = 'm' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'n')`)
	q := `SELECT count(*), count(*) FILTER (WHERE v = 'm'), count(*) FILTER (WHERE v = 'n') FROM t`
	want := []string{"2500|1000|500"}
	if got := query(t, s, q); !slices.Equal(got, want) {
		t.Fatalf("client reads %v, want %v", got, want)
	}
	if got := query(t, backing.Session(), q); !slices.Equal(got, want) {
		t.Fatalf("the served lake reads %v, want %v", got, want)
	}
	var parquet int
	for _, k := range srv.Keys(t, "served/main/t-") {
		if strings.HasSuffix(k, ".parquet") {
			parquet++
		}
	}
	if parquet < 3 {
		t.Fatalf("the store holds %d Parquet files of t; want the data, the MERGE's rows and its deletes there", parquet)
	}
}

// Three processes on one REST catalog, served by this one: one MERGEs,
// one INSERTs, one reads, all at once. Every MERGE and INSERT lands once
// (conflicts are retried), and the reader never sees a count or a sum go
// back or past what was written.
func TestRESTThreeProcesses(t *testing.T) {
	if os.Getenv("SKADE_TEST_REST_URI") != "" {
		t.Skip("child process")
	}
	_, _, uri, a, _ := restLakes(t, rest.Config{})
	mustExec(t, a.Session(), `CREATE TABLE acct (id BIGINT, n BIGINT);
		INSERT INTO acct SELECT i, 0 FROM range(0, 1000) r(i)`)
	roles := []string{"merge", "insert", "read"}
	outs := make([][]byte, len(roles))
	errs := make([]error, len(roles))
	var wg sync.WaitGroup
	for i, role := range roles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestChildREST$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "SKADE_TEST_REST_URI="+uri, "SKADE_TEST_REST_ROLE="+role)
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i, role := range roles {
		if errs[i] != nil || !strings.Contains(string(outs[i]), "CHILD-DONE") {
			t.Fatalf("%s process: %v\n%s", role, errs[i], outs[i])
		}
	}
	if got := query(t, a.Session(), `SELECT count(*), sum(n) FROM acct`); !slices.Equal(got, []string{"1200|1000"}) {
		t.Fatalf("after 20 MERGEs of 50 rows and 20 INSERTs of 10: %v, want 1200|1000", got)
	}
}

// TestChildREST is one process of TestRESTThreeProcesses.
func TestChildREST(t *testing.T) {
	uri := os.Getenv("SKADE_TEST_REST_URI")
	if uri == "" {
		t.Skip("only runs as TestRESTThreeProcesses's child")
	}
	ctx := context.Background()
	lk, err := lake.Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	s := lk.Session()
	mustExec(t, s, `SET write_retries = 50`)
	switch role := os.Getenv("SKADE_TEST_REST_ROLE"); role {
	case "merge":
		for r := range 20 {
			mustExec(t, s, fmt.Sprintf(`MERGE INTO acct USING (SELECT i AS id FROM range(%d, %d) r(i)) s ON acct.id = s.id
				WHEN MATCHED THEN UPDATE SET n = acct.n + 1`, r*50, r*50+50))
		}
	case "insert":
		for r := range 20 {
			mustExec(t, s, fmt.Sprintf(`INSERT INTO acct SELECT 10000 + i, 0 FROM range(%d, %d) r(i)`, r*10, r*10+10))
		}
	case "read":
		var lastCount, lastSum int64
		for range 40 {
			got := query(t, s, `SELECT count(*), sum(n) FROM acct`)
			var c, n int64
			if _, err := fmt.Sscanf(got[0], "%d|%d", &c, &n); err != nil {
				t.Fatalf("read %v: %v", got, err)
			}
			if c < lastCount || n < lastSum || c > 1200 || n > 1000 || c < 1000 {
				t.Fatalf("read count %d, sum %d after %d, %d: went back or past what was written", c, n, lastCount, lastSum)
			}
			lastCount, lastSum = c, n
		}
		t.Logf("last read: %d rows, sum %d", lastCount, lastSum)
	default:
		t.Fatalf("unknown role %q", role)
	}
	t.Log("CHILD-DONE")
}

// A REST catalog that reports no location for a namespace (most keep
// none) is asked where a new table goes by a stage-only create.
func TestRESTCatalogWithoutNamespaceLocation(t *testing.T) {
	ctx := context.Background()
	backing, dir, _, a, _ := restLakes(t, rest.Config{})
	if err := backing.Catalog().CreateNamespace(ctx, []string{"ext"}, map[string]string{"location": ""}); err != nil {
		t.Fatal(err)
	}
	mustExec(t, a.Session(), `CREATE TABLE ext.t AS SELECT i AS id FROM range(0, 10) r(i); INSERT INTO ext.t VALUES (10)`)
	if got := query(t, backing.Session(), `SELECT count(*), sum(id) FROM ext.t`); !slices.Equal(got, []string{"11|55"}) {
		t.Fatalf("the served lake holds %v", got)
	}
	loc, err := backing.Catalog().MetadataLocation(ctx, []string{"ext", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(loc, filepath.Join(dir, "ext", "t-")) {
		t.Fatalf("the table's metadata is at %s, want under the catalog's choice %s", loc, filepath.Join(dir, "ext", "t-…"))
	}
	// the staged create left nothing behind: one table directory
	dirs, err := os.ReadDir(filepath.Join(dir, "ext"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("ext holds %v, %v; want one table directory", dirs, err)
	}
}
