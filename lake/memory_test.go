package lake_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/lake"
)

// TestMemoryLimit runs queries over a table several times larger than the
// statement memory limit: scans, filters and few-group aggregates stream;
// ORDER BY spills; a join build side or aggregate state that outgrows the
// limit fails with ErrMemoryLimit, naming the limit.
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

	for _, q := range []string{
		`SELECT count(*) FROM big a JOIN big b ON a.id = b.id`,
		`SELECT count(*) FROM (SELECT id, count(*) FROM big GROUP BY id) x`,
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
