package lake_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/plan"
)

// After ALTER TABLE moves the schema (without a new snapshot), a handle on
// the current snapshot writes and reads the new schema, while a handle on
// the older snapshot still reads the old one.
func TestAppendAfterAddColumn(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	old := mustAppend(t, mustCreate(t, lk, "events"), 0, 10)
	if _, err := lk.Session().SQL(ctx, "ALTER TABLE events ADD COLUMN note VARCHAR"); err != nil {
		t.Fatal(err)
	}
	cur, err := lk.Table(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	if n := cur.Schema().NumFields(); n != 5 {
		t.Fatalf("current handle sees %d columns, want 5", n)
	}
	schema := eventsSchemaWithColumn("note")
	schema = arrow.NewSchema(append(schema.Fields()[:4:4], arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}), nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(100)
	b.Field(1).(*array.StringBuilder).Append("new")
	b.Field(2).(*array.Float64Builder).Append(1)
	b.Field(3).(*array.TimestampBuilder).Append(0)
	b.Field(4).(*array.StringBuilder).Append("hello")
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, _ := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	defer rdr.Release()
	cur, err = cur.Append(ctx, rdr)
	if err != nil {
		t.Fatalf("append with the added column: %v", err)
	}
	res, err := lk.Session().SQL(ctx, "SELECT count(*), count(note), max(note) FROM events")
	if err != nil {
		t.Fatal(err)
	}
	batches, err := res.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	row := batches[0]
	if got := row.Column(0).(*array.Int64).Value(0); got != 11 {
		t.Fatalf("count(*) = %d, want 11", got)
	}
	if got := row.Column(1).(*array.Int64).Value(0); got != 1 {
		t.Fatalf("count(note) = %d, want 1", got)
	}
	if got := row.Column(2).(*array.String).Value(0); got != "hello" {
		t.Fatalf("max(note) = %q, want hello", got)
	}
	// The pre-ALTER snapshot still reads with its own four columns.
	back, err := cur.At(old.Snapshot().ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := back.Schema().NumFields(); n != 4 {
		t.Fatalf("time-travel handle sees %d columns, want 4", n)
	}
}

// TestAlterUnknownColumn: ALTER TABLE's "column does not exist" points at
// the column in the statement and suggests the nearest one, as the
// binder's errors do.
func TestAlterUnknownColumn(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE t (id INTEGER, value VARCHAR)`)
	for _, q := range []string{
		`ALTER TABLE t DROP COLUMN valeu`,
		`ALTER TABLE t RENAME COLUMN valeu TO v`,
		`ALTER TABLE t ALTER COLUMN valeu TYPE VARCHAR`,
		`ALTER TABLE t ALTER COLUMN valeu DROP NOT NULL`,
	} {
		_, err := s.SQL(ctx, q)
		if !errors.Is(err, lake.ErrInvalidArgument) || !strings.Contains(err.Error(), `column "valeu" does not exist; did you mean "value"?`) {
			t.Fatalf("%s: %v", q, err)
		}
		var pe *plan.Error
		if !errors.As(err, &pe) || pe.Pos.Offset != strings.Index(q, "valeu") {
			t.Fatalf("%s: error has no position at the column: %#v", q, pe)
		}
	}
}

// TestCreateTableErrorsHavePositions: CREATE TABLE's binding errors point
// at what they are about, with a suggestion for a misspelt partition
// column.
func TestCreateTableErrorsHavePositions(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	for _, tc := range []struct{ q, at, msg string }{
		{`CREATE TABLE t (region VARCHAR, n INT) PARTITIONED BY (regoin)`, "regoin)", `partition column "regoin" is not a column of the table; did you mean "region"?`},
		{`CREATE TABLE t (a INT, b FLOATY)`, "FLOATY", `type "floaty" does not exist`},
		{`CREATE TABLE t (a INT, A INT)`, "A INT)", `column "A" is defined twice`},
		{`CREATE TABLE t (a INT) WITH ('write.delete.mode' = NULL)`, "NULL", `property values may not be NULL`},
	} {
		_, err := s.SQL(ctx, tc.q)
		if !errors.Is(err, lake.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.msg) {
			t.Fatalf("%s: %v", tc.q, err)
		}
		var pe *plan.Error
		if !errors.As(err, &pe) || pe.Pos.Offset != strings.Index(tc.q, tc.at) {
			t.Fatalf("%s: error not at %q: %#v", tc.q, tc.at, pe)
		}
	}
	// a DEFAULT that does not fit its column points at the DEFAULT
	q := `CREATE TABLE t (a INT DEFAULT 'x')`
	_, err := s.SQL(ctx, q)
	var pe *plan.Error
	if !errors.Is(err, lake.ErrInvalidArgument) || !errors.As(err, &pe) || pe.Pos.Offset != strings.Index(q, "'x'") {
		t.Fatalf("DEFAULT: %v", err)
	}
}
