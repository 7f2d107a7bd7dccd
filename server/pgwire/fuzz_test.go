package pgwire_test

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/skadedb/skade/server/pgwire"
)

// startupBytes is a valid protocol 3.0 startup message.
func startupBytes() []byte {
	b, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "fuzz", "database": "lake"}}).Encode(nil)
	return b
}

func msg(m pgproto3.FrontendMessage) []byte {
	b, _ := m.Encode(nil)
	return b
}

// FuzzMessages sends arbitrary bytes after a valid startup: the server
// must neither panic nor stop serving others. Run the seeds with go test,
// and search with: go test ./server/pgwire -run '^$' -fuzz FuzzMessages.
func FuzzMessages(f *testing.F) {
	f.Add(msg(&pgproto3.Query{String: "SELECT 1"}))
	f.Add(append(msg(&pgproto3.Parse{Name: "s", Query: "SELECT $1::BIGINT"}), msg(&pgproto3.Sync{})...))
	f.Add(append(append(msg(&pgproto3.Parse{Query: "SELECT $1"}), msg(&pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{1, 2}}})...), msg(&pgproto3.Execute{})...))
	f.Add(msg(&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "nope"}))
	f.Add(msg(&pgproto3.Describe{ObjectType: 'X'}))
	f.Add(append(msg(&pgproto3.Query{String: "COPY t FROM STDIN"}), msg(&pgproto3.CopyData{Data: []byte("1\t2\n")})...))
	copyIn := func(format string, data []byte) []byte {
		b := msg(&pgproto3.Query{String: "COPY t FROM STDIN " + format})
		b = append(b, msg(&pgproto3.CopyData{Data: data})...)
		return append(b, msg(&pgproto3.CopyDone{})...)
	}
	f.Add(copyIn("", []byte("1\tx\t1.50\t2026-01-01 00:00:00\n2\t\\N\t\\N\t\\N\n")))
	f.Add(copyIn("(FORMAT csv)", []byte("1,\"a,b\",2.00,2026-01-01\n\"unterminated")))
	hdr := append([]byte("PGCOPY\n\xff\r\n\x00"), 0, 0, 0, 0, 0, 0, 0, 0)
	f.Add(copyIn("(FORMAT binary)", append(append([]byte{}, hdr...), 0, 4, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 3, 1, 2, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)))
	f.Add(copyIn("(FORMAT binary)", append(append([]byte{}, hdr...), 0, 4, 0x7f, 0xff, 0xff, 0xff)))
	f.Add([]byte{'Q', 0, 0, 0, 3})
	f.Add([]byte{'B', 0, 0, 0, 12, 0, 0, 0, 0, 0xff, 0xff, 0, 0})
	f.Add([]byte{'P', 0x7f, 0xff, 0xff, 0xff})
	fuzzSrv := startServer(f, pgwire.Config{MaxMessageSize: 1 << 20})
	setup := fuzzSrv.lake.Session()
	if err := setup.Exec(context.Background(), "CREATE TABLE t (a BIGINT, b VARCHAR, c DECIMAL(10,2), d TIMESTAMP)"); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nc, err := net.Dial("tcp", fuzzSrv.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.Write(startupBytes())
		nc.Write(data)
		nc.Write(msg(&pgproto3.Sync{}))
		nc.Write(msg(&pgproto3.Terminate{}))
		// end of input: a message cut short ends at EOF, not a timeout
		nc.(*net.TCPConn).CloseWrite()
		nc.SetReadDeadline(time.Now().Add(2 * time.Second))
		io.Copy(io.Discard, nc)
		// the server still answers
		c2, err := net.Dial("tcp", fuzzSrv.addr)
		if err != nil {
			t.Fatalf("server stopped accepting: %v", err)
		}
		defer c2.Close()
		c2.Write(startupBytes())
		c2.Write(msg(&pgproto3.Query{String: "SELECT 1"}))
		fe := pgproto3.NewFrontend(c2, c2)
		c2.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			m, err := fe.Receive()
			if err != nil {
				t.Fatalf("server stopped answering: %v", err)
			}
			if dr, ok := m.(*pgproto3.DataRow); ok {
				if string(dr.Values[0]) != "1" {
					t.Fatalf("SELECT 1 gave %q", dr.Values[0])
				}
				return
			}
		}
	})
}
