package mergeinto_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/mergeinto"
)

// lineageRows renders the table as sorted "id|status|amount|_row_id|seq"
// lines, read by iceberg-go's scan with row lineage.
func lineageRows(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	return stagedRows(t, tbl.Scan(table.WithRowLineage()))
}

// A copy-on-write MERGE into a format-version 3 table keeps row lineage:
// copied rows keep _row_id and sequence number, updated rows keep _row_id
// and take the MERGE's sequence number, inserted rows get new ids. The
// table was upgraded from version 2: its first file gets ids when the
// first version-3 manifest list is written (iceberg-go assigns the
// carried manifest a first_row_id), after the appended file's.
func TestCopyOnWriteMergeKeepsRowLineage(t *testing.T) {
	f := basic(t) // ids 1..3, one file, written at version 2
	txn := f.table().NewTransaction()
	if err := txn.UpgradeFormatVersion(3); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	f.appendRows([]any{4, "d", 40}, []any{5, "e", 50}) // seq 2, ids 0 and 1
	got := lineageRows(t, f.table())
	wantRows(t, got, "1|a|10|2|1", "2|b|20|3|1", "3|c|30|4|1", "4|d|40|0|2", "5|e|50|1|2")

	// seq 3: update 5, insert 9; the file of 4 and 5 is rewritten
	f.mustMerge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{5, "E", 55}, []any{9, "i", 90}), Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: upd(t)}, {Kind: mergeinto.NotMatchedByTarget, Action: ins(t)}}})
	got = lineageRows(t, f.table())
	if len(got) != 6 {
		t.Fatalf("rows %v", got)
	}
	wantRows(t, got[:5], "1|a|10|2|1", "2|b|20|3|1", "3|c|30|4|1", "4|d|40|0|2", "5|E|55|1|3")
	// the inserted row's id is past every id before the MERGE
	if p := strings.Split(got[5], "|"); len(p) != 5 || p[0] != "9" || p[4] != "3" || atoi(p[3]) < 5 {
		t.Errorf("inserted row %q, want a new _row_id (5 or more) and sequence number 3", got[5])
	}

	// seq 4: delete 2 from the version-2 file: 1 and 3 are copied with
	// their ids and sequence number
	f.mustMerge(&mergeinto.Spec{Source: values(t, sourceSchema, []any{2, "x", 0}), Keys: onID(),
		Clauses: []mergeinto.Clause{{Kind: mergeinto.Matched, Action: mergeinto.Delete()}}})
	got = lineageRows(t, f.table())
	ids := map[string]bool{}
	for _, r := range got {
		p := strings.Split(r, "|")
		if p[3] == "NULL" || ids[p[3]] {
			t.Errorf("row %q: a NULL or repeated _row_id in %v", r, got)
		}
		ids[p[3]] = true
	}
	if len(got) != 5 || got[0] != "1|a|10|2|1" || got[1] != "3|c|30|4|1" || got[2] != "4|d|40|0|2" || got[3] != "5|E|55|1|3" {
		t.Errorf("after the delete: %v", got)
	}
}

// atoi is s as a number, -1 when it is none (NULL).
func atoi(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1
	}
	return n
}
