package pgwire

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

// simpleQuery runs a Query message: every statement of the text in turn,
// each with its own result, stopping at the first error.
func (c *conn) simpleQuery(text string) {
	defer c.ready()
	c.text = text
	stmts, err := parser.Parse(text)
	if err != nil {
		c.sendError(err)
		return
	}
	if len(stmts) == 0 {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return
	}
	// As in PostgreSQL, the statements of one message outside a
	// transaction run in an implicit one: all commit, or none. That needs
	// every statement to be one lake runs inside a transaction; a message
	// with others (CREATE SCHEMA, COPY, BEGIN…) runs them one by one.
	implicit := len(stmts) > 1 && !c.sess.InTransaction() && allTransactional(stmts)
	if implicit {
		if err := c.sess.Begin(context.Background()); err != nil {
			c.sendError(err)
			return
		}
	}
	for _, st := range stmts {
		if err := c.runSimple(st); err != nil {
			c.sendError(err)
			if implicit && c.sess.InTransaction() {
				c.sess.Rollback(context.Background())
				c.endTransaction()
			}
			return
		}
	}
	if implicit {
		ctx, done := c.statementContext()
		err := c.sess.Commit(ctx)
		done()
		c.endTransaction()
		if err != nil {
			c.sendError(statementError(ctx, err))
		}
	}
}

// allTransactional reports whether lake runs every statement inside a
// transaction: queries, DML, CREATE/DROP/ALTER TABLE, TRUNCATE, SET and
// SHOW.
func allTransactional(stmts []parser.Stmt) bool {
	for _, st := range stmts {
		switch x := st.(type) {
		case *parser.Query, *parser.Insert, *parser.Update, *parser.Delete, *parser.Merge,
			*parser.CreateTable, *parser.DropTable, *parser.Truncate, *parser.SetVar,
			*parser.Show, *parser.ShowTables, *parser.Describe, *parser.Explain,
			*parser.ShowTblProperties, *parser.ShowCreateTable:
		case *parser.AlterTable:
			if returnsRows(x) { // EXECUTE procedures commit on their own
				return false
			}
		default:
			return false
		}
	}
	return true
}

// runSimple runs one statement of a simple query, sending its row
// description, rows (text format) and command tag.
func (c *conn) runSimple(st parser.Stmt) error {
	if cp, ok := st.(*parser.Copy); ok && cp.Stdio {
		return c.copy(cp)
	}
	p := &portal{stmt: st}
	defer p.close()
	if err := c.start(p); err != nil {
		return err
	}
	if p.cur != nil {
		c.be.Send(rowDescription(p.cur.schema, nil))
	}
	return c.drain(p, 0)
}

// portal is a statement bound to its arguments, and once started, its
// result.
type portal struct {
	text    string
	stmt    parser.Stmt
	args    []any
	formats []int16 // result formats as Bind gave them
	// want is the schema a Describe of the prepared statement promised
	// the client, which rows are cast to; nil when none was described.
	want *arrow.Schema

	started bool
	cur     *cursor // nil: the statement returns no rows
	tag     string  // set once the statement completed without rows
	sent    int64
}

func (p *portal) close() {
	if p.cur != nil {
		p.cur.close()
		p.cur = nil
	}
}

// start runs the portal's statement: to completion when it returns no
// rows, or up to its first batch when it does.
func (c *conn) start(p *portal) error {
	if p.started {
		return nil
	}
	p.started = true
	if _, isCommit := p.stmt.(*parser.Commit); isCommit && c.sess.InFailedTransaction() {
		// COMMIT of a failed transaction rolls it back, as PostgreSQL
		// reports with the ROLLBACK tag
		if err := c.sess.Rollback(context.Background()); err != nil {
			return err
		}
		c.endTransaction()
		p.tag = "ROLLBACK"
		return nil
	}
	if st, ok := p.stmt.(*parser.SetVar); ok {
		// checked before lake keeps the value, so that a bad one is not
		// shown by SHOW
		if err := c.applySetting(st); err != nil {
			return err
		}
	}
	ctx, done := c.statementContext()
	res, err := c.sess.Run(ctx, p.stmt, p.args...)
	if err != nil {
		done()
		return statementError(ctx, err)
	}
	switch p.stmt.(type) {
	case *parser.Commit, *parser.Rollback:
		c.endTransaction()
	}
	for _, n := range res.Notices() {
		// PostgreSQL's "does not exist, skipping" notices carry 00000
		c.be.Send(&pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: "00000", Message: n})
	}
	if !returnsRows(p.stmt) || res.Schema().NumFields() == 0 {
		m := res.Metrics()
		var n int64
		if _, isCopy := p.stmt.(*parser.Copy); isCopy {
			// COPY to or from a file: its count is its result's row
			n, err = countOf(ctx, res)
		}
		res.Close()
		done()
		if err != nil {
			return statementError(ctx, err)
		}
		p.tag = commandTag(p.stmt, m, n)
		return nil
	}
	p.cur = &cursor{res: res, rdr: res.Reader(), ctx: ctx, done: done, schema: res.Schema()}
	if p.want != nil && !p.want.Equal(res.Schema()) {
		if p.want.NumFields() != res.Schema().NumFields() {
			p.close()
			return fmt.Errorf("cached plan must not change result type: the statement was described with %d columns and returns %d; prepare it again", p.want.NumFields(), res.Schema().NumFields())
		}
		p.cur.castTo = p.want
		p.cur.schema = p.want
	}
	return nil
}

// countOf reads a one-row count result.
func countOf(ctx context.Context, res *lake.Result) (int64, error) {
	bs, err := res.Collect(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, b := range bs {
		if c, ok := b.Column(0).(*array.Int64); ok && b.NumRows() == 1 {
			n = c.Value(0)
		}
		b.Release()
	}
	return n, nil
}

// endTransaction closes the portals a transaction's end ends.
func (c *conn) endTransaction() {
	for name, p := range c.portals {
		if p.cur != nil {
			p.close()
			delete(c.portals, name)
		}
	}
}

// drain sends up to max rows of a started portal (all when max is 0)
// and then CommandComplete, or PortalSuspended when rows remain.
func (c *conn) drain(p *portal, max int64) error {
	if p.cur == nil {
		c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(p.tag)})
		return nil
	}
	w := &rowWriter{c: c, formats: p.formats}
	for max == 0 || p.sent < max {
		b, off, err := p.cur.batch()
		if err != nil {
			p.close()
			return err
		}
		if b == nil {
			m := p.cur.res.Metrics()
			p.close()
			p.tag = commandTag(p.stmt, m, p.sent)
			c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(p.tag)})
			return nil
		}
		n := int(b.NumRows()) - off
		if max > 0 && int64(n) > max-p.sent {
			n = int(max - p.sent)
		}
		if err := w.write(b, off, off+n); err != nil {
			p.close()
			return err
		}
		p.cur.off += n
		p.sent += int64(n)
		if w.pending >= flushBytes {
			// a large result streams; a small one leaves with the
			// batch's other replies at Sync
			w.pending = 0
			if err := c.be.Flush(); err != nil {
				p.close()
				return err
			}
		}
	}
	c.be.Send(&pgproto3.PortalSuspended{})
	return nil
}

// cursor reads a result batch by batch, remembering how far into the
// current batch the client has read.
type cursor struct {
	res    *lake.Result
	rdr    array.RecordReader
	ctx    context.Context
	done   func()
	schema *arrow.Schema
	castTo *arrow.Schema
	cur    arrow.RecordBatch
	off    int
}

// batch returns the current batch and the first unsent row, reading the
// next batch when the current one is used up; nil at the end.
func (k *cursor) batch() (arrow.RecordBatch, int, error) {
	for k.cur == nil || k.off >= int(k.cur.NumRows()) {
		if k.cur != nil {
			k.cur.Release()
			k.cur = nil
		}
		if !k.rdr.Next() {
			if err := k.rdr.Err(); err != nil {
				return nil, 0, statementError(k.ctx, err)
			}
			if err := k.ctx.Err(); err != nil {
				return nil, 0, statementError(k.ctx, err)
			}
			return nil, 0, nil
		}
		b := k.rdr.RecordBatch()
		b.Retain()
		if k.castTo != nil {
			cb, err := castBatch(k.ctx, b, k.castTo)
			b.Release()
			if err != nil {
				return nil, 0, err
			}
			b = cb
		}
		k.cur, k.off = b, 0
	}
	return k.cur, k.off, nil
}

func (k *cursor) close() {
	if k.cur != nil {
		k.cur.Release()
		k.cur = nil
	}
	if k.rdr != nil {
		k.rdr.Release()
		k.rdr = nil
	}
	k.res.Close()
	if k.done != nil {
		k.done()
		k.done = nil
	}
}

// castBatch casts b's columns to the types of want (what a Describe
// promised), failing when a value does not fit.
func castBatch(ctx context.Context, b arrow.RecordBatch, want *arrow.Schema) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, b.NumCols())
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i := range cols {
		from, to := b.Column(i), want.Field(i).Type
		if arrow.TypeEqual(from.DataType(), to) {
			from.Retain()
			cols[i] = from
			continue
		}
		if pgOID(from.DataType()) == pgOID(to) {
			// the same PostgreSQL type (varchar and text): no cast
			from.Retain()
			cols[i] = from
			continue
		}
		out, err := compute.CastArray(ctx, from, compute.SafeCastOptions(to))
		if err != nil {
			return nil, fmt.Errorf("column %q: the statement was described as %s, and a value does not fit: %w; prepare it again", want.Field(i).Name, exec.TypeName(to), err)
		}
		cols[i] = out
	}
	return array.NewRecordBatch(want, cols, b.NumRows()), nil
}

func pgOID(dt arrow.DataType) uint32 {
	oid, _, _ := pgType(dt)
	return oid
}

// returnsRows reports whether a statement's result is rows for the
// client (a query, SHOW, EXPLAIN, RETURNING) rather than a count.
func returnsRows(stmt parser.Stmt) bool {
	switch st := stmt.(type) {
	case *parser.Query, *parser.Explain, *parser.Show, *parser.ShowTables, *parser.Describe,
		*parser.ShowTblProperties, *parser.ShowCreateTable, *parser.Call:
		return true
	case *parser.Insert:
		return st.Returning != nil
	case *parser.Update:
		return st.Returning != nil
	case *parser.Delete:
		return st.Returning != nil
	case *parser.Merge:
		return st.Returning != nil
	case *parser.AlterTable:
		// ALTER TABLE … EXECUTE procedure reports what it did
		for _, a := range st.Actions {
			if _, ok := a.(*parser.ExecuteProcedure); ok {
				return true
			}
		}
	}
	return false
}

// commandTag is the CommandComplete tag PostgreSQL sends for stmt.
func commandTag(stmt parser.Stmt, m lake.Metrics, rows int64) string {
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	switch st := stmt.(type) {
	case *parser.Query, *parser.ShowTables, *parser.Describe, *parser.ShowTblProperties, *parser.ShowCreateTable, *parser.Call:
		return "SELECT " + n(rows)
	case *parser.Insert:
		if st.OnConflict != nil {
			return "INSERT 0 " + n(m.RowsInserted+m.RowsUpdated)
		}
		return "INSERT 0 " + n(m.RowsInserted)
	case *parser.Update:
		return "UPDATE " + n(m.RowsUpdated)
	case *parser.Delete:
		return "DELETE " + n(m.RowsDeleted)
	case *parser.Merge:
		return "MERGE " + n(m.RowsInserted+m.RowsUpdated+m.RowsDeleted)
	case *parser.CreateTable:
		if st.AsQuery != nil {
			return "SELECT " + n(m.RowsInserted)
		}
		return "CREATE TABLE"
	case *parser.DropTable:
		return "DROP TABLE"
	case *parser.CreateView:
		return "CREATE VIEW"
	case *parser.DropView:
		return "DROP VIEW"
	case *parser.CreateSchema:
		return "CREATE SCHEMA"
	case *parser.DropSchema:
		return "DROP SCHEMA"
	case *parser.AlterTable:
		if returnsRows(st) {
			return "SELECT " + n(rows)
		}
		return "ALTER TABLE"
	case *parser.Truncate:
		return "TRUNCATE TABLE"
	case *parser.Begin:
		return "BEGIN"
	case *parser.Commit:
		return "COMMIT"
	case *parser.Rollback:
		return "ROLLBACK"
	case *parser.SetVar:
		return "SET"
	case *parser.Show:
		return "SHOW"
	case *parser.Explain:
		return "EXPLAIN"
	case *parser.Copy:
		return "COPY " + n(max(m.RowsInserted, rows))
	}
	return "OK"
}

// rowDescription describes schema's columns; formats as Bind gives them
// (nil: text).
func rowDescription(schema *arrow.Schema, formats []int16) *pgproto3.RowDescription {
	fields := make([]pgproto3.FieldDescription, schema.NumFields())
	for i, f := range schema.Fields() {
		oid, size, mod := pgType(f.Type)
		fields[i] = pgproto3.FieldDescription{Name: []byte(f.Name), DataTypeOID: oid, DataTypeSize: size, TypeModifier: mod, Format: formatOf(formats, i)}
	}
	return &pgproto3.RowDescription{Fields: fields}
}

// formatOf is column i's format code: Bind gives none (text), one for
// all, or one per column.
func formatOf(formats []int16, i int) int16 {
	switch len(formats) {
	case 0:
		return 0
	case 1:
		return formats[0]
	}
	if i < len(formats) {
		return formats[i]
	}
	return 0
}

// flushBytes is how much row data is buffered before it is written.
const flushBytes = 256 << 10

// rowWriter encodes batches as DataRow messages, reusing its buffers.
type rowWriter struct {
	pending int // bytes of rows sent since the last flush
	c       *conn
	formats []int16
	encs    []encoder
	row     pgproto3.DataRow
	buf     []byte
	ends    []int
}

func (w *rowWriter) write(b arrow.RecordBatch, from, to int) error {
	ncol := int(b.NumCols())
	w.encs = w.encs[:0]
	for j := range ncol {
		enc, err := newEncoder(b.Column(j), b.Schema().Field(j).Type, formatOf(w.formats, j) == 1)
		if err != nil {
			return err
		}
		w.encs = append(w.encs, enc)
	}
	if cap(w.row.Values) < ncol {
		w.row.Values = make([][]byte, ncol)
		w.ends = make([]int, ncol)
	}
	w.row.Values = w.row.Values[:ncol]
	w.ends = w.ends[:ncol]
	if w.buf == nil {
		w.buf = make([]byte, 0, 512)
	}
	cols := b.Columns()
	for i := from; i < to; i++ {
		w.buf = w.buf[:0]
		var err error
		for j, col := range cols {
			if col.IsNull(i) {
				w.ends[j] = -1
				continue
			}
			if w.buf, err = w.encs[j](w.buf, i); err != nil {
				return err
			}
			w.ends[j] = len(w.buf)
		}
		start := 0
		for j := range cols {
			if w.ends[j] < 0 {
				w.row.Values[j] = nil
				continue
			}
			// a zero-length value must be non-nil: nil is NULL
			w.row.Values[j] = w.buf[start:w.ends[j]:w.ends[j]]
			start = w.ends[j]
		}
		w.c.be.Send(&w.row)
		w.pending += len(w.buf) + 4*ncol + 7
	}
	return nil
}

// statementError is err, or the reason its context ended when the
// statement failed because it was canceled.
func statementError(ctx context.Context, err error) error {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ctx.Err())) {
		if cause := context.Cause(ctx); cause != nil {
			return &canceledError{cause: cause}
		}
	}
	return err
}

// canceledError is a statement canceled by a CancelRequest, the
// statement timeout or shutdown (SQLSTATE 57014 or 57P01).
type canceledError struct{ cause error }

func (e *canceledError) Error() string { return e.cause.Error() }
func (e *canceledError) Unwrap() error { return e.cause }

// applySetting acts on the settings the server itself honours:
// statement_timeout (milliseconds, or with a unit: '5s', '1min'; 0 is
// none). lake keeps every setting for SHOW.
func (c *conn) applySetting(st *parser.SetVar) error {
	name := strings.ToLower(st.Name.String())
	if name != "statement_timeout" {
		return nil
	}
	if len(st.Values) != 1 {
		return nil
	}
	if _, isDef := st.Values[0].(*parser.Default); isDef {
		c.timeout = c.srv.cfg.StatementTimeout
		return nil
	}
	v, err := plan.PropertyValue(st.Values[0])
	if err != nil {
		return err
	}
	d, err := parseTimeout(v)
	if err != nil {
		return &protocolError{"22023", fmt.Sprintf("invalid value for parameter \"statement_timeout\": %q; %v", v, err)}
	}
	c.timeout = d
	return nil
}

// parseTimeout reads PostgreSQL's statement_timeout forms: a number of
// milliseconds, or a number with us, ms, s, min, h or d.
func parseTimeout(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(v[:i], 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a number of milliseconds or e.g. '30s'")
	}
	unit := map[string]time.Duration{"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond, "s": time.Second,
		"min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	u, ok := unit[strings.ToLower(strings.TrimSpace(v[i:]))]
	if !ok {
		return 0, fmt.Errorf("valid units are us, ms, s, min, h and d")
	}
	return time.Duration(n * float64(u)), nil
}
