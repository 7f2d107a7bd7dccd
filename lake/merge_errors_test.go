package lake_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/skadedb/skade/lake"
)

// A MERGE error names the statement and the table once, with no stutter
// from the layers it passes through.
func TestMergeCardinalityMessage(t *testing.T) {
	ctx := context.Background()
	lk, _ := openLake(t)
	sess := lk.Session()
	if err := sess.Exec(ctx, "CREATE TABLE t (id BIGINT, v VARCHAR); INSERT INTO t VALUES (1, 'a')"); err != nil {
		t.Fatal(err)
	}
	_, err := sess.SQL(ctx, "MERGE INTO t USING (VALUES (1, 'x'), (1, 'y')) AS s(id, v) ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v")
	if err == nil {
		t.Fatal("a target row matched twice must fail")
	}
	if !errors.Is(err, lake.ErrInvalidArgument) {
		t.Fatalf("got %v, want ErrInvalidArgument", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "merge into main.t: target row matched more than one source row (data file ") ||
		!strings.HasSuffix(msg, ", row 0); narrow the ON condition or de-duplicate the source") ||
		strings.Count(msg, "merge into") != 1 {
		t.Fatalf("message: %q", msg)
	}
}
