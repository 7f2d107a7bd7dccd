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

// skade relocate makes a copied lake readable where a copy is refused.
func TestRelocateCommand(t *testing.T) {
	base := t.TempDir()
	orig := filepath.Join(base, "orig")
	if code, _, errs := skade(t, "--lake", orig, "sql", "-c", "CREATE TABLE t (a INT) WITH ('write.delete.mode' = 'merge-on-read'); INSERT INTO t VALUES (1), (2), (3); DELETE FROM t WHERE a = 2"); code != 0 {
		t.Fatalf("setup: %s", errs)
	}
	cp := filepath.Join(base, "copy")
	if err := os.CopyFS(cp, os.DirFS(orig)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(orig); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := skade(t, "--lake", cp, "sql", "-c", "SELECT * FROM t"); code == 0 || !strings.Contains(errs, "skade relocate") {
		t.Fatalf("reading the copy before relocating: exit %d, %q", code, errs)
	}
	code, out, errs := skade(t, "--lake", cp, "relocate")
	if code != 0 || !strings.Contains(out, "relocated 1 tables and 0 views from "+orig) {
		t.Fatalf("relocate: exit %d, %q %q", code, out, errs)
	}
	if code, out, errs := skade(t, "--lake", cp, "sql", "--format", "csv", "-c", "SELECT sum(a) FROM t"); code != 0 || !strings.Contains(out, "\n4") {
		t.Fatalf("reading the relocated copy: exit %d, %q %q", code, out, errs)
	}
	if code, out, _ := skade(t, "--lake", cp, "relocate"); code != 0 || !strings.Contains(out, "nothing to do") {
		t.Errorf("relocating again: exit %d, %q", code, out)
	}
}
