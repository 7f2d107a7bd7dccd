package pgwire_test

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/skadedb/skade/server/pgwire"
)

const jdbcJar = "/usr/share/java/postgresql.jar" // Debian's libpostgresql-jdbc-java

// TestJDBC runs testdata/jdbc/Client.java with pgjdbc against the server:
// statements, prepared statements with typed parameters, a rolled-back
// transaction, an error's SQLSTATE, and DatabaseMetaData's getTables and
// getColumns (pgjdbc's own catalog queries). It needs java and the jar;
// .ci/run installs the jar and sets SKADE_REQUIRE_JDBC.
func TestJDBC(t *testing.T) {
	java, err := exec.LookPath("java")
	_, jarErr := os.Stat(jdbcJar)
	if err != nil || jarErr != nil {
		if os.Getenv("SKADE_REQUIRE_JDBC") != "" {
			t.Fatalf("java or pgjdbc missing (apt-get install libpostgresql-jdbc-java): %v %v", err, jarErr)
		}
		t.Skip("java or pgjdbc (apt-get install libpostgresql-jdbc-java) is missing")
	}
	ts := startServer(t, pgwire.Config{})
	host, port, _ := net.SplitHostPort(ts.addr)
	cmd := exec.Command(java, "-cp", jdbcJar, "testdata/jdbc/Client.java", host, port)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("java: %v\n%s", err, out)
	}
	want := strings.Join([]string{
		"update 1",
		"row 3 new 3.25 2026-02-03 00:00:00.0",
		"row 4 paid 4.25 2026-02-04 00:00:00.0",
		"count 4",
		"error 42703",
		"product PostgreSQL 15",
		"table main.orders",
		"column id int8",
		"column status text",
		"column amount numeric",
		"column placed timestamp",
	}, "\n")
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("pgjdbc printed:\n%s\nwant:\n%s", got, want)
	}
}
