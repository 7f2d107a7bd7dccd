package catalog_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
)

var arrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// records returns a reader over one batch with ids from..from+n-1.
func records(t *testing.T, mem memory.Allocator, from, n int64) array.RecordReader {
	t.Helper()
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	b := array.NewRecordBuilder(mem, arrowSchema)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append("row " + strconv.FormatInt(i, 10))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(arrowSchema, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}

	return rdr
}

func appendRows(t *testing.T, tbl *table.Table, from, n int64) (*table.Table, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rdr := records(t, mem, from, n)
	defer rdr.Release()
	txn := tbl.NewTransaction()
	if err := txn.Append(ctx, rdr, nil); err != nil {
		return nil, err
	}

	return txn.Commit(ctx)
}

// countRows scans the table and returns its number of rows.
func countRows(t *testing.T, tbl *table.Table) int64 {
	t.Helper()
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	defer at.Release()

	return at.NumRows()
}

func TestCommitTableSetsProperties(t *testing.T) {
	c := newLake(t)
	tbl := createTable(t, c, "events")
	before := mustPointer(t, c, "events")

	meta, loc, err := c.CommitTable(ctx, tbl.Identifier(),
		[]table.Requirement{table.AssertTableUUID(tbl.Metadata().TableUUID())},
		[]table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"owner": "ops"})})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	if got := meta.Properties()["owner"]; got != "ops" {
		t.Errorf("owner = %q, want ops", got)
	}
	if loc == before {
		t.Errorf("metadata location did not change")
	}
	if !strings.HasPrefix(filepath.Base(loc), "00001-") || !strings.HasSuffix(loc, ".metadata.json") {
		t.Errorf("metadata file %s is not named 00001-<uuid>.metadata.json", loc)
	}
	if got := mustPointer(t, c, "main", "events"); got != loc {
		t.Errorf("pointer = %s, want %s", got, loc)
	}
	// The table directory is <lake>/main/events-<8 hex>.
	rel, _ := filepath.Rel(c.Dir(), tbl.Location())
	if dir, base := filepath.Split(rel); dir != "main/" || len(base) != len("events-")+8 || !strings.HasPrefix(base, "events-") {
		t.Errorf("table location %s is not <lake>/main/events-<8 hex>", rel)
	}
	if filepath.Dir(loc) != filepath.Join(tbl.Location(), "metadata") {
		t.Errorf("metadata file %s is not under <location>/metadata", loc)
	}

	for _, name := range [][]string{{"events"}, {"main", "events"}, {"skade", "main", "events"}} {
		got, err := c.LoadTable(ctx, table.Identifier(name))
		if err != nil {
			t.Fatalf("load %v: %v", name, err)
		}
		if got.MetadataLocation() != loc || !slices.Equal(got.Identifier(), table.Identifier{"main", "events"}) {
			t.Errorf("load %v = (%v, %s), want (main.events, %s)", name, got.Identifier(), got.MetadataLocation(), loc)
		}
	}
}

func TestCommitWithoutUpdatesWritesNothing(t *testing.T) {
	c := newLake(t)
	tbl := createTable(t, c, "t")
	before := metadataFiles(t, c)
	_, loc, err := c.CommitTable(ctx, tbl.Identifier(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if loc != tbl.MetadataLocation() || !slices.Equal(metadataFiles(t, c), before) {
		t.Errorf("an empty commit moved the pointer or wrote files")
	}
}

func TestAppendThroughTransaction(t *testing.T) {
	c := newLake(t)
	tbl := createTable(t, c, "events")
	tbl, err := appendRows(t, tbl, 0, 10)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	tbl, err = appendRows(t, tbl, 10, 5)
	if err != nil {
		t.Fatalf("second append: %v", err)
	}
	loaded, err := c.LoadTable(ctx, table.Identifier{"events"})
	if err != nil {
		t.Fatal(err)
	}
	if loaded.MetadataLocation() != tbl.MetadataLocation() {
		t.Errorf("pointer %s, want %s", loaded.MetadataLocation(), tbl.MetadataLocation())
	}
	if n := countRows(t, loaded); n != 15 {
		t.Errorf("rows = %d, want 15", n)
	}
	if n := len(loaded.Metadata().Snapshots()); n != 2 {
		t.Errorf("snapshots = %d, want 2", n)
	}
	// Every file the table wrote lives in its directory.
	for _, f := range files(t, c.Dir()) {
		if f != catalog.DBFile && !strings.HasPrefix(f, "main/events-") {
			t.Errorf("file %s outside the table directory", f)
		}
	}
}

func TestFailedRequirement(t *testing.T) {
	c := newLake(t)
	tbl := createTable(t, c, "t")
	if _, _, err := c.CommitTable(ctx, tbl.Identifier(), nil,
		[]table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"a": "1"})}); err != nil {
		t.Fatal(err)
	}
	pointer := mustPointer(t, c, "t")
	before := files(t, c.Dir())

	tests := []struct {
		name   string
		reqs   []table.Requirement
		target error
		msg    string
	}{
		{
			name:   "uuid",
			reqs:   []table.Requirement{table.AssertTableUUID([16]byte{1})},
			target: table.ErrCommitFailed,
			msg:    "commit to table main.t failed: requirement failed: UUID mismatch",
		},
		{
			name:   "schema id",
			reqs:   []table.Requirement{table.AssertCurrentSchemaID(7)},
			target: table.ErrCommitFailed,
			msg:    "commit to table main.t failed: requirement failed: current schema id has changed: expected 7, found 0; reload the table and retry",
		},
		{
			name:   "create over existing",
			reqs:   []table.Requirement{table.AssertCreate()},
			target: icecatalog.ErrTableAlreadyExists,
			msg:    "commit to table main.t failed: the table already exists; choose another name, or drop the table first",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := c.CommitTable(ctx, table.Identifier{"t"}, tt.reqs,
				[]table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"b": "2"})})
			wantErr(t, err, tt.target, tt.msg)
			if !errors.Is(err, table.ErrCommitFailed) {
				t.Errorf("error %q does not wrap table.ErrCommitFailed", err)
			}
			if got := mustPointer(t, c, "t"); got != pointer {
				t.Errorf("pointer moved to %s", got)
			}
			if got := files(t, c.Dir()); !slices.Equal(got, before) {
				t.Errorf("files changed:\n got %v\nwant %v", got, before)
			}
		})
	}
}

func TestCommitMissingTable(t *testing.T) {
	c := newLake(t)
	_, _, err := c.CommitTable(ctx, table.Identifier{"nope"},
		[]table.Requirement{table.AssertTableUUID([16]byte{1})},
		[]table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"b": "2"})})
	wantErr(t, err, icecatalog.ErrNoSuchTable,
		"commit to table main.nope failed: the table does not exist; check the name, or create the table first")
	if _, err := os.Stat(filepath.Join(c.Dir(), "main")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed commit created the namespace directory: %v", err)
	}
}
