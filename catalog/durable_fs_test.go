package catalog_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/skadedb/skade/catalog"
)

func TestDurableFS(t *testing.T) {
	parent, lake := lakeUnder(t)
	if err := os.Mkdir(lake, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := catalog.NewDurableFS(lake)
	if err != nil {
		t.Fatal(err)
	}

	// Create makes the missing directories and the file is complete after Close.
	name := filepath.Join(lake, "ns", "t-0000", "data", "a.parquet")
	w, err := d.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("hello ")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ReadFrom(strings.NewReader("world")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("second close: %v, want os.ErrClosed", err)
	}
	if got, _ := d.ReadFile(name); string(got) != "hello world" {
		t.Errorf("read %q", got)
	}
	if got, _ := d.ReadFile("file://" + name); string(got) != "hello world" {
		t.Errorf("read via file:// %q", got)
	}
	f, err := d.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "hello world" {
		t.Errorf("open+read %q", b)
	}
	if err := d.WriteFile(filepath.Join(lake, "x", "b"), []byte("b")); err != nil {
		t.Fatal(err)
	}
	if fi, err := d.Stat(filepath.Join(lake, "x", "b")); err != nil || fi.Size() != 1 {
		t.Errorf("stat: %v %v", fi, err)
	}
	var walked []string
	if err := d.WalkDir(lake, func(p string, de fs.DirEntry, err error) error {
		if !de.IsDir() {
			walked = append(walked, p)
		}

		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(walked) != 2 {
		t.Errorf("walked %v", walked)
	}
	if err := d.Rename(filepath.Join(lake, "x", "b"), filepath.Join(lake, "y", "c")); err != nil {
		t.Fatal(err)
	}
	if err := d.RenameNoReplace(filepath.Join(lake, "y", "c"), name); !errors.Is(err, fs.ErrExist) {
		t.Errorf("rename onto an existing file: %v, want fs.ErrExist", err)
	}
	if _, err := d.CreateExclusive(name); !errors.Is(err, fs.ErrExist) {
		t.Errorf("exclusive create of an existing file: %v, want fs.ErrExist", err)
	}
	deleted, err := d.DeleteFiles(ctx, []string{filepath.Join(lake, "y", "c"), filepath.Join(lake, "missing")})
	if err != nil || len(deleted) != 2 {
		t.Errorf("delete files: %v %v", deleted, err)
	}

	// Nothing outside the root.
	outside := []string{
		filepath.Join(parent, "evil"),
		filepath.Join(lake, "..", "evil"),
		lake + "-sibling/evil",
		"relative/evil",
		"file://" + filepath.Join(parent, "evil"),
	}
	for _, p := range outside {
		_, err := d.Create(p)
		wantErr(t, err, catalog.ErrOutsideLake, "is outside the lake directory")
		wantErr(t, d.WriteFile(p, nil), catalog.ErrOutsideLake, "; skade writes only inside its lake")
		wantErr(t, d.MkdirAll(p), catalog.ErrOutsideLake, "is outside the lake directory")
		wantErr(t, d.Remove(p), catalog.ErrOutsideLake, "is outside the lake directory")
		wantErr(t, d.RemoveAll(p), catalog.ErrOutsideLake, "is outside the lake directory")
		wantErr(t, d.Rename(name, p), catalog.ErrOutsideLake, "is outside the lake directory")
	}
	_, err = d.Create(filepath.Join(parent, "evil"))
	wantErr(t, err, catalog.ErrOutsideLake, `create "`+filepath.Join(parent, "evil")+`": the path is outside the lake directory "`+lake+`"; skade writes only inside its lake`)
	_, err = d.Create("s3://bucket/x")
	wantErr(t, err, nil, `unsupported location "s3://bucket/x": skade lakes live on the local file system; use an absolute path`)
	if got := entries(t, parent); !slices.Equal(got, []string{"lake"}) {
		t.Errorf("next to the lake: %v", got)
	}

	// A removed lake directory is not re-created by a write.
	gone := filepath.Join(parent, "gone")
	g, _ := catalog.NewDurableFS(gone)
	_, err = g.Create(filepath.Join(gone, "a", "b"))
	wantErr(t, err, catalog.ErrOutsideLake, `the lake directory "`+gone+`" does not exist; open the lake again to create it`)
}

func TestTracker(t *testing.T) {
	_, lake := lakeUnder(t)
	c := openLake(t, lake)
	tr := catalog.NewTracker(c.FS())
	var _ iceio.WriteFileIO = tr

	a := filepath.Join(lake, "main", "t-1", "data", "a")
	b := filepath.Join(lake, "main", "t-1", "data", "b")
	cc := filepath.Join(lake, "main", "t-1", "data", "c")
	w, err := tr.Create(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tr.WriteFile(b, []byte("b")); err != nil {
		t.Fatal(err)
	}
	if err := tr.WriteFile(cc, []byte("c")); err != nil {
		t.Fatal(err)
	}
	if err := tr.Remove(cc); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Create(filepath.Join(lake, "..", "x")); !errors.Is(err, catalog.ErrOutsideLake) {
		t.Errorf("create outside: %v", err)
	}
	if got := tr.Created(); !slices.Equal(got, []string{a, b}) {
		t.Errorf("created %v, want [a b]", got)
	}
	if data, err := tr.ReadFile(b); err != nil || string(data) != "b" {
		t.Errorf("read through tracker: %q %v", data, err)
	}
	if err := os.Remove(a); err != nil { // already gone counts as removed
		t.Fatal(err)
	}
	if err := tr.RemoveCreated(); err != nil {
		t.Fatal(err)
	}
	if got := tr.Created(); len(got) != 0 {
		t.Errorf("after RemoveCreated: %v", got)
	}
	if _, err := os.Stat(b); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("b still exists: %v", err)
	}
}

// TestTrackerOnFailedAppend uses a Tracker as the table IO of an append
// whose commit loses: removing what it created leaves the lake as before.
func TestTrackerOnFailedAppend(t *testing.T) {
	c := newLake(t)
	base := createTable(t, c, "t")
	if _, err := appendRows(t, base, 0, 3); err != nil {
		t.Fatal(err)
	}
	before := files(t, c.Dir())

	tr := catalog.NewTracker(c.FS())
	stale, err := c.LoadTableAt(ctx, base.Identifier(), base.MetadataLocation())
	if err != nil {
		t.Fatal(err)
	}
	tracked := c.WithFS(stale, tr)
	_, err = appendRows(t, tracked, 3, 3)
	wantErr(t, err, nil, "commit to table main.t failed: ")
	if len(tr.Created()) == 0 {
		t.Fatalf("the tracker saw no files")
	}
	if err := tr.RemoveCreated(); err != nil {
		t.Fatal(err)
	}
	if got := files(t, c.Dir()); !slices.Equal(got, before) {
		t.Errorf("files after cleanup:\n got %v\nwant %v", got, before)
	}
}
