package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pkgDecls are the top-level names a package declares ("Execute",
// "Spec", and methods as "Result.Release"), from its non-test files.
func pkgDecls(t *testing.T, dir string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", p, err)
		}
		files = append(files, f)
	}
	names := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) > 0 {
					names[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
				} else {
					names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fld := range st.Fields.List {
								for _, n := range fld.Names {
									names[s.Name.Name+"."+n.Name] = true
								}
							}
						}
						if it, ok := s.Type.(*ast.InterfaceType); ok {
							for _, m := range it.Methods.List {
								for _, n := range m.Names {
									names[s.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

var (
	// pkg.Name or pkg.Type.Method, for a skade package name.
	docIdent = regexp.MustCompile(`\b([a-z]+)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?`)
	// a Go file, bare or with a directory.
	docFile = regexp.MustCompile(`\b((?:[a-z0-9_]+/)*[a-z0-9_]+\.go)\b`)
)

// TestDocClaims checks each package's doc.go against the code: every
// file it names exists (bare names in the package's directory, paths from
// the module root), and every identifier it names as pkg.Name (or
// pkg.Type.Method) for a skade package is declared there. A doc that
// describes code moved elsewhere fails here.
func TestDocClaims(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Name}} {{.Dir}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root := ""
	dirs := map[string]string{} // package name -> dir, for our packages
	var all []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, dir, _ := strings.Cut(line, " ")
		if name == "main" {
			continue
		}
		if _, dup := dirs[name]; !dup {
			dirs[name] = dir
		}
		all = append(all, dir)
		if strings.HasSuffix(dir, "/internal/lint") {
			root = strings.TrimSuffix(dir, "/internal/lint")
		}
	}
	if root == "" || len(dirs) < 8 {
		t.Fatalf("found %d packages, root %q", len(dirs), root)
	}
	decls := map[string]map[string]bool{}
	declsOf := func(name string) map[string]bool {
		if d, ok := decls[name]; ok {
			return d
		}
		decls[name] = pkgDecls(t, dirs[name])
		return decls[name]
	}
	checked := 0
	for _, dir := range all {
		raw, err := os.ReadFile(filepath.Join(dir, "doc.go"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "doc.go", raw, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil || f.Doc == nil {
			t.Errorf("%s/doc.go has no package comment", dir)
			continue
		}
		doc := f.Doc.Text()
		rel, _ := filepath.Rel(root, dir)
		checked++
		for _, m := range docFile.FindAllStringSubmatch(doc, -1) {
			p := m[1]
			if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, p)); err == nil {
				continue
			}
			t.Errorf("%s/doc.go names %s, which does not exist", rel, p)
		}
		for _, m := range docIdent.FindAllStringSubmatch(doc, -1) {
			pkg, name, method := m[1], m[2], m[3]
			if _, ours := dirs[pkg]; !ours || pkg == "main" {
				continue
			}
			d := declsOf(pkg)
			if method != "" && d[name+"."+method] {
				continue
			}
			if d[name] {
				continue
			}
			t.Errorf("%s/doc.go names %s.%s, which package %s does not declare", rel, pkg, strings.TrimSuffix(name+"."+method, "."), pkg)
		}
	}
	if checked < 8 {
		t.Fatalf("checked only %d doc.go files", checked)
	}
}
