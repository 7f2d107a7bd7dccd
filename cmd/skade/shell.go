package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/parser"
)

// errInterrupted is the cause of a statement cancelled with Ctrl-C.
var errInterrupted = errors.New("interrupted")

// errReported marks an error already printed to the user; callers only
// count it (for the exit code and --bail).
var errReported = errors.New("error reported")

// shell runs statements and dot commands against one session and prints
// their results. The REPL and scripts share it.
type shell struct {
	ctx     context.Context
	lk      *lake.Lake
	sess    *lake.Session
	stdout  io.Writer // where results go unless .output redirects them
	stderr  io.Writer
	out     io.Writer // the current output
	outFile *os.File  // .output's file, closed when replaced

	mode        string
	timer       bool
	maxRows     int  // table mode rows shown; 0 for all
	interactive bool // a person at a terminal: fit widths, colour NULLs
	progress    bool // draw a progress bar on stderr
	vars        map[string]string

	// source names the script being run, for error positions ("" at the prompt).
	source string
	// readDepth guards .read against a file that reads itself.
	readDepth int
	// noHeaders, insertTable and maxWidth are .headers off, .mode
	// insert's table and .maxwidth.
	noHeaders   bool
	insertTable string
	maxWidth    int
	// widths are .width's column widths (0: fit); changes is .changes,
	// totalChanges the rows the session's writes changed
	widths       []int
	changes      bool
	totalChanges int64
	// lakeDir is where the lake is (.databases, .open), catalogFile an
	// s3:// lake's catalog (--catalog).
	lakeDir, catalogFile string
	// prevMode is the mode \x left, to go back to.
	prevMode string
	// onceFile is .once's file, closed after the next statement, when
	// output goes back to onceRestore.
	onceFile    *os.File
	onceRestore io.Writer
}

// endOnce closes .once's file after the statement that wrote to it.
func (sh *shell) endOnce() {
	if sh.onceFile == nil {
		return
	}
	sh.onceFile.Close()
	sh.out, sh.onceFile, sh.onceRestore = sh.onceRestore, nil, nil
}

func newShell(ctx context.Context, lk *lake.Lake, stdout, stderr io.Writer) *shell {
	return &shell{ctx: ctx, lk: lk, sess: lk.Session(), stdout: stdout, stderr: stderr, out: stdout, mode: "table", vars: map[string]string{}}
}

// close ends the shell: an open transaction is rolled back, as when a
// Postgres session ends, and says so.
func (sh *shell) close() {
	sh.rollback("the shell ended before COMMIT")
	sh.closeOutput()
}

// rollback ends an open transaction, saying why.
func (sh *shell) rollback(why string) {
	if sh.sess.InTransaction() {
		if err := sh.sess.Close(); err != nil {
			fmt.Fprintf(sh.stderr, "Error: %v\n", err)
		} else {
			fmt.Fprintf(sh.stderr, "The open transaction was rolled back (%s).\n", why)
		}
	}
}

// closeOutput closes the files .output and .once write to.
func (sh *shell) closeOutput() {
	if sh.outFile != nil {
		sh.outFile.Close()
		sh.outFile = nil
	}
	sh.endOnce()
}

// varRef is ${name}, the shell's variable syntax (set with .let).
var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${name} with the variable's value.
func (sh *shell) expand(text string) (string, error) {
	var missing string
	out := varRef.ReplaceAllStringFunc(text, func(m string) string {
		name := strings.ToLower(m[2 : len(m)-1])
		v, ok := sh.vars[name]
		if !ok && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", fmt.Errorf("variable ${%s} is not set; set it with .let %s VALUE (.help lists the variables the shell sets)", missing, missing)
	}
	return out, nil
}

// statement runs one SQL statement; line is where it starts in its
// source, for error messages. A returned error has been printed.
func (sh *shell) statement(text string, line int) error {
	defer sh.endOnce()
	text, err := sh.expand(text)
	if err != nil {
		sh.errorf(line, "%v", err)
		return errReported
	}
	stmt, err := parser.ParseOne(text)
	if err != nil {
		sh.reportError(text, line, err)
		return errReported
	}
	// At the prompt Ctrl-C cancels the statement; in a script it stops
	// the whole command (main's default).
	ctx, done := sh.ctx, func() {}
	if sh.interactive {
		ctx, done = statementContext(sh.ctx)
	}
	defer done()
	bar := sh.startProgress()
	ctx = bar.context(ctx)
	start := time.Now()
	res, err := sh.sess.Run(ctx, stmt) // parsed once, above
	if err != nil {
		bar.stop()
		sh.reportError(text, line, sh.cause(ctx, err))
		return errReported
	}
	defer res.Close()
	for _, n := range res.Notices() {
		fmt.Fprintf(sh.stderr, "NOTICE:  %s\n", n)
	}
	if kind, target := dmlTarget(stmt); kind != "" {
		err = sh.dml(ctx, res, kind, target, bar, start)
	} else if res.Schema().NumFields() == 0 {
		bar.stop()
		if sh.mode == "table" || sh.mode == "line" {
			fmt.Fprintln(sh.out, statementTag(stmt))
		}
	} else {
		err = sh.render(ctx, res, bar, start)
	}
	if err != nil {
		sh.reportError(text, line, sh.cause(ctx, err))
		return errReported
	}
	if sh.timer && sh.mode != "table" {
		fmt.Fprintf(sh.out, "Run Time: %s\n", formatElapsed(time.Since(start)))
	}
	return nil
}

// cause turns a cancellation by Ctrl-C into a plain "interrupted".
func (sh *shell) cause(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errInterrupted) || sh.ctx.Err() != nil {
		return errInterrupted
	}
	return err
}

// render streams a query's result into the current mode.
func (sh *shell) render(ctx context.Context, res *lake.Result, bar *progressBar, start time.Time) error {
	rdr := res.Reader()
	defer rdr.Release()
	out := sh.out
	if out == sh.stdout {
		// The bar and the results share the terminal.
		out = bar.writer(out)
	}
	r := newRenderer(sh.mode, out, sh.renderOptions())
	r.header(columnsOf(res.Schema()))
	var total int64
	for rdr.Next() {
		b := rdr.RecordBatch()
		rows, err := sh.rowsToShow(ctx, b, total)
		if err != nil {
			bar.stop()
			return err
		}
		total += b.NumRows()
		bar.rows(total)
		for _, row := range rows {
			r.row(row)
		}
	}
	bar.stop()
	if err := rdr.Err(); err != nil {
		return err
	}
	r.done(total, time.Since(start))
	return nil
}

// rowsToShow formats the rows of b the table will show; rows past
// .maxrows are counted, not formatted.
func (sh *shell) rowsToShow(ctx context.Context, b arrow.RecordBatch, seen int64) ([][]cell, error) {
	if sh.mode == "table" && sh.maxRows > 0 {
		left := int64(sh.maxRows) - seen
		if left <= 0 {
			return nil, nil
		}
		if left < b.NumRows() {
			b = b.NewSlice(0, left)
			defer b.Release()
		}
	}
	return batchRows(ctx, b)
}

func (sh *shell) renderOptions() renderOptions {
	o := renderOptions{maxRows: sh.maxRows, timer: sh.timer, noHeaders: sh.noHeaders, insertTable: sh.insertTable, widths: sh.widths}
	if sh.interactive && sh.out == sh.stdout {
		o.width = terminalWidth(sh.stdout)
		o.colour = isTerminal(sh.stdout)
	}
	if sh.maxWidth > 0 {
		o.width = sh.maxWidth
	}
	return o
}

// dml prints what a write changed: the count and the snapshot it made.
func (sh *shell) dml(ctx context.Context, res *lake.Result, kind, target string, bar *progressBar, start time.Time) error {
	bs, err := res.Collect(ctx)
	bar.stop()
	if err != nil {
		return err
	}
	var count int64
	for _, b := range bs {
		if b.NumCols() == 1 && b.NumRows() == 1 {
			if c, ok := b.Column(0).(*array.Int64); ok {
				count = c.Value(0)
			}
		}
		b.Release()
	}
	snap := res.Metrics().SnapshotID
	if snap != 0 {
		sh.vars["snapshot"] = fmt.Sprint(snap)
	}
	switch sh.mode {
	case "table", "line":
		var notes []string
		if snap != 0 {
			notes = append(notes, fmt.Sprintf("snapshot %d", snap))
		} else if res.Metrics().Staged {
			notes = append(notes, "staged; commits with COMMIT")
		} else if count == 0 {
			notes = append(notes, "no new snapshot")
		}
		if sh.timer && sh.mode == "table" {
			notes = append(notes, formatElapsed(time.Since(start)))
		}
		msg := fmt.Sprintf("%s %s", kind, plural(count, "row", "rows"))
		if m := res.Metrics(); (kind == "merged" || kind == "upserted") && count > 0 {
			// A merge's count is the sum of what each kind of clause did.
			var parts []string
			for _, p := range []struct {
				n    int64
				verb string
			}{{m.RowsUpdated, "updated"}, {m.RowsDeleted, "deleted"}, {m.RowsInserted, "inserted"}} {
				if p.n > 0 {
					parts = append(parts, fmt.Sprintf("%d %s", p.n, p.verb))
				}
			}
			if len(parts) > 0 {
				msg += ": " + strings.Join(parts, ", ")
			}
		}
		if len(notes) > 0 {
			msg += " (" + strings.Join(notes, ", ") + ")"
		}
		fmt.Fprintln(sh.out, msg)
	default:
		r := newRenderer(sh.mode, sh.out, renderOptions{})
		r.header([]column{{name: "count", typ: "bigint", numeric: true}, {name: "snapshot", typ: "bigint", numeric: true}})
		sc := cell{text: fmt.Sprint(snap)}
		if snap == 0 {
			sc = cell{text: "NULL", null: true}
		}
		r.row([]cell{{text: fmt.Sprint(count)}, sc})
		r.done(1, 0)
	}
	sh.totalChanges += count
	if sh.changes {
		// SQLite's .changes line
		fmt.Fprintf(sh.out, "changes: %d   total_changes: %d\n", count, sh.totalChanges)
	}
	return nil
}

// dmlTarget names the kind of write a statement is and the table it
// writes, or "" for a statement that returns rows or nothing. A write with
// RETURNING returns rows, and is printed as a query.
func dmlTarget(stmt parser.Stmt) (kind, table string) {
	switch st := stmt.(type) {
	case *parser.Insert:
		if len(st.Returning) == 0 {
			if st.OnConflict != nil {
				return "upserted", st.Table.String()
			}
			return "inserted", st.Table.String()
		}
	case *parser.Update:
		if len(st.Returning) == 0 {
			return "updated", st.Table.Name.String()
		}
	case *parser.Delete:
		if len(st.Returning) == 0 {
			return "deleted", st.Table.Name.String()
		}
	case *parser.Merge:
		if len(st.Returning) == 0 {
			return "merged", st.Target.String()
		}
	case *parser.CreateTable:
		if st.AsQuery != nil {
			return "created " + st.Name.String() + " with", st.Name.String()
		}
	}
	return "", ""
}

// statementTag is what a statement without rows prints, as psql does.
func statementTag(stmt parser.Stmt) string {
	switch stmt.(type) {
	case *parser.CreateTable:
		return "CREATE TABLE"
	case *parser.DropTable:
		return "DROP TABLE"
	case *parser.AlterTable:
		return "ALTER TABLE"
	case *parser.CreateView:
		return "CREATE VIEW"
	case *parser.DropView:
		return "DROP VIEW"
	}
	words := strings.Fields(stmt.String())
	if len(words) == 0 {
		return "OK"
	}
	return strings.ToUpper(words[0])
}

// errorf prints a shell error (one that has no statement text to point into).
func (sh *shell) errorf(line int, format string, args ...any) {
	fmt.Fprintf(sh.stderr, "%s%s\n", sh.where(line), "Error: "+fmt.Sprintf(format, args...))
}

func (sh *shell) where(line int) string {
	if sh.source == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d: ", sh.source, line)
}
