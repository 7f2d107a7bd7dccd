package lake_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/skadedb/skade/lake"
)

const morProps = "WITH ('write.update.mode' = 'merge-on-read', 'write.delete.mode' = 'merge-on-read')"

// A merge-on-read UPDATE that fails on its second file (after the first
// file's new rows were written) commits nothing and leaves no file behind.
func TestMergeOnReadUpdateFailureLeavesNothing(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id BIGINT, v VARCHAR) "+morProps+"; INSERT INTO t VALUES (1, 'a'), (2, 'b'); INSERT INTO t VALUES (3, 'c'), (0, 'z'); DELETE FROM t WHERE id = 2")
	before := allFiles(t, lk.Dir())
	snaps := query(t, s, "SELECT count(*) FROM t$snapshots")
	_, err := s.SQL(ctx, "UPDATE t SET v = CAST(10 / id AS VARCHAR) WHERE id >= 0")
	if err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("err = %v, want division by zero", err)
	}
	for f := range allFiles(t, lk.Dir()) {
		if !before[f] && !strings.HasSuffix(f, ".lock") {
			t.Errorf("the failed update left %s behind", f)
		}
	}
	if got := query(t, s, "SELECT count(*) FROM t$snapshots"); !slices.Equal(got, snaps) {
		t.Errorf("snapshots %v, want %v", got, snaps)
	}
	if got := query(t, s, "SELECT id, v FROM t ORDER BY id"); !slices.Equal(got, []string{"0|z", "1|a", "3|c"}) {
		t.Errorf("rows %v", got)
	}
}

// Merge-on-read UPDATE and DELETE inside BEGIN … COMMIT see each other's
// deletes, and ROLLBACK discards them.
func TestMergeOnReadInTransaction(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id BIGINT, v VARCHAR) "+morProps+"; INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	mustExec(t, s, "BEGIN; UPDATE t SET v = 'x' WHERE id = 2; DELETE FROM t WHERE id = 1; UPDATE t SET v = v || 'y' WHERE id >= 2; COMMIT")
	if got := query(t, s, "SELECT id, v FROM t ORDER BY id"); !slices.Equal(got, []string{"2|xy", "3|cy"}) {
		t.Fatalf("after commit: %v", got)
	}
	if got := query(t, s, "SELECT content, count(*) FROM t$files GROUP BY content ORDER BY content"); !slices.Equal(got, []string{"0|3", "1|2"}) {
		t.Fatalf("files after commit: %v (want 3 data files, 2 position delete files: one on the first, holding the three statements' deletes, one on the second)", got)
	}
	mustExec(t, s, "BEGIN; DELETE FROM t WHERE id = 3; UPDATE t SET v = 'q'; ROLLBACK")
	if got := query(t, s, "SELECT id, v FROM t ORDER BY id"); !slices.Equal(got, []string{"2|xy", "3|cy"}) {
		t.Fatalf("after rollback: %v", got)
	}
}

// Copy-on-write on a format-version 3 table rewrites files and keeps row
// lineage (mergeinto/lineage.go); dropping whole files works too.
func TestCopyOnWriteOnVersion3KeepsLineage(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id BIGINT, v VARCHAR) WITH ('format-version' = '3'); INSERT INTO t VALUES (1, 'a'), (2, 'b'); INSERT INTO t VALUES (3, 'c')")
	if got := query(t, s, "UPDATE t SET v = 'x' WHERE id = 1"); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("copy-on-write update: %v", got)
	}
	if got := query(t, s, "DELETE FROM t WHERE id = 3"); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("delete of a whole file: %v", got)
	}
	if got := query(t, s, "SELECT id, v, _row_id, _last_updated_sequence_number FROM t ORDER BY id"); !slices.Equal(got, []string{"1|x|0|3", "2|b|1|1"}) {
		t.Fatalf("rows %v", got)
	}
	if got := query(t, s, "SELECT content, count(*) FROM t$files GROUP BY content"); !slices.Equal(got, []string{"0|1"}) {
		t.Fatalf("files %v: want the one rewritten data file", got)
	}
}

// Upsert writes equality deletes, which cannot keep row lineage: on a
// format-version 3 table it is refused, with MERGE named instead, and
// commits nothing.
func TestUpsertRefusedOnVersion3(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id BIGINT, v VARCHAR) WITH ('format-version' = '3'); INSERT INTO t VALUES (1, 'a')")
	tbl, err := lk.Table(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	before := snapIDs(t, tbl)
	err = upsertID1(t, s, tbl)
	if !errors.Is(err, lake.ErrNotImplemented) || !strings.Contains(err.Error(), "keeps row lineage") || !strings.Contains(err.Error(), "use MERGE INTO main.t") {
		t.Fatalf("err = %v, want a refusal that names MERGE", err)
	}
	tbl, err = tbl.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after := snapIDs(t, tbl); !slices.Equal(before, after) {
		t.Errorf("the refused upsert committed: %v, then %v", before, after)
	}
}

// A merge-on-read DELETE that drops whole files and deletes rows of
// others commits two snapshots at once; both keep their manifest lists
// and manifests on disk (a fresh process can time-travel to either).
func TestMergeOnReadDeleteWithDropsKeepsBothSnapshots(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id BIGINT, v VARCHAR) "+morProps+"; INSERT INTO t VALUES (0, 'a'), (9, 'a'); INSERT INTO t VALUES (10, 'b'), (19, 'b'); INSERT INTO t VALUES (20, 'c'), (29, 'c')")
	if got := query(t, s, "DELETE FROM t WHERE id >= 5 AND id < 25"); !slices.Equal(got, []string{"4"}) {
		t.Fatalf("deleted %v", got)
	}
	tbl, err := lk.Table(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := tbl.Iceberg().FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snaps := tbl.Iceberg().Metadata().Snapshots()
	if len(snaps) != 5 {
		t.Fatalf("%d snapshots, want 5 (3 inserts, the drop, the row delta)", len(snaps))
	}
	for _, sn := range snaps {
		ms, err := sn.Manifests(fsys)
		if err != nil {
			t.Fatalf("snapshot %d (%s): %v", sn.SnapshotID, sn.Summary.Operation, err)
		}
		for _, m := range ms {
			f, err := fsys.Open(m.FilePath())
			if err != nil {
				t.Fatalf("snapshot %d (%s): manifest: %v", sn.SnapshotID, sn.Summary.Operation, err)
			}
			f.Close()
		}
	}
	if got := query(t, s, "SELECT id FROM t ORDER BY id"); !slices.Equal(got, []string{"0", "29"}) {
		t.Fatalf("rows %v", got)
	}
}

// After partition evolution an equality delete would not reach the rows
// of files written with the older spec: Upsert is refused, commits
// nothing, and works again once compaction has rewritten every file into
// the current spec.
func TestUpsertAfterPartitionEvolution(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id BIGINT, v VARCHAR) PARTITIONED BY (bucket(2, id)); INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	mustExec(t, s, "ALTER TABLE t REPLACE PARTITION FIELD bucket(2, id) WITH bucket(4, id); INSERT INTO t VALUES (3, 'c')")
	upsert := func() error {
		tbl, err := lk.Table(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		return upsertID1(t, s, tbl)
	}
	before := query(t, s, "SELECT count(*) FROM t$snapshots")
	if err := upsert(); !errors.Is(err, lake.ErrInvalidArgument) || !strings.Contains(err.Error(), "earlier partition spec") {
		t.Fatalf("upsert after evolution: %v, want a refusal", err)
	}
	if after := query(t, s, "SELECT count(*) FROM t$snapshots"); !slices.Equal(before, after) {
		t.Fatalf("the refused upsert committed: %v snapshots, then %v", before, after)
	}
	mustExec(t, s, "ALTER TABLE t EXECUTE compact")
	if err := upsert(); err != nil {
		t.Fatalf("upsert after compaction: %v", err)
	}
	if got := query(t, s, "SELECT id, v FROM t ORDER BY id"); !slices.Equal(got, []string{"1|z", "2|b", "3|c"}) {
		t.Fatalf("rows %v", got)
	}
}

// upsertID1 upserts the row (1, 'z') into tbl, keyed by id.
func upsertID1(t *testing.T, s *lake.Session, tbl *lake.Table) error {
	t.Helper()
	ctx := context.Background()
	res, err := s.SQL(ctx, "SELECT 1::BIGINT AS id, 'z' AS v")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	_, err = tbl.Upsert(ctx, []string{"id"}, res.Reader())
	return err
}
