package driver_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	skade "github.com/skadedb/skade/driver"
	"github.com/skadedb/skade/lake"
)

type cents int64

// Value makes cents a driver.Valuer: stored as a decimal string.
func (c cents) Value() (driver.Value, error) {
	return fmt.Sprintf("%d.%02d", int64(c)/100, int64(c)%100), nil
}

func openDB(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("skade", dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestDriver(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openDB(t, dir)
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id BIGINT, name VARCHAR, price DECIMAL(10,2), ok BOOLEAN, d DATE, ts TIMESTAMPTZ, b BLOB, x DOUBLE)"); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	res, err := db.ExecContext(ctx, "INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7, $8), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
		int32(1), "ada", cents(1250), true, "2026-05-06", ts, []byte{1, 2}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("RowsAffected %d", n)
	}
	if _, err := res.LastInsertId(); err == nil {
		t.Error("LastInsertId should fail")
	}
	var (
		id    int64
		name  sql.NullString
		price string
		ok    bool
		d, tz time.Time
		b     []byte
		x     float64
	)
	if err := db.QueryRowContext(ctx, "SELECT * FROM t WHERE id = ?", 1).Scan(&id, &name, &price, &ok, &d, &tz, &b, &x); err != nil {
		t.Fatal(err)
	}
	if id != 1 || name.String != "ada" || price != "12.50" || !ok || !d.Equal(time.Date(2026, 5, 6, 0, 0, 0, 0, time.UTC)) || !tz.Equal(ts) || string(b) != "\x01\x02" || x != 0.5 {
		t.Errorf("scanned %v %v %v %v %v %v %v %v", id, name, price, ok, d, tz, b, x)
	}
	var null sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT CAST(price AS BIGINT) FROM t WHERE id = 2").Scan(&null); err != nil || null.Valid {
		t.Errorf("NULL: %v %v", null, err)
	}
	rows, err := db.QueryContext(ctx, "SELECT id, name FROM t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	cts, _ := rows.ColumnTypes()
	if cts[0].DatabaseTypeName() != "BIGINT" || cts[1].DatabaseTypeName() != "TEXT" {
		t.Errorf("column types %s %s", cts[0].DatabaseTypeName(), cts[1].DatabaseTypeName())
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if n != 2 || rows.Err() != nil {
		t.Errorf("rows %d %v", n, rows.Err())
	}

	// prepared statements count their parameters
	st, err := db.PrepareContext(ctx, "SELECT name FROM t WHERE id = $1 AND name <> $2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.QueryContext(ctx, 1); err == nil || !strings.Contains(err.Error(), "expected 2 arguments") {
		t.Errorf("wrong argument count: %v", err)
	}
	var got string
	if err := st.QueryRowContext(ctx, 1, "bob").Scan(&got); err != nil || got != "ada" {
		t.Errorf("prepared: %q %v", got, err)
	}
	st.Close()

	// named arguments are refused, with the way out
	if _, err := db.ExecContext(ctx, "SELECT $1", sql.Named("a", 1)); err == nil || !strings.Contains(err.Error(), "use $1") {
		t.Errorf("named: %v", err)
	}
}

func TestDriverTransactions(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, t.TempDir())
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id BIGINT)"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tx.ExecContext(ctx, "INSERT INTO t VALUES (1)")
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	tx, _ = db.BeginTx(ctx, nil)
	tx.ExecContext(ctx, "INSERT INTO t VALUES (2)")
	var inside int
	tx.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&inside)
	var outside int
	db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&outside)
	if inside != 1 || outside != 0 {
		t.Errorf("isolation: inside %d outside %d", inside, outside)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var ids int64
	if err := db.QueryRowContext(ctx, "SELECT sum(id) FROM t").Scan(&ids); err != nil || ids != 2 {
		t.Errorf("after commit: %d %v", ids, err)
	}
	if _, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable}); err == nil {
		t.Error("serializable accepted")
	}
	tx, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatalf("read committed (served by snapshot isolation): %v", err)
	}
	tx.Rollback()
	if _, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}); err == nil {
		t.Error("read-only accepted")
	}
}

func TestDriverCancelAndRaw(t *testing.T) {
	db := openDB(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var n int64
	err := db.QueryRowContext(ctx, "SELECT count(*) FROM range(100000000000) a WHERE a.range % 7 = 1").Scan(&n)
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		t.Errorf("want a context error, got %v", err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		res, err := dc.(*skade.Conn).QueryArrow(context.Background(), "SELECT range AS v FROM range(5)")
		if err != nil {
			return err
		}
		bs, err := res.Collect(context.Background())
		if err != nil {
			return err
		}
		rows := 0
		for _, b := range bs {
			rows += int(b.NumRows())
			b.Release()
		}
		if rows != 5 {
			t.Errorf("arrow rows %d", rows)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDriverSharesLake: two sql.DBs on one directory share the lake (its
// catalog file is locked per process), and NewConnector serves an open
// lake.
func TestDriverSharesLake(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := openDB(t, dir), openDB(t, dir)
	if _, err := a.ExecContext(ctx, "CREATE TABLE t (id BIGINT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ExecContext(ctx, "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("second DB: %d %v", n, err)
	}
	a.Close()
	if err := b.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatalf("after the first DB closed: %v", err)
	}
	b.Close()

	lk, err := lake.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	db := sql.OpenDB(skade.NewConnector(lk))
	defer db.Close()
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("NewConnector: %d %v", n, err)
	}
}

// Arguments SQL cannot hold are refused, and nothing is written: a string
// that is not UTF-8 (as SQL text is refused), a time outside the
// timestamp range (the year 300000 was stored as the year -284555), and
// more arguments than the statement has parameters (silently ignored
// before).
func TestDriverRefusesArgumentsSQLCannotHold(t *testing.T) {
	db := openDB(t, t.TempDir())
	if _, err := db.Exec("CREATE TABLE a (id BIGINT, v VARCHAR, ts TIMESTAMPTZ)"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		args  []any
		want  string
		state string
	}{
		{"a string that is not UTF-8", []any{1, string([]byte{'a', 0xff}), nil}, `parameter $2: invalid byte sequence for encoding "UTF8": 0xff at byte 2 of the value`, "22021"},
		{"the year 300000", []any{2, "x", time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC)}, "parameter $3: timestamp out of range: 300000-01-01T00:00:00Z", ""},
		{"before 4714 BC", []any{3, "x", time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC)}, "parameter $3: timestamp out of range", ""},
		{"an argument too many", []any{4, "x", nil, 5}, "the statement has 3 parameters but was given 4 arguments", ""},
	} {
		_, err := db.Exec("INSERT INTO a VALUES ($1, $2, $3)", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if c.state != "" && lake.SQLState(err) != c.state {
			t.Errorf("%s: SQLSTATE %s, want %s", c.name, lake.SQLState(err), c.state)
		}
	}
	// an unsigned argument past BIGINT is a numeric(20)
	if _, err := db.Exec("CREATE TABLE u (x NUMERIC(20, 0))"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO u VALUES ($1)", uint64(1<<64-1)); err != nil {
		t.Fatal(err)
	}
	var u string
	if err := db.QueryRow("SELECT x FROM u").Scan(&u); err != nil || u != "18446744073709551615" {
		t.Errorf("uint64 max stored as %q (%v)", u, err)
	}
	// the range's ends are held
	lo, hi := time.Date(-4713, 11, 24, 0, 0, 0, 0, time.UTC), time.Date(294247, 1, 9, 23, 59, 59, 999999000, time.UTC)
	if _, err := db.Exec("INSERT INTO a VALUES (5, 'lo', $1), (6, 'hi', $2)", lo, hi); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT id, ts FROM a ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id int64
		var ts time.Time
		if err := rows.Scan(&id, &ts); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s", id, ts.Format(time.RFC3339Nano)))
	}
	if want := []string{"5 -4713-11-24T00:00:00Z", "6 294247-01-09T23:59:59.999999Z"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows %v, want %v", got, want)
	}
}
