package lake_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skadedb/skade/lake"
)

// TestTransactionsRandom runs random transactions of INSERT, UPDATE,
// DELETE and MERGE, in copy-on-write and merge-on-read tables, ending in
// COMMIT, ROLLBACK or a failed statement and ROLLBACK. Inside, the table
// must read as a mirror that ran the same statements in autocommit; from
// another session, and after ROLLBACK, as the committed reference; after
// COMMIT, as the reference once it ran them too. A rolled-back
// transaction must leave no data file behind.
func TestTransactionsRandom(t *testing.T) {
	// 12 sequences by default; -long runs 20
	sequences := 12
	if *longTests {
		sequences = 20
	}
	if testing.Short() {
		sequences = 8
	}
	ctx := context.Background()
	lk, _ := openLake(t)
	outcomes := map[string]int{}
	for seq := range sequences {
		r := rand.New(rand.NewPCG(4242, uint64(seq)))
		tx, other := lk.Session(), lk.Session()
		x, y, w := fmt.Sprintf("x%d", seq), fmt.Sprintf("y%d", seq), fmt.Sprintf("w%d", seq)
		props := ""
		if seq%2 == 1 {
			props = " WITH ('write.merge.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.delete.mode' = 'merge-on-read')"
		}
		for _, name := range []string{x, y, w} {
			mustExec(t, other, fmt.Sprintf("CREATE TABLE %s (id BIGINT, v VARCHAR)%s; INSERT INTO %s SELECT i, 'v' || i FROM range(8) r(i)", name, props, name))
		}
		var log []string
		read := func(s *lake.Session, name string) []string {
			t.Helper()
			return query(t, s, "SELECT id, v FROM "+name+" ORDER BY id, v")
		}
		same := func(what string, got, want []string) {
			t.Helper()
			if !slices.Equal(got, want) {
				t.Fatalf("sequence %d: %s:\n got %v\nwant %v\n%s", seq, what, got, want, strings.Join(log, "\n"))
			}
		}
		next := 8
		stmt := func() string {
			k := r.IntN(next + 2)
			pred := []string{fmt.Sprintf("id = %d", k), fmt.Sprintf("id < %d", k), "id % 3 = " + strconv.Itoa(r.IntN(3)), "v IS NULL"}[r.IntN(4)]
			switch r.IntN(4) {
			case 0:
				next += 2
				return fmt.Sprintf("INSERT INTO $T VALUES (%d, 'i%d'), (%d, NULL)", next-2, seq, next-1)
			case 1:
				return "UPDATE $T SET v = coalesce(v, 'n') || 'u' WHERE " + pred
			case 2:
				return "DELETE FROM $T WHERE " + pred
			default:
				next++
				return fmt.Sprintf("MERGE INTO $T USING (VALUES (CAST(%d AS BIGINT), 'm'), (CAST(%d AS BIGINT), 'm')) s(id, v) ON $T.id = s.id "+
					"WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v)", k, next-1)
			}
		}
		on := func(s, name string) string { return strings.ReplaceAll(s, "$T", name) }
		for round := range 4 {
			loc, err := lk.Table(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			tableDir := filepath.Clean(strings.TrimPrefix(loc.Iceberg().Location(), "file://"))
			filesBefore := len(dataFiles(t, tableDir))
			mustExec(t, tx, "BEGIN")
			var stmts []string
			for range 1 + r.IntN(4) {
				s := stmt()
				stmts = append(stmts, s)
				log = append(log, fmt.Sprintf("round %d: %s", round, s))
				if _, err := tx.SQL(ctx, on(s, x)); err != nil {
					t.Fatalf("sequence %d: %s: %v", seq, on(s, x), err)
				}
				mustExec(t, other, on(s, w))
				same("inside the transaction", read(tx, x), read(other, w))
				same("seen from another session", read(other, x), read(other, y))
			}
			switch end := r.IntN(3); end {
			case 0:
				outcomes["commit"]++
				log = append(log, "COMMIT")
				mustExec(t, tx, "COMMIT")
				for _, s := range stmts {
					mustExec(t, other, on(s, y))
				}
				same("after COMMIT", read(other, x), read(other, y))
			default:
				if end == 1 {
					outcomes["failed statement"]++
					if _, err := tx.SQL(ctx, "INSERT INTO "+x+" VALUES ('not a number', 'z')"); err == nil {
						t.Fatal("a bad INSERT succeeded")
					}
				} else {
					outcomes["rollback"]++
				}
				log = append(log, "ROLLBACK")
				mustExec(t, tx, "ROLLBACK")
				same("after ROLLBACK", read(other, x), read(other, y))
				if n := len(dataFiles(t, tableDir)); n != filesBefore {
					t.Fatalf("sequence %d: ROLLBACK left %d data files, %d before\n%s", seq, n, filesBefore, strings.Join(log, "\n"))
				}
				mustExec(t, other, fmt.Sprintf("DELETE FROM %s; INSERT INTO %s SELECT * FROM %s", w, w, y))
			}
		}
	}
	t.Logf("%d sequences: %v", sequences, outcomes)
	for _, k := range []string{"commit", "rollback", "failed statement"} {
		if outcomes[k] < sequences/4 {
			t.Fatalf("the generator is lopsided: %v", outcomes)
		}
	}
}
