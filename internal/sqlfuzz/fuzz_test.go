package sqlfuzz

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skadedb/skade/lake"
)

var (
	duration  = flag.Duration("duration", 0, "fuzz random seeds for this long (0: the short fixed-seed run of the default tests)")
	firstSeed = flag.Uint64("seed", 0, "the first seed (0: 1 for the fixed run, the clock otherwise)")
	seeds     = flag.Int("seeds", 12, "seeds of the fixed run")
	queries   = flag.Int("queries", 60, "queries checked per seed")
	withPG    = flag.Bool("pg", true, "also check against a PostgreSQL server started on loopback, when its binaries are found (SKADE_REQUIRE_PG=1 makes their absence a failure)")
	verbose   = flag.Bool("fuzzlog", false, "log every seed's summary")
)

// TestFuzz runs the generator's seeds against the self-oracles (TLP,
// NoREC) and, when a PostgreSQL server can be started, PostgreSQL. The
// default is a short deterministic run; -duration runs random seeds:
//
//	go test ./internal/sqlfuzz -run TestFuzz -duration 10m -timeout 0
func TestFuzz(t *testing.T) {
	ctx := context.Background()
	var pg Engine
	if *withPG {
		if conn := startPostgres(t); conn != nil {
			pg = Postgres{conn}
		}
	}
	start := *firstSeed
	if start == 0 {
		start = 1
		if *duration > 0 {
			start = uint64(time.Now().UnixNano())
		}
	}
	total := newReport()
	deadline := time.Now().Add(*duration)
	n := 0
	for seed := start; ; seed++ {
		if *duration > 0 && time.Now().After(deadline) {
			break
		}
		if *duration == 0 && n == *seeds {
			break
		}
		n++
		rep := runSeed(t, ctx, seed, pg)
		if *verbose {
			t.Logf("seed %d: %d findings\n%s", seed, len(rep.Findings), rep.Summary())
		}
		total.Add(rep)
		for _, f := range rep.Findings {
			t.Errorf("%s\nreproduce: go test ./internal/sqlfuzz -run TestFuzz -seed %d -seeds 1", f, f.Seed)
		}
		if len(total.Findings) > 20 {
			t.Fatalf("stopping after %d findings", len(total.Findings))
		}
	}
	t.Logf("%d seeds from %d, PostgreSQL oracle %v\n%s", n, start, pg != nil, total.Summary())
	if sum(total.Checks) < n*(*queries)/4 {
		t.Errorf("only %d checks were made for %d seeds of %d queries; the generator strays too often", sum(total.Checks), n, *queries)
	}
}

func sum(m map[string]int) int {
	s := 0
	for _, v := range m {
		s += v
	}
	return s
}

func runSeed(t *testing.T, ctx context.Context, seed uint64, pg Engine) *Report {
	dir := t.TempDir()
	lk, err := lake.Open(ctx, filepath.Join(dir, "lake"), lake.WithTableDefaults(TableDefaults(seed)))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	return Run(ctx, seed, timed{Skade{lk.Session()}}, pg, *queries)
}

// timed bounds each skade statement, so that a runaway query is a
// finding rather than a hung test.
type timed struct{ e Engine }

const perStatement = 30 * time.Second

func (e timed) Exec(ctx context.Context, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, perStatement)
	defer cancel()
	return e.e.Exec(ctx, sql)
}

func (e timed) Query(ctx context.Context, sql string) (Rows, error) {
	ctx, cancel := context.WithTimeout(ctx, perStatement)
	defer cancel()
	r, err := e.e.Query(ctx, sql)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("ran past %v: %w", perStatement, err)
	}
	return r, err
}

// startPostgres starts a throwaway PostgreSQL server (initdb, C locale,
// trust, fsync off) on a free loopback port and connects to it, or
// returns nil when no server binaries are found and SKADE_REQUIRE_PG is
// not set. As root, the server runs as the postgres user, which initdb
// requires.
func startPostgres(t *testing.T) *pgx.Conn {
	bin := pgBin()
	if bin == "" {
		if os.Getenv("SKADE_REQUIRE_PG") == "1" {
			t.Fatal("SKADE_REQUIRE_PG=1 but no PostgreSQL server binaries (initdb, pg_ctl) were found; install Debian's postgresql package or set SKADE_PG_BIN")
		}
		t.Log("no PostgreSQL server binaries found; the PostgreSQL oracle is skipped (apt-get install postgresql)")
		return nil
	}
	dir, err := os.MkdirTemp("", "skade-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, PostgreSQL needs an unprivileged user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	command := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		return cmd
	}
	run := func(name string, args ...string) {
		if out, err := command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	data := filepath.Join(dir, "data")
	run("initdb", "-D", data, "-A", "trust", "-U", "postgres", "--locale=C", "-E", "UTF8", "--no-sync")
	port := freePort(t)
	run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "-o",
		fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c synchronous_commit=off", port, dir), "start")
	t.Cleanup(func() { command("pg_ctl", "-D", data, "-m", "immediate", "stop").Run() })
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	if _, err := conn.Exec(ctx, "SET statement_timeout = '30s'"); err != nil {
		t.Fatal(err)
	}
	return conn
}

// pgBin is the directory of PostgreSQL's server binaries: SKADE_PG_BIN,
// the newest /usr/lib/postgresql/*/bin (Debian), or where initdb is on
// PATH.
func pgBin() string {
	if d := os.Getenv("SKADE_PG_BIN"); d != "" {
		return d
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
