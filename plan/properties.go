package plan

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/snapshot"
)

// CheckPropertyName refuses a read.* or write.* table property Iceberg
// does not define, naming the nearest one that it does.
func CheckPropertyName(key string) error {
	if snapshot.KnownProperty(key) {
		return nil
	}
	return fmt.Errorf("table property %q is not an Iceberg read or write property%s", key, didYouMean(key, snapshot.PropertyNames()))
}

// checkUserProperty is CheckPropertyName for a property SQL sets or
// unsets by name: a constraint's is set by its own syntax, which checks
// it (and the rows already there).
func checkUserProperty(key string) error {
	if name, ok := strings.CutPrefix(key, constraintPrefix); ok {
		return fmt.Errorf("table property %q holds constraint %q; use ALTER TABLE … ADD CONSTRAINT or DROP CONSTRAINT %s", key, name, name)
	}
	return CheckPropertyName(key)
}

// trinoProperties maps Trino's Iceberg table property names to Iceberg's.
var trinoProperties = map[string]string{"format_version": "format-version"}

// PartitionTransform is the Iceberg transform of a partition field
// (transform identity, year, month, day, hour, bucket or truncate; param
// the bucket count or width) on column, and the field's default name:
// the column reduced to letters, digits and _ (it becomes a directory
// name in data file paths), with the transform as a suffix.
func PartitionTransform(transform string, param int, column string) (iceberg.Transform, string, error) {
	var b strings.Builder
	for _, r := range column {
		if r < 128 && (r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	base := b.String()
	switch transform {
	case "identity", "":
		return iceberg.IdentityTransform{}, base, nil
	case "year":
		return iceberg.YearTransform{}, base + "_year", nil
	case "month":
		return iceberg.MonthTransform{}, base + "_month", nil
	case "day":
		return iceberg.DayTransform{}, base + "_day", nil
	case "hour":
		return iceberg.HourTransform{}, base + "_hour", nil
	case "bucket":
		return iceberg.BucketTransform{NumBuckets: param}, base + "_bucket", nil
	case "truncate":
		return iceberg.TruncateTransform{Width: param}, base + "_trunc", nil
	}
	return nil, "", fmt.Errorf("unknown partition transform %q", transform)
}
