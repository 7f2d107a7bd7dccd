package lake_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/snapshot"
)

// TestBranchConcurrentWriters races four writers updating disjoint files
// of a branch with a writer appending to main, in both write modes: the
// branch writers that lose a race revalidate and restage on the branch's
// new head, main's writer on main's, and neither branch sees the other's
// writes.
func TestBranchConcurrentWriters(t *testing.T) {
	for _, c := range []struct{ mode, version string }{{"copy-on-write", "2"}, {"merge-on-read", "2"}, {"copy-on-write", "3"}, {"merge-on-read", "3"}} {
		mode := c.mode
		t.Run(mode+" v"+c.version, func(t *testing.T) {
			ctx := context.Background()
			lk := sqlLake(t)
			s := lk.Session()
			mustExec(t, s, fmt.Sprintf(`CREATE TABLE t (id BIGINT, v VARCHAR) WITH ('format-version' = '%s', 'write.update.mode' = '%s', 'commit.retry.num-retries' = '50', 'commit.retry.min-wait-ms' = '1', 'commit.retry.max-wait-ms' = '20')`, c.version, mode))
			const writers, block = 4, 100
			for w := 0; w < writers; w++ {
				// one INSERT, one data file per writer's key block
				mustExec(t, s, fmt.Sprintf("INSERT INTO t SELECT range, 'old' FROM range(%d, %d)", w*block, (w+1)*block))
			}
			mustExec(t, s, "ALTER TABLE t CREATE BRANCH audit")
			var wg sync.WaitGroup
			errs := make(chan error, writers+1)
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					ws := lk.Session()
					for round := 0; round < 3; round++ {
						_, err := ws.SQL(ctx, fmt.Sprintf("UPDATE t.branch_audit SET v = 'w%d r%d' WHERE id >= %d AND id < %d AND id %% 3 = %d", w, round, w*block, (w+1)*block, round))
						if err != nil {
							errs <- fmt.Errorf("writer %d round %d: %w", w, round, err)
							return
						}
					}
				}(w)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				ms := lk.Session()
				for i := 0; i < 5; i++ {
					if _, err := ms.SQL(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d, 'main')", 10000+i)); err != nil {
						errs <- fmt.Errorf("main writer: %w", err)
						return
					}
				}
			}()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			got := query(t, s, "SELECT v, count(*) FROM t.branch_audit GROUP BY v ORDER BY v")
			var want []string
			for w := 0; w < writers; w++ {
				for round := 0; round < 3; round++ {
					n := 0
					for id := w * block; id < (w+1)*block; id++ {
						if id%3 == round {
							n++
						}
					}
					want = append(want, fmt.Sprintf("w%d r%d|%d", w, round, n))
				}
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("branch after the race:\n got %v\nwant %v", got, want)
			}
			if got := query(t, s, "SELECT v, count(*) FROM t GROUP BY v ORDER BY v"); strings.Join(got, ",") != "main|5,old|400" {
				t.Errorf("main after the race: %v", got)
			}
			// 4 inserts, then 12 branch writes and 5 main writes, each one
			// snapshot
			if got := query(t, s, "SELECT count(*) FROM t$snapshots"); got[0] != fmt.Sprint(writers+12+5) {
				t.Errorf("snapshots: %v", got)
			}
			if c.version == "3" {
				// row ids stay unique across both branches: each commit took
				// ids the other branch's commits had not
				for _, from := range []string{"t", "t.branch_audit"} {
					got := query(t, s, "SELECT count(*), count(DISTINCT _row_id), count(_row_id) FROM "+from)
					if n := strings.Split(got[0], "|"); n[0] != n[1] || n[0] != n[2] {
						t.Errorf("%s: rows, distinct _row_id, non-null _row_id: %v", from, got)
					}
				}
				got := query(t, s, "SELECT count(*) FROM t m JOIN t.branch_audit b ON m._row_id = b._row_id WHERE m.id <> b.id")
				if got[0] != "0" {
					t.Errorf("%s rows of main and the branch share a _row_id but not an id", got[0])
				}
			}
		})
	}
}

// TestBranchHandles covers the Go API: Table.Branch reads and writes a
// branch, a tag's handle is read-only, and Refresh stays on the ref.
func TestBranchHandles(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1); ALTER TABLE t CREATE BRANCH b; ALTER TABLE t CREATE TAG v1")
	tbl, err := lk.Table(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	br, err := tbl.Branch(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, s, "INSERT INTO t.branch_b VALUES (2)")
	br, err = br.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT snapshot_id FROM t$refs WHERE name = 'b'"); br.Snapshot() == nil || got[0] != fmt.Sprint(br.Snapshot().ID) {
		t.Errorf("the refreshed branch handle is at %v; the branch at %v", br.Snapshot(), got)
	}
	tag, err := tbl.Branch(ctx, "v1")
	if err != nil {
		t.Fatal(err)
	}
	rdr := eventsReader(0, 1, 1)
	_, err = tag.Append(ctx, rdr)
	rdr.Release()
	if !errors.Is(err, lake.ErrReadOnly) {
		t.Errorf("appending to a tag: %v, want ErrReadOnly", err)
	}
	if _, err := tbl.Branch(ctx, "nope"); !errors.Is(err, lake.ErrRefNotFound) {
		t.Errorf("a missing branch: %v, want ErrRefNotFound", err)
	}
	if got := query(t, s, "SELECT count(*) FROM t"); got[0] != "1" {
		t.Errorf("main has %v rows after writes to the branch", got)
	}
}

// TestExpiryDropsAgedRefs: expiry removes a branch or tag older than its
// max-ref-age (and the snapshots only it kept), and keeps the others.
func TestExpiryDropsAgedRefs(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1)")
	if err := lake.SetRefForTest(ctx, lk, "t", "short", table.TagRef, snapshot.Retention{MaxRefAge: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	mustExec(t, s, "ALTER TABLE t CREATE TAG long RETAIN 7 DAYS; ALTER TABLE t CREATE BRANCH kept")
	mustExec(t, s, "INSERT INTO t VALUES (2); INSERT INTO t VALUES (3)")
	time.Sleep(20 * time.Millisecond)
	mustExec(t, s, "ALTER TABLE t EXECUTE expire_snapshots(older_than => '2200-01-01 00:00:00', retain_last => 1)")
	if got := query(t, s, "SELECT name FROM t$refs ORDER BY name"); strings.Join(got, ",") != "kept,long,main" {
		t.Errorf("refs after expiry: %v", got)
	}
	// the first snapshot stays for the tag and the branch; the second went
	if got := query(t, s, "SELECT count(*) FROM t$snapshots"); got[0] != "2" {
		t.Errorf("snapshots after expiry: %v", got)
	}
	if got := query(t, s, "SELECT sum(id) FROM t.tag_long"); got[0] != "1" {
		t.Errorf("the tag reads %v", got)
	}
	mustExec(t, s, "ALTER TABLE t DROP TAG long; ALTER TABLE t DROP BRANCH kept")
	mustExec(t, s, "ALTER TABLE t EXECUTE expire_snapshots(older_than => '2200-01-01 00:00:00', retain_last => 1)")
	if got := query(t, s, "SELECT count(*) FROM t$snapshots"); got[0] != "1" {
		t.Errorf("snapshots after the refs were dropped: %v", got)
	}
	if got := query(t, s, "SELECT sum(id) FROM t"); got[0] != "6" {
		t.Errorf("main reads %v", got)
	}
}

// TestInsertFollowsSortOrder: under WRITE ORDERED BY, an INSERT of rows
// in scattered order writes files that each hold a narrow range of the
// key, so a one-value filter reads one of them; without the order every
// file spans the range.
func TestInsertFollowsSortOrder(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	scanned := map[string]string{}
	for _, name := range []string{"plain", "ordered", "merged"} {
		mustExec(t, s, "CREATE TABLE "+name+" (id BIGINT, k BIGINT, v VARCHAR) WITH ('write.target-file-size-bytes' = '16384', 'write.parquet.row-group-limit' = '2000')")
		if name != "plain" {
			mustExec(t, s, "ALTER TABLE "+name+" WRITE ORDERED BY k DESC NULLS LAST")
		}
		rows := "SELECT range AS id, (range * 7919) % 200000 AS k, 'payload-' || range AS v FROM range(200000)"
		if name == "merged" {
			// MERGE's inserted rows are sorted as an INSERT's
			mustExec(t, s, "MERGE INTO merged USING ("+rows+") src ON merged.id = src.id WHEN NOT MATCHED THEN INSERT VALUES (src.id, src.k, src.v)")
		} else {
			mustExec(t, s, "INSERT INTO "+name+" "+rows)
		}
		if got := query(t, s, "SELECT count(*) > 4 FROM "+name+"$files"); got[0] != "true" {
			t.Fatalf("%s: want several files, got %v", name, got)
		}
		plan := strings.Join(query(t, s, "EXPLAIN SELECT count(*) FROM "+name+" WHERE k = 4242"), "\n")
		i := strings.Index(plan, "files scanned=")
		if i < 0 {
			t.Fatalf("no file counts in\n%s", plan)
		}
		scanned[name] = strings.Fields(plan[i+len("files scanned="):])[0]
	}
	if scanned["ordered"] != "1" || scanned["merged"] != "1" || scanned["plain"] == "1" {
		t.Errorf("files scanned for one key: ordered %s, merged %s, plain %s", scanned["ordered"], scanned["merged"], scanned["plain"])
	}
	// the rows come back whole, in the declared order within the file
	if got := query(t, s, "SELECT count(*), count(DISTINCT id), sum(k) = (SELECT sum(k) FROM plain) FROM ordered"); got[0] != "200000|200000|true" {
		t.Errorf("ordered holds %v", got)
	}
	if got := query(t, s, "SELECT k FROM ordered LIMIT 2"); strings.Join(got, ",") != "199999,199998" {
		t.Errorf("the first rows of the ordered table: %v", got)
	}
}

// TestCompactionFollowsSortOrder: compaction of a table with a declared
// order writes each group sorted, so files that each spanned the key
// range become files that each hold a narrow range; contents and row
// lineage stay.
func TestCompactionFollowsSortOrder(t *testing.T) {
	for _, version := range []string{"2", "3"} {
		t.Run("v"+version, func(t *testing.T) {
			lk := sqlLake(t)
			s := lk.Session()
			mustExec(t, s, "CREATE TABLE c (id BIGINT, k BIGINT, v VARCHAR) WITH ('format-version' = '"+version+"', 'write.delete.mode' = 'merge-on-read', 'write.parquet.row-group-limit' = '1000')")
			for i := 0; i < 8; i++ {
				// before the order is declared: every file spans all of k
				mustExec(t, s, fmt.Sprintf("INSERT INTO c SELECT range, (range * 7919) %% 40000, 'p' || range FROM range(%d, %d)", i*5000, (i+1)*5000))
			}
			mustExec(t, s, "DELETE FROM c WHERE id % 100 = 0; ALTER TABLE c WRITE ORDERED BY k")
			before := query(t, s, "SELECT count(*), sum(k), count(DISTINCT id) FROM c")
			var lineage []string
			if version == "3" {
				lineage = query(t, s, "SELECT sum(_row_id), count(DISTINCT _row_id) FROM c")
			}
			scanned := func() string {
				plan := strings.Join(query(t, s, "EXPLAIN SELECT count(*) FROM c WHERE k = 1234"), "\n")
				i := strings.Index(plan, "files scanned=")
				if i < 0 {
					t.Fatalf("no file counts in\n%s", plan)
				}
				return strings.Fields(plan[i+len("files scanned="):])[0]
			}
			if n := scanned(); n != "8" {
				t.Fatalf("before compaction one key reads %s files, want all 8", n)
			}
			mustExec(t, s, "ALTER TABLE c EXECUTE compact(target_file_size_bytes => 65536)")
			if got := query(t, s, "SELECT count(*) > 2 FROM c$files"); got[0] != "true" {
				t.Fatalf("compaction wrote one file: %v", got)
			}
			if n := scanned(); n != "1" {
				t.Errorf("after compaction one key reads %s files, want 1", n)
			}
			if got := query(t, s, "SELECT count(*), sum(k), count(DISTINCT id) FROM c"); strings.Join(got, ",") != strings.Join(before, ",") {
				t.Errorf("compaction changed the rows: %v, was %v", got, before)
			}
			if got := query(t, s, "SELECT count(*) FROM c$delete_files"); got[0] != "0" {
				t.Errorf("delete files left after compaction: %v", got)
			}
			if version == "3" {
				if got := query(t, s, "SELECT sum(_row_id), count(DISTINCT _row_id) FROM c"); strings.Join(got, ",") != strings.Join(lineage, ",") {
					t.Errorf("row lineage after compaction: %v, was %v", got, lineage)
				}
			}
		})
	}
}

// TestBranchWritesAgreeWithMain runs random INSERT, UPDATE, DELETE and
// MERGE sequences on one table's main branch and, statement for
// statement, on a branch of a second table with the same starting rows:
// after every step the branch must read as the first table's main, and
// the second table's main must still hold the starting rows. Both write
// modes, v2 and v3, with multi-split files on every other sequence.
func TestBranchWritesAgreeWithMain(t *testing.T) {
	lk := sqlLake(t)
	for seq := 0; seq < 12; seq++ {
		t.Run(strconv.Itoa(seq), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(11, uint64(seq)))
			s := lk.Session()
			a, b := fmt.Sprintf("a%d", seq), fmt.Sprintf("b%d", seq)
			props := fmt.Sprintf("'format-version' = '%d'", 2+seq%2)
			if seq%4 >= 2 {
				props += ", 'write.merge.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.delete.mode' = 'merge-on-read'"
			}
			if seq%3 == 0 {
				props += ", 'write.parquet.row-group-limit' = '2', 'read.split.target-size' = '1'"
			}
			for _, n := range []string{a, b} {
				mustExec(t, s, fmt.Sprintf("CREATE TABLE %s (id BIGINT, g BIGINT, v VARCHAR) WITH (%s); INSERT INTO %s SELECT range, range %% 4, 'v' || range FROM range(20)", n, props, n))
			}
			mustExec(t, s, "ALTER TABLE "+b+" CREATE BRANCH x")
			start := query(t, s, "SELECT * FROM "+b+" ORDER BY id, g, v")
			var log []string
			for step := 0; step < 8; step++ {
				k := r.IntN(30)
				var stmt string
				switch r.IntN(5) {
				case 0:
					stmt = fmt.Sprintf("INSERT INTO $T VALUES (%d, %d, 'i%d'), (%d, %d, NULL)", 100+step, r.IntN(4), step, k, r.IntN(4))
				case 1:
					stmt = fmt.Sprintf("UPDATE $T SET v = 'u%d', g = g + 1 WHERE id %% %d = %d", step, 2+r.IntN(3), r.IntN(2))
				case 2:
					stmt = fmt.Sprintf("DELETE FROM $T WHERE id = %d OR g = %d", k, r.IntN(6))
				case 3:
					stmt = fmt.Sprintf("MERGE INTO $T t USING (SELECT range AS id FROM range(%d, %d)) s ON t.id = s.id WHEN MATCHED AND t.g %% 2 = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET v = 'm%d' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 9, 'n%d')", k, k+5, step, step)
				default:
					stmt = fmt.Sprintf("DELETE FROM $T WHERE id IN (SELECT id FROM $T WHERE g = %d)", r.IntN(5))
				}
				log = append(log, stmt)
				mustExec(t, s, strings.ReplaceAll(stmt, "$T", a))
				mustExec(t, s, strings.ReplaceAll(stmt, "$T", b+".branch_x"))
				want := query(t, s, "SELECT * FROM "+a+" ORDER BY id, g, v")
				if got := query(t, s, "SELECT * FROM "+b+".branch_x ORDER BY id, g, v"); !slices.Equal(got, want) {
					t.Fatalf("after %s\nthe branch reads %v\nmain of the twin %v\n%s", stmt, got, want, strings.Join(log, "\n"))
				}
				if got := query(t, s, "SELECT * FROM "+b+" ORDER BY id, g, v"); !slices.Equal(got, start) {
					t.Fatalf("after %s main of %s changed: %v\n%s", stmt, b, got, strings.Join(log, "\n"))
				}
			}
		})
	}
}
