package lake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

// COPY … FROM STDIN and COPY … TO STDOUT stream between the statement and
// a client connection, which only a front door has (server/pgwire). The
// door decodes the client's rows; lake types and inserts them.

// errCopyStdio is what COPY FROM STDIN or TO STDOUT returns outside a
// client connection.
var errCopyStdio = &sentinelError{ErrInvalidArgument, errors.New("copy: STDIN and STDOUT need a client connection (skade serve, then psql's \\copy or a driver's COPY); in the shell or the Go API, COPY from or to a file")}

// CopyColumn is a column COPY … FROM STDIN fills.
type CopyColumn struct {
	Name string
	Type arrow.DataType
}

// CopyColumns are the columns a COPY … FROM STDIN fills, in the order
// each row gives their values: the statement's column list, or every
// column of the table.
func (s *Session) CopyColumns(ctx context.Context, st *parser.Copy) ([]CopyColumn, error) {
	if st == nil || st.To || !st.Stdio {
		return nil, &sentinelError{ErrInvalidArgument, errors.New("copy columns: not a COPY … FROM STDIN")}
	}
	_, ref, err := s.lookup(ctx, st.Table)
	if err != nil {
		return nil, translate(err)
	}
	all, err := plan.TargetColumns(ref)
	if err != nil {
		return nil, err
	}
	if len(st.Columns) == 0 {
		out := make([]CopyColumn, len(all))
		for i, c := range all {
			out[i] = CopyColumn{c.Name, c.Type}
		}
		return out, nil
	}
	var out []CopyColumn
	for _, c := range st.Columns {
		name := identText(c)
		i := slices.IndexFunc(all, func(t plan.TargetColumn) bool { return strings.EqualFold(t.Name, name) })
		if i < 0 {
			var names []string
			for _, t := range all {
				names = append(names, t.Name)
			}
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("copy: column %q of relation %q does not exist%s", name, st.Table.String(), plan.DidYouMean(name, names))}
		}
		out = append(out, CopyColumn{all[i].Name, all[i].Type})
	}
	return out, nil
}

// copyStdinSource is the name COPY FROM STDIN's rows are read under.
const copyStdinSource = "copy from stdin"

// CopyFrom runs COPY … FROM STDIN on the rows rdr yields: one column per
// CopyColumns entry, of text (converted to the column's type as
// PostgreSQL's COPY parses text) or already of the column's type (binary
// COPY), NULL for a missing value. The rows are
// appended in one commit (staged, inside a transaction). A
// bad value or a failing rdr (its Err) fails the statement and commits
// nothing. rdr is read once; the caller releases it.
func (s *Session) CopyFrom(ctx context.Context, st *parser.Copy, rdr array.RecordReader) (*Result, error) {
	if s.readOnly {
		return nil, errReadOnlyHandle
	}
	cols, err := s.CopyColumns(ctx, st)
	if err != nil {
		return nil, err
	}
	if rdr.Schema().NumFields() != len(cols) {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("copy: the rows have %d columns for %d target columns (copy bug)", rdr.Schema().NumFields(), len(cols))}
	}
	if _, taken := s.sources[copyStdinSource]; taken {
		return nil, &sentinelError{ErrInvalidArgument, errors.New("copy: another COPY FROM STDIN is running in this session")}
	}
	rdr.Retain()
	s.sources[copyStdinSource] = &readerSource{name: copyStdinSource, rdr: rdr}
	defer func() {
		delete(s.sources, copyStdinSource)
		rdr.Release()
	}()
	names := make([]string, len(cols))
	items := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quoteIdent(c.Name)
		src := quoteIdent(rdr.Schema().Field(i).Name)
		items[i] = src
		if c.Type.ID() != arrow.STRING {
			items[i] = fmt.Sprintf("CAST(%s AS %s)", src, exec.TypeName(c.Type))
		}
	}
	text := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", st.Table.String(), strings.Join(names, ", "), strings.Join(items, ", "), quoteIdent(copyStdinSource))
	ins, err := parser.ParseOne(text)
	if err != nil {
		return nil, fmt.Errorf("copy: %w (copy bug)", err)
	}
	res, err := s.run(ctx, ins)
	return res, sqlError(err)
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// InFailedTransaction reports whether the open transaction was aborted
// by an error: until ROLLBACK (or COMMIT, which rolls it back) every
// statement fails with ErrTxAborted.
func (s *Session) InFailedTransaction() bool { return s.tx != nil && s.tx.aborted != nil }
