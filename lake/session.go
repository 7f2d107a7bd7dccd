package lake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
	"github.com/skadedb/skade/scan"
)

// Session runs SQL against the lake. Sessions are not safe for concurrent
// use; open one per goroutine.
//
// A statement flows parser -> plan (bind, optimize, build operators) ->
// exec; DDL and DML are carried out here with the table API, using plan
// to bind their queries, predicates and assignments.
type Session struct {
	lk      *Lake
	sources map[string]plan.Source
	// temps are the sources that are the session's temporary tables
	// (session_temp.go), by lower-case name.
	temps map[string]*tempTable
	// settings are SET variables, by lower-case name.
	settings map[string]string
	// readOnly sessions (a table handle's SQL) refuse writes; pinned pins
	// table names to snapshot ids.
	readOnly bool
	pinned   map[string]int64
	// args are the running statement's parameter values.
	args []any
	// lastCommit is the snapshot the running statement's write committed,
	// for Result.Metrics().SnapshotID; 0 when it committed none.
	lastCommit int64
	// lastStaged: the running statement's write changed a table inside
	// the open transaction (Result.Metrics().Staged).
	lastStaged bool
	// tx is the open transaction, nil in autocommit.
	tx *txn
	// system resolves a front door's system relations (SetSystemTables),
	// oids their OIDs for ::regclass (SetRelationOIDs).
	system SystemTables
	oids   func(name string) (int64, bool)
	// rejects are the rows the session's latest read_csv(…, ignore_errors
	// = true) skipped, the relation csv_rejects; stmts numbers statements
	// for it.
	rejects scan.CSVRejects
	stmts   int64
}

// Session opens a SQL session on the lake.
func (l *Lake) Session() *Session {
	return &Session{lk: l, sources: map[string]plan.Source{}, temps: map[string]*tempTable{}, settings: map[string]string{}}
}

// memoryLimit is the running statement's memory limit: the session's
// memory_limit setting, else the lake's.
func (s *Session) memoryLimit() int64 {
	limit := s.lk.opts.memoryLimit
	if v, ok := s.settings["memory_limit"]; ok {
		if n, err := parseBytes(v); err == nil {
			limit = n
		}
	}
	return limit
}

func (s *Session) planner(now time.Time) *plan.Planner {
	return &plan.Planner{
		Catalog:  sessionCatalog{s},
		Options:  plan.Options{Budget: exec.NewBudget(s.memoryLimit()), ParallelScans: s.settingOn("parallel_scans")},
		Now:      now,
		Pinned:   s.pinned,
		Params:   s.args,
		Settings: s.settings,
	}
}

// SQL runs one statement. A query's result streams: read it (Reader or
// Collect) before running the next statement, or Close it.
//
// args are the values of the statement's parameters $1, $2, … (or ? in
// order): bool, integers, floats, string (which, like a quoted literal,
// takes the type its context needs), []byte, time.Time or nil.
func (s *Session) SQL(ctx context.Context, query string, args ...any) (*Result, error) {
	stmt, err := parser.ParseOne(query)
	if err != nil {
		return nil, statementError(&sentinelError{ErrInvalidArgument, err}, query)
	}
	// more arguments than the statement has parameters is a mistake in
	// the call, as database/sql's other drivers report it (a server's
	// Bind may carry declared but unused ones: Run does not check)
	if n := NumParams(stmt); len(args) > n {
		return nil, statementError(&sentinelError{ErrInvalidArgument, fmt.Errorf("the statement has %d parameters but was given %d arguments", n, len(args))}, query)
	}
	s.args = args
	defer func() { s.args = nil }()
	res, err := s.run(ctx, stmt)
	return res, statementError(sqlError(err), query)
}

// Run runs one statement parsed by parser.ParseOne, for callers that look
// at the statement before running it (the shell prints a DML statement's
// row count and an empty result's tag), so that it is parsed once. It is
// SQL otherwise.
func (s *Session) Run(ctx context.Context, stmt parser.Stmt, args ...any) (*Result, error) {
	if stmt == nil {
		return nil, &sentinelError{ErrInvalidArgument, errors.New("run: no statement")}
	}
	s.args = args
	defer func() { s.args = nil }()
	res, err := s.run(ctx, stmt)
	return res, statementError(sqlError(err), "")
}

// sqlError gives a statement's binding errors (unknown columns, type
// mismatches, …) the ErrInvalidArgument sentinel unless they already
// carry one (a missing table is ErrTableNotFound).
func sqlError(err error) error {
	if err == nil {
		return nil
	}
	var s *sentinelError
	if errors.As(err, &s) {
		return err
	}
	var pe *plan.Error
	if errors.As(err, &pe) {
		return &sentinelError{ErrInvalidArgument, err}
	}
	return err
}

// Exec runs a script of statements separated by semicolons, reading and
// discarding each result, and stops at the first error, which names the
// statement's position in the script.
// A script that fails after BEGIN leaves the transaction open and aborted:
// ROLLBACK it (or Close the session).
func (s *Session) Exec(ctx context.Context, script string) error {
	stmts, err := parser.Parse(script)
	if err != nil {
		return statementError(&sentinelError{ErrInvalidArgument, err}, script)
	}
	for i, st := range stmts {
		res, err := s.run(ctx, st)
		err = statementError(sqlError(err), "")
		if err != nil {
			return fmt.Errorf("statement %d (line %d): %w", i+1, st.Position().Line, err)
		}
		bs, err := res.Collect(ctx)
		if err != nil {
			return fmt.Errorf("statement %d (line %d): %w", i+1, st.Position().Line, err)
		}
		for _, b := range bs {
			b.Release()
		}
	}
	return nil
}

var memoryAllocator = memory.DefaultAllocator

// errReadOnlyHandle is what a write through Table.SQL returns.
var errReadOnlyHandle = &sentinelError{ErrReadOnly, errors.New("table handle is read-only; use a session to write")}

// runOnce runs one statement once; run adds the write-retry policy.
// runOnce runs one statement once. Its errors are classified here, once
// for every statement kind: iceberg-go's and the catalog's errors become
// lake's sentinels (translate).
func (s *Session) runOnce(ctx context.Context, stmt parser.Stmt) (*Result, error) {
	res, err := s.runStmt(ctx, stmt)
	return res, translate(err)
}

func (s *Session) runStmt(ctx context.Context, stmt parser.Stmt) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch stmt.(type) {
	case *parser.Begin, *parser.Commit, *parser.Rollback:
		return s.txControl(ctx, stmt)
	}
	if s.tx != nil && s.tx.aborted != nil {
		return nil, &TxAbortedError{Cause: s.tx.aborted}
	}
	now := time.Now()
	if s.tx != nil && !s.tx.implicit {
		// now() is the transaction's start, as in Postgres: every
		// statement of a model's apply stamps the same time
		now = s.tx.start
	}
	switch st := stmt.(type) {
	case *parser.Query:
		if hasDMLWith(st) {
			return s.queryWithDML(ctx, st, now)
		}
		return s.runPlanned(ctx, st, now)
	case *parser.Explain:
		return s.explain(ctx, st, now)
	case *parser.ShowTables:
		return s.showTables(ctx, st)
	case *parser.Describe:
		return s.describe(ctx, st)
	case *parser.ShowTblProperties:
		return s.showTblProperties(ctx, st)
	case *parser.ShowCreateTable:
		return s.showCreateTable(ctx, st)
	case *parser.SetVar:
		return s.set(st)
	case *parser.Show:
		return s.show(st)
	case *parser.Copy:
		return s.copyStmt(ctx, st, now)
	}
	if s.readOnly {
		return nil, errReadOnlyHandle
	}
	switch st := stmt.(type) {
	case *parser.CreateTable:
		return s.createTable(ctx, st, now)
	case *parser.DropTable:
		return s.dropTable(ctx, st)
	case *parser.CreateView:
		return s.createView(ctx, st, now)
	case *parser.Call:
		return s.call(ctx, st)
	case *parser.DropView:
		return s.dropView(ctx, st)
	case *parser.Merge:
		if st.SchemaEvolution {
			return s.mergeWithSchemaEvolution(ctx, st, now)
		}
		return s.runPlanned(ctx, st, now)
	case *parser.Insert, *parser.Delete, *parser.Update:
		return s.runPlanned(ctx, st, now)
	case *parser.Truncate:
		return s.truncate(ctx, st, now)
	case *parser.AlterTable:
		return s.alterTable(ctx, st)
	case *parser.CreateSchema:
		return s.createSchema(ctx, st)
	case *parser.DropSchema:
		return s.dropSchema(ctx, st)
	}
	return nil, &sentinelError{ErrNotImplemented, fmt.Errorf("%s is not supported yet", plan.StatementKind(stmt))}
}

// textResult is a one-column VARCHAR result.
func textResult(column string, rows []string) (*Result, error) {
	schema := arrow.NewSchema([]arrow.Field{{Name: column, Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewStringBuilder(memoryAllocator)
	defer b.Release()
	b.AppendValues(rows, nil)
	arr := b.NewArray()
	defer arr.Release()
	batch := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(len(rows)))
	return &Result{schema: schema, batches: []arrow.RecordBatch{batch}}, nil
}

// countResult is DML's result: one row, one BIGINT column "count".
func countResult(n int64, m Metrics) *Result {
	schema := arrow.NewSchema([]arrow.Field{{Name: "count", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(memoryAllocator)
	defer b.Release()
	b.Append(n)
	arr := b.NewArray()
	defer arr.Release()
	batch := array.NewRecordBatch(schema, []arrow.Array{arr}, 1)
	return &Result{schema: schema, batches: []arrow.RecordBatch{batch}, metrics: m}
}

// emptyResult is the result of a statement that returns nothing.
func emptyResult() *Result { return &Result{schema: arrow.NewSchema(nil, nil)} }

// Register* make a relation visible to this session's SQL under name. A
// name that is already a table in the default namespace, or already
// registered, is refused: registered names shadow nothing.
func (s *Session) register(ctx context.Context, name string, src plan.Source) error {
	lname := strings.ToLower(name)
	if lname == "" || strings.ContainsAny(lname, ".\"") {
		return &sentinelError{ErrInvalidName, fmt.Errorf("register %q: a source name is one plain identifier", name)}
	}
	if _, ok := s.sources[lname]; ok {
		return &sentinelError{ErrInvalidArgument, fmt.Errorf("register %q: the name is already registered in this session; Unregister it first", name)}
	}
	_, err := sessionCatalog{s}.LookupTable(ctx, []string{lname})
	if err == nil {
		return &sentinelError{ErrTableExists, fmt.Errorf("register %q: a table of that name exists; registered names may not shadow tables, choose another name", name)}
	}
	if err != nil && !errors.Is(err, ErrTableNotFound) && !errors.Is(err, ErrInvalidName) {
		return err
	}
	s.sources[lname] = src
	return nil
}

// Unregister removes a registered source (or drops a temporary table).
func (s *Session) Unregister(name string) {
	if t, ok := s.temps[strings.ToLower(name)]; ok {
		t.release()
		delete(s.temps, strings.ToLower(name))
	}
	delete(s.sources, strings.ToLower(name))
}

// CSVOptions configure how RegisterCSV reads a CSV file: the header,
// the delimiter, and the schema when it is not to be inferred.
type CSVOptions = scan.CSVOptions

// DefaultCSVOptions are a header line, commas, and column types inferred
// from a sample of rows.
func DefaultCSVOptions() CSVOptions { return scan.DefaultCSVOptions() }

// RegisterBatch registers an Arrow batch as a relation the session's
// statements can read by name (the MERGE guide's register_batch); the
// session retains the batch. A name that a table or another source
// already has is refused. ctx bounds the check of the lake's tables.
func (s *Session) RegisterBatch(ctx context.Context, name string, batch arrow.RecordBatch) error {
	batch.Retain()
	if err := s.register(ctx, name, &batchSource{batch: batch}); err != nil {
		batch.Release()
		return err
	}
	return nil
}

// RegisterReader registers a stream, which SQL can read once.
func (s *Session) RegisterReader(ctx context.Context, name string, rdr array.RecordReader) error {
	return s.register(ctx, name, &readerSource{name: name, rdr: rdr})
}

// RegisterCSV registers a CSV file, read again by every statement that
// names it; column types are inferred from a sample of rows unless opts
// give a schema.
func (s *Session) RegisterCSV(ctx context.Context, name, path string, opts CSVOptions) error {
	rdr, err := scan.OpenCSV(path, opts)
	if err != nil {
		return &sentinelError{ErrInvalidArgument, err}
	}
	schema := rdr.Schema()
	rdr.Release()
	return s.register(ctx, name, &fileSource{name: name, schema: schema, open: func(ctx context.Context) (array.RecordReader, error) {
		return scan.OpenCSV(path, opts)
	}})
}

// RegisterParquet registers the Parquet files a glob matches.
func (s *Session) RegisterParquet(ctx context.Context, name, glob string) error {
	rdr, err := scan.OpenParquet(ctx, glob)
	if err != nil {
		return &sentinelError{ErrInvalidArgument, err}
	}
	schema := rdr.Schema()
	rdr.Release()
	return s.register(ctx, name, &fileSource{name: name, schema: schema, open: func(ctx context.Context) (array.RecordReader, error) {
		return scan.OpenParquet(ctx, glob)
	}})
}

type batchSource struct{ batch arrow.RecordBatch }

func (b *batchSource) Schema() *arrow.Schema { return b.batch.Schema() }
func (b *batchSource) Operator() (exec.Operator, error) {
	return exec.NewValues(b.batch.Schema(), []arrow.RecordBatch{b.batch})
}

type readerSource struct {
	name string
	rdr  array.RecordReader
	used bool
}

func (r *readerSource) Schema() *arrow.Schema { return r.rdr.Schema() }
func (r *readerSource) Operator() (exec.Operator, error) {
	if r.used {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("registered reader %q was already read; a reader can be read once, register it again", r.name)}
	}
	r.used = true
	return exec.NewReaderSource(r.name, r.rdr.Schema(), func(context.Context) (array.RecordReader, error) {
		r.rdr.Retain()
		return r.rdr, nil
	}), nil
}

type fileSource struct {
	name   string
	schema *arrow.Schema
	open   func(ctx context.Context) (array.RecordReader, error)
}

func (f *fileSource) Schema() *arrow.Schema { return f.schema }
func (f *fileSource) Operator() (exec.Operator, error) {
	return exec.NewReaderSource(f.name, f.schema, f.open), nil
}

// settingOn reports whether a boolean SET variable is on.
// writeBranch is the branch SET write_branch (or Spark's
// spark.wap.branch) names: the session reads and writes each table that
// has it on that branch. Empty when neither is set.
func (s *Session) writeBranch() string {
	if b := s.settings["write_branch"]; b != "" {
		return b
	}
	return s.settings["spark.wap.branch"]
}

func (s *Session) settingOn(name string) bool {
	switch strings.ToLower(s.settings[name]) {
	case "on", "true", "1", "yes":
		return true
	}
	return false
}
