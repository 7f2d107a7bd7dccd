package pgwire_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/skadedb/skade/internal/sqllogic"
	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/parser"
	"github.com/skadedb/skade/server/pgwire"
)

// TestSQLOverTheWire runs .slt corpora through the server with pgx, so
// that every statement the transformation tools' strategies emit runs
// over the PostgreSQL protocol with the results the in-process run gets
// (the same expected output). One-statement records use the extended
// protocol (Parse, Bind, Describe, Execute) with text results; records
// of several statements the simple protocol.
func TestSQLOverTheWire(t *testing.T) {
	root, err := filepath.Abs("../../testdata/sql")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, dir := range []string{"."} {
		filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".slt") {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 10 {
		t.Fatalf("found only %d .slt files", len(files))
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			sqllogic.RunFile(t, f, sqllogic.Options{
				TestData: filepath.Dir(root),
				Executor: func(t *testing.T, lk *lake.Lake) sqllogic.Executor {
					ts := startServer(t, pgwire.Config{Lake: lk})
					return &wireExecutor{c: ts.connect(t, "")}
				},
			})
		})
	}
}

type wireExecutor struct{ c *pgx.Conn }

func (w *wireExecutor) Run(ctx context.Context, sql string, r *sqllogic.Record) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	stmts, perr := parser.Parse(sql)
	if perr != nil || len(stmts) != 1 {
		// the simple protocol: what psql and scripts send
		results, err := w.c.PgConn().Exec(ctx, sql).ReadAll()
		if err != nil {
			return nil, wireError(err)
		}
		last := results[len(results)-1]
		if err := commitRolledBack(stmts, last.CommandTag); err != nil {
			return nil, err
		}
		return renderText(last.FieldDescriptions, last.Rows, last.CommandTag), nil
	}
	rows, err := w.c.Query(ctx, sql, pgx.QueryExecModeExec, pgx.QueryResultFormats{pgx.TextFormatCode})
	if err != nil {
		return nil, wireError(err)
	}
	var raw [][][]byte
	for rows.Next() {
		vals := rows.RawValues()
		row := make([][]byte, len(vals))
		for i, v := range vals {
			if v != nil {
				row[i] = append([]byte{}, v...)
			}
		}
		raw = append(raw, row)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wireError(err)
	}
	if err := commitRolledBack(stmts, rows.CommandTag()); err != nil {
		return nil, err
	}
	return renderText(rows.FieldDescriptions(), raw, rows.CommandTag()), nil
}

// commitRolledBack maps PostgreSQL's answer to COMMIT of an aborted
// transaction (no error, the ROLLBACK tag) to lake's, which the files
// expect: an error saying so.
func commitRolledBack(stmts []parser.Stmt, tag pgconn.CommandTag) error {
	if len(stmts) == 0 {
		return nil
	}
	if _, ok := stmts[len(stmts)-1].(*parser.Commit); ok && tag.String() == "ROLLBACK" {
		return errors.New("commit: the transaction was aborted and has been rolled back")
	}
	return nil
}

// renderText renders text-format values as the .slt files expect; a
// statement without rows gives its command tag's count, as lake's count
// result does.
func renderText(fields []pgconn.FieldDescription, rows [][][]byte, tag pgconn.CommandTag) []string {
	if len(fields) == 0 {
		s := tag.String()
		if i := strings.LastIndexByte(s, ' '); i >= 0 {
			if _, err := strconv.ParseInt(s[i+1:], 10, 64); err == nil {
				return []string{s[i+1:]}
			}
		}
		return nil
	}
	var out []string
	for _, row := range rows {
		vals := make([]string, len(row))
		for j, v := range row {
			switch {
			case v == nil:
				vals[j] = "NULL"
			case fields[j].DataTypeOID == 16:
				vals[j] = map[string]string{"t": "true", "f": "false"}[string(v)]
			case len(v) == 0:
				vals[j] = "(empty)"
			default:
				vals[j] = string(v)
			}
		}
		out = append(out, strings.Join(vals, "\t"))
	}
	return out
}

// wireError puts a server error's hint back after its message, as skade
// writes them ("what: why; what to do"), for the files' substrings.
func wireError(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	msg := pe.Message
	if pe.Hint != "" {
		r, n := utf8.DecodeRuneInString(pe.Hint)
		msg += "; " + string(unicode.ToLower(r)) + pe.Hint[n:]
	}
	return errors.New(msg)
}
