package lake_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/lake"
)

// The Go API's writes into a table with a NOT NULL column, given records
// whose fields are nullable (as a SQL result's are), on every writer:
// unpartitioned (skade's direct writer) and partitioned (iceberg-go's).
// Records without a NULL there are written as they are; a NULL there
// fails the write with 23502, however many batches came before it, and
// leaves the table and its directory as they were. iceberg-go's writer
// used to refuse the first kind and to write the NULL of the second as an
// empty string.
func TestGoAPIWritesKeepNotNull(t *testing.T) {
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	// batch builds rows from..to; nullAt (when in range) has a NULL name
	batch := func(from, to, nullAt int64) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for i := from; i < to; i++ {
			b.Field(0).(*array.Int64Builder).Append(i)
			if i == nullAt {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("n%d", i))
			}
			b.Field(2).AppendNull()
		}
		return b.NewRecordBatch()
	}
	reader := func(bs ...arrow.RecordBatch) array.RecordReader {
		r, err := array.NewRecordReader(schema, bs)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			b.Release()
		}
		return r
	}
	for _, c := range []struct{ name, part string }{{"unpartitioned", ""}, {"bucket", "PARTITIONED BY (bucket(3, id))"}, {"identity", "PARTITIONED BY (id)"}} {
		part := c.part
		t.Run(c.name, func(t *testing.T) {
			lk, dir := openLake(t)
			s := lk.Session()
			mustExec(t, s, "CREATE TABLE a (id BIGINT, name VARCHAR NOT NULL, v DOUBLE) "+part)
			tbl, err := lk.Table(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			r := reader(batch(0, 50, -1), batch(50, 100, -1))
			tbl, err = tbl.Append(ctx, r)
			r.Release()
			if err != nil {
				t.Fatalf("append of nullable fields without a NULL: %v", err)
			}
			r = reader(batch(90, 120, -1))
			tbl, err = tbl.Upsert(ctx, []string{"id"}, r)
			r.Release()
			if err != nil {
				t.Fatalf("upsert of nullable fields without a NULL: %v", err)
			}
			want := query(t, s, "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE name = 'n' || id::VARCHAR) FROM a")
			if !slices.Equal(want, []string{"120|120|120"}) {
				t.Fatalf("after the writes: %v, want 120|120|120", want)
			}
			before, snaps := allFiles(t, dir), snapIDs(t, tbl)
			for _, w := range []struct {
				name  string
				write func(array.RecordReader) error
			}{
				{"append", func(r array.RecordReader) error { _, err := tbl.Append(ctx, r); return err }},
				{"upsert", func(r array.RecordReader) error { _, err := tbl.Upsert(ctx, []string{"id"}, r); return err }},
				{"overwrite", func(r array.RecordReader) error { _, err := tbl.Overwrite(ctx, r); return err }},
			} {
				// the NULL in the third batch, after two were read
				r := reader(batch(200, 300, -1), batch(300, 400, -1), batch(400, 500, 450))
				err := w.write(r)
				r.Release()
				var ce *lake.ConstraintError
				if err == nil || !errors.As(err, &ce) || lake.SQLState(err) != "23502" ||
					!strings.Contains(err.Error(), `null value in column "name" of relation "main.a" violates not-null constraint`) {
					t.Fatalf("%s with a NULL name: %v (%s), want the not-null violation", w.name, err, lake.SQLState(err))
				}
				for f := range allFiles(t, dir) {
					if !before[f] && !strings.HasSuffix(f, ".lock") {
						t.Errorf("%s: the refused write left %s", w.name, f)
					}
				}
				cur, err := tbl.Refresh(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(snapIDs(t, cur), snaps) {
					t.Errorf("%s: the refused write committed", w.name)
				}
				if got := query(t, s, "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE name = 'n' || id::VARCHAR) FROM a"); !slices.Equal(got, want) {
					t.Errorf("%s: the table changed: %v, had %v", w.name, got, want)
				}
			}
		})
	}
}

// The Go API's records in another layout than the table's: narrower
// types, other timestamp units, a large string, columns reordered or
// missing. Appended, upserted and deleted by key on tables partitioned by
// the columns concerned, they must give what SQL's INSERT of the same
// values gives a twin table: the same rows and the same partitions. An
// int32 key under a bucket transform used to panic in iceberg-go's writer,
// on a goroutine, which ended the process. Types that do not convert
// without loss are refused, naming the column.
func TestGoAPIWritesConformToTheTable(t *testing.T) {
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "v", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "d", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	}, nil) // no m: missing
	records := func(ids ...int32) array.RecordReader {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for _, id := range ids {
			b.Field(0).(*array.LargeStringBuilder).Append(fmt.Sprintf("v%d", id%4))
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_123_456_789 + int64(id)*86_400_000_000_000))
			b.Field(2).(*array.Int32Builder).Append(id)
			b.Field(3).(*array.Float32Builder).Append(float32(id) + 0.5)
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		r, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// the SQL rows of the same values (nanoseconds cut to microseconds)
	values := func(ids ...int32) string {
		var rows []string
		for _, id := range ids {
			rows = append(rows, fmt.Sprintf("(%d, 'v%d', TIMESTAMP '2023-11-14 22:13:20.123456' + INTERVAL '%d days', %g, NULL)", id, id%4, id, float32(id)+0.5))
		}
		return strings.Join(rows, ", ")
	}
	for _, c := range []struct {
		name, part string
		keys       []string
	}{
		{"unpartitioned", "", []string{"id"}},
		{"bucket", "PARTITIONED BY (bucket(4, id))", []string{"id"}},
		{"day", "PARTITIONED BY (day(ts), truncate(1, v))", []string{"id", "ts", "v"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lk := sqlLake(t)
			s := lk.Session()
			for _, n := range []string{"a", "b"} {
				mustExec(t, s, fmt.Sprintf("CREATE TABLE %s (id BIGINT, v VARCHAR, ts TIMESTAMP, d DOUBLE, m DECIMAL(10, 2)) %s", n, c.part))
			}
			tbl, err := lk.Table(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			r := records(1, 2, 3, 4, 5, 6)
			tbl, err = tbl.Append(ctx, r)
			r.Release()
			if err != nil {
				t.Fatalf("append: %v", err)
			}
			r = records(5, 6, 7)
			tbl, err = tbl.Upsert(ctx, c.keys, r)
			r.Release()
			if err != nil {
				t.Fatalf("upsert: %v", err)
			}
			k := records(2)
			_, err = tbl.DeleteEquality(ctx, c.keys, k)
			k.Release()
			if err != nil {
				t.Fatalf("delete by key: %v", err)
			}
			mustExec(t, s, "INSERT INTO b VALUES "+values(1, 3, 4, 5, 6, 7))
			qs := []string{"SELECT * FROM %s ORDER BY id"}
			// each row found through its partition's pruning
			for id := 1; id <= 7; id++ {
				qs = append(qs, fmt.Sprintf("SELECT id FROM %%s WHERE id = %d", id),
					fmt.Sprintf("SELECT id FROM %%s WHERE ts >= TIMESTAMP '2023-11-14' + INTERVAL '%d days' AND ts < TIMESTAMP '2023-11-15' + INTERVAL '%d days' AND v LIKE 'v%%%%'", id, id))
			}
			check := func(qs []string) {
				for _, q := range qs {
					got, want := query(t, s, fmt.Sprintf(q, "a")), query(t, s, fmt.Sprintf(q, "b"))
					if !slices.Equal(got, want) {
						t.Errorf("%s: the Go API's writes give %v, SQL's %v", q, got, want)
					}
				}
			}
			check(qs)
			if c.part != "" {
				// the partitions of the live rows, once the deletes are
				// folded in
				mustExec(t, s, "ALTER TABLE a EXECUTE compact")
				check([]string{"SELECT partition, record_count FROM %s$partitions ORDER BY 1"})
			}
		})
	}
}

// Records that do not convert to the table without loss are refused,
// naming the column, and nothing is written.
func TestGoAPIWritesRefuseLossyTypes(t *testing.T) {
	ctx := context.Background()
	lk, dir := openLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE a (id BIGINT, ts TIMESTAMP, m DECIMAL(10, 2)) PARTITIONED BY (bucket(2, id))")
	tbl, err := lk.Table(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	before := allFiles(t, dir)
	one := func(fields []arrow.Field, fill func(b *array.RecordBuilder)) array.RecordReader {
		sc := arrow.NewSchema(fields, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		fill(b)
		rec := b.NewRecordBatch()
		defer rec.Release()
		r, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	id := arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	for _, c := range []struct {
		name string
		r    array.RecordReader
		want string
	}{
		{"an instant into a local timestamp", one([]arrow.Field{id, {Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true}}, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int64Builder).Append(1)
			b.Field(1).(*array.TimestampBuilder).Append(1)
		}), `column "ts" is timestamp[us, tz=UTC] in the records, which does not convert to the table's timestamp without loss`},
		{"a decimal of another scale", one([]arrow.Field{id, {Name: "m", Type: &arrow.Decimal128Type{Precision: 10, Scale: 3}, Nullable: true}}, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int64Builder).Append(1)
			b.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(1234))
		}), `column "m" is decimal(10, 3) in the records, which does not convert to the table's decimal(10, 2) without loss`},
		{"a column twice", one([]arrow.Field{id, id}, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int64Builder).Append(1)
			b.Field(1).(*array.Int64Builder).Append(2)
		}), `column "id" appears twice in the records`},
		{"an unsigned value past BIGINT", one([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Uint64, Nullable: true}}, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Uint64Builder).Append(1 << 63)
		}), `column "id": uint64 to int64:`},
	} {
		_, err := tbl.Append(ctx, c.r)
		c.r.Release()
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, lake.ErrInvalidArgument) {
			t.Errorf("%s: %v, want %q (ErrInvalidArgument)", c.name, err, c.want)
		}
	}
	for f := range allFiles(t, dir) {
		if !before[f] && !strings.HasSuffix(f, ".lock") {
			t.Errorf("a refused write left %s", f)
		}
	}
	if got := query(t, s, "SELECT count(*) FROM a"); !slices.Equal(got, []string{"0"}) {
		t.Errorf("rows %v, want none", got)
	}
}

// A table created from an Arrow schema of types Iceberg lacks takes the
// types SQL computes them as, and the same records append to it with
// every value kept: a UINTEGER past 2^31 (iceberg-go made the column an
// int), a UBIGINT past 2^63 (numeric(20)), a dictionary, a time in
// milliseconds, a date64, a timestamp in a named zone and a float16
// (refused by iceberg-go before).
func TestGoAPICreateFromArrowTypes(t *testing.T) {
	ctx := context.Background()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "cat", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "t", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Berlin"}, Nullable: true},
		{Name: "h", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
	}, nil)
	lk := sqlLake(t)
	tbl, err := lk.CreateTable(ctx, "a", sc, lake.PartitionBy("bucket(2, id)"))
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(1)
	b.Field(1).(*array.Uint32Builder).Append(1<<32 - 1)
	b.Field(2).(*array.Uint64Builder).Append(1<<64 - 1)
	if err := b.Field(3).(*array.BinaryDictionaryBuilder).AppendString("red"); err != nil {
		t.Fatal(err)
	}
	b.Field(4).(*array.Time32Builder).Append(arrow.Time32(3_723_004)) // 01:02:03.004
	b.Field(5).(*array.Date64Builder).Append(arrow.Date64(19_723 * 86_400_000))
	b.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_001))
	b.Field(7).(*array.Float16Builder).Append(float16.New(-2.5))
	rec := b.NewRecordBatch()
	defer rec.Release()
	r, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if _, err := tbl.Append(ctx, r); err != nil {
		t.Fatal(err)
	}
	s := lk.Session()
	wantTypes := []string{"id|bigint|YES", "u32|bigint|YES", "u64|numeric(20,0)|YES", "cat|text|YES", "t|time|YES", "d|date|YES", "ts|timestamp with time zone|YES", "h|real|YES"}
	if got := query(t, s, "DESCRIBE a"); !slices.Equal(got, wantTypes) {
		t.Errorf("columns %v, want %v", got, wantTypes)
	}
	want := "1|4294967295|18446744073709551615|red|01:02:03.004000|2024-01-01|2023-11-14T22:13:20.000001Z|-2.5"
	if got := query(t, s, "SELECT * FROM a"); !slices.Equal(got, []string{want}) {
		t.Errorf("rows %v, want %s", got, want)
	}
}
