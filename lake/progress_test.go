package lake_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skadedb/skade/lake"
)

// counts is what a Progress held when its statement ended.
type counts struct{ total, done, rows int64 }

func countsOf(p *lake.Progress) counts {
	return counts{p.FilesTotal.Load(), p.FilesDone.Load(), p.Rows.Load()}
}

// runWithProgress runs the statements under a fresh Progress, draining
// each result (under another context: the statement's is what counts),
// and returns what it counted.
func runWithProgress(t *testing.T, sess *lake.Session, stmts ...string) counts {
	t.Helper()
	var p lake.Progress
	ctx := lake.WithProgress(context.Background(), &p)
	for _, q := range stmts {
		res, err := sess.SQL(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		bs, err := res.Collect(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for _, b := range bs {
			b.Release()
		}
	}
	return countsOf(&p)
}

// Every path that reads data files reports them into the statement's
// Progress, and a statement that succeeds has finished every file it
// planned.
func TestProgressFinishesWhatItPlans(t *testing.T) {
	lk, _ := openLake(t)
	sess := lk.Session()
	tbl := mustCreate(t, lk, "events")
	for i := int64(0); i < 3; i++ {
		tbl = mustAppend(t, tbl, i*1000, (i+1)*1000)
	}
	src := mustCreate(t, lk, "src")
	mustAppend(t, src, 500, 1500)

	t.Run("merge", func(t *testing.T) {
		// The ON keys prune the target to its first two files, which are
		// read whole (2000 rows) and rewritten.
		c := runWithProgress(t, sess, "MERGE INTO events USING src ON events.id = src.id WHEN MATCHED THEN UPDATE SET status = 'merged'")
		if c.total < 2 || c.done != c.total || c.rows < 2000 {
			t.Fatalf("merge: %+v; want at least the 2 target files read, all done, and at least 2000 rows", c)
		}
	})

	t.Run("copy from csv", func(t *testing.T) {
		dir := t.TempDir()
		var b strings.Builder
		b.WriteString("id,status\n")
		for i := range 2500 {
			fmt.Fprintf(&b, "%d,s%d\n", 10_000+i, i%7)
		}
		file := filepath.Join(dir, "in.csv")
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		c := runWithProgress(t, sess, fmt.Sprintf("COPY events (id, status) FROM '%s'", file))
		if want := (counts{1, 1, 2500}); c != want {
			t.Fatalf("copy from csv: %+v, want %+v", c, want)
		}
	})

	t.Run("copy from parquet glob", func(t *testing.T) {
		dir := t.TempDir()
		for i, n := range []int{300, 400, 500} {
			q := fmt.Sprintf("COPY (SELECT * FROM range(%d) r(id)) TO '%s' (FORMAT parquet)", n, filepath.Join(dir, fmt.Sprintf("p%d.parquet", i)))
			runWithProgress(t, sess, q)
		}
		c := runWithProgress(t, sess, "CREATE TABLE ids (id BIGINT)", fmt.Sprintf("COPY ids FROM '%s'", filepath.Join(dir, "*.parquet")))
		if want := (counts{3, 3, 1200}); c != want {
			t.Fatalf("copy from parquet: %+v, want %+v", c, want)
		}
	})

	// Scans: a query and a DELETE's rewrite read through exec.TableScan.
	for _, q := range []string{
		"SELECT status, count(*) FROM events GROUP BY status",
		"SELECT count(*) FROM events e JOIN src s ON e.id = s.id",
		"DELETE FROM events WHERE id % 10 = 3",
	} {
		t.Run(q, func(t *testing.T) {
			c := runWithProgress(t, sess, q)
			if c.total < 1 || c.done != c.total || c.rows < 1000 {
				t.Fatalf("%+v; want files planned, all done, and at least 1000 rows", c)
			}
		})
	}

	t.Run("compact", func(t *testing.T) {
		tbl := mustCreate(t, lk, "small")
		for i := int64(0); i < 3; i++ {
			tbl = mustAppend(t, tbl, i*700, (i+1)*700)
		}
		var p lake.Progress
		_, res, err := tbl.Compact(lake.WithProgress(context.Background(), &p), lake.CompactOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.RewrittenDataFiles != 3 {
			t.Fatalf("compaction rewrote %d files, want 3", res.RewrittenDataFiles)
		}
		if c, want := countsOf(&p), (counts{3, 3, 2100}); c != want {
			t.Fatalf("compact: %+v, want %+v", c, want)
		}
	})
}
