package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	arrowflightsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/skadedb/skade/lake"
	skadeflight "github.com/skadedb/skade/server/flightsql"
	"github.com/skadedb/skade/server/pgwire"
)

// The PostgreSQL protocol benchmarks run skade's server and, when
// SKADE_BENCH_PG names one (postgres://user@127.0.0.1:5432/db), a real
// PostgreSQL server side by side: each round runs skade then PostgreSQL
// on the same data, and the medians of the rounds and their ratio are
// reported. BENCHMARKS.md has the commands.
//
//	SKADE_BENCH_PG=postgres://postgres@127.0.0.1:5440/postgres \
//	  go test -run '^$' -bench Wire -benchtime 1x -timeout 60m ./bench

const wireRounds = 5

// wireRows is the streaming benchmarks' table size (SKADE_BENCH_WIRE_ROWS,
// default 10M).
func wireRows() int {
	if v, err := strconv.Atoi(os.Getenv("SKADE_BENCH_WIRE_ROWS")); err == nil && v > 0 {
		return v
	}
	return 10_000_000
}

type wirePeer struct {
	name string
	url  string
}

// wireSetup starts a skade server on a fresh lake and lists the peers to
// compare: skade, and PostgreSQL when configured.
func wireSetup(b *testing.B) (*lake.Lake, []wirePeer) {
	ctx := context.Background()
	dir := b.TempDir()
	lk, err := lake.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lk.Close() })
	srv, err := pgwire.New(pgwire.Config{Lake: lk})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	peers := []wirePeer{{"skade", fmt.Sprintf("postgres://bench@%s:%s/lake?sslmode=disable", host, port)}}
	if u := os.Getenv("SKADE_BENCH_PG"); u != "" {
		peers = append(peers, wirePeer{"postgres", u})
	} else {
		b.Log("SKADE_BENCH_PG is not set: skade only, no PostgreSQL peer")
	}
	return lk, peers
}

func wireConnect(b *testing.B, url string, simple bool) *pgx.Conn {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		b.Fatal(err)
	}
	if simple {
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func wireMedian(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkWirePointQuery: SELECT 1-class statements per second over one
// connection and over 16, in the simple and the extended protocol.
func BenchmarkWirePointQuery(b *testing.B) {
	_, peers := wireSetup(b)
	for _, proto := range []string{"simple", "extended"} {
		for _, clients := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/clients=%d", proto, clients), func(b *testing.B) {
				const perClient = 2000
				qps := map[string][]float64{}
				conns := map[string][]*pgx.Conn{}
				for _, p := range peers {
					for range clients {
						conns[p.name] = append(conns[p.name], wireConnect(b, p.url, proto == "simple"))
					}
				}
				defer func() {
					for _, cs := range conns {
						for _, c := range cs {
							c.Close(context.Background())
						}
					}
				}()
				for round := 0; round < wireRounds; round++ {
					for _, p := range peers {
						start := time.Now()
						var wg sync.WaitGroup
						errs := make(chan error, clients)
						for _, c := range conns[p.name] {
							wg.Add(1)
							go func(c *pgx.Conn) {
								defer wg.Done()
								var v int64
								for i := 0; i < perClient; i++ {
									if err := c.QueryRow(context.Background(), "SELECT $1::BIGINT + 1", int64(i)).Scan(&v); err != nil {
										errs <- err
										return
									}
								}
							}(c)
						}
						wg.Wait()
						close(errs)
						if err := <-errs; err != nil {
							b.Fatalf("%s: %v", p.name, err)
						}
						qps[p.name] = append(qps[p.name], float64(clients*perClient)/time.Since(start).Seconds())
					}
				}
				for _, p := range peers {
					b.ReportMetric(wireMedian(qps[p.name]), p.name+"_queries/s")
				}
				if len(peers) == 2 {
					b.ReportMetric(wireMedian(qps["skade"])/wireMedian(qps["postgres"]), "skade/postgres_throughput")
				}
			})
		}
	}
}

// BenchmarkWireStream: a whole table streamed to the client, by COPY TO
// STDOUT (text) and by SELECT * in binary (values read, not decoded).
func BenchmarkWireStream(b *testing.B) {
	lk, peers := wireSetup(b)
	ctx := context.Background()
	n := wireRows()
	s := lk.Session()
	if _, err := s.SQL(ctx, fmt.Sprintf("CREATE TABLE stream AS SELECT range AS id, range * CAST(0.5 AS DOUBLE) AS v, 'name ' || CAST(range AS VARCHAR) AS s FROM range(%d)", n)); err != nil {
		b.Fatal(err)
	}
	if len(peers) == 2 {
		pg := wireConnect(b, peers[1].url, false)
		for _, q := range []string{"DROP TABLE IF EXISTS stream",
			fmt.Sprintf("CREATE TABLE stream AS SELECT i::bigint AS id, i * 0.5::float8 AS v, 'name ' || i AS s FROM generate_series(0, %d) i", n-1),
			"VACUUM ANALYZE stream"} {
			if _, err := pg.Exec(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
		pg.Close(ctx)
	}
	b.Run("flight_vs_binary", func(b *testing.B) {
		// skade's two doors on the same table, alternating: Arrow Flight
		// SQL (the engine's batches as they are) and the PostgreSQL
		// protocol in binary
		fsrv, err := skadeflight.New(skadeflight.Config{Lake: lk})
		if err != nil {
			b.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		go fsrv.Serve(ln)
		defer fsrv.Shutdown(ctx)
		fc, err := arrowflightsql.NewClient(ln.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer fc.Close()
		rate := map[string][]float64{}
		for round := 0; round < wireRounds; round++ {
			start := time.Now()
			info, err := fc.Execute(ctx, "SELECT id, v, s FROM stream")
			if err != nil {
				b.Fatal(err)
			}
			r, err := fc.DoGet(ctx, info.Endpoint[0].Ticket)
			if err != nil {
				b.Fatal(err)
			}
			var rows int64
			for r.Next() {
				rows += r.RecordBatch().NumRows()
			}
			if err := r.Err(); err != nil {
				b.Fatal(err)
			}
			r.Release()
			if rows != int64(n) {
				b.Fatalf("flight streamed %d rows", rows)
			}
			rate["flight"] = append(rate["flight"], float64(rows)/time.Since(start).Seconds())

			c := wireConnect(b, peers[0].url, false)
			start = time.Now()
			if rows = selectBinary(ctx, b, c); rows != int64(n) {
				b.Fatalf("the PostgreSQL protocol streamed %d rows, want %d", rows, n)
			}
			rate["pg_binary"] = append(rate["pg_binary"], float64(rows)/time.Since(start).Seconds())
			c.Close(ctx)
		}
		b.ReportMetric(wireMedian(rate["flight"]), "flight_rows/s")
		b.ReportMetric(wireMedian(rate["pg_binary"]), "pg_binary_rows/s")
		b.ReportMetric(wireMedian(rate["flight"])/wireMedian(rate["pg_binary"]), "flight/pg_binary")
	})
	for _, mode := range []string{"copy", "select_binary"} {
		b.Run(mode, func(b *testing.B) {
			rate := map[string][]float64{}
			for round := 0; round < wireRounds; round++ {
				for _, p := range peers {
					c := wireConnect(b, p.url, false)
					start := time.Now()
					var rows int64
					switch mode {
					case "copy":
						tag, err := c.PgConn().CopyTo(ctx, io.Discard, "COPY (SELECT id, v, s FROM stream) TO STDOUT")
						if err != nil {
							b.Fatal(err)
						}
						rows = tag.RowsAffected()
					default:
						rows = selectBinary(ctx, b, c)
					}
					if rows != int64(n) {
						b.Fatalf("%s streamed %d rows, want %d", p.name, rows, n)
					}
					rate[p.name] = append(rate[p.name], float64(rows)/time.Since(start).Seconds())
					c.Close(ctx)
				}
			}
			for _, p := range peers {
				b.ReportMetric(wireMedian(rate[p.name]), p.name+"_rows/s")
			}
			if len(peers) == 2 {
				b.ReportMetric(wireMedian(rate["skade"])/wireMedian(rate["postgres"]), "skade/postgres_rows/s")
			}
		})
	}
}

// selectBinary streams the stream table with binary results, reading
// each row's values without decoding them, and returns the row count.
func selectBinary(ctx context.Context, b *testing.B, c *pgx.Conn) int64 {
	r, err := c.Query(ctx, "SELECT id, v, s FROM stream", pgx.QueryResultFormats{pgx.BinaryFormatCode})
	if err != nil {
		b.Fatal(err)
	}
	var rows int64
	for r.Next() {
		_ = r.RawValues()
		rows++
	}
	r.Close()
	if err := r.Err(); err != nil {
		b.Fatal(err)
	}
	return rows
}

// BenchmarkWireMerge: the same MERGE (1M-row target, 1% of its keys
// updated and 10% new) in process and over the wire, alternating; the
// ratio is what the protocol adds.
func BenchmarkWireMerge(b *testing.B) {
	lk, peers := wireSetup(b)
	ctx := context.Background()
	const rows = 1_000_000
	s := lk.Session()
	if _, err := s.SQL(ctx, fmt.Sprintf("CREATE TABLE src AS SELECT range * 100 AS id, range AS amount, 'upd' AS status FROM range(%d) UNION ALL SELECT %d + range AS id, range AS amount, 'new' AS status FROM range(%d)", rows/100, rows, rows/10)); err != nil {
		b.Fatal(err)
	}
	reset := fmt.Sprintf("CREATE OR REPLACE TABLE tgt AS SELECT range AS id, range AS amount, 'old' AS status FROM range(%d)", rows)
	merge := "MERGE INTO tgt USING src ON tgt.id = src.id WHEN MATCHED THEN UPDATE SET amount = src.amount, status = src.status WHEN NOT MATCHED THEN INSERT VALUES (src.id, src.amount, src.status)"
	c := wireConnect(b, peers[0].url, false)
	defer c.Close(ctx)
	times := map[string][]float64{}
	for round := 0; round < wireRounds; round++ {
		for _, where := range []string{"in_process", "wire"} {
			if _, err := s.SQL(ctx, reset); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			var n int64
			if where == "wire" {
				tag, err := c.Exec(ctx, merge)
				if err != nil {
					b.Fatal(err)
				}
				n = tag.RowsAffected()
			} else {
				res, err := s.SQL(ctx, merge)
				if err != nil {
					b.Fatal(err)
				}
				m := res.Metrics()
				res.Close()
				n = m.RowsInserted + m.RowsUpdated
			}
			if n != rows/100+rows/10 {
				b.Fatalf("%s merged %d rows", where, n)
			}
			times[where] = append(times[where], time.Since(start).Seconds())
		}
	}
	b.ReportMetric(wireMedian(times["in_process"])*1000, "in_process_ms")
	b.ReportMetric(wireMedian(times["wire"])*1000, "wire_ms")
	b.ReportMetric(wireMedian(times["wire"])/wireMedian(times["in_process"]), "wire/in_process")
}
