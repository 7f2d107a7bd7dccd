package pgwire_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/server/pgwire"
)

// psqlPath finds the real psql. Where SKADE_REQUIRE_PSQL is set (CI), a
// missing psql fails the test instead of skipping it.
func psqlPath(t *testing.T) string {
	p, err := exec.LookPath("psql")
	if err != nil {
		if os.Getenv("SKADE_REQUIRE_PSQL") != "" {
			t.Fatal("psql is not installed (apt-get install postgresql-client)")
		}
		t.Skip("psql is not installed")
	}
	return p
}

// TestPsql runs testdata/strategies.psql with the real psql against the
// server: \copy both ways, \dt and \dn, ON_ERROR_STOP, and the strategies'
// statements inside BEGIN/COMMIT. The tables must equal those the same
// statements leave when run in process.
func TestPsql(t *testing.T) {
	psql := psqlPath(t)
	ts := startServer(t, pgwire.Config{})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "orders.csv"), "order_id,status,amount,day\n1,new,10.50,2026-01-01\n2,paid,20.00,2026-01-02\n3,void,0.00,2026-01-02\n4,paid,5.25,2026-01-03\n")
	writeFile(t, filepath.Join(dir, "customers.tsv"), "1\tAda\tgold\n2\tBob\tfree\n3\tCy\t\\N\n")
	// the same rows for the in-process COPY, whose CSV reader takes an
	// empty field as NULL (it has no NULL option)
	writeFile(t, filepath.Join(dir, "customers.csv"), "1,Ada,gold\n2,Bob,free\n3,Cy,\n")
	script, err := os.ReadFile("testdata/strategies.psql")
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(ts.addr)
	cmd := exec.Command(psql, "-X", "-h", host, "-p", port, "-U", "skade", "-d", "lake", "-f", "-")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(string(script))
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGSSLMODE=disable")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"COPY 4", "COPY 3", // \copy FROM reports the rows
		"main   | raw_orders", // \dt
		"ERROR:  table \"no_such_table\" does not exist",
		"ROLLBACK", // COMMIT of the failed transaction
		"COPY 5",   // \copy TO
	} {
		if !strings.Contains(text, want) {
			t.Errorf("psql output lacks %q:\n%s", want, text)
		}
	}
	if m := regexp.MustCompile(`replaced\s*\n-+\n\s*(\d+)`).FindStringSubmatch(text); m == nil || m[1] != "3" {
		t.Errorf("orders_replace after the failed transaction: %v\n%s", m, text)
	}
	merged, err := os.ReadFile(filepath.Join(dir, "merged.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "order_id,status\n1,new\n2,shipped\n3,void\n4,paid\n9,new\n"; string(merged) != want {
		t.Errorf("merged.csv:\n%s\nwant:\n%s", merged, want)
	}

	// the same statements in process, on a lake of their own
	ctx := context.Background()
	ref, err := lake.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	s := ref.Session()
	stmts := inProcessScript(t, string(script), dir)
	for _, st := range stmts {
		failed := s.InFailedTransaction()
		res, err := s.SQL(ctx, st)
		if err != nil {
			if strings.Contains(st, "no_such_table") || failed && st == "COMMIT" {
				continue
			}
			t.Fatalf("in process: %s: %v", st, err)
		}
		res.Close()
	}
	for _, table := range []string{"orders_replace", "orders_merge", "orders_fallback", "orders_full", "dim_customers", "daily", "raw_customers"} {
		q := "SELECT * EXCLUDE (_valid_from, _valid_to), _valid_to IS NULL AS open FROM " + table
		if table != "dim_customers" {
			q = "SELECT * FROM " + table
		}
		want := dumpSession(t, s, q)
		got := dumpSession(t, ts.lake.Session(), q)
		if got != want {
			t.Errorf("%s over psql:\n%s\nin process:\n%s", table, got, want)
		}
		if want == "" {
			t.Errorf("%s is empty", table)
		}
	}
}

// inProcessScript turns the psql script into statements: meta-commands
// dropped, \copy FROM as COPY from the file.
func inProcessScript(t *testing.T, script, dir string) []string {
	var b strings.Builder
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(line, "\\copy ") && strings.Contains(line, " FROM '") {
			line = strings.Replace(strings.TrimPrefix(line, "\\"), " FROM '", " FROM '"+dir+"/", 1) + ";"
			if strings.Contains(line, ".tsv") {
				line = strings.Replace(strings.Replace(line, ".tsv", ".csv", 1), ";", " (HEADER false);", 1)
			}
		} else if strings.HasPrefix(line, "\\") {
			continue
		}
		b.WriteString(line + "\n")
	}
	var out []string
	for _, st := range strings.Split(b.String(), ";\n") {
		st = strings.TrimSpace(stripComments(st))
		if st != "" {
			out = append(out, st)
		}
	}
	return out
}

func stripComments(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func dumpSession(t *testing.T, s *lake.Session, q string) string {
	t.Helper()
	ctx := context.Background()
	res, err := s.SQL(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	bs, err := res.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, batch := range bs {
		for i := 0; i < int(batch.NumRows()); i++ {
			var b strings.Builder
			for j := 0; j < int(batch.NumCols()); j++ {
				fmt.Fprintf(&b, "%s\t", batch.Column(j).ValueStr(i))
			}
			lines = append(lines, b.String())
		}
		batch.Release()
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPsqlDescribe runs psql's describe commands, which query pg_catalog
// with correlated ARRAY subqueries, lateral generate_series and
// = ANY(array): every one must run (ON_ERROR_STOP), and \d shows the
// columns with PostgreSQL's type names.
func TestPsqlDescribe(t *testing.T) {
	psql := psqlPath(t)
	ts := startServer(t, pgwire.Config{})
	host, port, _ := net.SplitHostPort(ts.addr)
	script := `CREATE TABLE shapes (id INT, name VARCHAR, price DECIMAL(10,2), tags TEXT[], m BIGINT[][], at TIMESTAMPTZ, ok BOOLEAN, u UUID);
CREATE VIEW cheap AS SELECT id, name FROM shapes WHERE price < 10;
\d shapes
\d+ shapes
\d cheap
\d
\dt
\dn
\l
\du
\dp
\df
\dv
\di
\dT
\dx
\db
CREATE TABLE checked (id INT NOT NULL PRIMARY KEY, qty INT, code TEXT UNIQUE, CONSTRAINT qty_pos CHECK (qty > 0));
\d checked
\di
\d checked_pkey
`
	cmd := exec.Command(psql, "-X", "-v", "ON_ERROR_STOP=1", "-h", host, "-p", port, "-U", "skade", "-d", "lake", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGSSLMODE=disable")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	want := `                        Table "main.shapes"
 Column |           Type           | Collation | Nullable | Default 
--------+--------------------------+-----------+----------+---------
 id     | integer                  |           |          | 
 name   | text                     |           |          | 
 price  | numeric(10,2)            |           |          | 
 tags   | text[]                   |           |          | 
 m      | bigint[]                 |           |          | 
 at     | timestamp with time zone |           |          | 
 ok     | boolean                  |           |          | 
 u      | uuid                     |           |          | 
`
	if !strings.Contains(string(out), want) {
		t.Errorf("\\d shapes:\n%s\nwant:\n%s", out, want)
	}
	for _, w := range []string{"List of roles", " skade     | Superuser", "Access privileges", "List of schemas", " main   | shapes | table | skade",
		// the view: in \d's and \dv's lists, and described by \d cheap
		" main   | cheap  | view  | skade", `View "main.cheap"`, " name   | text    |",
		// CHECK, PRIMARY KEY and UNIQUE constraints, as PostgreSQL's psql
		// prints them (keys as the indexes PostgreSQL would make)
		"Check constraints:\n    \"qty_pos\" CHECK (qty > 0)",
		"Indexes:\n    \"checked_pkey\" PRIMARY KEY, btree (id)\n    \"checked_code_key\" UNIQUE CONSTRAINT, btree (code)\n",
		" main   | checked_pkey     | index | skade | checked",
		"Index \"main.checked_pkey\"\n Column |  Type   | Key? | Definition \n--------+---------+------+------------\n id     | integer | yes  | id\nprimary key, btree, for table \"main.checked\""} {
		if !strings.Contains(string(out), w) {
			t.Errorf("psql output lacks %q:\n%s", w, out)
		}
	}
}
