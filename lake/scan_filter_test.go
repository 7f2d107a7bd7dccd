package lake_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/lake"
)

// Table.Scan with a Filter over every column type, on files whose row
// groups hold a value and a NULL each (iceberg-go skipped such row groups
// for any predicate a NULL fails, and panicked on decimal filters). The
// expected counts are the data's, and SQL must agree.
func TestScanFilterEveryTypeWithNulls(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE f (i INTEGER, b BIGINT, s VARCHAR, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ, n DECIMAL(10,2), x DOUBLE, o BOOLEAN)
		WITH ('write.parquet.row-group-limit' = '2')`)
	mustExec(t, s, `INSERT INTO f VALUES
		(5, 50, 'e', DATE '2026-01-05', TIMESTAMP '2026-01-05 00:00:00', TIMESTAMPTZ '2026-01-05 00:00:00+00', 5.50, 5.5, true),
		(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
		(7, 70, 'g', DATE '2026-01-07', TIMESTAMP '2026-01-07 00:00:00', TIMESTAMPTZ '2026-01-07 00:00:00+00', 7.70, 7.5, false),
		(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
	tbl, err := lk.Table(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	ref := func(n string) iceberg.Reference { return iceberg.Reference(n) }
	cases := []struct {
		name   string
		filter iceberg.BooleanExpression
		sql    string
		want   int64
	}{
		{"int =", iceberg.EqualTo(ref("i"), int32(5)), "i = 5", 1},
		{"bigint >", iceberg.GreaterThan(ref("b"), int64(10)), "b > 10", 2},
		{"text =", iceberg.EqualTo(ref("s"), "g"), "s = 'g'", 1},
		{"text in", iceberg.IsIn(ref("s"), "e", "g", "z"), "s IN ('e', 'g', 'z')", 2},
		{"text starts", iceberg.StartsWith(ref("s"), "e"), "starts_with(s, 'e')", 1},
		{"date <", iceberg.LessThan(ref("d"), iceberg.Date(20460)), "d < DATE '2026-01-07'", 1},
		{"timestamp >=", iceberg.GreaterThanEqual(ref("ts"), iceberg.Timestamp(1767571200000000)), "ts >= TIMESTAMP '2026-01-05 00:00:00'", 2},
		{"timestamptz =", iceberg.EqualTo(ref("tz"), iceberg.Timestamp(1767744000000000)), "tz = TIMESTAMPTZ '2026-01-07 00:00:00+00'", 1},
		{"decimal is null", iceberg.IsNull(ref("n")), "n IS NULL", 2},
		{"decimal >", iceberg.GreaterThan(ref("n"), iceberg.Decimal{Val: decimal128.FromI64(600), Scale: 2}), "n > 6.00", 1},
		{"double <=", iceberg.LessThanEqual(ref("x"), 5.5), "x <= 5.5", 1},
		{"bool =", iceberg.EqualTo(ref("o"), true), "o = true", 1},
		{"not null", iceberg.NotNull(ref("i")), "i IS NOT NULL", 2},
		{"not in", iceberg.NotIn(ref("i"), int32(5)), "i NOT IN (5)", 1},
		{"or nulls", iceberg.NewOr(iceberg.IsNull(ref("s")), iceberg.EqualTo(ref("i"), int32(7))), "s IS NULL OR i = 7", 3},
		{"not", iceberg.NewNot(iceberg.EqualTo(ref("i"), int32(5))), "NOT (i = 5)", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rdr, err := tbl.Scan(ctx, lake.Filter(c.filter), lake.Columns("o"))
			if err != nil {
				t.Fatal(err)
			}
			var n int64
			for rdr.Next() {
				if rdr.RecordBatch().NumCols() != 1 {
					t.Fatalf("want only the selected column, got %v", rdr.RecordBatch().Schema())
				}
				n += rdr.RecordBatch().NumRows()
			}
			err = rdr.Err()
			rdr.Release()
			if err != nil {
				t.Fatal(err)
			}
			if n != c.want {
				t.Errorf("Table.Scan(%s): %d rows, want %d", c.filter, n, c.want)
			}
			if got := query(t, s, "SELECT count(*) FROM f WHERE "+c.sql); len(got) != 1 || got[0] != fmt.Sprint(c.want) {
				t.Errorf("SQL %s: %v, want %d", c.sql, got, c.want)
			}
		})
	}
	if _, err := tbl.Scan(ctx, lake.Filter(iceberg.EqualTo(ref("nosuch"), int32(1)))); err == nil {
		t.Error("a filter on a missing column was accepted")
	}
}

// Table.Scan and Table.PlanFiles with a Filter on a column added, or
// renamed, since the table's last write: the snapshot was written under
// the older schema, and a scan pinned to it by id reads with that schema,
// to which the filter could not bind (until session 31).
func TestScanFilterOnAColumnChangedSinceTheLastWrite(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE g (id BIGINT, v VARCHAR);
		INSERT INTO g SELECT i, 'v' || i FROM range(10) r(i);
		ALTER TABLE g ADD COLUMN n INTEGER;
		ALTER TABLE g RENAME COLUMN v TO w`)
	tbl, err := lk.Table(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		filter iceberg.BooleanExpression
		want   int64
	}{
		{iceberg.IsNull(iceberg.Reference("n")), 10},
		{iceberg.NotNull(iceberg.Reference("n")), 0},
		{iceberg.EqualTo(iceberg.Reference("w"), "v3"), 1},
	} {
		rdr, err := tbl.Scan(ctx, lake.Filter(c.filter))
		if err != nil {
			t.Fatalf("Scan(%s): %v", c.filter, err)
		}
		var n int64
		for rdr.Next() {
			n += rdr.RecordBatch().NumRows()
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil || n != c.want {
			t.Errorf("Scan(%s): %d rows (%v), want %d", c.filter, n, err, c.want)
		}
		files, err := tbl.PlanFiles(ctx, lake.Filter(c.filter))
		if err != nil || len(files) != 1 {
			t.Errorf("PlanFiles(%s): %v (%v), want the one file", c.filter, files, err)
		}
	}
}

// A float compared with NaN: in SQL NaN equals itself and sorts above
// every number (as in Postgres), but no file's or row group's bounds hold
// a NaN, so such a comparison must not prune. `x = 'NaN'` over a file
// holding NaN among numbers returned no row, and DELETE and UPDATE with
// it changed none, while it was handed to iceberg-go's pruning.
func TestNaNComparisonsAreNotPruned(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE f (id INT, x DOUBLE, y REAL) WITH ('write.parquet.row-group-limit' = '2');
		INSERT INTO f VALUES (1, 0.5, 0.5), (2, 'NaN', 'NaN'), (3, 0.25, 0.25), (4, 2.0, 2.0), (5, NULL, NULL)`)
	for _, c := range []struct {
		where string
		want  []string
	}{
		{"x = 'NaN'::DOUBLE", []string{"2"}},
		{"'NaN'::DOUBLE = x", []string{"2"}},
		{"x = 'NaN'::DOUBLE OR id = 1", []string{"1", "2"}},
		{"x IN (0.25, 'NaN'::DOUBLE)", []string{"2", "3"}},
		{"y = 'NaN'::REAL", []string{"2"}},
		{"x >= 'NaN'::DOUBLE", []string{"2"}},
		{"x <> 'NaN'::DOUBLE", []string{"1", "3", "4"}},
		{"x = 0.5", []string{"1"}},
	} {
		if got := query(t, s, "SELECT id FROM f WHERE "+c.where+" ORDER BY id"); !slices.Equal(got, c.want) {
			t.Errorf("WHERE %s: %v, want %v", c.where, got, c.want)
		}
	}
	// the Go API's filters, Iceberg expressions, are pruned with as well
	tbl, err := lk.Table(context.Background(), "f")
	if err != nil {
		t.Fatal(err)
	}
	x := iceberg.Reference("x")
	for name, f := range map[string]iceberg.BooleanExpression{
		"EqualTo(x, NaN)":             iceberg.EqualTo(x, math.NaN()),
		"IsIn(x, 0.25, NaN)":          iceberg.IsIn(x, 0.25, math.NaN()),
		"EqualTo(y, NaN) as float32":  iceberg.EqualTo(iceberg.Reference("y"), float32(math.NaN())),
		"Or(EqualTo(x, NaN), id = 1)": iceberg.NewOr(iceberg.EqualTo(x, math.NaN()), iceberg.EqualTo(iceberg.Reference("id"), int32(1))),
	} {
		rdr, err := tbl.Scan(context.Background(), lake.Columns("id"), lake.Filter(f))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ids []int32
		for rdr.Next() {
			ids = append(ids, rdr.RecordBatch().Column(0).(*array.Int32).Int32Values()...)
		}
		if err := rdr.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rdr.Release()
		if !slices.Contains(ids, 2) {
			t.Errorf("Table.Scan with Filter %s: ids %v, want the NaN row's 2 among them", name, ids)
		}
	}
	// DELETE and UPDATE prune their files with the same filter
	mustExec(t, s, "UPDATE f SET id = 20 WHERE y = 'NaN'::REAL")
	mustExec(t, s, "DELETE FROM f WHERE x = 'NaN'::DOUBLE")
	if got := query(t, s, "SELECT id FROM f ORDER BY id"); !slices.Equal(got, []string{"1", "3", "4", "5"}) {
		t.Errorf("after DELETE WHERE x = 'NaN': %v", got)
	}
}

// NaN sorts above every number in SQL, as in PostgreSQL: NaN > 5, NaN <> 3
// and NaN NOT IN (1, 2) are true. Iceberg's evaluators take any comparison
// with NaN as false and a file's bounds leave NaN out, so a file holding
// 3 and NaN (upper bound 3) was pruned for x > 5: the query lost its NaN
// row, and UPDATE and DELETE left it unchanged. Each predicate is checked
// against hand-written ids and against the same predicate on x + 0, which
// is not pushed to pruning; v2 and v3, partitioned and not, both write
// modes, row groups of two rows. A file without NaN is still pruned: the
// writers record a NaN count of 0 (format version 2; version 3's inserts
// go through iceberg-go's Append, which records none).
func TestNaNAboveEveryNumberIsNotPruned(t *testing.T) {
	for _, version := range []int{2, 3} {
		for _, part := range []string{"", "PARTITIONED BY (g)"} {
			for _, mode := range []string{"copy-on-write", "merge-on-read"} {
				name := fmt.Sprintf("v%d-%s", version, mode)
				if part != "" {
					name += "-partitioned"
				}
				t.Run(name, func(t *testing.T) {
					s := sqlLake(t).Session()
					mustExec(t, s, fmt.Sprintf(`CREATE TABLE f (id INT, g INT, x DOUBLE, y REAL, s TEXT) %s
						WITH ('format-version' = '%d', 'write.delete.mode' = '%s', 'write.update.mode' = '%s', 'write.parquet.row-group-limit' = '2');
						INSERT INTO f VALUES (1, 0, 1.0, 1.0, 'a'), (2, 0, 2.0, 2.0, 'a');
						INSERT INTO f VALUES (3, 0, 'NaN', 'NaN', 'b'), (4, 0, 3.0, 3.0, 'b');
						INSERT INTO f VALUES (5, 1, 'NaN', 'NaN', 'c');
						INSERT INTO f VALUES (6, 1, 9.0, 9.0, 'd'), (7, 1, NULL, NULL, 'd')`, part, version, mode, mode))
					for _, c := range []struct {
						where string
						want  string
					}{
						{"x > 5", "3 5 6"},
						{"x > 5.0", "3 5 6"},
						{"x > CAST(5 AS DOUBLE)", "3 5 6"},
						{"5 < x", "3 5 6"},
						{"x >= 3", "3 4 5 6"},
						{"x > 'Infinity'::DOUBLE", "3 5"},
						{"x <> 3", "1 2 3 5 6"},
						{"x NOT IN (1, 2, 3)", "3 5 6"},
						{"x < 5", "1 2 4"},
						{"x <= 2 OR x > 8", "1 2 3 5 6"},
						{"x BETWEEN 2 AND 100", "2 4 6"},
						{"x > 5 AND id < 6", "3 5"},
						{"y > 5", "3 5 6"},
						{"y >= 3", "3 4 5 6"},
						{"y <> 1", "2 3 4 5 6"},
					} {
						got := strings.Join(query(t, s, "SELECT id FROM f WHERE "+c.where+" ORDER BY id"), " ")
						if got != c.want {
							t.Errorf("WHERE %s: ids %s, want %s", c.where, got, c.want)
						}
						unpushed := regexp.MustCompile(`\b[xy]\b`).ReplaceAllString(c.where, "($0 + 0)")
						if other := strings.Join(query(t, s, "SELECT id FROM f WHERE "+unpushed+" ORDER BY id"), " "); other != c.want {
							t.Errorf("WHERE %s: ids %s, want %s", unpushed, other, c.want)
						}
					}
					if version == 2 {
						plan := strings.Join(query(t, s, "EXPLAIN SELECT id FROM f WHERE x > 5"), "\n")
						if !strings.Contains(plan, "files scanned=3 skipped=1") {
							t.Errorf("x > 5 should leave out the file of 1 and 2 (NaN count 0):\n%s", plan)
						}
					}
					mustExec(t, s, "UPDATE f SET id = id + 100 WHERE x > 5")
					if got := strings.Join(query(t, s, "SELECT id FROM f ORDER BY id"), " "); got != "1 2 4 7 103 105 106" {
						t.Errorf("after UPDATE … WHERE x > 5: ids %s", got)
					}
					mustExec(t, s, "DELETE FROM f WHERE y > 5")
					if got := strings.Join(query(t, s, "SELECT id FROM f ORDER BY id"), " "); got != "1 2 4 7" {
						t.Errorf("after DELETE … WHERE y > 5: ids %s", got)
					}
				})
			}
		}
	}
}

// Row groups of one file left unread by their float statistics
// (scan/plainprune.go): < <= = IN by the bounds, which leave NaN out and
// no NaN passes; > and >= only where the file counts no NaN, since NaN
// passes them. One file of 40 row groups of 50 rows, with -0, 0,
// ±Infinity and NULLs, once without NaN and once with a NaN in one row
// group; each predicate against the same one on x + 0, which nothing
// prunes by.
func TestFloatStatisticsPruneRowGroups(t *testing.T) {
	for _, withNaN := range []bool{false, true} {
		name := "no NaN"
		if withNaN {
			name = "NaN"
		}
		t.Run(strings.ReplaceAll(name, " ", "-"), func(t *testing.T) {
			s := sqlLake(t).Session()
			nan := "0.5"
			if withNaN {
				nan = "'NaN'::DOUBLE"
			}
			mustExec(t, s, `CREATE TABLE f (id INT, x DOUBLE, y REAL, s TEXT) WITH ('write.parquet.row-group-limit' = '50');
				INSERT INTO f SELECT i, CASE WHEN i = 777 THEN `+nan+` WHEN i = 5 THEN '-0'::DOUBLE WHEN i = 6 THEN 0
					WHEN i = 1999 THEN 'Infinity'::DOUBLE WHEN i = 1 THEN '-Infinity'::DOUBLE WHEN i % 13 = 0 THEN NULL ELSE i * 1.5 END,
					CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 2)::REAL END, 'x'
				FROM range(0, 2000) r(i)`)
			preds := []string{
				"x > 2900", "x >= 2997", "x > 'Infinity'::DOUBLE", "x < 3", "x <= 0", "x = 0", "x = '-0'::DOUBLE",
				"x IN (300, 1500.0)", "x < 1000 AND x > 900", "x BETWEEN 10 AND 12", "x > 1e300", "x < '-Infinity'::DOUBLE",
				"x <> 3", "x = 1165.5", "y > 3990", "y < 4", "y = 1000", "x > 2900 OR id = 3",
			}
			for _, p := range preds {
				got := query(t, s, "SELECT count(*), coalesce(sum(id), 0) FROM f WHERE "+p)
				unpruned := regexp.MustCompile(`\b[xy]\b`).ReplaceAllString(p, "($0 + 0)")
				want := query(t, s, "SELECT count(*), coalesce(sum(id), 0) FROM f WHERE "+unpruned)
				if got[0] != want[0] {
					t.Errorf("WHERE %s: %s, WHERE %s: %s", p, got[0], unpruned, want[0])
				}
			}
			pruned := func(p string) bool {
				return strings.Contains(strings.Join(query(t, s, "EXPLAIN ANALYZE SELECT id FROM f WHERE "+p), "\n"), "row_groups_pruned=")
			}
			if !pruned("x < 3") || !pruned("x BETWEEN 10 AND 12") {
				t.Error("x < 3 and x BETWEEN 10 AND 12 read every row group")
			}
			if got := pruned("x > 2900"); got == withNaN {
				t.Errorf("x > 2900 with NaN %v: row groups pruned %v", withNaN, got)
			}
		})
	}
}
