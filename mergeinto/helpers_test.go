package mergeinto_test

import (
	"context"
	"errors"
	"flag"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/mergeinto"
)

var ctx = context.Background()

var (
	i64   = arrow.PrimitiveTypes.Int64
	i32   = arrow.PrimitiveTypes.Int32
	str   = arrow.BinaryTypes.String
	bool_ = arrow.FixedWidthTypes.Boolean
)

// fixture is one table in a fresh lake.
type fixture struct {
	t      *testing.T
	cat    *catalog.Catalog
	id     table.Identifier
	name   string
	schema *arrow.Schema // the target layout (mergeinto.TargetSchema)
}

// newFixture creates table name with the given columns (nullable unless
// the field says otherwise), identity-partitioned on partCols.
func newFixture(t *testing.T, name string, schema *arrow.Schema, partCols ...string) *fixture {
	t.Helper()
	cat, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newFixtureIn(t, cat, name, schema, partCols...)
}

func newFixtureIn(t *testing.T, cat *catalog.Catalog, name string, schema *arrow.Schema, partCols ...string) *fixture {
	t.Helper()
	isch, err := table.ArrowSchemaToIcebergWithFreshIDs(schema, true)
	if err != nil {
		t.Fatal(err)
	}
	var opts []iceberg.PartitionOption
	for i, c := range partCols {
		f, ok := isch.FindFieldByName(c)
		if !ok {
			t.Fatalf("no column %s", c)
		}
		id := iceberg.PartitionDataIDStart + i
		opts = append(opts, iceberg.AddPartitionFieldBySourceID(f.ID, c, iceberg.IdentityTransform{}, isch, &id))
	}
	spec, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		t.Fatal(err)
	}
	id := table.Identifier{"main", name}
	tbl, err := cat.CreateTable(ctx, id, isch, icecatalog.WithPartitionSpec(&spec))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := mergeinto.TargetSchema(tbl)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, cat: cat, id: id, name: name, schema: ts}
}

func (f *fixture) table() *table.Table {
	f.t.Helper()
	tbl, err := f.cat.LoadTable(ctx, f.id)
	if err != nil {
		f.t.Fatal(err)
	}
	return tbl
}

// setProperties commits props on the table.
func (f *fixture) setProperties(props iceberg.Properties) {
	f.t.Helper()
	txn := f.cat.WithFS(f.table(), iceio.LocalFS{}).NewTransaction()
	if err := txn.SetProperties(props); err != nil {
		f.t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		f.t.Fatal(err)
	}
}

// appendRows commits rows as one append (one data file per partition).
func (f *fixture) appendRows(rows ...[]any) {
	f.t.Helper()
	b := mustBatch(f.t, f.schema, rows...)
	defer b.Release()
	rdr, err := array.NewRecordReader(f.schema, []arrow.RecordBatch{b})
	if err != nil {
		f.t.Fatal(err)
	}
	defer rdr.Release()
	txn := f.cat.WithFS(f.table(), iceio.LocalFS{}).NewTransaction()
	if err := txn.Append(ctx, rdr, nil); err != nil {
		f.t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		f.t.Fatal(err)
	}
}

// appendFiles commits one data file per rows set, in one commit.
func (f *fixture) appendFiles(files ...[][]any) {
	f.t.Helper()
	txn := f.cat.WithFS(f.table(), iceio.LocalFS{}).NewTransaction()
	for _, rows := range files {
		b := mustBatch(f.t, f.schema, rows...)
		rdr, err := array.NewRecordReader(f.schema, []arrow.RecordBatch{b})
		if err != nil {
			f.t.Fatal(err)
		}
		if err := txn.Append(ctx, rdr, nil); err != nil {
			f.t.Fatal(err)
		}
		rdr.Release()
		b.Release()
	}
	if _, err := txn.Commit(ctx); err != nil {
		f.t.Fatal(err)
	}
}

// rows renders the current table as sorted "a|b|c" lines.
func (f *fixture) rows() []string {
	f.t.Helper()
	return tableRows(f.t, f.table())
}

func tableRows(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	return stagedRows(t, tbl.Scan())
}

func renderRows(b arrow.RecordBatch) []string {
	var out []string
	for r := 0; r < int(b.NumRows()); r++ {
		var parts []string
		for c := 0; c < int(b.NumCols()); c++ {
			col := b.Column(c)
			if col.IsNull(r) {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, col.ValueStr(r))
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out
}

// files is the number of data files in the current snapshot.
func (f *fixture) files() int {
	f.t.Helper()
	tbl := f.table()
	if tbl.CurrentSnapshot() == nil {
		return 0
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return len(tasks)
}

// idempotent treats removing a missing file as done, as lake does.
type idempotent struct{ *catalog.Tracker }

func (r idempotent) Remove(name string) error {
	if err := r.Tracker.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// run is one merge attempt: a tracked table, a transaction, Execute.
type run struct {
	tracker *catalog.Tracker
	tbl     *table.Table
	txn     *table.Transaction
}

func (f *fixture) begin() *run {
	// Tests need no durability: a plain local IO skips the fsyncs of the
	// catalog's DurableFS (commits still go through the catalog).
	tracker := catalog.NewTracker(iceio.LocalFS{})
	tbl := f.cat.WithFS(f.table(), idempotent{tracker})
	return &run{tracker: tracker, tbl: tbl, txn: tbl.NewTransaction()}
}

// spec fills in the target fields of s.
func (f *fixture) spec(r *run, s *mergeinto.Spec) *mergeinto.Spec {
	s.Table = f.name
	s.Target = r.tbl
	s.Snapshot = r.tbl.CurrentSnapshot()
	return s
}

// merge runs s to completion: Execute, then Commit when something was
// staged; on failure every file the attempt created is removed (and the
// test checks that Execute already removed its data files).
func (f *fixture) merge(s *mergeinto.Spec) (*mergeinto.Result, error) {
	f.t.Helper()
	r := f.begin()
	f.spec(r, s)
	res, err := mergeinto.Execute(ctx, s, r.txn)
	if err != nil {
		for _, p := range r.tracker.Created() {
			if strings.HasSuffix(p, ".parquet") {
				if _, serr := os.Stat(strings.TrimPrefix(p, "file://")); serr == nil {
					f.t.Errorf("failed merge left data file %s behind", p)
				}
			}
		}
		r.tracker.RemoveCreated()
		return nil, err
	}
	if res.Staged {
		if _, err := r.txn.Commit(ctx); err != nil {
			r.tracker.RemoveCreated()
			return res, err
		}
	} else if len(r.tracker.Created()) != 0 {
		f.t.Errorf("a merge that staged nothing created files: %v", r.tracker.Created())
	}
	return res, nil
}

func (f *fixture) mustMerge(s *mergeinto.Spec) *mergeinto.Result {
	f.t.Helper()
	res, err := f.merge(s)
	if err != nil {
		f.t.Fatalf("merge: %v", err)
	}
	return res
}

var _ iceio.IO = idempotent{}

func mustBatch(t testing.TB, schema *arrow.Schema, rows ...[]any) arrow.RecordBatch {
	t.Helper()
	b, err := exec.BuildBatch(memory.DefaultAllocator, schema, rows)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// values is a source operator over rows.
func values(t testing.TB, schema *arrow.Schema, rows ...[]any) exec.Operator {
	t.Helper()
	var batches []arrow.RecordBatch
	if len(rows) > 0 {
		b := mustBatch(t, schema, rows...)
		defer b.Release()
		batches = append(batches, b)
	}
	v, err := exec.NewValues(schema, batches)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func schemaOf(fields ...arrow.Field) *arrow.Schema { return arrow.NewSchema(fields, nil) }

func field(name string, typ arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: typ, Nullable: true}
}

func col(i int, typ arrow.DataType) exec.Expr { return &exec.Column{Index: i, Type: typ} }

func lit(t testing.TB, v any) exec.Expr {
	t.Helper()
	l, err := exec.NewLiteral(v)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func call(t testing.TB, name string, args ...exec.Expr) exec.Expr {
	t.Helper()
	e, err := exec.NewCall(name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func set(c int, e exec.Expr) mergeinto.Assignment { return mergeinto.Assignment{Column: c, Expr: e} }

func wantRows(t *testing.T, got []string, want ...string) {
	t.Helper()
	w := slices.Clone(want)
	slices.Sort(w)
	if !slices.Equal(got, w) {
		t.Fatalf("rows:\n got  %q\n want %q", got, w)
	}
}

func wantErr(t *testing.T, err error, substr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one containing %q", substr)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("error %q\n does not contain %q", err, substr)
	}
}

func arrowReader(schema *arrow.Schema, bs []arrow.RecordBatch) (array.RecordReader, error) {
	return array.NewRecordReader(schema, bs)
}

func mustDec(t testing.TB, s string, dt *arrow.Decimal128Type) decimal128.Num {
	t.Helper()
	n, err := decimal128.FromString(s, dt.Precision, dt.Scale)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// tableRowsFiltered scans with col = v, so partition pruning must agree
// with the rows' values.
func tableRowsFiltered(t *testing.T, tbl *table.Table, col, v string) []string {
	t.Helper()
	at, err := tbl.Scan(table.WithRowFilter(iceberg.EqualTo(iceberg.Reference(col), v))).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	var out []string
	for tr.Next() {
		out = append(out, renderRows(tr.RecordBatch())...)
	}
	slices.Sort(out)
	return out
}

// longTests runs the randomized tests at their full size (go test -long).
var longTests = flag.Bool("long", false, "run the randomized tests at full size (slower)")
