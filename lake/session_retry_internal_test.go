package lake

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/skadedb/skade/exec"
)

// racingSource is a MERGE source that, the first time it is planned,
// lets another writer commit to the target: the merge, planned against
// the old head, then loses the commit race.
type racingSource struct {
	schema *arrow.Schema
	rows   [][]any
	race   func() error
	calls  int
}

func (r *racingSource) Schema() *arrow.Schema { return r.schema }

func (r *racingSource) Operator() (exec.Operator, error) {
	r.calls++
	if r.calls == 1 {
		if err := r.race(); err != nil {
			return nil, err
		}
	}
	b, err := exec.BuildBatch(memory.DefaultAllocator, r.schema, r.rows)
	if err != nil {
		return nil, err
	}
	defer b.Release()
	return exec.NewValues(r.schema, []arrow.RecordBatch{b})
}

func TestMergeRetriesAfterLosingARace(t *testing.T) {
	for _, retries := range []int{0, 1} {
		t.Run(map[int]string{0: "no_retry", 1: "one_retry"}[retries], func(t *testing.T) {
			ctx := context.Background()
			lk, err := Open(ctx, filepath.Join(t.TempDir(), "lake"))
			if err != nil {
				t.Fatal(err)
			}
			defer lk.Close()
			sess := lk.Session()
			if err := sess.Exec(ctx, "CREATE TABLE t (id BIGINT, v VARCHAR); INSERT INTO t VALUES (1, 'a'), (2, 'b')"); err != nil {
				t.Fatal(err)
			}
			other := lk.Session()
			src := &racingSource{
				schema: arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil),
				rows:   [][]any{{int64(1), "x"}, {int64(3), "z"}},
				race: func() error {
					_, err := other.SQL(ctx, "INSERT INTO t VALUES (4, 'd')")
					return err
				},
			}
			if err := sess.register(ctx, "incoming", src); err != nil {
				t.Fatal(err)
			}
			if err := sess.SetWriteRetries(retries); err != nil {
				t.Fatal(err)
			}
			res, err := sess.SQL(ctx, `MERGE INTO t USING incoming s ON t.id = s.id
				WHEN MATCHED THEN UPDATE SET v = s.v
				WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v)`)
			if retries == 0 {
				if !errors.Is(err, ErrCommitConflict) || !strings.Contains(err.Error(), "retry") {
					t.Fatalf("without retries: got %v, want ErrCommitConflict saying to retry", err)
				}
				if src.calls != 1 {
					t.Fatalf("planned %d times without retries", src.calls)
				}
				return
			}
			if err != nil {
				t.Fatalf("with a retry: %v", err)
			}
			bs, err := res.Collect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n := bs[0].Column(0).(*array.Int64).Value(0); n != 2 {
				t.Fatalf("count = %d, want 2", n)
			}
			if src.calls != 2 {
				t.Fatalf("planned %d times, want 2 (one lost race, one retry)", src.calls)
			}
			out, err := sess.SQL(ctx, "SELECT string_agg(id::varchar || v, ',' ORDER BY id) FROM t")
			if err != nil {
				t.Fatal(err)
			}
			rows, err := out.Collect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// The concurrent insert (4) survives and the merge applied on top.
			if got := rows[0].Column(0).(*array.String).Value(0); got != "1x,2b,3z,4d" {
				t.Fatalf("table after retry = %q, want 1x,2b,3z,4d", got)
			}
		})
	}
	lk, err := Open(context.Background(), filepath.Join(t.TempDir(), "lake"))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	sess := lk.Session()
	if _, err := sess.SQL(context.Background(), "SET write_retries = 1000"); err == nil || err.Error() != `SET write_retries: "1000" is not a retry count; use a whole number from 0 to 100` {
		t.Fatalf("bad SET write_retries: %v", err)
	}
	if err := sess.SetWriteRetries(-1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("SetWriteRetries(-1): %v", err)
	}
}
