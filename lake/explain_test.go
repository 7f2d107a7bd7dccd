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

// TestExplainInitPlans: EXPLAIN shows an uncorrelated subquery as an init
// plan without running it (this one would fail if run: it returns several
// rows), and running the statement folds it into a constant that still
// prunes files.
func TestExplainInitPlans(t *testing.T) {
	lk, _ := openLake(t)
	s := lk.Session()
	mustExec(t, s, `CREATE TABLE e (id BIGINT, g VARCHAR); INSERT INTO e SELECT i, 'a' FROM range(0, 100) r(i);
		INSERT INTO e SELECT i, 'b' FROM range(100, 200) r(i); INSERT INTO e SELECT i, 'c' FROM range(200, 300) r(i)`)
	bad := `SELECT id FROM e WHERE id = (SELECT id FROM e)`
	plan := strings.Join(query(t, s, "EXPLAIN "+bad), "\n")
	if !strings.Contains(plan, "$init1 (scalar subquery, runs once before the statement)") || !strings.Contains(plan, "Filter (e.id = $init1)") {
		t.Fatalf("EXPLAIN does not show the init plan:\n%s", plan)
	}
	if err := queryErr(s, bad); err == nil || !strings.Contains(err.Error(), "more than one row returned by a subquery") {
		t.Fatalf("running it: %v", err)
	}
	good := `SELECT id FROM e WHERE id = (SELECT max(id) FROM e WHERE g = 'b')`
	if got := query(t, s, good); len(got) != 1 || got[0] != "199" {
		t.Fatalf("got %v", got)
	}
	analyzed := strings.Join(query(t, s, "EXPLAIN ANALYZE "+good), "\n")
	if !strings.Contains(analyzed, "$init1 (scalar subquery, ran first) = 199") || !strings.Contains(analyzed, "files_skipped=2") {
		t.Fatalf("EXPLAIN ANALYZE does not show the folded value pruning files:\n%s", analyzed)
	}
}
