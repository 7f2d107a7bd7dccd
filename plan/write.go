package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/scan"
	"github.com/skadedb/skade/snapshot"
)

// WriteOp is what a Write does to its target's rows.
type WriteOp int

const (
	WriteDelete WriteOp = iota
	WriteUpdate
	WriteInsert
	WriteMerge
)

func (op WriteOp) String() string {
	return [...]string{"delete", "update", "insert", "merge"}[op]
}

// Write is the root of every DML plan, in the shape of DataFusion's
// DmlStatement {op, table, input}: Op, Target, the input, and RETURNING.
// The input is, by Op:
//
//	WriteInsert  Rows: the rows, shaped to the target's columns and types
//	WriteDelete, WriteUpdate
//	             Rewrite: the per-file plan (the target scan, USING joins,
//	             the match column and the new values), with the files
//	             planned here (scan.PlanFilter's pruning, whole files, the
//	             equality deletes a filter pruned, key-range skipping) and
//	             the write mode from snapshot.WriteMode; lowered onto
//	             mergeinto.Rewrite by Spec
//	WriteMerge   Merge: the target–source join with the compiled clauses,
//	             run by mergeinto.Execute (also UPDATE … FROM)
//
// lake runs the write inside its commit.
type Write struct {
	Op        WriteOp
	Target    *TableRef
	Snapshot  *table.Snapshot
	Mode      mergeinto.Mode
	Rows      *Plan
	Rewrite   *Rewrite
	Merge     *mergeinto.Spec
	Returning *Returning

	// Files are read and rewritten (or marked); Drop are removed unread
	// (statistics prove a DELETE empties them); All plans every data file
	// when known.
	Files, Drop, All []table.FileScanTask
	// Total is the number of data files in the snapshot; Planned the
	// candidates after pruning (Files and Drop).
	Total   int64
	Planned int

	binder *binder // a MERGE's, for its init plans in EXPLAIN
	fields []string
	read   *arrow.Schema
	schema *arrow.Schema // the rows written: the table's schema
}

// Write binds and plans a DELETE (st *parser.Delete) or UPDATE
// (*parser.Update) of target at snap, the snapshot the statement reads.
// With explain it plans without running anything that reads data (the
// key-range skipping, which runs the subquery, is left out). The caller
// Releases the Write.
func (p *Planner) Write(ctx context.Context, st parser.Stmt, target *TableRef, snap *table.Snapshot, explain bool) (*Write, error) {
	w := &Write{Target: target, Snapshot: snap}
	var (
		tn        *parser.TableName
		where     parser.Expr
		set       []*parser.SetClause
		using     []parser.TableExpr
		returning []*parser.SelectItem
	)
	switch s := st.(type) {
	case *parser.Delete:
		tn, where, using, returning = s.Table, s.Where, s.Using, s.Returning
	case *parser.Update:
		w.Op = WriteUpdate
		tn, where, set, returning = s.Table, s.Where, s.Set, s.Returning
	default:
		return nil, fmt.Errorf("plan: %T is not a DELETE or UPDATE (bug)", st)
	}
	var alias parser.Ident
	if tn.Alias != nil {
		alias = tn.Alias.Name
	}
	if len(returning) > 0 && !explain {
		var err error
		if w.Returning, err = p.BindReturning(ctx, target, alias, returning); err != nil {
			return nil, err
		}
	}
	keepOld := w.Op == WriteUpdate && w.Returning != nil && w.Returning.UsesOld()
	rw, err := p.rowRewrite(ctx, target, alias, where, set, using, explain, keepOld)
	if err != nil {
		return nil, err
	}
	w.Rewrite = rw
	if snap == nil {
		return w, nil
	}
	if err := w.planFiles(ctx, explain); err != nil {
		w.Release()
		return nil, err
	}
	return w, nil
}

// Release frees what the write holds before it runs: a rewrite's kept
// subquery rows (plan.Once), a MERGE's source operator (unless
// mergeinto.Execute consumed it).
func (w *Write) Release() {
	if w.Rewrite != nil {
		w.Rewrite.Release()
	}
	if w.Merge != nil && w.Merge.Source != nil {
		w.Merge.Source.Close()
		w.Merge.Source = nil
	}
}

func (w *Write) what() string { return w.Op.String() + " " + w.Target.Name }

// planFiles plans the candidate files and the write mode.
func (w *Write) planFiles(ctx context.Context, explain bool) error {
	tbl, snap, rw := w.Target.Table, w.Snapshot, w.Rewrite
	w.fields = make([]string, len(rw.Columns))
	fs := make([]arrow.Field, len(rw.Columns))
	for i, c := range rw.Columns {
		w.fields[i] = c.Name
		fs[i] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: !c.Required}
	}
	w.read = arrow.NewSchema(fs, nil)
	w.schema = TableSchema(tbl, w.read)
	if rw.Lineage {
		// read each row's lineage too: the rewrite keeps it
		w.fields, fs = withLineage(w.fields, fs)
		w.read = arrow.NewSchema(fs, nil)
	}
	// a live scan of the current snapshot: the pushed filter may name a
	// column added or renamed since the last write
	pinned := scan.PinSnapshot(tbl, snap.SnapshotID)
	sopts := slices.Clone(pinned)
	if pf := scan.PlanFilter(ctx, tbl, snap, rw.Pushed); pf != nil {
		sopts = append(sopts, table.WithRowFilter(pf))
	}
	sc := tbl.Scan(sopts...)
	// whole files: a file is rewritten, or numbered for position deletes,
	// from its first row to its last
	tasks, err := scan.PlanWholeFiles(ctx, sc)
	sc.Close()
	// every data file, when known (for dead delete files); a copy, as
	// tasks is filtered below
	all := slices.Clone(tasks)
	if err == nil && rw.Pushed != nil {
		// The filter may have pruned equality deletes a rewritten file needs.
		tasks, all, err = mergeinto.CompleteDeletes(ctx, tbl, snap, pinned, tasks)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", w.what(), err)
	}
	w.All = all
	if !explain {
		// files outside the key range of a `key IN (subquery)` condition
		// hold no match (the subquery runs here, once)
		var keep []table.FileScanTask
		for _, t := range tasks {
			skip, err := rw.Excludes(t.File)
			if err != nil {
				return err
			}
			if !skip {
				keep = append(keep, t)
			}
		}
		tasks = keep
	}
	w.Total = scan.SnapshotDataFiles(tbl, snap.SnapshotID)
	w.Planned = len(tasks)
	// Merge-on-read, unless statistics prove that a DELETE empties every
	// candidate file: dropping them is cheaper than deleting each row and
	// rewrites nothing either.
	mor := snapshot.WriteMode(tbl.Properties(), w.Op.String()) == snapshot.ModeMergeOnRead
	wholly := func(t table.FileScanTask) bool {
		// statistics prove every row of the file matches
		return w.Op == WriteDelete && w.Returning == nil && rw.AllMatch(t.File)
	}
	if mor && len(tasks) > 0 && !slices.ContainsFunc(tasks, func(t table.FileScanTask) bool { return !wholly(t) }) {
		mor = false
	}
	if mor {
		w.Mode = mergeinto.MergeOnRead
	}
	for _, t := range tasks {
		// a file with deletes is read even so (its record count includes
		// the deleted rows), then dropped with its deletes
		if wholly(t) && !scan.HasDeletes(t) {
			w.Drop = append(w.Drop, t)
		} else {
			w.Files = append(w.Files, t)
		}
	}
	return nil
}

// TableSchema is the table's Arrow schema when its types match a plan's
// output (they do: both are the table's canonical types), which carries
// the NOT NULL flags iceberg-go checks; out otherwise. Writes use it.
func TableSchema(tbl *table.Table, out *arrow.Schema) *arrow.Schema {
	ts, err := table.SchemaToArrowSchema(tbl.Metadata().CurrentSchema(), nil, false, false)
	if err != nil || ts.NumFields() != out.NumFields() {
		return out
	}
	for i := range ts.Fields() {
		if !arrow.TypeEqual(ts.Field(i).Type, out.Field(i).Type) {
			return out
		}
	}
	return ts
}

// rows evaluates the rewrite over one file, with the file's deletes
// applied: RewriteSpec.Rows.
func (w *Write) rows(task table.FileScanTask, first int64) (exec.Operator, error) {
	// read the whole file (or, from RowGroupFilter's row groups, whole
	// row groups): the pushed filter prunes files, never rows
	task.Residual = nil
	if w.Rewrite.rowGroupFilter() == nil {
		if err := scan.CheckWhole(w.what(), task); err != nil {
			return nil, err
		}
	}
	in, err := exec.NewFileScan(w.Target.Name, w.Target.Table, w.Snapshot, w.fields, w.read, nil /* filter */, []table.FileScanTask{task})
	if err != nil {
		return nil, err
	}
	// each row's position in the file rides through the plan, whose joins
	// may reorder rows
	withPos, err := exec.NewRowPositionFrom(in, RowPositionColumn, first)
	if err != nil {
		return nil, err
	}
	return w.Rewrite.Operator(withPos)
}

// Spec lowers the write onto mergeinto.Rewrite, writing through staged,
// the caller's transaction's view of the target (its tracked IO).
func (w *Write) Spec(staged *table.Table, budget *exec.Budget) *mergeinto.RewriteSpec {
	var props map[string]string
	if w.Mode == mergeinto.MergeOnRead {
		props = map[string]string{"skade.operation": w.Op.String()}
	}
	return &mergeinto.RewriteSpec{
		Table: w.Target.Name, Target: staged, Snapshot: w.Snapshot, Schema: w.schema,
		Files: w.Files, Drop: w.Drop, All: w.All, Rows: w.rows, RowGroupFilter: w.Rewrite.rowGroupFilter(), Filter: w.Rewrite.Pushed, SetColumns: w.Rewrite.Set,
		Update: w.Op == WriteUpdate, Returning: w.Returning != nil, ReturningOld: w.Rewrite.KeepsOld, Mode: w.Mode, Lineage: w.Rewrite.Lineage,
		Budget: budget, Options: mergeinto.Options{SnapshotProperties: props},
	}
}

// Explain renders EXPLAIN of the write: the mode, the pruning, the files,
// and the per-file plan.
func (w *Write) Explain() string {
	if w.Snapshot == nil {
		return "table has no snapshot: nothing to read"
	}
	op := strings.ToUpper(w.Op.String())
	var b strings.Builder
	if w.Mode == mergeinto.MergeOnRead {
		kind := "position delete files"
		if w.Target.Table.Metadata().Version() >= 3 {
			kind = "deletion vectors"
		}
		fmt.Fprintf(&b, "%s %s (merge-on-read: %s, no file rewritten)\n", op, w.Target.Name, kind)
	} else {
		fmt.Fprintf(&b, "%s %s (copy-on-write)\n", op, w.Target.Name)
	}
	if w.Rewrite.Pushed != nil {
		fmt.Fprintf(&b, "  pruning filter: %s\n", w.Rewrite.Pushed)
	}
	drops := ""
	if w.Mode != mergeinto.MergeOnRead || len(w.Drop) > 0 {
		drops = fmt.Sprintf("%d dropped unread (statistics prove every row matches), ", len(w.Drop))
	}
	fmt.Fprintf(&b, "  data files: %d in the snapshot, %d skipped by pruning, %s%d to read\n", w.Total, w.Total-int64(w.Planned), drops, len(w.Files))
	b.WriteString("  per file:\n")
	for _, l := range strings.Split(strings.TrimRight(w.Rewrite.Explain(), "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	writeInits(&b, w.Rewrite.b, "    ")
	return b.String()
}

// Summary renders EXPLAIN ANALYZE of the write once res is in: "" when a
// copy-on-write statement matched nothing (nothing committed).
func (w *Write) Summary(res *mergeinto.Result) string {
	op := strings.ToUpper(w.Op.String())
	mt := res.Metrics
	if w.Mode == mergeinto.MergeOnRead {
		kind := "position delete files"
		if res.DeletionVectors {
			kind = "deletion vectors"
		}
		drops := ""
		if len(w.Drop) > 0 {
			drops = fmt.Sprintf("%d dropped unread, ", len(w.Drop))
		}
		out := fmt.Sprintf("%s %s (merge-on-read): %d rows\n  data files: %d in the snapshot, %d skipped by pruning, %s%d read, 0 rewritten, %d removed, %d added\n  %s written: %d\n",
			op, w.Target.Name, res.Count, w.Total, w.Total-int64(w.Planned), drops, len(w.Files), mt.FilesRemoved, mt.FilesAdded, kind, res.DeleteFilesWritten)
		return out + rowGroupsUnread(mt)
	}
	if res.Count == 0 {
		return ""
	}
	out := fmt.Sprintf("%s %s (copy-on-write): %d rows\n  data files: %d in the snapshot, %d skipped by pruning, %d dropped unread, %d read, %d rewritten, %d removed, %d added\n",
		op, w.Target.Name, res.Count, w.Total, w.Total-int64(w.Planned), len(w.Drop), len(w.Files), mt.FilesRewritten, mt.FilesRemoved, mt.FilesAdded)
	if mt.RowGroupsCopied+mt.RowGroupsPatched > 0 {
		out += fmt.Sprintf("  row groups: %d unchanged copied verbatim, %d with only the SET columns encoded again (%d bytes copied)\n", mt.RowGroupsCopied, mt.RowGroupsPatched, mt.BytesCopied)
	}
	return out + rowGroupsUnread(mt)
}

// rowGroupsUnread is Summary's line for the row groups statistics ruled
// out, or "".
func rowGroupsUnread(mt mergeinto.Metrics) string {
	if mt.RowGroupsSkipped == 0 {
		return ""
	}
	return fmt.Sprintf("  row groups: %d left unread (statistics prove no row matches)\n", mt.RowGroupsSkipped)
}
