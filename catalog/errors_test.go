package catalog_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	bolt "go.etcd.io/bbolt"

	"github.com/skadedb/skade/catalog"
)

func TestMoreErrorMessages(t *testing.T) {
	c := newLake(t)
	tbl := createTable(t, c, "t")

	_, err := c.LoadTableAt(ctx, table.Identifier{"t"}, "/etc/hosts")
	wantErr(t, err, catalog.ErrOutsideLake,
		`table main.t: metadata file "/etc/hosts" is outside the lake directory "`+c.Dir()+`"; skade keeps every file inside its lake`)
	at, err := c.LoadTableAt(ctx, table.Identifier{"t"}, tbl.MetadataLocation())
	if err != nil || at.MetadataLocation() != tbl.MetadataLocation() {
		t.Errorf("load at: %v", err)
	}

	_, _, err = c.CommitTable(ctx, table.Identifier{"new"}, nil, nil)
	wantErr(t, err, nil, "create table main.new: the commit has no updates; pass at least the schema")
	_, err = c.CreateTable(ctx, table.Identifier{"x"}, nil)
	wantErr(t, err, nil, "create table main.x: the schema is missing; pass a schema")
	_, err = c.CreateTable(ctx, table.Identifier{"nope", "x"}, testSchema)
	wantErr(t, err, nil, "namespace nope does not exist; create it first")
	_, err = c.CreateTable(ctx, table.Identifier{"t"}, testSchema)
	wantErr(t, err, nil, "table main.t already exists; choose another name, or drop the table first")
	_, err = c.MetadataLocation(ctx, table.Identifier{"none"})
	wantErr(t, err, nil, "table main.none does not exist; check the name, or create the table first")
	_, err = c.ListNamespaces(ctx, table.Identifier{"nope"})
	wantErr(t, err, nil, "namespace nope does not exist; create it first")
	if got, err := c.ListNamespaces(ctx, table.Identifier{"main"}); err != nil || len(got) != 0 {
		t.Errorf("children of main: %v %v", got, err)
	}
	loc, err := c.TableLocation(ctx, table.Identifier{"t"})
	if err != nil || loc != tbl.Location() {
		t.Errorf("table location %q %v, want %q", loc, err, tbl.Location())
	}

	// A metadata file that is gone or damaged. Metadata files are
	// immutable, so a catalog caches what it parsed or wrote; a catalog that
	// has not seen the file (another process) reads it from disk.
	if err := os.WriteFile(tbl.MetadataLocation(), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoadTable(ctx, table.Identifier{"t"}); err != nil {
		t.Fatalf("the catalog that wrote the metadata should serve it from its cache: %v", err)
	}
	c, err = catalog.Open(c.Dir())
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.LoadTable(ctx, table.Identifier{"t"})
	wantErr(t, err, nil, "table main.t: cannot read metadata file "+tbl.MetadataLocation()+": ")
	wantErr(t, err, nil, "; restore the file from a backup, or drop the table")
	if err := os.Remove(tbl.MetadataLocation()); err != nil {
		t.Fatal(err)
	}
	_, err = c.LoadTable(ctx, table.Identifier{"t"})
	wantErr(t, err, fs.ErrNotExist, "table main.t: cannot read metadata file "+tbl.MetadataLocation()+": ")

	// catalog.db removed under a running catalog.
	if err := os.Remove(filepath.Join(c.Dir(), catalog.DBFile)); err != nil {
		t.Fatal(err)
	}
	_, err = c.LoadTable(ctx, table.Identifier{"t"})
	wantErr(t, err, fs.ErrNotExist, `lake "`+c.Dir()+`": catalog.db is missing; open the lake with catalog.Open to create it`)
	err = c.DropTable(ctx, table.Identifier{"t"})
	wantErr(t, err, fs.ErrNotExist, `lake "`+c.Dir()+`": catalog.db is missing; open the lake with catalog.Open to create it`)
	if _, err := os.Stat(filepath.Join(c.Dir(), catalog.DBFile)); err == nil {
		t.Errorf("a write re-created catalog.db")
	}

	// A bbolt file that is not a catalog.
	db, err := bolt.Open(filepath.Join(c.Dir(), catalog.DBFile), 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	for _, err := range []error{
		c.DropTable(ctx, table.Identifier{"t"}),
		c.CreateNamespace(ctx, table.Identifier{"n"}, nil),
		func() error { _, err := c.LoadTable(ctx, table.Identifier{"t"}); return err }(),
	} {
		wantErr(t, err, nil, `lake "`+c.Dir()+`": catalog.db is not a skade catalog (its buckets are missing); restore it from a backup, or open the lake in a new directory`)
	}
}

func TestOpenRefusesOtherFormat(t *testing.T) {
	_, lake := lakeUnder(t)
	openLake(t, lake)
	db, err := bolt.Open(filepath.Join(lake, catalog.DBFile), 0o644, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("format"), []byte("9")) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	_, err = catalog.Open(lake)
	wantErr(t, err, nil, `open lake "`+lake+`": catalog.db has format "9", this skade reads format "1"; use a skade release that matches the lake`)
}

// TestImports keeps the layer honest: catalog imports nothing of skade.
func TestImports(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if strings.HasPrefix(strings.Trim(imp.Path.Value, `"`), "github.com/skadedb/skade") {
				t.Errorf("%s imports %s; catalog is the bottom layer and imports nothing of skade", p, imp.Path.Value)
			}
		}
	}
}
