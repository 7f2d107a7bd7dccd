package lake_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Position delete files are compressed as Iceberg's
// write.delete.parquet.compression-codec says, or, when it is unset, as
// the data files are (write.parquet.compression-codec).
func TestPositionDeleteFilesCompression(t *testing.T) {
	lk := sqlLake(t)
	s := lk.Session()
	for i, c := range []struct {
		props         string
		data, deletes compress.Compression
		mergeOnRead   string
	}{
		{"", compress.Codecs.Zstd, compress.Codecs.Zstd, "write.delete.mode"},
		{", 'write.parquet.compression-codec' = 'gzip'", compress.Codecs.Gzip, compress.Codecs.Gzip, "write.delete.mode"},
		{", 'write.delete.parquet.compression-codec' = 'snappy'", compress.Codecs.Zstd, compress.Codecs.Snappy, "write.update.mode"},
		{", 'write.parquet.compression-codec' = 'gzip', 'write.delete.parquet.compression-codec' = 'uncompressed'", compress.Codecs.Gzip, compress.Codecs.Uncompressed, "write.merge.mode"},
	} {
		name := fmt.Sprintf("pd%d", i)
		mustExec(t, s, fmt.Sprintf(`CREATE TABLE %[1]s (id BIGINT, v VARCHAR) WITH ('%[2]s' = 'merge-on-read'%[3]s);
			INSERT INTO %[1]s SELECT i, 'x' FROM range(0, 100) r(i)`, name, c.mergeOnRead, c.props))
		switch c.mergeOnRead {
		case "write.delete.mode":
			mustExec(t, s, fmt.Sprintf("DELETE FROM %s WHERE id %% 7 = 0", name))
		case "write.update.mode":
			mustExec(t, s, fmt.Sprintf("UPDATE %s SET v = 'y' WHERE id %% 7 = 0", name))
		default:
			mustExec(t, s, fmt.Sprintf("MERGE INTO %s t USING (SELECT i * 7 AS id FROM range(0, 15) r(i)) u ON t.id = u.id WHEN MATCHED THEN DELETE", name))
		}
		if got := query(t, s, fmt.Sprintf("SELECT count(*) FROM %s WHERE v = 'x'", name)); got[0] != "85" {
			t.Fatalf("%s: %v rows left unchanged, want 85", name, got)
		}
		dataPaths := query(t, s, fmt.Sprintf("SELECT file_path FROM %s$data_files", name))
		for _, kind := range []struct {
			table string
			want  compress.Compression
		}{{"data_files", c.data}, {"delete_files", c.deletes}} {
			paths := query(t, s, fmt.Sprintf("SELECT file_path FROM %s$%s", name, kind.table))
			if len(paths) == 0 {
				t.Fatalf("%s: no %s", name, kind.table)
			}
			for _, p := range paths {
				r, err := file.OpenParquetFile(strings.TrimPrefix(p, "file://"), false)
				if err != nil {
					t.Fatal(err)
				}
				md := r.MetaData()
				if kind.table == "delete_files" {
					checkPositionDeleteFile(t, r, dataPaths)
				}
				for g := 0; g < md.NumRowGroups(); g++ {
					for col := 0; col < md.NumColumns(); col++ {
						cc, err := md.RowGroup(g).ColumnChunk(col)
						if err != nil {
							t.Fatal(err)
						}
						if cc.Compression() != kind.want {
							t.Errorf("%s: %s %s column %d is %s, want %s", name, kind.table, p, col, cc.Compression(), kind.want)
						}
					}
				}
				r.Close()
			}
		}
	}
}

// checkPositionDeleteFile requires r to be a position delete file as
// Iceberg lays it out (file_path and pos, required, with their reserved
// field ids), of one data file among dataPaths, positions ascending,
// file_path dictionary-encoded (one value repeated).
func checkPositionDeleteFile(t *testing.T, r *file.Reader, dataPaths []string) {
	t.Helper()
	sc := r.MetaData().Schema
	if sc.NumColumns() != 2 {
		t.Fatalf("a position delete file of %d columns", sc.NumColumns())
	}
	for i, want := range []struct {
		name string
		id   int32
	}{{"file_path", 2147483546}, {"pos", 2147483545}} {
		c := sc.Column(i)
		if c.Name() != want.name || c.SchemaNode().FieldID() != want.id || c.MaxDefinitionLevel() != 0 {
			t.Fatalf("column %d: %s, field id %d, definition level %d; want %s, %d, required", i, c.Name(), c.SchemaNode().FieldID(), c.MaxDefinitionLevel(), want.name, want.id)
		}
	}
	for g := 0; g < r.NumRowGroups(); g++ {
		cc, err := r.MetaData().RowGroup(g).ColumnChunk(0)
		if err != nil {
			t.Fatal(err)
		}
		if !cc.HasDictionaryPage() {
			t.Fatalf("row group %d: file_path is not dictionary-encoded (%v)", g, cc.Encodings())
		}
	}
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() == 0 {
		t.Fatal("an empty position delete file")
	}
	var path string
	last := int64(-1)
	for _, ch := range tbl.Column(0).Data().Chunks() {
		ps := ch.(*array.String)
		for i := range ps.Len() {
			if path == "" {
				path = ps.Value(i)
			}
			if ps.Value(i) != path {
				t.Fatalf("file_path %q and %q in one position delete file", path, ps.Value(i))
			}
		}
	}
	if !slices.Contains(dataPaths, path) {
		t.Fatalf("file_path %q is not a live data file (%v)", path, dataPaths)
	}
	for _, ch := range tbl.Column(1).Data().Chunks() {
		for _, p := range ch.(*array.Int64).Int64Values() {
			if p <= last {
				t.Fatalf("positions not ascending: %d after %d", p, last)
			}
			last = p
		}
	}
}
