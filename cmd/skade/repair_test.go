package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The way out of a lost catalog, as a user meets it: every command
// refuses and names `skade repair`; orphans deletes nothing; repair asks,
// does nothing on "n", and brings the tables back on "y".
func TestRepairCommand(t *testing.T) {
	lakeDir := filepath.Join(t.TempDir(), "lake")
	if code, _, errs := skade(t, "--lake", lakeDir, "sql", "-c", "CREATE TABLE t AS SELECT * FROM range(5) r(i)"); code != 0 {
		t.Fatal(errs)
	}
	if err := os.Remove(filepath.Join(lakeDir, "catalog.db")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"tables"}, {"orphans", "--older-than", "0s"}, {"sql", "-c", "SELECT 1"}} {
		code, out, errs := skade(t, append([]string{"--lake", lakeDir}, args...)...)
		if code != 1 || out != "" || !strings.Contains(errs, "catalog.db is missing or empty") || !strings.Contains(errs, "skade repair") {
			t.Errorf("%v: code %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	if n := len(dataFilesUnder(t, lakeDir)); n == 0 {
		t.Fatal("orphans deleted the table's data files")
	}
	answer := func(a string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"--lake", lakeDir, "repair"}, strings.NewReader(a), &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := answer("n\n")
	if code != 0 || !strings.Contains(out, "main.t") || !strings.Contains(out, "nothing changed") {
		t.Fatalf("repair, answered n: code %d, %q, %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(lakeDir, "catalog.db")); !os.IsNotExist(err) {
		t.Fatalf("repair wrote a catalog without a yes: %v", err)
	}
	if code, out, errs = answer("y\n"); code != 0 || !strings.Contains(out, "rebuilt catalog.db with 1 tables") {
		t.Fatalf("repair, answered y: code %d, %q, %q", code, out, errs)
	}
	if code, out, errs := skade(t, "--lake", lakeDir, "sql", "-c", "SELECT count(*) FROM t", "--format", "csv"); code != 0 || !strings.Contains(out, "5") {
		t.Fatalf("after repair: code %d, %q, %q", code, out, errs)
	}
}

func dataFilesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	return out
}
