package snapshot

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Table properties skade sets on every table it creates. Each default was
// chosen for a measured reason; a user's WITH (...) property wins.
const (
	// TargetFileSizeBytes is 128 MiB rather than iceberg-go's 512 MiB. An
	// embedded engine rewrites whole files on copy-on-write MERGE, UPDATE
	// and DELETE, so the cost of touching one row is one file: smaller files
	// keep that cost bounded while staying large enough for scan throughput.
	TargetFileSizeBytes = 128 << 20

	// RowGroupLimitRows caps a Parquet row group at 128 Ki rows. iceberg-go
	// only checks the target file size after a row group is flushed, and its
	// default limit is 1,048,576 rows, so below one row group the target
	// size is silently ignored and files never split. A smaller limit makes
	// files roll at the target size, and gives min/max statistics per row
	// group a useful granularity for pruning.
	RowGroupLimitRows = 128 * 1024

	// RowGroupSizeBytes flushes a row group at 32 MiB even if it has fewer
	// rows than RowGroupLimitRows, for wide rows.
	RowGroupSizeBytes = 32 << 20

	// CommitRetries: iceberg-go defaults to 0, so any concurrent writer makes
	// a commit fail. With retries, iceberg-go refreshes the table and
	// replays an append on top of the new head, and Commit validates a
	// MERGE, UPDATE or DELETE against the commits since and restages it
	// (Rebaser) unless one conflicts.
	CommitRetries = 8

	// MetadataPreviousVersionsMax bounds the metadata.json files kept after
	// a commit. Old metadata files are deleted after commit (iceberg-go
	// keeps them all by default, which grows the table directory without
	// bound). A few are kept so that a reader in another process that has
	// just read the catalog pointer still finds its file.
	MetadataPreviousVersionsMax = 4

	// ManifestMinMergeCount: manifest merging is off by default in
	// iceberg-go, so each commit adds one manifest and planning cost grows
	// linearly with the number of commits. Merging once 16 manifests
	// accumulate keeps planning and commit time flat.
	ManifestMinMergeCount = 16
)

// PropCopyRowGroups turns off (with "false") the verbatim copy of the
// unchanged row groups of a file a copy-on-write statement rewrites
// (mergeinto's rgcopy.go). It is on by default; the switch exists to
// compare the two and as an escape hatch.
const PropCopyRowGroups = "skade.write.copy-row-groups"

// CopyRowGroups reports whether p lets copy-on-write copy unchanged row
// groups verbatim.
func CopyRowGroups(p iceberg.Properties) bool {
	v, ok := p[PropCopyRowGroups]
	if !ok {
		return true
	}
	b, err := strconv.ParseBool(v)
	return err != nil || b
}

// Write modes, Iceberg's own names, so Spark and Trino users know them.
const (
	ModeCopyOnWrite = "copy-on-write"
	ModeMergeOnRead = "merge-on-read"

	PropMergeMode  = "write.merge.mode"
	PropUpdateMode = "write.update.mode"
	PropDeleteMode = table.WriteDeleteModeKey
)

// Isolation levels of row-level writes, with Iceberg's names and
// properties (write.merge.isolation-level, write.update.isolation-level,
// write.delete.isolation-level). Both validate a write that lost a commit
// race against what committed meanwhile, file by file: a commit that
// removed a data file the write rewrites or deletes rows of, or that
// added deletes against one, conflicts under both. Serializable, the
// default, also refuses concurrently added data files that may hold rows
// the write would have matched (by partition values and column bounds
// against the write's filter); snapshot isolation lets them through, so
// two MERGEs may both insert the same new key.
const (
	IsolationSerializable = "serializable"
	IsolationSnapshot     = "snapshot"

	PropMergeIsolation  = "write.merge.isolation-level"
	PropUpdateIsolation = "write.update.isolation-level"
	PropDeleteIsolation = "write.delete.isolation-level"
)

// Isolation is the isolation level a table's properties choose for op,
// one of "delete", "update" and "merge" (as WriteMode).
func Isolation(props iceberg.Properties, op string) string {
	if props.Get(IsolationKey(op), IsolationSerializable) == IsolationSnapshot {
		return IsolationSnapshot
	}
	return IsolationSerializable
}

// IsolationKey is the property that sets op's isolation level.
func IsolationKey(op string) string {
	return opProperty(op, PropMergeIsolation, PropUpdateIsolation, PropDeleteIsolation)
}

// opProperty picks the property of op ("merge", "update" or "delete")
// among the three Iceberg keeps per row-level operation; an UPDATE … FROM
// runs as a MERGE and asks for "update".
func opProperty(op, merge, update, del string) string {
	switch op {
	case "delete":
		return del
	case "update":
		return update
	}
	return merge
}

// ZstdLevel is a new table's zstd level (write.parquet.compression-level).
// Level 1 was chosen by measurement (BENCHMARKS.md, "zstd level";
// BenchmarkZstdLevel): writing Parquet took 11% less time than at zstd's
// default level 3 on the MERGE benchmark's rows, whose files came out 5%
// smaller, and 27% less on a wider mix of columns, whose files came out
// 10% larger. Decoding speed hardly depends on the level.
const ZstdLevel = 1

// Defaults returns skade's default properties for a new table.
//
// Dictionary encoding: pqarrow dictionary-encodes every column by default,
// which made writes about 3x slower here for no gain on numeric, timestamp
// and unique columns. It is turned off table-wide and turned back on per
// string column (see DictionaryFor), where repeated values (status, country,
// kind) are common; iceberg-go's cost-based fallback then drops the
// dictionary on a string column whose values turn out to be unique.
func Defaults() iceberg.Properties {
	return iceberg.Properties{
		table.PropertyFormatVersion:               "2",
		table.WriteTargetFileSizeBytesKey:         strconv.Itoa(TargetFileSizeBytes),
		table.ParquetRowGroupLimitKey:             strconv.Itoa(RowGroupLimitRows),
		table.ParquetRowGroupSizeBytesKey:         strconv.Itoa(RowGroupSizeBytes),
		table.ParquetCompressionKey:               "zstd",
		table.ParquetCompressionLevelKey:          strconv.Itoa(ZstdLevel),
		"parquet.enable.dictionary":               "false",
		table.CommitNumRetriesKey:                 strconv.Itoa(CommitRetries),
		table.CommitMinRetryWaitMsKey:             "5",
		table.CommitMaxRetryWaitMsKey:             "500",
		table.ManifestMergeEnabledKey:             "true",
		table.ManifestMinMergeCountKey:            strconv.Itoa(ManifestMinMergeCount),
		table.MetadataDeleteAfterCommitEnabledKey: "true",
		table.MetadataPreviousVersionsMaxKey:      strconv.Itoa(MetadataPreviousVersionsMax),
		PropMergeMode:                             ModeCopyOnWrite,
		PropUpdateMode:                            ModeCopyOnWrite,
		PropDeleteMode:                            ModeCopyOnWrite,
	}
}

// DictionaryFor returns the property that enables dictionary encoding for
// one Parquet column.
func DictionaryFor(column string) (key, value string) {
	return "write.parquet.dict-encoding-enabled.column." + column, "true"
}

// Merge returns skade's defaults overlaid with the user's properties,
// validated. Unknown keys are kept: Iceberg tables carry arbitrary
// properties.
func Merge(user iceberg.Properties) (iceberg.Properties, error) {
	out := Defaults()
	for k, v := range user {
		out[k] = v
	}
	if _, level := user[table.ParquetCompressionLevelKey]; !level && out[table.ParquetCompressionKey] != "zstd" {
		// the default level is zstd's; another codec keeps its own
		delete(out, table.ParquetCompressionLevelKey)
	}
	if err := Validate(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Validate checks the properties skade interprets.
func Validate(p iceberg.Properties) error {
	if v, ok := p[table.PropertyFormatVersion]; ok && v != "2" && v != "3" {
		return fmt.Errorf("table property %s = %q is not supported; use 2 (the default) or 3", table.PropertyFormatVersion, v)
	}
	for _, k := range []string{PropMergeMode, PropUpdateMode, PropDeleteMode} {
		if v, ok := p[k]; ok && v != ModeCopyOnWrite && v != ModeMergeOnRead {
			return fmt.Errorf("table property %s = %q is not a write mode; use %q or %q", k, v, ModeCopyOnWrite, ModeMergeOnRead)
		}
	}
	for _, k := range []string{PropMergeIsolation, PropUpdateIsolation, PropDeleteIsolation} {
		if v, ok := p[k]; ok && v != IsolationSerializable && v != IsolationSnapshot {
			return fmt.Errorf("table property %s = %q is not an isolation level; use %q (the default) or %q", k, v, IsolationSerializable, IsolationSnapshot)
		}
	}
	if err := validateCompression(p, table.ParquetCompressionKey, table.ParquetCompressionLevelKey); err != nil {
		return err
	}
	if err := validateCompression(p, "write.delete.parquet.compression-codec", "write.delete.parquet.compression-level"); err != nil {
		return err
	}
	if v, ok := p[PropCopyRowGroups]; ok {
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("table property %s = %q must be true or false", PropCopyRowGroups, v)
		}
	}
	for _, k := range []string{table.WriteTargetFileSizeBytesKey, table.ParquetRowGroupLimitKey, table.ParquetRowGroupSizeBytesKey, table.CommitNumRetriesKey} {
		if v, ok := p[k]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || (n == 0 && k != table.CommitNumRetriesKey) {
				return fmt.Errorf("table property %s = %q must be a positive integer", k, v)
			}
		}
	}
	return nil
}

// parquetCodec is a Parquet codec the writer has: arrow-go's, and the
// range of its write.parquet.compression-level (none: it takes no level,
// and a level set is ignored, as Iceberg's Java writer does).
type parquetCodec struct {
	codec  compress.Compression
	levels [2]int
}

// parquetCodecs are the codecs by their property names.
var parquetCodecs = map[string]parquetCodec{
	"zstd":         {compress.Codecs.Zstd, [2]int{1, 22}},
	"gzip":         {compress.Codecs.Gzip, [2]int{1, 9}},
	"brotli":       {compress.Codecs.Brotli, [2]int{0, 11}},
	"snappy":       {codec: compress.Codecs.Snappy},
	"lz4":          {codec: compress.Codecs.Lz4},
	"lz4raw":       {codec: compress.Codecs.Lz4Raw},
	"uncompressed": {codec: compress.Codecs.Uncompressed},
}

// validateCompression checks a codec property and its level: iceberg-go's
// writer would silently write an unknown codec uncompressed and ignore a
// level that is not a number.
func validateCompression(p iceberg.Properties, codecKey, levelKey string) error {
	codec, ok := p[codecKey]
	if !ok {
		codec = "zstd" // iceberg-go's default
	}
	pc, known := parquetCodecs[codec]
	levels := pc.levels
	if !known {
		names := make([]string, 0, len(parquetCodecs))
		for n := range parquetCodecs {
			names = append(names, n)
		}
		slices.Sort(names)
		return fmt.Errorf("table property %s = %q is not a Parquet codec skade writes; use one of %s (in lower case)", codecKey, p[codecKey], strings.Join(names, ", "))
	}
	v, ok := p[levelKey]
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("table property %s = %q must be an integer", levelKey, v)
	}
	if levels != ([2]int{}) && (n < levels[0] || n > levels[1]) && n != -1 {
		return fmt.Errorf("table property %s = %q is out of range for %s; use %d to %d", levelKey, v, codec, levels[0], levels[1])
	}
	return nil
}

// Property keys of delete files' Parquet compression (Iceberg's): each
// falls back to the data files' own when unset.
const (
	PropDeleteCompression      = "write.delete.parquet.compression-codec"
	PropDeleteCompressionLevel = "write.delete.parquet.compression-level"
)

// ParquetCompression returns the codec and level of a table's data files
// (write.parquet.compression-codec and -level; zstd at its default level
// when unset), or, with deletes, of its delete files: Iceberg's
// write.delete.parquet.compression-codec and -level, each falling back to
// the data files' when unset, as Iceberg's Java writer does. A level of
// the data files that the delete files' codec does not take is left
// out. Level -1 is the codec's default. Validate has checked the values;
// one it would refuse gives the default.
func ParquetCompression(p iceberg.Properties, deletes bool) (compress.Compression, int) {
	name := p.Get(table.ParquetCompressionKey, "zstd")
	level, levelSet := p[table.ParquetCompressionLevelKey]
	if deletes {
		if v, ok := p[PropDeleteCompression]; ok {
			name = v
		}
		if v, ok := p[PropDeleteCompressionLevel]; ok {
			level, levelSet = v, true
		}
	}
	name = strings.ToLower(name)
	pc, ok := parquetCodecs[name]
	if !ok {
		return compress.Codecs.Zstd, -1
	}
	n, err := strconv.Atoi(level)
	if r := pc.levels; !levelSet || err != nil || r == ([2]int{}) || n < r[0] || n > r[1] {
		return pc.codec, -1
	}
	return pc.codec, n
}
