package lake_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skadedb/skade/lake"
)

// lakeState is every file and directory under dir with a hash of its
// contents: two equal states are the same lake byte for byte.
func lakeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(h[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffStates(before, after map[string]string) []string {
	var d []string
	for k, v := range after {
		if w, ok := before[k]; !ok {
			d = append(d, "+ "+k)
		} else if w != v {
			d = append(d, "~ "+k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			d = append(d, "- "+k)
		}
	}
	slices.Sort(d)
	return d
}

func sameState(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if d := diffStates(before, after); len(d) > 0 {
		t.Errorf("%s changed the lake:\n%s", what, strings.Join(d, "\n"))
	}
}

func txLake(t *testing.T) (*lake.Lake, string, *lake.Session) {
	t.Helper()
	lk, dir := openLake(t)
	s := lk.Session()
	mustExec(t, s, `
		CREATE TABLE t (id INTEGER, v VARCHAR);
		INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');
		CREATE TABLE u PARTITIONED BY (id) AS SELECT id, v FROM t;`)
	return lk, dir, s
}

func TestTransactionIsolationAndCommit(t *testing.T) {
	ctx := context.Background()
	lk, _, s := txLake(t)
	other := lk.Session()
	mustExec(t, s, `BEGIN;
		INSERT INTO t VALUES (4, 'd');
		UPDATE t SET v = 'B' WHERE id = 2;
		DELETE FROM u WHERE id = 1;
		CREATE TABLE n AS SELECT id * 10 AS x FROM t;
		MERGE INTO u USING t ON u.id = t.id WHEN MATCHED THEN UPDATE SET v = t.v WHEN NOT MATCHED THEN INSERT VALUES (t.id, t.v);`)
	// the transaction sees its own writes
	if got := query(t, s, "SELECT id, v FROM t ORDER BY id"); !slices.Equal(got, []string{"1|a", "2|B", "3|c", "4|d"}) {
		t.Errorf("inside: t = %v", got)
	}
	if got := query(t, s, "SELECT count(*), sum(x) FROM n"); !slices.Equal(got, []string{"4|100"}) {
		t.Errorf("inside: n = %v", got)
	}
	if got := query(t, s, "SELECT id, v FROM u ORDER BY id"); !slices.Equal(got, []string{"1|a", "2|B", "3|c", "4|d"}) {
		t.Errorf("inside: u = %v", got)
	}
	// nobody else sees any of them
	if got := query(t, other, "SELECT id, v FROM t ORDER BY id"); !slices.Equal(got, []string{"1|a", "2|b", "3|c"}) {
		t.Errorf("outside: t = %v", got)
	}
	if _, err := other.SQL(ctx, "SELECT * FROM n"); !errors.Is(err, lake.ErrTableNotFound) {
		t.Errorf("outside: n should not exist yet, got %v", err)
	}
	hist := func(name string) int {
		tbl, err := lk.Table(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return len(history(t, tbl))
	}
	tBefore, uBefore := hist("t"), hist("u")
	if err := s.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := query(t, other, "SELECT id, v FROM t ORDER BY id"); !slices.Equal(got, []string{"1|a", "2|B", "3|c", "4|d"}) {
		t.Errorf("after commit: t = %v", got)
	}
	if got := query(t, other, "SELECT id, v FROM u ORDER BY id"); !slices.Equal(got, []string{"1|a", "2|B", "3|c", "4|d"}) {
		t.Errorf("after commit: u = %v", got)
	}
	if got := query(t, other, "SELECT count(*) FROM n"); !slices.Equal(got, []string{"4"}) {
		t.Errorf("after commit: n = %v", got)
	}
	// each statement is a snapshot of its own: time travel sees them
	if got, want := hist("t"), tBefore+2; got != want {
		t.Errorf("t has %d snapshots, want %d", got, want)
	}
	if got, want := hist("u"), uBefore+2; got != want {
		t.Errorf("u has %d snapshots, want %d", got, want)
	}
}

func TestTransactionRollbackLeavesLakeUnchanged(t *testing.T) {
	ctx := context.Background()
	_, dir, s := txLake(t)
	before := lakeState(t, dir)
	mustExec(t, s, `BEGIN;
		INSERT INTO t VALUES (4, 'd');
		INSERT INTO u VALUES (9, 'new partition');
		UPDATE t SET v = 'B' WHERE id = 2;
		CREATE TABLE n AS SELECT id FROM t;
		CREATE OR REPLACE TABLE u AS SELECT 1 AS one;
		DROP TABLE t;
		ALTER TABLE n ADD COLUMN w VARCHAR;`)
	if _, err := s.SQL(ctx, "SELECT * FROM t"); !errors.Is(err, lake.ErrTableNotFound) {
		t.Fatalf("t was dropped in the transaction, got %v", err)
	}
	if err := s.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	sameState(t, "a rolled-back transaction", before, lakeState(t, dir))
	if got := query(t, s, "SELECT id, v FROM t ORDER BY id"); !slices.Equal(got, []string{"1|a", "2|b", "3|c"}) {
		t.Errorf("t = %v", got)
	}

	// a failing statement aborts the transaction; ROLLBACK ends it
	mustExec(t, s, "BEGIN; INSERT INTO t VALUES (5, 'e')")
	if _, err := s.SQL(ctx, "INSERT INTO t VALUES ('not a number', 'x')"); err == nil {
		t.Fatal("a bad insert succeeded")
	}
	if _, err := s.SQL(ctx, "SELECT 1"); !errors.Is(err, lake.ErrTxAborted) || !strings.Contains(err.Error(), "current transaction is aborted") {
		t.Errorf("a statement after the failure: want ErrTxAborted, got %v", err)
	}
	if _, err := s.SQL(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	sameState(t, "a failed statement and ROLLBACK", before, lakeState(t, dir))

	// COMMIT of an aborted transaction rolls back and says so
	mustExec(t, s, "BEGIN; INSERT INTO t VALUES (5, 'e')")
	if _, err := s.SQL(ctx, "SELECT nope FROM t"); err == nil {
		t.Fatal("a bad query succeeded")
	}
	if _, err := s.SQL(ctx, "COMMIT"); !errors.Is(err, lake.ErrTxAborted) {
		t.Errorf("COMMIT of an aborted transaction: want ErrTxAborted, got %v", err)
	}
	if s.InTransaction() {
		t.Error("the transaction is still open after COMMIT")
	}
	sameState(t, "COMMIT of an aborted transaction", before, lakeState(t, dir))
}

func TestTransactionFaultBeforePublish(t *testing.T) {
	ctx := context.Background()
	_, dir, s := txLake(t)
	before := lakeState(t, dir)
	restore := lake.SetTestHookBeforePublish(func() error { return errors.New("injected fault") })
	mustExec(t, s, `BEGIN;
		INSERT INTO t VALUES (4, 'd');
		DELETE FROM u WHERE id = 2;
		CREATE OR REPLACE TABLE n AS SELECT 1 AS one;`)
	err := s.Commit(ctx)
	restore()
	if err == nil || !strings.Contains(err.Error(), "injected fault") {
		t.Fatalf("commit: want the injected fault, got %v", err)
	}
	sameState(t, "a commit failing before the catalog swap", before, lakeState(t, dir))

	// with the hook gone, the same transaction commits
	mustExec(t, s, `BEGIN; INSERT INTO t VALUES (4, 'd'); COMMIT`)
	if got := query(t, s, "SELECT count(*) FROM t"); !slices.Equal(got, []string{"4"}) {
		t.Errorf("t = %v", got)
	}
}

func TestTransactionsOverlapOneWinner(t *testing.T) {
	ctx := context.Background()
	lk, dir, s := txLake(t)
	a, b := lk.Session(), lk.Session()
	mustExec(t, a, "BEGIN; UPDATE t SET v = 'from a' WHERE id = 1; INSERT INTO u VALUES (7, 'a')")
	// b reads t before a commits, so its snapshot of t is the old one
	mustExec(t, b, "BEGIN; SELECT count(*) FROM t")
	if err := a.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	afterA := lakeState(t, dir)
	if got := query(t, b, "SELECT id, v FROM t ORDER BY id"); !slices.Equal(got, []string{"1|a", "2|b", "3|c"}) {
		t.Errorf("b sees %v, want t as it first read it", got)
	}
	mustExec(t, b, "UPDATE t SET v = 'from b' WHERE id = 2; CREATE TABLE fromb (x INTEGER)")
	err := b.Commit(ctx)
	if !errors.Is(err, lake.ErrCommitConflict) || !strings.Contains(err.Error(), "main.t") {
		t.Fatalf("the second commit: want ErrCommitConflict naming main.t, got %v", err)
	}
	sameState(t, "the losing transaction", afterA, lakeState(t, dir))
	if got := query(t, s, "SELECT id, v FROM t ORDER BY id"); !slices.Equal(got, []string{"1|from a", "2|b", "3|c"}) {
		t.Errorf("t = %v", got)
	}
	if _, err := s.SQL(ctx, "SELECT * FROM fromb"); !errors.Is(err, lake.ErrTableNotFound) {
		t.Errorf("the loser's table exists: %v", err)
	}
	// two creates of one name: one wins
	mustExec(t, a, "BEGIN; CREATE TABLE dup (x INTEGER)")
	mustExec(t, b, "BEGIN; CREATE TABLE dup (y VARCHAR)")
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(ctx); !errors.Is(err, lake.ErrCommitConflict) {
		t.Errorf("second create: want ErrCommitConflict, got %v", err)
	}
}

func TestWithTx(t *testing.T) {
	ctx := context.Background()
	_, dir, s := txLake(t)
	before := lakeState(t, dir)
	boom := errors.New("model failed")
	err := s.WithTx(ctx, func(tx *lake.Session) error {
		if _, err := tx.SQL(ctx, "INSERT INTO t VALUES (4, 'd')"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("want the function's error, got %v", err)
	}
	sameState(t, "WithTx after an error", before, lakeState(t, dir))
	err = s.WithTx(ctx, func(tx *lake.Session) error {
		_, err := tx.SQL(ctx, "INSERT INTO t VALUES (4, 'd')")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT count(*) FROM t"); !slices.Equal(got, []string{"4"}) {
		t.Errorf("t = %v", got)
	}
}

func TestAutocommitReplaceIsAtomic(t *testing.T) {
	ctx := context.Background()
	_, dir, s := txLake(t)
	before := lakeState(t, dir)
	// the query fails while rows stream into the new table
	if _, err := s.SQL(ctx, "CREATE OR REPLACE TABLE t AS SELECT id, 10 / (id - 3) AS v FROM t"); err == nil {
		t.Fatal("division by zero succeeded")
	}
	sameState(t, "a failed CREATE OR REPLACE", before, lakeState(t, dir))
	if got := query(t, s, "SELECT id, v FROM t ORDER BY id"); !slices.Equal(got, []string{"1|a", "2|b", "3|c"}) {
		t.Errorf("t = %v", got)
	}
	// replacing from its own rows works, and the old table's files go
	oldFiles := dataFiles(t, filepath.Join(dir, "main"))
	if got := query(t, s, "CREATE OR REPLACE TABLE t AS SELECT id * 2 AS id FROM t"); !slices.Equal(got, []string{"3"}) {
		t.Errorf("count = %v", got)
	}
	if got := query(t, s, "SELECT id FROM t ORDER BY id"); !slices.Equal(got, []string{"2", "4", "6"}) {
		t.Errorf("t = %v", got)
	}
	for _, f := range oldFiles {
		if strings.Contains(f, string(filepath.Separator)+"t-") {
			if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the replaced table's file %s is still there", f)
			}
		}
	}
}

func TestCloneInsideTransaction(t *testing.T) {
	ctx := context.Background()
	lk, dir, s := txLake(t)
	other := lk.Session()
	before := lakeState(t, dir)
	// forward-only: the new table starts from the old one's state
	mustExec(t, s, `BEGIN;
		CREATE TABLE t2 CLONE t;
		INSERT INTO t2 VALUES (4, 'd');`)
	if got := query(t, s, "SELECT count(*) FROM t2"); !slices.Equal(got, []string{"4"}) {
		t.Errorf("inside: t2 = %v", got)
	}
	if _, err := other.SQL(ctx, "SELECT * FROM t2"); !errors.Is(err, lake.ErrTableNotFound) {
		t.Errorf("outside: t2 should not exist yet, got %v", err)
	}
	if err := s.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	sameState(t, "a rolled-back clone", before, lakeState(t, dir))

	// a clone of a table the transaction changed is refused
	mustExec(t, s, "BEGIN; INSERT INTO t VALUES (5, 'e')")
	if _, err := s.SQL(ctx, "CREATE TABLE t3 CLONE t"); !errors.Is(err, lake.ErrNotImplemented) {
		t.Errorf("clone of a changed table: want ErrNotImplemented, got %v", err)
	}
	mustExec(t, s, "ROLLBACK")

	// the source moving before COMMIT fails the clone: expiry of the
	// source could otherwise miss the clone's references
	mustExec(t, s, "BEGIN; CREATE TABLE t2 CLONE t")
	mustExec(t, other, "INSERT INTO t VALUES (6, 'f')")
	if err := s.Commit(ctx); !errors.Is(err, lake.ErrCommitConflict) || !strings.Contains(err.Error(), "main.t ") {
		t.Errorf("commit after the source moved: want ErrCommitConflict naming main.t, got %v", err)
	}
	mustExec(t, s, "BEGIN; CREATE TABLE t2 CLONE t; INSERT INTO t2 VALUES (4, 'd'); COMMIT")
	if got := query(t, other, "SELECT count(*) FROM t2"); !slices.Equal(got, []string{"5"}) {
		t.Errorf("after commit: t2 = %v", got)
	}
	if got := query(t, other, "SELECT count(*) FROM t"); !slices.Equal(got, []string{"4"}) {
		t.Errorf("after commit: t = %v", got)
	}
}

// Sessions racing to commit transactions over one table: exactly one
// wins, the others fail with ErrCommitConflict and leave nothing behind.
func TestConcurrentTransactionsOneWinner(t *testing.T) {
	ctx := context.Background()
	lk, dir, s := txLake(t)
	const n = 4
	sessions := make([]*lake.Session, n)
	for i := range sessions {
		sessions[i] = lk.Session()
		mustExec(t, sessions[i], "BEGIN; SELECT count(*) FROM t")
	}
	before := lakeState(t, dir)
	for i, ss := range sessions {
		mustExec(t, ss, "UPDATE t SET v = 'winner "+string(rune('a'+i))+"' WHERE id = 1; INSERT INTO u VALUES (10, 'x')")
	}
	errs := make(chan error, n)
	start := make(chan struct{})
	for _, ss := range sessions {
		go func() {
			<-start
			errs <- ss.Commit(ctx)
		}()
	}
	close(start)
	wins := 0
	for range n {
		err := <-errs
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, lake.ErrCommitConflict):
			t.Errorf("a losing commit: want ErrCommitConflict, got %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d commits won, want exactly 1", wins)
	}
	got := query(t, s, "SELECT v FROM t WHERE id = 1")
	if len(got) != 1 || !strings.HasPrefix(got[0], "winner ") {
		t.Errorf("t.v = %v", got)
	}
	if got := query(t, s, "SELECT count(*) FROM u WHERE id = 10"); !slices.Equal(got, []string{"1"}) {
		t.Errorf("u got %v rows from the winners, want 1", got)
	}
	// what is new since before the statements is the winner's files only:
	// one metadata file per table, the catalog, and its data
	var metas, parquet int
	for _, d := range diffStates(before, lakeState(t, dir)) {
		if strings.HasSuffix(d, ".metadata.json") {
			metas++
		}
		if strings.HasSuffix(d, ".parquet") {
			parquet++
		}
	}
	if parquet != 2 {
		t.Errorf("%d new data files, want the winner's 2 (t's rewritten file, u's insert)", parquet)
	}
	if metas != 2 {
		t.Errorf("%d new metadata files, want the winner's 2:\n%s", metas, strings.Join(diffStates(before, lakeState(t, dir)), "\n"))
	}
}
