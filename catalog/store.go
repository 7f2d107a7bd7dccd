package catalog

import (
	"path"
	"path/filepath"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
)

// Store is where a lake's table files live: the lake directory on local
// disk (DurableFS), or a prefix of an object store (objstore.FS, for
// s3:// lakes). The catalog file itself is always local.
type Store interface {
	iceio.ReadFileIO
	iceio.WriteFileIO
	iceio.ListableIO
	iceio.StatIO
	iceio.BulkRemovableIO
	iceio.RemoveAllIO
	// Root is the location every table lies under: an absolute directory,
	// or a URL such as s3://bucket/prefix.
	Root() string
	// CreateExclusive creates a file that must not exist yet (where the
	// store can tell).
	CreateExclusive(name string) (iceio.FileWriter, error)
}

var _ Store = (*DurableFS)(nil)

// IsURL reports whether loc is a URL with a scheme other than file: a
// location in an object store, not a local path.
func IsURL(loc string) bool {
	i := strings.Index(loc, "://")
	return i > 0 && !strings.ContainsAny(loc[:i], `/\`) && !strings.HasPrefix(loc, "file:")
}

// urlPath splits an object-store URL into "scheme://authority" and its
// cleaned key path (no leading slash).
func urlPath(loc string) (base, key string) {
	i := strings.Index(loc, "://")
	rest := loc[i+3:]
	auth, k, _ := strings.Cut(rest, "/")
	k = strings.Trim(k, "/")
	if k != "" {
		k = path.Clean(k)
	}
	return loc[:i+3] + auth, k
}

// locWithin reports whether loc lies strictly inside root, for local
// directories (after filepath.Clean) and object-store prefixes alike. A
// location in another scheme or bucket, or one that a clean moves out,
// is not within.
func locWithin(root, loc string) bool {
	if !IsURL(root) {
		r, err := localPath(root) // a table location may be a file:// URI
		if err != nil {
			return false
		}
		p, err := localPath(loc)
		return err == nil && within(r, p)
	}
	if !IsURL(loc) {
		return false
	}
	rb, rk := urlPath(root)
	lb, lk := urlPath(loc)
	if rb != lb || lk == "" || lk == "." || strings.HasPrefix(lk, "../") || lk == ".." {
		return false
	}
	// a raw location with .. segments is refused even when it cleans to
	// something inside: the store would see the raw key
	if _, raw, _ := strings.Cut(loc[len(lb):], "/"); raw != lk {
		return false
	}
	return rk == "" || strings.HasPrefix(lk, rk+"/")
}

// locJoin joins parts under root.
func locJoin(root string, parts ...string) string {
	if !IsURL(root) {
		return filepath.Join(append([]string{root}, parts...)...)
	}
	return strings.TrimSuffix(root, "/") + "/" + path.Join(parts...)
}

// locDir is the location that holds loc.
func locDir(loc string) string {
	if !IsURL(loc) {
		p, err := localPath(loc)
		if err != nil {
			return loc
		}
		return filepath.Dir(p)
	}
	base, k := urlPath(loc)
	d := path.Dir(k)
	if d == "." {
		return base
	}
	return base + "/" + d
}
