//go:build linux

package lake_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/skadedb/skade/lake"
)

// openWatch counts open(2) calls on the files of one directory through
// inotify: the kernel reports every open, by any code path, so a count
// of zero means no byte of those files was read.
type openWatch struct {
	fd  int
	buf []byte
}

func watchOpens(t *testing.T, dir string) *openWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Skipf("inotify unavailable: %v", err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_OPEN); err != nil {
		unix.Close(fd)
		t.Skipf("inotify watch on %s: %v", dir, err)
	}
	w := &openWatch{fd: fd, buf: make([]byte, 64<<10)}
	t.Cleanup(func() { unix.Close(fd) })
	return w
}

// drain returns how many times each file was opened since the last drain.
func (w *openWatch) drain(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for {
		n, err := unix.Read(w.fd, w.buf)
		if errors.Is(err, unix.EAGAIN) {
			return out
		}
		if err != nil {
			t.Fatalf("reading inotify events: %v", err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			name := w.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				t.Fatal("inotify queue overflowed: opens were lost")
			}
			out[strings.TrimRight(string(name), "\x00")]++
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// The goal: an upsert of 10k rows into a 1M-row table reads no
// target data file. The kernel's own count of opens (inotify) on the
// table's data directory proves it; a full scan afterwards proves the
// watch sees reads, and the contents prove the upsert happened.
func TestUpsert10kInto1MReadsNoDataFile(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	start := time.Now()
	tbl := mustCreate(t, lk, "big")
	const rows, batch = 1_000_000, 250_000
	for lo := int64(0); lo < rows; lo += batch {
		tbl = mustAppend(t, tbl, lo, lo+batch) // four data files
	}
	files, err := tbl.PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	target := map[string]bool{}
	for _, f := range files {
		target[filepath.Base(f.Path)] = true
	}
	if len(target) != 4 {
		t.Fatalf("setup: %d data files, want 4", len(target))
	}
	dir := filepath.Dir(files[0].Path)
	w := watchOpens(t, dir)
	setup := time.Since(start)

	// 10k keys spread over every file (every 100th id), 5k of them new.
	ids := make([]int64, 0, 10_000)
	for i := int64(0); i < 5_000; i++ {
		ids = append(ids, i*200)
	}
	for i := int64(0); i < 5_000; i++ {
		ids = append(ids, rows+i)
	}
	up := upsertBatch(ids)
	start = time.Now()
	out, err := tbl.Upsert(ctx, []string{"id"}, up)
	up.Release()
	if err != nil {
		t.Fatal(err)
	}
	upsert := time.Since(start)
	opened := w.drain(t)
	for name, n := range opened {
		if target[name] {
			t.Errorf("the upsert opened target data file %s %d times", name, n)
		}
	}

	// The watch sees reads: a scan opens every target file.
	start = time.Now()
	rdr, err := out.Scan(ctx, lake.Columns("id", "status"))
	if err != nil {
		t.Fatal(err)
	}
	var n, upserted int64
	for rdr.Next() {
		rec := rdr.RecordBatch()
		n += rec.NumRows()
		st := rec.Column(1)
		for i := 0; i < st.Len(); i++ {
			if st.ValueStr(i) == "upserted" {
				upserted++
			}
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	rdr.Release()
	scan := time.Since(start)
	seen := 0
	for name := range w.drain(t) {
		if target[name] {
			seen++
		}
	}
	if seen != len(target) {
		t.Fatalf("the scan opened %d of %d target data files: the watch does not see reads", seen, len(target))
	}
	if n != rows+5_000 || upserted != 10_000 {
		t.Fatalf("after the upsert: %d rows, %d upserted; want %d and 10000", n, upserted, rows+5_000)
	}
	t.Logf("setup %v, upsert %v (opened %d files, none of the 4 target files), scan with 10k equality deletes %v", setup, upsert, len(opened), scan)
}
