package catalog_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		parts []string
		want  table.Identifier
		err   string
	}{
		{parts: []string{"events"}, want: table.Identifier{"main", "events"}},
		{parts: []string{"sales", "events"}, want: table.Identifier{"sales", "events"}},
		{parts: []string{"skade", "sales", "events"}, want: table.Identifier{"sales", "events"}},
		{parts: []string{"skade", "events"}, want: table.Identifier{"skade", "events"}},
		{parts: []string{"other", "main", "events"},
			err: `invalid table name "other.main.events": the catalog part must be "skade", not "other"; write main.events or just events`},
		{parts: []string{"", "", "/evil"},
			err: `invalid table name "../evil": a name is letters, digits, _ and -, with a dot only between namespace and table (main.events); this is not one`},
		{parts: nil,
			err: `invalid table name "": a table name has 1 to 3 parts (table, namespace.table or skade.namespace.table), not 0; name a table as namespace.table`},
		{parts: []string{"a", "b", "c", "d"},
			err: `invalid table name "a.b.c.d": a table name has 1 to 3 parts (table, namespace.table or skade.namespace.table), not 4; name a table as namespace.table`},
		{parts: []string{"../x", "t"}, err: `invalid namespace name "../x": names cannot contain "."; use letters, digits and _`},
		{parts: []string{"main", ""}, err: `invalid table name "": names cannot be empty; use letters, digits and _`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.parts, "."), func(t *testing.T) {
			got, err := catalog.Normalize(tt.parts)
			if tt.err != "" {
				wantErr(t, err, catalog.ErrInvalidName, tt.err)

				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("Normalize(%q) = %v, %v; want %v", tt.parts, got, err, tt.want)
			}
		})
	}
}

func TestValidateName(t *testing.T) {
	long := strings.Repeat("x", 201)
	tests := []struct {
		name string
		err  string // "" = valid
	}{
		{"events", ""},
		{"Events_2024-q1", ""},
		{strings.Repeat("x", 200), ""},
		{"", `invalid table name "": names cannot be empty; use letters, digits and _`},
		{".", `invalid table name ".": names cannot be "."; use letters, digits and _`},
		{"..", `invalid table name "..": names cannot be ".."; use letters, digits and _`},
		{"a/b", `invalid table name "a/b": names cannot contain "/"; use letters, digits and _`},
		{`a\b`, `invalid table name "a\\b": names cannot contain "\\"; use letters, digits and _`},
		{"a.b", `invalid table name "a.b": names cannot contain "."; use letters, digits and _`},
		{"a\x00b", `invalid table name "a\x00b": names cannot contain a NUL character; use letters, digits and _`},
		{"a\nb", `invalid table name "a\nb": names cannot contain control character U+000A; use letters, digits and _`},
		{"a b", `invalid table name "a b": names cannot contain " "; use letters, digits and _`},
		{"a%2e", `invalid table name "a%2e": names cannot contain "%"; use letters, digits and _`},
		{"städte", `invalid table name "städte": names cannot contain non-ASCII character 'ä'; use letters, digits and _`},
		{"a\xffb", `invalid table name "a\xffb": names must be valid UTF-8; use letters, digits and _`},
		{long, `invalid table name "` + long + `": names are at most 200 bytes, this one has 201; use a shorter name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := catalog.ValidateName("table", tt.name)
			if tt.err == "" {
				if err != nil {
					t.Errorf("ValidateName(%q) = %v, want nil", tt.name, err)
				}

				return
			}
			wantErr(t, err, catalog.ErrInvalidName, tt.err)
			if err != nil && err.Error() != tt.err {
				t.Errorf("message\n  %q\nwant\n  %q", err, tt.err)
			}
		})
	}
}

// TestBadNamesWriteNothing tries every way a name could reach the disk and
// checks that nothing was created, inside the lake or next to it.
func TestBadNamesWriteNothing(t *testing.T) {
	parent, lake := lakeUnder(t)
	c := openLake(t, lake)
	bad := []table.Identifier{
		{"../escape"}, {"main", ".."}, {"..", "t"}, {"/abs"}, {"main", "/tmp/x"}, {"a\\b"},
		{"main", "a\x00b"}, {"main", ""}, {"", "t"}, {"x", "..", "t"}, {"skade", "..", ".."},
	}
	for _, ident := range bad {
		if _, err := c.CreateTable(ctx, ident, testSchema); !errors.Is(err, catalog.ErrInvalidName) {
			t.Errorf("create table %q: error %v, want ErrInvalidName", ident, err)
		}
		if _, _, err := c.CommitTable(ctx, ident, nil, createUpdates()); !errors.Is(err, catalog.ErrInvalidName) {
			t.Errorf("commit table %q: error %v, want ErrInvalidName", ident, err)
		}
		if _, err := c.StageCreate(ctx, ident, testSchema); !errors.Is(err, catalog.ErrInvalidName) {
			t.Errorf("stage create %q: error %v, want ErrInvalidName", ident, err)
		}
		if err := c.CreateNamespace(ctx, ident[:1], nil); !errors.Is(err, catalog.ErrInvalidName) && ident[0] != "main" && ident[0] != "skade" && ident[0] != "x" {
			t.Errorf("create namespace %q: error %v, want ErrInvalidName", ident[:1], err)
		}
	}
	if _, err := c.RenameTable(ctx, table.Identifier{"t"}, table.Identifier{"../t"}); !errors.Is(err, catalog.ErrInvalidName) {
		t.Errorf("rename to ../t: error %v, want ErrInvalidName", err)
	}
	if got := entries(t, parent); !slices.Equal(got, []string{"lake"}) {
		t.Errorf("next to the lake: %v, want only [lake]", got)
	}
	if got := files(t, lake); !slices.Equal(got, []string{catalog.DBFile}) {
		t.Errorf("in the lake: %v, want only catalog.db", got)
	}
	if _, err := os.Stat(filepath.Join(parent, "escape")); err == nil {
		t.Errorf("escape exists")
	}
}

func TestCustomLocationRefused(t *testing.T) {
	parent, lake := lakeUnder(t)
	c := openLake(t, lake)
	_, err := c.CreateTable(ctx, table.Identifier{"t"}, testSchema, withLocation(filepath.Join(parent, "x")))
	wantErr(t, err, nil, "create table main.t: custom locations are not supported; skade places every table in its lake directory, so leave the location out")
	if got := entries(t, parent); !slices.Equal(got, []string{"lake"}) {
		t.Errorf("next to the lake: %v, want only [lake]", got)
	}
}

func TestOpenRefusesURLUnsafeDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my lake")
	_, err := catalog.Open(dir)
	wantErr(t, err, nil, `open lake "`+dir+`": the path has characters that Iceberg locations (URLs) escape, such as spaces, %, # or non-ASCII letters; choose a lake directory whose path has none`)
	_, err = catalog.Open("")
	wantErr(t, err, nil, "open lake: the lake directory is empty; name a directory")
}

func TestNewTableLocationStaysInLake(t *testing.T) {
	c := newLake(t)
	seen := map[string]bool{}
	for _, ident := range []table.Identifier{{"t"}, {"main", "t"}, {"skade", "main", "t"}, {"ns", "Events-2"}} {
		loc, err := c.NewTableLocation(ident)
		if err != nil {
			t.Fatal(err)
		}
		clean := filepath.Clean(loc)
		if clean != loc || !strings.HasPrefix(clean, c.Dir()+string(filepath.Separator)) {
			t.Errorf("location %s is not inside %s", loc, c.Dir())
		}
		if seen[loc] {
			t.Errorf("location %s allocated twice", loc)
		}
		seen[loc] = true
	}
	for _, ident := range []table.Identifier{{".."}, {"..", ".."}, {"a/../../b"}, {"main", "../../etc"}} {
		loc, err := c.NewTableLocation(ident)
		wantErr(t, err, catalog.ErrInvalidName, "names cannot")
		if loc != "" {
			t.Errorf("got location %q for %q", loc, ident)
		}
	}
}
