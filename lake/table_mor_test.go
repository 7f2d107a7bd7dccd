package lake_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/lake"
)

var idSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)

func idReader(ids ...int64) array.RecordReader {
	b := array.NewRecordBuilder(memory.DefaultAllocator, idSchema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(idSchema, []arrow.RecordBatch{rec})
	if err != nil {
		panic(err)
	}
	return rdr
}

// rowsByID scans the table into id -> status.
func rowsByID(t *testing.T, tbl *lake.Table) map[int64]string {
	t.Helper()
	rdr, err := tbl.Scan(context.Background(), lake.Columns("id", "status"))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	out := map[int64]string{}
	for rdr.Next() {
		rec := rdr.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		st := rec.Column(1).(*array.String)
		for i := 0; i < ids.Len(); i++ {
			if _, dup := out[ids.Value(i)]; dup {
				t.Fatalf("id %d appears twice", ids.Value(i))
			}
			out[ids.Value(i)] = st.Value(i)
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// withDataFilesAway hides every existing Parquet file under dir while fn
// runs: a write that opened any of them would fail.
func withDataFilesAway(t *testing.T, dir string, fn func()) {
	t.Helper()
	files := dataFiles(t, dir)
	for _, f := range files {
		if err := os.Rename(f, f+".away"); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, f := range files {
			if err := os.Rename(f+".away", f); err != nil {
				t.Fatal(err)
			}
		}
	}()
	fn()
}

// upsertBatch builds rows with the given ids and status "upserted".
func upsertBatch(ids []int64) array.RecordReader {
	rec := eventsBatch(0, int64(len(ids)))
	defer rec.Release()
	b := array.NewRecordBuilder(memory.DefaultAllocator, eventsSchema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	for range ids {
		b.Field(1).(*array.StringBuilder).Append("upserted")
	}
	b.Field(2).(*array.Float64Builder).AppendValues(rec.Column(2).(*array.Float64).Float64Values(), nil)
	b.Field(3).(*array.TimestampBuilder).AppendValues(rec.Column(3).(*array.Timestamp).TimestampValues(), nil)
	out := b.NewRecordBatch()
	defer out.Release()
	rdr, _ := array.NewRecordReader(eventsSchema, []arrow.RecordBatch{out})
	return rdr
}

func TestUpsertReadsNoDataFileAndCommitsOneSnapshot(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	tbl := mustCreate(t, lk, "ev")
	for lo := int64(0); lo < 1000; lo += 250 {
		tbl = mustAppend(t, tbl, lo, lo+250)
	}
	before := tbl
	nHist := len(history(t, tbl))

	ids := []int64{10, 11, 500, 999, 5000, 5001}
	var err error
	withDataFilesAway(t, dir, func() {
		rdr := upsertBatch(ids)
		defer rdr.Release()
		tbl, err = tbl.Upsert(ctx, []string{"id"}, rdr)
	})
	if err != nil {
		t.Fatalf("upsert: %v", err)
	}
	if got := len(history(t, tbl)); got != nHist+1 {
		t.Fatalf("upsert made %d snapshots, want 1", got-nHist)
	}
	got := rowsByID(t, tbl)
	if len(got) != 1002 {
		t.Fatalf("rows after upsert = %d, want 1002", len(got))
	}
	for _, id := range ids {
		if got[id] != "upserted" {
			t.Errorf("id %d: status %q, want upserted", id, got[id])
		}
	}
	if got[12] != "new" {
		t.Errorf("id 12 untouched: status %q, want new", got[12])
	}
	files, err := tbl.PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	withDeletes := 0
	for _, f := range files {
		withDeletes += min(f.DeleteFiles, 1)
	}
	if withDeletes != 4 {
		t.Errorf("%d of %d data files carry deletes, want the 4 old ones", withDeletes, len(files))
	}
	// Time travel reads the snapshot before the upsert as it was.
	old := rowsByID(t, before)
	if len(old) != 1000 || old[10] != "shipped" {
		t.Errorf("snapshot before upsert: %d rows, id 10 %q; want 1000 rows, shipped", len(old), old[10])
	}
	// A second upsert of the same keys replaces the first one's rows.
	rdr := upsertBatch([]int64{10, 5000})
	defer rdr.Release()
	tbl, err = tbl.Upsert(ctx, []string{"id"}, rdr)
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsByID(t, tbl); len(got) != 1002 || got[10] != "upserted" {
		t.Errorf("after second upsert: %d rows, id 10 %q", len(got), got[10])
	}
}

func TestDeleteEqualityAndAppendInOneSnapshot(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	tbl := mustCreate(t, lk, "ev")
	tbl = mustAppend(t, tbl, 0, 100)
	nHist := len(history(t, tbl))

	keys := idReader(1, 2, 3, 50)
	defer keys.Release()
	more := eventsReader(100, 110, 100)
	defer more.Release()
	var err error
	withDataFilesAway(t, dir, func() {
		tbl, err = tbl.NewRowDelta().DeleteEquality([]string{"id"}, keys).Append(more).Commit(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(history(t, tbl)); got != nHist+1 {
		t.Fatalf("row delta made %d snapshots, want 1", got-nHist)
	}
	got := rowsByID(t, tbl)
	if len(got) != 106 {
		t.Fatalf("rows = %d, want 106", len(got))
	}
	for _, id := range []int64{1, 2, 3, 50} {
		if _, ok := got[id]; ok {
			t.Errorf("id %d survived its equality delete", id)
		}
	}
	if _, ok := got[105]; !ok {
		t.Errorf("appended id 105 is missing")
	}

	// DeleteEquality alone; a key that matches nothing is harmless.
	keys2 := idReader(0, 424242)
	defer keys2.Release()
	tbl, err = tbl.DeleteEquality(ctx, []string{"id"}, keys2)
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsByID(t, tbl); len(got) != 105 {
		t.Fatalf("rows = %d, want 105", len(got))
	}
	// No keys: nothing to commit, no new snapshot.
	empty := idReader()
	defer empty.Release()
	n := len(history(t, tbl))
	tbl, err = tbl.DeleteEquality(ctx, []string{"id"}, empty)
	if err != nil || len(history(t, tbl)) != n {
		t.Fatalf("empty delete: err %v, %d new snapshots", err, len(history(t, tbl))-n)
	}
}

func TestMergeOnReadWriteErrors(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	tbl := mustCreate(t, lk, "ev")
	tbl = mustAppend(t, tbl, 0, 10)

	amountSchema := arrow.NewSchema([]arrow.Field{{Name: "amount", Type: arrow.PrimitiveTypes.Float64}}, nil)
	amountRdr, _ := array.NewRecordReader(amountSchema, nil)
	defer amountRdr.Release()

	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"float key", func() error {
			_, err := tbl.DeleteEquality(ctx, []string{"amount"}, amountRdr)
			return err
		}, `key column "amount" is double: Iceberg cannot use floating-point columns as equality-delete keys; use an integer, string, date or timestamp key`},
		{"unknown key", func() error {
			k := idReader(1)
			defer k.Release()
			_, err := tbl.DeleteEquality(ctx, []string{"nope"}, k)
			return err
		}, `delete from main.ev: key column "nope" is not in the table; the table's columns are id, status, amount, ts`},
		{"no keys", func() error {
			k := idReader(1)
			defer k.Release()
			_, err := tbl.DeleteEquality(ctx, nil, k)
			return err
		}, `no key columns given; name the columns that identify a row`},
		{"key twice", func() error {
			k := idReader(1)
			defer k.Release()
			_, err := tbl.DeleteEquality(ctx, []string{"id", "id"}, k)
			return err
		}, `key column "id" is named twice`},
		{"key missing from input", func() error {
			_, err := tbl.DeleteEquality(ctx, []string{"id"}, amountRdr)
			return err
		}, `key column "id" is missing from the input records`},
		{"duplicate upsert key", func() error {
			r := upsertBatch([]int64{1, 2, 1})
			defer r.Release()
			_, err := tbl.Upsert(ctx, []string{"id"}, r)
			return err
		}, `upsert into main.ev: key (id=1) appears more than once in the records; de-duplicate them first`},
		{"upsert float key", func() error {
			r := upsertBatch([]int64{1})
			defer r.Release()
			_, err := tbl.Upsert(ctx, []string{"amount"}, r)
			return err
		}, `Iceberg cannot use floating-point columns as equality-delete keys`},
		{"empty delta", func() error {
			_, err := tbl.NewRowDelta().Commit(ctx)
			return err
		}, `the row delta is empty; add DeleteEquality or Append steps before Commit`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
			if !errors.Is(err, lake.ErrInvalidArgument) {
				t.Errorf("err = %v, want ErrInvalidArgument", err)
			}
		})
	}
	// Nothing was committed by the refused writes.
	cur, err := tbl.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snapIDs(t, cur), snapIDs(t, tbl)) {
		t.Errorf("refused writes committed snapshots")
	}
}

func snapIDs(t testing.TB, tbl *lake.Table) []int64 {
	var out []int64
	for _, s := range history(t, tbl) {
		out = append(out, s.ID)
	}
	return out
}

// On a partitioned table the deletes are routed by partition, so the keys
// must carry the partition column; upsert records always do.
func TestUpsertPartitioned(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	tbl := mustCreate(t, lk, "ev", lake.PartitionBy("status"))
	tbl = mustAppend(t, tbl, 0, 400)
	// The upserted rows move to partition "upserted"; deletes go to the
	// records' partition, so rows whose status changes must be deleted
	// through their old partition: give the keys with the old status.
	keys := eventsReader(10, 14, 100) // ids 10..13, statuses as stored
	defer keys.Release()
	more := upsertBatch([]int64{10, 11, 12, 13})
	defer more.Release()
	var err error
	withDataFilesAway(t, dir, func() {
		tbl, err = tbl.NewRowDelta().DeleteEquality([]string{"id"}, keys).Append(more).Commit(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	got := rowsByID(t, tbl)
	if len(got) != 400 || got[10] != "upserted" || got[13] != "upserted" || got[14] != "shipped" {
		t.Fatalf("rows %d, id 10 %q, id 13 %q, id 14 %q", len(got), got[10], got[13], got[14])
	}
	up := upsertBatch([]int64{20})
	defer up.Release()
	_, err = tbl.Upsert(ctx, []string{"id"}, up)
	wantUp := `upsert into main.ev: the table is partitioned by "status", which is not a key column; an equality delete reaches only rows of its own partition, so a row whose "status" changed would survive; add "status" to the key columns, or use MERGE`
	if err == nil || err.Error() != wantUp || !errors.Is(err, lake.ErrInvalidArgument) {
		t.Fatalf("err = %v, want %q", err, wantUp)
	}
	// With the partition column in the key, an upsert is exact.
	up2 := eventsReader(20, 22, 100) // ids 20, 21 with their stored status
	defer up2.Release()
	if tbl, err = tbl.Upsert(ctx, []string{"id", "status"}, up2); err != nil {
		t.Fatal(err)
	}
	if got := rowsByID(t, tbl); len(got) != 400 || got[20] != "new" {
		t.Fatalf("after upsert keyed on (id, status): %d rows, id 20 %q", len(got), got[20])
	}
	k := idReader(1)
	defer k.Release()
	_, err = tbl.DeleteEquality(ctx, []string{"id"}, k)
	want := `delete from main.ev: the table is partitioned by "status", so the input records must include that column too`
	if err == nil || err.Error() != want || !errors.Is(err, lake.ErrInvalidArgument) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// A row delta that loses a commit race keeps nothing it wrote.
func TestUpsertConflictLeavesNoFiles(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	tbl := mustCreate(t, lk, "ev")
	tbl = mustAppend(t, tbl, 0, 100)
	stale := tbl
	mustAppend(t, tbl, 100, 200)
	before := allFiles(t, dir)

	up := upsertBatch([]int64{1, 2})
	defer up.Release()
	_, err := stale.Upsert(ctx, []string{"id"}, up, lake.AssertSnapshot())
	if err == nil || !errors.Is(err, lake.ErrCommitConflict) || !strings.Contains(err.Error(), "upsert into main.ev") {
		t.Fatalf("err = %v, want a commit conflict", err)
	}
	for f := range allFiles(t, dir) {
		if !before[f] && !strings.HasSuffix(f, ".lock") {
			t.Errorf("the failed upsert left %s behind", f)
		}
	}
}

// An upsert of more rows than one writer takes writes them as one data
// file per writer, in parallel, and the table holds every row once.
func TestUpsertSplitsItsRows(t *testing.T) {
	defer lake.SetRowsPerDataWriter(1000)()
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id BIGINT, v VARCHAR); INSERT INTO t SELECT i, 'old' FROM range(0, 10000) r(i)")
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	var batches []arrow.RecordBatch
	for from := int64(5000); from < 11000; from += 700 { // cuts fall inside batches
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for id := from; id < min(from+700, 11000); id++ {
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.StringBuilder).Append("new")
		}
		batches = append(batches, b.NewRecordBatch())
		b.Release()
	}
	rdr, err := array.NewRecordReader(schema, batches)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	for _, b := range batches {
		b.Release()
	}
	tbl, err := lk.Table(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Upsert(context.Background(), []string{"id"}, rdr); err != nil {
		t.Fatal(err)
	}
	writers := min(runtime.GOMAXPROCS(0), 4, 6)
	if got := query(t, s, "SELECT count(*) FROM t$data_files"); len(got) != 1 || got[0] != strconv.Itoa(1+writers) {
		t.Errorf("data files %v, want the insert's one plus %d written by the upsert", got, writers)
	}
	got := query(t, s, "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE v = 'new'), sum(id) FROM t")
	if want := "11000|11000|6000|60494500"; len(got) != 1 || got[0] != want {
		t.Errorf("after the upsert: %v, want %s", got, want)
	}
}

// An upsert whose records repeat a key is refused. The keys are checked
// beside the writes of its files (lake/table_mor.go), which the refusal
// stops and whose files the failed commit removes: nothing is committed
// and no file is left, however far the writes got.
func TestUpsertDuplicateKeyLeavesNothing(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	tbl := mustCreate(t, lk, "ev")
	tbl = mustAppend(t, tbl, 0, 1000)
	before := allFiles(t, dir)
	snaps := snapIDs(t, tbl)
	rows := rowsByID(t, tbl)
	for _, n := range []int{3, 300_000} {
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = int64(i)
		}
		ids[n-1] = 1 // the last row repeats the second's key
		r := upsertBatch(ids)
		_, err := tbl.Upsert(ctx, []string{"id"}, r)
		r.Release()
		if err == nil || !strings.Contains(err.Error(), "upsert into main.ev: key (id=1) appears more than once in the records") {
			t.Fatalf("%d rows: err = %v, want the repeated key", n, err)
		}
		if !errors.Is(err, lake.ErrInvalidArgument) {
			t.Errorf("%d rows: err = %v, want ErrInvalidArgument", n, err)
		}
		for f := range allFiles(t, dir) {
			if !before[f] && !strings.HasSuffix(f, ".lock") {
				t.Errorf("%d rows: the refused upsert left %s behind", n, f)
			}
		}
		cur, err := tbl.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(snapIDs(t, cur), snaps) {
			t.Errorf("%d rows: the refused upsert committed a snapshot", n)
		}
		if got := rowsByID(t, cur); !maps.Equal(got, rows) {
			t.Errorf("%d rows: the table changed: %d rows, had %d", n, len(got), len(rows))
		}
	}
}
