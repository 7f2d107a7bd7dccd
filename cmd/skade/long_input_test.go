package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A 200,000-digit literal once made a 600 KB error message: echoed tokens
// and the LINE excerpt are cut to a readable length.
func TestLongTokensInErrorsAreCut(t *testing.T) {
	digits := strings.Repeat("9", 200000)
	lakeDir := filepath.Join(t.TempDir(), "lake")
	for _, q := range []string{
		"SELECT " + digits,
		"SELECT CAST('" + digits + "' AS INTEGER)",
		"SELECT '" + digits + "'::date",
	} {
		f := filepath.Join(t.TempDir(), "q.sql")
		if err := os.WriteFile(f, []byte(q+";\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := skade(t, "--lake", lakeDir, "sql", "-f", f)
		if code == 0 || len(out)+len(errs) > 1000 || !strings.Contains(errs, "Error:") {
			t.Errorf("%.30s…: code %d, %d bytes of output (want an error under 1,000 bytes): %.300s", q, code, len(out)+len(errs), errs)
		}
	}
}
