package lake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/snapshot"
)

// RelocateResult reports what Relocate did.
type RelocateResult struct {
	// From is the directory the lake was copied from ("" when it was
	// already self-contained).
	From string
	// Tables and Views count the tables and views moved.
	Tables, Views int
	snapshot.RelocateStats
}

// Relocate makes a lake directory that was copied (or moved) from another
// place self-contained: every path its catalog pointers, table and view
// metadata files, manifest lists, manifests, position delete files and
// deletion vectors hold under the old directory is rewritten to name the
// same file in this one, in place (Iceberg's rewrite_table_path). from is
// the old directory; "" finds it from the catalog's pointers. Run it on
// the copy, with no other process using it. Each file is replaced
// atomically and the pointers move last, in one catalog transaction, so a
// relocation that stops half way leaves the copy refused as before, and
// running it again completes it. Afterwards every table is read back and
// every file its snapshots reach must lie in the lake.
func (l *Lake) Relocate(ctx context.Context, from string) (RelocateResult, error) {
	var res RelocateResult
	root := l.cat.Root()
	if catalog.IsURL(root) || l.cat.Remote() {
		return res, &sentinelError{ErrNotImplemented, fmt.Errorf("relocate: %s is not a local lake directory; copy object-store lakes with their paths rewritten by the copying tool", root)}
	}
	ptrs, err := l.cat.Pointers(ctx)
	if err != nil {
		return res, err
	}
	if from == "" {
		if from, err = copiedFrom(root, ptrs); err != nil {
			return res, err
		}
		if from == "" {
			return res, nil
		}
	}
	from = filepath.Clean(snapshot.LocalPath(from))
	if from == root {
		return res, &sentinelError{ErrInvalidArgument, fmt.Errorf("relocate: the lake is already at %s", root)}
	}
	res.From = from
	r := snapshot.Relocator{From: from, To: root}
	for k, loc := range ptrs {
		if _, ok := r.MapPath(loc); !ok {
			continue
		}
		if strings.HasPrefix(k, "view ") {
			res.Views++
		} else {
			res.Tables++
		}
	}
	// The whole lake directory, not only the tables' own: a clone reads
	// its source's manifests and files, which stay in the source's
	// directory after the source is dropped.
	st, err := r.Table(ctx, root)
	if err != nil {
		return res, err
	}
	res.RelocateStats = st
	if _, err := l.cat.Repoint(ctx, from, root); err != nil {
		return res, err
	}
	return res, l.checkRelocated(ctx)
}

// copiedFrom finds the directory a copied lake was made in from its
// pointers: for a pointer outside root, the prefix whose removal leaves a
// path that exists under root. "" when every pointer is inside root.
func copiedFrom(root string, ptrs map[string]string) (string, error) {
	found := ""
	for k, loc := range ptrs {
		p := filepath.Clean(snapshot.LocalPath(loc))
		if within(root, p) {
			continue
		}
		parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
		cand := ""
		for i := 1; i < len(parts); i++ {
			if _, err := os.Stat(filepath.Join(append([]string{root}, parts[i:]...)...)); err == nil {
				cand = "/" + strings.Join(parts[:i], "/")
				break
			}
		}
		if cand == "" {
			return "", &sentinelError{ErrInvalidArgument, fmt.Errorf("relocate: %s points at %s, and no file of that name is in %s; was the lake copied whole?", k, loc, root)}
		}
		if found != "" && cand != found {
			return "", &sentinelError{ErrInvalidArgument, fmt.Errorf("relocate: the pointers name two old directories, %s and %s; pass the one to replace (--from)", found, cand)}
		}
		found = cand
	}
	return found, nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// checkRelocated reads every table back and checks that each file its
// snapshots reach lies in the lake and exists.
func (l *Lake) checkRelocated(ctx context.Context) error {
	names, err := l.Tables(ctx)
	if err != nil {
		return err
	}
	root := l.cat.Root()
	for _, name := range names {
		id, err := l.ident(name)
		if err != nil {
			return err
		}
		tbl, err := l.load(ctx, id)
		if err != nil {
			return fmt.Errorf("relocate: reading %s back: %w", name, err)
		}
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return err
		}
		check := func(what, p string) error {
			lp := snapshot.LocalPath(p)
			if !within(root, lp) {
				return fmt.Errorf("relocate: %s: %s %s is outside the lake after relocating", name, what, p)
			}
			return nil
		}
		if err := check("location", tbl.Location()); err != nil {
			return err
		}
		for _, s := range tbl.Metadata().Snapshots() {
			if err := check("manifest list", s.ManifestList); err != nil {
				return err
			}
			manifests, err := s.Manifests(fsys)
			if err != nil {
				return fmt.Errorf("relocate: %s: snapshot %d: %w", name, s.SnapshotID, err)
			}
			for _, m := range manifests {
				if err := check("manifest", m.FilePath()); err != nil {
					return err
				}
				for e, err := range m.Entries(fsys, false) {
					if err != nil {
						return fmt.Errorf("relocate: %s: %w", name, err)
					}
					df := e.DataFile()
					if err := check("file", df.FilePath()); err != nil {
						return err
					}
					if ref := df.ReferencedDataFile(); ref != nil {
						if err := check("referenced file", *ref); err != nil {
							return err
						}
					}
					if e.Status() == iceberg.EntryStatusDELETED { // may be gone
						continue
					}
					if _, err := os.Stat(snapshot.LocalPath(df.FilePath())); errors.Is(err, os.ErrNotExist) {
						return fmt.Errorf("relocate: %s: snapshot %d reads %s, which the copy does not have", name, s.SnapshotID, df.FilePath())
					}
				}
			}
		}
	}
	return nil
}
