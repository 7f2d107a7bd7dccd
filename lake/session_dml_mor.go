package lake

import (
	"fmt"
	"strings"

	"github.com/skadedb/skade/mergeinto"
	"github.com/skadedb/skade/plan"
	"github.com/skadedb/skade/snapshot"
)

// Merge-on-read UPDATE and DELETE (write.update.mode, write.delete.mode =
// merge-on-read) run in mergeinto.Rewrite's merge-on-read mode: each
// candidate file is read once with its deletes applied; the rows the
// statement matches get position deletes (deletion vectors on format
// version 3), and an UPDATE's new row versions go to new data files. One
// row delta commits it; no data file is rewritten. This file keeps the
// mode choice and the EXPLAIN texts.

// mergeOnRead reports whether the table's write mode for op is
// merge-on-read.
func mergeOnRead(tbl *Table, update bool) bool {
	op := "delete"
	if update {
		op = "update"
	}
	return snapshot.WriteMode(tbl.Iceberg().Properties(), op) == snapshot.ModeMergeOnRead
}

// morSummary is the EXPLAIN ANALYZE text of a merge-on-read UPDATE or
// DELETE.
func morSummary(op, name string, res *mergeinto.Result, total int64, planned, dropped int) string {
	kind := "position delete files"
	if res.DeletionVectors {
		kind = "deletion vectors"
	}
	drops := ""
	if dropped > 0 {
		drops = fmt.Sprintf("%d dropped unread, ", dropped)
	}
	return fmt.Sprintf("%s %s (merge-on-read): %d rows\n  data files: %d in the snapshot, %d skipped by pruning, %s%d read, 0 rewritten, %d removed, %d added\n  %s written: %d\n",
		strings.ToUpper(op), name, res.Count, total, total-int64(planned), drops, planned-dropped, res.Metrics.FilesRemoved, res.Metrics.FilesAdded, kind, res.DeleteFilesWritten)
}

// morExplain renders EXPLAIN of a merge-on-read UPDATE or DELETE.
func morExplain(op string, tbl *Table, rw *plan.Rewrite, total int64, planned, dropped int) string {
	kind := "position delete files"
	if tbl.Iceberg().Metadata().Version() >= 3 {
		kind = "deletion vectors"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (merge-on-read: %s, no file rewritten)\n", strings.ToUpper(op), tbl.Name(), kind)
	if rw.Pushed != nil {
		fmt.Fprintf(&b, "  pruning filter: %s\n", rw.Pushed)
	}
	drops := ""
	if dropped > 0 {
		drops = fmt.Sprintf("%d dropped unread (statistics prove every row matches), ", dropped)
	}
	fmt.Fprintf(&b, "  data files: %d in the snapshot, %d skipped by pruning, %s%d to read\n", total, total-int64(planned), drops, planned-dropped)
	b.WriteString("  per file:\n")
	for _, l := range strings.Split(strings.TrimRight(rw.Explain(), "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}
