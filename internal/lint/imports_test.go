package lint

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/skadedb/skade"

// rank orders skade's layers: a package may import only packages of a
// strictly lower rank (the arrows of STYLE.md point down). parser and
// catalog share the bottom and must not import each other.
var rank = map[string]int{
	"parser":    0,
	"catalog":   0,
	"snapshot":  1,
	"scan":      2,
	"exec":      3,
	"mergeinto": 4,
	"plan":      5,
	"lake":      6,
	"cmd":       7,
	"bench":     7,
	"internal":  8, // test helpers such as internal/sqllogic may use anything
}

func layer(pkg string) (string, bool) {
	rel, ok := strings.CutPrefix(pkg, module+"/")
	if !ok {
		return "", false
	}
	top, _, _ := strings.Cut(rel, "/")
	return top, true
}

func TestImportArrows(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 5 {
		t.Fatalf("go list found only %d packages:\n%s", len(lines), out)
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		from, _ := layer(pkg)
		fromRank, known := rank[from]
		if !known {
			t.Errorf("package %s is in no known layer; add it to STYLE.md and to rank", pkg)
			continue
		}
		for _, imp := range imports {
			if imp == "go.etcd.io/bbolt" && from != "catalog" {
				t.Errorf("%s imports bbolt; only catalog may", pkg)
			}
			to, ours := layer(imp)
			if !ours {
				continue
			}
			toRank, known := rank[to]
			if !known {
				continue // reported for its own line
			}
			if from == to {
				continue
			}
			if toRank >= fromRank && from != "internal" {
				t.Errorf("%s (layer %s) imports %s (layer %s): imports must point down the layers", pkg, from, imp, to)
			}
		}
	}
}
