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
