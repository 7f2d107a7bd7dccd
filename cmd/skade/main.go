// Command skade is the command-line interface to a skade lake: the
// `skade sql` shell and scripts, and maintenance subcommands.
//
// Each subcommand lives in a file of its own, named for it (sql.go,
// history.go, ...); the shell's parts have files of their own too:
// shell.go runs statements, script.go finds where they end, repl.go is
// the line editor loop, dot.go the dot commands, render.go and cells.go
// the output modes, progress.go the progress bar, sqlerror.go the carets.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/skadedb/skade/lake"
)

// command is one subcommand.
type command struct {
	name    string
	args    string // synopsis of positional arguments
	summary string
	example string
	run     func(ctx context.Context, env *env, fs *flag.FlagSet, args []string) error
	flags   func(fs *flag.FlagSet)
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// env is what every subcommand gets: where the lake is and where output goes.
type env struct {
	lakeDir string
	// catalogFile is the local catalog of an s3:// lake (--catalog).
	catalogFile string
	stdout      io.Writer
	stderr      io.Writer
	stdin       io.Reader
}

// open opens the lake, which must exist: only the commands that write
// new data (sql, import) create one, so that a mistyped --lake does not
// leave an empty lake behind.
func (e *env) open(ctx context.Context) (*lake.Lake, error) {
	return lake.Open(ctx, e.lakeDir, lake.WithoutCreate(), lake.WithCatalogFile(e.catalogFile), catalogAuth())
}

// catalogAuth authenticates a lake on a REST catalog (--lake
// rest+http://…) from $SKADE_CATALOG_TOKEN or $SKADE_CATALOG_CREDENTIAL
// (id:secret), kept out of flags so that they stay out of ps.
func catalogAuth() lake.Option {
	return lake.WithCatalogAuth(os.Getenv("SKADE_CATALOG_TOKEN"), os.Getenv("SKADE_CATALOG_CREDENTIAL"))
}

// create opens the lake, creating it when the directory holds none.
func (e *env) create(ctx context.Context) (*lake.Lake, error) {
	return lake.Open(ctx, e.lakeDir, lake.WithCatalogFile(e.catalogFile), catalogAuth())
}

// table opens the lake and loads one table. On success the caller closes
// the lake; on error it is already closed.
func (e *env) table(ctx context.Context, name string) (*lake.Lake, *lake.Table, error) {
	lk, err := e.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	tbl, err := lk.Table(ctx, name)
	if err != nil {
		lk.Close()
		return nil, nil, err
	}
	return lk, tbl, nil
}

const (
	lakeFlagHelp    = "lake directory, s3://bucket/prefix for a lake in an object store, or rest+http://host:port for an Iceberg REST catalog; $SKADE_LAKE or ./skade-lake when not given"
	catalogFlagHelp = "local catalog file of an s3:// lake (every process sharing the lake uses the same one); $SKADE_CATALOG when not given"
)

func defaultLakeDir() string {
	if d := os.Getenv("SKADE_LAKE"); d != "" {
		return d
	}
	return lake.DefaultDir
}

func main() {
	// iceberg-go reports recoverable oddities through slog at WARN; a CLI
	// user should see errors, not library chatter.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	ctx, cancel := context.WithCancel(context.Background())
	interrupts.route(cancel)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	go func() {
		for range sigs {
			interrupts.interrupt()
		}
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{lakeDir: defaultLakeDir(), catalogFile: os.Getenv("SKADE_CATALOG"), stdout: stdout, stderr: stderr, stdin: stdin}
	global := flag.NewFlagSet("skade", flag.ContinueOnError)
	global.SetOutput(stderr)
	global.StringVar(&e.lakeDir, "lake", e.lakeDir, lakeFlagHelp)
	global.StringVar(&e.catalogFile, "catalog", e.catalogFile, catalogFlagHelp)
	global.Usage = func() { usage(stderr) }
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	rest := global.Args()
	if len(rest) == 0 {
		// bare skade: the shell (or the script on standard input) on
		// the default lake, as bare duckdb does
		rest = []string{"sql"}
	}
	name := rest[0]
	if name == "help" {
		if len(rest) > 1 {
			if c, ok := commands[rest[1]]; ok {
				commandUsage(stdout, c, newFlagSet(c, e, stdout))
				return 0
			}
		}
		usage(stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		// skade DIR: the shell on the lake in DIR, as duckdb FILE
		if lakeDirArg(name) {
			if err := checkLakeDir(name); err != nil {
				fmt.Fprintf(stderr, "skade: %v\n", err)
				return 1
			}
			e.lakeDir = name
			c, rest = commands["sql"], append([]string{"sql"}, rest[1:]...)
		} else {
			fmt.Fprintf(stderr, "skade: unknown command %q%s\nRun `skade help` for the list, or `skade ./%s` to open a lake there.\n", name, commandDidYouMean(name), name)
			return 2
		}
	}
	fs := newFlagSet(c, e, stderr)
	positional, err := parseInterleaved(fs, rest[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := c.run(ctx, e, fs, positional); err != nil {
		var ue usageError
		var ee exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "skade %s: %s\n", c.name, ue.msg)
			commandUsage(stderr, c, fs)
			return 2
		}
		fmt.Fprintf(stderr, "skade %s: %v\n", c.name, err)
		return 1
	}
	return 0
}

// parseInterleaved lets flags come after positional arguments, as in
// `skade expire events --older-than 7d`; "--" ends flag parsing.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

func newFlagSet(c *command, e *env, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("skade "+c.name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&e.lakeDir, "lake", e.lakeDir, lakeFlagHelp)
	fs.StringVar(&e.catalogFile, "catalog", e.catalogFile, catalogFlagHelp)
	if c.flags != nil {
		c.flags(fs)
	}
	fs.Usage = func() { commandUsage(out, c, fs) }
	return fs
}

// usageError is a mistake in how a command was called; the command's
// usage is printed after it.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func usage(w io.Writer) {
	fmt.Fprintln(w, "skade: an embedded Iceberg lakehouse engine.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: skade [--lake DIR] COMMAND [flags] [args]\n       skade [--lake DIR]   (the SQL shell)\n       skade DIR            (the SQL shell on the lake in DIR)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := commands[n]
		fmt.Fprintf(w, "  %-9s %s\n", n, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The lake is --lake DIR, else $SKADE_LAKE, else ./skade-lake. A lake in S3 or an")
	fmt.Fprintln(w, "S3-compatible store (AWS_ENDPOINT_URL) is --lake s3://bucket/prefix --catalog FILE;")
	fmt.Fprintln(w, "one on an Iceberg REST catalog is --lake rest+http://host:port ($SKADE_CATALOG_TOKEN")
	fmt.Fprintln(w, "or $SKADE_CATALOG_CREDENTIAL=id:secret log in).")
	fmt.Fprintln(w, "Run `skade COMMAND --help` for a command's flags and an example.")
}

func commandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: skade %s [flags] %s\n\n%s\n\nflags:\n", c.name, c.args, c.summary)
	fs.SetOutput(w)
	fs.PrintDefaults()
	if c.example != "" {
		fmt.Fprintf(w, "\nexample:\n  %s\n", strings.ReplaceAll(c.example, "\n", "\n  "))
	}
}
