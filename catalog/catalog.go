package catalog

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	icecatalog "github.com/apache/iceberg-go/catalog"
	icerest "github.com/apache/iceberg-go/catalog/rest"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

const (
	// DBFile is the name of the catalog file inside the lake directory.
	DBFile = "catalog.db"

	// DefaultLockTimeout bounds the wait for another process's lock on
	// catalog.db.
	DefaultLockTimeout = 10 * time.Second

	// formatVersion is stored in the meta bucket; bump it when the layout
	// of the buckets changes.
	formatVersion = "1"
)

// Bucket names. See doc.go for the layout.
var (
	bucketMeta       = []byte("meta")
	bucketNamespaces = []byte("namespaces")
	bucketTables     = []byte("tables")
	keyFormat        = []byte("format")
)

// Catalog is the bbolt-backed Iceberg catalog of one lake directory.
//
// INVARIANT: a Catalog holds no open handle on catalog.db between calls;
// every operation opens the file, holds its lock (shared for reads,
// exclusive for writes) for the duration of one bbolt transaction, and
// closes it. That is what lets several processes share a lake.
type Catalog struct {
	dir         string // absolute, cleaned directory of the catalog file
	dbPath      string
	lockTimeout time.Duration
	// fileURIs: new local tables get file:// locations (WithFileURIs)
	fileURIs bool
	// root is where tables live: dir itself for a local lake, or an
	// object-store URL (see OpenStore).
	root string
	fs   Store
	// remote, when set, is the REST catalog this Catalog stands in for
	// (OpenRemote); the bbolt fields are then unused.
	remote  *icerest.Catalog
	capture *capturingTransport
	// metaCache holds parsed metadata by file location. Metadata files are
	// never rewritten in place (a commit writes a new file), so a cached
	// entry can never be stale; the cache only saves re-parsing JSON that
	// grows with the number of snapshots, which dominated commit latency on
	// tables with long histories (see BENCHMARKS.md).
	metaCache *lru.Cache[string, table.Metadata]
	// snapJSON reuses the encoding of snapshots across metadata files.
	snapJSON *snapshotJSON
	// stillUsed, when set, tells PurgeTable which files other tables
	// still reference (see SetPurgeGuard).
	stillUsed func(ctx context.Context, except table.Identifier) (func(path string) bool, error)
	// commitLocks serialize this process's commits to one table (see
	// LockTable); keyed by the identifier joined with NUL.
	commitLocks sync.Map
}

// LockTable takes this process's commit lock on table id and returns
// its release. Writers in one process that hold it while they commit
// never lose a commit race to each other, so a row-level write that
// must be validated and restaged on a new head (snapshot.Commit's
// rebase) is not starved by the others' commits; writers in other
// processes still race through the catalog's compare-and-swap.
func (c *Catalog) LockTable(id table.Identifier) (unlock func()) {
	m, _ := c.commitLocks.LoadOrStore(strings.Join(id, "\x00"), &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// SetPurgeGuard installs how PurgeTable learns which of a purged table's
// files other tables still reference: zero-copy clones share data files
// and manifests across table directories, and the catalog cannot read
// manifests itself. PurgeTable calls f after the pointer is gone, and then
// deletes only files for which the returned function is false. Without a
// guard, PurgeTable deletes the whole table directory. lake.Open sets one.
func (c *Catalog) SetPurgeGuard(f func(ctx context.Context, except table.Identifier) (func(path string) bool, error)) {
	c.stillUsed = f
}

// metaCacheEntries bounds the metadata cache. Entries are the tables'
// recent metadata versions; a few per table in use is enough.
const metaCacheEntries = 64

var (
	_ icecatalog.Catalog              = (*Catalog)(nil)
	_ icecatalog.TransactionalCatalog = (*Catalog)(nil)
	_ icecatalog.PurgeableTable       = (*Catalog)(nil)
	_ icecatalog.Closer               = (*Catalog)(nil)
	_ table.CatalogIO                 = (*Catalog)(nil)
)

type options struct {
	lockTimeout time.Duration
	store       Store
	dbPath      string
	fileURIs    bool
}

// Option configures Open.
type Option func(*options)

// WithLockTimeout bounds how long an operation waits for another process to
// release catalog.db (default 10s). Non-positive values mean the default.
func WithLockTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.lockTimeout = d
		}
	}
}

// WithFileURIs gives the tables a local lake creates file:// URI
// locations (file:///lake/main/t-…), so that every path their metadata,
// manifests and delete files hold is a URI, as the Iceberg spec words
// it: for readers that resolve a path without a scheme against another
// default file system (Hadoop's fs.defaultFS). Existing tables keep
// their locations.
func WithFileURIs() Option { return func(o *options) { o.fileURIs = true } }

// Open opens the lake at lakeDir, creating the directory, catalog.db and the
// namespace "main" when absent.
//
// A lake directory that holds tables but whose catalog.db is missing or
// empty is refused with ErrCatalogMissing: the catalog was lost, and a
// fresh empty one would hide every table. Repair rebuilds it.
func Open(lakeDir string, opts ...Option) (*Catalog, error) {
	return open(lakeDir, false /* repair */, opts...)
}

// OpenStore opens a lake whose tables live in store (an object store) and
// whose catalog is the local file dbFile, creating the file, its directory
// and the namespace "main" when absent. A new catalog file is refused with
// ErrCatalogMissing when the store already holds files under its root:
// another catalog (or a lost one) owns them, and a fresh empty catalog
// would hide every table.
func OpenStore(dbFile string, store Store, opts ...Option) (*Catalog, error) {
	if dbFile == "" {
		return nil, fmt.Errorf("open lake %s: no catalog file; a lake in an object store keeps its catalog in a local file: pass one (--catalog FILE)", store.Root())
	}
	abs, err := filepath.Abs(dbFile)
	if err != nil {
		return nil, fmt.Errorf("open lake %s: catalog file %q: %w", store.Root(), dbFile, err)
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("open lake %s: the catalog file %q is a directory; name a file, such as %s", store.Root(), dbFile, filepath.Join(dbFile, DBFile))
	}
	return open(filepath.Dir(abs), false, append(opts, func(o *options) { o.store, o.dbPath = store, abs })...)
}

func open(lakeDir string, repair bool, opts ...Option) (*Catalog, error) {
	o := options{lockTimeout: DefaultLockTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if lakeDir == "" {
		return nil, errors.New("open lake: the lake directory is empty; name a directory")
	}
	abs, err := filepath.Abs(lakeDir)
	if err != nil {
		return nil, fmt.Errorf("open lake %q: %w", lakeDir, err)
	}
	abs = filepath.Clean(abs)
	if o.store == nil {
		if err := checkURLSafe(abs); err != nil {
			return nil, err
		}
	}
	if err := mkdirDurable(abs); err != nil {
		return nil, fmt.Errorf("open lake %q: cannot create the lake directory: %w", abs, err)
	}
	c := &Catalog{
		dir:         abs,
		dbPath:      filepath.Join(abs, DBFile),
		lockTimeout: o.lockTimeout,
		fileURIs:    o.fileURIs,
		root:        abs,
		fs:          o.store,
	}
	if o.store != nil {
		c.root, c.dbPath = strings.TrimSuffix(o.store.Root(), "/"), o.dbPath
	} else {
		dfs, err := NewDurableFS(abs)
		if err != nil {
			return nil, err
		}
		c.fs = dfs
	}
	c.metaCache, _ = lru.New[string, table.Metadata](metaCacheEntries) // only fails for size <= 0
	c.snapJSON = newSnapshotJSON()
	fi, statErr := os.Stat(c.dbPath)
	exists := statErr == nil && fi.Size() > 0
	if errors.Is(statErr, os.ErrNotExist) || (statErr == nil && fi.Size() == 0) {
		if !repair {
			if err := c.checkNotLost(); err != nil {
				return nil, err
			}
		}
		if statErr == nil {
			// bbolt would initialize the empty file in place; start over
			if err := os.Remove(c.dbPath); err != nil {
				return nil, fmt.Errorf("open lake %q: removing the empty %s: %w", abs, DBFile, err)
			}
		}
	}
	// An existing catalog is only read, under a shared lock: a reader
	// needs no write permission and does not hold off writers.
	if exists {
		if ready, err := c.ready(abs); err != nil || ready {
			if err != nil {
				return nil, err
			}
			return c, nil
		}
	}
	err = c.updateDB(context.Background(), true /* create */, func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		switch v := meta.Get(keyFormat); {
		case v == nil:
			if err := meta.Put(keyFormat, []byte(formatVersion)); err != nil {
				return err
			}
		case string(v) != formatVersion:
			return errFormat(abs, v)
		}
		if _, err := tx.CreateBucketIfNotExists(bucketTables); err != nil {
			return err
		}
		ns, err := tx.CreateBucketIfNotExists(bucketNamespaces)
		if err != nil {
			return err
		}
		if ns.Get([]byte(DefaultNamespace)) == nil {
			return ns.Put([]byte(DefaultNamespace), []byte("{}"))
		}

		return nil
	})
	if err != nil {
		return nil, err
	}

	return c, nil
}

// ready reports whether the existing catalog.db has its buckets, the
// default namespace and this format, reading it only; false means Open
// must create what is missing.
func (c *Catalog) ready(abs string) (bool, error) {
	ok := false
	err := c.view(context.Background(), func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return nil
		}
		if v := meta.Get(keyFormat); v == nil {
			return nil
		} else if string(v) != formatVersion {
			return errFormat(abs, v)
		}
		ok = tx.Bucket(bucketNamespaces).Get([]byte(DefaultNamespace)) != nil
		return nil
	})
	if errors.Is(err, ErrCatalogDamaged) {
		return false, err
	}
	// any other error: the read-write open below creates what is
	// missing, or reports the same error
	return ok && err == nil, nil
}

// errFormat refuses a catalog.db written in another layout.
func errFormat(abs string, v []byte) error {
	return fmt.Errorf("open lake %q: catalog.db has format %q, this skade reads format %q; "+
		"use a skade release that matches the lake", abs, v, formatVersion)
}

// checkURLSafe refuses lake directories whose path a URL would escape:
// iceberg-go builds data and metadata locations with net/url, so such a
// path would come back percent-encoded and point elsewhere.
func checkURLSafe(dir string) error {
	slashed := filepath.ToSlash(dir)
	u := url.URL{Path: slashed}
	if u.EscapedPath() != slashed {
		return fmt.Errorf("open lake %q: the path has characters that Iceberg locations (URLs) escape, "+
			"such as spaces, %%, # or non-ASCII letters; choose a lake directory whose path has none", dir)
	}

	return nil
}

// mkdirDurable creates dir and its parents, fsyncing what it created.
func mkdirDurable(dir string) error {
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) || filepath.Dir(p) == p {
			return err
		}
		missing = append(missing, p)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		if err := syncDirs(missing[i], filepath.Dir(missing[i])); err != nil {
			return err
		}
	}

	return nil
}

// Dir returns the absolute directory of the catalog file: the lake
// directory of a local lake.
func (c *Catalog) Dir() string { return c.dir }

// Root returns where the tables live: the lake directory, or an object
// store URL (s3://bucket/prefix).
func (c *Catalog) Root() string { return c.root }

// Local reports whether the tables live on local disk.
func (c *Catalog) Local() bool { return c.remote == nil && !IsURL(c.root) }

// FS returns the durable IO that tables of this catalog read and write with.
func (c *Catalog) FS() Store { return c.fs }

// Name returns "skade".
func (c *Catalog) Name() string { return Name }

// CatalogType returns "skade".
func (c *Catalog) CatalogType() icecatalog.Type { return icecatalog.Type(Name) }

// Close releases nothing: the catalog holds no open handle between calls.
// It exists so callers can treat the catalog like other iceberg-go catalogs.
func (c *Catalog) Close() error {
	if c.remote != nil {
		return c.remote.Close()
	}
	return nil
}

func (c *Catalog) fsF(context.Context) (iceio.IO, error) { return c.fs, nil }

// view runs fn in a read-only bbolt transaction under a shared file lock.
func (c *Catalog) view(ctx context.Context, fn func(tx *bolt.Tx) error) (err error) {
	db, err := c.openDB(ctx, true, false)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil { // bbolt, outside the transaction
			_ = db.Close()
			err = c.damaged(r)
		}
	}()
	err = db.View(func(tx *bolt.Tx) (err error) {
		defer c.recoverDamage(&err)
		if err := c.checkBuckets(tx); err != nil {
			return err
		}

		return fn(tx)
	})

	return errors.Join(err, closeDB(db))
}

// checkBuckets refuses a catalog.db that lacks the buckets Open creates
// (replaced by another bbolt file), instead of failing on a nil bucket.
func (c *Catalog) checkBuckets(tx *bolt.Tx) error {
	if tx.Bucket(bucketTables) == nil || tx.Bucket(bucketNamespaces) == nil {
		return fmt.Errorf("lake %q: %s is not a skade catalog (its buckets are missing); "+
			"restore it from a backup, or open the lake in a new directory", c.dir, DBFile)
	}

	return nil
}

// update runs fn in one read-write bbolt transaction under an exclusive file
// lock. bbolt fsyncs the file before Update returns.
//
// An error returned by fn, or from opening the file, means nothing changed.
// An error from committing the transaction means the outcome is unknown;
// it wraps ErrCommitStateUnknown so that callers keep the files the
// transaction may now point to.
func (c *Catalog) update(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	return c.updateDB(ctx, false, fn)
}

// updateDB is update; only Open passes create, to make catalog.db and its
// buckets. Other writes never create the file, so a catalog.db removed
// under a running catalog is an error, not a silently empty lake.
func (c *Catalog) updateDB(ctx context.Context, create bool, fn func(tx *bolt.Tx) error) (err error) {
	db, err := c.openDB(ctx, false, create)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil { // bbolt, outside the transaction
			_ = db.Close()
			err = c.damaged(r)
		}
	}()
	var fnErr error
	err = db.Update(func(tx *bolt.Tx) (txErr error) {
		defer func() {
			if r := recover(); r != nil {
				fnErr = c.damaged(r)
				txErr = fnErr // bbolt rolls back
			}
		}()
		if !create {
			if fnErr = c.checkBuckets(tx); fnErr != nil {
				return fnErr
			}
		}
		fnErr = fn(tx)

		return fnErr
	})
	closeErr := closeDB(db)
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return newError([]error{ErrCommitStateUnknown, err},
			"lake %q: writing %s failed: %v; reload to see whether the change landed", c.dir, DBFile, err)
	}
	// The transaction is durable; a failure to close the handle afterwards
	// does not undo it and must not make the caller clean up its files.
	_ = closeErr

	return nil
}

// recoverDamage turns a bbolt panic on a corrupt page into
// ErrCatalogDamaged. bbolt panics on pages it cannot make sense of (an
// overwritten or truncated file); a damaged file is bad input, not a bug,
// and must not take the process down.
func (c *Catalog) recoverDamage(err *error) {
	if r := recover(); r != nil {
		*err = c.damaged(r)
	}
}

func (c *Catalog) damaged(r any) error {
	return newError([]error{ErrCatalogDamaged},
		"%s is damaged (%v); nothing was changed. Run `skade repair` to rebuild it from the tables' metadata, or restore it from a backup",
		filepath.Join(c.dir, DBFile), r)
}

func (c *Catalog) openDB(ctx context.Context, readOnly, create bool) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, c.damaged(r)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	timeout := c.lockTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	db, err = bolt.Open(c.dbPath, 0o644, &bolt.Options{
		Timeout:  timeout,
		ReadOnly: readOnly,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			if !create {
				flag &^= os.O_CREATE
			}

			return os.OpenFile(name, flag, perm)
		},
	})
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("lake %q: waiting for catalog.db: %w", c.dir, ctxErr)
		}

		return nil, newError([]error{ErrLockTimeout},
			"catalog: lake %q is busy: another process has held catalog.db for %s; retry, or raise the lock timeout",
			c.dir, timeout.Round(time.Millisecond))
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("lake %q: %s is missing; open the lake with catalog.Open to create it: %w",
			c.dir, DBFile, err)
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrChecksum), errors.Is(err, bolterrors.ErrVersionMismatch):
		return nil, c.damaged(err)
	case err != nil:
		return nil, fmt.Errorf("lake %q: cannot open %s: %w", c.dir, DBFile, err)
	}

	return db, nil
}

func closeDB(db *bolt.DB) error {
	if err := db.Close(); err != nil {
		return fmt.Errorf("close %s: %w", DBFile, err)
	}

	return nil
}

// tableKey is the key of a table pointer in the tables bucket. Names never
// contain NUL (ValidateName), so the key is unambiguous and all tables of a
// namespace share the prefix "<ns>\x00".
func tableKey(ident table.Identifier) []byte {
	return []byte(ident[0] + "\x00" + ident[1])
}

func nsPrefix(ns string) []byte { return []byte(ns + "\x00") }
