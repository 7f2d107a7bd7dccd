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
