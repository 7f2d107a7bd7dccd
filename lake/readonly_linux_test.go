//go:build linux

package lake_test

import (
	"context"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/skadedb/skade/lake"
)

// A process that only reads needs no write permission on the lake: it
// runs as another user (nobody) on a lake it may only read, and SELECT
// works while a write fails with a clear error and changes nothing. Run
// as root (CI is), the test drops to nobody for the child; otherwise it
// is skipped, as it cannot switch users.
func TestReadOnlyLakeAsAnotherUser(t *testing.T) {
	if dir := os.Getenv("SKADE_TEST_READONLY_LAKE"); dir != "" {
		readOnlyChild(t, dir)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the reader as another user")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)

	base := t.TempDir()
	dir := filepath.Join(base, "lake")
	lk, err := lake.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, lk.Session(), "CREATE TABLE r AS SELECT * FROM generate_series(1, 100) g(x)")
	lk.Close()
	before := lakeFiles(t, dir)

	// the test binary and the lake: readable by everyone, writable by root only
	bin := filepath.Join(base, "lake.test")
	copyFile(t, os.Args[0], bin, 0o755)
	for p := base; p != "/" && p != filepath.Dir(p); p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
			if err := os.Chmod(p, fi.Mode().Perm()|0o005); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o444)
		if fi.IsDir() {
			mode = 0o555
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	cmd := exec.Command(bin, "-test.run=^TestReadOnlyLakeAsAnotherUser$", "-test.v")
	cmd.Env = append(os.Environ(), "SKADE_TEST_READONLY_LAKE="+dir, "HOME=/")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "read-only child: ok") {
		t.Fatalf("the reader as nobody failed: %v\n%s", err, out)
	}
	if after := lakeFiles(t, dir); !maps.Equal(before, after) {
		t.Fatal("the read-only reader changed the lake's files")
	}
}

func readOnlyChild(t *testing.T, dir string) {
	ctx := context.Background()
	lk, err := lake.Open(ctx, dir)
	if err != nil {
		t.Fatalf("open a read-only lake: %v", err)
	}
	defer lk.Close()
	s := lk.Session()
	got := query(t, s, "SELECT count(*), sum(x) FROM r")
	if len(got) != 1 || got[0] != "100|5050" {
		t.Fatalf("read %v", got)
	}
	if _, err := s.SQL(ctx, "INSERT INTO r VALUES (101)"); err == nil {
		t.Fatal("a write to a read-only lake succeeded")
	} else if !strings.Contains(strings.ToLower(err.Error()), "permission denied") {
		t.Fatalf("a write to a read-only lake failed without saying why: %v", err)
	}
	t.Log("read-only child: ok")
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
