package lake_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/lake"
)

// writeForeignFile writes rec to path as another writer's Parquet file,
// with its writer properties, and returns the file's size.
func writeForeignFile(t testing.TB, path string, rec arrow.RecordBatch, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties) int64 {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(rec.Schema(), out, props, aprops)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBuffered(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// migratedDataFile is path (rows rows, size bytes) as a migration
// registers a file: the partition tuple part of the table's current
// spec, no column metrics, and on v3 the first row id given.
func migratedDataFile(t testing.TB, tbl *lake.Table, path string, part map[int]any, rows, size, firstRowID int64) iceberg.DataFile {
	t.Helper()
	meta := tbl.Iceberg().Metadata()
	b, err := iceberg.NewDataFileBuilder(meta.PartitionSpec(), iceberg.EntryContentData, path, iceberg.ParquetFile, part, nil, nil, rows, size)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Version() >= 3 {
		b.FirstRowID(firstRowID)
	}
	return b.Build()
}

// commitDataFiles appends files to tbl in one commit of its own, as
// another writer would.
func commitDataFiles(t testing.TB, tbl *lake.Table, files ...iceberg.DataFile) {
	t.Helper()
	ctx := context.Background()
	txn := tbl.Iceberg().NewTransaction()
	if err := txn.AddDataFiles(ctx, files, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}
