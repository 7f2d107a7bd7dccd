package lake

import (
	"context"
	"fmt"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
)

// OpenIcebergTable opens an Iceberg table that is not in the lake's
// catalog, for iceberg_scan: location is a metadata file
// (….metadata.json), or a table directory whose current metadata file is
// found through metadata/version-hint.text (a version number N for
// vN.metadata.json, as Hadoop catalogs write it, or a file name stem, as
// skade writes it), else as the highest-numbered metadata file. Local
// paths are read from disk; URLs only inside the lake's own object
// store, whose credentials the lake has. The table is read-only.
func (c sessionCatalog) OpenIcebergTable(ctx context.Context, location string) (*table.Table, error) {
	fsys, err := c.s.externalFS(location)
	if err != nil {
		return nil, err
	}
	meta := location
	if !strings.HasSuffix(location, ".metadata.json") {
		if meta, err = catalog.CurrentMetadataFile(fsys, strings.TrimSuffix(location, "/")); err != nil {
			return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("iceberg_scan(%q): %w", location, err)}
		}
	}
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"iceberg_scan"}, meta,
		func(context.Context) (iceio.IO, error) { return fsys, nil }, nil)
	if err != nil {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("iceberg_scan(%q): reading %s: %w", location, meta, err)}
	}
	return tbl, nil
}

// externalFS is the IO iceberg_scan reads location through.
func (s *Session) externalFS(location string) (iceio.IO, error) {
	if !catalog.IsURL(location) {
		return iceio.LocalFS{}, nil
	}
	fsys := s.lk.cat.FS()
	root := strings.TrimSuffix(fsys.Root(), "/") + "/"
	if strings.HasPrefix(location, root) {
		return fsys, nil
	}
	return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("iceberg_scan(%q): only local paths and locations in this lake's object store (%s) can be read", location, fsys.Root())}
}
