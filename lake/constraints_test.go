package lake_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/skadedb/skade/lake"
)

// Constraints on tables big enough that the real paths switch on: files
// of several row groups read in several splits, a key hit deep inside one
// of them, pruning by the added keys' statistics, both write modes, v2
// and v3. Every refused statement leaves the table and its files as they
// were, and reports PostgreSQL's SQLSTATE.
func TestConstraintsOnSplitFiles(t *testing.T) {
	n := 200000
	if testing.Short() {
		n = 50000
	}
	for _, c := range []struct{ mode, version string }{
		{"copy-on-write", "2"}, {"merge-on-read", "2"}, {"copy-on-write", "3"}, {"merge-on-read", "3"},
	} {
		t.Run(c.mode+"-v"+c.version, func(t *testing.T) {
			lk, dir := openLake(t)
			s := lk.Session()
			mustExec(t, s, fmt.Sprintf(`CREATE TABLE k (id BIGINT PRIMARY KEY, code VARCHAR UNIQUE, v INTEGER CHECK (v >= 0))
				WITH ('format-version' = '%s', 'write.parquet.row-group-limit' = '10000', 'read.split.target-size' = '65536',
				'write.update.mode' = '%s', 'write.delete.mode' = '%s', 'write.merge.mode' = '%s')`, c.version, c.mode, c.mode, c.mode))
			// two files of many row groups: even ids, then odd ones
			mustExec(t, s, fmt.Sprintf("INSERT INTO k SELECT 2*i, 'c' || (2*i), i %% 7 FROM range(%d) r(i)", n/2))
			mustExec(t, s, fmt.Sprintf("INSERT INTO k SELECT 2*i+1, 'c' || (2*i+1), i %% 7 FROM range(%d) r(i)", n/2))
			before := query(t, s, "SELECT count(*), sum(id), sum(v), count(DISTINCT code) FROM k")
			files := allFiles(t, dir)
			deep := n - 3 // in the last row groups of the odd file
			refused := []struct{ sql, state string }{
				{fmt.Sprintf("INSERT INTO k VALUES (%d, 'new', 1)", deep), "23505"},
				{fmt.Sprintf("INSERT INTO k VALUES (%d, 'c%d', 1)", n+10, deep), "23505"},
				{fmt.Sprintf("INSERT INTO k SELECT %d + i, 'n' || i, 1 FROM range(5000) r(i)", n-2), "23505"},
				{fmt.Sprintf("INSERT INTO k VALUES (%d, 'new', -1)", n+10), "23514"},
				{fmt.Sprintf("UPDATE k SET id = %d WHERE id = 4", deep), "23505"},
				{"UPDATE k SET v = v - 6", "23514"},
				{fmt.Sprintf("MERGE INTO k USING (SELECT %d + i AS id FROM range(3) r(i)) s ON k.id = s.id WHEN MATCHED THEN UPDATE SET code = 'c6' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'x', 0)", deep), "23505"},
				{fmt.Sprintf("INSERT INTO k VALUES (%d, 'c8', 1) ON CONFLICT (id) DO NOTHING", n+20), "23505"},
				{fmt.Sprintf("COPY k FROM '%s' (FORMAT csv)", writeCSV(t, fmt.Sprintf("%d,fresh,1\n%d,fresh2,2\n", n+30, deep))), "23505"},
			}
			for _, r := range refused {
				err := queryErr(s, r.sql)
				if err == nil {
					t.Fatalf("%s: accepted", r.sql)
				}
				if got := lake.SQLState(err); got != r.state {
					t.Fatalf("%s: SQLSTATE %s (%v), want %s", r.sql, got, err, r.state)
				}
				if got := query(t, s, "SELECT count(*), sum(id), sum(v), count(DISTINCT code) FROM k"); !slices.Equal(got, before) {
					t.Fatalf("%s changed the table: %v, was %v", r.sql, got, before)
				}
			}
			// nothing a refused statement wrote is left behind
			for f := range allFiles(t, dir) {
				if !files[f] && filepath.Ext(f) == ".parquet" {
					t.Errorf("refused statements left %s", f)
				}
			}
			// what the constraints allow still runs: a key freed and
			// reused in one statement, a swap of two keys
			mustExec(t, s, fmt.Sprintf("MERGE INTO k USING (VALUES (%d, 1), (%d, 2)) s(id, x) ON k.id = s.id WHEN MATCHED THEN UPDATE SET code = 'swap' || s.x", deep, deep-1))
			mustExec(t, s, "UPDATE k SET id = CASE id WHEN 0 THEN 1 ELSE 0 END, code = code || 'x' WHERE id IN (0, 1)")
			mustExec(t, s, fmt.Sprintf("DELETE FROM k WHERE id = %d", deep))
			mustExec(t, s, fmt.Sprintf("INSERT INTO k VALUES (%d, 'back', 3)", deep))
			if got := query(t, s, "SELECT count(*), count(DISTINCT id), count(DISTINCT code) FROM k"); !slices.Equal(got, []string{fmt.Sprintf("%d|%d|%d", n, n, n)}) {
				t.Fatalf("after the allowed writes: %v", got)
			}
		})
	}
}

func writeCSV(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The Go API's writes meet the same constraints as SQL's.
func TestConstraintsOnAppendAndUpsert(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE g (id BIGINT PRIMARY KEY, CHECK (id < 100))")
	mustExec(t, s, "INSERT INTO g VALUES (1), (2)")
	tbl, err := lk.Table(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Append(ctx, idReader(3, 2)); lake.SQLState(err) != "23505" {
		t.Fatalf("Append of a key the table holds: %v (%s)", err, lake.SQLState(err))
	}
	if _, err := tbl.Append(ctx, idReader(500)); lake.SQLState(err) != "23514" {
		t.Fatalf("Append breaking the CHECK: %v (%s)", err, lake.SQLState(err))
	}
	if _, err := tbl.Upsert(ctx, []string{"id"}, idReader(2, 300)); lake.SQLState(err) != "23514" {
		t.Fatalf("Upsert breaking the CHECK: %v (%s)", err, lake.SQLState(err))
	}
	// an upsert replaces a key's row: no duplicate
	if _, err := tbl.Upsert(ctx, []string{"id"}, idReader(2, 3)); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT count(*), count(DISTINCT id) FROM g"); !slices.Equal(got, []string{"3|3"}) {
		t.Fatalf("after the upsert: %v", got)
	}
}

// Sessions racing to insert the same key: one wins, the others are
// refused with 23505, and the key is there once.
func TestConstraintsRacingInserts(t *testing.T) {
	lk, _ := openLake(t)
	mustExec(t, lk.Session(), "CREATE TABLE r (id BIGINT PRIMARY KEY, who INTEGER)")
	mustExec(t, lk.Session(), "INSERT INTO r VALUES (0, 0)")
	const writers, keys = 4, 10
	var wg sync.WaitGroup
	errs := make([][]error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := lk.Session()
			for k := 1; k <= keys; k++ {
				errs[w] = append(errs[w], queryErr(s, fmt.Sprintf("INSERT INTO r VALUES (%d, %d)", k, w)))
			}
		}(w)
	}
	wg.Wait()
	for k := 0; k < keys; k++ {
		won := 0
		for w := 0; w < writers; w++ {
			switch err := errs[w][k]; {
			case err == nil:
				won++
			case lake.SQLState(err) != "23505":
				t.Fatalf("writer %d, key %d: %v (%s)", w, k+1, err, lake.SQLState(err))
			}
		}
		if won != 1 {
			t.Fatalf("key %d: %d writers inserted it", k+1, won)
		}
	}
	if got := query(t, lk.Session(), "SELECT count(*), count(DISTINCT id) FROM r"); !slices.Equal(got, []string{fmt.Sprintf("%d|%d", keys+1, keys+1)}) {
		t.Fatalf("table: %v", got)
	}
}
