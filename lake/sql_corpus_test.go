package lake_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/skadedb/skade/parser"
)

// TestParserCorpusNeverPanics runs every statement of the parser's corpus
// through a session over a few tables. Most fail to bind (their tables
// and columns do not exist); none may panic, and every error must have a
// message.
func TestParserCorpusNeverPanics(t *testing.T) {
	files, err := filepath.Glob("../parser/testdata/corpus/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			stmts, err := parser.Parse(string(data))
			if err != nil {
				t.Fatalf("corpus does not parse: %v", err)
			}
			s := sqlLake(t).Session()
			// COPY … TO 'file' statements write relative paths here
			t.Chdir(t.TempDir())
			mustExec(t, s, `CREATE TABLE t (id BIGINT, x INTEGER, n INTEGER, a INTEGER, b INTEGER, name VARCHAR, status VARCHAR, amount DECIMAL(10,2), ts TIMESTAMP, d DATE);
				INSERT INTO t VALUES (1, 2, 3, 4, 5, 'n', 'ok', 1.50, TIMESTAMP '2024-01-01 00:00:00', DATE '2024-01-01'), (2, NULL, 1, 0, NULL, NULL, 'fail', NULL, NULL, NULL);
				CREATE TABLE s AS SELECT * FROM t; CREATE TABLE u AS SELECT * FROM t; CREATE TABLE events AS SELECT * FROM t; CREATE TABLE orders AS SELECT * FROM t`)
			for _, st := range stmts {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("panic on %s: %v", st, r)
						}
					}()
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					res, err := s.SQL(ctx, st.String())
					if err == nil {
						var batches []arrow.RecordBatch
						batches, err = res.Collect(ctx)
						for _, b := range batches {
							b.Release()
						}
					}
					if err != nil && err.Error() == "" {
						t.Errorf("empty error message for %s", st)
					}
				}()
			}
		})
	}
}
