package lake_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skadedb/skade/plan"
)

var rewriteExplain = flag.Bool("rewrite", false, "rewrite golden EXPLAIN files under testdata/explain")

var snapshotIDRE = regexp.MustCompile(`@[0-9]{6,}`)

// TestExplainGolden runs testdata/explain/*.txt: "statement" blocks set
// up a fresh lake, "explain" blocks compare EXPLAIN output (snapshot ids
// and timings masked) with the text after "----".
func TestExplainGolden(t *testing.T) {
	files, err := filepath.Glob("../testdata/explain/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s := sqlLake(t).Session()
			var out strings.Builder
			blocks := strings.Split(strings.TrimSpace(string(data)), "\n\n")
			for _, blk := range blocks {
				head, body, _ := strings.Cut(blk, "\n")
				sql, want, _ := strings.Cut(body, "\n----\n")
				sql = strings.TrimSuffix(sql, "\n----")
				switch strings.TrimSpace(head) {
				case "statement":
					mustExec(t, s, sql)
					out.WriteString(blk + "\n\n")
				case "explain":
					got := strings.Join(query(t, s, "EXPLAIN "+sql), "\n")
					got = plan.MaskTimings(snapshotIDRE.ReplaceAllString(got, "@<snapshot>"))
					if !*rewriteExplain && got != want {
						t.Errorf("%s: EXPLAIN %s\n--- want\n%s\n--- got\n%s", f, sql, want, got)
					}
					out.WriteString("explain\n" + sql + "\n----\n" + got + "\n\n")
				default:
					t.Fatalf("%s: unknown block %q", f, head)
				}
			}
			if *rewriteExplain {
				if err := os.WriteFile(f, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
