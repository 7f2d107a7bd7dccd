package lake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/parser"
)

// merge runs MERGE INTO: plan binds it into a mergeinto.Spec, mergeinto
// stages one overwrite snapshot into the write transaction, and the
// table's commit path commits it (removing every written file if the
// commit fails). A merge that changes nothing commits nothing.
func (s *Session) merge(ctx context.Context, st *parser.Merge, now time.Time) (*Result, error) {
	res, _, err := s.runMerge(ctx, st, now, false, "merge")
	return res, err
}

// explainMerge renders EXPLAIN MERGE (nothing runs) and EXPLAIN ANALYZE
// MERGE (the merge runs and commits, as in Postgres, and the metrics are
// shown).
func (s *Session) explainMerge(ctx context.Context, st *parser.Merge, now time.Time, analyze bool) (*Result, error) {
	if analyze && s.readOnly {
		return nil, errReadOnlyHandle
	}
	_, text, err := s.runMerge(ctx, st, now, !analyze, "merge")
	if err != nil {
		return nil, err
	}
	return textResult("plan", strings.Split(strings.TrimRight(text, "\n"), "\n"))
}

// runMerge binds and (unless dryRun) executes a MERGE, returning its
// result and its EXPLAIN text. modeOp is the operation whose write mode
// applies (snapshot.WriteMode): "merge", or "update" for an UPDATE … FROM,
// which runs as a MERGE.
func (s *Session) runMerge(ctx context.Context, st *parser.Merge, now time.Time, dryRun bool, modeOp string) (*Result, string, error) {
	tbl, ref, err := s.lookup(ctx, st.Target)
	if err != nil {
		return nil, "", err
	}
	// The table's write mode (write.merge.mode, or write.update.mode for
	// UPDATE … FROM) picks the write path; plan sets it.
	spec, err := s.planner(now).Merge(ctx, st, ref, modeOp)
	if err != nil {
		return nil, "", err
	}
	if dryRun {
		text := mergeinto.Explain(spec, nil)
		spec.Source.Close()
		return nil, text, nil
	}
	var res *mergeinto.Result
	err = s.write(ctx, tbl, "merge into", false, func(txn *table.Transaction) error {
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
			return nil, "", &sentinelError{ErrInvalidArgument, err}
		}
		return nil, "", err
	}
	if res == nil {
		return nil, "", fmt.Errorf("merge into %s: no result (bug)", tbl.Name())
	}
	m := Metrics{RowsInserted: res.Metrics.RowsInserted, RowsUpdated: res.Metrics.RowsUpdated, RowsDeleted: res.Metrics.RowsDeleted}
	text := mergeinto.Explain(spec, res)
	if spec.Returning != nil {
		// the RETURNING rows are the result; the Result releases them
		out := &Result{schema: res.ReturningSchema, batches: res.Returning, metrics: m}
		res.Returning = nil
		return out, text, nil
	}
	res.Release()
	return countResult(res.Count, m), text, nil
}
