package lake

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestUnclosedResultIsReported: a streaming Result dropped without Close
// is closed when it is garbage collected, and counted (and logged), while
// one closed or read to its end is not.
func TestUnclosedResultIsReported(t *testing.T) {
	ctx := context.Background()
	lk := openTestLake(t)
	s := lk.Session()
	if err := s.Exec(ctx, "CREATE TABLE t AS SELECT * FROM range(10) r(i)"); err != nil {
		t.Fatal(err)
	}
	gc := func() {
		for range 5 {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
	}
	gc()
	before := unclosedResults.Load()
	// closed, and read to the end: nothing to report
	func() {
		r, err := s.SQL(ctx, "SELECT * FROM t")
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		r2, err := s.SQL(ctx, "SELECT * FROM t")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r2.Collect(ctx); err != nil {
			t.Fatal(err)
		}
	}()
	gc()
	if n := unclosedResults.Load() - before; n != 0 {
		t.Fatalf("%d closed results were reported as leaked", n)
	}
	// dropped open
	func() {
		r, err := s.SQL(ctx, "SELECT * FROM t")
		if err != nil {
			t.Fatal(err)
		}
		if r.op == nil {
			t.Fatal("the query's result does not stream; the test needs one that does")
		}
	}()
	for i := 0; i < 50 && unclosedResults.Load() == before; i++ {
		gc()
	}
	if n := unclosedResults.Load() - before; n != 1 {
		t.Fatalf("%d leaked results reported, want 1", n)
	}
}

// TestOpenResultsAreIndependent: a session may hold several open Results,
// and run statements, writes included, while they are open; each reads
// the snapshot its statement saw.
func TestOpenResultsAreIndependent(t *testing.T) {
	ctx := context.Background()
	lk := openTestLake(t)
	s := lk.Session()
	// three data files, so that the query streams several batches
	if err := s.Exec(ctx, "CREATE TABLE t AS SELECT * FROM range(1000) r(i); INSERT INTO t SELECT * FROM range(1000, 2000) r(i); INSERT INTO t SELECT * FROM range(2000, 3000) r(i)"); err != nil {
		t.Fatal(err)
	}
	r1, err := s.SQL(ctx, "SELECT i FROM t")
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	rdr := r1.Reader()
	if !rdr.Next() {
		t.Fatalf("no first batch: %v", rdr.Err())
	}
	n := rdr.RecordBatch().NumRows()
	// a write and another query while r1 is open
	if _, err := s.SQL(ctx, "DELETE FROM t WHERE i < 2000"); err != nil {
		t.Fatal(err)
	}
	r2, err := s.SQL(ctx, "SELECT count(*) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	bs, err := r2.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := bs[0].Column(0).ValueStr(0); got != "1000" {
		t.Fatalf("count after the delete = %s", got)
	}
	for rdr.Next() {
		n += rdr.RecordBatch().NumRows()
	}
	if rdr.Err() != nil || n != 3000 {
		t.Fatalf("the first result read %d rows (%v), want the 3000 its snapshot holds", n, rdr.Err())
	}
}

// TestInt64s reads integer-valued columns of every type as int64s,
// sum(bigint)'s numeric included, and refuses what is not one.
func TestInt64s(t *testing.T) {
	ctx := context.Background()
	lk := openTestLake(t)
	s := lk.Session()
	for _, c := range []struct {
		sql  string
		want []int64
		err  string
	}{
		{sql: "SELECT sum(i) FROM range(1, 5) r(i)", want: []int64{10}},
		{sql: "SELECT i::smallint FROM range(3) r(i)", want: []int64{0, 1, 2}},
		{sql: "SELECT i::integer * -2 FROM range(2) r(i)", want: []int64{0, -2}},
		{sql: "SELECT 9223372036854775807::bigint", want: []int64{9223372036854775807}},
		{sql: "SELECT 2.50::numeric(5,2) AS d", err: `int64s: column "d" holds 2.5 in row 1, which is not an int64`},
		{sql: "SELECT sum(i) * 10000000000 FROM (VALUES (9223372036854775807)) v(i)", err: "which is not an int64"},
		{sql: "SELECT NULL::bigint AS n", err: `int64s: column "n" is NULL in row 1`},
		{sql: "SELECT 'x' AS s", err: `int64s: column "s" is text, not an integer type`},
	} {
		res, err := s.SQL(ctx, c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		got, err := res.Int64s(ctx, 0)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: got %v, %v, want error %q", c.sql, got, err, c.err)
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("%s: got %v, %v, want %v", c.sql, got, err, c.want)
		}
	}
}

// openTestLake opens a lake in a fresh directory, closed when the test
// ends.
func openTestLake(t *testing.T) *Lake {
	t.Helper()
	lk, err := Open(context.Background(), filepath.Join(t.TempDir(), "lake"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lk.Close() })
	return lk
}
