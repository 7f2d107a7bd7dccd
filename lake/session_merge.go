package lake

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/parser"
)

// merge runs MERGE INTO: plan binds it into a mergeinto.Spec, mergeinto
// stages one overwrite snapshot into the write transaction, and the
// table's commit path commits it (removing every written file if the
// commit fails). A merge that changes nothing commits nothing.
func (s *Session) merge(ctx context.Context, st *parser.Merge, now time.Time) (*Result, error) {
	tbl, ref, err := s.lookup(ctx, st.Target)
	if err != nil {
		return nil, err
	}
	spec, err := s.planner(now).Merge(ctx, st, ref)
	if err != nil {
		return nil, translate(err)
	}
	var res *mergeinto.Result
	_, err = tbl.commitWrite(ctx, "merge into", writeConfig{props: iceberg.Properties{}}, func(txn *table.Transaction) error {
		staged, err := txn.StagedTable()
		if err != nil {
			return err
		}
		// INVARIANT: mergeinto writes through the transaction's tracked IO
		spec.Target = staged.Table
		r, err := mergeinto.Execute(ctx, spec, txn)
		res = r
		return err
	})
	if err != nil {
		var ce *mergeinto.CardinalityError
		if errors.As(err, &ce) {
			return nil, &sentinelError{ErrInvalidArgument, err}
		}
		return nil, translate(err)
	}
	if res == nil {
		return nil, fmt.Errorf("merge into %s: no result (bug)", tbl.Name())
	}
	res.Release()
	m := Metrics{RowsInserted: res.Metrics.RowsInserted, RowsUpdated: res.Metrics.RowsUpdated, RowsDeleted: res.Metrics.RowsDeleted}
	return countResult(res.Count, m), nil
}
