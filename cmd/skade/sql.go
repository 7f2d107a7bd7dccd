package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

func init() {
	var o sqlOptions
	register(&command{
		name:    "sql",
		args:    "",
		summary: "run SQL: an interactive shell, or a script from -c, -f or standard input",
		example: "skade sql                                   # the shell\n" +
			"skade sql -c \"SELECT status, count(*) FROM events GROUP BY status\"\n" +
			"skade sql -f testdata/demo.sql --format csv\n" +
			"skade sql --bail=false < script.sql",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.command, "c", "", "run these statements and exit")
			fs.StringVar(&o.file, "f", "", "run the statements in this file and exit")
			fs.StringVar(&o.format, "format", "table", "output format: "+strings.Join(modes, ", "))
			fs.BoolVar(&o.bail, "bail", true, "stop at the first error (the exit code is 1 after any error either way)")
		},
		run: func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
			return runSQL(ctx, e, args, o)
		},
	})
}

type sqlOptions struct {
	command, file, format string
	bail                  bool
}

func runSQL(ctx context.Context, e *env, args []string, o sqlOptions) error {
	if len(args) != 0 {
		return usagef("takes no arguments, got %q; pass SQL with -c or a file with -f", args)
	}
	if o.command != "" && o.file != "" {
		return usagef("give -c or -f, not both")
	}
	if a, ok := modeAliases[o.format]; ok {
		o.format = a
	}
	if !slices.Contains(modes, o.format) {
		return usagef("--format: unknown format %q; use one of %s", o.format, strings.Join(modes, ", "))
	}
	lk, err := openShellLake(ctx, e.lakeDir, e.catalogFile)
	if err != nil {
		return err
	}
	sh := newShell(ctx, lk, e.stdout, e.stderr)
	sh.lakeDir, sh.catalogFile = e.lakeDir, e.catalogFile
	defer func() { sh.lk.Close() }() // .open may have replaced lk
	defer sh.close()
	sh.mode = o.format
	sh.progress = isTerminal(e.stdout) && isTerminal(e.stderr)

	switch {
	case o.command != "":
		err = sh.runScript(strings.NewReader(o.command), "", o.bail)
	case o.file != "":
		var f *os.File
		if f, err = os.Open(o.file); err != nil {
			return err
		}
		defer f.Close()
		err = sh.runScript(f, o.file, o.bail)
	case isTerminal(e.stdin) && isTerminal(e.stdout):
		err = sh.repl(e.lakeDir)
	default:
		err = sh.runScript(e.stdin, "", o.bail)
	}
	switch {
	case err == nil, errors.Is(err, errQuit):
		return nil
	case errors.Is(err, errReported):
		return exitError{1}
	}
	return err
}

// exitError ends a command with a code and no further message: what went
// wrong has been printed already.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }
