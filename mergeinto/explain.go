package mergeinto

import (
	"fmt"
	"strings"

	"github.com/skadedb/skade/exec"
)

// Explain renders the statement for EXPLAIN: the merge on one line, its
// clauses, then the source operator tree. With res (EXPLAIN ANALYZE) the
// merge line carries the metrics and the source tree its counters.
func Explain(spec *Spec, res *Result) string {
	var b strings.Builder
	name := spec.Table
	if name == "" {
		name = "target"
	}
	fmt.Fprintf(&b, "MergeInto %s (%s)", name, spec.Mode)
	if spec.Snapshot != nil {
		fmt.Fprintf(&b, " @%d", spec.Snapshot.SnapshotID)
	}
	b.WriteString(" on [")
	for i, k := range spec.Keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "#%d = %s", k.Target, k.Source)
	}
	b.WriteString("]")
	if spec.On != nil {
		fmt.Fprintf(&b, " and %s", spec.On)
	}
	if res != nil {
		fmt.Fprintf(&b, " (count=%d %s)", res.Count, res.Metrics)
	}
	b.WriteString("\n")
	for _, c := range spec.Clauses {
		fmt.Fprintf(&b, "  %s\n", c)
	}
	if len(spec.Returning) > 0 {
		b.WriteString("  RETURNING ")
		for i, e := range spec.Returning {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.String())
		}
		b.WriteString("\n")
	}
	if spec.Source != nil {
		for _, line := range strings.Split(strings.TrimRight(exec.Explain(spec.Source, res != nil), "\n"), "\n") {
			b.WriteString("  " + line + "\n")
		}
	}
	return b.String()
}
