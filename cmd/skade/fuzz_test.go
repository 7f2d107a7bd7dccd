package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skadedb/skade/lake"
)

// FuzzScript feeds arbitrary input to the shell: it must never panic, and
// whatever fails is reported, never returned as an unprinted error.
func FuzzScript(f *testing.F) {
	for _, s := range []string{
		"SELECT 1;", "'", "/*", "\"", "e'\\'", ";;;", ".", ". ", ".read", ".mode", ".let x ${x}",
		"SELECT ${", "SELECT $1", "SELECT 1; SELECT", "\x00", "SELECT '\xff';", "--",
		"CREATE TABLE t (a INT); INSERT INTO t VALUES (1); .history t\n.schema t",
		"SELECT * FROM t FOR VERSION AS OF 1;", ".output /nonexistent/dir/file", ".timer on\nSELECT 1;",
		"EXPLAIN SELECT 1;", "SHOW TABLES;", "DESCRIBE t;", "SET x = 1;", "MERGE INTO t USING t s ON t.a = s.a WHEN MATCHED THEN DELETE;",
	} {
		f.Add(s)
	}
	ctx := context.Background()
	lk, err := lake.Open(ctx, filepath.Join(f.TempDir(), "lake"))
	if err != nil {
		f.Fatal(err)
	}
	defer lk.Close()
	f.Fuzz(func(t *testing.T, script string) {
		if strings.Contains(script, ".output") || strings.Contains(script, ".read") {
			// Files named by fuzzed input could land anywhere.
			return
		}
		for _, mode := range modes {
			var out, errb bytes.Buffer
			sh := newShell(ctx, lk, &out, &errb)
			sh.mode = mode
			err := sh.runScript(strings.NewReader(script), "fuzz.sql", false)
			sh.close()
			if err != nil && !errors.Is(err, errReported) && !errors.Is(err, errQuit) {
				t.Fatalf("mode %s: %q returned %v without printing it", mode, script, err)
			}
			if errors.Is(err, errReported) && errb.Len() == 0 {
				t.Fatalf("mode %s: %q failed but printed nothing", mode, script)
			}
		}
	})
}
