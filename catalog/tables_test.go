package catalog_test

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

func TestDropKeepsFilesAndRecreateGetsNewLocation(t *testing.T) {
	c := newLake(t)
	first := createTable(t, c, "t")
	if _, err := appendRows(t, first, 0, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.DropTable(ctx, table.Identifier{"t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(first.Location()); err != nil {
		t.Errorf("drop removed the table directory: %v", err)
	}
	wantErr(t, c.DropTable(ctx, table.Identifier{"t"}), icecatalog.ErrNoSuchTable,
		"table main.t does not exist; check the name, or create the table first")
	_, err := c.LoadTable(ctx, table.Identifier{"t"})
	wantErr(t, err, icecatalog.ErrNoSuchTable, "table main.t does not exist; check the name, or create the table first")

	second := createTable(t, c, "t")
	if second.Location() == first.Location() {
		t.Errorf("re-created table shares location %s", first.Location())
	}
	if n := countRows(t, second); n != 0 {
		t.Errorf("re-created table has %d rows", n)
	}
}

func TestPurgeTable(t *testing.T) {
	c := newLake(t)
	keep := createTable(t, c, "keep")
	tbl := createTable(t, c, "t")
	if _, err := appendRows(t, tbl, 0, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.PurgeTable(ctx, table.Identifier{"t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tbl.Location()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("purge left %s: %v", tbl.Location(), err)
	}
	if ok, _ := c.CheckTableExists(ctx, table.Identifier{"t"}); ok {
		t.Errorf("purged table still exists")
	}
	if _, err := os.Stat(keep.MetadataLocation()); err != nil {
		t.Errorf("purge touched another table: %v", err)
	}
	wantErr(t, c.PurgeTable(ctx, table.Identifier{"t"}), icecatalog.ErrNoSuchTable, "table main.t does not exist")

	// gc.enabled=false keeps the files.
	nogc, err := c.CreateTable(ctx, table.Identifier{"nogc"}, testSchema, withProps(iceberg.Properties{table.GCEnabledKey: "false"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PurgeTable(ctx, table.Identifier{"nogc"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(nogc.MetadataLocation()); err != nil {
		t.Errorf("purge with gc.enabled=false removed files: %v", err)
	}
}

func TestRenameTable(t *testing.T) {
	c := newLake(t)
	tbl := createTable(t, c, "a")
	createTable(t, c, "b")
	if err := c.CreateNamespace(ctx, table.Identifier{"other"}, nil); err != nil {
		t.Fatal(err)
	}
	renamed, err := c.RenameTable(ctx, table.Identifier{"a"}, table.Identifier{"other", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if renamed.Location() != tbl.Location() || !slices.Equal(renamed.Identifier(), table.Identifier{"other", "c"}) {
		t.Errorf("renamed table: %v at %s", renamed.Identifier(), renamed.Location())
	}
	if ok, _ := c.CheckTableExists(ctx, table.Identifier{"a"}); ok {
		t.Errorf("old name still exists")
	}
	tests := []struct {
		from, to table.Identifier
		target   error
		msg      string
	}{
		{table.Identifier{"other", "c"}, table.Identifier{"b"}, icecatalog.ErrTableAlreadyExists,
			"table main.b already exists; choose another name, or drop the table first"},
		{table.Identifier{"a"}, table.Identifier{"z"}, icecatalog.ErrNoSuchTable, "table main.a does not exist"},
		{table.Identifier{"b"}, table.Identifier{"nope", "b"}, icecatalog.ErrNoSuchNamespace, "namespace nope does not exist; create it first"},
		{table.Identifier{"b"}, table.Identifier{"main", "b"}, nil, "rename table main.b: the new name is the same as the old; choose another name"},
	}
	for _, tt := range tests {
		_, err := c.RenameTable(ctx, tt.from, tt.to)
		wantErr(t, err, tt.target, tt.msg)
	}
	if ok, _ := c.CheckTableExists(ctx, table.Identifier{"other", "c"}); !ok {
		t.Errorf("a failed rename moved the table")
	}
}

func TestNamespaces(t *testing.T) {
	c := newLake(t)
	ns, err := c.ListNamespaces(ctx, nil)
	if err != nil || !slices.EqualFunc(ns, []table.Identifier{{"main"}}, slices.Equal) {
		t.Errorf("namespaces of a new lake: %v %v, want [main]", ns, err)
	}
	wantErr(t, c.DropNamespace(ctx, table.Identifier{"main"}), nil,
		"drop namespace main: it is the default namespace and always exists; drop its tables instead")
	wantErr(t, c.CreateNamespace(ctx, table.Identifier{"main"}, nil), icecatalog.ErrNamespaceAlreadyExists,
		"namespace main already exists; choose another name")
	wantErr(t, c.CreateNamespace(ctx, table.Identifier{"a", "b"}, nil), nil,
		`invalid namespace name "a.b": namespaces have a single level; use one name such as main`)
	if err := c.CreateNamespace(ctx, table.Identifier{"skade", "sales"}, iceberg.Properties{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	createTable(t, c, "sales", "t")
	wantErr(t, c.DropNamespace(ctx, table.Identifier{"sales"}), icecatalog.ErrNamespaceNotEmpty,
		"drop namespace sales: it still has tables, such as t; drop them first")
	var listed []table.Identifier
	for id, err := range c.ListTables(ctx, table.Identifier{"sales"}) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, id)
	}
	if !slices.EqualFunc(listed, []table.Identifier{{"sales", "t"}}, slices.Equal) {
		t.Errorf("tables of sales: %v", listed)
	}
	for _, err := range c.ListTables(ctx, table.Identifier{"nope"}) {
		wantErr(t, err, icecatalog.ErrNoSuchNamespace, "namespace nope does not exist; create it first")
	}
	_, err = c.UpdateNamespaceProperties(ctx, table.Identifier{"sales"}, []string{"k"}, iceberg.Properties{"k": "w"})
	wantErr(t, err, nil, `update namespace sales: property "k" is both removed and set; do one or the other`)
	sum, err := c.UpdateNamespaceProperties(ctx, table.Identifier{"sales"}, []string{"k", "missing"}, iceberg.Properties{"n": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sum.Removed, []string{"k"}) || !slices.Equal(sum.Missing, []string{"missing"}) || !slices.Equal(sum.Updated, []string{"n"}) {
		t.Errorf("summary %+v", sum)
	}
}
