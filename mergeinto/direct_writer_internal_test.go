package mergeinto

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
)

// directTable creates a table of id (NOT NULL), a low-cardinality
// string, a unique string, a string with NULLs and a double, with small
// row groups.
func directTable(t *testing.T, props iceberg.Properties) *table.Table {
	t.Helper()
	cat, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "status", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "code", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "note", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 5, Name: "amount", Type: iceberg.PrimitiveTypes.Float64})
	tbl, err := cat.CreateTable(context.Background(), table.Identifier{"main", "t"}, sch, icecatalog.WithProperties(props))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// directBatches are 12 batches of 2,000 rows (one empty): a status value
// first seen in batch 5, a unique code per row, notes NULL on every third
// row and in the whole of batch 8, and empty notes from batch 6 on (the
// least value; arrow-go's dictionary statistics would miss it).
func directBatches(t *testing.T, tbl *table.Table) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	as, err := TargetSchema(tbl)
	if err != nil {
		t.Fatal(err)
	}
	statuses := []string{"old", "updated", "new"}
	var out []arrow.RecordBatch
	id := int64(0)
	for b := range 12 {
		n := 2000
		if b == 3 {
			n = 0
		}
		bld := array.NewRecordBuilder(memory.DefaultAllocator, as)
		for range n {
			bld.Field(0).(*array.Int64Builder).Append(id)
			st := statuses[id%3]
			if b >= 5 && id%7 == 0 {
				st = "late"
			}
			bld.Field(1).(*array.StringBuilder).Append(st)
			bld.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("code-%08d", id*7919%100003))
			if id%3 == 0 || b == 8 {
				bld.Field(3).(*array.StringBuilder).AppendNull()
			} else if b >= 6 && id%5 == 0 {
				bld.Field(3).(*array.StringBuilder).Append("")
			} else {
				bld.Field(3).(*array.StringBuilder).Append(strings.Repeat("n", 1+int(id%5)))
			}
			bld.Field(4).(*array.Float64Builder).Append(float64(id) * 1.5)
			id++
		}
		out = append(out, bld.NewRecordBatch())
		bld.Release()
	}
	return as, out
}

func seqOf(bs []arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, b := range bs {
			b.Retain()
			if !yield(b, nil) {
				return
			}
		}
	}
}

func collectFiles(t *testing.T, files iter.Seq2[iceberg.DataFile, error]) []iceberg.DataFile {
	t.Helper()
	var out []iceberg.DataFile
	for df, err := range files {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, df)
	}
	return out
}

// readFile reads a Parquet file with arrow-go's plain reader (not
// skade's) and renders its rows.
func readFile(t *testing.T, path string) (rows []string, md map[string]string, dictChunks int, stats []string) {
	t.Helper()
	path = strings.TrimPrefix(path, "file://")
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	md = map[string]string{}
	kv := r.MetaData().KeyValueMetadata()
	for i, k := range kv.Keys() {
		md[k] = kv.Values()[i]
	}
	for g := range r.NumRowGroups() {
		cc, err := r.MetaData().RowGroup(g).ColumnChunk(1)
		if err != nil {
			t.Fatal(err)
		}
		if cc.HasDictionaryPage() {
			dictChunks++
		}
		for c := range r.MetaData().Schema.NumColumns() {
			cc, err := r.MetaData().RowGroup(g).ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			st, err := cc.Statistics()
			if err != nil {
				t.Fatal(err)
			}
			if st == nil {
				stats = append(stats, fmt.Sprintf("rg %d col %d: none", g, c))
				continue
			}
			line := fmt.Sprintf("rg %d col %d: nulls %d values %d", g, c, st.NullCount(), st.NumValues())
			if st.HasMinMax() {
				line += fmt.Sprintf(" min %q max %q", st.EncodeMin(), st.EncodeMax())
			}
			stats = append(stats, line)
		}
	}
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{BatchSize: 1000}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Release()
	tr := array.NewTableReader(tb, 1000)
	defer tr.Release()
	for tr.Next() {
		b := tr.RecordBatch()
		for i := range int(b.NumRows()) {
			var sb strings.Builder
			for c := range int(b.NumCols()) {
				if b.Column(c).IsNull(i) {
					sb.WriteString("NULL|")
				} else {
					sb.WriteString(b.Column(c).ValueStr(i) + "|")
				}
			}
			rows = append(rows, sb.String())
		}
	}
	return rows, md, dictChunks, stats
}

// The direct writer writes what WriteRecords writes: the same rows, the
// same Iceberg metrics, the same footer metadata and row groups; only the
// string columns' encoding may differ, and its status column is
// dictionary-encoded in every row group (a new value in batch 5 included).
func TestDirectWriterMatchesWriteRecords(t *testing.T) {
	tbl := directTable(t, iceberg.Properties{
		table.ParquetRowGroupLimitKey:        "3000",
		table.ParquetPageRowLimitKey:         "500",
		table.ParquetDictSizeBytesKey:        "65536",
		"write.metadata.metrics.column.code": "truncate(4)",
	})
	as, bs := directBatches(t, tbl)
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	direct, plain := writeBothWays(t, tbl, as, bs)
	if len(direct) != 1 || len(plain) != 1 {
		t.Fatalf("files: direct %d, WriteRecords %d; want one each", len(direct), len(plain))
	}
	d, w := direct[0], plain[0]
	if d.Count() != 22000 || d.Count() != w.Count() {
		t.Fatalf("record count: direct %d, WriteRecords %d, want 22000", d.Count(), w.Count())
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"value counts", d.ValueCounts(), w.ValueCounts()},
		{"null counts", d.NullValueCounts(), w.NullValueCounts()},
		{"NaN counts", d.NaNValueCounts(), w.NaNValueCounts()},
		{"lower bounds", d.LowerBoundValues(), w.LowerBoundValues()},
		{"upper bounds", d.UpperBoundValues(), w.UpperBoundValues()},
		{"split offsets count", len(d.SplitOffsets()), len(w.SplitOffsets())},
		{"content", d.ContentType(), w.ContentType()},
		{"format", d.FileFormat(), w.FileFormat()},
		{"spec", d.SpecID(), w.SpecID()},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: direct %v, WriteRecords %v", c.name, c.got, c.want)
		}
	}
	if len(d.SplitOffsets()) != 8 {
		t.Errorf("direct file has %d row groups, want 8 (22,000 rows by 3,000)", len(d.SplitOffsets()))
	}
	dr, dmd, dict, dst := readFile(t, d.FilePath())
	wr, wmd, _, wst := readFile(t, w.FilePath())
	if !reflect.DeepEqual(dr, wr) {
		t.Fatalf("rows differ: direct %d rows, WriteRecords %d rows", len(dr), len(wr))
	}
	// the Parquet statistics other engines prune by, row group by row group
	sameStats(t, dst, wst)
	if !reflect.DeepEqual(dmd, wmd) {
		t.Errorf("footer metadata: direct %v, WriteRecords %v", dmd, wmd)
	}
	// Row group 2 (rows 6,000-8,999) took its dictionary from batch 4;
	// batch 5 (from row 8,000) brings "late", and the chunk falls back to
	// plain; row group 3 starts inside batch 5, with "late".
	if dict != len(d.SplitOffsets())-1 {
		t.Errorf("status is dictionary-encoded in %d of %d row groups, want all but one", dict, len(d.SplitOffsets()))
	}
	if st, err := os.Stat(strings.TrimPrefix(d.FilePath(), "file://")); err != nil || st.Size() != d.FileSizeBytes() {
		t.Errorf("file size: entry %d, stat %v %v", d.FileSizeBytes(), st, err)
	}
}

// Files roll at the target size, every row lands in one of them, and the
// names are unique.
func TestDirectWriterRollsFiles(t *testing.T) {
	ctx := context.Background()
	tbl := directTable(t, iceberg.Properties{table.ParquetRowGroupLimitKey: "1000"})
	as, bs := directBatches(t, tbl)
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	p := planDirect(ctx, tbl, as, 20_000)
	files := collectFiles(t, p.writeRecords(ctx, seqOf(bs)))
	if len(files) < 3 {
		t.Fatalf("%d files at a 20,000-byte target, want several", len(files))
	}
	var rows int64
	seen := map[string]bool{}
	var all []string
	for _, df := range files {
		rows += df.Count()
		if seen[df.FilePath()] {
			t.Fatalf("file %s written twice", df.FilePath())
		}
		seen[df.FilePath()] = true
		r, _, _, _ := readFile(t, df.FilePath())
		if int64(len(r)) != df.Count() {
			t.Errorf("%s: %d rows, entry says %d", df.FilePath(), len(r), df.Count())
		}
		all = append(all, r...)
	}
	if rows != 22000 || len(all) != 22000 {
		t.Fatalf("rows: entries %d, read %d, want 22000", rows, len(all))
	}
	if !strings.HasPrefix(all[21999], "21999|") {
		t.Errorf("last row %q, want id 21999 (order kept)", all[21999])
	}
}

// A failed write leaves no file behind and says why.
func TestDirectWriterFailureLeavesNoFile(t *testing.T) {
	ctx := context.Background()
	tbl := directTable(t, nil)
	as, bs := directBatches(t, tbl)
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	dataDir := filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "data")
	countFiles := func() int {
		n := 0
		_ = filepath.WalkDir(dataDir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return nil
		})
		return n
	}
	boom := errors.New("source failed")
	failing := func(yield func(arrow.RecordBatch, error) bool) {
		for _, b := range bs[:3] {
			b.Retain()
			if !yield(b, nil) {
				return
			}
		}
		yield(nil, boom)
	}
	p := planDirect(ctx, tbl, as, 0)
	var got error
	for _, err := range p.writeRecords(ctx, failing) {
		if err != nil {
			got = err
		}
	}
	if !errors.Is(got, boom) {
		t.Fatalf("error %v, want %v", got, boom)
	}
	if n := countFiles(); n != 0 {
		t.Fatalf("%d files left behind after a failed write", n)
	}

	// a NULL in the NOT NULL id column
	bld := array.NewRecordBuilder(memory.DefaultAllocator, as)
	bld.Field(0).(*array.Int64Builder).AppendNull()
	bld.Field(1).(*array.StringBuilder).Append("x")
	bld.Field(2).(*array.StringBuilder).Append("y")
	bld.Field(3).(*array.StringBuilder).AppendNull()
	bld.Field(4).(*array.Float64Builder).Append(1)
	bad := bld.NewRecordBatch()
	bld.Release()
	defer bad.Release()
	got = nil
	for _, err := range p.writeRecords(ctx, seqOf([]arrow.RecordBatch{bs[0], bad})) {
		if err != nil {
			got = err
		}
	}
	if got == nil || !strings.Contains(got.Error(), "column id is NOT NULL") {
		t.Fatalf("error %v, want the NOT NULL column named", got)
	}
	if n := countFiles(); n != 0 {
		t.Fatalf("%d files left behind after a NOT NULL violation", n)
	}
}

// The direct writer declines what only WriteRecords does: partitioned
// tables, and inputs not in the table's own layout.
func TestPlanDirectDeclines(t *testing.T) {
	ctx := context.Background()
	tbl := directTable(t, nil)
	as, _ := directBatches(t, tbl)
	if planDirect(ctx, tbl, as, 0) == nil {
		t.Fatal("declined the plain table")
	}
	other := arrow.NewSchema(append(as.Fields()[:4:4], arrow.Field{Name: "amount", Type: arrow.PrimitiveTypes.Float32, Nullable: true}), nil)
	if planDirect(ctx, tbl, other, 0) != nil {
		t.Error("took an input whose column type differs from the table's")
	}
	tx := tbl.NewTransaction()
	us := tx.UpdateSpec(false)
	us.AddIdentity("status")
	if err := us.Commit(); err != nil {
		t.Fatal(err)
	}
	part, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if planDirect(ctx, part, as, 0) != nil {
		t.Error("took a partitioned table")
	}
}

// A dictionary that outgrows its limits starts again from the batch: its
// indices still name each batch's values.
func TestStringDictRestarts(t *testing.T) {
	sd := newStringDict(memory.DefaultAllocator, 64)
	defer sd.release()
	for round := range 3 {
		bld := array.NewStringBuilder(memory.DefaultAllocator)
		var want []string
		for i := range 10 {
			v := fmt.Sprintf("round%d-value%d", round, i)
			if i == 4 {
				bld.AppendNull()
				want = append(want, "NULL")
				continue
			}
			bld.Append(v)
			want = append(want, v)
		}
		s := bld.NewStringArray()
		bld.Release()
		a := sd.encode(s).(*array.Dictionary)
		dict := a.Dictionary().(*array.String)
		var got []string
		for i := range a.Len() {
			if a.IsNull(i) {
				got = append(got, "NULL")
				continue
			}
			got = append(got, dict.Value(a.GetValueIndex(i)))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: decoded %v, want %v", round, got, want)
		}
		if dict.Len() > 9 {
			t.Errorf("round %d: dictionary of %d values kept past the 64-byte limit", round, dict.Len())
		}
		a.Release()
		s.Release()
	}
}

// dictChunks gives a patch's string chunks one dictionary, the same
// array for every chunk, whose indices name each chunk's values; it
// declines chunks holding an empty string, mostly distinct values, only
// NULLs, and values past its limit.
func TestDictChunks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	strs := func(vals ...string) arrow.Array {
		bld := array.NewStringBuilder(mem)
		defer bld.Release()
		for _, v := range vals {
			if v == "NULL" {
				bld.AppendNull()
			} else {
				bld.Append(v)
			}
		}
		return bld.NewArray()
	}
	decode := func(a arrow.Array) []string {
		var out []string
		d := a.(*array.Dictionary)
		for i := range d.Len() {
			if d.IsNull(i) {
				out = append(out, "NULL")
				continue
			}
			out = append(out, d.Dictionary().(*array.String).Value(d.GetValueIndex(i)))
		}
		return out
	}
	chunks := [][]string{{"old", "NULL", "old"}, {"new", "old"}, {"NULL"}, {"updated", "new", "updated"}}
	var in []arrow.Array
	for _, c := range chunks {
		in = append(in, strs(c...))
	}
	defer releaseAll(in)
	out, ok := dictChunks(mem, in, 1<<20)
	if !ok {
		t.Fatal("declined a column of three values")
	}
	for i, a := range out {
		if got := decode(a); !reflect.DeepEqual(got, chunks[i]) {
			t.Errorf("chunk %d decodes as %v, want %v", i, got, chunks[i])
		}
		if a.(*array.Dictionary).Dictionary().Data() != out[0].(*array.Dictionary).Dictionary().Data() {
			t.Errorf("chunk %d has a dictionary of its own", i)
		}
	}
	if n := out[0].(*array.Dictionary).Dictionary().Len(); n != 3 {
		t.Errorf("dictionary of %d values, want 3", n)
	}
	releaseAll(out)

	many := make([]string, 2*sampleRows)
	for i := range many {
		many[i] = fmt.Sprintf("v%d", i%(sampleRows+1))
	}
	for _, tc := range []struct {
		name   string
		chunks [][]string
		limit  int64
	}{
		{"an empty string", [][]string{{"a"}, {"b", ""}}, 1 << 20},
		{"mostly distinct", [][]string{many}, 1 << 20},
		{"past the limit", [][]string{{"aaaaaaaa", "bbbbbbbb"}, {"cccccccc", "dddddddd"}}, 30},
		{"all NULL", [][]string{{"NULL"}, {"NULL", "NULL"}}, 1 << 20},
	} {
		var in []arrow.Array
		for _, c := range tc.chunks {
			in = append(in, strs(c...))
		}
		if out, ok := dictChunks(mem, in, tc.limit); ok {
			t.Errorf("%s: took the column", tc.name)
			releaseAll(out)
		}
		releaseAll(in)
	}
}

// BenchmarkStringDictEncode encodes batches of 8,192 strings of a few
// values (as a status column), reporting ns per value.
func BenchmarkStringDictEncode(b *testing.B) {
	for _, distinct := range []int{2, 8, 1000} {
		b.Run(fmt.Sprintf("distinct=%d", distinct), func(b *testing.B) {
			bld := array.NewStringBuilder(memory.DefaultAllocator)
			for i := range 8192 {
				bld.Append(fmt.Sprintf("status-%d", (i*7919)%distinct))
			}
			s := bld.NewStringArray()
			bld.Release()
			defer s.Release()
			sd := newStringDict(memory.DefaultAllocator, 1<<20)
			defer sd.release()
			for b.Loop() {
				sd.encode(s).Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/8192, "ns/value")
		})
	}
}

// A row group whose status column lacks a value of the file's dictionary
// (seen in an earlier row group) must still get its own values as its
// statistics: arrow-go's statistics of a dictionary batch whose
// dictionary is the chunk's own are the whole dictionary's.
func TestDirectWriterStatsOfAValueGone(t *testing.T) {
	tbl := directTable(t, iceberg.Properties{table.ParquetRowGroupLimitKey: "3000"})
	as, err := TargetSchema(tbl)
	if err != nil {
		t.Fatal(err)
	}
	var bs []arrow.RecordBatch
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	for b := range 9 {
		bld := array.NewRecordBuilder(memory.DefaultAllocator, as)
		for i := range 1000 {
			id := int64(b*1000 + i)
			bld.Field(0).(*array.Int64Builder).Append(id)
			// row group 0: "a" and "z"; row group 1: "a" only; row
			// group 2: "m" and "a"
			switch {
			case b < 3 && i%2 == 1:
				bld.Field(1).(*array.StringBuilder).Append("z")
			case b >= 6 && i%2 == 1:
				bld.Field(1).(*array.StringBuilder).Append("m")
			default:
				bld.Field(1).(*array.StringBuilder).Append("a")
			}
			bld.Field(2).(*array.StringBuilder).Append("c")
			bld.Field(3).(*array.StringBuilder).Append("n")
			bld.Field(4).(*array.Float64Builder).Append(float64(id))
		}
		bs = append(bs, bld.NewRecordBatch())
		bld.Release()
	}
	direct, plain := writeBothWays(t, tbl, as, bs)
	_, _, dict, dst := readFile(t, direct[0].FilePath())
	_, _, _, wst := readFile(t, plain[0].FilePath())
	if dict != 3 {
		t.Errorf("status is dictionary-encoded in %d of 3 row groups", dict)
	}
	sameStats(t, dst, wst)
	if !reflect.DeepEqual(direct[0].UpperBoundValues(), plain[0].UpperBoundValues()) {
		t.Errorf("upper bounds: direct %v, WriteRecords %v", direct[0].UpperBoundValues(), plain[0].UpperBoundValues())
	}
}

// sameStats reports each column chunk whose statistics (as readFile
// renders them) differ between the direct writer's file and
// WriteRecords's.
func sameStats(t *testing.T, direct, plain []string) {
	t.Helper()
	for i := range min(len(direct), len(plain)) {
		if direct[i] != plain[i] {
			t.Errorf("statistics: direct %s, WriteRecords %s", direct[i], plain[i])
		}
	}
	if len(direct) != len(plain) {
		t.Errorf("statistics of %d column chunks, WriteRecords %d", len(direct), len(plain))
	}
}

// writeBothWays writes bs through the direct writer and through
// iceberg-go's WriteRecords, into tbl's data directory.
func writeBothWays(t *testing.T, tbl *table.Table, as *arrow.Schema, bs []arrow.RecordBatch) (direct, plain []iceberg.DataFile) {
	t.Helper()
	ctx := context.Background()
	p := planDirect(ctx, tbl, as, 0)
	if p == nil {
		t.Fatal("planDirect refused an unpartitioned table with string columns")
	}
	return collectFiles(t, p.writeRecords(ctx, seqOf(bs))), collectFiles(t, table.WriteRecords(ctx, tbl, as, seqOf(bs)))
}
