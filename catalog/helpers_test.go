package catalog_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
)

var ctx = context.Background()

var testSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
)

// lakeUnder returns a lake directory inside a fresh parent directory, so a
// test can check that nothing appeared next to the lake.
func lakeUnder(t *testing.T) (parent, lake string) {
	t.Helper()
	parent = t.TempDir()

	return parent, filepath.Join(parent, "lake")
}

func openLake(t *testing.T, dir string, opts ...catalog.Option) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Open(dir, opts...)
	if err != nil {
		t.Fatalf("open lake: %v", err)
	}

	return c
}

func newLake(t *testing.T) *catalog.Catalog {
	t.Helper()
	_, lake := lakeUnder(t)

	return openLake(t, lake)
}

func createTable(t *testing.T, c *catalog.Catalog, name ...string) *table.Table {
	t.Helper()
	tbl, err := c.CreateTable(ctx, table.Identifier(name), testSchema)
	if err != nil {
		t.Fatalf("create table %v: %v", name, err)
	}

	return tbl
}

// files lists every regular file under dir, relative to dir, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}

		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	sort.Strings(out)

	return out
}

// entries lists the names directly inside dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range des {
		out = append(out, d.Name())
	}

	return out
}

func metadataFiles(t *testing.T, c *catalog.Catalog) []string {
	t.Helper()
	var out []string
	for _, f := range files(t, c.Dir()) {
		if strings.HasSuffix(f, ".metadata.json") {
			out = append(out, f)
		}
	}

	return out
}

func mustPointer(t *testing.T, c *catalog.Catalog, name ...string) string {
	t.Helper()
	loc, err := c.MetadataLocation(ctx, table.Identifier(name))
	if err != nil {
		t.Fatalf("metadata location of %v: %v", name, err)
	}

	return loc
}

func wantErr(t *testing.T, err error, target error, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %q", msg)
	}
	if target != nil && !errors.Is(err, target) {
		t.Errorf("error %q does not wrap %v", err, target)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("error\n  %q\ndoes not contain\n  %q", err, msg)
	}
}

func withProps(p iceberg.Properties) icecatalog.CreateTableOpt { return icecatalog.WithProperties(p) }

func withLocation(loc string) icecatalog.CreateTableOpt { return icecatalog.WithLocation(loc) }
