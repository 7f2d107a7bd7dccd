package lake

import (
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// mislabeled reports whether a data file's partition tuple disagrees with
// its own rows, as its column bounds tell: a partition field that takes a
// string column as it is (identity) or truncated must agree with the
// file's lower bound of that column (both are prefixes of the rows'
// value; Iceberg truncates string bounds to 16 characters by default).
//
// Writes before session 22's fix could record a garbage tuple for a
// table partitioned on a string (scan.StringPartitionSources): queries
// filtering on the partition then pruned the file away. Compaction
// rewrites every mislabeled file, and the rewrite takes the tuple from
// the rows. A file without bounds for the column cannot be judged and is
// taken as it is.
func mislabeled(meta table.Metadata, f iceberg.DataFile) bool {
	if f.ContentType() != iceberg.EntryContentData {
		return false
	}
	spec := meta.PartitionSpecByID(int(f.SpecID()))
	if spec == nil {
		return false
	}
	part := f.Partition()
	lower := f.LowerBoundValues()
	schema := meta.CurrentSchema()
	for _, pf := range spec.Fields() {
		if len(pf.SourceIDs) != 1 {
			continue
		}
		switch pf.Transform.(type) {
		case iceberg.IdentityTransform, iceberg.TruncateTransform:
		default:
			continue
		}
		src, ok := schema.FindFieldByID(pf.SourceIDs[0])
		if !ok || !src.Type.Equals(iceberg.PrimitiveTypes.String) {
			continue
		}
		pv, ok := part[pf.FieldID].(string)
		lo, has := lower[pf.SourceIDs[0]]
		if !ok || !has {
			continue // a NULL partition, or no bound to judge by
		}
		if b := string(lo); !strings.HasPrefix(pv, b) && !strings.HasPrefix(b, pv) {
			return true
		}
	}
	return false
}
