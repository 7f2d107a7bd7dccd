package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// skade metadata prints the current metadata file, and the table's
// metadata/version-hint.text names the same file after every commit, so
// that readers without the catalog find it.
func TestMetadataCommandAndVersionHint(t *testing.T) {
	lakeDir := filepath.Join(t.TempDir(), "lake")
	if code, _, errs := skade(t, "--lake", lakeDir, "sql", "-c", "CREATE TABLE t (a INT); INSERT INTO t VALUES (1)"); code != 0 {
		t.Fatalf("setup: %s", errs)
	}
	current := func() string {
		t.Helper()
		code, out, errs := skade(t, "--lake", lakeDir, "metadata", "t")
		if code != 0 {
			t.Fatalf("skade metadata: exit %d: %s", code, errs)
		}
		loc := strings.TrimSpace(out)
		if _, err := os.Stat(loc); err != nil || !strings.HasSuffix(loc, ".metadata.json") {
			t.Fatalf("skade metadata printed %q: %v", loc, err)
		}
		hint, err := os.ReadFile(filepath.Join(filepath.Dir(loc), "version-hint.text"))
		if err != nil {
			t.Fatal(err)
		}
		if got := filepath.Join(filepath.Dir(loc), string(hint)+".metadata.json"); got != loc {
			t.Fatalf("version hint %q names %s, the current file is %s", hint, got, loc)
		}
		return loc
	}
	first := current()
	if code, _, errs := skade(t, "--lake", lakeDir, "sql", "-c", "INSERT INTO t VALUES (2)"); code != 0 {
		t.Fatal(errs)
	}
	if second := current(); second == first {
		t.Errorf("the metadata file did not move with the commit: %s", second)
	}
	// orphan removal keeps the hint
	if code, _, errs := skade(t, "--lake", lakeDir, "orphans", "--older-than", "0s", "t"); code != 0 {
		t.Fatalf("orphans: %s", errs)
	}
	current()
	if code, _, errs := skade(t, "--lake", lakeDir, "metadata", "nope"); code == 0 || !strings.Contains(errs, "does not exist") {
		t.Errorf("metadata of a missing table: exit %d, %q", code, errs)
	}
}
