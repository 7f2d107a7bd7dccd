package mergeinto_test

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
)

// MERGE INTO events USING incoming ON events.id = incoming.id
// WHEN MATCHED THEN UPDATE SET status = incoming.status
// WHEN NOT MATCHED THEN INSERT VALUES (incoming.id, incoming.status),
// as the binder hands it over: a Spec, Validate, Execute into a
// transaction, and the caller's commit (cleaning up through a Tracker when
// it fails).
func ExampleExecute() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "skade-example-")
	defer os.RemoveAll(dir)
	cat, _ := catalog.Open(dir)

	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "status", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	isch, _ := table.ArrowSchemaToIcebergWithFreshIDs(schema, true)
	tbl, _ := cat.CreateTable(ctx, table.Identifier{"main", "events"}, isch)
	rows, _ := exec.BuildBatch(memory.DefaultAllocator, schema, [][]any{{1, "new"}, {2, "new"}})
	rdr, _ := array.NewRecordReader(schema, []arrow.RecordBatch{rows})
	txn := tbl.NewTransaction()
	_ = txn.Append(ctx, rdr, nil)
	tbl, _ = txn.Commit(ctx)

	// The statement.
	incoming, _ := exec.BuildBatch(memory.DefaultAllocator, schema, [][]any{{2, "paid"}, {3, "new"}})
	source, _ := exec.NewValues(schema, []arrow.RecordBatch{incoming})
	tracker := catalog.NewTracker(cat.FS())
	target := cat.WithFS(tbl, tracker)
	// Joined row: events.id #0, events.status #1, incoming.id #2, incoming.status #3.
	spec := &mergeinto.Spec{
		Table: "events", Target: target, Snapshot: target.CurrentSnapshot(), Source: source,
		Keys: []mergeinto.Key{{Target: 0, Source: &exec.Column{Index: 0, Type: arrow.PrimitiveTypes.Int64}}},
		Clauses: []mergeinto.Clause{
			{Kind: mergeinto.Matched, Action: mergeinto.Update(mergeinto.Assignment{Column: 1, Expr: &exec.Column{Index: 3, Type: arrow.BinaryTypes.String}})},
			{Kind: mergeinto.NotMatchedByTarget, Action: mergeinto.Insert(
				&exec.Column{Index: 2, Type: arrow.PrimitiveTypes.Int64}, &exec.Column{Index: 3, Type: arrow.BinaryTypes.String})},
		},
	}
	if err := mergeinto.Validate(spec); err != nil {
		fmt.Println(err)
		return
	}
	mtxn := target.NewTransaction()
	res, err := mergeinto.Execute(ctx, spec, mtxn)
	if err != nil {
		tracker.RemoveCreated()
		fmt.Println(err)
		return
	}
	if res.Staged {
		if _, err := mtxn.Commit(ctx); err != nil {
			tracker.RemoveCreated()
			fmt.Println(err)
			return
		}
	}
	m := res.Metrics
	fmt.Printf("count %d: +%d ~%d -%d; files rewritten %d, added %d\n", res.Count, m.RowsInserted, m.RowsUpdated, m.RowsDeleted, m.FilesRewritten, m.FilesAdded)
	// Output: count 2: +1 ~1 -0; files rewritten 1, added 2
}
