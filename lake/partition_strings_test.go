package lake_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
)

// Every write into a table partitioned by a string column records each
// data file's partition as its rows have it. iceberg-go's partitioned
// writer keeps views of the first row's string values, and the rows read
// from the lake sit in recycled read buffers (freed buffers are poisoned
// under go test): a CREATE TABLE … AS SELECT once recorded partitions
// ('w2') and ('\xa5\xa5') for rows of 'bb' and 'cc', which a query
// filtering on part then pruned away.
func TestStringPartitionValuesSurviveRecycledBuffers(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE c (id BIGINT, v VARCHAR, part VARCHAR);
		INSERT INTO c SELECT i, 'v' || i, CASE i % 3 WHEN 0 THEN 'aa' WHEN 1 THEN 'bb' ELSE 'cc' END FROM range(200000) r(i);
		INSERT INTO c SELECT i, 'w' || i, CASE i % 3 WHEN 0 THEN 'aa' WHEN 1 THEN 'bb' ELSE 'cc' END FROM range(200000, 400000) r(i)`)
	check := func(table, step string, parts ...string) {
		t.Helper()
		got := query(t, s, fmt.Sprintf("SELECT DISTINCT CAST(partition AS VARCHAR) FROM %s$files WHERE content = 0 ORDER BY 1", table))
		if !slices.Equal(got, parts) {
			t.Fatalf("%s: %s's data files are in partitions %q, want %q", step, table, got, parts)
		}
		for _, p := range []string{"aa", "bb", "cc"} {
			// the second count reads every file: part || '' prunes nothing
			got := query(t, s, fmt.Sprintf("SELECT (SELECT count(*) FROM %[1]s WHERE part = '%[2]s'), (SELECT count(*) FROM %[1]s WHERE part || '' = '%[2]s')", table, p))
			if want := []string{"133333|133333"}; p == "aa" && !slices.Equal(got, []string{"133334|133334"}) || p != "aa" && !slices.Equal(got, want) {
				t.Fatalf("%s: rows of %s's partition %s found pruned and unpruned: %v", step, table, p, got)
			}
		}
	}
	identity := []string{"(aa)", "(bb)", "(cc)"}
	mustExec(t, s, "CREATE TABLE p PARTITIONED BY (part) AS SELECT * FROM c")
	check("p", "CREATE TABLE AS", identity...)
	mustExec(t, s, "CREATE TABLE q (id BIGINT, v VARCHAR, part VARCHAR) PARTITIONED BY (truncate(1, part)); INSERT INTO q SELECT * FROM c")
	check("q", "INSERT SELECT, truncate(1, part)", "(a)", "(b)", "(c)")
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		name := map[string]string{"copy-on-write": "cow", "merge-on-read": "mor"}[mode]
		mustExec(t, s, fmt.Sprintf(`CREATE TABLE %[1]s (id BIGINT, v VARCHAR, part VARCHAR) PARTITIONED BY (part)
			WITH ('write.update.mode' = '%[2]s', 'write.delete.mode' = '%[2]s', 'write.merge.mode' = '%[2]s');
			INSERT INTO %[1]s SELECT * FROM c`, name, mode))
		mustExec(t, s, fmt.Sprintf("UPDATE %s SET v = 'u' WHERE id %% 1000 = 0", name))
		check(name, mode+" UPDATE", identity...)
		mustExec(t, s, fmt.Sprintf("MERGE INTO %[1]s USING (SELECT i AS id FROM range(0, 400000, 7) r(i)) s ON %[1]s.id = s.id WHEN MATCHED THEN UPDATE SET v = 'm'", name))
		check(name, mode+" MERGE", identity...)
		mustExec(t, s, fmt.Sprintf("ALTER TABLE %s EXECUTE compact", name))
		check(name, mode+" compaction", identity...)
	}
}

// Compaction finds a data file whose partition tuple disagrees with its
// rows (as the bug above recorded them) and rewrites it, whatever its
// size, after which a query filtering on the partition sees its rows
// again; a second compaction has nothing to do.
func TestCompactionRewritesMislabeledFiles(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE r (id BIGINT, part VARCHAR) PARTITIONED BY (part) WITH ('format-version' = '2');
		INSERT INTO r SELECT i, CASE WHEN i < 500 THEN 'aa' ELSE 'bb-with-a-name-past-16-characters' END FROM range(1000) r(i)`)
	tbl, err := lk.Table(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	spec := tbl.Iceberg().Metadata().PartitionSpec()
	fid := spec.Field(0).FieldID
	sc := tbl.Iceberg().Scan()
	tasks, err := sc.PlanFiles(ctx)
	sc.Close()
	if err != nil {
		t.Fatal(err)
	}
	var orig iceberg.DataFile
	for _, task := range tasks {
		if task.File.Partition()[fid] == "bb-with-a-name-past-16-characters" {
			orig = task.File
		}
	}
	if orig == nil {
		t.Fatal("no file of partition bb")
	}
	// the same rows under another name, relabelled as the bug did
	data, err := os.ReadFile(orig.FilePath())
	if err != nil {
		t.Fatal(err)
	}
	relabelled := filepath.Join(filepath.Dir(orig.FilePath()), "relabelled.parquet")
	if err := os.WriteFile(relabelled, data, 0o644); err != nil {
		t.Fatal(err)
	}
	bld, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, relabelled, iceberg.ParquetFile, map[int]any{fid: "\xa5\xa5"}, nil, nil, orig.Count(), orig.FileSizeBytes())
	if err != nil {
		t.Fatal(err)
	}
	df := bld.ValueCounts(orig.ValueCounts()).NullValueCounts(orig.NullValueCounts()).ColumnSizes(orig.ColumnSizes()).
		LowerBoundValues(orig.LowerBoundValues()).UpperBoundValues(orig.UpperBoundValues()).SplitOffsets(orig.SplitOffsets()).Build()
	txn := tbl.Iceberg().NewTransaction()
	if err := txn.ReplaceDataFilesWithDataFiles(ctx, []iceberg.DataFile{orig}, []iceberg.DataFile{df}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	counts := "SELECT (SELECT count(*) FROM r WHERE part = 'bb-with-a-name-past-16-characters'), (SELECT count(*) FROM r WHERE part || '' = 'bb-with-a-name-past-16-characters')"
	if got := query(t, s, counts); !slices.Equal(got, []string{"0|500"}) {
		t.Fatalf("the relabelled file: pruned and unpruned counts %v, want 0|500 (the damage)", got)
	}
	got := query(t, s, "ALTER TABLE r EXECUTE compact")
	if len(got) != 1 || !strings.Contains(got[0], "1 of the data files had a partition tuple their rows disagree with") {
		t.Fatalf("compaction: %v", got)
	}
	if got := query(t, s, counts); !slices.Equal(got, []string{"500|500"}) {
		t.Fatalf("after compaction: pruned and unpruned counts %v, want 500|500", got)
	}
	if got := query(t, s, "SELECT CAST(partition AS VARCHAR) FROM r$files ORDER BY 1"); !slices.Equal(got, []string{"(aa)", "(bb-with-a-name-past-16-characters)"}) {
		t.Fatalf("partitions after compaction: %v", got)
	}
	if got := query(t, s, "ALTER TABLE r EXECUTE compact"); len(got) != 1 || strings.Contains(got[0], "partition tuple") || !strings.HasPrefix(got[0], "rewrote 0 ") {
		t.Fatalf("a second compaction: %v", got)
	}
}
