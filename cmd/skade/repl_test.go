package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestMain lets the REPL tests run this test binary as the skade command
// in a pseudo-terminal: the line editor needs a real terminal on stdin.
// continuationMark starts the last line of a statement being typed over
// several lines (the line editor's secondary prompt).
const continuationMark = "\u2514 "

func TestMain(m *testing.M) {
	if os.Getenv("SKADE_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// terminal is a skade process on a pseudo-terminal.
type terminal struct {
	t    *testing.T
	pty  *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	mark int // expect searches the output after this offset
	done chan struct{}
}

func startShell(t *testing.T, home string, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SKADE_TEST_MAIN=1", "HOME="+home, "TERM=xterm")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	tm := &terminal{t: t, pty: f, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
	})
	return tm
}

// replWait bounds how long the test waits for the shell. It detects a hung
// shell, not a slow one: on a loaded 2-core CI machine the first prompt
// (process start, lake open) once took longer than 15s.
const replWait = 60 * time.Second

// expect waits for s in the output since the last match.
func (tm *terminal) expect(s string) {
	tm.t.Helper()
	tm.expectMatch(regexp.MustCompile(regexp.QuoteMeta(s)))
}

// expectMatch waits for re in the output since the last match.
func (tm *terminal) expectMatch(re *regexp.Regexp) {
	tm.t.Helper()
	deadline := time.Now().Add(replWait)
	for {
		tm.mu.Lock()
		rest := tm.out.String()[tm.mark:]
		if loc := re.FindStringIndex(rest); loc != nil {
			tm.mark += loc[1]
			tm.mu.Unlock()
			return
		}
		tm.mu.Unlock()
		if time.Now().After(deadline) {
			tm.t.Fatalf("waited %s for %s; output since the last match:\n%s", replWait, re, rest)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (tm *terminal) send(s string) {
	tm.t.Helper()
	if _, err := tm.pty.Write([]byte(s)); err != nil {
		tm.t.Fatal(err)
	}
}

// exit sends Ctrl-D and waits for the shell to end successfully.
func (tm *terminal) exit() {
	tm.t.Helper()
	tm.send("\x04")
	errc := make(chan error, 1)
	go func() { errc <- tm.cmd.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			tm.t.Fatalf("shell exited with %v", err)
		}
	case <-time.After(replWait):
		tm.t.Fatal("shell did not exit on Ctrl-D")
	}
	<-tm.done
}

func TestREPL(t *testing.T) {
	home := t.TempDir()
	lakeDir := filepath.Join(t.TempDir(), "lake")

	sh := startShell(t, home, "--lake", lakeDir, "sql")
	sh.expect("Enter .help")
	sh.expect("skade> ")

	// A statement over several lines, with the continuation prompt.
	sh.send("CREATE TABLE events AS\r")
	sh.expect(continuationMark)
	sh.send("SELECT * FROM range(5) r(id);\r")
	sh.expect("created events with 5 rows (snapshot ")
	sh.expect("skade> ")

	// Tab completes table and column names.
	sh.send("SELECT count(*) FROM eve\tWHERE events.i\t>= 0;\r")
	sh.expect("│      5 │")
	sh.expect("1 row (")

	// An error prints the statement with a caret, and the shell goes on.
	sh.send("SELECT * FORM events;\r")
	sh.expect(`Error: syntax error at line 1, column 10 near "FORM"`)
	sh.expect("LINE 1: SELECT * FORM events\r\n" + strings.Repeat(" ", 17) + "^")
	sh.send("SELECT idd FROM events;\r")
	sh.expect(`Error: column "idd" not found`)
	sh.expect("did you mean \"id\"?\r\nLINE 1: SELECT idd FROM events\r\n               ^")

	// Ctrl-C cancels a long query, not the shell.
	// It runs long enough for the progress bar to show first.
	sh.send("SELECT count(*) FROM range(100000) a, range(100000) b;\r")
	// the series know their lengths: a percentage, moving past 0%
	sh.expectMatch(regexp.MustCompile(`\] [1-9][0-9]?% · `))
	sh.expect(" · Ctrl-C cancels")
	sh.send("\x03")
	sh.expect("Error: interrupted; the statement was cancelled")
	sh.send("SELECT 'still here' AS answer;\r")
	sh.expect("│ still here │")
	// A statement that reads a table shows its files, as a bar.
	sh.send("SELECT count(*) FROM events e, range(100000) a, range(100000) b;\r")
	sh.expect(" files · ")
	sh.send("\x03")
	sh.expect("Error: interrupted; the statement was cancelled")

	// Ctrl-C at the prompt drops a half-typed statement.
	sh.send("SELECT 'dropped'\r")
	sh.expect(continuationMark)
	sh.send("\x03")
	sh.expect("skade> ")
	sh.send("SELECT 'kept' AS w;\r")
	sh.expect("│ kept │")

	// Inside a transaction the prompt says so.
	sh.send("BEGIN;\r")
	sh.expect("skade*> ")
	sh.send("ROLLBACK;\r")
	sh.expect("skade> ")

	// Dot commands.
	sh.send(".mode csv\r")
	sh.send("SELECT 1 AS x;\r")
	sh.expect("x\r\n1\r\n")
	sh.send(".nosuch\r")
	sh.expect(`Error: unknown command ".nosuch"; .help lists the commands`)
	sh.exit()

	hist, err := os.ReadFile(filepath.Join(home, ".skade_history"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hist), "CREATE TABLE events AS SELECT * FROM range(5) r(id);\n") {
		t.Fatalf("history file lacks the multi-line statement as one entry:\n%s", hist)
	}

	// A second run recalls the first run's history with the up arrow.
	sh = startShell(t, home, "--lake", lakeDir, "sql")
	sh.expect("skade> ")
	sh.send("\x1b[A")
	sh.expect(".nosuch")
	sh.send("\x1b[A\x1b[A")
	sh.expect(".mode csv")
	sh.send("\x1b[B")
	sh.expect("SELECT 1 AS x;")
	sh.send("\r")
	sh.expect("│ x ")
	sh.expect("1 row (")
	sh.exit()
}

func TestHistoryEntry(t *testing.T) {
	cases := []struct {
		lines []string
		want  string
	}{
		{[]string{"SELECT 1;"}, "SELECT 1;"},
		{[]string{"SELECT a, -- the key", "  b", "FROM t;"}, "SELECT a, b FROM t;"},
		{[]string{"SELECT '--not a comment' AS x, \"a--b\"", "FROM t; -- done"}, "SELECT '--not a comment' AS x, \"a--b\" FROM t;"},
		{[]string{"-- only a comment", "SELECT 2;"}, "SELECT 2;"},
		{[]string{"SELECT 'it''s' -- quote doubled", ";"}, "SELECT 'it''s' ;"},
	}
	for _, c := range cases {
		if got := historyEntry(c.lines); got != c.want {
			t.Errorf("historyEntry(%q) = %q, want %q", c.lines, got, c.want)
		}
	}
}

// TestREPLNewcomerHabits opens the shell the way a DuckDB or psql user
// would, `skade DIR` and bare `skade`, and types psql's commands.
func TestREPLNewcomerHabits(t *testing.T) {
	home := t.TempDir()
	lakeDir := filepath.Join(t.TempDir(), "lake")

	sh := startShell(t, home, lakeDir)
	sh.expect("skade> ")
	sh.send("CREATE TABLE t AS SELECT * FROM range(3) r(id);\r")
	sh.expect("created t with 3 rows")
	sh.send("\\dt\r")
	sh.expect("main.t")
	sh.send("\\d t\r")
	sh.expect("CREATE TABLE main.t (")
	sh.send("\\x\r")
	sh.expect("Expanded display is on.")
	sh.send("SELECT 7 AS seven, 8 AS eight;\r")
	sh.expect("seven = 7")
	sh.expect("eight = 8")
	sh.send("\\x\r")
	sh.expect("Expanded display is off.")
	// the shell times statements already; \timing toggles it, as in psql
	sh.send("\\timing\r")
	sh.expect("Timing is off.")
	sh.send("\\timing on\r")
	sh.expect("Timing is on.")
	sh.send("\\q\r")
	waitExit(t, sh)

	// bare skade opens the default lake ($SKADE_LAKE here); exit leaves
	t.Setenv("SKADE_LAKE", lakeDir)
	sh = startShell(t, home)
	sh.expect("skade> ")
	sh.send("SELECT count(*) AS n FROM t;\r")
	sh.expect("│      3 │")
	sh.send("exit\r")
	waitExit(t, sh)
}

// waitExit waits for the shell to end successfully on its own.
func waitExit(t *testing.T, tm *terminal) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- tm.cmd.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("shell exited with %v", err)
		}
	case <-time.After(replWait):
		t.Fatal("shell did not exit")
	}
	<-tm.done
}

// TestREPLLongAndMultiLineInput: a statement longer than the terminal is
// drawn whole and wraps (liner scrolled it sideways, showing a window of
// it), a statement typed over several lines is one buffer that history
// recalls whole, and the history file keeps it as one line.
func TestREPLLongAndMultiLineInput(t *testing.T) {
	home := t.TempDir()
	lakeDir := filepath.Join(t.TempDir(), "lake")
	sh := startShell(t, home, lakeDir)
	sh.expect("skade> ")

	long := "SELECT '" + strings.Repeat("wrap", 60) + "' AS long_value;"
	sh.send(long)
	sh.expect("skade> " + long)
	sh.send("\r")
	sh.expect("long_value")
	sh.expect("1 row (")

	sh.send("SELECT 40 + 2\r")
	sh.expect(continuationMark)
	sh.send("AS answer;\r")
	sh.expect("answer")
	sh.expect("42")
	sh.expect("skade> ")
	// Up recalls the two lines as one entry; Enter runs it again.
	sh.send("\x1b[A")
	sh.expect("SELECT 40 + 2")
	sh.expect("AS answer;")
	sh.send("\r")
	sh.expect("42")
	sh.expect("skade> ") // Ctrl-D before the prompt is back can be lost
	sh.exit()

	data, err := os.ReadFile(filepath.Join(home, historyFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || lines[0] != long || lines[1] != "SELECT 40 + 2 AS answer;" {
		t.Errorf("history file:\n%s\nwant the long statement, then the two-line one on one line", data)
	}

	// A new shell loads that file: Up brings back the last statement.
	sh = startShell(t, home, lakeDir)
	sh.expect("skade> ")
	sh.send("\x1b[A")
	sh.expect("SELECT 40 + 2 AS answer;")
	sh.send("\r")
	sh.expect("42")
	sh.expect("skade> ") // Ctrl-D before the prompt is back can be lost
	sh.exit()
}

// TestFeederCompletes is the rule Enter follows: run the buffer when it
// leaves nothing pending, else open another line.
func TestFeederCompletes(t *testing.T) {
	f := &feeder{}
	for _, c := range []struct {
		text string
		want bool
	}{
		{"", true},
		{"   ", true},
		{"SELECT 1;", true},
		{"SELECT 1", false},
		{"SELECT 1\nAS x;", true},
		{"SELECT 1; SELECT", false},
		{"SELECT ';'", false},
		{"SELECT 'a;\nb';", true},
		{"SELECT 1 /* ; */", false},
		{"-- only a comment", true},
		{".mode csv", true},
		{`\dt`, true},
		{"exit", true},
		{"SELECT 1;\n.mode csv", true},
	} {
		if got := f.completes(c.text); got != c.want {
			t.Errorf("completes(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	// With a statement already pending (input pasted past a prompt), a
	// dot-looking line continues it rather than being a command.
	f.buf.WriteString("SELECT 1\n")
	if f.completes(".5 AS x") {
		t.Errorf("completes(.5 AS x) after a pending SELECT = true, want false")
	}
	if !f.completes(".5 AS x;") {
		t.Errorf("completes(.5 AS x;) after a pending SELECT = false, want true")
	}
}
