package lake_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestCopyOnWriteSurvivesSchemaChanges interleaves random schema changes
// (ADD, DROP, RENAME, widening INT to BIGINT and REAL to DOUBLE) with
// random copy-on-write MERGEs, UPDATEs and DELETEs on a table that copies
// and patches row groups and on its twin that rewrites rows whole. Files
// written before a change keep the old layout (a dropped column, an INT
// where the schema says BIGINT, a column missing), which is where row-
// group copies and patches meet it: after DROP COLUMN every such statement
// failed until session 31. After every step both tables must give the
// same rows. -long runs 30 sequences instead of 8.
func TestCopyOnWriteSurvivesSchemaChanges(t *testing.T) {
	sequences := 8
	if *longTests {
		sequences = 30
	}
	if testing.Short() {
		sequences = 3
	}
	type col struct{ name, typ string }
	for seq := range sequences {
		t.Run(fmt.Sprint(seq), func(t *testing.T) {
			r := rand.New(rand.NewPCG(3131, uint64(seq)))
			lk, _ := openLake(t)
			s := lk.Session()
			cols := []col{{"a", "INT"}, {"b", "REAL"}, {"c", "TEXT"}, {"d", "TIMESTAMP"}, {"e", "BIGINT"}}
			part := ""
			if seq%2 == 1 {
				part = "PARTITIONED BY (bucket(3, id))"
			}
			twins(t, s, `CREATE TABLE %[1]s (id BIGINT, a INT, b REAL, c TEXT, d TIMESTAMP, e BIGINT) `+part+` WITH ('write.parquet.row-group-limit' = '700'%[2]s)`)
			insert := func(lo, hi int) {
				var vals []string
				for _, c := range cols {
					vals = append(vals, valueOf(c.typ, "i"))
				}
				twins(t, s, fmt.Sprintf("INSERT INTO %%[1]s (id, %s) SELECT i, %s FROM range(%d, %d) r(i) -- %%[2]s",
					strings.Join(names(cols, func(c col) string { return c.name }), ", "), strings.ReplaceAll(strings.Join(vals, ", "), "%", "%%"), lo, hi))
			}
			insert(0, 3000)
			next, added := 3000, 0
			for step := range 8 {
				var stmt string // a format of the table's name
				switch k := r.IntN(9); {
				case k == 0 && len(cols) > 1:
					i := r.IntN(len(cols))
					stmt = "ALTER TABLE %s DROP COLUMN " + cols[i].name
					cols = slices.Delete(cols, i, i+1)
				case k == 1:
					added++
					c := col{fmt.Sprintf("n%d", added), []string{"INT", "TEXT", "DOUBLE", "TIMESTAMP"}[r.IntN(4)]}
					stmt = "ALTER TABLE %s ADD COLUMN " + c.name + " " + c.typ
					cols = append(cols, c)
				case k == 2:
					i := r.IntN(len(cols))
					to := cols[i].name + "r"
					stmt = "ALTER TABLE %s RENAME COLUMN " + cols[i].name + " TO " + to
					cols[i].name = to
				case k == 3:
					i := slices.IndexFunc(cols, func(c col) bool { return c.typ == "INT" || c.typ == "REAL" })
					if i < 0 {
						continue
					}
					wide := map[string]string{"INT": "BIGINT", "REAL": "DOUBLE"}[cols[i].typ]
					stmt = "ALTER TABLE %s ALTER COLUMN " + cols[i].name + " TYPE " + wide
					cols[i].typ = wide
				case k == 4:
					insert(next, next+500)
					next += 500
					continue
				default:
					stmt = randomWrite(r, cols[r.IntN(len(cols))], cols[r.IntN(len(cols))], next)
				}
				for _, tbl := range []string{"a", "b"} {
					mustExec(t, s, strings.ReplaceAll(stmt, "%s", tbl))
				}
				twinsAgree(t, s, fmt.Sprintf("step %d: %s", step, stmt), "SELECT * FROM %s ORDER BY id")
			}
		})
	}
}

func names[T any](xs []T, f func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// valueOf is a value of type typ computed from the BIGINT expression x.
func valueOf(typ, x string) string {
	switch typ {
	case "INT":
		return "(" + x + " % 1000)::int"
	case "BIGINT":
		return x + " * 3"
	case "REAL":
		return "(" + x + " * 0.25)::real"
	case "DOUBLE":
		return x + " * 0.5"
	case "TEXT":
		return "'t' || (" + x + " % 97)"
	case "TIMESTAMP":
		return "TIMESTAMP '2026-01-01' + " + x + " * INTERVAL '1 minute'"
	}
	panic(typ)
}

// randomWrite is a copy-on-write statement (a format of the table's
// name) that sets column set and tests column cond, over ids below n.
func randomWrite(r *rand.Rand, set, cond struct{ name, typ string }, n int) string {
	// keys spread over every row group, or (so that other row groups are
	// copied) within 150 ids
	stride := 3 + r.IntN(40)
	src := fmt.Sprintf("SELECT i * %d + %d AS k FROM range(%d) r(i)", stride, r.IntN(stride), n/stride/(1+r.IntN(3)))
	lo, hi := 0, n
	if r.IntN(2) == 0 {
		lo = r.IntN(n)
		hi = lo + 150
		src = fmt.Sprintf("SELECT i + %d AS k FROM range(150) r(i) WHERE i %% %d = 0", lo, 1+r.IntN(4))
	}
	where := "t." + cond.name + " IS NOT NULL"
	switch r.IntN(4) {
	case 0: // an update-only MERGE: row groups patched
		return fmt.Sprintf("MERGE INTO %%s t USING (%s) s ON t.id = s.k WHEN MATCHED AND %s THEN UPDATE SET %s = %s", src, where, set.name, valueOf(set.typ, "s.k"))
	case 1: // a MERGE that deletes and inserts too
		return fmt.Sprintf("MERGE INTO %%s t USING (%s UNION ALL SELECT %d) s ON t.id = s.k WHEN MATCHED AND s.k %% 5 = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET %s = %s WHEN NOT MATCHED THEN INSERT (id) VALUES (s.k)",
			src, 1000000+r.IntN(1000), set.name, valueOf(set.typ, "s.k"))
	case 2:
		return fmt.Sprintf("UPDATE %%s SET %s = %s WHERE id %% %d = 1 AND id BETWEEN %d AND %d", set.name, valueOf(set.typ, "id"), stride, lo, hi)
	default:
		return fmt.Sprintf("DELETE FROM %%s WHERE id %% %d = 2 AND %s IS NOT NULL AND id BETWEEN %d AND %d", stride*3, cond.name, lo, hi)
	}
}
