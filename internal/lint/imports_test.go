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
	"objstore":  0, // the S3 store of s3:// lakes, beside catalog
	"snapshot":  1,
	"scan":      2,
	"exec":      3,
	"mergeinto": 4,
	"plan":      5,
	"lake":      6,
	"driver":    7, // database/sql over lake
	"server":    7, // network front doors over lake (server/pgwire)
	"cmd":       8,
	"bench":     8,
	"internal":  9, // test helpers such as internal/sqllogic may use anything
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

// isBolt reports whether imp is bbolt or one of its subpackages
// (go.etcd.io/bbolt/errors, …).
func isBolt(imp string) bool {
	return imp == "go.etcd.io/bbolt" || strings.HasPrefix(imp, "go.etcd.io/bbolt/")
}

// TestOnlyCatalogImportsBolt: bbolt, any of its subpackages, is imported
// by catalog alone, in code and in tests; everything else reaches the
// catalog file through catalog's API.
func TestOnlyCatalogImportsBolt(t *testing.T) {
	out, err := exec.Command("go", "list", "-f",
		"{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		from, _ := layer(pkg)
		for _, imp := range fields[1:] {
			if !isBolt(imp) {
				continue
			}
			if from == "catalog" {
				seen = true
				continue
			}
			t.Errorf("%s imports %s; only catalog may import bbolt", pkg, imp)
		}
	}
	if !seen {
		t.Fatal("catalog imports no bbolt package: the check looks at the wrong list")
	}
	for _, imp := range []string{"go.etcd.io/bbolt", "go.etcd.io/bbolt/errors"} {
		if !isBolt(imp) {
			t.Fatalf("isBolt(%q) is false", imp)
		}
	}
	if isBolt("go.etcd.io/bboltx") {
		t.Fatal("isBolt matches another module")
	}
}
