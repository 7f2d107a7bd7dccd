package sqllogic

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

// Record is one test case of a file.
type Record struct {
	Line    int    // 1-based line of the record's first line
	Kind    string // "statement" or "query"
	Error   string // expected error substring ("statement error …")
	Types   string
	RowSort bool
	SQL     string
	// Expected is the result lines (queries).
	Expected []string
	// header is the record's first line as written.
	header string
	// comments are the comment lines (and the blank lines among them)
	// before the record, which -rewrite writes back.
	comments []string
}

// Parse reads the records of an .slt file.
func Parse(text string) ([]*Record, error) {
	var out []*Record
	var pending []string
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t")
		if strings.HasPrefix(line, "#") {
			pending = append(pending, line)
			continue
		}
		if line == "" {
			if len(pending) > 0 && pending[len(pending)-1] != "" {
				pending = append(pending, "")
			}
			continue
		}
		f := strings.Fields(line)
		r := &Record{Line: i + 1, Kind: f[0], header: line, comments: pending}
		pending = nil
		switch f[0] {
		case "statement":
			if len(f) < 2 || (f[1] != "ok" && f[1] != "error") {
				return nil, fmt.Errorf("line %d: expected `statement ok` or `statement error <text>`", i+1)
			}
			if f[1] == "error" {
				r.Error = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(line, "statement")), "error"))
			}
		case "query":
			if len(f) < 2 {
				return nil, fmt.Errorf("line %d: expected `query <types> [rowsort]`", i+1)
			}
			r.Types = f[1]
			for _, opt := range f[2:] {
				switch opt {
				case "rowsort":
					r.RowSort = true
				default:
					return nil, fmt.Errorf("line %d: unknown query option %q", i+1, opt)
				}
			}
		default:
			return nil, fmt.Errorf("line %d: unknown record %q; records start with statement or query", i+1, f[0])
		}
		var sql []string
		i++
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != "" && lines[i] != "----"; i++ {
			sql = append(sql, lines[i])
		}
		r.SQL = strings.Join(sql, "\n")
		if i < len(lines) && lines[i] == "----" {
			if r.Kind != "query" {
				return nil, fmt.Errorf("line %d: ---- after a statement record", i+1)
			}
			i++
			for ; i < len(lines) && lines[i] != ""; i++ {
				r.Expected = append(r.Expected, lines[i])
			}
		}
		if r.SQL == "" {
			return nil, fmt.Errorf("line %d: record without SQL", r.Line)
		}
		out = append(out, r)
	}
	return out, nil
}

// Options configure a run.
type Options struct {
	// TestData replaces __TESTDATA__ in SQL.
	TestData string
	// Rewrite writes actual results back to the file instead of failing.
	Rewrite bool
	// TableDefaults are table properties every table of the run gets
	// (lake.WithTableDefaults).
	TableDefaults map[string]string
	// Executor, when set, runs the file's statements instead of an
	// in-process session on the fresh lake: a front door under test
	// (the PostgreSQL server). It is called once per file.
	Executor func(t *testing.T, lk *lake.Lake) Executor
	// Open, when set, opens the fresh lake instead of a directory under
	// dir (a lake in an object store); the runner closes it.
	Open func(t *testing.T, dir string, opts ...lake.Option) (*lake.Lake, error)
}

// Executor runs one record's SQL and returns its rows rendered as the
// .slt files expect (Render's forms, one tab-separated line per row, in
// the statement's order); nil for a statement. A DML statement without
// RETURNING returns its count as one row, as lake's Result does.
type Executor interface {
	Run(ctx context.Context, sql string, r *Record) ([]string, error)
}

type sessionExecutor struct{ sess *lake.Session }

func (e sessionExecutor) Run(ctx context.Context, sql string, r *Record) ([]string, error) {
	return run(ctx, e.sess, sql, r)
}

// RunFile runs one .slt file in a fresh lake.
func RunFile(t *testing.T, path string, opts Options) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := Parse(string(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	var lk *lake.Lake
	if opts.Open != nil {
		lk, err = opts.Open(t, dir, lake.WithTableDefaults(opts.TableDefaults))
	} else {
		lk, err = lake.Open(ctx, dir+"/lake", lake.WithTableDefaults(opts.TableDefaults))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	var ex Executor = sessionExecutor{lk.Session()}
	if opts.Executor != nil {
		ex = opts.Executor(t, lk)
	}
	var out strings.Builder
	for _, r := range recs {
		sql := strings.ReplaceAll(r.SQL, "__TESTDATA__", opts.TestData)
		sql = strings.ReplaceAll(sql, "__TEMP__", dir)
		got, qerr := ex.Run(ctx, sql, r)
		if qerr == nil && r.Kind == "query" {
			got = Finish(got, r)
		}
		where := fmt.Sprintf("%s:%d", path, r.Line)
		if len(r.comments) > 0 {
			out.WriteString(strings.Join(r.comments, "\n") + "\n")
		}
		switch {
		case r.Kind == "statement" && r.Error == "":
			if qerr != nil {
				if opts.Rewrite {
					t.Logf("%s: statement failed: %v", where, qerr)
				} else {
					t.Errorf("%s: statement failed: %v\n%s", where, qerr, r.SQL)
				}
			}
			fmt.Fprintf(&out, "%s\n%s\n\n", r.header, r.SQL)
		case r.Kind == "statement":
			if qerr == nil {
				t.Errorf("%s: statement succeeded, expected error containing %q\n%s", where, r.Error, r.SQL)
			} else if !strings.Contains(qerr.Error(), r.Error) {
				t.Errorf("%s: error %q does not contain %q", where, qerr.Error(), r.Error)
			}
			fmt.Fprintf(&out, "%s\n%s\n\n", r.header, r.SQL)
		default:
			if qerr != nil {
				t.Errorf("%s: query failed: %v\n%s", where, qerr, r.SQL)
				fmt.Fprintf(&out, "%s\n%s\n----\n%s\n\n", r.header, r.SQL, strings.Join(r.Expected, "\n"))
				continue
			}
			if !opts.Rewrite && !slices.Equal(got, r.Expected) {
				t.Errorf("%s: result differs\n%s\n--- want\n%s\n--- got\n%s", where, r.SQL, strings.Join(r.Expected, "\n"), strings.Join(got, "\n"))
			}
			fmt.Fprintf(&out, "%s\n%s\n----\n", r.header, r.SQL)
			for _, l := range got {
				out.WriteString(l + "\n")
			}
			out.WriteString("\n")
		}
	}
	if opts.Rewrite {
		text := strings.TrimRight(out.String(), "\n") + "\n"
		if tail := trailingComments(string(data)); tail != "" {
			text += "\n" + tail
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// run executes one record and renders its rows.
//
// A DML statement's reported row movement is checked against its
// target's row count before and after: inserted − deleted must be the
// change (the strategies report +inserted ~updated -deleted per model from
// these counts, and a differential run found them off).
func run(ctx context.Context, sess *lake.Session, sql string, r *Record) ([]string, error) {
	target := dmlTarget(sql)
	before := int64(-1)
	if target != "" {
		before = countRows(ctx, sess, target)
	}
	res, err := sess.SQL(ctx, sql)
	if err != nil {
		return nil, err
	}
	batches, err := res.Collect(ctx)
	if err != nil {
		return nil, err
	}
	if before >= 0 {
		if after := countRows(ctx, sess, target); after >= 0 {
			m := res.Metrics()
			if after-before != m.RowsInserted-m.RowsDeleted {
				for _, b := range batches {
					b.Release()
				}
				return nil, fmt.Errorf("the statement reported +%d ~%d -%d rows, but %s went from %d to %d rows", m.RowsInserted, m.RowsUpdated, m.RowsDeleted, target, before, after)
			}
		}
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	if r.Kind != "query" {
		return nil, nil
	}
	if n := res.Schema().NumFields(); n != len(r.Types) {
		return nil, fmt.Errorf("query returned %d columns, the record declares %d (%s)", n, len(r.Types), r.Types)
	}
	var rows []string
	for _, b := range batches {
		cols := make([][]string, b.NumCols())
		for j := range cols {
			cols[j], err = render(b.Column(j))
			if err != nil {
				return nil, err
			}
		}
		for i := 0; i < int(b.NumRows()); i++ {
			vals := make([]string, len(cols))
			for j := range cols {
				vals[j] = cols[j][i]
			}
			rows = append(rows, strings.Join(vals, "\t"))
		}
	}
	return rows, nil
}

// Finish masks what changes from run to run in a query's rows and sorts
// them for rowsort records.
func Finish(rows []string, r *Record) []string {
	for i := range rows {
		rows[i] = mask(rows[i])
	}
	if r.RowSort {
		slices.Sort(rows)
	}
	// a value of several lines (SHOW CREATE TABLE's statement) is
	// expected as that many lines, since a record's results end at the
	// first blank line
	var out []string
	for _, row := range rows {
		out = append(out, strings.Split(row, "\n")...)
	}
	return out
}

// dmlTarget is the table a lone INSERT, UPDATE, DELETE, MERGE or TRUNCATE
// of one table writes, or "".
func dmlTarget(sql string) string {
	stmts, err := parser.Parse(sql)
	if err != nil || len(stmts) != 1 {
		return ""
	}
	switch st := stmts[0].(type) {
	case *parser.Insert:
		return st.Table.String()
	case *parser.Update:
		return st.Table.Name.String()
	case *parser.Delete:
		return st.Table.Name.String()
	case *parser.Merge:
		return st.Target.String()
	case *parser.Truncate:
		if len(st.Tables) == 1 {
			return st.Tables[0].String()
		}
	}
	return ""
}

// countRows is the table's row count, or -1 when it cannot be read (it
// does not exist yet: the statement's own error then stands).
func countRows(ctx context.Context, sess *lake.Session, table string) int64 {
	res, err := sess.SQL(ctx, "SELECT count(*) FROM "+table)
	if err != nil {
		return -1
	}
	batches, err := res.Collect(ctx)
	if err != nil || len(batches) == 0 {
		return -1
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	c, ok := batches[0].Column(0).(*array.Int64)
	if !ok || c.Len() != 1 {
		return -1
	}
	return c.Value(0)
}

// Render prints a column's values as the .slt files expect.
func Render(a arrow.Array) ([]string, error) { return render(a) }

// render prints a column's values as the .slt files expect.
func render(a arrow.Array) ([]string, error) {
	out := make([]string, a.Len())
	switch c := a.(type) {
	case *array.Boolean:
		for i := range out {
			out[i] = strconv.FormatBool(c.Value(i))
		}
	case *array.String:
		for i := range out {
			out[i] = c.Value(i)
			if out[i] == "" {
				out[i] = "(empty)"
			}
		}
	default:
		// floats too: Postgres's text form (946684800, 1e+15), not Go's
		cast, err := exec.NewCast(&exec.Column{Index: 0, Type: a.DataType()}, arrow.BinaryTypes.String, false)
		if err != nil {
			return nil, err
		}
		batch := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "v", Type: a.DataType(), Nullable: true}}, nil), []arrow.Array{a}, int64(a.Len()))
		defer batch.Release()
		s, err := cast.Eval(exec.NewEvalContext(context.Background()), batch)
		if err != nil {
			return nil, err
		}
		defer s.Release()
		for i := range out {
			if b, ok := s.(*array.Binary); ok {
				out[i] = string(b.Value(i))
			} else {
				out[i] = s.ValueStr(i)
			}
		}
	}
	for i := range out {
		if a.IsNull(i) {
			out[i] = "NULL"
		}
	}
	return out, nil
}

var snapshotRE = regexp.MustCompile(`@[0-9]{6,}`)

// mask hides what changes from run to run in EXPLAIN output: snapshot ids
// (written @<snapshot>) and timings (time=?).
func mask(s string) string {
	return plan.MaskTimings(snapshotRE.ReplaceAllString(s, "@<snapshot>"))
}

// trailingComments is the comment block that ends an .slt file, after its
// last record, for -rewrite to keep.
func trailingComments(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	i := len(lines)
	for i > 0 && (strings.HasPrefix(lines[i-1], "#") || strings.TrimSpace(lines[i-1]) == "") {
		i--
	}
	tail := strings.TrimLeft(strings.Join(lines[i:], "\n"), "\n")
	if tail == "" {
		return ""
	}
	return tail + "\n"
}
