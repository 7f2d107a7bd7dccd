package flightsql

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/server"
)

// Config configures a Server; only Lake is required.
type Config struct {
	Lake *lake.Lake
	// Users and Password are the PostgreSQL server's (pgwire.Config):
	// when either is set, clients authenticate with basic auth.
	Users    map[string]string
	Password string
	// TLS serves gRPC over TLS.
	TLS *tls.Config
	// AllowTrustRemote lets a server without authentication listen on a
	// non-loopback address.
	AllowTrustRemote bool
	// MemoryLimit is each statement's SET memory_limit; "" keeps the
	// lake's.
	MemoryLimit string
}

// Server is a Flight SQL server over one lake.
type Server struct {
	flightsql.BaseServer
	cfg  Config
	grpc *grpc.Server

	mu       sync.Mutex
	txs      map[string]*txn
	prepared map[string]*prepared
	tokens   map[string]string
}

type txn struct {
	mu   sync.Mutex
	sess *lake.Session
}

type prepared struct {
	query  string
	stmt   parser.Stmt
	txid   string
	params []any
	schema *arrow.Schema
	pschem *arrow.Schema
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Lake == nil {
		return nil, errors.New("flightsql: Config.Lake is required")
	}
	s := &Server{cfg: cfg, txs: map[string]*txn{}, prepared: map[string]*prepared{}, tokens: map[string]string{}}
	s.Alloc = memory.DefaultAllocator
	for id, v := range map[flightsql.SqlInfo]any{
		flightsql.SqlInfoFlightSqlServerName:                        "skade",
		flightsql.SqlInfoFlightSqlServerVersion:                     "0",
		flightsql.SqlInfoFlightSqlServerArrowVersion:                "18",
		flightsql.SqlInfoFlightSqlServerReadOnly:                    false,
		flightsql.SqlInfoFlightSqlServerTransaction:                 int32(flightsql.SqlTransactionTransaction),
		flightsql.SqlInfoFlightSqlServerCancel:                      true,
		flightsql.SqlInfoFlightSqlServerBulkIngestion:               true,
		flightsql.SqlInfoFlightSqlServerIngestTransactionsSupported: true,
	} {
		if err := s.RegisterSqlInfo(id, v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Server) passwords() server.Passwords {
	return server.Passwords{Users: s.cfg.Users, Password: s.cfg.Password}
}

func (s *Server) authRequired() bool { return s.passwords().Required() }

// Listen opens a listener on addr, refusing a non-loopback address
// without authentication unless AllowTrustRemote.
func (s *Server) Listen(addr string) (net.Listener, error) {
	if err := server.CheckListen("flightsql", addr, s.passwords(), s.cfg.AllowTrustRemote); err != nil {
		return nil, err
	}
	return net.Listen("tcp", addr)
}

// Serve serves Flight SQL on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	if err := server.CheckListen("flightsql", ln.Addr().String(), s.passwords(), s.cfg.AllowTrustRemote); err != nil {
		return err
	}
	var opts []grpc.ServerOption
	if s.cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.cfg.TLS)))
	}
	if s.authRequired() {
		mw := flight.CreateServerBasicAuthMiddleware(validator{s})
		opts = append(opts, grpc.ChainUnaryInterceptor(mw.Unary), grpc.ChainStreamInterceptor(mw.Stream))
	}
	opts = append(opts, grpc.MaxRecvMsgSize(64<<20))
	s.mu.Lock()
	s.grpc = grpc.NewServer(opts...)
	g := s.grpc
	s.mu.Unlock()
	flight.RegisterFlightServiceServer(g, flightsql.NewFlightServer(s))
	return g.Serve(ln)
}

// Shutdown stops accepting calls and waits for running ones until ctx
// ends, then cancels them; open transactions are rolled back.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	g := s.grpc
	s.mu.Unlock()
	if g != nil {
		done := make(chan struct{})
		go func() {
			g.GracefulStop()
			close(done)
		}()
		select {
		case <-done:
		case <-ctx.Done():
			g.Stop()
			<-done
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.txs {
		t.sess.Close()
		delete(s.txs, id)
	}
	return nil
}

type validator struct{ s *Server }

func (v validator) Validate(user, pass string) (string, error) {
	want, ok := v.s.passwords().Lookup(user)
	if !ok || subtle.ConstantTimeCompare([]byte(want), []byte(pass)) != 1 {
		return "", status.Error(codes.Unauthenticated, "authentication failed")
	}
	tok := randomID()
	v.s.mu.Lock()
	v.s.tokens[tok] = user
	v.s.mu.Unlock()
	return tok, nil
}

func (v validator) IsValid(token string) (any, error) {
	v.s.mu.Lock()
	defer v.s.mu.Unlock()
	if user, ok := v.s.tokens[token]; ok {
		return user, nil
	}
	return nil, status.Error(codes.Unauthenticated, "invalid token")
}

func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// session returns the session a statement runs on: the transaction's
// (locked until release) or a new one.
func (s *Server) session(txid []byte) (*lake.Session, func(), error) {
	if len(txid) == 0 {
		sess := s.cfg.Lake.Session()
		if s.cfg.MemoryLimit != "" {
			if res, err := sess.SQL(context.Background(), "SET memory_limit = '"+strings.ReplaceAll(s.cfg.MemoryLimit, "'", "''")+"'"); err == nil {
				res.Close()
			}
		}
		return sess, func() { sess.Close() }, nil
	}
	s.mu.Lock()
	t, ok := s.txs[string(txid)]
	s.mu.Unlock()
	if !ok {
		return nil, nil, status.Errorf(codes.NotFound, "transaction %x does not exist (ended, or never begun)", txid)
	}
	t.mu.Lock()
	return t.sess, t.mu.Unlock, nil
}

// grpcError gives a statement's error its gRPC status code.
func grpcError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok && status.Code(err) != codes.Unknown {
		return err
	}
	code := codes.Internal
	var pe *parser.Error
	var tx *lake.TxAbortedError
	switch {
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, lake.ErrTableNotFound), errors.Is(err, lake.ErrNamespaceNotFound), errors.Is(err, fs.ErrNotExist):
		code = codes.NotFound
	case errors.Is(err, lake.ErrTableExists):
		code = codes.AlreadyExists
	case errors.Is(err, lake.ErrCommitConflict):
		code = codes.Aborted
	case errors.As(err, &tx), errors.Is(err, lake.ErrTxAborted):
		code = codes.FailedPrecondition
	case errors.Is(err, lake.ErrMemoryLimit):
		code = codes.ResourceExhausted
	case errors.Is(err, lake.ErrNotImplemented):
		code = codes.Unimplemented
	case errors.As(err, &pe), errors.Is(err, lake.ErrInvalidArgument), errors.Is(err, lake.ErrInvalidName):
		code = codes.InvalidArgument
	}
	return status.Error(code, err.Error())
}

func parseOne(query string) (parser.Stmt, error) {
	stmt, err := parser.ParseOne(query)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return stmt, nil
}

// statementHandle is a statement query's ticket: the query and its
// transaction, so that DoGet needs no server state.
type statementHandle struct {
	Query string `json:"q"`
	Tx    string `json:"tx,omitempty"`
}

func (s *Server) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	stmt, err := parseOne(cmd.GetQuery())
	if err != nil {
		return nil, err
	}
	sess, release, err := s.session(cmd.GetTransactionId())
	if err != nil {
		return nil, err
	}
	d, err := sess.Describe(ctx, stmt, 0)
	release()
	if err != nil {
		return nil, grpcError(err)
	}
	handle, _ := json.Marshal(statementHandle{Query: cmd.GetQuery(), Tx: string(cmd.GetTransactionId())})
	tkt, err := flightsql.CreateStatementQueryTicket(handle)
	if err != nil {
		return nil, err
	}
	return flightInfo(tkt, desc, d.Schema, s.Alloc), nil
}

func (s *Server) GetSchemaStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	info, err := s.GetFlightInfoStatement(ctx, cmd, desc)
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: info.Schema}, nil
}

func (s *Server) DoGetStatement(ctx context.Context, tkt flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	var h statementHandle
	if err := json.Unmarshal(tkt.GetStatementHandle(), &h); err != nil {
		return nil, nil, status.Error(codes.InvalidArgument, "flightsql: not a skade statement ticket")
	}
	stmt, err := parseOne(h.Query)
	if err != nil {
		return nil, nil, err
	}
	return s.stream(ctx, []byte(h.Tx), stmt, nil)
}

// stream runs stmt and streams its batches as they come.
func (s *Server) stream(ctx context.Context, txid []byte, stmt parser.Stmt, args []any) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	sess, release, err := s.session(txid)
	if err != nil {
		return nil, nil, err
	}
	res, err := sess.Run(ctx, stmt, args...)
	if err != nil {
		release()
		return nil, nil, grpcError(err)
	}
	ch := make(chan flight.StreamChunk, 2)
	rdr := &releasing{RecordReader: &chunking{RecordReader: res.Reader()}, done: release}
	go flight.StreamChunksFromReader(ctx, rdr, ch)
	return res.Schema(), ch, nil
}

// maxMessageBytes bounds a streamed batch's size: gRPC clients refuse
// messages over 4 MiB unless told otherwise, so larger batches are sent
// in row slices.
const maxMessageBytes = 2 << 20

// chunking slices the batches of a reader to at most maxMessageBytes.
type chunking struct {
	array.RecordReader
	pending []arrow.RecordBatch
	cur     arrow.RecordBatch
}

func (c *chunking) Next() bool {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	if len(c.pending) == 0 {
		if !c.RecordReader.Next() {
			return false
		}
		b := c.RecordReader.RecordBatch()
		size := batchBytes(b)
		rows := b.NumRows()
		if size <= maxMessageBytes || rows <= 1 {
			b.Retain()
			c.pending = append(c.pending, b)
		} else {
			parts := (size + maxMessageBytes - 1) / maxMessageBytes
			step := max(1, (rows+parts-1)/parts)
			for lo := int64(0); lo < rows; lo += step {
				c.pending = append(c.pending, b.NewSlice(lo, min(rows, lo+step)))
			}
		}
	}
	c.cur, c.pending = c.pending[0], c.pending[1:]
	return true
}

// batchBytes is the size of a batch's buffers (a slice counts its whole
// buffers: an overestimate, which only splits more).
func batchBytes(b arrow.RecordBatch) int64 {
	var n int64
	var add func(d arrow.ArrayData)
	add = func(d arrow.ArrayData) {
		for _, buf := range d.Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
		for _, c := range d.Children() {
			add(c)
		}
	}
	for _, col := range b.Columns() {
		add(col.Data())
	}
	return n
}

func (c *chunking) RecordBatch() arrow.RecordBatch { return c.cur }
func (c *chunking) Record() arrow.RecordBatch      { return c.cur }

func (c *chunking) Release() {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	for _, b := range c.pending {
		b.Release()
	}
	c.pending = nil
	c.RecordReader.Release()
}

// releasing runs done once when the reader is released.
type releasing struct {
	array.RecordReader
	once sync.Once
	done func()
}

func (r *releasing) Release() {
	r.RecordReader.Release()
	r.once.Do(r.done)
}

func (r *releasing) Err() error { return grpcError(r.RecordReader.Err()) }

// execUpdate runs a statement to its end and returns the rows it changed.
func (s *Server) execUpdate(ctx context.Context, txid []byte, stmt parser.Stmt, args []any) (int64, error) {
	sess, release, err := s.session(txid)
	if err != nil {
		return 0, err
	}
	defer release()
	res, err := sess.Run(ctx, stmt, args...)
	if err != nil {
		return 0, grpcError(err)
	}
	bs, err := res.Collect(ctx)
	if err != nil {
		return 0, grpcError(err)
	}
	for _, b := range bs {
		b.Release()
	}
	m := res.Metrics()
	return m.RowsInserted + m.RowsUpdated + m.RowsDeleted, nil
}

func (s *Server) DoPutCommandStatementUpdate(ctx context.Context, cmd flightsql.StatementUpdate) (int64, error) {
	stmt, err := parseOne(cmd.GetQuery())
	if err != nil {
		return 0, err
	}
	return s.execUpdate(ctx, cmd.GetTransactionId(), stmt, nil)
}

func (s *Server) CreatePreparedStatement(ctx context.Context, req flightsql.ActionCreatePreparedStatementRequest) (flightsql.ActionCreatePreparedStatementResult, error) {
	var res flightsql.ActionCreatePreparedStatementResult
	stmt, err := parseOne(req.GetQuery())
	if err != nil {
		return res, err
	}
	sess, release, err := s.session(req.GetTransactionId())
	if err != nil {
		return res, err
	}
	d, err := sess.Describe(ctx, stmt, 0)
	release()
	if err != nil {
		return res, grpcError(err)
	}
	fields := make([]arrow.Field, len(d.Params))
	for i, t := range d.Params {
		if t == nil {
			t = arrow.BinaryTypes.String
		}
		fields[i] = arrow.Field{Name: fmt.Sprintf("$%d", i+1), Type: t, Nullable: true}
	}
	p := &prepared{query: req.GetQuery(), stmt: stmt, txid: string(req.GetTransactionId()), schema: d.Schema, pschem: arrow.NewSchema(fields, nil)}
	id := randomID()
	s.mu.Lock()
	s.prepared[id] = p
	s.mu.Unlock()
	res.Handle = []byte(id)
	res.DatasetSchema = d.Schema
	res.ParameterSchema = p.pschem
	return res, nil
}

func (s *Server) lookupPrepared(handle []byte) (*prepared, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.prepared[string(handle)]
	if !ok {
		return nil, status.Error(codes.NotFound, "prepared statement does not exist (closed, or never prepared)")
	}
	return p, nil
}

func (s *Server) ClosePreparedStatement(_ context.Context, req flightsql.ActionClosePreparedStatementRequest) error {
	s.mu.Lock()
	delete(s.prepared, string(req.GetPreparedStatementHandle()))
	s.mu.Unlock()
	return nil
}

// DoPutPreparedStatementQuery binds parameters: the last row of the
// batches the client sends.
func (s *Server) DoPutPreparedStatementQuery(_ context.Context, cmd flightsql.PreparedStatementQuery, rdr flight.MessageReader, _ flight.MetadataWriter) ([]byte, error) {
	p, err := s.lookupPrepared(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	rows, err := paramRows(rdr)
	if err != nil {
		return nil, err
	}
	if len(rows) > 0 {
		s.mu.Lock()
		p.params = rows[len(rows)-1]
		s.mu.Unlock()
	}
	return cmd.GetPreparedStatementHandle(), nil
}

func (s *Server) GetFlightInfoPreparedStatement(_ context.Context, cmd flightsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	p, err := s.lookupPrepared(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	return flightInfo(desc.Cmd, desc, p.schema, s.Alloc), nil
}

func (s *Server) GetSchemaPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	info, err := s.GetFlightInfoPreparedStatement(ctx, cmd, desc)
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: info.Schema}, nil
}

func (s *Server) DoGetPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	p, err := s.lookupPrepared(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	args := p.params
	s.mu.Unlock()
	return s.stream(ctx, []byte(p.txid), p.stmt, args)
}

// DoPutPreparedStatementUpdate runs the statement once per bound row (once
// with the bound parameters when the client sends none).
func (s *Server) DoPutPreparedStatementUpdate(ctx context.Context, cmd flightsql.PreparedStatementUpdate, rdr flight.MessageReader) (int64, error) {
	p, err := s.lookupPrepared(cmd.GetPreparedStatementHandle())
	if err != nil {
		return 0, err
	}
	rows, err := paramRows(rdr)
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 {
		s.mu.Lock()
		rows = [][]any{p.params}
		s.mu.Unlock()
	}
	var total int64
	for _, args := range rows {
		n, err := s.execUpdate(ctx, []byte(p.txid), p.stmt, args)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

func (s *Server) BeginTransaction(ctx context.Context, _ flightsql.ActionBeginTransactionRequest) ([]byte, error) {
	sess := s.cfg.Lake.Session()
	if err := sess.Begin(ctx); err != nil {
		return nil, grpcError(err)
	}
	id := randomID()
	s.mu.Lock()
	s.txs[id] = &txn{sess: sess}
	s.mu.Unlock()
	return []byte(id), nil
}

func (s *Server) EndTransaction(ctx context.Context, req flightsql.ActionEndTransactionRequest) error {
	s.mu.Lock()
	t, ok := s.txs[string(req.GetTransactionId())]
	delete(s.txs, string(req.GetTransactionId()))
	s.mu.Unlock()
	if !ok {
		return status.Errorf(codes.NotFound, "transaction %x does not exist", req.GetTransactionId())
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch req.GetAction() {
	case flightsql.EndTransactionCommit:
		return grpcError(t.sess.Commit(ctx))
	case flightsql.EndTransactionRollback:
		return grpcError(t.sess.Rollback(ctx))
	}
	t.sess.Close()
	return status.Error(codes.InvalidArgument, "end transaction: the action must be commit or rollback")
}

// DoPutCommandStatementIngest appends the client's batches to a table
// (creating or replacing it as the options say) in one commit.
func (s *Server) DoPutCommandStatementIngest(ctx context.Context, cmd flightsql.StatementIngest, rdr flight.MessageReader) (int64, error) {
	if cmd.GetTemporary() {
		return 0, status.Error(codes.Unimplemented, "ingest: temporary tables are not supported")
	}
	name := cmd.GetTable()
	if name == "" {
		return 0, status.Error(codes.InvalidArgument, "ingest: no table name")
	}
	quoted, lookup := quoteIdent(name), name
	if sch := cmd.GetSchema(); sch != "" {
		quoted, lookup = quoteIdent(sch)+"."+quoted, sch+"."+name
	}
	sess, release, err := s.session(cmd.GetTransactionId())
	if err != nil {
		return 0, err
	}
	defer release()
	_, lookErr := s.cfg.Lake.Table(ctx, lookup)
	exists := lookErr == nil
	opts := cmd.GetTableDefinitionOptions()
	var ifNot flightsql.TableDefinitionOptionsTableNotExistOption
	var ifExists flightsql.TableDefinitionOptionsTableExistsOption
	if opts != nil {
		ifNot, ifExists = opts.IfNotExist, opts.IfExists
	}
	src := "flight_ingest_" + randomID()
	if err := sess.RegisterReader(ctx, src, rdr); err != nil {
		return 0, grpcError(err)
	}
	defer sess.Unregister(src)
	var q string
	switch {
	case !exists && ifNot == flightsql.TableDefinitionOptionsTableNotExistOptionFail:
		return 0, status.Errorf(codes.NotFound, "ingest: table %s does not exist", name)
	case !exists:
		q = fmt.Sprintf("CREATE TABLE %s AS SELECT * FROM %s", quoted, src)
	case ifExists == flightsql.TableDefinitionOptionsTableExistsOptionFail:
		return 0, status.Errorf(codes.AlreadyExists, "ingest: table %s exists", name)
	case ifExists == flightsql.TableDefinitionOptionsTableExistsOptionReplace:
		q = fmt.Sprintf("CREATE OR REPLACE TABLE %s AS SELECT * FROM %s", quoted, src)
	default:
		q = fmt.Sprintf("INSERT INTO %s BY NAME SELECT * FROM %s", quoted, src)
	}
	res, err := sess.SQL(ctx, q)
	if err != nil {
		return 0, grpcError(err)
	}
	bs, err := res.Collect(ctx)
	if err != nil {
		return 0, grpcError(err)
	}
	for _, b := range bs {
		b.Release()
	}
	return res.Metrics().RowsInserted, nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// paramRows reads bound parameter batches into rows of Go values.
func paramRows(rdr flight.MessageReader) ([][]any, error) {
	var rows [][]any
	for rdr.Next() {
		b := rdr.RecordBatch()
		for i := 0; i < int(b.NumRows()); i++ {
			row := make([]any, b.NumCols())
			for j := range row {
				v, err := goValue(b.Column(j), i)
				if err != nil {
					return nil, status.Errorf(codes.InvalidArgument, "parameter $%d: %v", j+1, err)
				}
				row[j] = v
			}
			rows = append(rows, row)
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, err
	}
	return rows, nil
}

// goValue is a parameter's value as lake takes it.
func goValue(a arrow.Array, i int) (any, error) {
	if a.IsNull(i) {
		return nil, nil
	}
	switch c := a.(type) {
	case *array.Boolean:
		return c.Value(i), nil
	case *array.Int8:
		return c.Value(i), nil
	case *array.Int16:
		return c.Value(i), nil
	case *array.Int32:
		return c.Value(i), nil
	case *array.Int64:
		return c.Value(i), nil
	case *array.Float32:
		return c.Value(i), nil
	case *array.Float64:
		return c.Value(i), nil
	case *array.String:
		return c.Value(i), nil
	case *array.LargeString:
		return c.Value(i), nil
	case *array.Binary:
		return append([]byte(nil), c.Value(i)...), nil
	case *array.Date32:
		return c.Value(i), nil
	case *array.Timestamp:
		tt := c.DataType().(*arrow.TimestampType)
		t := c.Value(i).ToTime(tt.Unit).UTC()
		if tt.TimeZone == "" {
			// as text, so that it takes timestamp's type, not timestamptz
			return t.Format("2006-01-02 15:04:05.999999"), nil
		}
		return t, nil
	case *array.Decimal128:
		return c.Value(i).ToString(c.DataType().(*arrow.Decimal128Type).Scale), nil
	case *array.Null:
		return nil, nil
	}
	return a.ValueStr(i), nil
}

// flightInfo is a FlightInfo with one endpoint, the ticket, and the
// result's schema when it is known.
func flightInfo(ticket []byte, desc *flight.FlightDescriptor, schema *arrow.Schema, mem memory.Allocator) *flight.FlightInfo {
	info := &flight.FlightInfo{
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: ticket}}},
		FlightDescriptor: desc,
		TotalRecords:     -1,
		TotalBytes:       -1,
	}
	if schema != nil {
		info.Schema = flight.SerializeSchema(schema, mem)
	}
	return info
}
