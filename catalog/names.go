package catalog

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/iceberg-go/table"
)

const (
	// Name is the catalog name; a three-part identifier must start with it.
	Name = "skade"
	// DefaultNamespace holds tables named without a namespace. It always
	// exists and cannot be dropped.
	DefaultNamespace = "main"

	// maxNameLen keeps "<table>-<8 hex>" below the 255-byte file-name limit
	// of common file systems.
	maxNameLen = 200
)

// Normalize turns a dotted name, already split into parts, into the
// canonical (namespace, table) identifier: 1 part names a table in "main",
// 2 parts are (namespace, table), and 3 parts must start with the catalog
// name "skade". Every part is checked with ValidateName.
func Normalize(parts []string) (table.Identifier, error) {
	var ns, tbl string
	switch len(parts) {
	case 1:
		ns, tbl = DefaultNamespace, parts[0]
	case 2:
		ns, tbl = parts[0], parts[1]
	case 3:
		if parts[0] != Name {
			// suggest only names that would work: "../evil" splits into
			// "", "" and "/evil"
			for _, p := range parts[1:] {
				if ValidateName("table", p) != nil {
					return nil, newError([]error{ErrInvalidName},
						"invalid table name %q: a name is letters, digits, _ and -, with a dot only between namespace and table (main.events); this is not one",
						strings.Join(parts, "."))
				}
			}
			return nil, newError([]error{ErrInvalidName},
				"invalid table name %q: the catalog part must be %q, not %q; write %s.%s or just %s",
				strings.Join(parts, "."), Name, parts[0], parts[1], parts[2], parts[2])
		}
		ns, tbl = parts[1], parts[2]
	default:
		return nil, newError([]error{ErrInvalidName},
			"invalid table name %q: a table name has 1 to 3 parts (table, namespace.table or skade.namespace.table), not %d; "+
				"name a table as namespace.table", strings.Join(parts, "."), len(parts))
	}
	if err := ValidateName("namespace", ns); err != nil {
		return nil, err
	}
	if err := ValidateName("table", tbl); err != nil {
		return nil, err
	}

	return table.Identifier{ns, tbl}, nil
}

// ValidateName reports whether name can be used as a table or namespace name
// (kind is "table" or "namespace" and only appears in the message). Names
// become directory names inside the lake and parts of Iceberg locations,
// which are URLs, so a name is 1 to 200 bytes of ASCII letters, digits, _
// and -. That refuses empty names, "." and "..", path separators, dots,
// control and NUL characters, and anything a URL path would escape (space,
// %, ?, #, non-ASCII). The error wraps ErrInvalidName.
func ValidateName(kind, name string) error {
	if name == "" {
		return newError([]error{ErrInvalidName},
			"invalid %s name %q: names cannot be empty; use letters, digits and _", kind, name)
	}
	if !utf8.ValidString(name) {
		return newError([]error{ErrInvalidName},
			"invalid %s name %q: names must be valid UTF-8; use letters, digits and _", kind, name)
	}
	if name == "." || name == ".." {
		return newError([]error{ErrInvalidName},
			"invalid %s name %q: names cannot be %q; use letters, digits and _", kind, name, name)
	}
	if len(name) > maxNameLen {
		return newError([]error{ErrInvalidName},
			"invalid %s name %q: names are at most %d bytes, this one has %d; use a shorter name",
			kind, name, maxNameLen, len(name))
	}
	for _, r := range name {
		if !nameRuneOK(r) {
			return newError([]error{ErrInvalidName},
				"invalid %s name %q: names cannot contain %s; use letters, digits and _", kind, name, describeRune(r))
		}
	}

	return nil
}

// nameRuneOK accepts ASCII letters, digits, _ and -. They survive a URL path
// unescaped (Iceberg locations are URLs), are valid file names on every
// common file system, and are neither path nor identifier separators.
func nameRuneOK(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
		return true
	}

	return false
}

func describeRune(r rune) string {
	switch {
	case r == 0:
		return "a NUL character"
	case unicode.IsControl(r):
		return fmt.Sprintf("control character %U", r)
	case r > unicode.MaxASCII:
		return fmt.Sprintf("non-ASCII character %q", r)
	default:
		return fmt.Sprintf("%q", string(r))
	}
}

// namespaceName turns a namespace identifier into the single-level name:
// ("ns") or ("skade", "ns").
func namespaceName(ns table.Identifier) (string, error) {
	switch {
	case len(ns) == 1:
	case len(ns) == 2 && ns[0] == Name:
		ns = ns[1:]
	case len(ns) == 0:
		return "", newError([]error{ErrInvalidName},
			"invalid namespace name \"\": the namespace is missing; name a namespace such as %s", DefaultNamespace)
	default:
		return "", newError([]error{ErrInvalidName},
			"invalid namespace name %q: namespaces have a single level; use one name such as %s",
			strings.Join(ns, "."), DefaultNamespace)
	}
	if err := ValidateName("namespace", ns[0]); err != nil {
		return "", err
	}

	return ns[0], nil
}

// within reports whether path p lies strictly inside dir once both are
// cleaned. Both must be absolute.
func within(dir, p string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	if err != nil || rel == "." || filepath.IsAbs(rel) {
		return false
	}

	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
