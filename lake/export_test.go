package lake

import (
	"context"

	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/snapshot"
)

// SetTestHookBeforePublish makes COMMIT call f after writing its metadata
// files and before the catalog swap; the returned func restores the hook.
func SetTestHookBeforePublish(f func() error) (restore func()) {
	old := testHookBeforePublish
	testHookBeforePublish = f
	return func() { testHookBeforePublish = old }
}

// SetTestHookAfterStage makes every autocommit write call f after staging
// and checking its change, before committing it; the returned func
// restores the hook.
func SetTestHookAfterStage(f func()) (restore func()) {
	old := testHookAfterStage
	testHookAfterStage = f
	return func() { testHookAfterStage = old }
}

// SetRefForTest points ref name of table at its current snapshot with
// retention ret, through the catalog, as another engine could: tests use
// it for retentions SQL cannot spell (a ref that ages in milliseconds).
func SetRefForTest(ctx context.Context, lk *Lake, tableName, name string, kind table.RefType, ret snapshot.Retention) error {
	id, err := lk.ident(tableName)
	if err != nil {
		return err
	}
	cur, err := lk.load(ctx, id)
	if err != nil {
		return err
	}
	change, err := snapshot.SetRef(cur.Metadata(), tableName, name, kind, cur.CurrentSnapshot().SnapshotID, ret, true, true, false)
	if err != nil {
		return err
	}
	_, _, err = lk.cat.CommitTable(ctx, id, change.Requirements, change.Updates)
	return err
}

// SetRowsPerDataWriter sets how many rows of a row delta make another
// writer; the returned func restores it.
func SetRowsPerDataWriter(n int64) (restore func()) {
	old := rowsPerDataWriter
	rowsPerDataWriter = n
	return func() { rowsPerDataWriter = old }
}

// SetUpsertEncodesKeys makes upserts write their equality deletes from
// their records (true) instead of copying them from their data files.
func SetUpsertEncodesKeys(on bool) (restore func()) {
	old := testUpsertEncodesKeys.Load()
	testUpsertEncodesKeys.Store(on)
	return func() { testUpsertEncodesKeys.Store(old) }
}
