package catalog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	bolt "go.etcd.io/bbolt"
)

// pointer returns the metadata location a table points to, or "" when the
// table does not exist.
func (c *Catalog) pointer(ctx context.Context, ident table.Identifier) (string, error) {
	var loc string
	err := c.view(ctx, func(tx *bolt.Tx) error {
		loc = string(tx.Bucket(bucketTables).Get(tableKey(ident)))

		return nil
	})

	return loc, err
}

// MetadataLocation returns the metadata file the table's pointer names.
func (c *Catalog) MetadataLocation(ctx context.Context, ident table.Identifier) (string, error) {
	if c.remote != nil {
		tbl, err := c.remote.LoadTable(ctx, ident)
		if err != nil {
			return "", err
		}
		return tbl.MetadataLocation(), nil
	}
	ident, err := Normalize(ident)
	if err != nil {
		return "", err
	}
	loc, err := c.pointer(ctx, ident)
	if err != nil {
		return "", err
	}
	if loc == "" {
		return "", errNoSuchTable(ident)
	}

	return loc, nil
}

// NewTableLocation allocates a fresh table directory,
// <lake>/<namespace>/<table>-<8 hex digits>. The random suffix keeps a
// re-created table from ever sharing files with a dropped one. Nothing is
// created on disk.
func (c *Catalog) NewTableLocation(ident table.Identifier) (string, error) {
	if c.remote != nil {
		return "", errRemote("allocating a table directory")
	}
	ident, err := Normalize(ident)
	if err != nil {
		return "", err
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("table %s: cannot allocate a location: %w", identString(ident), err)
	}
	loc := locJoin(c.root, ident[0], ident[1]+"-"+hex.EncodeToString(b[:]))
	if !locWithin(c.root, loc) {
		panic(fmt.Sprintf("catalog: broken invariant: validated name %v resolved outside the lake %q", ident, c.root))
	}
	if c.fileURIs && !IsURL(loc) {
		loc = "file://" + loc
	}

	return loc, nil
}

// TableLocation returns the table's directory, from its current metadata.
func (c *Catalog) TableLocation(ctx context.Context, ident table.Identifier) (string, error) {
	tbl, err := c.LoadTable(ctx, ident)
	if err != nil {
		return "", err
	}

	return tbl.Location(), nil
}

// LoadTable loads the table the pointer names. Its IO is the catalog's
// DurableFS and its catalog is c, so Transaction.Commit goes through
// CommitTable.
func (c *Catalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	if c.remote != nil {
		return c.rewrap(c.remote.LoadTable(ctx, ident))
	}
	ident, err := Normalize(ident)
	if err != nil {
		return nil, err
	}
	loc, tbl, err := c.current(ctx, ident)
	if err != nil {
		return nil, err
	}
	if loc == "" {
		return nil, errNoSuchTable(ident)
	}

	return tbl, nil
}

// current reads the pointer and the metadata file it names; loc is "" when
// the table does not exist. Another process may commit, and delete the
// metadata file just read from the pointer (write.metadata.delete-after-commit),
// between the two reads: then the pointer has moved, and it reads again.
func (c *Catalog) current(ctx context.Context, ident table.Identifier) (string, *table.Table, error) {
	const attempts = 5
	for i := 0; ; i++ {
		loc, err := c.pointer(ctx, ident)
		if err != nil || loc == "" {
			return "", nil, err
		}
		if !locWithin(c.root, loc) {
			// INVARIANT: pointers name files inside the lake
			// (SwapPointers checks it). One that does not was written
			// for another directory: the lake was copied or moved, and
			// reading on would read, and write into, the original's
			// files.
			return "", nil, newError([]error{ErrOutsideLake},
				"table %s: the catalog points at %s, outside this %s %q: the lake was copied or moved from another place, and its tables' files still name that place; open the lake where it was made, or make the copy self-contained with `skade relocate --lake DIR`",
				identString(ident), loc, c.lakeNoun(), c.root)
		}
		tbl, err := c.loadAt(ctx, ident, loc)
		if err == nil {
			return loc, tbl, nil
		}
		if i+1 < attempts && errors.Is(err, fs.ErrNotExist) {
			if now, perr := c.pointer(ctx, ident); perr == nil && now != loc {
				continue
			}
		}

		return "", nil, err
	}
}

// LoadTableAt loads the table from a given metadata file of the lake, e.g.
// an earlier one from the metadata log. The table commits through c, so a
// commit from it fails unless the pointer still names metadataLocation.
func (c *Catalog) LoadTableAt(ctx context.Context, ident table.Identifier, metadataLocation string) (*table.Table, error) {
	if c.remote != nil {
		return nil, errRemote("loading a table from a metadata file")
	}
	ident, err := Normalize(ident)
	if err != nil {
		return nil, err
	}
	if err := c.checkInLake(ident, "metadata file", metadataLocation); err != nil {
		return nil, err
	}

	return c.loadAt(ctx, ident, metadataLocation)
}

func (c *Catalog) loadAt(ctx context.Context, ident table.Identifier, loc string) (*table.Table, error) {
	if meta, ok := c.metaCache.Get(loc); ok {
		return table.New(ident, meta, loc, c.fsF, c), nil
	}
	tbl, err := table.NewFromLocation(ctx, ident, loc, c.fsF, c)
	if err != nil {
		return nil, fmt.Errorf("table %s: cannot read metadata file %s: %w; "+
			"restore the file from a backup, or drop the table", identString(ident), loc, err)
	}
	c.metaCache.Add(loc, tbl.Metadata())

	return tbl, nil
}

// CreateTable creates a table at a fresh location (see NewTableLocation):
// it writes version 0 of the metadata durably, then swaps the pointer from
// nothing to it. Field IDs are assigned afresh, as iceberg-go does.
// Custom locations (icecatalog.WithLocation) are refused: every table lives
// in the lake directory.
func (c *Catalog) CreateTable(ctx context.Context, ident table.Identifier, schema *iceberg.Schema,
	opts ...icecatalog.CreateTableOpt,
) (*table.Table, error) {
	if c.remote != nil {
		return c.rewrap(c.remote.CreateTable(ctx, ident, schema, opts...))
	}
	ident, err := Normalize(ident)
	if err != nil {
		return nil, err
	}
	// Refuse early what the swap would refuse anyway, to write nothing.
	if err := c.view(ctx, func(tx *bolt.Tx) error {
		if tx.Bucket(bucketNamespaces).Get([]byte(ident[0])) == nil {
			return errNoSuchNamespace(ident[0])
		}
		if tx.Bucket(bucketTables).Get(tableKey(ident)) != nil {
			return errTableExists(ident)
		}

		return nil
	}); err != nil {
		return nil, err
	}
	staged, err := c.StageCreate(ctx, ident, schema, opts...)
	if err != nil {
		return nil, err
	}
	if err := c.publish(ctx, []*StagedCommit{staged}); err != nil {
		var ce *ConflictError
		if errors.As(err, &ce) && ce.Found != "" {
			return nil, errTableExists(ident)
		}

		return nil, err
	}

	return table.New(ident, staged.Metadata, staged.MetadataLocation, c.fsF, c), nil
}

// StageCreate writes version 0 of a new table's metadata, at a fresh
// location, durably, without publishing it. Its Swap creates the table
// (Expected ""); set Swap.Expected to the current metadata location to
// replace an existing table instead. Publish with SwapPointers, or Discard.
// The namespace must exist; it and the name are checked again when the swap
// runs.
func (c *Catalog) StageCreate(ctx context.Context, ident table.Identifier, schema *iceberg.Schema,
	opts ...icecatalog.CreateTableOpt,
) (*StagedCommit, error) {
	if c.remote != nil {
		return nil, errRemote("staging a create")
	}
	ident, err := Normalize(ident)
	if err != nil {
		return nil, err
	}
	cfg := icecatalog.NewCreateTableCfg()
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.Location != "" {
		return nil, fmt.Errorf("create table %s: custom locations are not supported; "+
			"skade places every table in its lake directory, so leave the location out", identString(ident))
	}
	if schema == nil {
		return nil, fmt.Errorf("create table %s: the schema is missing; pass a schema", identString(ident))
	}
	if err := c.requireNamespace(ctx, ident[0]); err != nil {
		return nil, err
	}
	loc, err := c.NewTableLocation(ident)
	if err != nil {
		return nil, err
	}
	meta, err := table.NewMetadata(schema, cfg.PartitionSpec, cfg.SortOrder, loc, cfg.Properties)
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", identString(ident), err)
	}
	if len(cfg.StagedUpdates) > 0 {
		if meta, err = table.UpdateTableMetadata(meta, cfg.StagedUpdates, ""); err != nil {
			return nil, fmt.Errorf("create table %s: cannot apply the staged updates: %w", identString(ident), err)
		}
	}
	if err := c.checkLocations(ident, meta); err != nil {
		return nil, err
	}
	metaLoc, err := newMetadataLocation(meta, 0)
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", identString(ident), err)
	}
	if err := c.checkInLake(ident, "metadata file", metaLoc); err != nil {
		return nil, err
	}
	if err := c.WriteMetadata(ctx, meta, metaLoc); err != nil {
		c.removeEmptyDirs(metaLoc, meta.Location())

		return nil, fmt.Errorf("create table %s: %w", identString(ident), err)
	}

	return &StagedCommit{
		Ident: ident, Metadata: meta, MetadataLocation: metaLoc,
		Swap: PointerSwap{Ident: ident, New: metaLoc},
	}, nil
}

// CheckTableExists reports whether the table exists. A missing namespace
// means the table does not exist.
func (c *Catalog) CheckTableExists(ctx context.Context, ident table.Identifier) (bool, error) {
	if c.remote != nil {
		return c.remote.CheckTableExists(ctx, ident)
	}
	ident, err := Normalize(ident)
	if err != nil {
		return false, err
	}
	loc, err := c.pointer(ctx, ident)

	return loc != "", err
}

// ListTables yields the tables of a namespace, sorted by name.
func (c *Catalog) ListTables(ctx context.Context, namespace table.Identifier) iter.Seq2[table.Identifier, error] {
	if c.remote != nil {
		return c.remote.ListTables(ctx, namespace)
	}
	return func(yield func(table.Identifier, error) bool) {
		ns, err := namespaceName(namespace)
		if err != nil {
			yield(nil, err)

			return
		}
		var idents []table.Identifier
		err = c.view(ctx, func(tx *bolt.Tx) error {
			if tx.Bucket(bucketNamespaces).Get([]byte(ns)) == nil {
				return errNoSuchNamespace(ns)
			}
			prefix := nsPrefix(ns)
			cur := tx.Bucket(bucketTables).Cursor()
			for k, _ := cur.Seek(prefix); k != nil && len(k) > len(prefix) && string(k[:len(prefix)]) == string(prefix); k, _ = cur.Next() {
				idents = append(idents, table.Identifier{ns, string(k[len(prefix):])})
			}

			return nil
		})
		if err != nil {
			yield(nil, err)

			return
		}
		for _, id := range idents {
			if !yield(id, nil) {
				return
			}
		}
	}
}

// DropTable removes the table's pointer. Its files stay on disk (see
// PurgeTable).
func (c *Catalog) DropTable(ctx context.Context, ident table.Identifier) error {
	if c.remote != nil {
		return c.remote.DropTable(ctx, ident)
	}
	ident, err := Normalize(ident)
	if err != nil {
		return err
	}
	_, err = c.drop(ctx, ident)

	return err
}

// drop removes the pointer and returns the metadata location it held.
func (c *Catalog) drop(ctx context.Context, ident table.Identifier) (string, error) {
	var loc string
	err := c.update(ctx, func(tx *bolt.Tx) error {
		loc = string(tx.Bucket(bucketTables).Get(tableKey(ident)))
		if loc == "" {
			return errNoSuchTable(ident)
		}

		return applySwaps(tx, []PointerSwap{{Ident: ident, Expected: loc}})
	})

	return loc, err
}

// PurgeTable drops the table, then deletes its directory with every file in
// it, unless the table property gc.enabled is false. Files the table
// references outside its directory are left alone.
func (c *Catalog) PurgeTable(ctx context.Context, ident table.Identifier) error {
	if c.remote != nil {
		return c.remote.PurgeTable(ctx, ident)
	}
	ident, err := Normalize(ident)
	if err != nil {
		return err
	}
	tbl, err := c.LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	loc := tbl.Location()
	var shared []string
	err = c.update(ctx, func(tx *bolt.Tx) error {
		cur := string(tx.Bucket(bucketTables).Get(tableKey(ident)))
		if cur == "" {
			return errNoSuchTable(ident)
		}
		if err := applySwaps(tx, []PointerSwap{{Ident: ident, Expected: cur}}); err != nil {
			return err
		}
		// INVARIANT: a purge never deletes a file that a remaining table
		// may point to. Locations are unique per create, but check anyway.
		shared = tablesUnder(tx, loc)
		return nil
	})
	if err != nil {
		return err
	}
	if !tbl.Properties().GetBool(table.GCEnabledKey, true) {
		return nil
	}
	if len(shared) > 0 {
		return fmt.Errorf("purge table %s: dropped, but its files were kept: another table's metadata lives in %s; "+
			"remove the files by hand once no table uses them", identString(ident), loc)
	}
	if !locWithin(c.root, locDir(loc)) {
		return fmt.Errorf("purge table %s: dropped, but its files were kept: location %q is not a table directory of the lake; "+
			"remove the files by hand", identString(ident), loc)
	}
	if c.stillUsed != nil {
		used, err := c.stillUsed(ctx, ident)
		if err != nil {
			return fmt.Errorf("purge table %s: dropped, but its files were kept: listing the files other tables use failed: %w", identString(ident), err)
		}
		if err := c.removeUnused(loc, used); err != nil {
			return fmt.Errorf("purge table %s: dropped, but removing its files failed: %w", identString(ident), err)
		}
		return nil
	}
	if err := c.fs.RemoveAll(loc); err != nil {
		return fmt.Errorf("purge table %s: dropped, but removing %s failed: %w; remove it by hand",
			identString(ident), loc, err)
	}

	return nil
}

// removeUnused deletes the files under loc that used says no table uses,
// then the directories left empty.
func (c *Catalog) removeUnused(loc string, used func(string) bool) error {
	var dirs []string
	err := c.fs.WalkDir(loc, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		if used(p) {
			return nil
		}
		if err := c.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !c.Local() {
		return nil
	}
	slices.Reverse(dirs)
	for _, d := range dirs {
		_ = os.Remove(d) // only empty ones go
	}
	return nil
}

// RenameTable moves the pointer to a new name in one transaction. The table
// keeps its location.
func (c *Catalog) RenameTable(ctx context.Context, from, to table.Identifier) (*table.Table, error) {
	if c.remote != nil {
		return c.rewrap(c.remote.RenameTable(ctx, from, to))
	}
	from, err := Normalize(from)
	if err != nil {
		return nil, err
	}
	to, err = Normalize(to)
	if err != nil {
		return nil, err
	}
	if slices.Equal(from, to) {
		return nil, fmt.Errorf("rename table %s: the new name is the same as the old; choose another name", identString(from))
	}
	err = c.update(ctx, func(tx *bolt.Tx) error {
		loc := string(tx.Bucket(bucketTables).Get(tableKey(from)))
		if loc == "" {
			return errNoSuchTable(from)
		}
		err := applySwaps(tx, []PointerSwap{{Ident: from, Expected: loc}, {Ident: to, New: loc}})
		var ce *ConflictError
		if errors.As(err, &ce) && slices.Equal(ce.Ident, to) {
			return errTableExists(to)
		}

		return err
	})
	if err != nil {
		return nil, err
	}

	return c.LoadTable(ctx, to)
}

// WithFS returns tbl reading and writing through fsys instead of the
// catalog's DurableFS, still committing through c. Pass a Tracker that wraps
// FS() to learn, and on failure remove, every file one write created.
func (c *Catalog) WithFS(tbl *table.Table, fsys iceio.IO) *table.Table {
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(),
		func(context.Context) (iceio.IO, error) { return fsys, nil }, c)
}

// RegisterTable adds a table whose metadata file already exists in the
// lake, such as a table dropped with its files kept: the pointer moves
// from nothing to metadataLocation. The file must lie inside the lake, in
// a table directory no table of the catalog uses (two tables sharing one
// directory would let a purge of one delete the other's files).
func (c *Catalog) RegisterTable(ctx context.Context, ident table.Identifier, metadataLocation string) (*table.Table, error) {
	if c.remote != nil {
		return c.rewrap(c.remote.RegisterTable(ctx, ident, metadataLocation))
	}
	ident, err := Normalize(ident)
	if err != nil {
		return nil, err
	}
	if err := c.checkInLake(ident, "metadata file", metadataLocation); err != nil {
		return nil, err
	}
	tbl, err := c.loadAt(ctx, ident, metadataLocation)
	if err != nil {
		return nil, err
	}
	if err := c.checkLocations(ident, tbl.Metadata()); err != nil {
		return nil, err
	}
	dir := tbl.Location()
	err = c.update(ctx, func(tx *bolt.Tx) error {
		if users := tablesUnder(tx, dir); len(users) > 0 {
			return newError([]error{icecatalog.ErrTableAlreadyExists},
				"register table %s: table %s already uses the directory %s; a directory holds one table",
				identString(ident), users[0], dir)
		}
		return applySwaps(tx, []PointerSwap{{Ident: ident, New: metadataLocation}})
	})
	if err != nil {
		return nil, err
	}
	return tbl, nil
}

// tablesUnder names the tables whose pointer lies under dir ("ns.table"),
// read in tx.
func tablesUnder(tx *bolt.Tx, dir string) []string {
	var out []string
	_ = tx.Bucket(bucketTables).ForEach(func(k, v []byte) error {
		if locWithin(dir, string(v)) {
			out = append(out, strings.ReplaceAll(string(k), "\x00", "."))
		}
		return nil
	})
	return out
}
