package pgdiff

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/skadedb/skade/parser"
)

var update = flag.Bool("update", false, "rewrite extensions.txt and differences.txt from the current results (keeps no comments; review the diff)")

// oneLine collapses whitespace so a statement fits on one line of a list file.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// readList reads a list file: one statement per line; "#" lines and blank
// lines are commentary.
func readList(t *testing.T, name string) map[string]bool {
	t.Helper()
	f, err := os.Open(name)
	if os.IsNotExist(err) && *update {
		return map[string]bool{}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out[line] = true
	}
	return out
}

// TestDifferential runs every corpus statement through both parsers. A
// statement both accept must normalise to the same shape unless it is
// listed in differences.txt; one PostgreSQL rejects must be listed in
// extensions.txt (a deliberate dialect extension). Stale entries fail too.
func TestDifferential(t *testing.T) {
	extensions := readList(t, "extensions.txt")
	differences := readList(t, "differences.txt")
	paths, err := filepath.Glob("../testdata/corpus/*.sql")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	seen := map[string]bool{}
	var gotExt, gotDiff []string
	same, total := 0, 0
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, seg := range parser.Split(string(b)) {
			total++
			key := oneLine(seg.Text)
			seen[key] = true
			ours, err := parser.ParseOne(seg.Text)
			if err != nil {
				t.Errorf("%s:%d: skade rejects a corpus statement: %v", path, seg.Pos.Line, err)
				continue
			}
			pg, err := PostgresShapes(seg.Text)
			if err != nil {
				gotExt = append(gotExt, key)
				if !extensions[key] && !*update {
					t.Errorf("%s:%d: PostgreSQL rejects (%v) but it is not listed in extensions.txt:\n%s", path, seg.Pos.Line, err, key)
				}
				continue
			}
			if extensions[key] && !*update {
				t.Errorf("%s:%d: listed in extensions.txt but PostgreSQL accepts it:\n%s", path, seg.Pos.Line, key)
			}
			sk := SkadeShape(ours)
			if len(pg) != 1 || pg[0] != sk {
				gotDiff = append(gotDiff, key)
				if !differences[key] && !*update {
					t.Errorf("%s:%d: shapes differ\n  sql:      %s\n  skade:    %s\n  postgres: %s", path, seg.Pos.Line, key, sk, strings.Join(pg, " ; "))
				}
				continue
			}
			if differences[key] && !*update {
				t.Errorf("%s:%d: listed in differences.txt but the shapes now agree:\n%s", path, seg.Pos.Line, key)
			}
			same++
		}
	}
	for _, l := range []map[string]bool{extensions, differences} {
		for k := range l {
			if !seen[k] {
				t.Errorf("list entry matches no corpus statement: %s", k)
			}
		}
	}
	t.Logf("%d statements: %d same shape, %d dialect extensions, %d known differences", total, same, len(gotExt), len(gotDiff))
	if *update {
		write := func(name, header string, lines []string) {
			sort.Strings(lines)
			if err := os.WriteFile(name, []byte(header+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("extensions.txt", "# Statements skade accepts and PostgreSQL's grammar rejects: deliberate dialect extensions.\n", gotExt)
		write("differences.txt", "# Statements both accept whose normalised shapes differ on purpose.\n", gotDiff)
	}
}

// TestShapesOfKnownStatements pins a few normalisations so a broken
// normaliser cannot make everything "agree" vacuously.
func TestShapesOfKnownStatements(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"SELECT a FROM t WHERE a = 1 AND b > 2 AND c",
			"(select items:[(item (col a))] from:[(table t)] where:(and (op = (col a) (int 1)) (op > (col b) (int 2)) (col c)))"},
		{"DELETE FROM t WHERE k NOT IN (SELECT k FROM s)",
			"(delete (table t) where:(not (in-subquery (col k) (select items:[(item (col k))] from:[(table s)]))))"},
	}
	for _, tt := range tests {
		pg, err := PostgresShapes(tt.sql)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := parser.ParseOne(tt.sql)
		if err != nil {
			t.Fatal(err)
		}
		if pg[0] != tt.want || SkadeShape(ours) != tt.want {
			t.Errorf("%s\n  postgres: %s\n  skade:    %s\n  want:     %s", tt.sql, pg[0], SkadeShape(ours), tt.want)
		}
	}
}
