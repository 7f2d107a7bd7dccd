package lake_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/skadedb/skade/scan"
)

// A MERGE reads the BIGINT keys of files without NULLs in them page by
// page (scan.ReadPlain; the probe of a copy-on-write MERGE, the whole
// read of a merge-on-read one). The same statements with page-by-page
// reads turned off must leave the same rows: v2 and v3, partitioned and
// not, both write modes, row groups of 700 rows, a file with a NULL key
// (read through the scan), and a second MERGE over files that carry
// deletes.
func TestMergePlainReads(t *testing.T) {
	paged, _ := countPlainReads(t)
	for _, version := range []string{"2", "3"} {
		for _, part := range []string{"", " PARTITIONED BY (bucket(3, id))"} {
			for _, mode := range []string{"copy-on-write", "merge-on-read"} {
				lk := sqlLake(t)
				s := lk.Session()
				what := fmt.Sprintf("v%s%s, %s", version, part, mode)
				for _, name := range []string{"p", "q"} {
					mustExec(t, s, fmt.Sprintf(`CREATE TABLE %[1]s (id BIGINT, n INT, x DOUBLE, ts TIMESTAMP, s VARCHAR)%[2]s
						WITH ('format-version' = '%[3]s', 'write.parquet.row-group-limit' = '700', 'write.merge.mode' = '%[4]s');
						INSERT INTO %[1]s SELECT i, CAST(i %% 1000 AS INT), i * 1.25, TIMESTAMP '2026-01-01 00:00:00' + i * INTERVAL '1 second', 'v' || (i %% 5) FROM range(0, 5000) r(i);
						INSERT INTO %[1]s SELECT CASE WHEN i = 5100 THEN NULL ELSE i END, CAST(i %% 7 AS INT), i * 0.5, TIMESTAMP '2025-06-30 12:00:00', 'w' FROM range(5000, 6000) r(i)`,
						name, part, version, mode))
				}
				for round, src := range []string{
					"SELECT i * 7 AS id, CAST(i AS INT) AS n, i * 0.25 AS x FROM range(0, 900) r(i)",
					"SELECT i * 11 + 1 AS id, CAST(-i AS INT) AS n, -1.0 * i AS x FROM range(0, 700) r(i)",
				} {
					for _, name := range []string{"p", "q"} {
						scan.TestPlainReadOff.Store(name == "q")
						paged.Store(0)
						mustExec(t, s, fmt.Sprintf(`MERGE INTO %s t USING (%s) u ON t.id = u.id
							WHEN MATCHED AND u.n %% 5 = 0 THEN DELETE
							WHEN MATCHED THEN UPDATE SET x = u.x, n = u.n, ts = TIMESTAMP '2027-01-01 00:00:00', s = 'upd'
							WHEN NOT MATCHED THEN INSERT (id, n, x, s) VALUES (u.id, u.n, u.x, 'new')`, name, src))
						scan.TestPlainReadOff.Store(false)
						switch p := paged.Load(); {
						case name == "q" && p != 0:
							t.Fatalf("%s, round %d: read page by page with plain reads off", what, round)
						case name == "p" && p == 0 && version != "3":
							// a v3 MERGE reads every column with the
							// keys (row lineage), strings among them
							t.Fatalf("%s, round %d: no row group read page by page", what, round)
						}
					}
					got := query(t, s, "SELECT id, n, x, ts, s FROM p ORDER BY id NULLS FIRST")
					want := query(t, s, "SELECT id, n, x, ts, s FROM q ORDER BY id NULLS FIRST")
					if !slices.Equal(got, want) {
						t.Fatalf("%s, round %d: %d rows against %d read through the scan", what, round, len(got), len(want))
					}
					if len(got) < 5000 {
						t.Fatalf("%s, round %d: %d rows", what, round, len(got))
					}
				}
			}
		}
	}
}
