package sqllogic

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skadedb/skade/internal/s3test"
	"github.com/skadedb/skade/lake"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected results of the .slt files")

// TestSQL runs testdata/sql/**/*.slt, one subtest per file.
func TestSQL(t *testing.T) {
	runCorpus(t, nil /* defaults */)
}

// TestSQLSplitFiles runs the corpus again with tables whose files have a
// row group every 3 rows and a scan split per row group, so that small
// tables have multi-row-group, multi-split files: the copy-on-write paths
// once read one split of a file and replaced the whole file, which no
// small test saw. Results must be the same as with the defaults.
//
// The files that write 100,000 rows and more are left out (a row group of
// 3 rows makes 30,000 and more of them); lake's split tests cover those
// sizes with realistic row groups.
func TestSQLSplitFiles(t *testing.T) {
	runCorpus(t, map[string]string{
		"write.parquet.row-group-limit": "3",
		"read.split.target-size":        "1",
	}, "ddl/settings.slt", "merge/count_returning.slt", "select/large_build.slt")
}

// TestSQLObjectStore runs the corpus on lakes in a real S3-compatible
// server (versitygw on loopback, see internal/s3test), with the split-file
// defaults, so that every statement's files, manifests and metadata go
// through the object store. Its results must be the same as on disk. It
// is skipped without versitygw (and fails with SKADE_REQUIRE_S3=1).
func TestSQLObjectStore(t *testing.T) {
	srv := s3test.Start(t)
	var n, withObjects atomic.Int64
	t.Cleanup(func() {
		// the tables' files went to the store: most files end with tables
		// whose data, manifests and metadata are objects
		if got := withObjects.Load(); got < n.Load()/2 {
			t.Errorf("only %d of %d lakes hold objects in the store", got, n.Load())
		}
	})
	open := func(t *testing.T, dir string, opts ...lake.Option) (*lake.Lake, error) {
		loc := fmt.Sprintf("s3://%s/corpus-%d", s3test.Bucket, n.Add(1))
		t.Cleanup(func() {
			if keys := srv.Keys(t, strings.TrimPrefix(loc, "s3://"+s3test.Bucket+"/")+"/"); len(keys) > 0 {
				withObjects.Add(1)
			}
		})
		return lake.Open(context.Background(), loc, append(opts, lake.WithCatalogFile(filepath.Join(dir, "catalog.db")))...)
	}
	runCorpusWith(t, map[string]string{
		"write.parquet.row-group-limit": "3",
		"read.split.target-size":        "1",
	}, open, "ddl/settings.slt", "merge/count_returning.slt", "select/large_build.slt")
}

func runCorpus(t *testing.T, defaults map[string]string, skip ...string) {
	runCorpusWith(t, defaults, nil, skip...)
}

func runCorpusWith(t *testing.T, defaults map[string]string, open func(t *testing.T, dir string, opts ...lake.Option) (*lake.Lake, error), skip ...string) {
	root, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(filepath.Join(root, "sql"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".slt") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no .slt files under testdata/sql")
	}
	for _, f := range files {
		rel, _ := filepath.Rel(filepath.Join(root, "sql"), f)
		if slices.Contains(skip, filepath.ToSlash(rel)) {
			continue
		}
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			t.Parallel()
			RunFile(t, f, Options{TestData: root, Rewrite: *rewrite && defaults == nil && open == nil, TableDefaults: defaults, Open: open})
		})
	}
}

func TestParseRecords(t *testing.T) {
	recs, err := Parse("statement ok\nCREATE TABLE t (a INT)\n\nquery I rowsort\nSELECT 1\n----\n1\n\nstatement error does not exist\nSELECT * FROM x\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[1].Types != "I" || !recs[1].RowSort || recs[1].Expected[0] != "1" || recs[2].Error != "does not exist" || recs[2].Line != 9 {
		t.Fatalf("unexpected records: %+v", recs)
	}
	if _, err := Parse("frobnicate\nSELECT 1\n"); err == nil || !strings.Contains(err.Error(), "unknown record") {
		t.Fatalf("want an unknown-record error, got %v", err)
	}
}

// -rewrite writes a file back as it was when its results hold: comments
// before records, blank lines among them, and the file's last comments
// stay (it used to drop every comment after the first record).
func TestRewriteKeepsComments(t *testing.T) {
	text := `# file header

# about t
statement ok
CREATE TABLE t (x INTEGER)

# two
# lines

query I
SELECT 1
----
1

# trailing note
`
	p := filepath.Join(t.TempDir(), "c.slt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	RunFile(t, p, Options{Rewrite: true})
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != text {
		t.Fatalf("rewrite changed the file:\n%s\n--- want\n%s", got, text)
	}
}

// TestSQLFileURIs runs the corpus on lakes whose tables are located by
// file:// URIs (lake.WithFileURIs), so every path in their metadata,
// manifests and delete files is a URI. Results must be the same as with
// plain paths.
func TestSQLFileURIs(t *testing.T) {
	runCorpusWith(t, nil, func(t *testing.T, dir string, opts ...lake.Option) (*lake.Lake, error) {
		return lake.Open(context.Background(), dir, append(opts, lake.WithFileURIs())...)
	})
}
