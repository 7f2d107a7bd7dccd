package lake_test

import (
	"slices"
	"testing"
)

// Joins and a MERGE whose build side holds 300,000 integer keys in a few
// narrow ranges (clusters of 1,000 ids a million apart, and negative
// ones): large enough for the sealed table's filter, narrow enough for
// the dense one. Each answer is checked against the same query keyed by
// the ids as text, which no dense filter serves.
func TestLargeJoinDenseKeys(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, `
CREATE TABLE b AS SELECT (i % 1000) + (i / 1000) * 1000000 - 5000000 AS k, i AS v FROM range(0, 300000) r(i);
CREATE TABLE p AS SELECT (i % 1500) + (i / 1500) * 1000000 - 5000000 AS k, i AS w FROM range(0, 200000) r(i)
  UNION ALL SELECT NULL AS k, -1 AS w;
CREATE TABLE tb AS SELECT CAST(k AS TEXT) AS k, v FROM b;
CREATE TABLE tp AS SELECT CAST(k AS TEXT) AS k, w FROM p`)
	for _, q := range [][2]string{
		{`SELECT count(*), sum(v), sum(w) FROM p JOIN b ON p.k = b.k`,
			`SELECT count(*), sum(v), sum(w) FROM tp JOIN tb ON tp.k = tb.k`},
		{`SELECT count(*), count(v), sum(w) FROM p LEFT JOIN b ON p.k = b.k`,
			`SELECT count(*), count(v), sum(w) FROM tp LEFT JOIN tb ON tp.k = tb.k`},
		{`SELECT count(*) FROM p WHERE k IN (SELECT k FROM b)`,
			`SELECT count(*) FROM tp WHERE k IN (SELECT k FROM tb)`},
		{`SELECT count(*) FROM p WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = p.k)`,
			`SELECT count(*) FROM tp WHERE NOT EXISTS (SELECT 1 FROM tb WHERE tb.k = tp.k)`},
	} {
		got := query(t, s, q[0])
		want := query(t, s, q[1])
		if !slices.Equal(got, want) || len(got) != 1 || got[0] == "0" || got[0][0] == '0' {
			t.Errorf("%s: %v, keyed by text %v", q[0], got, want)
		}
	}
	// the MERGE's probe from the column: b is the source
	mustExec(t, s, `
CREATE TABLE tgt AS SELECT k, w FROM p;
CREATE TABLE ttgt AS SELECT k, w FROM tp;
MERGE INTO tgt USING b ON tgt.k = b.k WHEN MATCHED THEN UPDATE SET w = b.v WHEN NOT MATCHED THEN INSERT VALUES (b.k, -2);
MERGE INTO ttgt USING tb ON ttgt.k = tb.k WHEN MATCHED THEN UPDATE SET w = tb.v WHEN NOT MATCHED THEN INSERT VALUES (tb.k, -2)`)
	got := query(t, s, `SELECT count(*), sum(w), count(k), sum(CASE WHEN w = -2 THEN 1 ELSE 0 END) FROM tgt`)
	want := query(t, s, `SELECT count(*), sum(w), count(k), sum(CASE WHEN w = -2 THEN 1 ELSE 0 END) FROM ttgt`)
	if !slices.Equal(got, want) {
		t.Errorf("MERGE: %v, keyed by text %v", got, want)
	}
}
