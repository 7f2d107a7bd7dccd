package lake_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/lake"
)

// TestMemoryLimit runs queries over a table several times larger than the
// statement memory limit: scans, filters and few-group aggregates stream;
// ORDER BY and GROUP BY spill; a join build side that outgrows the limit
// fails with ErrMemoryLimit, naming the limit.
func TestMemoryLimit(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	sess := lk.Session()
	const n = 600_000 // ~14 MB of ids and ~24-byte strings in memory, against 4 MB
	mustExec(t, sess, `CREATE TABLE big AS SELECT range AS id, (range % 5)::INTEGER AS g,
		'a padded row label ' || range::VARCHAR AS s FROM range(600000)`)
	mustExec(t, sess, `SET memory_limit = '4MiB'`)

	t.Run("scan, filter and aggregate stream", func(t *testing.T) {
		got := query(t, sess, `SELECT g, count(*), sum(id) FROM big WHERE id % 3 <> 0 GROUP BY g ORDER BY g`)
		var want []string
		for g := int64(0); g < 5; g++ {
			var cnt, sum int64
			for id := g; id < n; id += 5 {
				if id%3 != 0 {
					cnt, sum = cnt+1, sum+id
				}
			}
			want = append(want, fmt.Sprintf("%d|%d|%d", g, cnt, sum))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})

	t.Run("order by spills", func(t *testing.T) {
		res, err := sess.SQL(ctx, `SELECT id, s FROM big ORDER BY s DESC, id`)
		if err != nil {
			t.Fatal(err)
		}
		rdr := res.Reader()
		defer rdr.Release()
		var count int64
		prev := ""
		for rdr.Next() {
			b := rdr.RecordBatch()
			s := b.Column(1).(*array.String)
			for i := 0; i < s.Len(); i++ {
				if count > 0 && s.Value(i) > prev {
					t.Fatalf("row %d: %q after %q, not descending", count, s.Value(i), prev)
				}
				prev = s.Value(i)
				count++
			}
		}
		if err := rdr.Err(); err != nil {
			t.Fatal(err)
		}
		if count != n {
			t.Fatalf("sorted %d rows, want %d", count, n)
		}
		plan := strings.Join(query(t, sess, `EXPLAIN ANALYZE SELECT id, s FROM big ORDER BY s DESC, id`), "\n")
		if !strings.Contains(plan, "spill_files=") {
			t.Fatalf("the sort did not spill under a 4 MiB limit:\n%s", plan)
		}
	})

	t.Run("a join streams its probe side", func(t *testing.T) {
		mustExec(t, sess, `SET memory_limit = '1GB'`)
		mustExec(t, sess, `CREATE TABLE small AS SELECT range * 1000 AS id FROM range(100)`)
		mustExec(t, sess, `SET memory_limit = '4MiB'`)
		// the smaller side builds, whichever side of the JOIN it is on
		for _, q := range []string{
			`SELECT count(*), sum(big.id) FROM big JOIN small ON big.id = small.id`,
			`SELECT count(*), sum(big.id) FROM small JOIN big ON big.id = small.id`,
		} {
			if got, want := query(t, sess, q), []string{"100|4950000"}; !slices.Equal(got, want) {
				t.Fatalf("%s: got %v, want %v", q, got, want)
			}
		}
	})

	t.Run("group by spills", func(t *testing.T) {
		q := `SELECT count(*), sum(c), sum(id), max(s) FROM (SELECT id, count(*) AS c, min(s) AS s FROM big GROUP BY id) x`
		want := []string{fmt.Sprintf("%d|%d|%d|%s", n, n, int64(n)*(n-1)/2, "a padded row label 99999")}
		if got := query(t, sess, q); !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		plan := strings.Join(query(t, sess, `EXPLAIN ANALYZE `+q), "\n")
		if !strings.Contains(plan, "spilled_rows=") {
			t.Fatalf("the aggregate did not spill under a 4 MiB limit:\n%s", plan)
		}
	})

	for _, q := range []string{
		`SELECT count(*) FROM big a JOIN big b ON a.id = b.id`,
	} {
		t.Run(q, func(t *testing.T) {
			err := queryErr(sess, q)
			if !errors.Is(err, lake.ErrMemoryLimit) {
				t.Fatalf("got %v, want ErrMemoryLimit", err)
			}
			if !strings.Contains(err.Error(), "memory limit of 4 MiB") {
				t.Fatalf("error does not name the limit: %v", err)
			}
		})
	}

	// the limit is per statement: raising it lets the join run
	mustExec(t, sess, `SET memory_limit = '1GB'`)
	if got := query(t, sess, `SELECT count(*) FROM big a JOIN big b ON a.id = b.id`); !slices.Equal(got, []string{fmt.Sprint(n)}) {
		t.Fatalf("join under 1GB: got %v, want %d", got, n)
	}
}

// queryErr runs q to the end and returns its error.
func queryErr(sess *lake.Session, q string) error {
	ctx := context.Background()
	res, err := sess.SQL(ctx, q)
	if err != nil {
		return err
	}
	defer res.Close()
	batches, err := res.Collect(ctx)
	for _, b := range batches {
		b.Release()
	}
	return err
}

// TestRuntimeMemoryLimit: while a statement runs, the Go soft memory limit
// follows its memory limit, and comes back when the result is closed;
// a limit the program set, GOMEMLIMIT, and WithRuntimeMemoryLimit(false)
// are left alone.
func TestRuntimeMemoryLimit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	during := func(t *testing.T, opts ...lake.Option) int64 {
		t.Helper()
		lk, err := lake.Open(ctx, dir, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer lk.Close()
		sess := lk.Session()
		mustExec(t, sess, `SET memory_limit = '64MiB'`)
		res, err := sess.SQL(ctx, `SELECT * FROM range(100000)`)
		if err != nil {
			t.Fatal(err)
		}
		got := debug.SetMemoryLimit(-1)
		if err := res.Close(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Skip("the test binary runs with a soft memory limit")
	}
	t.Run("set while the result streams", func(t *testing.T) {
		got := during(t)
		if got < 64<<20 || got > 64<<20+64<<20/16+1<<30 {
			t.Fatalf("soft limit %d while a 64 MiB statement runs", got)
		}
		if after := debug.SetMemoryLimit(-1); after != math.MaxInt64 {
			t.Fatalf("soft limit %d after the result closed, want none", after)
		}
	})
	t.Run("the program's own limit stays", func(t *testing.T) {
		debug.SetMemoryLimit(8 << 30)
		defer debug.SetMemoryLimit(math.MaxInt64)
		if got := during(t); got != 8<<30 {
			t.Fatalf("soft limit %d, want the program's 8 GiB", got)
		}
		if after := debug.SetMemoryLimit(-1); after != 8<<30 {
			t.Fatalf("soft limit %d after, want 8 GiB", after)
		}
	})
	t.Run("GOMEMLIMIT stays", func(t *testing.T) {
		t.Setenv("GOMEMLIMIT", "8GiB")
		if got := during(t); got != math.MaxInt64 {
			t.Fatalf("soft limit %d with GOMEMLIMIT set", got)
		}
	})
	t.Run("off", func(t *testing.T) {
		if got := during(t, lake.WithRuntimeMemoryLimit(false)); got != math.MaxInt64 {
			t.Fatalf("soft limit %d with WithRuntimeMemoryLimit(false)", got)
		}
	})
}
