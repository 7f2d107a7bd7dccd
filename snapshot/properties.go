package snapshot

import (
	"slices"
	"strings"
)

// knownProperties are the read.* and write.* table properties Iceberg
// defines (the table spec's configuration page and iceberg-go's own),
// the names under those prefixes a table may set. A name outside them is
// almost always a typo that would silently change nothing.
var knownProperties = []string{
	"read.split.target-size",
	"read.split.metadata-target-size",
	"read.split.planning-lookback",
	"read.split.open-file-cost",
	"read.parquet.vectorization.enabled",
	"read.parquet.vectorization.batch-size",
	"read.parquet.batch-size",
	"read.orc.vectorization.enabled",
	"read.orc.vectorization.batch-size",
	"read.manifest-list-cache.enabled",
	"write.format.default",
	"write.delete.format.default",
	"write.parquet.row-group-size-bytes",
	"write.parquet.row-group-limit",
	"write.parquet.page-size-bytes",
	"write.parquet.page-row-limit",
	"write.parquet.page-version",
	"write.parquet.dict-size-bytes",
	"write.parquet.compression-codec",
	"write.parquet.compression-level",
	"write.parquet.bloom-filter-max-bytes",
	"write.parquet.shred-variants",
	"write.parquet.variant-inference-buffer-size",
	"write.delete.parquet.row-group-size-bytes",
	"write.delete.parquet.page-size-bytes",
	"write.delete.parquet.page-row-limit",
	"write.delete.parquet.dict-size-bytes",
	"write.delete.parquet.compression-codec",
	"write.delete.parquet.compression-level",
	"write.avro.compression-codec",
	"write.avro.compression-level",
	"write.orc.stripe-size-bytes",
	"write.orc.block-size-bytes",
	"write.orc.compression-codec",
	"write.orc.compression-strategy",
	"write.orc.bloom.filter.columns",
	"write.orc.bloom.filter.fpp",
	"write.location-provider.impl",
	"write.metadata.compression-codec",
	"write.metadata.metrics.max-inferred-column-defaults",
	"write.metadata.metrics.default",
	"write.metadata.delete-after-commit.enabled",
	"write.metadata.previous-versions-max",
	"write.metadata.path",
	"write.data.path",
	"write.object-storage.enabled",
	"write.object-storage.partitioned-paths",
	"write.target-file-size-bytes",
	"write.delete.target-file-size-bytes",
	"write.distribution-mode",
	"write.delete.distribution-mode",
	"write.update.distribution-mode",
	"write.merge.distribution-mode",
	"write.delete.granularity",
	"write.wap.enabled",
	"write.summary.partition-limit",
	"write.spark.fanout.enabled",
	"write.spark.accept-any-schema",
	PropDeleteMode,
	PropUpdateMode,
	PropMergeMode,
	PropDeleteIsolation,
	PropUpdateIsolation,
	PropMergeIsolation,
}

// columnProperties are the properties that end in a column name.
var columnProperties = []string{
	"write.parquet.bloom-filter-enabled.column.",
	"write.parquet.bloom-filter-fpp.column.",
	"write.parquet.dict-encoding-enabled.column.",
	"write.metadata.metrics.column.",
}

// KnownProperty reports whether key may be set on a table: any name
// outside the read. and write. families, and within them the names
// Iceberg defines.
func KnownProperty(key string) bool {
	if !strings.HasPrefix(key, "read.") && !strings.HasPrefix(key, "write.") {
		return true
	}
	if slices.Contains(knownProperties, key) {
		return true
	}
	for _, p := range columnProperties {
		if rest, ok := strings.CutPrefix(key, p); ok && rest != "" {
			return true
		}
	}
	return false
}

// PropertyNames are the read.* and write.* names KnownProperty accepts
// (the column-suffixed ones as their prefixes), for suggestions.
func PropertyNames() []string {
	return append(slices.Clone(knownProperties), columnProperties...)
}
