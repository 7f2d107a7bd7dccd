package lake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
	"github.com/skadedb/skade/scan"
)

// copyOptions are COPY's (FORMAT …, HEADER, DELIMITER …).
type copyOptions struct {
	format string // "csv" or "parquet"
	header bool
	delim  rune
}

func parseCopyOptions(st *parser.Copy) (copyOptions, error) {
	o := copyOptions{header: true, delim: ','}
	switch strings.ToLower(filepath.Ext(st.File)) {
	case ".parquet", ".pq":
		o.format = "parquet"
	default:
		o.format = "csv"
	}
	for _, opt := range st.Options {
		val := ""
		if opt.Value != nil {
			v, err := plan.PropertyValue(opt.Value)
			if err != nil {
				return o, err
			}
			val = v
		}
		switch opt.Name {
		case "FORMAT":
			o.format = strings.ToLower(val)
			if o.format != "csv" && o.format != "parquet" {
				return o, fmt.Errorf("unknown FORMAT %q; use csv or parquet", val)
			}
		case "HEADER":
			o.header = val == "" || strings.EqualFold(val, "true") || val == "1" || strings.EqualFold(val, "on")
		case "DELIMITER", "DELIM", "SEP":
			if len([]rune(val)) != 1 {
				return o, fmt.Errorf("DELIMITER must be one character, not %q", val)
			}
			o.delim = []rune(val)[0]
		default:
			return o, fmt.Errorf("unknown COPY option %s; the options are FORMAT, HEADER and DELIMITER", opt.Name)
		}
	}
	return o, nil
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// copyStmt runs COPY FROM (an INSERT from read_csv/read_parquet) and
// COPY TO (a query written to a CSV or Parquet file).
func (s *Session) copyStmt(ctx context.Context, st *parser.Copy, now time.Time) (*Result, error) {
	if st.Stdio {
		return nil, errCopyStdio
	}
	o, err := parseCopyOptions(st)
	if err != nil {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("copy: %w", err)}
	}
	if !st.To {
		if s.readOnly {
			return nil, errReadOnlyHandle
		}
		src := fmt.Sprintf("read_parquet(%s)", sqlString(st.File))
		if o.format == "csv" {
			src = fmt.Sprintf("read_csv(%s, header = %v, delim = %s, quote = '\"', escape = '\"')", sqlString(st.File), o.header, sqlString(string(o.delim)))
		}
		cols := ""
		if len(st.Columns) > 0 {
			var names []string
			for _, c := range st.Columns {
				names = append(names, c.String())
			}
			cols = "(" + strings.Join(names, ", ") + ")"
		}
		sel := "*"
		if o.format == "csv" {
			sel = s.copyCSVColumns(ctx, st, o)
		}
		ins, err := parser.ParseOne(fmt.Sprintf("INSERT INTO %s %s SELECT %s FROM %s", st.Table.String(), cols, sel, src))
		if err != nil {
			return nil, fmt.Errorf("copy from %s: %w", st.File, err)
		}
		return s.insert(ctx, ins.(*parser.Insert), now)
	}
	if st.DML != nil {
		return s.copyDMLTo(ctx, st, o, now)
	}
	q := st.Query
	if q == nil {
		text := "SELECT * FROM " + st.Table.String()
		if len(st.Columns) > 0 {
			var names []string
			for _, c := range st.Columns {
				names = append(names, c.String())
			}
			text = "SELECT " + strings.Join(names, ", ") + " FROM " + st.Table.String()
		}
		stmt, err := parser.ParseOne(text)
		if err != nil {
			return nil, err
		}
		q = stmt.(*parser.Query)
	}
	res, err := s.query(ctx, q, now)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	tmp, n, err := writeTemp(ctx, st.File, res, o)
	if err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, st.File); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("copy to %s: %w", st.File, err)
	}
	return countResult(n, Metrics{}), nil
}

// writeTemp writes res to a temporary file beside file, for the caller to
// rename into place, so that a failed COPY leaves no half-written file
// behind; on error nothing is left.
func writeTemp(ctx context.Context, file string, res *Result, o copyOptions) (tmp string, n int64, err error) {
	tmp = file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return "", 0, &sentinelError{ErrInvalidArgument, fmt.Errorf("copy to %s: %w", file, err)}
	}
	n, werr := writeResult(ctx, f, res, o)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return "", 0, fmt.Errorf("copy to %s: %w", file, werr)
	}
	return tmp, n, nil
}

// copyCSVColumns is the select list COPY FROM reads a CSV file with. The
// file's column types are inferred, and a column with no value to infer
// from (all empty, or a file of only a header) comes out as text, which an
// INSERT does not assign to another type; like Postgres, which parses
// COPY's text by the target column's type, such a column is cast to its
// target column's type. "*" when nothing needs a cast, or when the file or
// the columns do not line up (the INSERT then reports that).
func (s *Session) copyCSVColumns(ctx context.Context, st *parser.Copy, o copyOptions) string {
	opts := scan.DefaultCSVOptions()
	// COPY says what the file is (PostgreSQL's defaults otherwise):
	// nothing is sniffed
	opts.Header, opts.Delimiter, opts.SniffHeader = o.header, o.delim, false
	opts.Quote, opts.Escape = '"', '"'
	rdr, err := scan.OpenCSV(st.File, opts)
	if err != nil {
		return "*"
	}
	file := rdr.Schema()
	rdr.Release()
	_, ref, err := s.lookup(ctx, st.Table)
	if err != nil {
		return "*"
	}
	all, err := plan.TargetColumns(ref)
	if err != nil {
		return "*"
	}
	targets := all
	if len(st.Columns) > 0 {
		targets = nil
		for _, c := range st.Columns {
			i := slices.IndexFunc(all, func(t plan.TargetColumn) bool { return strings.EqualFold(t.Name, identText(c)) })
			if i < 0 {
				return "*"
			}
			targets = append(targets, all[i])
		}
	}
	if len(targets) != file.NumFields() {
		return "*"
	}
	items := make([]string, len(targets))
	cast := false
	for i, f := range file.Fields() {
		items[i] = `"` + strings.ReplaceAll(f.Name, `"`, `""`) + `"`
		if f.Type.ID() != arrow.STRING || targets[i].Type.ID() == arrow.STRING || !castableFromText(targets[i].Type) {
			continue
		}
		items[i] = fmt.Sprintf("CAST(%s AS %s)", items[i], exec.TypeName(targets[i].Type))
		cast = true
	}
	if !cast {
		return "*"
	}
	return strings.Join(items, ", ")
}

// castableFromText reports whether COPY FROM casts a text column to t.
func castableFromText(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL128, arrow.DATE32, arrow.TIMESTAMP:
		return true
	}
	return false
}

func writeResult(ctx context.Context, w io.Writer, res *Result, o copyOptions) (int64, error) {
	var n int64
	wrote := false
	schema := res.Schema()
	var write func(arrow.RecordBatch) error
	var closeFn func() error
	if o.format == "csv" {
		cw := csv.NewWriter(w, schema, csv.WithHeader(o.header), csv.WithComma(o.delim), csv.WithNullWriter(""))
		write, closeFn = cw.Write, func() error { cw.Flush(); return cw.Error() }
	} else {
		// hide Close: the parquet writer would close the file, which the
		// caller closes
		pw, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{w}, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
		if err != nil {
			return 0, err
		}
		write, closeFn = pw.Write, pw.Close
	}
	for {
		b, err := res.next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			closeFn()
			return 0, err
		}
		n += b.NumRows()
		err = write(b)
		b.Release()
		if err != nil {
			closeFn()
			return 0, err
		}
		wrote = true
	}
	if !wrote && o.format == "csv" && o.header {
		// the header even without rows, as Postgres writes it: the file
		// still says which columns it has
		bld := array.NewRecordBuilder(memoryAllocator, schema)
		empty := bld.NewRecordBatch()
		bld.Release()
		err := write(empty)
		empty.Release()
		if err != nil {
			closeFn()
			return 0, err
		}
	}
	return n, closeFn()
}

// errCopyDMLReturning refuses COPY of a statement that returns no rows.
var errCopyDMLReturning = &sentinelError{ErrInvalidArgument, errors.New("COPY (INSERT|UPDATE|DELETE|MERGE …) needs a RETURNING clause: COPY writes the rows it returns")}

// copyDMLTo runs COPY (INSERT|UPDATE|DELETE|MERGE … RETURNING …) TO
// 'file': the statement and the file go together. The rows are written to
// a temporary file while the statement's change is staged, and the file
// takes its name only once the change has committed (inside BEGIN, once
// the statement succeeded: files are not transactional); a statement or a
// write that fails leaves neither a change nor a file.
func (s *Session) copyDMLTo(ctx context.Context, st *parser.Copy, o copyOptions, now time.Time) (*Result, error) {
	if s.readOnly {
		return nil, errReadOnlyHandle
	}
	if !parser.HasReturning(st.DML) {
		return nil, errCopyDMLReturning
	}
	var tmp string
	res, err := s.autocommit(ctx, func() (*Result, error) {
		rows, err := s.runPlanned(ctx, st.DML, now)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var n int64
		if tmp, n, err = writeTemp(ctx, st.File, rows, o); err != nil {
			return nil, err
		}
		return countResult(n, Metrics{}), nil
	})
	if err != nil {
		if tmp != "" {
			os.Remove(tmp) // written, but the commit failed
		}
		return nil, err
	}
	if err := os.Rename(tmp, st.File); err != nil {
		os.Remove(tmp)
		res.Close()
		return nil, fmt.Errorf("copy to %s: the statement committed, but naming the file failed: %w", st.File, err)
	}
	return res, nil
}
