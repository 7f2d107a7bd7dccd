package main

import (
	"io"
	"os"
	"strconv"
)

// isTerminal reports whether w is a character device (a terminal). The
// shell is plain — no colours, no progress bar, no width fitting — when
// it writes anywhere else.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}

// terminalWidth is the width of the terminal w writes to, else $COLUMNS,
// else 0 (no limit).
func terminalWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		if n := windowWidth(f); n > 0 {
			return n
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}
