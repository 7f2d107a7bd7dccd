package pgwire_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/skadedb/skade/server/pgwire"
)

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// TestCommandTags checks the CommandComplete tag of each statement kind.
func TestCommandTags(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "")
	ctx := context.Background()
	cases := []struct{ sql, tag string }{
		{"CREATE TABLE t (id BIGINT, v VARCHAR)", "CREATE TABLE"},
		{"INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')", "INSERT 0 3"},
		{"UPDATE t SET v = 'x' WHERE id >= 2", "UPDATE 2"},
		{"DELETE FROM t WHERE id = 3", "DELETE 1"},
		{"MERGE INTO t USING (SELECT 1 AS id UNION ALL SELECT 9) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 'm' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'n')", "MERGE 2"},
		{"SELECT * FROM t", "SELECT 3"},
		{"CREATE TABLE u AS SELECT * FROM t", "SELECT 3"},
		{"ALTER TABLE u ADD COLUMN w INT", "ALTER TABLE"},
		{"TRUNCATE u", "TRUNCATE TABLE"},
		{"DROP TABLE u", "DROP TABLE"},
		{"BEGIN", "BEGIN"},
		{"COMMIT", "COMMIT"},
		{"SET memory_limit = '1GB'", "SET"},
		{"SHOW memory_limit", "SHOW"},
		{"CREATE SCHEMA s", "CREATE SCHEMA"},
		{"DROP SCHEMA s", "DROP SCHEMA"},
	}
	for _, cs := range cases {
		tag, err := c.Exec(ctx, cs.sql)
		if err != nil {
			t.Errorf("%s: %v", cs.sql, err)
			continue
		}
		if tag.String() != cs.tag {
			t.Errorf("%s: tag %q, want %q", cs.sql, tag, cs.tag)
		}
	}
	// RETURNING sends rows, and the tag counts them
	rows, err := c.Query(ctx, "INSERT INTO t VALUES (10, 'r'), (11, 'r') RETURNING id")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	if rows.Err() != nil || fmt.Sprint(ids) != "[10 11]" || rows.CommandTag().String() != "INSERT 0 2" {
		t.Errorf("RETURNING: %v %v %q", rows.Err(), ids, rows.CommandTag())
	}
}

// TestErrors checks SQLSTATEs, positions and hints of errors a user can
// cause, and that the connection is usable after each.
func TestErrors(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE t (id BIGINT NOT NULL, v VARCHAR); INSERT INTO t VALUES (1, 'a'), (2, 'b')"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		sql, code string
		pos       int32 // 0: not checked
		msg       string
	}{
		{"SELEC 1", "42601", 1, "syntax error"},
		{"SELECT * FROM nope", "42P01", 15, "nope"},
		{"SELECT idd FROM t", "42703", 8, "idd"},
		{"SELECT 1/0", "22012", 0, "division by zero"},
		{"INSERT INTO t VALUES (NULL, 'x')", "23502", 0, "not-null"},
		{"SELECT CAST('x' AS INTEGER)", "22P02", 0, ""},
		{"MERGE INTO t USING (SELECT 1 AS id UNION ALL SELECT 1) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 'z'", "21000", 0, "more than one source row"},
		{"SELECT nosuchfn(1)", "42883", 8, "nosuchfn"},
		{"COPY t FROM 'no/such/file.csv'", "", 0, ""},
		{"SELECT 'nope'::regclass", "42P01", 8, "relation \"nope\" does not exist"},
	}
	for _, cs := range cases {
		_, err := c.Exec(ctx, cs.sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Errorf("%s: want a server error, got %v", cs.sql, err)
			continue
		}
		if cs.code != "" && pe.Code != cs.code {
			t.Errorf("%s: SQLSTATE %s, want %s (%s)", cs.sql, pe.Code, cs.code, pe.Message)
		}
		if cs.pos != 0 && pe.Position != cs.pos {
			t.Errorf("%s: position %d, want %d (%s)", cs.sql, pe.Position, cs.pos, pe.Message)
		}
		if !strings.Contains(pe.Message, cs.msg) {
			t.Errorf("%s: message %q lacks %q", cs.sql, pe.Message, cs.msg)
		}
		if pe.Code == "" || pe.Code == "XX000" {
			t.Errorf("%s: unclassified error %q: %s", cs.sql, pe.Code, pe.Message)
		}
	}
	// a did-you-mean becomes the hint
	_, err := c.Exec(ctx, "SELECT vv FROM t")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || !strings.Contains(pe.Hint, "v") || strings.Contains(pe.Message, "did you mean") {
		t.Errorf("hint: %+v", pe)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("after errors: %v %d", err, n)
	}
	var oid, toid, coid int64
	if err := c.QueryRow(ctx, "SELECT 'pg_class'::regclass, 't'::regclass, c.oid FROM pg_class c WHERE c.relname = 't'").Scan(&oid, &toid, &coid); err != nil || oid != 1259 || toid != coid {
		t.Errorf("regclass: %d %d %d %v", oid, toid, coid, err)
	}
}

// TestTransactionStatus follows ReadyForQuery's status through BEGIN, an
// error (aborted: 25P02 until ROLLBACK) and COMMIT of a failed
// transaction, which rolls back.
func TestTransactionStatus(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "")
	ctx := context.Background()
	pc := c.PgConn()
	exec := func(sql string) (string, error) {
		res := pc.Exec(ctx, sql)
		rs, err := res.ReadAll()
		if err != nil {
			return "", err
		}
		return rs[len(rs)-1].CommandTag.String(), nil
	}
	if _, err := exec("CREATE TABLE t (id BIGINT)"); err != nil {
		t.Fatal(err)
	}
	if s := pc.TxStatus(); s != 'I' {
		t.Errorf("idle status %c", s)
	}
	exec("BEGIN")
	exec("INSERT INTO t VALUES (1)")
	if s := pc.TxStatus(); s != 'T' {
		t.Errorf("in transaction status %c", s)
	}
	if _, err := exec("SELECT * FROM nope"); err == nil {
		t.Fatal("want an error")
	}
	if s := pc.TxStatus(); s != 'E' {
		t.Errorf("failed transaction status %c", s)
	}
	if _, err := exec("SELECT 1"); pgCode(err) != "25P02" {
		t.Errorf("statement in a failed transaction: %v", err)
	}
	tag, err := exec("COMMIT")
	if err != nil || tag != "ROLLBACK" {
		t.Errorf("COMMIT of a failed transaction: %q %v", tag, err)
	}
	if s := pc.TxStatus(); s != 'I' {
		t.Errorf("after rollback status %c", s)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 0 {
		t.Errorf("the failed transaction's insert is visible: %v %d", err, n)
	}
	// a transaction through pgx's Tx commits
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx.Exec(ctx, "INSERT INTO t VALUES ($1)", 7)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Errorf("after commit: %v %d", err, n)
	}
}

// TestConflictAcrossConnections runs two transactions that update the
// same table: the first commit wins, the second fails with 40001 and
// leaves the first's data.
func TestConflictAcrossConnections(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	ctx := context.Background()
	a, b := ts.connect(t, ""), ts.connect(t, "")
	if _, err := a.Exec(ctx, "CREATE TABLE acct (id BIGINT, bal BIGINT); INSERT INTO acct VALUES (1, 100), (2, 100)"); err != nil {
		t.Fatal(err)
	}
	ta, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ta.Exec(ctx, "UPDATE acct SET bal = bal - 10 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Exec(ctx, "UPDATE acct SET bal = bal + 10 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if err := ta.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tb.Commit(ctx); pgCode(err) != "40001" {
		t.Fatalf("second commit: want 40001, got %v", err)
	}
	var bal int
	if err := b.QueryRow(ctx, "SELECT bal FROM acct WHERE id = 1").Scan(&bal); err != nil || bal != 90 {
		t.Errorf("balance %d %v, want 90", bal, err)
	}
}

// TestCopy streams rows both ways in text and CSV format, with NULLs,
// escapes and quotes, and checks that a bad row commits nothing.
func TestCopy(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "")
	ctx := context.Background()
	pc := c.PgConn()
	if _, err := c.Exec(ctx, "CREATE TABLE t (id BIGINT, s VARCHAR, d DATE, x DOUBLE)"); err != nil {
		t.Fatal(err)
	}
	text := "1\tplain\t2026-01-01\t1.5\n2\t\\N\t\\N\t\\N\n3\ttab\\there\\nline\t2026-02-03\t-2\n"
	tag, err := pc.CopyFrom(ctx, strings.NewReader(text), "COPY t FROM STDIN")
	if err != nil || tag.String() != "COPY 3" {
		t.Fatalf("copy text: %q %v", tag, err)
	}
	csv := "id,s,d,x\n4,\"quoted, \"\"comma\"\"\",2026-04-05,4\n5,,,\n6,\"\",2026-01-01,6\n7,\"multi\nline\",2026-01-01,7\n"
	tag, err = pc.CopyFrom(ctx, strings.NewReader(csv), "COPY t (id, s, d, x) FROM STDIN WITH (FORMAT csv, HEADER)")
	if err != nil || tag.String() != "COPY 4" {
		t.Fatalf("copy csv: %q %v", tag, err)
	}
	var out bytes.Buffer
	tag, err = pc.CopyTo(ctx, &out, "COPY (SELECT * FROM t ORDER BY id) TO STDOUT")
	if err != nil || tag.String() != "COPY 7" {
		t.Fatalf("copy to: %q %v", tag, err)
	}
	want := "1\tplain\t2026-01-01\t1.5\n2\t\\N\t\\N\t\\N\n3\ttab\\there\\nline\t2026-02-03\t-2\n" +
		"4\tquoted, \"comma\"\t2026-04-05\t4\n5\t\\N\t\\N\t\\N\n6\t\t2026-01-01\t6\n7\tmulti\\nline\t2026-01-01\t7\n"
	if out.String() != want {
		t.Errorf("copy to text:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	if _, err := pc.CopyTo(ctx, &out, "COPY t (id, s) TO STDOUT (FORMAT csv, HEADER)"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "id,s\n") || !strings.Contains(out.String(), "4,\"quoted, \"\"comma\"\"\"\n") || !strings.Contains(out.String(), "6,\"\"\n") || !strings.Contains(out.String(), "5,\n") {
		t.Errorf("copy to csv:\n%s", out.String())
	}
	// a bad value fails the whole COPY: nothing of it commits
	_, err = pc.CopyFrom(ctx, strings.NewReader("8\ta\t2026-01-01\t1\n9\tb\tnot a date\t2\n"), "COPY t FROM STDIN")
	if err == nil {
		t.Fatal("a bad date was accepted")
	}
	_, err = pc.CopyFrom(ctx, strings.NewReader("10\ta\t2026-01-01\n"), "COPY t FROM STDIN")
	if pgCode(err) != "22P04" {
		t.Errorf("missing column: %v", err)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 7 {
		t.Errorf("after failed copies: %d rows, %v", n, err)
	}
}

// TestCopyLarge streams 300,000 rows in and out: one commit, every row.
func TestCopyLarge(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE big (id BIGINT, s VARCHAR)"); err != nil {
		t.Fatal(err)
	}
	const n = 300_000
	pr, pw := io.Pipe()
	go func() {
		var b bytes.Buffer
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "%d\tvalue %d\n", i, i)
			if b.Len() > 1<<16 {
				pw.Write(b.Bytes())
				b.Reset()
			}
		}
		pw.Write(b.Bytes())
		pw.Close()
	}()
	tag, err := c.PgConn().CopyFrom(ctx, pr, "COPY big FROM STDIN")
	if err != nil || tag.RowsAffected() != n {
		t.Fatalf("copy: %v %v", tag, err)
	}
	var cnt, sum int64
	if err := c.QueryRow(ctx, "SELECT count(*), sum(id) FROM big").Scan(&cnt, &sum); err != nil || cnt != n || sum != n*(n-1)/2 {
		t.Fatalf("count %d sum %d %v", cnt, sum, err)
	}
	var snaps int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM big$snapshots").Scan(&snaps); err != nil || snaps != 1 {
		t.Errorf("want one snapshot, got %d %v", snaps, err)
	}
	lines := 0
	w := lineCounter{&lines}
	if tag, err := c.PgConn().CopyTo(ctx, w, "COPY big TO STDOUT"); err != nil || tag.RowsAffected() != n || lines != n {
		t.Errorf("copy to: %v %v, %d lines", tag, err, lines)
	}
}

type lineCounter struct{ n *int }

func (l lineCounter) Write(p []byte) (int, error) {
	*l.n += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// TestCancel cancels a long statement through pgx's CancelRequest: the
// statement fails with 57014 and the connection goes on.
func TestCancel(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	var n int64
	err := c.QueryRow(ctx, "SELECT count(*) FROM range(100000000000) a WHERE a.range % 7 = 3").Scan(&n)
	if err == nil {
		t.Fatal("the statement finished")
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("cancel took %s", time.Since(start))
	}
	// pgx closes a connection whose context ended mid-query; a fresh one
	// must work, and so must the server
	c2 := ts.connect(t, "")
	if err := c2.QueryRow(context.Background(), "SELECT 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	// cancel through the protocol on a connection that stays open
	pc := c2.PgConn()
	go func() {
		time.Sleep(200 * time.Millisecond)
		pc.CancelRequest(context.Background())
	}()
	_, err = pc.Exec(context.Background(), "SELECT count(*) FROM range(100000000000) a WHERE a.range % 7 = 3").ReadAll()
	if pgCode(err) != "57014" {
		t.Fatalf("want 57014, got %v", err)
	}
	if err := c2.QueryRow(context.Background(), "SELECT 2").Scan(&n); err != nil || n != 2 {
		t.Fatalf("after cancel: %v", err)
	}
}

// TestConcurrentClients runs 16 clients × 200 statements at once, mixing
// queries with parameters and appends, and checks every append landed.
func TestConcurrentClients(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	ctx := context.Background()
	setup := ts.connect(t, "")
	if _, err := setup.Exec(ctx, "CREATE TABLE log (client BIGINT, i BIGINT)"); err != nil {
		t.Fatal(err)
	}
	const clients, stmts = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for k := 0; k < clients; k++ {
		c := ts.connect(t, "")
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			for i := 0; i < stmts; i++ {
				if i%20 == 0 {
					if _, err := c.Exec(ctx, "INSERT INTO log VALUES ($1, $2)", k, i); err != nil {
						errs <- fmt.Errorf("client %d insert %d: %w", k, i, err)
						return
					}
					continue
				}
				var got int64
				if err := c.QueryRow(ctx, "SELECT $1::BIGINT * 2 + $2", int64(i), int64(k)).Scan(&got); err != nil || got != int64(2*i+k) {
					errs <- fmt.Errorf("client %d query %d: %v %d", k, i, err, got)
					return
				}
			}
		}(k)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int
	if err := setup.QueryRow(ctx, "SELECT count(*) FROM log").Scan(&n); err != nil || n != clients*stmts/20 {
		t.Errorf("log has %d rows, want %d: %v", n, clients*stmts/20, err)
	}
}

// TestPreparedAndPortals uses named statements, Describe of parameters,
// and Execute with a row limit (PortalSuspended), through pgconn.
func TestPreparedAndPortals(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE t AS SELECT range AS id, 'v' || range AS s FROM range(10)"); err != nil {
		t.Fatal(err)
	}
	sd, err := c.Prepare(ctx, "byid", "SELECT s FROM t WHERE id > $1 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if len(sd.ParamOIDs) != 1 || sd.ParamOIDs[0] != 20 || len(sd.Fields) != 1 || sd.Fields[0].DataTypeOID != 25 {
		t.Errorf("description: params %v fields %+v", sd.ParamOIDs, sd.Fields)
	}
	rows, err := c.Query(ctx, "byid", 7)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || strings.Join(got, ",") != "v8,v9" {
		t.Errorf("prepared: %v %v", got, err)
	}
	// Execute with a row limit, by hand
	fe := c.PgConn().Frontend()
	fe.Send(&pgproto3.Bind{PreparedStatement: "byid", Parameters: [][]byte{[]byte("2")}})
	fe.Send(&pgproto3.Execute{MaxRows: 3})
	fe.Send(&pgproto3.Execute{MaxRows: 0})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			seen = append(seen, string(m.Values[0]))
		case *pgproto3.PortalSuspended:
			seen = append(seen, "|suspended|")
		case *pgproto3.CommandComplete:
			seen = append(seen, "|"+string(m.CommandTag)+"|")
		case *pgproto3.ErrorResponse:
			t.Fatalf("error: %s", m.Message)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	if s := strings.Join(seen, " "); s != "v3 v4 v5 |suspended| v6 v7 v8 v9 |SELECT 7|" {
		t.Errorf("portal: %s", s)
	}
}

// TestAuthentication runs SCRAM-SHA-256 with pgx: the right password
// connects, a wrong one and an unknown user fail with 28P01.
func TestAuthentication(t *testing.T) {
	ts := startServer(t, pgwire.Config{Users: map[string]string{"alice": "s3cret"}})
	ctx := context.Background()
	host, port, _ := net.SplitHostPort(ts.addr)
	url := func(user, pw string) string {
		return fmt.Sprintf("postgres://%s:%s@%s:%s/lake?sslmode=disable", user, pw, host, port)
	}
	c, err := pgx.Connect(ctx, url("alice", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	for _, u := range [][2]string{{"alice", "wrong"}, {"bob", "s3cret"}} {
		_, err := pgx.Connect(ctx, url(u[0], u[1]))
		if pgCode(err) != "28P01" {
			t.Errorf("%s/%s: want 28P01, got %v", u[0], u[1], err)
		}
	}
}

// TestRefusesRemoteTrust: without authentication the server listens on
// loopback only.
func TestRefusesRemoteTrust(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	_, err := ts.srv.Listen("0.0.0.0:0")
	if err == nil || !strings.Contains(err.Error(), "without authentication") {
		t.Errorf("want a refusal, got %v", err)
	}
}

// TestGarbageAndOversized: random bytes after startup and a message
// larger than the limit end that connection only.
func TestGarbageAndOversized(t *testing.T) {
	ts := startServer(t, pgwire.Config{MaxMessageSize: 1 << 20})
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		c := ts.connect(t, "")
		junk := make([]byte, 64+i*37)
		rand.Read(junk)
		if i%2 == 0 {
			// a plausible header announcing a huge body
			junk[0], junk[1], junk[2], junk[3], junk[4] = 'Q', 0x7f, 0xff, 0xff, 0xff
		}
		nc := c.PgConn().Conn()
		nc.Write(junk)
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.Copy(io.Discard, nc) // the server closes the connection
	}
	c := ts.connect(t, "")
	var n int
	if err := c.QueryRow(ctx, "SELECT 41 + 1").Scan(&n); err != nil || n != 42 {
		t.Fatalf("server after garbage: %v", err)
	}
}

// TestShutdown: an idle connection is told the server is going away, an
// open transaction is rolled back, and Serve returns.
func TestShutdown(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	ctx := context.Background()
	c := ts.connect(t, "")
	if _, err := c.Exec(ctx, "CREATE TABLE t (id BIGINT)"); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("connection still works after shutdown")
	}
	s := ts.lake.Session()
	res, err := s.SQL(ctx, "SELECT count(*) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	bs, _ := res.Collect(ctx)
	if len(bs) != 1 || bs[0].Column(0).ValueStr(0) != "0" {
		t.Errorf("the open transaction's insert was published")
	}
	for _, b := range bs {
		b.Release()
	}
	if _, err := pgx.Connect(ctx, ts.url("")); err == nil {
		t.Error("connected after shutdown")
	}
}

// TestStatementTimeout: SET statement_timeout cancels a long statement
// with 57014 and the message PostgreSQL gives; 0 turns it off again.
func TestStatementTimeout(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "&default_query_exec_mode=simple_protocol")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "SET statement_timeout = '200ms'"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := c.Exec(ctx, "SELECT count(*) FROM range(100000000000) a WHERE a.range % 7 = 3")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" || !strings.Contains(pe.Message, "statement timeout") {
		t.Fatalf("want 57014 statement timeout, got %v", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("the timeout took %s", time.Since(start))
	}
	if _, err := c.Exec(ctx, "SET statement_timeout = 0"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM range(3000000)").Scan(&n); err != nil || n != 3000000 {
		t.Errorf("after SET statement_timeout = 0: %d %v", n, err)
	}
	if _, err := c.Exec(ctx, "SET statement_timeout = 'soon'"); pgCode(err) != "22023" {
		t.Errorf("bad value: %v", err)
	}
}

// TestCopyFromBinary uses pgx's CopyFrom, which describes the target
// columns and sends COPY's binary format.
func TestCopyFromBinary(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE b (id BIGINT, small SMALLINT, ok BOOLEAN, x DOUBLE, name VARCHAR, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ, price DECIMAL(10,2), raw BLOB)"); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
	stamp := time.Date(2026, 3, 4, 5, 6, 7, 890000000, time.UTC)
	var rows [][]any
	for i := 0; i < 20000; i++ {
		rows = append(rows, []any{int64(i), int16(i % 100), i%2 == 0, float64(i) / 4, fmt.Sprintf("n%d", i), day, stamp, stamp, fmt.Sprintf("%d.%02d", i, i%100), []byte{byte(i)}})
	}
	rows = append(rows, []any{int64(-1), nil, nil, nil, nil, nil, nil, nil, nil, nil})
	n, err := c.CopyFrom(ctx, pgx.Identifier{"b"}, []string{"id", "small", "ok", "x", "name", "d", "ts", "tz", "price", "raw"}, pgx.CopyFromRows(rows))
	if err != nil || n != int64(len(rows)) {
		t.Fatalf("CopyFrom: %d %v", n, err)
	}
	var (
		cnt, sumID  int64
		name, price string
		d, ts2, tz  time.Time
		raw         []byte
		nullName    *string
	)
	if err := c.QueryRow(ctx, "SELECT count(*), sum(id) FROM b").Scan(&cnt, &sumID); err != nil || cnt != 20001 || sumID != 19999*20000/2-1 {
		t.Fatalf("count %d sum %d %v", cnt, sumID, err)
	}
	if err := c.QueryRow(ctx, "SELECT name, d, ts, tz, CAST(price AS VARCHAR), raw FROM b WHERE id = 1234").Scan(&name, &d, &ts2, &tz, &price, &raw); err != nil {
		t.Fatal(err)
	}
	if name != "n1234" || !d.Equal(day) || !ts2.Equal(stamp) || !tz.Equal(stamp) || price != "1234.34" || len(raw) != 1 || raw[0] != byte(1234%256) {
		t.Errorf("row 1234: %q %v %v %v %q %v", name, d, ts2, tz, price, raw)
	}
	if err := c.QueryRow(ctx, "SELECT name FROM b WHERE id = -1").Scan(&nullName); err != nil || nullName != nil {
		t.Errorf("NULL row: %v %v", nullName, err)
	}
	// a value of the wrong type fails the COPY, and nothing commits
	_, err = c.CopyFrom(ctx, pgx.Identifier{"b"}, []string{"id", "name"}, pgx.CopyFromRows([][]any{{int64(1), "a"}, {"x", "b"}}))
	if err == nil {
		t.Error("a bad row was accepted")
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM b").Scan(&cnt); err != nil || cnt != 20001 {
		t.Errorf("after the failed CopyFrom: %d %v", cnt, err)
	}
}

// TestMergeGuideExample runs the MERGE guide's statement over the wire:
// the tag counts rows updated plus inserted, not source rows.
func TestMergeGuideExample(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "")
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE events (id BIGINT, status VARCHAR, seen_at TIMESTAMP)",
		"INSERT INTO events VALUES (1, 'new', TIMESTAMP '2026-01-01 00:00:00'), (2, 'new', TIMESTAMP '2026-01-01 00:00:00'), (3, 'new', TIMESTAMP '2026-01-01 00:00:00')",
		"CREATE TABLE incoming (id BIGINT, status VARCHAR, seen_at TIMESTAMP)",
		"INSERT INTO incoming VALUES (2, 'paid', TIMESTAMP '2026-01-02 00:00:00'), (4, 'new', TIMESTAMP '2026-01-02 00:00:00'), (5, 'new', TIMESTAMP '2026-01-02 00:00:00')",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	tag, err := c.Exec(ctx, `MERGE INTO events USING incoming ON events.id = incoming.id
		WHEN MATCHED THEN UPDATE SET status = incoming.status, seen_at = incoming.seen_at
		WHEN NOT MATCHED THEN INSERT (id, status, seen_at) VALUES (incoming.id, incoming.status, incoming.seen_at)`)
	if err != nil || tag.String() != "MERGE 3" {
		t.Fatalf("merge: %q %v", tag, err)
	}
	rows, _ := c.Query(ctx, "SELECT id, status FROM events ORDER BY id")
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var id int64
		var s string
		err := r.Scan(&id, &s)
		return fmt.Sprintf("%d:%s", id, s), err
	})
	if err != nil || strings.Join(got, " ") != "1:new 2:paid 3:new 4:new 5:new" {
		t.Errorf("after merge: %v %v", got, err)
	}
}

// TestSessionFunctions: what clients ask at startup.
func TestSessionFunctions(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "")
	ctx := context.Background()
	var pid int64
	var user, db, schema, path, iso string
	err := c.QueryRow(ctx, "SELECT pg_backend_pid(), current_user, current_database(), current_schema()").Scan(&pid, &user, &db, &schema)
	if err != nil || pid != int64(c.PgConn().PID()) || user != "skade" || db != "lake" || schema != "main" {
		t.Errorf("got %d %q %q %q %v (pid %d)", pid, user, db, schema, err, c.PgConn().PID())
	}
	if err := c.QueryRow(ctx, "SHOW search_path").Scan(&path); err != nil || path != "main" {
		t.Errorf("search_path %q %v", path, err)
	}
	if err := c.QueryRow(ctx, "SHOW TRANSACTION ISOLATION LEVEL").Scan(&iso); err != nil || iso != "repeatable read" {
		t.Errorf("isolation %q %v", iso, err)
	}
	if _, err := c.Exec(ctx, "BEGIN ISOLATION LEVEL SERIALIZABLE"); pgCode(err) != "0A000" {
		t.Errorf("serializable: %v", err)
	}
}

// TestImplicitTransaction: the statements of one simple-protocol message
// commit together or not at all, as in PostgreSQL.
func TestImplicitTransaction(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "")
	ctx := context.Background()
	pc := c.PgConn()
	if _, err := pc.Exec(ctx, "CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	_, err := pc.Exec(ctx, "INSERT INTO t VALUES (3); SELECT * FROM nope; INSERT INTO t VALUES (4)").ReadAll()
	if pgCode(err) != "42P01" {
		t.Fatalf("want 42P01, got %v", err)
	}
	if s := pc.TxStatus(); s != 'I' {
		t.Errorf("status after the failed message: %c", s)
	}
	var n, sum int64
	if err := c.QueryRow(ctx, "SELECT count(*), sum(id) FROM t").Scan(&n, &sum); err != nil || n != 2 || sum != 3 {
		t.Errorf("the failed message left %d rows (sum %d): %v", n, sum, err)
	}
	// statements lake runs only outside a transaction still run one by one
	if _, err := pc.Exec(ctx, "CREATE SCHEMA s; CREATE TABLE s.u (id BIGINT)").ReadAll(); err != nil {
		t.Errorf("CREATE SCHEMA in a message: %v", err)
	}
}

// COPY (MERGE … RETURNING …) TO STDOUT sends the rows the statement
// returns; without RETURNING it is refused and changes nothing.
func TestCopyDMLToStdout(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE t (id BIGINT, v INTEGER); INSERT INTO t VALUES (1, 1), (2, 2)"); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	tag, err := c.PgConn().CopyTo(ctx, &out, "COPY (MERGE INTO t USING (VALUES (2, 20)) AS s(id, x) ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.x RETURNING old.v, new.v) TO STDOUT")
	if err != nil || tag.String() != "COPY 1" || out.String() != "2\t20\n" {
		t.Fatalf("copy (merge) to stdout: %q %q %v", tag, out.String(), err)
	}
	_, err = c.PgConn().CopyTo(ctx, &out, "COPY (UPDATE t SET v = 0) TO STDOUT")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "0A000" || !strings.Contains(pe.Message, "needs a RETURNING clause") {
		t.Fatalf("copy (update) without RETURNING: %v", err)
	}
	var sum int
	if err := c.QueryRow(ctx, "SELECT sum(v)::INTEGER FROM t").Scan(&sum); err != nil || sum != 21 {
		t.Fatalf("after the refused COPY: sum %d, %v; want 21", sum, err)
	}
}
