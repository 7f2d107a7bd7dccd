package pgwire_test

import (
	"context"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/skadedb/skade/server/pgwire"
)

// TestTypesRoundTrip writes every skade type through parameters and
// reads it back, in the extended protocol (binary where pgx chooses it)
// and the simple protocol (text), and checks the values and type OIDs.
func TestTypesRoundTrip(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	ctx := context.Background()
	ts0 := time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)
	uuid := [16]byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8}
	num := pgtype.Numeric{Int: big.NewInt(-123456), Exp: -2, Valid: true}
	cols := []struct {
		name, typ string
		oid       uint32
		in        any
		out       any // a pointer to scan into
		want      any
	}{
		{"b", "BOOLEAN", 16, true, new(bool), true},
		// Iceberg has no 16-bit integer: a SMALLINT column is an int
		{"i2", "SMALLINT", 23, int16(-32768), new(int16), int16(-32768)},
		{"i4", "INTEGER", 23, int32(2147483647), new(int32), int32(2147483647)},
		{"i8", "BIGINT", 20, int64(-9223372036854775808), new(int64), int64(-9223372036854775808)},
		{"f4", "REAL", 700, float32(1.5), new(float32), float32(1.5)},
		{"f8", "DOUBLE", 701, 0.1, new(float64), 0.1},
		{"n", "DECIMAL(10,2)", 1700, num, new(pgtype.Numeric), num},
		{"s", "VARCHAR", 25, "héllo\t\"x\"", new(string), "héllo\t\"x\""},
		{"e", "VARCHAR", 25, "", new(string), ""},
		{"by", "BLOB", 17, []byte{0, 1, 2, 255}, new([]byte), []byte{0, 1, 2, 255}},
		{"d", "DATE", 1082, time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), new(time.Time), time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC)},
		{"ti", "TIME", 1083, pgtype.Time{Microseconds: (13*3600+14*60+15)*1e6 + 500, Valid: true}, new(pgtype.Time), pgtype.Time{Microseconds: (13*3600+14*60+15)*1e6 + 500, Valid: true}},
		{"tsn", "TIMESTAMP", 1114, ts0, new(time.Time), ts0},
		{"tsz", "TIMESTAMPTZ", 1184, ts0, new(time.Time), ts0},
		{"u", "UUID", 2950, "12345678-9abc-def0-0102-030405060708", new([16]byte), uuid},
		{"ai", "INTEGER[]", 1007, []int32{1, 2, 3}, new([]int32), []int32{1, 2, 3}},
		{"at", "TEXT[]", 1009, []string{"a b", "", "NULL"}, new([]string), []string{"a b", "", "NULL"}},
		{"aa", "BIGINT[][]", 1016, "{{1,2},{3,4}}", new([][]int64), [][]int64{{1, 2}, {3, 4}}},
	}
	for _, mode := range []string{"", "&default_query_exec_mode=simple_protocol"} {
		t.Run("mode"+mode, func(t *testing.T) {
			c := ts.connect(t, mode)
			ddl := "CREATE OR REPLACE TABLE types ("
			ins := "INSERT INTO types VALUES ("
			sel := "SELECT "
			var args []any
			for i, col := range cols {
				if i > 0 {
					ddl += ", "
					ins += ", "
					sel += ", "
				}
				ddl += col.name + " " + col.typ
				ins += "$" + itoa(i+1)
				sel += col.name
				args = append(args, col.in)
			}
			if _, err := c.Exec(ctx, ddl+")"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(ctx, ins+")", args...); err != nil {
				t.Fatal(err)
			}
			nulls := make([]any, len(cols))
			if _, err := c.Exec(ctx, ins+")", nulls...); err != nil {
				t.Fatal(err)
			}
			rows, err := c.Query(ctx, sel+" FROM types ORDER BY i8 NULLS LAST")
			if err != nil {
				t.Fatal(err)
			}
			for i, fd := range rows.FieldDescriptions() {
				if fd.DataTypeOID != cols[i].oid {
					t.Errorf("%s: OID %d, want %d", cols[i].name, fd.DataTypeOID, cols[i].oid)
				}
			}
			if !rows.Next() {
				t.Fatalf("no row: %v", rows.Err())
			}
			dst := make([]any, len(cols))
			for i, col := range cols {
				dst[i] = col.out
			}
			if err := rows.Scan(dst...); err != nil {
				t.Fatal(err)
			}
			for i, col := range cols {
				got := reflect.ValueOf(dst[i]).Elem().Interface()
				if n, ok := got.(pgtype.Numeric); ok {
					f1, _ := n.Float64Value()
					f2, _ := col.want.(pgtype.Numeric).Float64Value()
					if f1 != f2 {
						t.Errorf("%s: got %v, want %v", col.name, f1, f2)
					}
					continue
				}
				if tm, ok := got.(time.Time); ok {
					if !tm.Equal(col.want.(time.Time)) {
						t.Errorf("%s: got %v, want %v", col.name, tm, col.want)
					}
					continue
				}
				if !reflect.DeepEqual(got, col.want) {
					t.Errorf("%s: got %#v, want %#v", col.name, got, col.want)
				}
			}
			if !rows.Next() {
				t.Fatal("no NULL row")
			}
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if v != nil {
					t.Errorf("%s: NULL came back as %#v", cols[i].name, v)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestTextForms checks the text form of values against PostgreSQL's
// (what psql prints): the simple protocol sends every value as text.
func TestTextForms(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	c := ts.connect(t, "&default_query_exec_mode=simple_protocol")
	cases := []struct{ expr, want string }{
		{"true", "t"},
		{"CAST(1.5 AS DOUBLE)", "1.5"},
		{"CAST(1e20 AS DOUBLE)", "1e+20"},
		{"CAST(100000 AS DOUBLE)", "100000"},
		{"CAST(0.0001 AS DOUBLE)", "0.0001"},
		{"CAST(0.00001 AS DOUBLE)", "1e-05"},
		{"CAST('NaN' AS DOUBLE)", "NaN"},
		{"CAST(-1.25 AS DECIMAL(10,3))", "-1.250"},
		{"CAST(0.05 AS DECIMAL(5,2))", "0.05"},
		{"DATE '2026-01-02'", "2026-01-02"},
		{"TIMESTAMP '2026-01-02 03:04:05.5'", "2026-01-02 03:04:05.5"},
		{"TIMESTAMPTZ '2026-01-02 03:04:05'", "2026-01-02 03:04:05+00"},
		{"TIME '01:02:03'", "01:02:03"},
		{"INTERVAL '1 day 2 hours'", "1 day 02:00:00"},
		{"INTERVAL '14 months'", "1 year 2 mons"},
		{"CAST('\\x00ff' AS BLOB)", "\\x00ff"},
		{"CAST('12345678-9abc-def0-0102-030405060708' AS UUID)", "12345678-9abc-def0-0102-030405060708"},
	}
	for _, cs := range cases {
		var got string
		err := c.QueryRow(context.Background(), "SELECT CAST("+cs.expr+" AS VARCHAR), "+cs.expr).Scan(new(string), new(any))
		if err != nil {
			t.Errorf("%s: %v", cs.expr, err)
			continue
		}
		// read the raw text the server sent for the typed column
		rows, err := c.Query(context.Background(), "SELECT "+cs.expr, pgx.QueryResultFormats{pgx.TextFormatCode})
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			got = string(rows.RawValues()[0])
		}
		rows.Close()
		if got != cs.want {
			t.Errorf("%s: text %q, want %q", cs.expr, got, cs.want)
		}
	}
}

func itoa(i int) string {
	return string(rune('0' + i/10%10))[:min(1, i/10)] + string(rune('0'+i%10))
}

// TestArrays reads list results as PostgreSQL arrays, binary (pgx's
// default) and text.
func TestArrays(t *testing.T) {
	ts := startServer(t, pgwire.Config{})
	ctx := context.Background()
	for _, mode := range []string{"", "&default_query_exec_mode=simple_protocol"} {
		c := ts.connect(t, mode)
		var ints []*int32
		if err := c.QueryRow(ctx, "SELECT array_agg(x ORDER BY x) FROM (VALUES (3), (NULL), (1)) t(x)").Scan(&ints); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if len(ints) != 3 || *ints[0] != 1 || *ints[1] != 3 || ints[2] != nil {
			t.Errorf("%s: ints %v", mode, ints)
		}
		var strs []string
		if err := c.QueryRow(ctx, "SELECT array_agg(s ORDER BY s) FROM (VALUES ('a b'), ('x,\"y\"'), ('')) t(s)").Scan(&strs); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if len(strs) != 3 || strs[0] != "" || strs[1] != "a b" || strs[2] != `x,"y"` {
			t.Errorf("%s: strings %q", mode, strs)
		}
	}
}
