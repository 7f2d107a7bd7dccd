package exec_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/lake"
)

// The scan applies position and equality deletes itself (scan/deletes.go);
// iceberg-go's own application is the oracle. Each case builds a table
// whose planned files carry deletes of the kinds it names, then compares
// the two on several projections and with a pushed filter.
func TestTableScanDeletesMatchIceberg(t *testing.T) {
	cases := []struct {
		name  string
		build func(t *testing.T, ctx context.Context, lk *lake.Lake) *lake.Table
		want  deleteKinds
	}{
		{"position deletes", func(t *testing.T, ctx context.Context, lk *lake.Lake) *lake.Table {
			exec1(t, ctx, lk, "CREATE TABLE t (id BIGINT, v VARCHAR, n INT) WITH ('write.merge.mode' = 'merge-on-read')")
			insertFiles(t, ctx, lk, 4, 500)
			for r := 0; r < 3; r++ {
				mergeRound(t, ctx, lk, r)
			}
			return table1(t, ctx, lk)
		}, deleteKinds{pos: true}},
		{"equality deletes", func(t *testing.T, ctx context.Context, lk *lake.Lake) *lake.Table {
			exec1(t, ctx, lk, "CREATE TABLE t (id BIGINT, v VARCHAR, n INT)")
			insertFiles(t, ctx, lk, 4, 500)
			tbl := table1(t, ctx, lk)
			for r := 0; r < 3; r++ {
				tbl = upsertRound(t, ctx, tbl, r)
			}
			// string keys, a composite key and a NULL key
			tbl = deleteEq(t, ctx, tbl, []string{"v"}, [][]any{{"v-7"}, {"v-1500"}, {nil}})
			tbl = deleteEq(t, ctx, tbl, []string{"id", "v"}, [][]any{{int64(11), "v-11"}, {int64(12), "no such v"}, {int64(1900), "v-1900"}})
			tbl = deleteEq(t, ctx, tbl, []string{"n"}, [][]any{{int32(3)}, {nil}})
			return tbl
		}, deleteKinds{eq: true}},
		{"both", func(t *testing.T, ctx context.Context, lk *lake.Lake) *lake.Table {
			exec1(t, ctx, lk, "CREATE TABLE t (id BIGINT, v VARCHAR, n INT) WITH ('write.merge.mode' = 'merge-on-read')")
			insertFiles(t, ctx, lk, 4, 500)
			tbl := table1(t, ctx, lk)
			for r := 0; r < 3; r++ {
				mergeRound(t, ctx, lk, r)
				tbl = upsertRound(t, ctx, table1(t, ctx, lk), r+10)
			}
			return tbl
		}, deleteKinds{pos: true, eq: true}},
		{"partitioned", func(t *testing.T, ctx context.Context, lk *lake.Lake) *lake.Table {
			exec1(t, ctx, lk, "CREATE TABLE t (id BIGINT, v VARCHAR, n INT) PARTITIONED BY (n) WITH ('write.merge.mode' = 'merge-on-read')")
			insertFiles(t, ctx, lk, 3, 400)
			mergeRound(t, ctx, lk, 0)
			tbl := deleteEq(t, ctx, table1(t, ctx, lk), []string{"id", "n"}, [][]any{{int64(5), int32(5)}, {int64(6), int32(0)}, {int64(1001), int32(1)}})
			deleteEq(t, ctx, tbl, []string{"v", "n"}, [][]any{{"v-100", int32(2)}, {"v-900", int32(4)}, {"v-800", nil}})
			mergeRound(t, ctx, lk, 1)
			return table1(t, ctx, lk)
		}, deleteKinds{pos: true, eq: true}},
		{"added column", func(t *testing.T, ctx context.Context, lk *lake.Lake) *lake.Table {
			exec1(t, ctx, lk, "CREATE TABLE t (id BIGINT, v VARCHAR, n INT) WITH ('write.merge.mode' = 'merge-on-read')")
			insertFiles(t, ctx, lk, 3, 400)
			mergeRound(t, ctx, lk, 0)
			exec1(t, ctx, lk, "ALTER TABLE t ADD COLUMN extra BIGINT")
			exec1(t, ctx, lk, "INSERT INTO t SELECT range, 'v-' || range, CAST(range % 7 AS INT), range * 2 FROM range(2000, 2300)")
			mergeRound(t, ctx, lk, 1)
			tbl := upsertRound(t, ctx, table1(t, ctx, lk), 2)
			// (iceberg-go refuses an equality delete on a column some data
			// file lacks, so the oracle cannot judge one on extra)
			return deleteEq(t, ctx, tbl, []string{"id"}, [][]any{{int64(2050)}, {int64(30)}})
		}, deleteKinds{pos: true, eq: true}},
		{"deletion vectors", func(t *testing.T, ctx context.Context, lk *lake.Lake) *lake.Table {
			exec1(t, ctx, lk, "CREATE TABLE t (id BIGINT, v VARCHAR, n INT) WITH ('write.merge.mode' = 'merge-on-read', 'format-version' = '3')")
			insertFiles(t, ctx, lk, 3, 400)
			mergeRound(t, ctx, lk, 0)
			// equality deletes, not an upsert: Upsert is refused on v3
			// (it would lose row lineage)
			deleteEq(t, ctx, table1(t, ctx, lk), []string{"id"}, [][]any{{int64(5)}, {int64(700)}, {int64(1101)}})
			mergeRound(t, ctx, lk, 2)
			return table1(t, ctx, lk)
		}, deleteKinds{dv: true, eq: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			lk, err := lake.Open(ctx, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer lk.Close()
			tbl := c.build(t, ctx, lk)
			if got := kindsOf(t, ctx, tbl.Iceberg()); got != c.want {
				t.Fatalf("setup: planned deletes %+v, want %+v", got, c.want)
			}
			var all []string
			for _, f := range tbl.Schema().Fields() {
				all = append(all, f.Name)
			}
			projections := [][]string{all, {"v"}, {"n", "id"}}
			if slices.Contains(all, "extra") {
				projections = append(projections, []string{"extra"}, []string{"extra", "v"})
			}
			for _, fields := range projections {
				want := icebergRows(t, ctx, tbl.Iceberg(), fields, iceberg.AlwaysTrue{})
				got := scanRows(t, ctx, tbl, fields, nil)
				if !slices.Equal(got, want) {
					t.Fatalf("%v: scan gives %d rows, iceberg-go %d\n%s", fields, len(got), len(want), firstDiff(got, want))
				}
				if len(want) >= 2000 || len(want) == 0 {
					t.Fatalf("%v: %d rows left; the deletes did nothing or everything", fields, len(want))
				}
			}
			// a pushed filter: the scan may return more (files with deletes
			// are read unfiltered), never fewer, and the same after the
			// planner's own filter
			filter := iceberg.GreaterThanEqual(iceberg.Reference("id"), int64(1000))
			want := icebergRows(t, ctx, tbl.Iceberg(), []string{"id", "v"}, filter)
			var got []string
			for _, r := range scanRows(t, ctx, tbl, []string{"id", "v"}, filter) {
				id, _ := strconv.ParseInt(strings.SplitN(r, "|", 2)[0], 10, 64)
				if id >= 1000 {
					got = append(got, r)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("id >= 1000: scan gives %d rows, iceberg-go %d\n%s", len(got), len(want), firstDiff(got, want))
			}
		})
	}
}

type deleteKinds struct{ pos, eq, dv bool }

func kindsOf(t *testing.T, ctx context.Context, tbl *table.Table) deleteKinds {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var k deleteKinds
	for _, task := range tasks {
		k.pos = k.pos || len(task.DeleteFiles) > 0
		k.eq = k.eq || len(task.EqualityDeleteFiles) > 0
		k.dv = k.dv || len(task.DeletionVectorFiles) > 0
	}
	return k
}

func exec1(t *testing.T, ctx context.Context, lk *lake.Lake, sql string) {
	t.Helper()
	if err := lk.Session().Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func table1(t *testing.T, ctx context.Context, lk *lake.Lake) *lake.Table {
	t.Helper()
	tbl, err := lk.Table(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// insertFiles writes files files of per rows: ids 0.., v = 'v-<id>', n =
// id % 7 (NULL for every 50th id).
func insertFiles(t *testing.T, ctx context.Context, lk *lake.Lake, files, per int) {
	t.Helper()
	for f := 0; f < files; f++ {
		exec1(t, ctx, lk, fmt.Sprintf("INSERT INTO t (id, v, n) SELECT range, 'v-' || range, CASE WHEN range %% 50 = 0 THEN NULL ELSE CAST(range %% 7 AS INT) END FROM range(%d, %d)", f*per, (f+1)*per))
	}
}

// mergeRound updates and deletes ids spread over every file (merge-on-read
// position deletes) and inserts a few.
func mergeRound(t *testing.T, ctx context.Context, lk *lake.Lake, r int) {
	t.Helper()
	exec1(t, ctx, lk, fmt.Sprintf(`MERGE INTO t USING (SELECT range AS id FROM range(0, 2600) WHERE range %% 13 = %d) s ON t.id = s.id
		WHEN MATCHED AND t.id %% 2 = 0 THEN DELETE
		WHEN MATCHED THEN UPDATE SET v = 'm%d-' || t.id
		WHEN NOT MATCHED THEN INSERT (id, v, n) VALUES (s.id, 'new', %d)`, r, r, r))
}

// upsertRound upserts ids spread over every file (equality deletes).
func upsertRound(t *testing.T, ctx context.Context, tbl *lake.Table, r int) *lake.Table {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for id := int64(r % 17); id < 2000; id += 17 {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("u%d-%d", r, id))
		b.Field(2).(*array.Int32Builder).Append(int32(id % 7))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	out, err := tbl.Upsert(ctx, []string{"id"}, rdr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// deleteEq writes one equality delete on cols with the given key rows.
func deleteEq(t *testing.T, ctx context.Context, tbl *lake.Table, cols []string, keys [][]any) *lake.Table {
	t.Helper()
	var fields []arrow.Field
	for _, c := range cols {
		idx := tbl.Schema().FieldIndices(c)
		if len(idx) == 0 {
			t.Fatalf("no column %q", c)
		}
		fields = append(fields, tbl.Schema().Field(idx[0]))
	}
	sc := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, k := range keys {
		for i, v := range k {
			switch x := v.(type) {
			case nil:
				b.Field(i).AppendNull()
			case int64:
				b.Field(i).(*array.Int64Builder).Append(x)
			case int32:
				b.Field(i).(*array.Int32Builder).Append(x)
			case string:
				b.Field(i).(*array.StringBuilder).Append(x)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	out, err := tbl.DeleteEquality(ctx, cols, rdr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// scanRows reads fields through exec.TableScan: one sorted "a|b|c" string
// per row.
func scanRows(t *testing.T, ctx context.Context, tbl *lake.Table, fields []string, filter iceberg.BooleanExpression) []string {
	t.Helper()
	var af []arrow.Field
	for _, f := range fields {
		af = append(af, tbl.Schema().Field(tbl.Schema().FieldIndices(f)[0]))
	}
	it := tbl.Iceberg()
	s, err := exec.NewTableScan("t", it, it.CurrentSnapshot(), fields, arrow.NewSchema(af, nil), filter)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for {
		b, err := s.Next(ctx)
		if err == exec.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rowStrings(b, fields)...)
		b.Release()
	}
	slices.Sort(rows)
	return rows
}

// icebergRows reads fields through iceberg-go, deletes applied by it.
func icebergRows(t *testing.T, ctx context.Context, tbl *table.Table, fields []string, filter iceberg.BooleanExpression) []string {
	t.Helper()
	sc := tbl.Scan(table.WithSelectedFields(fields...), table.WithRowFilter(filter))
	defer sc.Close()
	_, seq, err := sc.ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for b, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rowStrings(b, fields)...)
		b.Release()
	}
	slices.Sort(rows)
	return rows
}

func rowStrings(b arrow.RecordBatch, fields []string) []string {
	var cols []arrow.Array
	for _, f := range fields {
		cols = append(cols, b.Column(b.Schema().FieldIndices(f)[0]))
	}
	out := make([]string, b.NumRows())
	for r := range out {
		parts := make([]string, len(cols))
		for i, c := range cols {
			parts[i] = c.ValueStr(r)
		}
		out[r] = strings.Clone(strings.Join(parts, "|")) // b is released after
	}
	return out
}

func firstDiff(got, want []string) string {
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("first difference at %d: scan %q, iceberg-go %q", i, g, w)
		}
	}
	return ""
}
