package lake_test

import (
	"context"
	"errors"
	"testing"

	"github.com/skadedb/skade/lake"
)

// TestErrorFields: a program reads a statement error's SQLSTATE, where it
// points and its hint with errors.As, without importing plan or parser,
// and errors.Is with lake's sentinels still works through it.
func TestErrorFields(t *testing.T) {
	ctx := context.Background()
	lk := sqlLake(t)
	s := lk.Session()
	mustExec(t, s, "CREATE TABLE t (id BIGINT, name VARCHAR)")
	cases := []struct {
		sql                    string
		code, message, hint    string
		line, column, position int
		is                     error
	}{
		{sql: "SELECT * FORM t", code: "42601", line: 1, column: 10, position: 10, is: lake.ErrInvalidArgument},
		{sql: "SELECT * FROM nosuch", code: "42P01", line: 1, column: 15, position: 15, is: lake.ErrTableNotFound},
		{sql: "SELECT naem FROM t", code: "42703", message: `column "naem" not found in table "t"`, line: 1, column: 8, position: 8},
		{sql: "CREATE TABLE t (x INT)", code: "42P07", message: "create table t: the table already exists", hint: "Use CREATE OR REPLACE TABLE or IF NOT EXISTS", is: lake.ErrTableExists},
		{sql: "SELECT 'é', naem FROM t", code: "42703", line: 1, column: 13, position: 13},
	}
	for _, c := range cases {
		_, err := s.SQL(ctx, c.sql)
		if err == nil {
			t.Fatalf("%s: no error", c.sql)
		}
		var e *lake.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %T is not a *lake.Error: %v", c.sql, err, err)
		}
		if e.Code != c.code || (c.message != "" && e.Message != c.message) || e.Hint != c.hint && c.hint != "" ||
			e.Line != c.line || e.Column != c.column || e.Position != c.position {
			t.Errorf("%s: got code %s message %q hint %q at %d:%d (%d), want %s %q %q at %d:%d (%d)", c.sql,
				e.Code, e.Message, e.Hint, e.Line, e.Column, e.Position, c.code, c.message, c.hint, c.line, c.column, c.position)
		}
		if e.Error() != err.Error() {
			t.Errorf("%s: the Error's text %q differs from the error's %q", c.sql, e.Error(), err.Error())
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: errors.Is(%v) is false", c.sql, c.is)
		}
		if lake.SQLState(err) != c.code {
			t.Errorf("%s: SQLState = %s", c.sql, lake.SQLState(err))
		}
	}
	// an error met while reading a result carries its fields too
	res, err := s.SQL(ctx, "SELECT 1 / (id - id) FROM (VALUES (1)) v(id)")
	if err == nil {
		_, err = res.Collect(ctx)
	}
	var e *lake.Error
	if !errors.As(err, &e) || e.Code != "22012" {
		t.Fatalf("division by zero while reading: %v (%+v)", err, e)
	}
	// a percentile outside [0, 1], as PostgreSQL classes it
	res, err = s.SQL(ctx, "SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY id) FROM (VALUES (1)) v(id)")
	if err == nil {
		_, err = res.Collect(ctx)
	}
	if !errors.As(err, &e) || e.Code != "22003" {
		t.Fatalf("percentile out of range: %v (%+v)", err, e)
	}
}
