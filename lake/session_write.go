package lake

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/snapshot"
)

// write applies one statement's change to a table: stage adds the change
// (an append, a copy-on-write rewrite, a merge, a schema update) to an
// iceberg-go transaction on the table. A row-level write (MERGE, UPDATE,
// DELETE) asserts the snapshot it read; rebase, when non-nil, returns its
// staged change so that losing the commit race to writers that touched
// other files validates and restages it (snapshot.Rebaser) instead of
// failing.
//
// Outside a transaction it commits at once through the table's commit
// path, which removes every file the change wrote if the commit fails.
// Inside one (BEGIN, or the transaction of one autocommit DDL statement)
// the stage applies to the transaction's copy of the table (see txn), and
// COMMIT publishes it.
//
// INVARIANT: every data or schema change a session makes goes through
// write, so that transactions see and publish all of them.
func (s *Session) write(ctx context.Context, tbl *Table, op string, rebase func() snapshot.Rebaser, stage func(*table.Transaction) error) error {
	if err := tbl.checkWritable(); err != nil {
		return err
	}
	if wb := s.writeBranch(); wb != "" && wb != table.MainBranch && tbl.branch == "" && op != "alter table" && tbl.tbl.CurrentSnapshot() != nil {
		// reads of a table without the branch see main; a write there
		// would publish what the session meant to stage. A table with
		// no snapshot yet (CREATE TABLE … AS, or the first INSERT into
		// a new table) cannot have a branch: its first write goes to
		// main, as its creation did.
		return &sentinelError{ErrRefNotFound, fmt.Errorf("%s %s: the session writes to branch %q (SET write_branch), and the table has no such branch; "+
			"create it with ALTER TABLE %s CREATE BRANCH %s, or RESET write_branch to write main", op, tbl.Name(), wb, tbl.Name(), wb)}
	}
	if s.tx != nil {
		return s.tx.write(ctx, tbl, op, false, stage)
	}
	committed, err := tbl.commitWrite(ctx, op, writeConfig{props: iceberg.Properties{}, rebase: rebase}, stage)
	if err == nil && committed != nil && committed.Snapshot() != nil && (tbl.Snapshot() == nil || committed.Snapshot().ID != tbl.Snapshot().ID) {
		s.lastCommit = committed.Snapshot().ID
	}
	return err
}
