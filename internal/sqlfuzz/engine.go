package sqlfuzz

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/skadedb/skade/internal/sqllogic"
	"github.com/skadedb/skade/lake"
)

// Engine runs SQL and returns rows as normalized strings (Rows), so that
// skade's and PostgreSQL's answers compare as text.
type Engine interface {
	Exec(ctx context.Context, sql string) error
	Query(ctx context.Context, sql string) (Rows, error)
}

// Rows is a result, each row its values joined by tabs, NULL as NULL,
// booleans as true/false and numbers with a fractional type printed by
// normFloat.
type Rows []string

// Sorted returns the rows in order, for comparing as multisets.
func (r Rows) Sorted() Rows {
	s := slices.Clone(r)
	slices.Sort(s)
	return s
}

// Skade is an Engine over a lake session.
type Skade struct{ Sess *lake.Session }

func (e Skade) Exec(ctx context.Context, sql string) error {
	res, err := e.Sess.SQL(ctx, sql)
	if err != nil {
		return err
	}
	batches, err := res.Collect(ctx)
	for _, b := range batches {
		b.Release()
	}
	return err
}

func (e Skade) Query(ctx context.Context, sql string) (Rows, error) {
	res, err := e.Sess.SQL(ctx, sql)
	if err != nil {
		return nil, err
	}
	batches, err := res.Collect(ctx)
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	if err != nil {
		return nil, err
	}
	var out Rows
	for _, b := range batches {
		cols := make([][]string, b.NumCols())
		for j := range cols {
			if cols[j], err = normArrow(b.Column(j)); err != nil {
				return nil, err
			}
		}
		for i := range int(b.NumRows()) {
			vals := make([]string, len(cols))
			for j := range cols {
				vals[j] = cols[j][i]
			}
			out = append(out, strings.Join(vals, "\t"))
		}
	}
	return out, nil
}

func normArrow(a arrow.Array) ([]string, error) {
	out := make([]string, a.Len())
	switch c := a.(type) {
	case *array.String:
		for i := range out {
			out[i] = c.Value(i)
		}
	case *array.LargeString:
		for i := range out {
			out[i] = c.Value(i)
		}
	case *array.Boolean:
		for i := range out {
			out[i] = strconv.FormatBool(c.Value(i))
		}
	default:
		r, err := sqllogic.Render(a)
		if err != nil {
			return nil, err
		}
		copy(out, r)
		switch a.DataType().ID() {
		case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.DECIMAL256, arrow.DECIMAL32, arrow.DECIMAL64:
			for i := range out {
				out[i] = normFloat(out[i])
			}
		}
	}
	for i := range out {
		if a.IsNull(i) {
			out[i] = "NULL"
		}
	}
	return out, nil
}

// normFloat prints a number of a fractional type (double precision,
// numeric) with 12 significant digits, so that skade's double and
// PostgreSQL's numeric answers to avg(int) compare equal.
func normFloat(s string) string {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return s
	}
	if f == 0 {
		return "0"
	}
	return strconv.FormatFloat(f, 'g', 12, 64)
}

// Postgres is an Engine over a PostgreSQL connection. It uses the simple
// protocol, so values arrive in PostgreSQL's text forms.
type Postgres struct{ Conn *pgx.Conn }

func (e Postgres) Exec(ctx context.Context, sql string) error {
	_, err := e.Conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	return err
}

func (e Postgres) Query(ctx context.Context, sql string) (Rows, error) {
	rows, err := e.Conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	fields := rows.FieldDescriptions()
	var out Rows
	for rows.Next() {
		raw := rows.RawValues()
		vals := make([]string, len(raw))
		for j, v := range raw {
			switch {
			case v == nil:
				vals[j] = "NULL"
			case fields[j].DataTypeOID == 16: // bool
				vals[j] = map[string]string{"t": "true", "f": "false"}[string(v)]
			case fields[j].DataTypeOID == 700 || fields[j].DataTypeOID == 701 || fields[j].DataTypeOID == 1700:
				vals[j] = normFloat(string(v))
			default:
				vals[j] = string(v)
			}
		}
		out = append(out, strings.Join(vals, "\t"))
	}
	return out, rows.Err()
}

// pgCode is the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	if pe, ok := err.(*pgconn.PgError); ok {
		return pe.Code
	}
	return ""
}

// diff describes how two results differ, or "" when they are the same
// multiset of rows.
func diff(a, b Rows) string {
	as, bs := a.Sorted(), b.Sorted()
	if slices.Equal(as, bs) {
		return ""
	}
	var only1, only2 []string
	i, j := 0, 0
	for i < len(as) || j < len(bs) {
		switch {
		case j == len(bs) || (i < len(as) && as[i] < bs[j]):
			only1 = append(only1, as[i])
			i++
		case i == len(as) || bs[j] < as[i]:
			only2 = append(only2, bs[j])
			j++
		default:
			i++
			j++
		}
	}
	return fmt.Sprintf("%d vs %d rows; only in the first: %s; only in the second: %s", len(as), len(bs), sample(only1), sample(only2))
}

func sample(rows []string) string {
	if len(rows) > 5 {
		return fmt.Sprintf("%q … (%d more)", rows[:5], len(rows)-5)
	}
	return fmt.Sprintf("%q", rows)
}
