package plan

import (
	"fmt"

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

// trinoProperties maps Trino's Iceberg table property names to Iceberg's.
var trinoProperties = map[string]string{"format_version": "format-version"}
