package catalog_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	bolt "go.etcd.io/bbolt"

	"github.com/skadedb/skade/catalog"
)

// holdDB opens catalog.db the way another process would, and keeps it open
// until the test ends.
func holdDB(t *testing.T, lake string, readOnly bool) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(lake, catalog.DBFile), 0o644, &bolt.Options{ReadOnly: readOnly, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })

	return db
}

func TestLockTimeout(t *testing.T) {
	_, lake := lakeUnder(t)
	c := openLake(t, lake, catalog.WithLockTimeout(200*time.Millisecond))
	createTable(t, c, "t")
	db := holdDB(t, lake, false)

	want := `catalog: lake "` + c.Dir() + `" is busy: another process has held catalog.db for 200ms; retry, or raise the lock timeout`
	_, err := c.LoadTable(ctx, table.Identifier{"t"})
	wantErr(t, err, catalog.ErrLockTimeout, want)
	_, _, err = c.CommitTable(ctx, table.Identifier{"t"}, nil, setProp("k", "v"))
	wantErr(t, err, catalog.ErrLockTimeout, want)
	if errors.Is(err, table.ErrCommitFailed) {
		t.Errorf("a lock timeout must not look like a lost race (iceberg-go would retry it): %v", err)
	}
	_, err = catalog.Open(lake, catalog.WithLockTimeout(100*time.Millisecond))
	wantErr(t, err, catalog.ErrLockTimeout, `catalog: lake "`+c.Dir()+`" is busy: another process has held catalog.db for 100ms`)
	_ = db.Close()
}

// TestReadersShareTheLock: a reader holding catalog.db does not block other
// readers, only writers.
func TestReadersShareTheLock(t *testing.T) {
	_, lake := lakeUnder(t)
	c := openLake(t, lake, catalog.WithLockTimeout(200*time.Millisecond))
	createTable(t, c, "t")
	holdDB(t, lake, true)

	if _, err := c.LoadTable(ctx, table.Identifier{"t"}); err != nil {
		t.Errorf("load while another reader holds the file: %v", err)
	}
	if _, err := c.ListNamespaces(ctx, nil); err != nil {
		t.Errorf("list namespaces while another reader holds the file: %v", err)
	}
	err := c.DropTable(ctx, table.Identifier{"t"})
	wantErr(t, err, catalog.ErrLockTimeout, "is busy")
	if errors.Is(err, icecatalog.ErrNoSuchTable) {
		t.Errorf("unexpected: %v", err)
	}

	// CommitTable reads and writes its metadata file, then cannot swap: it
	// removes the file again and leaves the pointer alone.
	pointer := mustPointer(t, c, "t")
	before := metadataFiles(t, c)
	_, _, err = c.CommitTable(ctx, table.Identifier{"t"}, nil, setProp("k", "v"))
	wantErr(t, err, catalog.ErrLockTimeout, "is busy")
	if got := metadataFiles(t, c); len(got) != len(before) {
		t.Errorf("metadata files %v, want %v", got, before)
	}
	if mustPointer(t, c, "t") != pointer {
		t.Errorf("pointer moved")
	}
}
