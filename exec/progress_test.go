package exec_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/lake"
)

// A TableScan under a context carrying a Progress reports the files it
// planned, each file it read to the end and the rows it returned; its
// files_read metric agrees.
func TestTableScanProgress(t *testing.T) {
	ctx := context.Background()
	lk, err := lake.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	exec1(t, ctx, lk, "CREATE TABLE t (id BIGINT, v VARCHAR, n INT) WITH ('write.merge.mode' = 'merge-on-read')")
	insertFiles(t, ctx, lk, 4, 500)
	mergeRound(t, ctx, lk, 0) // position deletes on every file, one new file
	tbl := table1(t, ctx, lk)
	it := tbl.Iceberg()

	planned := func(opts ...lake.ScanOption) int64 {
		files, err := tbl.PlanFiles(ctx, opts...)
		if err != nil {
			t.Fatal(err)
		}
		withDeletes := 0
		for _, f := range files {
			if f.DeleteFiles > 0 {
				withDeletes++
			}
		}
		if withDeletes == 0 {
			t.Fatalf("setup: no planned file has deletes")
		}
		return int64(len(files))
	}
	pruned := iceberg.LessThan(iceberg.Reference("id"), int64(500))
	all := planned()
	for _, c := range []struct {
		name   string
		filter iceberg.BooleanExpression
		files  int64
	}{
		{"full", nil, all},
		{"pruned", pruned, planned(lake.Filter(pruned))},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "pruned" && c.files >= all {
				t.Fatalf("setup: the filter prunes nothing (%d of %d files)", c.files, all)
			}
			var p exec.Progress
			pctx := exec.WithProgress(ctx, &p)
			s, err := exec.NewTableScan("t", it, it.CurrentSnapshot(), []string{"id"}, arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil), c.filter)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Open(pctx); err != nil {
				t.Fatal(err)
			}
			if got := p.FilesTotal.Load(); got != c.files {
				t.Fatalf("after Open: %d files planned, want %d", got, c.files)
			}
			var rows int64
			for {
				b, err := s.Next(pctx)
				if err == exec.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				rows += b.NumRows()
				if done := p.FilesDone.Load(); done >= c.files {
					t.Fatalf("%d files done while batches remain, of %d", done, c.files)
				}
				b.Release()
			}
			if got := p.FilesDone.Load(); got != c.files {
				t.Fatalf("after EOF: %d files done, want %d", got, c.files)
			}
			if got := p.Rows.Load(); got != rows || rows == 0 {
				t.Fatalf("progress counted %d rows, the scan returned %d", got, rows)
			}
			if got := s.Metrics().Extra()["files_read"]; got != c.files {
				t.Fatalf("files_read = %d, want %d", got, c.files)
			}
		})
	}

	// a scan closed early has read fewer files than it planned
	var p exec.Progress
	pctx := exec.WithProgress(ctx, &p)
	s, err := exec.NewTableScan("t", it, it.CurrentSnapshot(), []string{"id"}, arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(pctx); err != nil {
		t.Fatal(err)
	}
	b, err := s.Next(pctx)
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if done, total := p.FilesDone.Load(), p.FilesTotal.Load(); done >= total || total != all {
		t.Fatalf("closed after one batch: %d of %d files done", done, total)
	}
}
