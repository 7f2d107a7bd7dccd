package lake_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skadedb/skade/lake"
)

// A MERGE error names the statement and the table once, with no stutter
// from the layers it passes through.
func TestMergeCardinalityMessage(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	sess := lk.Session()
	if err := sess.Exec(ctx, "CREATE TABLE t (id BIGINT, v VARCHAR); INSERT INTO t VALUES (1, 'a')"); err != nil {
		t.Fatal(err)
	}
	_, err := sess.SQL(ctx, "MERGE INTO t USING (VALUES (1, 'x'), (1, 'y')) AS s(id, v) ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v")
	if err == nil {
		t.Fatal("a target row matched twice must fail")
	}
	if !errors.Is(err, lake.ErrInvalidArgument) {
		t.Fatalf("got %v, want ErrInvalidArgument", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "merge into main.t: target row matched more than one source row (data file ") ||
		!strings.HasSuffix(msg, ", row 0; key id=1; source rows 0 and 1); narrow the ON condition or de-duplicate the source") ||
		strings.Count(msg, "merge into") != 1 {
		t.Fatalf("message: %q", msg)
	}
}

// Unique source keys never raise the cardinality error, whatever the
// layout: a shuffled source of every key of a table in 100 files (1M rows
// with -long), in both write modes, with clauses that act on every row.
func TestMergeUniqueKeysNeverCardinality(t *testing.T) {
	rows := 200_000
	if *longTests {
		rows = 1_000_000
	}
	if testing.Short() {
		rows = 20_000
	}
	per := rows / 100
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		t.Run(mode, func(t *testing.T) {
			s := sqlLake(t).Session()
			mustExec(t, s, fmt.Sprintf(`CREATE TABLE t (id BIGINT, v BIGINT) WITH ('write.merge.mode' = '%s')`, mode))
			for f := range 100 {
				mustExec(t, s, fmt.Sprintf(`INSERT INTO t SELECT i, 0 FROM range(%d, %d) r(i)`, f*per, (f+1)*per))
			}
			// a permutation of every key (a multiplier coprime with the
			// row count), plus new keys
			q := fmt.Sprintf(`MERGE INTO t USING (SELECT (i * 7919) %% %d AS id FROM range(0, %d) r(i) UNION ALL SELECT %d + i FROM range(0, 100) r(i)) s ON t.id = s.id
				WHEN MATCHED AND s.id %% 3 = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET v = 1 WHEN NOT MATCHED THEN INSERT VALUES (s.id, 2)`, rows, rows, rows)
			res, err := s.SQL(context.Background(), q)
			if err != nil {
				t.Fatalf("MERGE of unique keys: %v", err)
			}
			res.Close()
			deleted := (rows + 2) / 3
			want := fmt.Sprintf("%d|%d|%d", rows-deleted+100, rows-deleted, 100)
			if got := query(t, s, `SELECT count(*), count(*) FILTER (WHERE v = 1), count(*) FILTER (WHERE v = 2) FROM t`); len(got) != 1 || got[0] != want {
				t.Fatalf("after the MERGE: %v, want %s", got, want)
			}
		})
	}
}
