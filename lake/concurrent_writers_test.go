package lake_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/lake"
)

// TestConcurrentWritersSerialize runs 8 writers, each its own session on
// one lake, issuing random MERGEs, UPDATEs and DELETEs at once, and checks
// that the table they leave equals the serial replay, in commit order, of
// the statements that committed (on a Go map, not on skade). It runs in
// both write modes, with deletion vectors (format version 3), and under
// both isolation levels, with each writer on its own keys (which live in
// its own data files) and with all writers on the same keys.
//
// On disjoint keys every statement must commit with write_retries = 0:
// a writer that loses the commit race to writers that touched other files
// is validated and restaged, never failed. On shared keys conflicts are
// expected; a statement that still fails after its retries must have
// changed nothing.
//
// Under snapshot isolation two MERGEs may both insert the same new key
// (Iceberg's semantics), which no serial order explains, so on shared
// keys that level runs statements that insert nothing.
func TestConcurrentWritersSerialize(t *testing.T) {
	const writers, rounds, keysPer = 8, 6, 50
	configs := []struct {
		name      string
		props     string
		isolation string
		disjoint  bool
	}{
		{"copy-on-write/disjoint", "", "serializable", true},
		{"copy-on-write/shared", "", "serializable", false},
		{"copy-on-write/shared/snapshot-isolation", "", "snapshot", false},
		{"merge-on-read/disjoint", morWrites, "serializable", true},
		{"merge-on-read/shared", morWrites, "serializable", false},
		{"merge-on-read/disjoint/snapshot-isolation", morWrites, "snapshot", true},
		{"deletion-vectors/disjoint", morWrites + ", 'format-version' = '3'", "serializable", true},
		{"deletion-vectors/shared", morWrites + ", 'format-version' = '3'", "serializable", false},
		{"copy-on-write-v3/disjoint", ", 'format-version' = '3'", "serializable", true},
	}
	for ci, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			ctx := context.Background()
			lk := sqlLake(t)
			s := lk.Session()
			props := fmt.Sprintf("'write.merge.isolation-level' = '%[1]s', 'write.update.isolation-level' = '%[1]s', 'write.delete.isolation-level' = '%[1]s'%s", cfg.isolation, cfg.props)
			mustExec(t, s, fmt.Sprintf("CREATE TABLE acct (k BIGINT, v BIGINT) WITH (%s)", props))
			model := map[int64]int64{}
			// Writer w's keys are w*block + [0, keysPer), its new keys
			// w*block + 500 + round: every file a writer writes on
			// disjoint keys has bounds inside its own block, so
			// serializable validation, which goes by file statistics,
			// sees disjoint writers as disjoint (a file holding a
			// re-inserted key and a new one spans only the block).
			const block = 1000
			for w := range writers {
				// one data file per writer's keys
				mustExec(t, s, fmt.Sprintf("INSERT INTO acct SELECT i, 0 FROM range(%d, %d) r(i)", w*block, w*block+keysPer))
				for k := w * block; k < w*block+keysPer; k++ {
					model[int64(k)] = 0
				}
			}
			inserts := !(cfg.isolation == "snapshot" && !cfg.disjoint)
			v3 := strings.Contains(cfg.props, "'format-version' = '3'")
			if v3 {
				mustExec(t, s, "CREATE TABLE ids AS SELECT k, _row_id AS rid FROM acct")
			}

			type committed struct {
				snapshot int64
				apply    func(map[int64]int64)
				sql      string
			}
			var mu sync.Mutex
			var done []committed
			var failures []string
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rnd := rand.New(rand.NewPCG(uint64(ci), uint64(w)))
					ws := lk.Session()
					if !cfg.disjoint {
						if err := ws.SetWriteRetries(3); err != nil {
							t.Error(err)
							return
						}
					}
					key := func() int64 {
						if cfg.disjoint {
							return int64(w*block + rnd.IntN(keysPer))
						}
						return int64(rnd.IntN(writers)*block + rnd.IntN(keysPer))
					}
					newKey := func(r int) int64 {
						if cfg.disjoint {
							return int64(w*block + 500 + r)
						}
						return int64(writers*block + rnd.IntN(10)) // writers collide on these
					}
					for r := range rounds {
						sql, apply := randomStatement(rnd, key, func() int64 { return newKey(r) }, inserts)
						res, err := ws.SQL(ctx, sql)
						if err == nil {
							_, err = res.Collect(ctx)
						}
						mu.Lock()
						switch {
						case err == nil:
							done = append(done, committed{res.Metrics().SnapshotID, apply, sql})
						case errors.Is(err, lake.ErrCommitConflict):
							failures = append(failures, fmt.Sprintf("writer %d: %s: %v", w, sql, err))
						default:
							t.Errorf("writer %d: %s: %v", w, sql, err)
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			if cfg.disjoint && len(failures) > 0 {
				t.Fatalf("writers on disjoint keys must all commit; %d failed, first: %s", len(failures), failures[0])
			}
			if len(done) == 0 {
				t.Fatal("no statement committed")
			}
			tbl, err := lk.Table(ctx, "acct")
			if err != nil {
				t.Fatal(err)
			}
			seq := map[int64]int64{}
			for _, h := range history(t, tbl) {
				seq[h.ID] = h.SequenceNumber
			}
			for _, c := range done {
				if c.snapshot != 0 && seq[c.snapshot] == 0 {
					t.Fatalf("%s: committed snapshot %d is not in the table's history", c.sql, c.snapshot)
				}
			}
			// a statement that changed nothing committed nothing (snapshot
			// 0), and commutes with everything
			slices.SortStableFunc(done, func(a, b committed) int { return int(seq[a.snapshot] - seq[b.snapshot]) })
			deleted := map[int64]bool{} // keys some statement deleted
			for _, c := range done {
				had := maps.Clone(model)
				c.apply(model)
				for k := range had {
					if _, ok := model[k]; !ok {
						deleted[k] = true
					}
				}
			}
			got := map[int64]int64{}
			res, err := s.SQL(ctx, "SELECT k, v FROM acct")
			if err != nil {
				t.Fatal(err)
			}
			bs, err := res.Collect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bs {
				ks, vs := b.Column(0).(*array.Int64), b.Column(1).(*array.Int64)
				for i := range ks.Len() {
					if _, dup := got[ks.Value(i)]; dup {
						t.Fatalf("key %d is in the table twice", ks.Value(i))
					}
					got[ks.Value(i)] = vs.Value(i)
				}
				b.Release()
			}
			if !maps.Equal(got, model) {
				for k, v := range model {
					if g, ok := got[k]; !ok || g != v {
						t.Errorf("key %d: table has %d (present %v), serial replay %d", k, g, ok, v)
					}
				}
				for k, v := range got {
					if _, ok := model[k]; !ok {
						t.Errorf("key %d = %d is in the table, not in the serial replay", k, v)
					}
				}
				t.Fatalf("the table differs from the serial replay of its %d committed statements", len(done))
			}
			if v3 {
				// row lineage survived the restaged commits: every key
				// never deleted kept its id (a deleted key inserted again
				// is a new row), and no id is NULL or repeated
				changed := 0
				for _, r := range query(t, s, "SELECT acct.k FROM acct JOIN ids ON acct.k = ids.k WHERE acct._row_id IS DISTINCT FROM ids.rid") {
					if k, err := strconv.ParseInt(r, 10, 64); err != nil || !deleted[k] {
						changed++
						t.Errorf("key %s changed its _row_id", r)
					}
				}
				if changed == 0 && len(query(t, s, "SELECT k FROM ids")) != writers*keysPer {
					t.Errorf("the saved ids are not every key's")
				}
				if got := query(t, s, "SELECT count(*) - count(DISTINCT _row_id) FROM acct"); !slices.Equal(got, []string{"0"}) {
					t.Errorf("%v repeated or NULL _row_ids", got)
				}
			}
			t.Logf("%d statements committed, %d failed on conflicts", len(done), len(failures))
		})
	}
}

const morWrites = ", 'write.merge.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.delete.mode' = 'merge-on-read'"

// randomStatement returns a random MERGE, UPDATE or DELETE on acct and
// its effect on a model of the table.
func randomStatement(rnd *rand.Rand, key, newKey func() int64, inserts bool) (string, func(map[int64]int64)) {
	switch n := rnd.IntN(10); {
	case n < 6:
		src := map[int64]int64{}
		for range 1 + rnd.IntN(5) {
			src[key()] = int64(1 + rnd.IntN(9))
		}
		if inserts && rnd.IntN(2) == 0 {
			src[newKey()] = int64(1 + rnd.IntN(9))
		}
		var rows []string
		for _, k := range slices.Sorted(maps.Keys(src)) {
			rows = append(rows, fmt.Sprintf("(%d, %d)", k, src[k]))
		}
		sql := fmt.Sprintf("MERGE INTO acct USING (VALUES %s) s(k, d) ON acct.k = s.k WHEN MATCHED THEN UPDATE SET v = acct.v + s.d", strings.Join(rows, ", "))
		if inserts {
			sql += " WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.d)"
		}
		return sql, func(m map[int64]int64) {
			for k, d := range src {
				if _, ok := m[k]; ok {
					m[k] += d
				} else if inserts {
					m[k] = d
				}
			}
		}
	case n < 9:
		k, d := key(), int64(1+rnd.IntN(9))
		return fmt.Sprintf("UPDATE acct SET v = v + %d WHERE k = %d", d, k), func(m map[int64]int64) {
			if _, ok := m[k]; ok {
				m[k] += d
			}
		}
	default:
		k := key()
		return fmt.Sprintf("DELETE FROM acct WHERE k = %d", k), func(m map[int64]int64) { delete(m, k) }
	}
}
