package sqllogic

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
	}, "ddl/settings.slt", "merge/count_returning.slt")
}

func runCorpus(t *testing.T, defaults map[string]string, skip ...string) {
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
			RunFile(t, f, Options{TestData: root, Rewrite: *rewrite && defaults == nil, TableDefaults: defaults})
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
