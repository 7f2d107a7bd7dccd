package pgwire_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skadedb/skade/server/pgwire"
)

// TestNodePostgres runs testdata/node/client.js (node-postgres, a client
// not written in Go) against the server. It needs node and the pg
// package: `npm ci --prefix server/pgwire/testdata/node`, which .ci/run
// does. Without them it skips, unless SKADE_REQUIRE_NODE is set.
func TestNodePostgres(t *testing.T) {
	node, err := exec.LookPath("node")
	_, pgErr := os.Stat("testdata/node/node_modules/pg/package.json")
	if err != nil || pgErr != nil {
		if os.Getenv("SKADE_REQUIRE_NODE") != "" {
			t.Fatalf("node or node-postgres missing (run npm ci --prefix server/pgwire/testdata/node): %v %v", err, pgErr)
		}
		t.Skip("node or node-postgres (npm ci --prefix server/pgwire/testdata/node) is missing")
	}
	ts := startServer(t, pgwire.Config{})
	host, port, _ := net.SplitHostPort(ts.addr)
	script, _ := filepath.Abs("testdata/node/client.js")
	cmd := exec.Command(node, script)
	cmd.Dir = "testdata/node"
	cmd.Env = append(os.Environ(), "PGHOST="+host, "PGPORT="+port)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	want := []string{
		`{"one":1,"greeting":"hello"}`,
		`{"command":"INSERT","rowCount":2}`,
		`[["string","1","Ada",true,9.5],["string","2","Alan",true,null]]`,
		`[[null]]`,
		`{"code":"42703","position":"8"}`,
		`{"n":"2"}`,
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("node-postgres printed:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
}
