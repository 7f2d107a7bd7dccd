package mergeinto

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/skadedb/skade/scan"
)

// Ledger is the safety net of a commit that replaces data files: it
// counts the live rows read from each file the commit removes and, before
// the commit is staged, checks the counts against the manifests:
//
//   - per removed file: rows read == its record count − the rows its
//     delete files hide;
//   - in total: rows in the added data files == rows read from the
//     removed files − rows deleted + rows inserted.
//
// A rewrite that read part of a file (one split of it), or wrote fewer or
// more rows than it meant to, fails the check, and the statement fails
// with an error naming the file before anything is committed. The counts
// are already known; only a removed file that carries delete files costs
// a read of those deletes (and of its equality key columns).
type Ledger struct {
	what  string // "merge into main.t": prefixes errors
	tbl   *table.Table
	scan  []table.ScanOption
	mem   memory.Allocator
	files map[string]*ledgerFile
	order []string
}

type ledgerFile struct {
	task   table.FileScanTask
	read   int64
	hidden int64 // rows its delete files hide, once known
	known  bool
}

// NewLedger starts a ledger for a commit to tbl, whose rows the statement
// read with scanOpts (the snapshot). what prefixes its errors.
func NewLedger(tbl *table.Table, scanOpts []table.ScanOption, what string, mem memory.Allocator) *Ledger {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &Ledger{what: what, tbl: tbl, scan: scanOpts, mem: mem, files: map[string]*ledgerFile{}}
}

// Read records that rows live rows of task's file were read (or, for a
// file dropped unread because statistics prove every row is deleted,
// accounted for). Rows of one file may be recorded in several calls.
func (l *Ledger) Read(task table.FileScanTask, rows int64) {
	p := task.File.FilePath()
	f, ok := l.files[p]
	if !ok {
		f = &ledgerFile{task: task}
		l.files[p] = f
		l.order = append(l.order, p)
	}
	f.read += rows
}

// ReadWhole records that every live row of task's file was read, by a
// reader (iceberg-go's compaction) that does not count them; the total
// check then holds the rows written to them.
func (l *Ledger) ReadWhole(ctx context.Context, task table.FileScanTask) error {
	l.Read(task, 0)
	f := l.files[task.File.FilePath()]
	hidden, err := l.hidden(ctx, f)
	if err != nil {
		return err
	}
	f.read = task.File.Count() - hidden
	return nil
}

// TestHookLedger, when set (by tests only), adjusts the rows the ledger
// believes were written, to force a mismatch.
var TestHookLedger func(written int64) int64

// Check verifies the counts of a commit that removes removed and adds
// added, deleting deleted rows and inserting inserted ones; an error
// means the commit must not happen.
func (l *Ledger) Check(ctx context.Context, removed, added []iceberg.DataFile, deleted, inserted int64) error {
	var written int64
	for _, df := range added {
		written += df.Count()
	}
	return l.CheckWritten(ctx, removed, written, deleted, inserted)
}

// CheckWritten is Check for a commit whose added files hold written rows.
func (l *Ledger) CheckWritten(ctx context.Context, removed []iceberg.DataFile, written, deleted, inserted int64) error {
	var read int64
	for _, df := range removed {
		f, ok := l.files[df.FilePath()]
		if !ok {
			return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: refusing to commit: data file %s would be removed but none of its rows were read (broken invariant; nothing was committed)", l.what, relPath(l.tbl, df.FilePath()))}
		}
		hidden, err := l.hidden(ctx, f)
		if err != nil {
			return err
		}
		if want := df.Count() - hidden; f.read != want {
			return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: refusing to commit: read %d rows of data file %s, which holds %d live rows (%d in its manifest entry, %d deleted); the rewrite would lose or duplicate rows (broken invariant; nothing was committed)", l.what, f.read, relPath(l.tbl, df.FilePath()), want, df.Count(), hidden)}
		}
		read += f.read
	}
	if TestHookLedger != nil {
		written = TestHookLedger(written)
	}
	if want := read - deleted + inserted; written != want {
		return &Error{State: StateInternal, Msg: fmt.Sprintf("%s: refusing to commit: the new data files hold %d rows, but %d rows read from the %d replaced files − %d deleted + %d inserted make %d (broken invariant; nothing was committed)", l.what, written, read, len(removed), deleted, inserted, want)}
	}
	return nil
}

// hidden is how many rows of task's file its delete files hide.
func (l *Ledger) hidden(ctx context.Context, f *ledgerFile) (int64, error) {
	task := f.task
	if f.known || !scan.HasDeletes(task) {
		return f.hidden, nil
	}
	pd := NewPositionDeletes(l.tbl, l.scan, l.what, l.mem)
	fd := pd.File(task)
	if err := fd.load(ctx); err != nil {
		return 0, err
	}
	f.hidden, f.known = int64(len(fd.deleted)), true
	return f.hidden, nil
}
