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
	"github.com/skadedb/skade/plan"
	"github.com/skadedb/skade/snapshot"
)

// runPlanned plans a query, INSERT, DELETE, UPDATE or MERGE with
// plan.Planner.Plan, the one entry point, and runs it.
func (s *Session) runPlanned(ctx context.Context, stmt parser.Stmt, now time.Time) (*Result, error) {
	if _, query := stmt.(*parser.Query); !query && s.readOnly {
		return nil, errReadOnlyHandle
	}
	st, err := s.planner(now).Plan(ctx, stmt, false)
	if err != nil {
		return nil, err
	}
	res, done, _, err := s.runStatement(ctx, st, now)
	done.Release()
	return res, err
}

// explain runs EXPLAIN: the statement is planned (and, with ANALYZE, run
// and committed, as in Postgres), and plan's one renderer describes it.
func (s *Session) explain(ctx context.Context, st *parser.Explain, now time.Time) (*Result, error) {
	switch c := st.Stmt.(type) {
	case *parser.Query, *parser.Insert, *parser.Delete, *parser.Update, *parser.Merge:
	case *parser.CreateTable:
		if c.AsQuery != nil {
			return s.explainCreateAs(ctx, st, c, now)
		}
		if c.Clone != nil {
			return nil, &sentinelError{ErrNotImplemented, errors.New("EXPLAIN of CREATE TABLE … CLONE is not supported: a clone runs no query and copies no data file, it writes only metadata; EXPLAIN a query, CREATE TABLE … AS, INSERT, DELETE, UPDATE or MERGE")}
		}
		return nil, &sentinelError{ErrInvalidArgument, errors.New("EXPLAIN of CREATE TABLE needs CREATE TABLE … AS; a plain CREATE TABLE has no plan")}
	default:
		return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("EXPLAIN of %s is not supported yet; EXPLAIN a query, CREATE TABLE … AS, INSERT, DELETE, UPDATE or MERGE", plan.StatementKind(st.Stmt))}
	}
	_, query := st.Stmt.(*parser.Query)
	if st.Analyze && !query && s.readOnly {
		return nil, errReadOnlyHandle
	}
	ps, err := s.planner(now).Plan(ctx, st.Stmt, !st.Analyze)
	if err != nil {
		return nil, err
	}
	var done *mergeinto.Result
	var inserted int64
	if st.Analyze && !query {
		var res *Result
		res, done, inserted, err = s.runStatement(ctx, ps, now)
		if err != nil {
			return nil, err
		}
		res.Close()
		defer done.Release()
	} else {
		defer ps.Release()
	}
	text, err := ps.Explain(ctx, st.Analyze, done, inserted)
	if err != nil {
		return nil, err
	}
	return textResult("plan", strings.Split(strings.TrimRight(text, "\n"), "\n"))
}

// explainCreateAs runs EXPLAIN [ANALYZE] CREATE TABLE … AS: the query's
// plan under the table it fills. ANALYZE creates the table, as in
// PostgreSQL, and reports the rows written.
func (s *Session) explainCreateAs(ctx context.Context, st *parser.Explain, c *parser.CreateTable, now time.Time) (*Result, error) {
	id, err := s.lk.ident(tableName(c.Name))
	if err != nil {
		return nil, err
	}
	head := "CREATE TABLE " + displayName(id) + " AS"
	if st.Analyze {
		if s.readOnly {
			return nil, errReadOnlyHandle
		}
		res, err := s.createTable(ctx, c, now)
		if err != nil {
			return nil, err
		}
		defer res.Close()
		line := head + ": the table exists; nothing written" // IF NOT EXISTS skipped it
		if len(res.notices) == 0 {
			line = fmt.Sprintf("%s: %d rows", head, res.metrics.RowsInserted)
		}
		return textResult("plan", []string{line})
	}
	ps, err := s.planner(now).Plan(ctx, c, true)
	if err != nil {
		return nil, err
	}
	text, err := ps.Create.Query.Explain(ctx, false)
	if err != nil {
		return nil, err
	}
	return textResult("plan", append([]string{head}, strings.Split(strings.TrimRight(text, "\n"), "\n")...))
}

// runStatement runs a planned statement: a query's operators, or a
// write inside the table's commit. done is what a MERGE, DELETE or UPDATE
// did (the caller releases it), inserted the rows an INSERT appended.
func (s *Session) runStatement(ctx context.Context, st *plan.Statement, now time.Time) (res *Result, done *mergeinto.Result, inserted int64, err error) {
	switch st.Kind {
	case plan.KindQuery:
		op, err := st.Query.Operator()
		if err != nil {
			return nil, nil, 0, err
		}
		if err := op.Open(ctx); err != nil {
			op.Close()
			return nil, nil, 0, err
		}
		return &Result{schema: st.Query.Schema(), ctx: ctx, op: op}, nil, 0, nil
	case plan.KindInsert:
		res, n, err := s.runInsert(ctx, st)
		return res, nil, n, err
	case plan.KindDelete, plan.KindUpdate:
		defer st.Release()
		res, done, err := s.runRewrite(ctx, st, now)
		return res, done, 0, err
	case plan.KindMerge:
		res, done, err := s.runMerge(ctx, st)
		return res, done, 0, err
	}
	return nil, nil, 0, fmt.Errorf("%s: not a statement lake runs from a plan (bug)", st.Kind)
}

// tableOf is the lake Table of a planned statement's target.
func (s *Session) tableOf(ref *plan.TableRef) *Table {
	t := s.lk.newTable(ref.Ident, ref.Table, ref.Table.CurrentSnapshot())
	t.branch, t.tag = ref.Branch, ref.Tag
	return t
}

// runInsert appends an INSERT's rows in one snapshot; 0 rows commit
// nothing.
func (s *Session) runInsert(ctx context.Context, st *plan.Statement) (*Result, int64, error) {
	tbl := s.tableOf(st.Target)
	w := st.Write
	op, err := w.Rows.Operator()
	if err != nil {
		return nil, 0, err
	}
	if err := op.Open(ctx); err != nil {
		op.Close()
		return nil, 0, err
	}
	rdr := newOpReader(ctx, op, plan.TableSchema(tbl.tbl, w.Rows.Schema()))
	defer rdr.Release()
	n, kept, err := s.appendRowsKeep(ctx, tbl, rdr, w.Returning != nil)
	if err != nil {
		return nil, 0, err
	}
	if w.Returning != nil {
		res, err := returningResult(ctx, w.Returning, kept, Metrics{RowsInserted: n}, returnedInserted)
		return res, n, err
	}
	return countResult(n, Metrics{RowsInserted: n}), n, nil
}

// runRewrite runs a DELETE or UPDATE that plan.Write planned and lowered
// onto mergeinto.Rewrite, inside the commit: one pass over the candidate
// files, rewriting those with a change (copy-on-write) or marking the
// changed rows with deletes (merge-on-read). Nothing matched commits
// nothing.
func (s *Session) runRewrite(ctx context.Context, st *plan.Statement, now time.Time) (*Result, *mergeinto.Result, error) {
	w := st.Write
	tbl := s.tableOf(st.Target)
	if w.Snapshot == nil {
		return countResult(0, Metrics{}), &mergeinto.Result{}, nil
	}
	op := w.Op.String()
	var res *mergeinto.Result
	err := s.write(ctx, tbl, op, rebaseOf(&res), func(txn *table.Transaction) error {
		staged, err := txn.StagedTable()
		if err != nil {
			return err
		}
		res.Release()
		// INVARIANT: mergeinto writes through the transaction's tracked IO
		spec := w.Spec(staged.Table, s.planner(now).Options.Budget)
		res, err = mergeinto.Rewrite(ctx, spec, txn)
		return err
	})
	if err != nil {
		res.Release()
		return nil, nil, err
	}
	m := Metrics{RowsDeleted: res.Count}
	if w.Op == plan.WriteUpdate {
		m = Metrics{RowsUpdated: res.Count}
	}
	if w.Returning != nil {
		rows := res.Returning
		res.Returning = nil
		kind := returnedDeleted
		switch {
		case w.Op == plan.WriteUpdate && w.Rewrite.KeepsOld:
			kind = returnedUpdatedOld
		case w.Op == plan.WriteUpdate:
			kind = returnedUpdated
		}
		r, err := returningResult(ctx, w.Returning, rows, m, kind)
		return r, res, err
	}
	return countResult(res.Count, m), res, nil
}

// rebaseOf returns the staged change of the statement whose result *res
// will hold, for Session.write.
func rebaseOf(res **mergeinto.Result) func() snapshot.Rebaser {
	return func() snapshot.Rebaser {
		if *res == nil || (*res).Delta == nil {
			return nil
		}
		return (*res).Delta
	}
}

// runMerge runs a MERGE (or UPDATE … FROM) that plan bound into a
// mergeinto.Spec: mergeinto stages one snapshot into the write
// transaction, and the table's commit path commits it (removing every
// written file if the commit fails). A merge that changes nothing commits
// nothing.
func (s *Session) runMerge(ctx context.Context, st *plan.Statement) (*Result, *mergeinto.Result, error) {
	tbl := s.tableOf(st.Target)
	spec := st.Write.Merge
	var res *mergeinto.Result
	err := s.write(ctx, tbl, "merge into", rebaseOf(&res), func(txn *table.Transaction) error {
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
			return nil, nil, &sentinelError{ErrInvalidArgument, err}
		}
		return nil, nil, err
	}
	if res == nil {
		return nil, nil, fmt.Errorf("merge into %s: no result (bug)", tbl.Name())
	}
	m := Metrics{RowsInserted: res.Metrics.RowsInserted, RowsUpdated: res.Metrics.RowsUpdated, RowsDeleted: res.Metrics.RowsDeleted}
	if spec.Returning != nil {
		// the RETURNING rows are the result; the Result releases them
		out := &Result{schema: res.ReturningSchema, batches: res.Returning, metrics: m}
		res.Returning = nil
		return out, res, nil
	}
	return countResult(res.Count, m), res, nil
}
