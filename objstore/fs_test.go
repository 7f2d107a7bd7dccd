package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skadedb/skade/internal/s3test"
	"github.com/skadedb/skade/objstore"
)

func open(t *testing.T, loc string, cfg objstore.Config) *objstore.FS {
	t.Helper()
	f, err := objstore.Open(context.Background(), loc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct{ in, bucket, prefix, err string }{
		{in: "s3://b/p/q", bucket: "b", prefix: "p/q"},
		{in: "s3://b", bucket: "b"},
		{in: "s3://b/", bucket: "b"},
		{in: "s3a://b/x/", bucket: "b", prefix: "x"},
		{in: "gs://b/x", err: `scheme "gs" is not supported`},
		{in: "s3:///x", err: "no bucket"},
		{in: "s3://b/x/../y", err: "is not clean"},
		{in: "s3://b/x//y", err: "is not clean"},
		{in: "s3://b/x?versionId=1", err: "a query"},
	} {
		b, p, err := objstore.ParseURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseURL(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || b != tc.bucket || p != tc.prefix {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q", tc.in, b, p, err, tc.bucket, tc.prefix)
		}
	}
}

func TestRoundTripAndRanges(t *testing.T) {
	srv := s3test.Start(t)
	f := open(t, "s3://lake/rt", objstore.Config{TailSize: 1024})
	data := randomBytes(100_000)
	if err := f.WriteFile("s3://lake/rt/a/b.bin", data); err != nil {
		t.Fatal(err)
	}
	got, err := f.ReadFile("s3://lake/rt/a/b.bin")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("ReadFile: %d bytes, %v", len(got), err)
	}
	info, err := f.Stat("s3://lake/rt/a/b.bin")
	if err != nil || info.Size() != int64(len(data)) {
		t.Fatalf("Stat: %v, %v", info, err)
	}

	before := f.Stats()
	file, err := f.Open("s3://lake/rt/a/b.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if end, _ := file.Seek(0, io.SeekEnd); end != int64(len(data)) {
		t.Fatalf("size %d, want %d", end, len(data))
	}
	// the footer comes from the tail Open fetched: no request
	p := make([]byte, 100)
	if _, err := file.ReadAt(p, int64(len(data)-100)); err != nil || !bytes.Equal(p, data[len(data)-100:]) {
		t.Fatalf("tail ReadAt: %v", err)
	}
	// a middle range is one ranged GET of just its bytes
	if _, err := file.ReadAt(p, 5000); err != nil || !bytes.Equal(p, data[5000:5100]) {
		t.Fatalf("ReadAt: %v", err)
	}
	// a range that straddles the tail
	q := make([]byte, 2000)
	if _, err := file.ReadAt(q, int64(len(data)-1500)); err != io.EOF || !bytes.Equal(q[:1500], data[len(data)-1500:]) {
		t.Fatalf("straddling ReadAt: %v", err)
	}
	d := f.Stats().Sub(before)
	if d.GETs != 3 || d.BytesRead != 1024+100+(1500-1024) {
		t.Fatalf("reads cost %v; want 3 GETs of 1024+100+476 bytes", d)
	}
	// sequential reads stream the whole file
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(file)
	if err != nil || !bytes.Equal(all, data) {
		t.Fatalf("sequential read: %d bytes, %v", len(all), err)
	}

	// walk, remove, not found
	if err := f.WriteFile("s3://lake/rt/a/c.bin", []byte("x")); err != nil {
		t.Fatal(err)
	}
	var walked []string
	if err := f.WalkDir("s3://lake/rt/a", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			walked = append(walked, p)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(walked, []string{"s3://lake/rt/a/b.bin", "s3://lake/rt/a/c.bin"}) {
		t.Fatalf("walked %v", walked)
	}
	if err := f.RemoveAll("s3://lake/rt/a"); err != nil {
		t.Fatal(err)
	}
	if keys := srv.Keys(t, "rt/"); len(keys) != 0 {
		t.Fatalf("left after RemoveAll: %v", keys)
	}
	if _, err := f.Open("s3://lake/rt/a/b.bin"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open of a removed object: %v, want fs.ErrNotExist", err)
	}
	// empty objects open and read as empty
	if err := f.WriteFile("s3://lake/rt/empty", nil); err != nil {
		t.Fatal(err)
	}
	if b, err := f.ReadFile("s3://lake/rt/empty"); err != nil || len(b) != 0 {
		t.Fatalf("empty ReadFile: %q %v", b, err)
	}
	e, err := f.Open("s3://lake/rt/empty")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(e); err != nil || len(b) != 0 {
		t.Fatalf("empty read: %q %v", b, err)
	}
}

func TestOutsidePrefix(t *testing.T) {
	f := open(t, "s3://lake/p", objstore.Config{})
	for _, loc := range []string{"s3://other/p/x", "s3://lake/q/x", "s3://lake/p/../q/x", "/tmp/x", "s3://lake/px/y"} {
		if _, err := f.Create(loc); !errors.Is(err, objstore.ErrOutsidePrefix) {
			t.Errorf("Create(%q) = %v, want ErrOutsidePrefix", loc, err)
		}
		if err := f.Remove(loc); !errors.Is(err, objstore.ErrOutsidePrefix) {
			t.Errorf("Remove(%q) = %v, want ErrOutsidePrefix", loc, err)
		}
	}
}

func TestMultipart(t *testing.T) {
	srv := s3test.Start(t)
	f := open(t, "s3://lake/mp", objstore.Config{PartSize: 5 << 20})
	data := randomBytes(12<<20 + 123)
	w, err := f.Create("s3://lake/mp/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	// odd-sized writes, as a Parquet writer makes them
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 777_777)
		if _, err := w.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := f.Stats()
	if st.MultipartUploads != 1 || st.PUTs != 3 {
		t.Fatalf("upload took %v; want 1 multipart upload of 3 parts", st)
	}
	got, err := f.ReadFile("s3://lake/mp/big.bin")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
	if p := srv.PendingUploads(t); len(p) != 0 {
		t.Fatalf("pending uploads: %v", p)
	}
}

// A store that fails leaves no object and no pending upload, and a store
// that fails some of the time is retried through.
func TestFaults(t *testing.T) {
	srv := s3test.Start(t)
	proxy := s3test.NewProxy(t, srv.Endpoint)
	srv.SetEnv(t, proxy.URL)
	f := open(t, "s3://lake/faults", objstore.Config{PartSize: 5 << 20, MaxAttempts: 4, MaxBackoff: 50 * time.Millisecond})
	data := randomBytes(11 << 20)

	t.Run("every second PUT fails", func(t *testing.T) {
		proxy.Faults(2, 0, 0, false)
		defer proxy.Faults(0, 0, 0, false)
		for _, name := range []string{"small", "big"} {
			body := data
			if name == "small" {
				body = data[:1000]
			}
			if err := f.WriteFile("s3://lake/faults/"+name, body); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, err := f.ReadFile("s3://lake/faults/" + name)
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("%s: read back %d bytes, %v", name, len(got), err)
			}
		}
		if _, _, faults := proxy.Counts(); faults == 0 {
			t.Fatal("no fault was injected")
		}
	})
	t.Run("connection reset mid-upload", func(t *testing.T) {
		proxy.Faults(0, 3, 0, false)
		defer proxy.Faults(0, 0, 0, false)
		_, _, before := proxy.Counts()
		if err := f.WriteFile("s3://lake/faults/reset", data); err != nil {
			t.Fatal(err)
		}
		if _, _, after := proxy.Counts(); after == before {
			t.Fatal("no connection was reset")
		}
		got, err := f.ReadFile("s3://lake/faults/reset")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back %d bytes, %v", len(got), err)
		}
	})
	t.Run("slow GETs", func(t *testing.T) {
		proxy.Faults(0, 0, 100*time.Millisecond, false)
		defer proxy.Faults(0, 0, 0, false)
		got, err := f.ReadFile("s3://lake/faults/small")
		if err != nil || !bytes.Equal(got, data[:1000]) {
			t.Fatalf("read back %d bytes, %v", len(got), err)
		}
	})
	t.Run("a stalled store ends the read", func(t *testing.T) {
		stalled := open(t, "s3://lake/faults", objstore.Config{MaxAttempts: 2, MaxBackoff: time.Millisecond, StallTimeout: 200 * time.Millisecond})
		proxy.Faults(0, 0, 2*time.Second, false)
		defer proxy.Faults(0, 0, 0, false)
		// without the stall timeout the read would wait the 2s out and
		// succeed
		if _, err := stalled.ReadFile("s3://lake/faults/small"); err == nil {
			t.Fatal("a read from a store that answers nothing for 2s succeeded")
		}
	})
	t.Run("outage", func(t *testing.T) {
		// the upload starts, then the store goes down for good
		w, err := f.Create("s3://lake/faults/outage")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data[:6<<20]); err != nil {
			t.Fatal(err)
		}
		proxy.Faults(0, 0, 0, true)
		_, werr := w.Write(data[6<<20:])
		cerr := w.Close()
		if werr == nil && cerr == nil {
			t.Fatal("a write through an outage succeeded")
		}
		if !strings.Contains(errors.Join(werr, cerr).Error(), "injected outage") {
			t.Fatalf("error %v does not say what the store answered", errors.Join(werr, cerr))
		}
		proxy.Faults(0, 0, 0, false)
		// the aborted upload may have been refused during the outage;
		// writers abort on Close, so a failed abort is the one thing left
		if _, err := f.Stat("s3://lake/faults/outage"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the failed object exists: %v", err)
		}
	})
	t.Run("failed Write aborts", func(t *testing.T) {
		w, err := f.Create("s3://lake/faults/aborted")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data[:6<<20]); err != nil {
			t.Fatal(err)
		}
		proxy.Faults(1, 0, 0, false) // every PUT fails
		_, werr := w.Write(data[6<<20:])
		cerr := w.Close()
		proxy.Faults(0, 0, 0, false)
		if werr == nil && cerr == nil {
			t.Fatal("the write succeeded with every PUT failing")
		}
		if p := srv.PendingUploads(t); slices.Contains(p, "faults/aborted") {
			t.Fatalf("the failed upload is still pending: %v", p)
		}
		if _, err := f.Stat("s3://lake/faults/aborted"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the failed object exists: %v", err)
		}
	})
}
