package lake_test

import (
	"context"
	"fmt"
	"os"

	"github.com/skadedb/skade/lake"
)

// A transformation tool applies a model with the merge strategy inside a
// transaction: every statement of the apply commits together, or none
// does, and each result's Metrics give the row movement to report.
func ExampleSession_WithTx() {
	dir, _ := os.MkdirTemp("", "skade-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	lk, err := lake.Open(ctx, dir)
	if err != nil {
		panic(err)
	}
	defer lk.Close()
	sess := lk.Session()
	defer sess.Close()
	if err := sess.Exec(ctx, `
		CREATE TABLE raw_orders (order_id BIGINT, status VARCHAR, amount DECIMAL(10,2));
		INSERT INTO raw_orders VALUES (1, 'paid', 10.00), (2, 'new', 5.50);
		CREATE TABLE orders (order_id BIGINT, status VARCHAR, amount DECIMAL(10,2));
		INSERT INTO orders VALUES (1, 'new', 10.00), (3, 'shipped', 7.25)`); err != nil {
		panic(err)
	}

	// the statements the merge strategy emits for key order_id
	model := `SELECT order_id, status, amount FROM raw_orders`
	apply := []string{
		`CREATE TABLE IF NOT EXISTS orders AS (SELECT * FROM (` + model + `) LIMIT 0)`,
		`MERGE INTO orders AS _t USING (` + model + `) AS _s ON _t.order_id = _s.order_id
		   WHEN MATCHED THEN UPDATE SET status = _s.status, amount = _s.amount
		   WHEN NOT MATCHED THEN INSERT (order_id, status, amount) VALUES (_s.order_id, _s.status, _s.amount)`,
	}
	var moved lake.Metrics
	err = sess.WithTx(ctx, func(tx *lake.Session) error {
		for _, stmt := range apply {
			res, err := tx.SQL(ctx, stmt)
			if err != nil {
				return err // WithTx rolls back: the lake is as before
			}
			m := res.Metrics()
			res.Close()
			moved.RowsInserted += m.RowsInserted
			moved.RowsUpdated += m.RowsUpdated
			moved.RowsDeleted += m.RowsDeleted
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("orders: +%d ~%d -%d\n", moved.RowsInserted, moved.RowsUpdated, moved.RowsDeleted)

	res, err := sess.SQL(ctx, "SELECT order_id, status, amount FROM orders ORDER BY order_id")
	if err != nil {
		panic(err)
	}
	batches, err := res.Collect(ctx)
	if err != nil {
		panic(err)
	}
	for _, b := range batches {
		for i := 0; i < int(b.NumRows()); i++ {
			fmt.Println(b.Column(0).ValueStr(i), b.Column(1).ValueStr(i), b.Column(2).ValueStr(i))
		}
		b.Release()
	}
	// Output:
	// orders: +1 ~1 -0
	// 1 paid 10
	// 2 new 5.5
	// 3 shipped 7.25
}
