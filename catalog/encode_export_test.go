package catalog

import "github.com/apache/iceberg-go/table"

// MarshalMetadata exposes the catalog's metadata encoder to tests.
func (c *Catalog) MarshalMetadata(meta table.Metadata) ([]byte, error) {
	return c.snapJSON.marshalMetadata(meta)
}
