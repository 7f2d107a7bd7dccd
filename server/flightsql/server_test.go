package flightsql_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowflightsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	_ "github.com/apache/arrow-go/v18/arrow/flight/flightsql/driver"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/server/flightsql"
)

func start(t *testing.T, cfg flightsql.Config) (*lake.Lake, string) {
	t.Helper()
	ctx := context.Background()
	if cfg.Lake == nil {
		lk, err := lake.Open(ctx, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lk.Close() })
		cfg.Lake = lk
	}
	srv, err := flightsql.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return cfg.Lake, ln.Addr().String()
}

func client(t *testing.T, addr string) *arrowflightsql.Client {
	t.Helper()
	c, err := arrowflightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readAll runs a FlightInfo's endpoints and returns the batches.
func readAll(t *testing.T, c *arrowflightsql.Client, info *flight.FlightInfo) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	var out []arrow.RecordBatch
	var schema *arrow.Schema
	for _, ep := range info.Endpoint {
		r, err := c.DoGet(context.Background(), ep.Ticket)
		if err != nil {
			t.Fatal(err)
		}
		schema = r.Schema()
		for r.Next() {
			b := r.RecordBatch()
			b.Retain()
			out = append(out, b)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		r.Release()
	}
	return schema, out
}

func rowsText(bs []arrow.RecordBatch) string {
	var lines []string
	for _, b := range bs {
		for i := 0; i < int(b.NumRows()); i++ {
			var vals []string
			for j := 0; j < int(b.NumCols()); j++ {
				vals = append(vals, b.Column(j).ValueStr(i))
			}
			lines = append(lines, strings.Join(vals, "|"))
		}
		b.Release()
	}
	return strings.Join(lines, "\n")
}

func TestFlightSQLClient(t *testing.T) {
	_, addr := start(t, flightsql.Config{})
	c := client(t, addr)
	ctx := context.Background()
	if _, err := c.ExecuteUpdate(ctx, "CREATE TABLE t (id BIGINT, name VARCHAR)"); err != nil {
		t.Fatal(err)
	}
	n, err := c.ExecuteUpdate(ctx, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	if err != nil || n != 3 {
		t.Fatalf("insert: %d %v", n, err)
	}
	info, err := c.Execute(ctx, "SELECT id, name FROM t WHERE id >= 2 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	schema, bs := readAll(t, c, info)
	if got := rowsText(bs); got != "2|b\n3|c" {
		t.Errorf("rows %q", got)
	}
	if schema.Field(0).Type.ID() != arrow.INT64 || schema.Field(1).Type.ID() != arrow.STRING {
		t.Errorf("schema %v", schema)
	}
	if info.Schema == nil {
		t.Error("FlightInfo carries no schema")
	}

	// prepared statement with a parameter bound as an Arrow batch
	prep, err := c.Prepare(ctx, "SELECT name FROM t WHERE id = $1")
	if err != nil {
		t.Fatal(err)
	}
	if ps := prep.ParameterSchema(); ps == nil || ps.NumFields() != 1 || ps.Field(0).Type.ID() != arrow.INT64 {
		t.Errorf("parameter schema %v", ps)
	}
	bld := array.NewRecordBuilder(memory.DefaultAllocator, prep.ParameterSchema())
	bld.Field(0).(*array.Int64Builder).Append(3)
	params := bld.NewRecordBatch()
	bld.Release()
	prep.SetParameters(params)
	info, err = prep.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, bs := readAll(t, c, info); rowsText(bs) != "c" {
		t.Errorf("prepared rows")
	}
	params.Release()
	prep.Close(ctx)

	// a prepared update runs once per bound row
	up, err := c.Prepare(ctx, "UPDATE t SET name = 'x' WHERE id = $1")
	if err != nil {
		t.Fatal(err)
	}
	bld = array.NewRecordBuilder(memory.DefaultAllocator, up.ParameterSchema())
	bld.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	rows := bld.NewRecordBatch()
	bld.Release()
	up.SetParameters(rows)
	if n, err := up.ExecuteUpdate(ctx); err != nil || n != 2 {
		t.Errorf("prepared update: %d %v", n, err)
	}
	rows.Release()
	up.Close(ctx)

	// metadata
	info, err = c.GetTables(ctx, &arrowflightsql.GetTablesOpts{IncludeSchema: true})
	if err != nil {
		t.Fatal(err)
	}
	_, bs = readAll(t, c, info)
	if got := rowsText(bs); !strings.Contains(got, "skade|main|t|TABLE|") {
		t.Errorf("tables %q", got)
	}
	info, err = c.GetDBSchemas(ctx, &arrowflightsql.GetDBSchemasOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if _, bs := readAll(t, c, info); rowsText(bs) != "skade|main" {
		t.Errorf("schemas")
	}
	info, err = c.GetSqlInfo(ctx, []arrowflightsql.SqlInfo{arrowflightsql.SqlInfoFlightSqlServerName})
	if err != nil {
		t.Fatal(err)
	}
	if _, bs := readAll(t, c, info); !strings.Contains(rowsText(bs), "skade") {
		t.Errorf("sql info")
	}

	// errors carry gRPC codes
	_, err = c.Execute(ctx, "SELECT * FROM nope")
	if status.Code(err) != codes.NotFound {
		t.Errorf("missing table: %v", err)
	}
	_, err = c.Execute(ctx, "SELEC 1")
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("syntax error: %v", err)
	}
}

func TestFlightSQLTransactionsAndIngest(t *testing.T) {
	lk, addr := start(t, flightsql.Config{})
	c := client(t, addr)
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for i := 0; i < 1000; i++ {
		bld.Field(0).(*array.Int64Builder).Append(int64(i))
		bld.Field(1).(*array.StringBuilder).Append("v")
	}
	batch := bld.NewRecordBatch()
	bld.Release()
	rdr, _ := array.NewRecordReader(schema, []arrow.RecordBatch{batch, batch})
	n, err := c.ExecuteIngest(ctx, rdr, &arrowflightsql.ExecuteIngestOpts{Table: "ingested",
		TableDefinitionOptions: &arrowflightsql.TableDefinitionOptions{IfNotExist: arrowflightsql.TableDefinitionOptionsTableNotExistOptionCreate, IfExists: arrowflightsql.TableDefinitionOptionsTableExistsOptionAppend}})
	if err != nil || n != 2000 {
		t.Fatalf("ingest: %d %v", n, err)
	}
	tbl, err := lk.Table(ctx, "ingested")
	if err != nil {
		t.Fatal(err)
	}
	if h, err := tbl.History(ctx); err != nil || len(h) != 1 {
		t.Errorf("ingest made %d snapshots (%v), want 1", len(h), err)
	}

	tx, err := c.BeginTransaction(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecuteUpdate(ctx, "DELETE FROM ingested WHERE id < 500"); err != nil {
		t.Fatal(err)
	}
	info, err := tx.Execute(ctx, "SELECT count(*) FROM ingested")
	if err != nil {
		t.Fatal(err)
	}
	if _, bs := readAll(t, c, info); rowsText(bs) != "1000" {
		t.Errorf("inside the transaction")
	}
	info, _ = c.Execute(ctx, "SELECT count(*) FROM ingested")
	if _, bs := readAll(t, c, info); rowsText(bs) != "2000" {
		t.Errorf("outside the transaction")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	tx, _ = c.BeginTransaction(ctx)
	tx.ExecuteUpdate(ctx, "DELETE FROM ingested WHERE id < 500")
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	info, _ = c.Execute(ctx, "SELECT count(*) FROM ingested")
	if _, bs := readAll(t, c, info); rowsText(bs) != "1000" {
		t.Errorf("after commit")
	}
	batch.Release()
}

// TestFlightSQLCancel: a client's cancelled context ends the statement.
func TestFlightSQLCancel(t *testing.T) {
	_, addr := start(t, flightsql.Config{})
	c := client(t, addr)
	info, err := c.Execute(context.Background(), "SELECT count(*) FROM range(100000000000) a WHERE a.range % 7 = 1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	r, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	if err == nil {
		for r.Next() {
		}
		err = r.Err()
		r.Release()
	}
	if err == nil {
		t.Fatal("the statement finished")
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("cancel took %s", time.Since(start))
	}
}

// TestFlightSQLDatabaseSQL uses arrow-go's Flight SQL database/sql driver.
func TestFlightSQLDatabaseSQL(t *testing.T) {
	_, addr := start(t, flightsql.Config{})
	db, err := sql.Open("flightsql", "flightsql://"+addr+"?timeout=10s")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE people (id BIGINT, name VARCHAR)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO people VALUES (1, 'Ada'), (2, 'Alan')"); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := db.QueryRowContext(ctx, "SELECT name FROM people WHERE id = ?", int64(2)).Scan(&name); err != nil || name != "Alan" {
		t.Fatalf("query: %q %v", name, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM people WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM people").Scan(&n); err != nil || n != 2 {
		t.Errorf("after rollback: %d %v", n, err)
	}
}

// TestFlightSQLAuth: with a password, basic auth is required.
func TestFlightSQLAuth(t *testing.T) {
	_, addr := start(t, flightsql.Config{Users: map[string]string{"alice": "s3cret"}})
	c := client(t, addr)
	ctx := context.Background()
	if _, err := c.Execute(ctx, "SELECT 1"); status.Code(err) != codes.Unauthenticated {
		t.Errorf("unauthenticated call: %v", err)
	}
	if _, err := c.Client.AuthenticateBasicToken(ctx, "alice", "wrong"); err == nil {
		t.Error("wrong password accepted")
	}
	authCtx, err := c.Client.AuthenticateBasicToken(ctx, "alice", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Execute(authCtx, "SELECT 41 + 1")
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.DoGet(authCtx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if !r.Next() || r.RecordBatch().Column(0).ValueStr(0) != "42" {
		t.Errorf("authenticated query: %v", r.Err())
	}
	_ = errors.New
}
