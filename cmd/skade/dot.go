package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// dotCommand is one of the shell's dot commands.
type dotCommand struct {
	name string
	args string
	help string
	run  func(sh *shell, args []string, line int, bail bool) error
}

var dotCommands []*dotCommand

func init() {
	dotCommands = []*dotCommand{
		{"help", "", "show this help", dotHelp},
		{"mode", "table|box|csv|tsv|json|markdown|html|insert [TABLE]|line", "set the output format (no argument: show it)", dotMode},
		{"headers", "on|off", "show the header line in csv, tsv, markdown and html modes", dotHeaders},
		{"maxwidth", "[N]", "fit tables in N columns (0: the terminal's width)", dotMaxWidth},
		{"width", "N1 N2 ...", "fix the table mode's column widths, in order (0: fit; none: reset)", dotWidth},
		{"changes", "on|off", "after each write, print the rows it changed and the session's total", dotChanges},
		{"timer", "on|off", "show how long each statement takes", dotTimer},
		{"maxrows", "N", "show at most N rows in table mode (0: all)", dotMaxRows},
		{"output", "[FILE]", "write results to FILE (no argument: back to the screen)", dotOutput},
		{"tables", "", "list the tables", dotTables},
		{"schema", "[TABLE]", "show CREATE TABLE for one table or all", dotSchema},
		{"history", "TABLE", "list a table's snapshots with operation and summary", dotHistory},
		{"read", "FILE", "run the statements in FILE", dotRead},
		{"let", "NAME VALUE", "set ${NAME} for later statements (DML sets ${snapshot})", dotLet},
		{"schemas", "", "list the schemas (namespaces)", dotSchemas},
		{"databases", "", "show the lake the shell is on", dotDatabases},
		{"open", "DIR", "close this lake and open the lake in DIR (created when DIR is new or empty)", dotOpen},
		{"import", "FILE TABLE", "append a CSV or Parquet file to TABLE, creating it if absent", dotImport},
		{"once", "FILE", "write the next statement's result to FILE", dotOnce},
		{"expanded", "[on|off]", "one line per column (.mode line) or back (psql's \\x)", dotExpanded},
		{"timing", "[on|off]", "toggle .timer (psql's \\timing)", dotTiming},
		{"quit", "", "leave the shell (also .exit, exit, quit, \\q, Ctrl-D)", dotQuit},
	}
}

// dot runs a dot command line such as ".mode csv". A returned error has
// been printed.
func (sh *shell) dot(text string, line int, bail bool) error {
	fields := strings.Fields(strings.TrimSuffix(text, ";"))
	name := strings.ToLower(strings.TrimPrefix(fields[0], "."))
	if name == "exit" {
		name = "quit"
	}
	for _, c := range dotCommands {
		if c.name == name {
			err := c.run(sh, fields[1:], line, bail)
			if err != nil && err != errQuit && err != errReported {
				sh.errorf(line, ".%s: %v", name, err)
				return errReported
			}
			return err
		}
	}
	if strings.HasPrefix(name, `\`) {
		sh.errorf(line, "unknown psql command %s; skade knows \\d, \\d TABLE, \\dt, \\dn, \\l, \\x, \\timing, \\i, \\o, \\copy, \\? and \\q (.help lists the dot commands)", name)
		return errReported
	}
	sh.errorf(line, "unknown command %q; .help lists the commands", "."+name)
	return errReported
}

func dotHelp(sh *shell, args []string, line int, bail bool) error {
	var b strings.Builder
	width := 0
	for _, c := range dotCommands {
		width = max(width, len(c.name)+1+len(c.args))
	}
	for _, c := range dotCommands {
		fmt.Fprintf(&b, ".%-*s  %s\n", width, strings.TrimSpace(c.name+" "+c.args), c.help)
	}
	b.WriteString("\nA statement ends with ';' and may span lines. Ctrl-C cancels a running\nstatement or clears the input; Ctrl-D leaves. Tab completes keywords,\ntables and columns.\n")
	fmt.Fprint(sh.out, b.String())
	return nil
}

func dotMode(sh *shell, args []string, line int, bail bool) error {
	if len(args) == 0 {
		fmt.Fprintln(sh.out, sh.mode)
		return nil
	}
	m := strings.ToLower(args[0])
	if a, ok := modeAliases[m]; ok {
		m = a
	}
	if !slices.Contains(modes, m) || len(args) > 2 || len(args) == 2 && m != "insert" {
		return fmt.Errorf("unknown mode %q; use one of %s, box or duckbox (insert takes a table name)", strings.Join(args, " "), strings.Join(modes, ", "))
	}
	sh.mode = m
	if m == "insert" {
		sh.insertTable = "table"
		if len(args) == 2 {
			sh.insertTable = args[1]
		}
	}
	return nil
}

func onOff(args []string) (bool, error) {
	if len(args) == 1 {
		switch strings.ToLower(args[0]) {
		case "on", "true", "1", "yes":
			return true, nil
		case "off", "false", "0", "no":
			return false, nil
		}
	}
	return false, fmt.Errorf("want on or off, got %q", strings.Join(args, " "))
}

func dotTimer(sh *shell, args []string, line int, bail bool) error {
	v, err := onOff(args)
	if err != nil {
		return err
	}
	sh.timer = v
	return nil
}

func dotMaxRows(sh *shell, args []string, line int, bail bool) error {
	return sh.setCount(&sh.maxRows, args, "a number of rows (0 for all)")
}

// setCount sets *v from a dot command's one argument, a whole number of
// at least 0 (what says what it counts); without one it prints *v.
func (sh *shell) setCount(v *int, args []string, what string) error {
	if len(args) == 0 {
		fmt.Fprintln(sh.out, *v)
		return nil
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 0 || len(args) > 1 {
		return fmt.Errorf("want %s, got %q", what, strings.Join(args, " "))
	}
	*v = n
	return nil
}

func dotOutput(sh *shell, args []string, line int, bail bool) error {
	if len(args) > 1 {
		return fmt.Errorf("takes one file name, got %q", strings.Join(args, " "))
	}
	var f *os.File
	if len(args) == 1 {
		var err error
		if f, err = os.Create(args[0]); err != nil {
			return err
		}
	}
	sh.closeOutput()
	sh.out = sh.stdout
	if f != nil {
		sh.outFile, sh.out = f, f
	}
	return nil
}

func dotTables(sh *shell, args []string, line int, bail bool) error {
	names, err := sh.lk.Tables(sh.ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintln(sh.out, n)
	}
	return nil
}

func dotSchema(sh *shell, args []string, line int, bail bool) error {
	names := args
	if len(args) == 0 {
		var err error
		if names, err = sh.lk.Tables(sh.ctx); err != nil {
			return err
		}
	}
	for _, n := range names {
		tbl, err := sh.lk.Table(sh.ctx, n)
		if err != nil {
			return err
		}
		fmt.Fprintln(sh.out, tbl.CreateStatement()+";")
	}
	return nil
}

func dotHistory(sh *shell, args []string, line int, bail bool) error {
	if len(args) != 1 {
		return fmt.Errorf("takes one table name")
	}
	tbl, err := sh.lk.Table(sh.ctx, args[0])
	if err != nil {
		return err
	}
	header, rows, err := historyRows(sh.ctx, tbl)
	if err != nil {
		return err
	}
	cols := make([]column, len(header))
	for i, h := range header {
		cols[i] = column{name: h, typ: "text"}
	}
	cols[3].typ = "bigint"
	for _, i := range []int{4, 5, 6, 7} {
		cols[i].typ, cols[i].numeric = "bigint", true
	}
	cols[1].typ = "timestamptz"
	r := newRenderer(sh.mode, sh.out, sh.renderOptions())
	r.header(cols)
	for _, row := range rows {
		cells := make([]cell, len(row))
		for i, v := range row {
			cells[i] = cell{text: v}
			if i == 3 && v == "" {
				cells[i] = cell{text: "NULL", null: true}
			}
		}
		r.row(cells)
	}
	r.done(int64(len(rows)), 0)
	return nil
}

func dotRead(sh *shell, args []string, line int, bail bool) error {
	if len(args) != 1 {
		return fmt.Errorf("takes one file name")
	}
	if sh.readDepth >= 16 {
		return fmt.Errorf("nested more than 16 deep; does %s read itself?", args[0])
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	sh.readDepth++
	defer func() { sh.readDepth-- }()
	err = sh.runScript(f, filepath.Clean(args[0]), bail)
	if err == errQuit {
		return nil
	}
	return err
}

func dotLet(sh *shell, args []string, line int, bail bool) error {
	if len(args) < 2 || !varRef.MatchString("${"+args[0]+"}") {
		return fmt.Errorf("want .let NAME VALUE, e.g. .let before ${snapshot}")
	}
	v, err := sh.expand(strings.Join(args[1:], " "))
	if err != nil {
		return err
	}
	sh.vars[strings.ToLower(args[0])] = v
	return nil
}

func dotQuit(sh *shell, args []string, line int, bail bool) error { return errQuit }

func dotSchemas(sh *shell, args []string, line int, bail bool) error {
	names, err := sh.lk.Namespaces(sh.ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintln(sh.out, n)
	}
	return nil
}

func dotDatabases(sh *shell, args []string, line int, bail bool) error {
	fmt.Fprintln(sh.out, sh.lakeDir)
	return nil
}

// dotOpen switches the shell to another lake, as DuckDB's .open does: an
// open transaction is rolled back first. A directory that holds something
// other than a lake is refused.
func dotOpen(sh *shell, args []string, line int, bail bool) error {
	if len(args) != 1 {
		return fmt.Errorf("takes one lake directory")
	}
	if err := checkLakeDir(args[0]); err != nil {
		return err
	}
	lk, err := openShellLake(sh.ctx, args[0], sh.catalogFile)
	if err != nil {
		return err
	}
	sh.rollback(".open left the lake before COMMIT")
	sh.lk.Close()
	sh.lk, sh.sess, sh.lakeDir = lk, lk.Session(), args[0]
	return nil
}

func dotImport(sh *shell, args []string, line int, bail bool) error {
	if len(args) != 2 {
		return fmt.Errorf("takes a file and a table name: .import FILE TABLE")
	}
	msg, err := importFile(sh.ctx, sh.lk, args[1], args[0], "", nil)
	if err != nil {
		return err
	}
	fmt.Fprintln(sh.out, msg)
	return nil
}

// dotOnce sends the next statement's result to a file, then output goes
// back where it was.
func dotOnce(sh *shell, args []string, line int, bail bool) error {
	if len(args) != 1 {
		return fmt.Errorf("takes one file name")
	}
	f, err := os.Create(args[0])
	if err != nil {
		return err
	}
	if sh.onceFile != nil {
		sh.onceFile.Close()
	} else {
		sh.onceRestore = sh.out
	}
	sh.onceFile, sh.out = f, f
	return nil
}

func dotExpanded(sh *shell, args []string, line int, bail bool) error {
	on := sh.mode != "line"
	if len(args) > 0 {
		v, err := onOff(args)
		if err != nil {
			return err
		}
		on = v
	}
	switch {
	case on && sh.mode != "line":
		sh.prevMode, sh.mode = sh.mode, "line"
	case !on && sh.mode == "line":
		sh.mode = sh.prevMode
		if sh.mode == "" || sh.mode == "line" {
			sh.mode = "table"
		}
	}
	state := "off"
	if sh.mode == "line" {
		state = "on"
	}
	fmt.Fprintf(sh.stderr, "Expanded display is %s.\n", state)
	return nil
}

func dotTiming(sh *shell, args []string, line int, bail bool) error {
	on := !sh.timer
	if len(args) > 0 {
		v, err := onOff(args)
		if err != nil {
			return err
		}
		on = v
	}
	sh.timer = on
	state := "off"
	if on {
		state = "on"
	}
	fmt.Fprintf(sh.stderr, "Timing is %s.\n", state)
	return nil
}

func dotHeaders(sh *shell, args []string, line int, bail bool) error {
	v, err := onOff(args)
	if err != nil {
		return err
	}
	sh.noHeaders = !v
	return nil
}

func dotMaxWidth(sh *shell, args []string, line int, bail bool) error {
	return sh.setCount(&sh.maxWidth, args, "a width in columns (0 for the terminal's)")
}

func dotWidth(sh *shell, args []string, line int, bail bool) error {
	var ws []int
	for _, a := range args {
		n, err := strconv.Atoi(a)
		if err != nil || n < 0 {
			return fmt.Errorf("want column widths (0 to fit), got %q", a)
		}
		ws = append(ws, n)
	}
	sh.widths = ws
	return nil
}

func dotChanges(sh *shell, args []string, line int, bail bool) error {
	v, err := onOff(args)
	if err != nil {
		return err
	}
	sh.changes = v
	return nil
}
