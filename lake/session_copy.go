package lake

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/skadedb/skade/parser"
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
			v, err := constString(opt.Value)
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
			src = fmt.Sprintf("read_csv(%s, header = %v, delim = %s)", sqlString(st.File), o.header, sqlString(string(o.delim)))
		}
		cols := ""
		if len(st.Columns) > 0 {
			var names []string
			for _, c := range st.Columns {
				names = append(names, c.String())
			}
			cols = "(" + strings.Join(names, ", ") + ")"
		}
		ins, err := parser.ParseOne(fmt.Sprintf("INSERT INTO %s %s SELECT * FROM %s", st.Table.String(), cols, src))
		if err != nil {
			return nil, fmt.Errorf("copy from %s: %w", st.File, err)
		}
		return s.insert(ctx, ins.(*parser.Insert), now)
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
	// write to a temporary file and rename, so a failed COPY leaves no
	// half-written file behind
	tmp := st.File + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("copy to %s: %w", st.File, err)}
	}
	n, werr := writeResult(ctx, f, res, o)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return nil, translate(fmt.Errorf("copy to %s: %w", st.File, werr))
	}
	if err := os.Rename(tmp, st.File); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("copy to %s: %w", st.File, err)
	}
	return countResult(n, Metrics{}), nil
}

func writeResult(ctx context.Context, w io.Writer, res *Result, o copyOptions) (int64, error) {
	var n int64
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
	}
	return n, closeFn()
}
