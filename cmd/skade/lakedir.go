package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/skadedb/skade/lake"
	"github.com/skadedb/skade/objstore"
	"github.com/skadedb/skade/plan"
)

// lakeDirArg reports whether the first argument of `skade ARG` names a
// lake to open a shell on rather than a mistyped command: an existing
// directory, a path (it has a separator or starts with a dot), or a
// lake URL. A bare word that is no directory is taken for a command, so
// that `skade tabels` does not create a lake called tabels.
func lakeDirArg(arg string) bool {
	if objstore.IsURL(arg) || lake.IsRESTLocation(arg) {
		return true
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return true
	}
	return strings.ContainsRune(arg, os.PathSeparator) || strings.HasPrefix(arg, ".")
}

// checkLakeDir refuses to open a shell on a directory that holds files
// but no lake, so that a lake is never created on top of something else.
// A lake, an empty directory and a path that does not exist yet are fine.
func checkLakeDir(dir string) error {
	if objstore.IsURL(dir) || lake.IsRESTLocation(dir) {
		return nil
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) == 0:
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "catalog.db")); err == nil {
		return nil
	}
	return fmt.Errorf("%s is not a lake: it holds files but no catalog.db; open an empty or new directory, or run `skade --lake %s repair` if it is a lake whose catalog was lost", dir, dir)
}

// openShellLake opens the lake in dir for the shell (skade sql, .open),
// creating the directory and the lake when needed; catalogFile is an
// s3:// lake's catalog (--catalog).
func openShellLake(ctx context.Context, dir, catalogFile string) (*lake.Lake, error) {
	if !objstore.IsURL(dir) && !lake.IsRESTLocation(dir) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create lake directory: %w", err)
		}
	}
	return lake.Open(ctx, dir, lake.WithCatalogFile(catalogFile), catalogAuth())
}

// commandDidYouMean suggests the command nearest a mistyped one.
func commandDidYouMean(name string) string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return plan.DidYouMean(name, names)
}
