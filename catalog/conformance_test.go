package catalog_test

import (
	"testing"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/catalogtest"

	"github.com/skadedb/skade/catalog"
)

func TestConformance(t *testing.T) {
	catalogtest.RunCatalogTests(t, catalogtest.Config{
		NewCatalog: func(t *testing.T) icecatalog.Catalog {
			return openLake(t, t.TempDir())
		},
		SupportsNamespaceProperties: true,
	})
}

var _ icecatalog.Catalog = (*catalog.Catalog)(nil)
