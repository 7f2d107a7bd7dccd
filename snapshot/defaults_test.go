package snapshot_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/snapshot"
)

func TestMergeKeepsUserPropertiesAndValidates(t *testing.T) {
	p, err := snapshot.Merge(iceberg.Properties{"format-version": "3", "write.merge.mode": "merge-on-read", "custom.key": "x"})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"format-version":                  "3",
		"write.merge.mode":                "merge-on-read",
		"custom.key":                      "x",
		"write.parquet.row-group-limit":   "131072",
		"commit.manifest-merge.enabled":   "true",
		"commit.retry.num-retries":        "8",
		"write.parquet.compression-codec": "zstd",
		"write.parquet.compression-level": "1",
	} {
		if p[k] != want {
			t.Errorf("%s = %q, want %q", k, p[k], want)
		}
	}
	cases := map[string]iceberg.Properties{
		`table property format-version = "1" is not supported; use 2 (the default) or 3`:                                                                                                      {"format-version": "1"},
		`table property write.update.mode = "fast" is not a write mode; use "copy-on-write" or "merge-on-read"`:                                                                               {"write.update.mode": "fast"},
		`table property write.target-file-size-bytes = "0" must be a positive integer`:                                                                                                        {"write.target-file-size-bytes": "0"},
		`table property write.parquet.row-group-limit = "lots" must be a positive integer`:                                                                                                    {"write.parquet.row-group-limit": "lots"},
		`table property write.parquet.compression-codec = "ZSTD" is not a Parquet codec skade writes; use one of brotli, gzip, lz4, lz4raw, snappy, uncompressed, zstd (in lower case)`:       {"write.parquet.compression-codec": "ZSTD"},
		`table property write.delete.parquet.compression-codec = "lzo" is not a Parquet codec skade writes; use one of brotli, gzip, lz4, lz4raw, snappy, uncompressed, zstd (in lower case)`: {"write.delete.parquet.compression-codec": "lzo"},
		`table property write.parquet.compression-level = "fast" must be an integer`:                                                                                                          {"write.parquet.compression-level": "fast"},
		`table property write.parquet.compression-level = "23" is out of range for zstd; use 1 to 22`:                                                                                         {"write.parquet.compression-level": "23"},
		`table property write.parquet.compression-level = "10" is out of range for gzip; use 1 to 9`:                                                                                          {"write.parquet.compression-codec": "gzip", "write.parquet.compression-level": "10"},
	}
	// another codec keeps its own default level; a level the user set stays
	for props, level := range map[*iceberg.Properties]string{
		{"write.parquet.compression-codec": "gzip"}:                                          "",
		{"write.parquet.compression-codec": "snappy"}:                                        "",
		{"write.parquet.compression-codec": "gzip", "write.parquet.compression-level": "9"}:  "9",
		{"write.parquet.compression-codec": "zstd", "write.parquet.compression-level": "19"}: "19",
	} {
		p, err := snapshot.Merge(*props)
		if err != nil {
			t.Fatal(err)
		}
		if p["write.parquet.compression-level"] != level {
			t.Errorf("Merge(%v): level %q, want %q", *props, p["write.parquet.compression-level"], level)
		}
	}
	for want, props := range cases {
		_, err := snapshot.Merge(props)
		if err == nil || err.Error() != want {
			t.Errorf("Merge(%v): got %v, want %q", props, err, want)
		}
	}
}

func TestNormalizePath(t *testing.T) {
	for in, want := range map[string]string{
		"file:///a/b/../c.parquet": "/a/c.parquet",
		"/a//b/c.avro":             "/a/b/c.avro",
	} {
		if got := snapshot.NormalizePath(in); got != want {
			t.Errorf("NormalizePath(%q) = %q, want %q", in, got, want)
		}
	}
	s := snapshot.FileSet{}
	s.Add("file:///x/y.parquet")
	if !s.Has("/x/y.parquet") || s.Has("/x/z.parquet") {
		t.Fatal("FileSet does not compare normalized paths")
	}
}

// Data and delete files' codec and level: the delete properties fall
// back one by one to the data files', and a level the codec does not
// take is the codec's default.
func TestParquetCompression(t *testing.T) {
	zstd, gzip, snappy := compress.Codecs.Zstd, compress.Codecs.Gzip, compress.Codecs.Snappy
	for _, c := range []struct {
		props       iceberg.Properties
		deletes     bool
		codec       compress.Compression
		level       int
		description string
	}{
		{iceberg.Properties{}, false, zstd, -1, "nothing set"},
		{iceberg.Properties{}, true, zstd, -1, "nothing set, deletes"},
		{iceberg.Properties{"write.parquet.compression-codec": "zstd", "write.parquet.compression-level": "1"}, false, zstd, 1, "skade's defaults"},
		{iceberg.Properties{"write.parquet.compression-codec": "zstd", "write.parquet.compression-level": "1"}, true, zstd, 1, "skade's defaults, deletes"},
		{iceberg.Properties{"write.parquet.compression-codec": "gzip", "write.parquet.compression-level": "7"}, true, gzip, 7, "deletes take the data files' codec and level"},
		{iceberg.Properties{"write.parquet.compression-codec": "zstd", "write.parquet.compression-level": "3", "write.delete.parquet.compression-codec": "snappy"}, true, snappy, -1, "a codec without levels"},
		{iceberg.Properties{"write.parquet.compression-codec": "zstd", "write.parquet.compression-level": "15", "write.delete.parquet.compression-codec": "gzip"}, true, gzip, -1, "the data level out of the delete codec's range"},
		{iceberg.Properties{"write.parquet.compression-codec": "zstd", "write.parquet.compression-level": "15", "write.delete.parquet.compression-codec": "gzip"}, false, zstd, 15, "data files keep their own"},
		{iceberg.Properties{"write.parquet.compression-level": "2", "write.delete.parquet.compression-level": "9"}, true, zstd, 9, "a delete level only"},
		{iceberg.Properties{"write.parquet.compression-codec": "ZSTD", "write.parquet.compression-level": "4"}, false, zstd, 4, "another writer's upper case"},
		{iceberg.Properties{"write.parquet.compression-codec": "lzo"}, false, zstd, -1, "an unknown codec"},
	} {
		codec, level := snapshot.ParquetCompression(c.props, c.deletes)
		if codec != c.codec || level != c.level {
			t.Errorf("%s: got %s level %d, want %s level %d", c.description, codec, level, c.codec, c.level)
		}
	}
}
