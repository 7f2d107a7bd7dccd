package snapshot_test

import (
	"testing"

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
