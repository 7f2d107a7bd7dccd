package pgwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/plan"
)

// copyFormat is COPY's options for STDIN and STDOUT: PostgreSQL's text
// and CSV formats.
type copyFormat struct {
	csv    bool
	binary bool // COPY's binary format (FROM STDIN only)
	header bool
	delim  byte
	null   string
	quote  byte
	escape byte
}

func parseCopyFormat(st *parser.Copy) (copyFormat, error) {
	f := copyFormat{delim: '\t', null: `\N`, quote: '"', escape: '"'}
	var delimSet, nullSet, escSet bool
	for _, o := range st.Options {
		val := ""
		if o.Value != nil {
			v, err := plan.PropertyValue(o.Value)
			if err != nil {
				return f, &protocolError{"42601", fmt.Sprintf("COPY option %s: %v", o.Name, err)}
			}
			val = v
		}
		one := func() (byte, error) {
			if len(val) != 1 {
				return 0, &protocolError{"22023", fmt.Sprintf("COPY %s must be a single one-byte character", strings.ToLower(o.Name))}
			}
			return val[0], nil
		}
		var err error
		switch o.Name {
		case "FORMAT":
			switch strings.ToLower(val) {
			case "csv":
				f.csv = true
			case "text":
			case "binary":
				if st.To {
					return f, &protocolError{"0A000", "COPY TO STDOUT in binary format is not supported; use FORMAT text or csv"}
				}
				f.binary = true
			default:
				return f, &protocolError{"22023", fmt.Sprintf("COPY format %q not recognized; use text or csv", val)}
			}
		case "HEADER":
			f.header = val == "" || strings.EqualFold(val, "true") || strings.EqualFold(val, "on") || val == "1"
		case "DELIMITER", "DELIM":
			f.delim, err = one()
			delimSet = true
		case "NULL":
			f.null, nullSet = val, true
		case "QUOTE":
			f.quote, err = one()
		case "ESCAPE":
			f.escape, err = one()
			escSet = true
		default:
			return f, &protocolError{"42601", fmt.Sprintf("option %q not recognized; COPY … STDIN/STDOUT takes FORMAT, HEADER, DELIMITER, NULL, QUOTE and ESCAPE", strings.ToLower(o.Name))}
		}
		if err != nil {
			return f, err
		}
	}
	if f.csv {
		if !delimSet {
			f.delim = ','
		}
		if !nullSet {
			f.null = ""
		}
		if !escSet {
			f.escape = f.quote
		}
	}
	if f.delim == '\n' || f.delim == '\r' || (!f.csv && f.delim == '\\') {
		return f, &protocolError{"22023", "COPY delimiter cannot be newline, carriage return or backslash"}
	}
	return f, nil
}

// copy runs COPY … FROM STDIN or COPY … TO STDOUT.
func (c *conn) copy(st *parser.Copy) error {
	f, err := parseCopyFormat(st)
	if err != nil {
		return err
	}
	if st.To {
		return c.copyOut(st, f)
	}
	return c.copyIn(st, f)
}

func (c *conn) copyIn(st *parser.Copy, f copyFormat) error {
	ctx, done := c.statementContext()
	defer done()
	cols, err := c.sess.CopyColumns(ctx, st)
	if err != nil {
		return err
	}
	c.be.Send(&pgproto3.CopyInResponse{OverallFormat: 0, ColumnFormatCodes: make([]uint16, len(cols))})
	if err := c.be.Flush(); err != nil {
		return err
	}
	fields := make([]arrow.Field, len(cols))
	for i, col := range cols {
		fields[i] = arrow.Field{Name: col.Name, Type: arrow.BinaryTypes.String, Nullable: true}
		if f.binary {
			fields[i].Type = binaryCopyType(col.Type)
		}
	}
	r := &copyReader{c: c, f: f, schema: arrow.NewSchema(fields, nil), skipHeader: f.header && !f.binary}
	if f.binary {
		for _, col := range cols {
			r.oids = append(r.oids, pgOID(col.Type))
		}
	}
	r.refs.Store(1)
	res, err := c.sess.CopyFrom(ctx, st, r)
	// whatever happened, read the client's data to its end
	r.drain()
	r.Release()
	if err == nil && r.err != nil {
		err = r.err
	}
	if err != nil {
		return statementError(ctx, err)
	}
	m := res.Metrics()
	res.Close()
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte("COPY " + strconv.FormatInt(m.RowsInserted, 10))})
	return nil
}

// copyBatchRows is how many rows a COPY FROM batch holds.
const copyBatchRows = 8192

// copyReader is COPY FROM STDIN's rows as an Arrow stream of string
// columns, read from the client's CopyData messages as the insert pulls
// batches: a COPY of any size holds one batch and one message at a time.
type copyReader struct {
	c          *conn
	f          copyFormat
	schema     *arrow.Schema
	refs       atomic.Int64
	buf        []byte // unparsed bytes
	end        bool   // CopyDone or CopyFail seen
	err        error
	cur        arrow.RecordBatch
	line       int64
	skipHeader bool
	// binary format: the columns' type OIDs, and whether the file
	// header was read
	oids      []uint32
	gotHeader bool
}

func (r *copyReader) Schema() *arrow.Schema { return r.schema }
func (r *copyReader) Retain()               { r.refs.Add(1) }
func (r *copyReader) Release() {
	if r.refs.Add(-1) == 0 && r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}
func (r *copyReader) Err() error                     { return r.err }
func (r *copyReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *copyReader) Record() arrow.RecordBatch      { return r.cur }

// receive reads the next message of the COPY; false at its end.
func (r *copyReader) receive() bool {
	if r.end {
		return false
	}
	msg, err := r.c.be.Receive()
	if err != nil {
		r.end = true
		r.setErr(fmt.Errorf("copy from stdin: connection lost: %w", err))
		return false
	}
	switch m := msg.(type) {
	case *pgproto3.CopyData:
		r.buf = append(r.buf, m.Data...)
		return true
	case *pgproto3.CopyDone:
		r.end = true
	case *pgproto3.CopyFail:
		r.end = true
		r.setErr(&protocolError{"57014", "COPY from stdin failed: " + m.Message})
	case *pgproto3.Flush, *pgproto3.Sync:
		return true // PostgreSQL ignores them during COPY
	default:
		r.end = true
		r.setErr(&protocolError{"08P01", fmt.Sprintf("unexpected message %T during COPY from stdin", msg)})
	}
	return false
}

func (r *copyReader) setErr(err error) {
	if r.err == nil {
		r.err = err
	}
}

// drain reads and drops the rest of the client's COPY data.
func (r *copyReader) drain() {
	for r.receive() {
		r.buf = r.buf[:0]
	}
}

func (r *copyReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil {
		return false
	}
	bld := array.NewRecordBuilder(memory.DefaultAllocator, r.schema)
	defer bld.Release()
	if r.f.binary {
		return r.nextBinary(bld)
	}
	ncol := r.schema.NumFields()
	rows := 0
	for rows < copyBatchRows {
		rec, ok, err := r.record()
		if err != nil {
			r.setErr(err)
			return false
		}
		if !ok {
			break
		}
		if r.skipHeader {
			r.skipHeader = false
			continue
		}
		if len(rec) == 1 && !r.f.csv && rec[0].val == `\.` && !rec[0].null {
			// the end-of-data marker of old clients
			continue
		}
		if len(rec) != ncol {
			if len(rec) < ncol {
				r.setErr(&protocolError{"22P04", fmt.Sprintf("COPY line %d: missing data for column %q", r.line, r.schema.Field(len(rec)).Name)})
			} else {
				r.setErr(&protocolError{"22P04", fmt.Sprintf("COPY line %d: extra data after last expected column", r.line)})
			}
			return false
		}
		for j, v := range rec {
			sb := bld.Field(j).(*array.StringBuilder)
			if v.null {
				sb.AppendNull()
			} else {
				sb.Append(v.val)
			}
		}
		rows++
	}
	if rows == 0 {
		return false
	}
	r.cur = bld.NewRecordBatch()
	return true
}

type copyValue struct {
	val  string
	null bool
}

// record returns the next row's values, reading messages until a whole
// row is buffered; ok is false at the end of the data.
func (r *copyReader) record() (rec []copyValue, ok bool, err error) {
	for {
		rec, n, complete, err := r.parse(r.end)
		if err != nil {
			return nil, false, err
		}
		if complete {
			r.buf = r.buf[n:]
			r.line++
			return rec, true, nil
		}
		if r.end {
			if r.err != nil {
				return nil, false, r.err
			}
			return nil, false, nil
		}
		if len(r.buf) > r.c.srv.cfg.MaxMessageSize {
			return nil, false, &protocolError{"54000", fmt.Sprintf("COPY line %d is longer than %d bytes", r.line+1, r.c.srv.cfg.MaxMessageSize)}
		}
		// compact what was parsed, then read more
		r.receive()
	}
}

// parse parses one row from r.buf. complete is false when the row's end
// is not buffered yet; at final, the last row may lack its newline.
func (r *copyReader) parse(final bool) (rec []copyValue, n int, complete bool, err error) {
	if len(r.buf) == 0 {
		return nil, 0, false, nil
	}
	if r.f.csv {
		return r.parseCSV(final)
	}
	end := bytes.IndexByte(r.buf, '\n')
	line := r.buf
	n = len(r.buf)
	if end >= 0 {
		line, n = r.buf[:end], end+1
	} else if !final {
		return nil, 0, false, nil
	}
	line = bytes.TrimSuffix(line, []byte{'\r'})
	for field := range bytes.SplitSeq(line, []byte{r.f.delim}) {
		if string(field) == r.f.null {
			rec = append(rec, copyValue{null: true})
			continue
		}
		v, err := unescapeText(field)
		if err != nil {
			return nil, 0, false, &protocolError{"22P02", fmt.Sprintf("COPY line %d: %v", r.line+1, err)}
		}
		rec = append(rec, copyValue{val: v})
	}
	return rec, n, true, nil
}

// unescapeText decodes COPY text format's backslash escapes.
func unescapeText(b []byte) (string, error) {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b), nil
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if ch != '\\' {
			out = append(out, ch)
			continue
		}
		i++
		if i >= len(b) {
			return "", errors.New("backslash at the end of a value")
		}
		switch e := b[i]; e {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'v':
			out = append(out, '\v')
		case 'x':
			v, k := 0, 0
			for k < 2 && i+1 < len(b) && isHex(b[i+1]) {
				i++
				v = v*16 + hexVal(b[i])
				k++
			}
			if k == 0 {
				out = append(out, 'x')
			} else {
				out = append(out, byte(v))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(e - '0')
			for k := 0; k < 2 && i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '7'; k++ {
				i++
				v = v*8 + int(b[i]-'0')
			}
			out = append(out, byte(v))
		default:
			out = append(out, e)
		}
	}
	return string(out), nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// parseCSV parses one CSV record: quoted values may hold delimiters,
// quotes (doubled, or after ESCAPE) and newlines; an unquoted value equal
// to NULL is NULL, a quoted one never is.
func (r *copyReader) parseCSV(final bool) (rec []copyValue, n int, complete bool, err error) {
	b := r.buf
	q, esc, delim := r.f.quote, r.f.escape, r.f.delim
	var val []byte
	quoted, inQuote := false, false
	i := 0
	emit := func() {
		if !quoted && string(val) == r.f.null {
			rec = append(rec, copyValue{null: true})
		} else {
			rec = append(rec, copyValue{val: string(val)})
		}
		val, quoted = val[:0], false
	}
	for i < len(b) {
		ch := b[i]
		if inQuote {
			switch {
			case ch == esc && esc != q && i+1 < len(b) && (b[i+1] == q || b[i+1] == esc):
				val = append(val, b[i+1])
				i += 2
				continue
			case ch == q:
				if i+1 < len(b) && b[i+1] == q && esc == q {
					val = append(val, q)
					i += 2
					continue
				}
				if i+1 >= len(b) && !final {
					return nil, 0, false, nil // a doubled quote may follow
				}
				inQuote = false
				i++
				continue
			}
			val = append(val, ch)
			i++
			continue
		}
		switch ch {
		case q:
			inQuote, quoted = true, true
		case delim:
			emit()
		case '\n':
			emit()
			return rec, i + 1, true, nil
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				emit()
				return rec, i + 2, true, nil
			}
			if i+1 >= len(b) && !final {
				return nil, 0, false, nil
			}
			emit()
			return rec, i + 1, true, nil
		default:
			val = append(val, ch)
		}
		i++
	}
	if !final {
		return nil, 0, false, nil
	}
	if inQuote {
		return nil, 0, false, &protocolError{"22P04", fmt.Sprintf("COPY line %d: unterminated CSV quoted field", r.line+1)}
	}
	emit()
	return rec, len(b), true, nil
}

var _ array.RecordReader = (*copyReader)(nil)

// copyOut runs COPY … TO STDOUT: the query's rows as CopyData messages.
func (c *conn) copyOut(st *parser.Copy, f copyFormat) error {
	var q parser.Stmt = st.Query
	switch {
	case st.DML != nil:
		// COPY (INSERT|UPDATE|DELETE|MERGE … RETURNING …) TO STDOUT: the
		// statement runs (and commits) whole, then its rows are sent
		if !parser.HasReturning(st.DML) {
			return &protocolError{"0A000", "COPY (INSERT|UPDATE|DELETE|MERGE …) needs a RETURNING clause: COPY sends the rows it returns"}
		}
		q = st.DML
	case st.Query == nil:
		cols := "*"
		if len(st.Columns) > 0 {
			var names []string
			for _, c := range st.Columns {
				names = append(names, c.String())
			}
			cols = strings.Join(names, ", ")
		}
		stmt, err := parser.ParseOne("SELECT " + cols + " FROM " + st.Table.String())
		if err != nil {
			return err
		}
		q = stmt
	}
	ctx, done := c.statementContext()
	defer done()
	res, err := c.sess.Run(ctx, q)
	if err != nil {
		return statementError(ctx, err)
	}
	rdr := res.Reader()
	defer rdr.Release()
	schema := res.Schema()
	c.be.Send(&pgproto3.CopyOutResponse{OverallFormat: 0, ColumnFormatCodes: make([]uint16, schema.NumFields())})
	var out []byte
	if f.header {
		for j, fd := range schema.Fields() {
			if j > 0 {
				out = append(out, f.delim)
			}
			out = f.appendValue(out, []byte(fd.Name), false)
		}
		out = append(out, '\n')
	}
	var rows int64
	var val []byte
	for rdr.Next() {
		b := rdr.RecordBatch()
		encs := make([]encoder, b.NumCols())
		for j := range encs {
			if encs[j], err = newEncoder(b.Column(j), schema.Field(j).Type, false); err != nil {
				return err
			}
		}
		for i := 0; i < int(b.NumRows()); i++ {
			for j, col := range b.Columns() {
				if j > 0 {
					out = append(out, f.delim)
				}
				if col.IsNull(i) {
					out = append(out, f.null...)
					continue
				}
				if val, err = encs[j](val[:0], i); err != nil {
					return err
				}
				out = f.appendValue(out, val, true)
			}
			out = append(out, '\n')
			rows++
			if len(out) >= 64<<10 {
				c.be.Send(&pgproto3.CopyData{Data: out})
				if err := c.be.Flush(); err != nil {
					return err
				}
				out = out[:0]
			}
		}
	}
	if err := rdr.Err(); err != nil {
		// the client has seen CopyOutResponse: the error ends the COPY
		return statementError(ctx, err)
	}
	if len(out) > 0 {
		c.be.Send(&pgproto3.CopyData{Data: out})
	}
	c.be.Send(&pgproto3.CopyDone{})
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte("COPY " + strconv.FormatInt(rows, 10))})
	return nil
}

// appendValue appends one non-NULL value: escaped (text format) or
// quoted when needed (CSV).
func (f copyFormat) appendValue(out, v []byte, data bool) []byte {
	if f.csv {
		need := len(v) == 0 && data && f.null == "" || string(v) == f.null && data
		for _, ch := range v {
			if ch == f.delim || ch == f.quote || ch == '\n' || ch == '\r' || ch == f.escape {
				need = true
				break
			}
		}
		if !need {
			return append(out, v...)
		}
		out = append(out, f.quote)
		for _, ch := range v {
			if ch == f.quote || ch == f.escape {
				out = append(out, f.escape)
			}
			out = append(out, ch)
		}
		return append(out, f.quote)
	}
	if !f.special(v) {
		return append(out, v...)
	}
	for _, ch := range v {
		switch ch {
		case '\\':
			out = append(out, '\\', '\\')
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			if ch == f.delim {
				out = append(out, '\\')
			}
			out = append(out, ch)
		}
	}
	return out
}

// special reports whether a text-format value holds a byte that needs
// an escape: a backslash, newline, carriage return, tab or the delimiter.
func (f copyFormat) special(v []byte) bool {
	for _, ch := range v {
		if ch < ' ' || ch == '\\' || ch == f.delim {
			return true
		}
	}
	return false
}

// binaryCopyType is the column type binary COPY decodes a target
// column's values into: the target's own type where the wire value maps
// onto it directly, else text that lake casts (numeric, uuid, time,
// interval, lists).
func binaryCopyType(t arrow.DataType) arrow.DataType {
	if isUUID(t) {
		return arrow.BinaryTypes.String
	}
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.STRING, arrow.BINARY, arrow.DATE32:
		return t
	case arrow.TIMESTAMP:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: t.(*arrow.TimestampType).TimeZone}
	}
	return arrow.BinaryTypes.String
}

// copyBinarySignature starts a binary COPY stream.
const copyBinarySignature = "PGCOPY\n\xff\r\n\x00"

// need buffers n bytes, reading messages as needed; false at the end of
// the data.
func (r *copyReader) need(n int) bool {
	for len(r.buf) < n {
		if !r.receive() {
			return false
		}
	}
	return true
}

// nextBinary decodes up to copyBatchRows tuples of the binary format.
func (r *copyReader) nextBinary(bld *array.RecordBuilder) bool {
	if !r.gotHeader {
		if !r.need(19) {
			r.setErr(&protocolError{"22P04", "COPY file signature not recognized"})
			return false
		}
		if string(r.buf[:11]) != copyBinarySignature {
			r.setErr(&protocolError{"22P04", "COPY file signature not recognized"})
			return false
		}
		ext := int(binary.BigEndian.Uint32(r.buf[15:19]))
		if ext < 0 || ext > 1<<20 || !r.need(19+ext) {
			r.setErr(&protocolError{"22P04", "invalid COPY file header"})
			return false
		}
		r.buf = r.buf[19+ext:]
		r.gotHeader = true
	}
	ncol := len(r.oids)
	rows := 0
	for rows < copyBatchRows {
		if !r.need(2) {
			if len(r.buf) > 0 {
				r.setErr(&protocolError{"22P04", "COPY data ends inside a row"})
			}
			break
		}
		nf := int16(binary.BigEndian.Uint16(r.buf))
		if nf == -1 {
			// the trailer; what follows is ignored
			r.buf = r.buf[:0]
			r.drain()
			break
		}
		r.buf = r.buf[2:]
		r.line++
		if int(nf) != ncol {
			r.setErr(&protocolError{"22P04", fmt.Sprintf("COPY row %d has %d fields for %d columns", r.line, nf, ncol)})
			return false
		}
		for j := 0; j < ncol; j++ {
			if !r.need(4) {
				r.setErr(&protocolError{"22P04", "COPY data ends inside a row"})
				return false
			}
			size := int32(binary.BigEndian.Uint32(r.buf))
			r.buf = r.buf[4:]
			if size == -1 {
				bld.Field(j).AppendNull()
				continue
			}
			if size < 0 || int(size) > r.c.srv.cfg.MaxMessageSize || !r.need(int(size)) {
				r.setErr(&protocolError{"22P04", fmt.Sprintf("COPY row %d: invalid field size", r.line)})
				return false
			}
			if err := appendBinaryValue(bld.Field(j), r.oids[j], r.buf[:size]); err != nil {
				r.setErr(&protocolError{"22P02", fmt.Sprintf("COPY row %d, column %q: %v", r.line, r.schema.Field(j).Name, err)})
				return false
			}
			r.buf = r.buf[size:]
		}
		rows++
	}
	if rows == 0 || r.err != nil {
		return false
	}
	r.cur = bld.NewRecordBatch()
	return true
}

// appendBinaryValue decodes one binary value of type oid onto b.
func appendBinaryValue(b array.Builder, oid uint32, raw []byte) error {
	if tb, ok := b.(*array.TimestampBuilder); ok {
		if len(raw) != 8 {
			return fmt.Errorf("invalid binary timestamp of %d bytes", len(raw))
		}
		tb.Append(arrow.Timestamp(int64(binary.BigEndian.Uint64(raw)) + pgEpoch.UnixMicro()))
		return nil
	}
	v, err := decodeParam(oid, 1, raw)
	if err != nil {
		return err
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Int8Builder:
		b.Append(int8(asInt(v)))
	case *array.Int16Builder:
		b.Append(int16(asInt(v)))
	case *array.Int32Builder:
		b.Append(int32(asInt(v)))
	case *array.Int64Builder:
		b.Append(asInt(v))
	case *array.Float32Builder:
		b.Append(float32(asFloat(v)))
	case *array.Float64Builder:
		b.Append(asFloat(v))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.Date32Builder:
		b.Append(v.(arrow.Date32))
	case *array.StringBuilder:
		switch x := v.(type) {
		case string:
			b.Append(x)
		case []byte:
			b.Append(string(x))
		case arrow.MonthDayNanoInterval:
			b.Append(string(appendInterval(nil, x.Months, x.Days, x.Nanoseconds/1000)))
		default:
			b.Append(fmt.Sprint(x))
		}
	default:
		return fmt.Errorf("binary COPY into a %s column is not supported", b.Type())
	}
	return nil
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case float32:
		return float64(x)
	case float64:
		return x
	}
	return 0
}
