package exec

import (
	"testing"
	"time"
)

// A retained hands back the most recently kept slice that fits, keeps
// within its bound by dropping the slices kept longest, refuses a slice
// larger than the bound, and empties itself once idle.
func TestRetained(t *testing.T) {
	r := newRetained[uint64](1<<20, time.Hour) // 131,072 words
	if r.keep(make([]uint64, 200_000)) {
		t.Fatal("a slice larger than the bound was kept")
	}
	a, b, c := make([]uint64, 60_000), make([]uint64, 60_000), make([]uint64, 30_000)
	a[0], b[0], c[0] = 1, 2, 3
	for _, s := range [][]uint64{a, b, c} { // c needs a's room
		if !r.keep(s) {
			t.Fatal("a slice within the bound was not kept")
		}
	}
	if n, bytes := r.held(); n != 2 || bytes != 90_000*8 {
		t.Fatalf("held %d slices, %d bytes; want 2, %d", n, bytes, 90_000*8)
	}
	if s := r.take(func(s []uint64) bool { return len(s) >= 40_000 }); s == nil || s[0] != 2 {
		t.Fatalf("Take gave %v, want b", s)
	}
	if s := r.take(func(s []uint64) bool { return len(s) >= 40_000 }); s != nil {
		t.Fatalf("Take gave a slice of %d words that does not fit", len(s))
	}
	// keep holds a slice to its capacity
	if !r.keep(make([]uint64, 10, 20_000)) {
		t.Fatal("not kept")
	}
	if s := r.take(func(s []uint64) bool { return len(s) == 20_000 }); s == nil {
		t.Fatal("a slice kept short was not held whole")
	}
	r.expire() // used just now: stays
	if n, _ := r.held(); n != 1 {
		t.Fatalf("a retained used just now holds %d slices after expire, want 1", n)
	}
	r.mu.Lock()
	r.used = time.Now().Add(-2 * time.Hour)
	r.mu.Unlock()
	r.expire()
	if n, bytes := r.held(); n != 0 || bytes != 0 {
		t.Fatalf("an idle retained holds %d slices, %d bytes", n, bytes)
	}
	// the timer set by the first Keep empties it too
	q := newRetained[byte](1<<20, 20*time.Millisecond)
	q.keep(make([]byte, 1000))
	deadline := time.Now().Add(10 * time.Second)
	for n, _ := q.held(); n != 0; n, _ = q.held() {
		if time.Now().After(deadline) {
			t.Fatal("an idle retained was not emptied by its timer")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
