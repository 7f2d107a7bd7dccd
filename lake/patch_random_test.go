package lake_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skadedb/skade/mergeinto"
)

// TestPatchingMergesAgreeWithTwins runs random MERGEs that only update (so
// that row groups are patched, and read narrow where the statement leaves
// columns unread) on a table and on its twin that never patches, which
// reads and writes whole rows, at sizes where files hold several row
// groups of thousands of rows: the SET columns drawn from six types
// (timestamps among them), conditions on random columns, a NOT NULL
// column, NOT MATCHED inserts on some, memory limits that make patches
// give way at a group's first update or part way (deferred groups), and
// patches that fail to encode. After every statement the two tables must
// hold the same rows, and a filter on each column must find the same.
// -long runs 24 sequences instead of 8.
func TestPatchingMergesAgreeWithTwins(t *testing.T) {
	sequences := 8
	if *longTests {
		sequences = 24
	}
	if testing.Short() {
		sequences = 2
	}
	cols := []struct{ name, typ, gen, src string }{
		{"n", "INT NOT NULL", "(i % 1000)::int", "(s.k % 777)::int"},
		{"a", "DOUBLE", "CASE WHEN i % 17 = 0 THEN NULL ELSE i * 0.25 END", "s.k * -1.5"},
		{"s", "TEXT", "CASE WHEN i % 13 = 0 THEN NULL ELSE 'v' || (i % 9) END", "'u' || (s.k % 5)"},
		{"w", "TEXT", "repeat('w', 40) || i", "'wide' || s.k"},
		{"ts", "TIMESTAMP", "TIMESTAMP '2026-01-01' + i * INTERVAL '1 minute'", "TIMESTAMP '2030-01-01' + s.k * INTERVAL '1 second'"},
		{"b", "BIGINT", "i * 3", "s.k * 7"},
	}
	var outcomes [8]atomic.Int64 // patched, narrow, deferred, failed patches, sparse, sparse with failed patches or deferred groups, fixed-width pages patched, dictionary pages patched
	for seq := range sequences {
		t.Run(fmt.Sprint(seq), func(t *testing.T) {
			r := rand.New(rand.NewPCG(31, uint64(seq)))
			lk, _ := openLake(t)
			s := lk.Session()
			var defs, gens []string
			for _, c := range cols {
				defs = append(defs, c.name+" "+c.typ)
				gens = append(gens, c.gen)
			}
			rg := 1000 + r.IntN(6000)
			part := ""
			if seq%3 == 2 {
				part = "PARTITIONED BY (bucket(4, id))"
			}
			twins(t, s, fmt.Sprintf(`CREATE TABLE %%[1]s (id BIGINT, %s) %s WITH ('write.parquet.row-group-limit' = '%d'%%[2]s)`, strings.Join(defs, ", "), part, rg))
			n := 20000 + r.IntN(20000)
			for f := range 3 {
				lo, hi := f*n/3, (f+1)*n/3
				twins(t, s, fmt.Sprintf(`INSERT INTO %%[1]s SELECT i AS id, %s FROM range(%d, %d) r(i) -- %%[2]s`,
					strings.ReplaceAll(strings.Join(gens, ", "), "%", "%%"), lo, hi))
			}
			for step := range 5 {
				// SET 1–3 columns, from the source or the stored value
				var sets []string
				for _, k := range r.Perm(len(cols))[:1+r.IntN(3)] {
					c := cols[k]
					v := c.src
					if r.IntN(3) == 0 {
						switch c.name {
						case "n":
							v = "t.n + 1"
						case "a":
							v = "t.a * 2"
						case "s", "w":
							v = "t." + c.name + " || 'x'"
						case "ts":
							v = "t.ts + INTERVAL '1 hour'"
						case "b":
							v = "-t.b"
						}
					}
					sets = append(sets, c.name+" = "+v)
				}
				cond := ""
				switch r.IntN(4) {
				case 0:
					cond = fmt.Sprintf(" AND t.%s IS NOT NULL", cols[r.IntN(len(cols))].name)
				case 1:
					cond = " AND t.b % 2 = 0"
				}
				insert := ""
				if r.IntN(2) == 0 {
					insert = " WHEN NOT MATCHED THEN INSERT (id, n, w) VALUES (s.k, 1, 'new')"
				}
				// keys every stride-th id, over all of the table or (then the
				// early filter's residual rules out the rest) part of it
				stride := 3 + r.IntN(200)
				keys := n/stride + r.IntN(50)
				if r.IntN(3) == 0 {
					keys = keys/2 + r.IntN(keys/4+1)
				}
				merge := fmt.Sprintf(`MERGE INTO TBL t USING (SELECT i * %d + %d AS k FROM range(%d) r(i)) s ON t.id = s.k
					WHEN MATCHED%s THEN UPDATE SET %s%s`, stride, r.IntN(stride), keys, cond, strings.Join(sets, ", "), insert)
				on := func(table string) string { return strings.ReplaceAll(merge, "TBL", table) }
				limit := []string{"", "4MB", "512kB", "200kB"}[r.IntN(4)]
				var calls, deferred atomic.Int64
				failEvery := []int64{0, 0, 0, 1, 2}[r.IntN(5)]
				if failEvery > 0 {
					mergeinto.TestHookPatch = func(int64) error {
						if calls.Add(1)%failEvery == 0 {
							return errors.New("injected")
						}
						return nil
					}
				}
				mergeinto.TestHookDefer = func() { deferred.Add(1) }
				var fixed, dict atomic.Int64
				mergeinto.TestHookFixed = func(int64) { fixed.Add(1) }
				mergeinto.TestHookDictPaged = func(int64) { dict.Add(1) }
				if limit != "" {
					mustExec(t, s, "SET memory_limit = '"+limit+"'")
				}
				res, err := s.SQL(context.Background(), "EXPLAIN ANALYZE "+on("a"))
				if limit != "" {
					mustExec(t, s, "RESET memory_limit")
				}
				mergeinto.TestHookPatch, mergeinto.TestHookDefer, mergeinto.TestHookFixed, mergeinto.TestHookDictPaged = nil, nil, nil, nil
				if err != nil && limit != "" && strings.Contains(err.Error(), "memory limit") {
					// refused under the limit: the table is as it was
					if got, want := query(t, s, "SELECT * FROM a ORDER BY id"), query(t, s, "SELECT * FROM b ORDER BY id"); !slices.Equal(got, want) {
						t.Fatalf("a MERGE refused under a memory limit (%v) changed rows", err)
					}
					continue
				}
				plan := strings.Join(rows(t, res, err), "\n")
				mustExec(t, s, on("b"))
				if strings.Contains(plan, "patched: ") && !strings.Contains(plan, "patched: 0 ") {
					outcomes[0].Add(1)
				}
				if strings.Contains(plan, "column chunks unread") {
					outcomes[1].Add(1)
				}
				if deferred.Load() > 0 {
					outcomes[2].Add(1)
				}
				if failEvery > 0 && calls.Load() > 0 {
					outcomes[3].Add(1)
				}
				if strings.Contains(plan, " sparse)") {
					outcomes[4].Add(1)
					if deferred.Load() > 0 || failEvery > 0 && calls.Load() > 0 {
						outcomes[5].Add(1)
					}
				}
				if fixed.Load() > 0 {
					outcomes[6].Add(1)
				}
				if dict.Load() > 0 {
					outcomes[7].Add(1)
				}
				desc := fmt.Sprintf("step %d (row groups of %d, memory limit %q, every %d-th patch failing):\n%s", step, rg, limit, failEvery, on("a"))
				twinsAgree(t, s, desc,
					"SELECT * FROM %s ORDER BY id",
					"SELECT count(*), min(ts), max(ts) FROM %s WHERE ts >= TIMESTAMP '2029-12-31'",
					"SELECT count(*), sum(n) FROM %s WHERE n > 500",
					"SELECT count(*) FROM %s WHERE s = 'u1' OR w LIKE 'wide%%'",
					"SELECT count(*), sum(b) FROM %s WHERE b < 0")
			}
		})
	}
	t.Logf("statements patching: %d, reading narrow: %d, with deferred groups: %d, with failed patches: %d, patching sparse: %d (with deferred groups or failed patches: %d), patching fixed-width pages: %d, patching dictionary pages: %d",
		outcomes[0].Load(), outcomes[1].Load(), outcomes[2].Load(), outcomes[3].Load(), outcomes[4].Load(), outcomes[5].Load(), outcomes[6].Load(), outcomes[7].Load())
	if !testing.Short() && (outcomes[0].Load() == 0 || outcomes[1].Load() == 0 || outcomes[2].Load() == 0 || outcomes[3].Load() == 0 || outcomes[4].Load() == 0 || outcomes[5].Load() == 0 || outcomes[6].Load() == 0 || outcomes[7].Load() == 0) {
		t.Fatal("the generator is lopsided")
	}
}
