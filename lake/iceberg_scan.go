package lake

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strconv"
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
		if meta, err = currentMetadataFile(fsys, strings.TrimSuffix(location, "/")); err != nil {
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

var (
	hadoopVersion = regexp.MustCompile(`^v(\d+)(\.gz)?\.metadata\.json$`)
	numbered      = regexp.MustCompile(`^(\d+)-.*\.metadata\.json$`)
)

// currentMetadataFile finds the current metadata file of the table
// directory dir.
func currentMetadataFile(fsys iceio.IO, dir string) (string, error) {
	mdir := dir + "/metadata"
	if f, err := fsys.Open(mdir + "/" + catalog.VersionHintFile); err == nil {
		b, err := io.ReadAll(io.LimitReader(f, 4096))
		f.Close()
		if err == nil {
			hint := strings.TrimSpace(string(b))
			if _, err := strconv.Atoi(hint); err == nil {
				return mdir + "/v" + hint + ".metadata.json", nil
			}
			if hint != "" && !strings.ContainsAny(hint, "/\\") {
				return mdir + "/" + hint + ".metadata.json", nil
			}
		}
	}
	lister, ok := fsys.(iceio.ListableIO)
	if !ok {
		return "", fmt.Errorf("%s has no %s and cannot be listed; name the metadata file", mdir, catalog.VersionHintFile)
	}
	best, bestN := "", -1
	err := lister.WalkDir(mdir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != mdir {
				return fs.SkipDir
			}
			return nil
		}
		name := d.Name()
		m := hadoopVersion.FindStringSubmatch(name)
		if m == nil {
			m = numbered.FindStringSubmatch(name)
		}
		if m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > bestN {
				best, bestN = name, n
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("no Iceberg table at %s: %w", dir, err)
	}
	if best == "" {
		return "", fmt.Errorf("no Iceberg table at %s: %s holds no metadata file", dir, mdir)
	}
	return path.Join(mdir, best), nil
}
