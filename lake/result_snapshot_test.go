package lake_test

import (
	"context"
	"testing"
)

// Result.Metrics().SnapshotID names the snapshot a statement committed,
// and is 0 for statements that committed nothing.
func TestResultSnapshotID(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	sess := lk.Session()
	run := func(q string) int64 {
		t.Helper()
		res, err := sess.SQL(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if _, err := res.Collect(ctx); err != nil {
			t.Fatal(err)
		}
		return res.Metrics().SnapshotID
	}
	head := func() int64 {
		t.Helper()
		tbl, err := lk.Table(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		return tbl.Snapshot().ID
	}
	run("CREATE TABLE t (id BIGINT, v VARCHAR)")
	if id := run("INSERT INTO t VALUES (1, 'a'), (2, 'b')"); id == 0 || id != head() {
		t.Fatalf("INSERT reported snapshot %d, head is %d", id, head())
	}
	if id := run("MERGE INTO T USING (VALUES (2, 'x')) s(id, v) ON T.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v"); id == 0 || id != head() {
		t.Fatalf("MERGE INTO T reported snapshot %d, head is %d", id, head())
	}
	before := head()
	if id := run("DELETE FROM t WHERE id = 99"); id != 0 {
		t.Fatalf("a DELETE that matched nothing reported snapshot %d", id)
	}
	if id := run("SELECT * FROM t"); id != 0 {
		t.Fatalf("a query reported snapshot %d", id)
	}
	if head() != before {
		t.Fatal("the head moved without a write")
	}
}

// Inside a transaction a write commits nothing: it reports Staged and no
// snapshot id (the staged snapshot may never commit); after COMMIT the
// rows are there.
func TestResultStagedInTransaction(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	sess := lk.Session()
	mustExec(t, sess, "CREATE TABLE t (id BIGINT)")
	mustExec(t, sess, "BEGIN")
	for _, q := range []string{"INSERT INTO t VALUES (1), (2)", "DELETE FROM t WHERE id = 1", "MERGE INTO t USING (VALUES (3)) s(id) ON t.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id)"} {
		res, err := sess.SQL(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		res.Close()
		if m := res.Metrics(); !m.Staged || m.SnapshotID != 0 {
			t.Fatalf("%s in a transaction: %+v, want Staged and no snapshot id", q, m)
		}
	}
	res, err := sess.SQL(ctx, "DELETE FROM t WHERE id = 99")
	if err != nil {
		t.Fatal(err)
	}
	res.Close()
	if m := res.Metrics(); m.Staged {
		t.Fatalf("a DELETE that matched nothing reports Staged")
	}
	mustExec(t, sess, "COMMIT")
	if got := query(t, sess, "SELECT id FROM t ORDER BY id"); len(got) != 2 || got[0] != "2" || got[1] != "3" {
		t.Fatalf("after COMMIT: %v", got)
	}
}
