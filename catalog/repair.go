package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
	bolt "go.etcd.io/bbolt"
)

// FoundTable is a table directory that holds valid Iceberg metadata, as
// Repair and the missing-catalog check find it on disk.
type FoundTable struct {
	Ident    table.Identifier // namespace and name, from the directory's path
	Dir      string           // the table directory
	Metadata string           // its newest metadata file
	Version  int              // that file's version number
	Updated  time.Time        // the metadata's last-updated-ms
	// Shadowed, when not empty, is the directory of another table of the
	// same name with newer metadata; this one is not registered.
	Shadowed string
}

// tableDirName is <table>-<8 hex digits>, NewTableLocation's layout.
var tableDirName = regexp.MustCompile(`^(.+)-[0-9a-f]{8}$`)

// FindTables lists the table directories under lakeDir
// (<lake>/<namespace>/<table>-<8 hex>/metadata/*.metadata.json) whose
// newest metadata file parses, newest metadata first within a name. A
// directory whose metadata files all fail to parse is left out; bad lists
// them.
func FindTables(lakeDir string) (found []FoundTable, bad []string, err error) {
	nss, err := os.ReadDir(lakeDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	for _, ns := range nss {
		if !ns.IsDir() || strings.HasPrefix(ns.Name(), ".") {
			continue
		}
		dirs, err := os.ReadDir(filepath.Join(lakeDir, ns.Name()))
		if err != nil {
			return nil, nil, err
		}
		for _, d := range dirs {
			m := tableDirName.FindStringSubmatch(d.Name())
			if !d.IsDir() || m == nil {
				continue
			}
			dir := filepath.Join(lakeDir, ns.Name(), d.Name())
			ft, ok, err := newestMetadata(dir)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				if has, _ := filepath.Glob(filepath.Join(dir, "metadata", "*.metadata.json")); len(has) > 0 {
					bad = append(bad, dir)
				}
				continue
			}
			ft.Ident = table.Identifier{ns.Name(), m[1]}
			found = append(found, ft)
		}
	}
	// one table per name: the newest metadata wins, the others are shadowed
	slices.SortFunc(found, func(a, b FoundTable) int {
		if c := strings.Compare(identString(a.Ident), identString(b.Ident)); c != 0 {
			return c
		}
		return b.Updated.Compare(a.Updated)
	})
	winner := 0
	for i := 1; i < len(found); i++ {
		if slices.Equal(found[i].Ident, found[winner].Ident) {
			found[i].Shadowed = found[winner].Dir
		} else {
			winner = i
		}
	}
	return found, bad, nil
}

// newestMetadata finds the highest-versioned metadata file of a table
// directory that parses; ok is false when there is none.
func newestMetadata(dir string) (FoundTable, bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "metadata", "*.metadata.json"))
	if err != nil {
		return FoundTable{}, false, err
	}
	slices.SortFunc(files, func(a, b string) int { return metadataVersion(b) - metadataVersion(a) })
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		meta, err := table.ParseMetadataBytes(data)
		if err != nil {
			continue
		}
		return FoundTable{Dir: dir, Metadata: f, Version: metadataVersion(f), Updated: time.UnixMilli(meta.LastUpdatedMillis())}, true, nil
	}
	return FoundTable{}, false, nil
}

// checkNotLost refuses to create a catalog file in a lake directory that
// already holds tables: the catalog was deleted or truncated, and a fresh
// empty one would make every table invisible (and orphan cleanup would then
// delete their files).
func (c *Catalog) checkNotLost() error {
	if !c.Local() {
		return c.checkStoreUnowned()
	}
	lakeDir := c.dir
	found, _, err := FindTables(lakeDir)
	if err != nil {
		return fmt.Errorf("open lake %q: looking for tables without a catalog: %w", lakeDir, err)
	}
	if len(found) == 0 {
		return nil
	}
	var names []string
	for _, f := range found {
		if f.Shadowed == "" {
			names = append(names, identString(f.Ident))
		}
	}
	list := strings.Join(names, ", ")
	if len(names) > 5 {
		list = strings.Join(names[:5], ", ") + fmt.Sprintf(", … (%d in all)", len(names))
	}
	return newError([]error{ErrCatalogMissing},
		"%s is missing or empty, but the lake holds tables (%s); nothing was changed. Run `skade repair` to rebuild the catalog from the tables' newest metadata, or restore %s from a backup",
		DBFile, list, DBFile)
}

// Repair rebuilds a lake's catalog file from the tables on disk: the
// current catalog.db, when there is one, is kept beside it as
// catalog.db.broken-<unix time>, and a new one points each name of found
// (those not Shadowed) at its newest metadata file. found comes from
// FindTables, shown to the user first. It returns the kept file's path
// ("" when there was none).
func Repair(ctx context.Context, lakeDir string, found []FoundTable) (kept string, err error) {
	abs, err := filepath.Abs(lakeDir)
	if err != nil {
		return "", err
	}
	db := filepath.Join(abs, DBFile)
	if _, err := os.Stat(db); err == nil {
		kept = fmt.Sprintf("%s.broken-%d", db, time.Now().Unix())
		if err := os.Rename(db, kept); err != nil {
			return "", fmt.Errorf("repair %q: moving the damaged %s aside: %w", abs, DBFile, err)
		}
	}
	c, err := open(abs, true /* repair */, WithLockTimeout(DefaultLockTimeout))
	if err != nil {
		return kept, err
	}
	err = c.update(ctx, func(tx *bolt.Tx) error {
		ns := tx.Bucket(bucketNamespaces)
		var swaps []PointerSwap
		for _, f := range found {
			if f.Shadowed != "" {
				continue
			}
			if ns.Get([]byte(f.Ident[0])) == nil {
				if err := ns.Put([]byte(f.Ident[0]), []byte("{}")); err != nil {
					return err
				}
			}
			swaps = append(swaps, PointerSwap{Ident: f.Ident, New: f.Metadata})
		}
		swaps, err := c.checkSwaps(swaps)
		if err != nil {
			return err
		}
		return applySwaps(tx, swaps)
	})
	if err != nil {
		return kept, fmt.Errorf("repair %q: %w", abs, err)
	}
	return kept, nil
}

// CheckFile runs bbolt's consistency check on the lake's catalog.db and
// returns what it found, at most 10 problems, for Repair's report: nil
// when the file is missing or sound. A file too damaged to open is one
// problem.
func CheckFile(lakeDir string) (problems []string) {
	path := filepath.Join(lakeDir, DBFile)
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			problems = append(problems, fmt.Sprintf("%v", r))
		}
	}()
	db, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true, Timeout: DefaultLockTimeout})
	if err != nil {
		return []string{err.Error()}
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for e := range tx.Check() {
			if len(problems) < 10 {
				problems = append(problems, e.Error())
			}
		}
		if tx.Bucket(bucketTables) == nil || tx.Bucket(bucketNamespaces) == nil {
			problems = append(problems, "the tables or namespaces bucket is missing")
		}
		return nil
	})
	if err != nil {
		problems = append(problems, err.Error())
	}
	return problems
}

// checkStoreUnowned refuses a new catalog file for an object-store root
// that already holds files: another catalog file owns them (or owned
// them and was lost).
func (c *Catalog) checkStoreUnowned() error {
	found := ""
	err := c.fs.WalkDir(c.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			found = p
			return fs.SkipAll
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("open lake %s: looking for files another catalog owns: %w", c.root, err)
	}
	if found == "" {
		return nil
	}
	return newError([]error{ErrCatalogMissing},
		"open lake %s: the catalog file %s is new, but the store already holds files there (%s); nothing was changed. "+
			"Pass the catalog file that owns them, or choose an empty prefix", c.root, c.dbPath, found)
}
