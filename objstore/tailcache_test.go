package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"

	"github.com/skadedb/skade/internal/s3test"
	"github.com/skadedb/skade/objstore"
)

// Manifests and manifest lists (.avro under metadata/) and Parquet files
// (under data/) are opened with a request once, or not at all after this
// FS wrote them: their size and tail are kept, and a whole small object
// is read from memory too. Other files, and deleted or rewritten ones,
// never come from the cache.
func TestTailCache(t *testing.T) {
	s3test.Start(t)
	f := open(t, "s3://lake/mc", objstore.Config{TailSize: 4096})
	other := open(t, "s3://lake/mc", objstore.Config{TailSize: 4096}) // a second process: nothing cached
	manifest := "s3://lake/mc/db/t-1/metadata/0a1b-m0.avro"
	list := "s3://lake/mc/db/t-1/metadata/snap-1-1-0a1b.avro"
	data := "s3://lake/mc/db/t-1/data/x.avro" // not under metadata/
	json := "s3://lake/mc/db/t-1/metadata/00001-0a1b.metadata.json"
	big := "s3://lake/mc/db/t-1/metadata/0a1c-m0.avro" // past TailSize: its tail only
	small := randomBytes(3000)
	for _, p := range []string{manifest, data, json} {
		if err := other.WriteFile(p, small); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.WriteFile(big, randomBytes(10_000)); err != nil {
		t.Fatal(err)
	}
	// written by f itself: cached as written
	if err := f.WriteFile(list, small[:1000]); err != nil {
		t.Fatal(err)
	}
	read := func(p string, want []byte, viaOpen bool) objstore.StatsSnapshot {
		t.Helper()
		before := f.Stats()
		var got []byte
		var err error
		if viaOpen {
			var file io.ReadCloser
			if file, err = f.Open(p); err == nil {
				got, err = io.ReadAll(file)
				file.Close()
			}
		} else {
			got, err = f.ReadFile(p)
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %d bytes, %v", p, len(got), err)
		}
		return f.Stats().Sub(before)
	}
	for round := 0; round < 3; round++ {
		for _, viaOpen := range []bool{true, false} {
			if d := read(manifest, small, viaOpen); (round > 0 || !viaOpen) != (d.GETs == 0) || d.Cached != 1-d.GETs {
				t.Fatalf("round %d, open %v: the manifest cost %v", round, viaOpen, d)
			}
			if d := read(list, small[:1000], viaOpen); d.GETs != 0 || d.Cached != 1 {
				t.Fatalf("round %d: the list f wrote cost %v", round, d)
			}
			for _, p := range []string{data, json} {
				if d := read(p, small, viaOpen); d.GETs != 1 || d.Cached != 0 {
					t.Fatalf("round %d: %s cost %v", round, p, d)
				}
			}
			// the large manifest: Open's tail GET is saved from the second
			// Open on, a ranged GET reads the rest (ReadFile reads it whole)
			want := int64(2)
			switch {
			case !viaOpen:
				want = 1
			case round == 0:
				want = 2 // the first Open: tail, then the rest
			default:
				want = 1
			}
			if d := read(big, randomBytes(10_000), viaOpen); d.GETs != want {
				t.Fatalf("round %d, open %v: the large manifest cost %v, want %d GETs", round, viaOpen, d, want)
			}
		}
	}
	// Parquet files: a data file's size and tail (its footer) are kept,
	// one outside a data/ directory's are not
	pq, elsewhere := "s3://lake/mc/db/t-1/data/00000-x.parquet", "s3://lake/mc/user/y.parquet"
	body := randomBytes(10_000)
	for _, p := range []string{pq, elsewhere} {
		if err := other.WriteFile(p, body); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			before := f.Stats()
			file, err := f.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			foot, head := make([]byte, 100), make([]byte, 100)
			if _, err := file.ReadAt(foot, 9_900); err != nil || !bytes.Equal(foot, body[9_900:]) {
				t.Fatalf("%s footer: %v", p, err)
			}
			if _, err := file.ReadAt(head, 0); err != nil || !bytes.Equal(head, body[:100]) {
				t.Fatalf("%s head: %v", p, err)
			}
			file.Close()
			d := f.Stats().Sub(before)
			// the tail GET (not when cached) and a ranged GET of the head
			if cached := p == pq && i > 0; d.GETs != 2-d.Cached || (d.Cached == 1) != cached {
				t.Fatalf("%s, open %d: %v", p, i, d)
			}
		}
	}
	// a copy handed out by ReadFile is the caller's
	b, err := f.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if d := read(manifest, small, false); d.Cached != 1 {
		t.Fatalf("after changing a copy: %v", d)
	}
	// deleted by f: gone, as from the store
	if err := f.Remove(manifest); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Open(manifest); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open after Remove: %v", err)
	}
	if _, err := f.DeleteFiles(context.Background(), []string{list}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadFile(list); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile after DeleteFiles: %v", err)
	}
	// rewritten (which Iceberg never does) by a writer f opened: the new bytes
	if err := other.WriteFile(manifest, small[:10]); err != nil {
		t.Fatal(err)
	}
	if d := read(manifest, small[:10], true); d.GETs != 1 {
		t.Fatalf("re-created: %v", d)
	}
	w, err := f.Create(manifest)
	if err != nil {
		t.Fatal(err)
	}
	// read between Create and Close: the old bytes, cached again
	read(manifest, small[:10], false)
	if _, err := w.Write(small[:20]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if d := read(manifest, small[:20], true); d.GETs != 0 || d.Cached != 1 {
		t.Fatalf("rewritten through f: %v", d)
	}
	// rewritten through f with more than the cache takes: the new bytes
	large := randomBytes(5000)
	if err := f.WriteFile(manifest, large); err != nil {
		t.Fatal(err)
	}
	// (its tail as written, and one ranged GET of the rest)
	if d := read(manifest, large, true); d.Cached != 1 || d.GETs != 1 || d.BytesRead != 5000-4096 {
		t.Fatalf("rewritten larger through f: %v", d)
	}
	// no cache
	none := open(t, "s3://lake/mc", objstore.Config{TailSize: 4096, TailCacheBytes: -1})
	for i := 0; i < 2; i++ {
		before := none.Stats()
		if _, err := none.ReadFile(manifest); err != nil {
			t.Fatal(err)
		}
		if d := none.Stats().Sub(before); d.GETs != 1 || d.Cached != 0 {
			t.Fatalf("without a cache: %v", d)
		}
	}
}
