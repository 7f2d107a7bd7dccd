package mergeinto_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/scan"
)

// rewriteRows is a RewriteSpec.Rows over kvSchema that matches the ids in
// match and, for an UPDATE, sets v to 7 on them. lose drops the last row of
// every file (a broken plan, for the ledger to catch).
func rewriteRows(t *testing.T, tbl *table.Table, snap *table.Snapshot, match map[int64]bool, update, lose bool, batch int) func(table.FileScanTask, int64) (exec.Operator, error) {
	return func(task table.FileScanTask, _ int64) (exec.Operator, error) {
		scan, err := exec.NewFileScan("kv", tbl, snap, []string{"id", "v"}, kvSchema, nil, []table.FileScanTask{task})
		if err != nil {
			return nil, err
		}
		var in exec.Operator = scan
		if batch > 0 {
			in = &rwChop{Operator: scan, n: int64(batch)}
		}
		isMatch := &rwMatch{ids: match}
		v := col(1, i64)
		if update {
			v = call(t, "coalesce", &rwSet{match: isMatch}, col(1, i64))
		}
		var op exec.Operator
		op, err = exec.NewProject(in, []exec.Expr{isMatch, col(0, i64), v}, []string{"match", "id", "v"}, nil)
		if err != nil {
			return nil, err
		}
		if lose {
			op, err = exec.NewLimit(op, task.File.Count()-1, 0)
		}
		return op, err
	}
}

// rewriteBegin starts a run on f and plans its files whole.
func rewriteBegin(t *testing.T, f *fixture) (*run, *table.Snapshot, []table.FileScanTask) {
	t.Helper()
	r := f.begin()
	sc := r.tbl.Scan()
	tasks, err := scan.PlanWholeFiles(ctx, sc)
	sc.Close()
	if err != nil {
		t.Fatal(err)
	}
	return r, r.tbl.CurrentSnapshot(), tasks
}

func TestRewrite(t *testing.T) {
	for _, tc := range []struct {
		name      string
		update    bool
		match     []int64
		buffer    int64
		batch     int
		want      int64 // rows changed
		rewritten int64
		removed   int64
		left      int
	}{
		{"update one file", true, []int64{150, 199}, 0, 0, 2, 1, 1, 1000},
		{"update, prefix let go and re-read", true, []int64{150, 199, 420}, 1, 10, 3, 2, 2, 1000},
		{"delete across files", false, []int64{5, 250, 251, 999}, 0, 0, 4, 3, 3, 996},
		{"delete, prefix re-read", false, []int64{99}, 1, 7, 1, 1, 1, 999},
		{"no match", true, []int64{5000}, 0, 0, 0, 0, 0, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tenFiles(t)
			r, snap, tasks := rewriteBegin(t, f)
			match := map[int64]bool{}
			for _, id := range tc.match {
				match[id] = true
			}
			res, err := mergeinto.Rewrite(ctx, &mergeinto.RewriteSpec{
				Table: "kv", Target: r.tbl, Snapshot: snap, Schema: kvSchema, Files: tasks, All: tasks,
				Rows: rewriteRows(t, r.tbl, snap, match, tc.update, false, tc.batch), Update: tc.update, Returning: true,
				Options: mergeinto.Options{BufferLimit: tc.buffer, BatchSize: tc.batch},
			}, r.txn)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Release()
			m := res.Metrics
			if res.Count != tc.want || m.FilesRewritten != tc.rewritten || m.FilesRemoved != tc.removed {
				t.Fatalf("count %d, metrics %s", res.Count, m)
			}
			var size int64
			for _, task := range tasks {
				size += task.File.FileSizeBytes()
			}
			// every file is read once; a let-go prefix is read again
			if replayed := m.BytesRead > size; replayed != (tc.buffer == 1) || m.BytesRead < size {
				t.Errorf("read %d bytes of %d (buffer limit %d)", m.BytesRead, size, tc.buffer)
			}
			var returned int64
			for _, b := range res.Returning {
				returned += b.NumRows()
			}
			if returned != tc.want {
				t.Errorf("returned %d rows, want %d", returned, tc.want)
			}
			if res.Staged != (tc.want > 0) {
				t.Fatalf("staged %v", res.Staged)
			}
			if res.Staged {
				if _, err := r.txn.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			rows := f.rows()
			if len(rows) != tc.left {
				t.Fatalf("%d rows left, want %d", len(rows), tc.left)
			}
			sevens := 0
			for _, row := range rows {
				if strings.HasSuffix(row, "|7") {
					sevens++
				}
			}
			if tc.update && sevens != int(tc.want) {
				t.Errorf("%d rows updated to 7, want %d", sevens, tc.want)
			}
		})
	}
}

// TestRewriteLedgerRefuses: a plan that loses a row of a file it rewrites
// is refused before anything is staged, and the files written are gone.
func TestRewriteLedgerRefuses(t *testing.T) {
	f := tenFiles(t)
	r, snap, tasks := rewriteBegin(t, f)
	_, err := mergeinto.Rewrite(ctx, &mergeinto.RewriteSpec{
		Table: "kv", Target: r.tbl, Snapshot: snap, Schema: kvSchema, Files: tasks, All: tasks,
		Rows: rewriteRows(t, r.tbl, snap, map[int64]bool{150: true}, true, true, 0), Update: true,
	}, r.txn)
	if err == nil || !strings.Contains(err.Error(), "update kv") {
		t.Fatalf("got %v, want the ledger's refusal", err)
	}
	for _, p := range r.tracker.Created() {
		if strings.HasSuffix(p, ".parquet") {
			if _, serr := os.Stat(strings.TrimPrefix(p, "file://")); serr == nil {
				t.Errorf("refused rewrite left %s behind", p)
			}
		}
	}
	if got := len(f.rows()); got != 1000 {
		t.Fatalf("%d rows after a refused rewrite", got)
	}
}

// TestRewriteRefuse: RefuseRewrite stops a rewrite that would write rows,
// and does not stop one that only removes files.
func TestRewriteRefuse(t *testing.T) {
	refuse := errors.New("no rewrites here")
	for _, tc := range []struct {
		name  string
		match map[int64]bool
		want  error
	}{
		{"a file keeps rows", map[int64]bool{3: true}, refuse},
		{"a file is emptied", func() map[int64]bool {
			m := map[int64]bool{}
			for i := int64(100); i < 200; i++ {
				m[i] = true
			}
			return m
		}(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tenFiles(t)
			r, snap, tasks := rewriteBegin(t, f)
			res, err := mergeinto.Rewrite(ctx, &mergeinto.RewriteSpec{
				Table: "kv", Target: r.tbl, Snapshot: snap, Schema: kvSchema, Files: tasks, All: tasks,
				Rows: rewriteRows(t, r.tbl, snap, tc.match, false, false, 0), RefuseRewrite: refuse,
			}, r.txn)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if err == nil {
				defer res.Release()
				if res.Count != 100 || res.Metrics.FilesRemoved != 1 || res.Metrics.FilesAdded != 0 {
					t.Fatalf("count %d, metrics %s", res.Count, res.Metrics)
				}
			}
		})
	}
}

// rwMatch is TRUE for the rows whose id (column 0) is in ids.
type rwMatch struct{ ids map[int64]bool }

func (m *rwMatch) DataType() arrow.DataType { return arrow.FixedWidthTypes.Boolean }
func (m *rwMatch) String() string           { return "id IN (…)" }
func (m *rwMatch) Eval(ec *exec.EvalContext, b arrow.RecordBatch) (arrow.Array, error) {
	ids := b.Column(0).(interface{ Value(int) int64 })
	bld := newBoolBuilder(ec)
	defer bld.Release()
	for r := 0; r < int(b.NumRows()); r++ {
		bld.Append(m.ids[ids.Value(r)])
	}
	return bld.NewArray(), nil
}

// rwSet is 7 where match holds, else NULL.
type rwSet struct{ match *rwMatch }

func (s *rwSet) DataType() arrow.DataType { return i64 }
func (s *rwSet) String() string           { return "CASE WHEN id IN (…) THEN 7 END" }
func (s *rwSet) Eval(ec *exec.EvalContext, b arrow.RecordBatch) (arrow.Array, error) {
	ids := b.Column(0).(interface{ Value(int) int64 })
	bld := newInt64Builder(ec)
	defer bld.Release()
	for r := 0; r < int(b.NumRows()); r++ {
		if s.match.ids[ids.Value(r)] {
			bld.Append(7)
		} else {
			bld.AppendNull()
		}
	}
	return bld.NewArray(), nil
}

func newBoolBuilder(ec *exec.EvalContext) *array.BooleanBuilder {
	return array.NewBooleanBuilder(ec.Mem)
}
func newInt64Builder(ec *exec.EvalContext) *array.Int64Builder { return array.NewInt64Builder(ec.Mem) }

// rwChop cuts its child's batches into batches of at most n rows.
type rwChop struct {
	exec.Operator
	n   int64
	cur arrow.RecordBatch
	off int64
}

func (c *rwChop) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for c.cur == nil || c.off >= c.cur.NumRows() {
		if c.cur != nil {
			c.cur.Release()
			c.cur = nil
		}
		b, err := c.Operator.Next(ctx)
		if err != nil {
			return nil, err
		}
		c.cur, c.off = b, 0
	}
	end := min(c.off+c.n, c.cur.NumRows())
	out := c.cur.NewSlice(c.off, end)
	c.off = end
	return out, nil
}

func (c *rwChop) Close() error {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	return c.Operator.Close()
}
