package mergeinto

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Result is what a MERGE did.
type Result struct {
	// Count is rows updated + deleted + inserted: what the table changed
	// by, the statement's `count`.
	Count int64
	// Staged reports whether Execute staged a snapshot into the
	// transaction. A merge that changes nothing stages nothing.
	Staged bool
	// Delta, when Staged, describes the staged change by its files, so
	// that a commit that loses the race can be validated against the
	// commits since and staged again on the new head (snapshot.Rebaser).
	Delta *Delta
	// Returning holds the RETURNING rows when Spec.Returning was set
	// (schema ReturningSchema), else nil. The caller releases them.
	Returning       []arrow.RecordBatch
	ReturningSchema *arrow.Schema
	// Metrics are the counters for EXPLAIN ANALYZE.
	Metrics Metrics
	// DeleteFilesWritten counts the position delete files or deletion
	// vectors a merge-on-read Rewrite wrote; DeletionVectors says which.
	DeleteFilesWritten int
	DeletionVectors    bool
}

// Release releases the RETURNING batches.
func (r *Result) Release() {
	if r == nil {
		return
	}
	for _, b := range r.Returning {
		b.Release()
	}
	r.Returning = nil
}

// Metrics count a MERGE's work.
type Metrics struct {
	SourceRows int64 // rows the source produced
	// SourceRowsOutside are source rows whose key lies outside the
	// target's key range (keyrange.go): they skipped the join table.
	SourceRowsOutside int64

	RowsInserted int64
	RowsUpdated  int64
	RowsDeleted  int64
	// RowsCopied are unchanged rows copied into rewritten files: the
	// write amplification of copy-on-write.
	RowsCopied int64
	// RowGroupsCopied are unchanged row groups of rewritten files copied
	// verbatim into new files (their rows count in RowsCopied, their
	// bytes in BytesCopied and BytesWritten).
	RowGroupsCopied int64
	// RowGroupsPatched are row groups of rewritten files whose SET
	// columns (an UPDATE's, or a MERGE's that only updates) were encoded
	// again and the others copied verbatim.
	RowGroupsPatched int64
	// RowGroupsPatchedSparse are the patched row groups whose SET columns
	// were read only to be encoded again, with the updates alone held
	// while the statement read the group (a MERGE whose clauses read no
	// SET column).
	RowGroupsPatchedSparse int64
	// ColumnChunksUnread are column chunks of the row groups a MERGE
	// that only updates read that it did not read at all: columns neither
	// an ON key, a SET column, nor read by a condition or an expression,
	// whose chunks a patch copies as they are.
	ColumnChunksUnread int64
	// RowGroupsSkipped are row groups of candidate files a DELETE or
	// UPDATE did not read: their statistics prove no row matches.
	RowGroupsSkipped int64

	FilesScanned   int64 // data files read (candidates after pruning)
	FilesSkipped   int64 // data files of the snapshot pruning left out
	FilesRewritten int64 // files replaced by a rewrite with rows left
	FilesRemoved   int64 // files dropped from the table (rewritten or emptied)
	FilesAdded     int64 // data files written (rewrites and inserts)

	BytesRead    int64 // data file bytes read, re-reads included
	BytesWritten int64 // data file bytes written
	BytesCopied  int64 // of BytesWritten, those copied without decoding

	// Time per phase.
	BuildTime  time.Duration // drain the source, build the hash table
	PruneTime  time.Duration // plan the candidate files
	ScanTime   time.Duration // read, probe, apply clauses, rewrite
	InsertTime time.Duration // write NOT MATCHED inserts
	StageTime  time.Duration // stage the snapshot into the transaction
}

// Map returns the counters by name, for lake's Result.Metrics() and
// EXPLAIN ANALYZE; times are in nanoseconds.
func (m Metrics) Map() map[string]int64 {
	return map[string]int64{
		"source_rows":                     m.SourceRows,
		"source_rows_outside_target_keys": m.SourceRowsOutside,
		"rows_inserted":                   m.RowsInserted,
		"rows_updated":                    m.RowsUpdated,
		"rows_deleted":                    m.RowsDeleted,
		"rows_copied":                     m.RowsCopied,
		"row_groups_copied":               m.RowGroupsCopied,
		"row_groups_patched":              m.RowGroupsPatched,
		"row_groups_patched_sparse":       m.RowGroupsPatchedSparse,
		"row_groups_skipped":              m.RowGroupsSkipped,
		"column_chunks_unread":            m.ColumnChunksUnread,
		"files_scanned":                   m.FilesScanned,
		"files_skipped":                   m.FilesSkipped,
		"files_rewritten":                 m.FilesRewritten,
		"files_removed":                   m.FilesRemoved,
		"files_added":                     m.FilesAdded,
		"bytes_read":                      m.BytesRead,
		"bytes_written":                   m.BytesWritten,
		"bytes_copied":                    m.BytesCopied,
		"build_ns":                        int64(m.BuildTime),
		"prune_ns":                        int64(m.PruneTime),
		"scan_ns":                         int64(m.ScanTime),
		"insert_ns":                       int64(m.InsertTime),
		"stage_ns":                        int64(m.StageTime),
	}
}

// String renders the metrics on one line for EXPLAIN ANALYZE.
func (m Metrics) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rows: +%d ~%d -%d copied=%d source=%d", m.RowsInserted, m.RowsUpdated, m.RowsDeleted, m.RowsCopied, m.SourceRows)
	if m.SourceRowsOutside > 0 {
		fmt.Fprintf(&b, " (%d outside the target's key range)", m.SourceRowsOutside)
	}
	b.WriteString("; ")
	fmt.Fprintf(&b, "files: scanned=%d skipped=%d rewritten=%d removed=%d added=%d; ", m.FilesScanned, m.FilesSkipped, m.FilesRewritten, m.FilesRemoved, m.FilesAdded)
	fmt.Fprintf(&b, "bytes: read=%d written=%d; ", m.BytesRead, m.BytesWritten)
	if m.RowGroupsCopied+m.RowGroupsPatched > 0 {
		fmt.Fprintf(&b, "row groups copied verbatim: %d, patched: %d", m.RowGroupsCopied, m.RowGroupsPatched)
		if m.RowGroupsPatchedSparse > 0 {
			fmt.Fprintf(&b, " (%d sparse)", m.RowGroupsPatchedSparse)
		}
		fmt.Fprintf(&b, " (%d bytes copied); ", m.BytesCopied)
	}
	if m.RowGroupsSkipped > 0 {
		fmt.Fprintf(&b, "row groups unread (statistics): %d; ", m.RowGroupsSkipped)
	}
	if m.ColumnChunksUnread > 0 {
		fmt.Fprintf(&b, "column chunks unread (no clause reads them): %d; ", m.ColumnChunksUnread)
	}
	r := func(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
	fmt.Fprintf(&b, "time: build=%s prune=%s scan=%s insert=%s stage=%s", r(m.BuildTime), r(m.PruneTime), r(m.ScanTime), r(m.InsertTime), r(m.StageTime))
	return b.String()
}
