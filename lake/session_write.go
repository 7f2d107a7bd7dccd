package lake

import (
	"context"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// write applies one statement's change to a table: stage adds the change
// (an append, a copy-on-write rewrite, a merge, a schema update) to an
// iceberg-go transaction on the table. With assert the change also
// requires that the table has not moved since the snapshot it read.
//
// Outside BEGIN it commits at once through the table's commit path, which
// removes every file the change wrote if the commit fails.
//
// INVARIANT: every data or schema change a session makes goes through
// write. Multi-statement transactions (BEGIN … COMMIT) hook in here: the
// stage runs against the transaction's staged copy of the table instead
// of committing, sessionCatalog resolves the table to that staged copy for
// later statements, and COMMIT publishes every touched table at once with
// catalog.StageCommit and SwapPointers.
func (s *Session) write(ctx context.Context, tbl *Table, op string, assert bool, stage func(*table.Transaction) error) error {
	committed, err := tbl.commitWrite(ctx, op, writeConfig{assert: assert, props: iceberg.Properties{}}, stage)
	if err == nil && committed != nil && committed.Snapshot() != nil && (tbl.Snapshot() == nil || committed.Snapshot().ID != tbl.Snapshot().ID) {
		s.lastCommit = committed.Snapshot().ID
	}
	return err
}
