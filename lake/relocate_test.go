package lake_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skadedb/skade/lake"
)

// TestRelocateCopiedLake copies a lake whose tables hold every kind of
// file with a path in it (copy-on-write rewrites across partitions,
// position deletes, v3 deletion vectors on a branch, gzip-compressed
// metadata, a view), moves the original away, relocates the copy, and
// reads and writes it: the same rows as the original, none of them read
// from the original's directory (it is gone), and the copy takes writes.
func TestRelocateCopiedLake(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	orig := filepath.Join(base, "orig")
	lk, err := lake.Open(ctx, orig)
	if err != nil {
		t.Fatal(err)
	}
	s := lk.Session()
	mustExec(t, s, `
CREATE TABLE cow (id BIGINT, v VARCHAR) PARTITIONED BY (bucket(4, id)) WITH ('write.parquet.row-group-limit' = '10');
INSERT INTO cow SELECT range, 'v' || range FROM range(200);
UPDATE cow SET v = 'u' WHERE id % 10 = 0;
MERGE INTO cow USING (SELECT range AS id FROM range(190, 210)) s ON cow.id = s.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'new');
CREATE TABLE mor (id BIGINT, v VARCHAR) WITH ('write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.metadata.compression-codec' = 'gzip');
INSERT INTO mor SELECT range, 'v' || range FROM range(200);
DELETE FROM mor WHERE id % 7 = 0;
UPDATE mor SET v = 'u' WHERE id % 10 = 0;
CREATE TABLE dv (id BIGINT, v VARCHAR) WITH ('format-version' = '3', 'write.delete.mode' = 'merge-on-read');
INSERT INTO dv SELECT range, 'v' || range FROM range(200);
DELETE FROM dv WHERE id % 7 = 0;
ALTER TABLE dv CREATE BRANCH b;
DELETE FROM dv.branch_b WHERE id < 50;
CREATE VIEW vw AS SELECT count(*) AS n FROM mor;
CREATE TABLE src (id BIGINT) WITH ('write.delete.mode' = 'merge-on-read');
INSERT INTO src SELECT range FROM range(100);
DELETE FROM src WHERE id < 10;
CREATE TABLE cl CLONE src;
DROP TABLE src;
CREATE TABLE lt (id BIGINT, ts TIMESTAMP, d DATE, amount DECIMAL(10,2), tz TIMESTAMPTZ, s VARCHAR) PARTITIONED BY (day(ts), d, amount, hour(tz), truncate(2, s)) WITH ('write.delete.mode' = 'merge-on-read');
INSERT INTO lt SELECT i, TIMESTAMP '2026-01-01' + i * INTERVAL '7 hour', DATE '2026-01-01' + (i % 5)::INT, (i % 3) * 1.25, TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL '1 hour', 'k' || (i % 4) FROM range(40) r(i);
DELETE FROM lt WHERE id % 6 = 0`)
	queries := []string{
		"SELECT count(*), sum(id), count(*) FILTER (WHERE v = 'u'), count(*) FILTER (WHERE v = 'new') FROM cow",
		"SELECT count(*), sum(id), count(*) FILTER (WHERE v = 'u') FROM mor",
		"SELECT count(*), sum(id) FROM dv",
		"SELECT count(*), sum(id) FROM dv.branch_b",
		"SELECT * FROM vw",
		"SELECT count(*) FROM mor$metadata_log_entries",
		"SELECT count(*) FROM cow$snapshots",
		// a clone whose source was dropped: its manifests and files stay in
		// the source's directory
		"SELECT count(*), sum(id) FROM cl",
		// partition values of every logical type go through the Avro round trip
		"SELECT count(*), sum(id), sum(amount), min(ts), max(d), min(tz), max(s) FROM lt",
		"SELECT count(*) FROM lt WHERE ts >= TIMESTAMP '2026-01-05' AND d = DATE '2026-01-03' AND amount = 1.25",
	}
	want := map[string][]string{}
	for _, q := range queries {
		want[q] = query(t, s, q)
	}
	if err := lk.Close(); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(base, "copy")
	if err := os.CopyFS(cp, os.DirFS(orig)); err != nil {
		t.Fatal(err)
	}
	// the original is gone: a path left pointing into it fails to read
	if err := os.Rename(orig, filepath.Join(base, "gone")); err != nil {
		t.Fatal(err)
	}
	lk2, err := lake.Open(ctx, cp)
	if err != nil {
		t.Fatal(err)
	}
	defer lk2.Close()
	res, err := lk2.Relocate(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.From != orig || res.Tables != 5 || res.Views != 1 || res.DeleteFiles == 0 || res.Manifests == 0 {
		t.Errorf("relocate: %+v", res)
	}
	s2 := lk2.Session()
	for _, q := range queries {
		if got := query(t, s2, q); strings.Join(got, ",") != strings.Join(want[q], ",") {
			t.Errorf("%s: the copy reads %v, the original read %v", q, got, want[q])
		}
	}
	// the copy takes writes, in both modes and on the branch
	mustExec(t, s2, "DELETE FROM mor WHERE id < 20; UPDATE cow SET v = 'x' WHERE id = 1; DELETE FROM dv.branch_b WHERE id = 51")
	if got := query(t, s2, "SELECT (SELECT count(*) FROM mor), (SELECT v FROM cow WHERE id = 1), (SELECT count(*) FROM dv.branch_b)"); got[0] != "154|x|128" {
		t.Errorf("after writes to the copy: %v", got)
	}
	// relocated already: nothing to do
	res, err = lk2.Relocate(ctx, "")
	if err != nil || res.From != "" {
		t.Errorf("relocating again: %+v, %v", res, err)
	}
}

// TestRelocateStopsOnAPartialCopy: a copy missing a table's files is
// refused by name, and its pointers stay where they were.
func TestRelocateStopsOnAPartialCopy(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	orig := filepath.Join(base, "orig")
	lk, err := lake.Open(ctx, orig)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, lk.Session(), "CREATE TABLE a (id INT); INSERT INTO a VALUES (1); CREATE TABLE b (id INT); INSERT INTO b VALUES (2)")
	if err := lk.Close(); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(base, "copy")
	if err := os.CopyFS(cp, os.DirFS(orig)); err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(cp, "main", "b-*"))
	if len(dirs) != 1 {
		t.Fatalf("table b's directory: %v", dirs)
	}
	if err := os.RemoveAll(dirs[0]); err != nil {
		t.Fatal(err)
	}
	lk2, err := lake.Open(ctx, cp)
	if err != nil {
		t.Fatal(err)
	}
	defer lk2.Close()
	if _, err := lk2.Relocate(ctx, ""); err == nil || !strings.Contains(err.Error(), "was the lake copied whole?") {
		t.Fatalf("relocating a partial copy: %v", err)
	}
	if _, err := lk2.Table(ctx, "a"); err == nil || !strings.Contains(err.Error(), "copied or moved") {
		t.Errorf("table a after the refused relocation: %v, want it still refused", err)
	}
}
