package pgwire

import (
	"database/sql/driver"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/parser"
)

// prepared is a parsed statement (Parse), named or unnamed.
type prepared struct {
	text string
	stmt parser.Stmt // nil for an empty query
	// oids are the parameters' types: the client's, with 0 replaced by
	// what Describe inferred once it ran.
	oids []uint32
	// schema is what Describe promised the client; nil before.
	schema    *arrow.Schema
	described bool
}

// protocolError is an extended-protocol misuse (SQLSTATE in code).
type protocolError struct {
	code string
	msg  string
}

func (e *protocolError) Error() string { return e.msg }

func (c *conn) parse(m *pgproto3.Parse) error {
	c.text = m.Query
	if m.Name != "" {
		if _, taken := c.stmts[m.Name]; taken {
			return &protocolError{"42P05", fmt.Sprintf("prepared statement %q already exists", m.Name)}
		}
	}
	stmts, err := parser.Parse(m.Query)
	if err != nil {
		return err
	}
	if len(stmts) > 1 {
		return &protocolError{"42601", "cannot insert multiple commands into a prepared statement"}
	}
	p := &prepared{text: m.Query, oids: append([]uint32(nil), m.ParameterOIDs...)}
	if len(stmts) == 1 {
		p.stmt = stmts[0]
		if n := lake.NumParams(p.stmt); n > len(p.oids) {
			p.oids = append(p.oids, make([]uint32, n-len(p.oids))...)
		}
	}
	c.stmts[m.Name] = p
	c.be.Send(&pgproto3.ParseComplete{})
	return nil
}

func (c *conn) bind(m *pgproto3.Bind) error {
	ps, ok := c.stmts[m.PreparedStatement]
	if !ok {
		return &protocolError{"26000", fmt.Sprintf("prepared statement %q does not exist", m.PreparedStatement)}
	}
	c.text = ps.text
	if m.DestinationPortal != "" {
		if _, taken := c.portals[m.DestinationPortal]; taken {
			return &protocolError{"42P03", fmt.Sprintf("cursor %q already exists", m.DestinationPortal)}
		}
	} else if old := c.portals[""]; old != nil {
		old.close()
		delete(c.portals, "")
	}
	if len(m.Parameters) != len(ps.oids) {
		return &protocolError{"08P01", fmt.Sprintf("bind message supplies %d parameters, but prepared statement %q requires %d", len(m.Parameters), m.PreparedStatement, len(ps.oids))}
	}
	if n := len(m.ParameterFormatCodes); n > 1 && n != len(m.Parameters) {
		return &protocolError{"08P01", fmt.Sprintf("bind message has %d parameter formats but %d parameters", n, len(m.Parameters))}
	}
	args := make([]any, len(m.Parameters))
	for i, raw := range m.Parameters {
		v, err := decodeParam(ps.oids[i], formatOf(m.ParameterFormatCodes, i), raw)
		if err != nil {
			return &protocolError{"22P02", fmt.Sprintf("parameter $%d: %v", i+1, err)}
		}
		args[i] = v
	}
	for _, f := range m.ResultFormatCodes {
		if f != 0 && f != 1 {
			return &protocolError{"08P01", fmt.Sprintf("unsupported format code: %d", f)}
		}
	}
	p := &portal{text: ps.text, stmt: ps.stmt, args: args, formats: append([]int16(nil), m.ResultFormatCodes...)}
	if ps.described {
		p.want = ps.schema
	}
	c.portals[m.DestinationPortal] = p
	c.be.Send(&pgproto3.BindComplete{})
	return nil
}

func (c *conn) describe(m *pgproto3.Describe) error {
	switch m.ObjectType {
	case 'S':
		ps, ok := c.stmts[m.Name]
		if !ok {
			return &protocolError{"26000", fmt.Sprintf("prepared statement %q does not exist", m.Name)}
		}
		c.text = ps.text
		if ps.stmt == nil {
			c.be.Send(&pgproto3.ParameterDescription{})
			c.be.Send(&pgproto3.NoData{})
			return nil
		}
		if !ps.described {
			ctx, done := c.statementContext()
			d, err := c.sess.Describe(ctx, ps.stmt, len(ps.oids))
			done()
			if err != nil {
				return statementError(ctx, err)
			}
			for i, t := range d.Params {
				if i < len(ps.oids) && ps.oids[i] == 0 {
					ps.oids[i] = oidText
					if t != nil {
						ps.oids[i] = pgOID(t)
					}
				}
			}
			ps.schema, ps.described = d.Schema, true
		}
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: ps.oids})
		if ps.schema == nil || !returnsRows(ps.stmt) {
			c.be.Send(&pgproto3.NoData{})
		} else {
			c.be.Send(rowDescription(ps.schema, nil))
		}
		return nil
	case 'P':
		p, ok := c.portals[m.Name]
		if !ok {
			return &protocolError{"34000", fmt.Sprintf("portal %q does not exist", m.Name)}
		}
		c.text = p.text
		if p.stmt == nil || !returnsRows(p.stmt) {
			c.be.Send(&pgproto3.NoData{})
			return nil
		}
		// the result's real schema: a query is opened here, which reads
		// nothing yet; Execute streams it
		if err := c.start(p); err != nil {
			return err
		}
		if p.cur == nil {
			c.be.Send(&pgproto3.NoData{})
			return nil
		}
		c.be.Send(rowDescription(p.cur.schema, p.formats))
		return nil
	}
	return &protocolError{"08P01", fmt.Sprintf("invalid DESCRIBE message subtype %d", m.ObjectType)}
}

func (c *conn) execute(m *pgproto3.Execute) error {
	p, ok := c.portals[m.Portal]
	if !ok {
		return &protocolError{"34000", fmt.Sprintf("portal %q does not exist", m.Portal)}
	}
	c.text = p.text
	if p.stmt == nil {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	if cp, ok := p.stmt.(*parser.Copy); ok && cp.Stdio {
		if p.started {
			return &protocolError{"55000", "portal was already run"}
		}
		p.started = true
		return c.copy(cp)
	}
	if p.started && p.cur == nil && p.tag != "" && p.sent >= 0 && !returnsRows(p.stmt) {
		// run to completion already (a second Execute): PostgreSQL sends
		// the tag again with no rows
		c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(p.tag)})
		return nil
	}
	if err := c.start(p); err != nil {
		return err
	}
	return c.drain(p, int64(m.MaxRows))
}

func (c *conn) closeObject(m *pgproto3.Close) {
	switch m.ObjectType {
	case 'S':
		delete(c.stmts, m.Name)
	case 'P':
		if p := c.portals[m.Name]; p != nil {
			p.close()
			delete(c.portals, m.Name)
		}
	default:
		c.ok(&protocolError{"08P01", fmt.Sprintf("invalid CLOSE message subtype %d", m.ObjectType)})
		return
	}
	c.be.Send(&pgproto3.CloseComplete{})
}

// decodeParam turns a Bind parameter into the Go value lake takes. Text
// values stay strings, which take their context's type as a quoted
// literal would; binary values are decoded by their type's OID.
func decodeParam(oid uint32, format int16, raw []byte) (any, error) {
	if raw == nil {
		return nil, nil
	}
	if format == 0 {
		if oid == oidBytea {
			s := string(raw)
			if strings.HasPrefix(s, `\x`) {
				b, err := hex.DecodeString(s[2:])
				if err != nil {
					return nil, fmt.Errorf("invalid input syntax for type bytea")
				}
				return b, nil
			}
			return []byte(s), nil
		}
		return string(raw), nil
	}
	if format != 1 {
		return nil, fmt.Errorf("unsupported format code %d", format)
	}
	need := func(n int) error {
		if len(raw) != n {
			return fmt.Errorf("invalid binary value of %d bytes for type %s", len(raw), oidName(oid))
		}
		return nil
	}
	switch oid {
	case oidBool:
		if err := need(1); err != nil {
			return nil, err
		}
		return raw[0] != 0, nil
	case oidInt2:
		if err := need(2); err != nil {
			return nil, err
		}
		return int16(binary.BigEndian.Uint16(raw)), nil
	case oidInt4:
		if err := need(4); err != nil {
			return nil, err
		}
		return int32(binary.BigEndian.Uint32(raw)), nil
	case oidInt8:
		if err := need(8); err != nil {
			return nil, err
		}
		return int64(binary.BigEndian.Uint64(raw)), nil
	case oidFloat4:
		if err := need(4); err != nil {
			return nil, err
		}
		return math.Float32frombits(binary.BigEndian.Uint32(raw)), nil
	case oidFloat8:
		if err := need(8); err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.BigEndian.Uint64(raw)), nil
	case oidText, oidVarchar, oidBpchar, oidNameType, oidUnknown, oidJSON, oidChar:
		return string(raw), nil
	case oidJSONB:
		if len(raw) > 0 && raw[0] == 1 {
			return string(raw[1:]), nil
		}
		return nil, fmt.Errorf("unsupported jsonb binary version")
	case oidBytea:
		return append([]byte(nil), raw...), nil
	case oidDate:
		if err := need(4); err != nil {
			return nil, err
		}
		return arrow.Date32(int32(binary.BigEndian.Uint32(raw)) + pgEpochDays), nil
	case oidTimestamp:
		if err := need(8); err != nil {
			return nil, err
		}
		// as text, so that it takes timestamp's type and not timestamptz
		us := int64(binary.BigEndian.Uint64(raw)) + pgEpoch.UnixMicro()
		return string(appendTimestamp(nil, us)), nil
	case oidTimestamptz:
		if err := need(8); err != nil {
			return nil, err
		}
		return time.UnixMicro(int64(binary.BigEndian.Uint64(raw)) + pgEpoch.UnixMicro()).UTC(), nil
	case oidTime:
		if err := need(8); err != nil {
			return nil, err
		}
		return string(appendClock(nil, int64(binary.BigEndian.Uint64(raw)))), nil
	case oidInterval:
		if err := need(16); err != nil {
			return nil, err
		}
		us := int64(binary.BigEndian.Uint64(raw))
		return arrow.MonthDayNanoInterval{Nanoseconds: us * 1000, Days: int32(binary.BigEndian.Uint32(raw[8:])), Months: int32(binary.BigEndian.Uint32(raw[12:]))}, nil
	case oidUUID:
		if err := need(16); err != nil {
			return nil, err
		}
		return string(appendUUID(nil, raw)), nil
	case oidNumeric:
		// skade's numbers are at most DECIMAL(38) or a double (10^308): a
		// value of more digits is refused before it is expanded
		if len(raw) >= 8 {
			nd, weight, dscale := int16(binary.BigEndian.Uint16(raw)), int16(binary.BigEndian.Uint16(raw[2:])), int16(binary.BigEndian.Uint16(raw[6:]))
			if nd > 100 || weight > 80 || weight < -100 || dscale > 400 || dscale < 0 {
				return nil, fmt.Errorf("numeric value out of range for skade (more than 320 digits)")
			}
		}
		var n pgtype.Numeric
		if err := (pgtype.NumericCodec{}).PlanScan(pgtype.NewMap(), oidNumeric, pgtype.BinaryFormatCode, &n).Scan(raw, &n); err != nil {
			return nil, err
		}
		if n.NaN || n.InfinityModifier != pgtype.Finite {
			return nil, fmt.Errorf("numeric NaN and infinity are not supported")
		}
		v, err := n.Value()
		if err != nil {
			return nil, err
		}
		return v, nil
	case 0:
		return nil, fmt.Errorf("could not determine data type of a binary parameter; send it in text format or give its type in Parse")
	}
	if isArrayOID(oid) {
		return decodeArrayParam(raw)
	}
	return nil, fmt.Errorf("binary format for type OID %d is not supported; send it in text format", oid)
}

func isArrayOID(oid uint32) bool {
	for _, a := range arrayOIDs {
		if a == oid {
			return true
		}
	}
	return false
}

// decodeArrayParam reads a binary array (dimensions, then each element
// by the element type's binary format) into the array's text form, which
// takes its context's type as a quoted literal would.
func decodeArrayParam(raw []byte) (any, error) {
	bad := fmt.Errorf("invalid binary array of %d bytes", len(raw))
	if len(raw) < 12 {
		return nil, bad
	}
	ndim := int(binary.BigEndian.Uint32(raw))
	elemOID := binary.BigEndian.Uint32(raw[8:])
	if ndim == 0 {
		return "{}", nil
	}
	if ndim > 6 || len(raw) < 12+8*ndim {
		return nil, bad
	}
	dims := make([]int, ndim)
	total := 1
	for d := range dims {
		n := int(int32(binary.BigEndian.Uint32(raw[12+8*d:])))
		if n < 0 || n > len(raw) {
			return nil, bad
		}
		dims[d] = n
		total *= n
		if total > len(raw) {
			return nil, bad
		}
	}
	rest := raw[12+8*ndim:]
	elems := make([]string, 0, total)
	for k := 0; k < total; k++ {
		if len(rest) < 4 {
			return nil, bad
		}
		n := int32(binary.BigEndian.Uint32(rest))
		rest = rest[4:]
		if n == -1 {
			elems = append(elems, "NULL")
			continue
		}
		if n < 0 || int(n) > len(rest) {
			return nil, bad
		}
		v, err := decodeParam(elemOID, 1, rest[:n])
		if err != nil {
			return nil, fmt.Errorf("array element %d: %w", k+1, err)
		}
		rest = rest[n:]
		t, err := arrayElemText(v)
		if err != nil {
			return nil, err
		}
		elems = append(elems, t)
	}
	if len(rest) != 0 {
		return nil, bad
	}
	var b strings.Builder
	var nest func(d int)
	nest = func(d int) {
		b.WriteByte('{')
		for i := 0; i < dims[d]; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if d+1 < len(dims) {
				nest(d + 1)
				continue
			}
			b.WriteString(elems[0])
			elems = elems[1:]
		}
		b.WriteByte('}')
	}
	nest(0)
	return b.String(), nil
}

// arrayElemText renders a decoded parameter as an element of an array's
// text form, quoted.
func arrayElemText(v any) (string, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case bool:
		s = strconv.FormatBool(x)
	case int16:
		s = strconv.FormatInt(int64(x), 10)
	case int32:
		s = strconv.FormatInt(int64(x), 10)
	case int64:
		s = strconv.FormatInt(x, 10)
	case float32:
		s = strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case []byte:
		s = `\x` + hex.EncodeToString(x)
	case arrow.Date32:
		s = x.FormattedString()
	case time.Time:
		s = x.UTC().Format("2006-01-02 15:04:05.999999Z07:00")
	case driver.Valuer:
		dv, err := x.Value()
		if err != nil {
			return "", err
		}
		return arrayElemText(dv)
	default:
		return "", fmt.Errorf("an array of %T cannot be a parameter yet; send it in text format", v)
	}
	return string(appendArrayElem(nil, []byte(s), true)), nil
}

// oidName names a type OID in messages.
func oidName(oid uint32) string {
	if n := informationSchemaType(oid); n != "USER-DEFINED" {
		return n
	}
	return fmt.Sprintf("OID %d", oid)
}
