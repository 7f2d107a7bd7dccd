package main

import (
	"strings"
)

// psqlLine maps what a psql (or a generic shell) user types at the start
// of a line to the shell's own commands: a backslash command such as \dt
// or \q becomes its dot command, \copy runs as COPY (the lake is local,
// so psql's client-side copy and COPY are the same thing), and exit, quit
// and help alone on a line leave or help. ok is false for any other line.
// An unknown backslash command yields a dot command that reports it.
func psqlLine(line string) (dot, sql string, ok bool) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), ";"))
	switch strings.ToLower(t) {
	case "exit", "quit":
		return ".quit", "", true
	case "help":
		return ".help", "", true
	}
	if !strings.HasPrefix(t, `\`) {
		return "", "", false
	}
	cmd, rest, _ := strings.Cut(t[1:], " ")
	rest = strings.TrimSpace(rest)
	switch cmd {
	case "q", "quit":
		return ".quit", "", true
	case "?", "h", "help":
		return ".help", "", true
	case "dt", "dt+":
		return ".tables", "", true
	case "d", "d+":
		if rest == "" {
			return ".tables", "", true
		}
		return ".schema " + rest, "", true
	case "dn", "dn+":
		return ".schemas", "", true
	case "l", "l+", "list":
		return ".databases", "", true
	case "x":
		return ".expanded " + rest, "", true
	case "timing":
		return ".timing " + rest, "", true
	case "i", "include":
		return ".read " + rest, "", true
	case "o", "out":
		return ".output " + rest, "", true
	case "copy":
		return "", "COPY " + rest, true
	}
	return `.\` + cmd, "", true
}
