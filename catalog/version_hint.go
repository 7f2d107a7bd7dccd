package catalog

import (
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
)

// VersionHintFile is the file beside a table's metadata files that names
// the current one, the convention of Hadoop-style catalogs
// (metadata/version-hint.text). skade writes the current file's version
// stem (00006-<uuid>: its name without .metadata.json), which DuckDB's
// iceberg_scan resolves with its default version_name_format. The bbolt
// pointer, not the hint, is the commit: the hint is written after the
// swap, best effort, and two committers racing may leave the older one's
// hint for a moment, as with any Hadoop-style hint.
const VersionHintFile = "version-hint.text"

// writeVersionHint points the version hint of the table whose metadata
// file is loc at it. A hint that cannot be written costs only the hint:
// the commit already happened.
func (c *Catalog) writeVersionHint(loc string) {
	i := strings.LastIndex(loc, "/")
	if i < 0 {
		return
	}
	// the name without .metadata.json, compression suffix kept
	// (00006-<uuid>.gz), so that stem + ".metadata.json" is the file
	stem := strings.TrimSuffix(loc[i+1:], ".metadata.json")
	hint := loc[:i+1] + VersionHintFile
	if d, ok := c.fs.(*DurableFS); ok {
		// atomic, not durable: a hint lost in a crash is only a hint
		_ = d.ReplaceFile(hint, []byte(stem))
		return
	}
	_ = c.fs.WriteFile(hint, []byte(stem))
}

// CurrentMetadataFile finds the current metadata file of the Iceberg table
// directory dir, without a catalog: through metadata/version-hint.text (a
// version number N for vN.metadata.json, as Hadoop catalogs write it, or a
// file name stem, as writeVersionHint writes it), else the
// highest-numbered metadata file (NNNNN-<uuid> or vN).
func CurrentMetadataFile(fsys iceio.IO, dir string) (string, error) {
	mdir := dir + "/metadata"
	if f, err := fsys.Open(mdir + "/" + VersionHintFile); err == nil {
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
		return "", fmt.Errorf("%s has no %s and cannot be listed; name the metadata file", mdir, VersionHintFile)
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
		if n := listedVersion(d.Name()); n > bestN {
			best, bestN = d.Name(), n
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("no Iceberg table at %s: %w", dir, err)
	}
	if best == "" {
		return "", fmt.Errorf("no Iceberg table at %s: %s holds no metadata file", dir, mdir)
	}
	return mdir + "/" + best, nil
}

// listedVersion is the version of a metadata file name, Hadoop's
// vN[.gz].metadata.json or a catalog's NNNNN-<uuid>.metadata.json
// (metadataVersion), or -1 for any other file.
func listedVersion(name string) int {
	if !strings.HasSuffix(name, ".metadata.json") || name == "" {
		return -1
	}
	if rest, ok := strings.CutPrefix(name, "v"); ok {
		n := strings.TrimSuffix(strings.TrimSuffix(rest, ".metadata.json"), ".gz")
		if n == "" || strings.Trim(n, "0123456789") != "" {
			return -1
		}
		v, err := strconv.Atoi(n)
		if err != nil {
			return -1
		}
		return v
	}
	if name[0] < '0' || name[0] > '9' {
		return -1
	}
	return metadataVersion(name)
}
