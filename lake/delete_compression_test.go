package lake_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
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
