package lake_test

import (
	"context"
	"fmt"
	"os"

	"github.com/skadedb/skade/lake"
)

// A session runs SQL: DDL, DML (which returns one row, `count`) and
// queries, whose results stream as Arrow batches.
func ExampleSession_SQL() {
	dir, _ := os.MkdirTemp("", "skade-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	lk, err := lake.Open(ctx, dir)
	if err != nil {
		panic(err)
	}
	defer lk.Close()
	sess := lk.Session()
	if err := sess.Exec(ctx, `
		CREATE TABLE events (id BIGINT NOT NULL, status VARCHAR) PARTITIONED BY (status);
		INSERT INTO events VALUES (1, 'new'), (2, 'paid'), (3, 'new');
		UPDATE events SET status = 'paid' WHERE id = 3`); err != nil {
		panic(err)
	}
	res, err := sess.SQL(ctx, "SELECT status, count(*) AS n FROM events GROUP BY status ORDER BY status")
	if err != nil {
		panic(err)
	}
	rdr := res.Reader()
	defer rdr.Release()
	for rdr.Next() {
		b := rdr.RecordBatch()
		for i := 0; i < int(b.NumRows()); i++ {
			fmt.Println(b.Column(0).ValueStr(i), b.Column(1).ValueStr(i))
		}
	}
	// Output:
	// new 1
	// paid 2
}
