package lake_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/lake"
)

// exampleLake opens a lake in a fresh directory; the returned func
// closes it and removes the directory.
func exampleLake() (*lake.Lake, func()) {
	dir, err := os.MkdirTemp("", "skade-example-")
	if err != nil {
		panic(err)
	}
	lk, err := lake.Open(context.Background(), dir)
	if err != nil {
		panic(err)
	}
	return lk, func() { lk.Close(); os.RemoveAll(dir) }
}

// Open a lake (a directory; created when new), create a table and read it
// back with SQL.
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "skade-example-")
	defer os.RemoveAll(dir)
	lk, err := lake.Open(ctx, dir)
	if err != nil {
		panic(err)
	}
	defer lk.Close()
	sess := lk.Session()
	if err := sess.Exec(ctx, "CREATE TABLE events (id BIGINT, status VARCHAR); INSERT INTO events VALUES (1, 'new'), (2, 'paid')"); err != nil {
		panic(err)
	}
	res, err := sess.SQL(ctx, "SELECT count(*) FROM events")
	if err != nil {
		panic(err)
	}
	n, err := res.Int64s(ctx, 0) // count(*) is BIGINT; Int64s closes the result
	if err != nil {
		panic(err)
	}
	fmt.Println("events:", n[0])
	// Output: events: 2
}

// Register an Arrow batch as a relation and MERGE it into a table: the
// MERGE guide's register_batch.
func ExampleSession_RegisterBatch() {
	ctx := context.Background()
	lk, done := exampleLake()
	defer done()
	sess := lk.Session()
	if err := sess.Exec(ctx, "CREATE TABLE orders (id BIGINT, status VARCHAR); INSERT INTO orders VALUES (1, 'new'), (2, 'new')"); err != nil {
		panic(err)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "status", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{2, 3}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"paid", "new"}, nil)
	batch := b.NewRecordBatch()
	defer batch.Release()
	if err := sess.RegisterBatch(ctx, "incoming", batch); err != nil {
		panic(err)
	}
	res, err := sess.SQL(ctx, `MERGE INTO orders USING incoming s ON orders.id = s.id
		WHEN MATCHED THEN UPDATE SET status = s.status
		WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.status)`)
	if err != nil {
		panic(err)
	}
	m := res.Metrics()
	res.Close()
	fmt.Printf("updated %d, inserted %d\n", m.RowsUpdated, m.RowsInserted)
	// Output: updated 1, inserted 1
}

// Read a table as it was at an earlier snapshot: through a pinned handle,
// or in SQL with FOR VERSION AS OF.
func ExampleTable_At() {
	ctx := context.Background()
	lk, done := exampleLake()
	defer done()
	sess := lk.Session()
	if err := sess.Exec(ctx, "CREATE TABLE t (id BIGINT); INSERT INTO t VALUES (1)"); err != nil {
		panic(err)
	}
	tbl, err := lk.Table(ctx, "t")
	if err != nil {
		panic(err)
	}
	before := tbl.Snapshot().ID
	if err := sess.Exec(ctx, "INSERT INTO t VALUES (2), (3)"); err != nil {
		panic(err)
	}
	res, err := sess.SQL(ctx, fmt.Sprintf("SELECT count(*) FROM t FOR VERSION AS OF %d", before))
	if err != nil {
		panic(err)
	}
	then, _ := res.Int64s(ctx, 0)
	res, err = sess.SQL(ctx, "SELECT count(*) FROM t")
	if err != nil {
		panic(err)
	}
	now, _ := res.Int64s(ctx, 0)
	fmt.Println("then:", then[0], "now:", now[0])
	// Output: then: 1 now: 3
}

// Upsert rows by key with equality deletes: no existing file is read or
// rewritten, so a blind upsert costs what an append costs.
func ExampleTable_Upsert() {
	ctx := context.Background()
	lk, done := exampleLake()
	defer done()
	sess := lk.Session()
	if err := sess.Exec(ctx, "CREATE TABLE kv (k BIGINT, v VARCHAR); INSERT INTO kv VALUES (1, 'a'), (2, 'b')"); err != nil {
		panic(err)
	}
	tbl, err := lk.Table(ctx, "kv")
	if err != nil {
		panic(err)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{2, 3}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"B", "c"}, nil)
	batch := b.NewRecordBatch()
	defer batch.Release()
	rdr, _ := array.NewRecordReader(schema, []arrow.RecordBatch{batch})
	defer rdr.Release()
	if _, err := tbl.Upsert(ctx, []string{"k"}, rdr); err != nil {
		panic(err)
	}
	res, err := sess.SQL(ctx, "SELECT string_agg(k::varchar || v, ',' ORDER BY k) FROM kv")
	if err != nil {
		panic(err)
	}
	bs, _ := res.Collect(ctx)
	fmt.Println(bs[0].Column(0).ValueStr(0))
	bs[0].Release()
	// Output: 1a,2B,3c
}

// Follow a long statement's progress: a context carrying a Progress
// counts the data files planned and done and the rows read, which another
// goroutine can poll for a progress bar.
func ExampleWithProgress() {
	ctx := context.Background()
	lk, done := exampleLake()
	defer done()
	sess := lk.Session()
	if err := sess.Exec(ctx, "CREATE TABLE t AS SELECT * FROM range(1000) r(i); INSERT INTO t SELECT * FROM range(1000) r(i)"); err != nil {
		panic(err)
	}
	var p lake.Progress
	res, err := sess.SQL(lake.WithProgress(ctx, &p), "SELECT sum(i) FROM t")
	if err != nil {
		panic(err)
	}
	if _, err := res.Int64s(ctx, 0); err != nil {
		panic(err)
	}
	fmt.Printf("files %d of %d, rows %d\n", p.FilesDone.Load(), p.FilesTotal.Load(), p.Rows.Load())
	// Output: files 2 of 2, rows 2000
}

// A statement's error tells a program its SQLSTATE, hint and position
// without parsing the message.
func ExampleError() {
	ctx := context.Background()
	lk, done := exampleLake()
	defer done()
	_, err := lk.Session().SQL(ctx, "SELECT * FROM nosuch")
	var e *lake.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code, e.Position, errors.Is(err, lake.ErrTableNotFound))
	}
	// Output: 42P01 15 true
}
