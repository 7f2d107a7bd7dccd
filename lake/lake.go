package lake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/exec"
	"github.com/skadedb/skade/objstore"
	"github.com/skadedb/skade/plan"
	"github.com/skadedb/skade/snapshot"
)

// DefaultDir is where the CLI keeps its lake when neither --lake nor
// $SKADE_LAKE says otherwise.
const DefaultDir = "./skade-lake"

// Lake is an open lake directory: a catalog file and the Iceberg tables it
// points at. A Lake is safe for concurrent use, and several processes may
// open the same directory: the catalog file is locked per operation only.
type Lake struct {
	dir  string
	cat  *catalog.Catalog
	opts options
}

type options struct {
	lockTimeout   time.Duration
	fileURIs      bool
	memoryLimit   int64
	tableDefaults map[string]string
	// runtimeMemoryLimit lets statements set the Go soft memory limit
	// (see gcGovernor).
	runtimeMemoryLimit bool
	// noCreate refuses a directory that holds no lake (WithoutCreate).
	noCreate bool
	// catalogFile is the local catalog of an object-store lake.
	catalogFile string
	// store tunes the object store client.
	store objstore.Config
	// restToken and restCredential authenticate to a REST catalog.
	restToken, restCredential string
}

// Option configures Open.
type Option func(*options)

// WithLockTimeout bounds how long an operation waits for another process
// that holds the catalog file (default 10s).
func WithLockTimeout(d time.Duration) Option { return func(o *options) { o.lockTimeout = d } }

// WithMemoryLimit bounds the memory one statement may hold in join build
// sides, aggregate state and sort buffers (default: 1/4 of the machine's
// memory is not probed; 4 GiB).
func WithMemoryLimit(bytes int64) Option { return func(o *options) { o.memoryLimit = bytes } }

// WithRuntimeMemoryLimit(false) keeps statements from setting the Go
// runtime's soft memory limit. By default, while statements run and the
// program has set no limit of its own (GOMEMLIMIT or debug.SetMemoryLimit),
// skade sets it to the memory in use before they started plus their
// memory limits and a sixteenth more, so that the collector frees garbage
// before the process grows past what the statements may hold; the
// previous setting comes back when the last statement ends. Turn it off
// when the program holds large live data of its own while it queries, and
// set GOMEMLIMIT to suit it instead.
func WithRuntimeMemoryLimit(on bool) Option { return func(o *options) { o.runtimeMemoryLimit = on } }

// WithoutCreate makes Open fail with ErrLakeNotFound when dir holds no
// lake (no catalog file and no tables), instead of creating one there: for
// tools that only read, where a mistyped path must not leave an empty
// lake behind.
func WithoutCreate() Option { return func(o *options) { o.noCreate = true } }

// WithTableDefaults sets table properties that every table created
// through this Lake gets, over skade's defaults and under the table's own
// WITH (...) properties. Tests use it to give ordinary small tables
// multi-row-group, multi-split files ('read.split.target-size',
// 'write.parquet.row-group-limit').
func WithTableDefaults(props map[string]string) Option {
	return func(o *options) { o.tableDefaults = maps.Clone(props) }
}

// WithCatalogFile names the local catalog file of a lake that lives in an
// object store (s3://bucket/prefix): the bbolt file that points at each
// table's current metadata. Every process that shares the lake must use
// the same file (or, across machines, a REST catalog). It is required for
// s3:// lakes and ignored for local ones, whose catalog is
// <dir>/catalog.db.
func WithCatalogFile(path string) Option { return func(o *options) { o.catalogFile = path } }

// WithFileURIs gives the tables a local lake creates file:// URI
// locations, so every path their metadata and manifests hold is a URI
// (catalog.WithFileURIs). Plain paths are the default; docs/sql.md,
// "Plain paths and file:// URIs", says which readers care.
func WithFileURIs() Option { return func(o *options) { o.fileURIs = true } }

// WithObjectStore tunes the object store client of an s3:// lake
// (retries, part size); the zero Config is the default.
func WithObjectStore(cfg objstore.Config) Option { return func(o *options) { o.store = cfg } }

// Open opens the lake at dir, creating it when it does not exist.
//
// dir is a local directory, or an object store location s3://bucket/prefix
// (and S3-compatible stores: credentials, region and endpoint come from
// the standard AWS chain, AWS_ENDPOINT_URL included), which needs
// WithCatalogFile, or an Iceberg REST catalog, rest+http://host:port or
// rest+https://… (WithCatalogAuth authenticates), whose tables' files are
// read and written where the catalog's locations say.
func Open(ctx context.Context, dir string, opts ...Option) (*Lake, error) {
	if objstore.IsURL(dir) {
		return openStore(ctx, dir, opts)
	}
	if IsRESTLocation(dir) {
		return openREST(ctx, dir, defaultOptions(opts))
	}
	o := defaultOptions(opts)
	if dir == "" {
		return nil, &sentinelError{ErrInvalidArgument, errors.New("open lake: the directory is empty; pass a path such as ./skade-lake")}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open lake %q: %w", dir, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if o.noCreate {
		if err := lakeExists(abs, dir); err != nil {
			return nil, err
		}
	}
	copts := []catalog.Option{catalog.WithLockTimeout(o.lockTimeout)}
	if o.fileURIs {
		copts = append(copts, catalog.WithFileURIs())
	}
	cat, err := catalog.Open(abs, copts...)
	if err != nil {
		return nil, translate(fmt.Errorf("open lake %q: %w", dir, err))
	}
	return newLake(abs, cat, o), nil
}

// openStore opens a lake in an object store, its catalog in a local file.
func openStore(ctx context.Context, loc string, opts []Option) (*Lake, error) {
	o := defaultOptions(opts)
	if o.catalogFile == "" {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("open lake %s: a lake in an object store keeps its catalog in a local file; "+
			"pass one with --catalog FILE (lake.WithCatalogFile), the same file for every process that shares the lake", loc)}
	}
	if o.noCreate {
		if _, err := os.Stat(o.catalogFile); errors.Is(err, fs.ErrNotExist) {
			return nil, &sentinelError{ErrLakeNotFound, fmt.Errorf("no lake at %s: its catalog file %s does not exist", loc, o.catalogFile)}
		}
	}
	store, err := objstore.Open(ctx, loc, o.store)
	if err != nil {
		return nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("open lake: %w", err)}
	}
	cat, err := catalog.OpenStore(o.catalogFile, store, catalog.WithLockTimeout(o.lockTimeout))
	if err != nil {
		return nil, translate(fmt.Errorf("open lake %s: %w", loc, err))
	}
	return newLake(store.Root(), cat, o), nil
}

func defaultOptions(opts []Option) options {
	o := options{lockTimeout: 10 * time.Second, memoryLimit: 4 << 30, runtimeMemoryLimit: true}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

func newLake(dir string, cat *catalog.Catalog, o options) *Lake {
	l := &Lake{dir: dir, cat: cat, opts: o}
	// iceberg-go tools purging through the catalog must keep the files
	// clones share, as DropTable does
	cat.SetPurgeGuard(func(ctx context.Context, except table.Identifier) (func(string) bool, error) {
		refs, err := l.otherRefs(except)(ctx)
		if err != nil {
			return nil, err
		}
		return refs.Has, nil
	})
	return l
}

// Close releases the lake. The catalog file is not held open between
// operations; Close drops the join tables' arrays statements keep for
// the next one (docs/sql.md, "Memory"), which every lake of the process
// shares, so another open lake's next large build allocates its own.
func (l *Lake) Close() error {
	exec.DropPooled()
	return l.cat.Close()
}

// ObjectStoreStats returns the requests and bytes the lake's object store
// has served so far; ok is false for a lake on local disk.
func (l *Lake) ObjectStoreStats() (stats objstore.StatsSnapshot, ok bool) {
	if f, isObj := l.cat.FS().(*objstore.FS); isObj {
		return f.Stats(), true
	}
	return objstore.StatsSnapshot{}, false
}

// ObjectStoreProperties are the Iceberg FileIO properties another engine
// needs to reach the lake's object store (s3.endpoint, s3.path-style-access,
// client.region), and with credentials the keys the lake itself uses. A
// lake on local disk has none (nil).
func (l *Lake) ObjectStoreProperties(ctx context.Context, credentials bool) (map[string]string, error) {
	if f, ok := l.cat.FS().(*objstore.FS); ok {
		return f.ClientProperties(ctx, credentials)
	}
	return nil, nil
}

// Dir is the lake's absolute directory, or its object store location
// (s3://bucket/prefix).
func (l *Lake) Dir() string { return l.dir }

// Catalog exposes the lake's Iceberg catalog, for tools that speak
// iceberg-go directly.
func (l *Lake) Catalog() *catalog.Catalog { return l.cat }

// ParseName splits a dotted table name ("events", "main.events",
// "skade.main.events") into its parts. A part in double quotes may contain
// dots: `"my.table"`.
func ParseName(name string) ([]string, error) {
	var parts []string
	var cur strings.Builder
	inQuote := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case inQuote && c == '"' && i+1 < len(name) && name[i+1] == '"':
			cur.WriteByte('"')
			i++
		case c == '"':
			inQuote = !inQuote
		case c == '.' && !inQuote:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if inQuote {
		return nil, &sentinelError{ErrInvalidName, fmt.Errorf("invalid table name %q: unterminated double quote; close it or leave quotes out", name)}
	}
	parts = append(parts, cur.String())
	return parts, nil
}

// ident resolves a user's table name to the catalog identifier.
func (l *Lake) ident(name string) (table.Identifier, error) {
	parts, err := ParseName(name)
	if err != nil {
		return nil, err
	}
	id, err := catalog.Normalize(parts)
	if err != nil {
		return nil, translate(err)
	}
	return id, nil
}

// displayName is how messages name a table: namespace.table.
func displayName(id table.Identifier) string { return strings.Join(id, ".") }

// TableOption configures CreateTable.
type TableOption func(*tableConfig) error

type tableConfig struct {
	partitions []Partition
	props      iceberg.Properties
	// identifier are the schema's identifier fields (a PRIMARY KEY's
	// columns).
	identifier []string
	// writeDefaults are fields' Iceberg write-defaults, by column.
	writeDefaults map[string]iceberg.Literal
}

// withWriteDefaults sets the new table's fields' write-defaults (a v3
// table's constant DEFAULTs, which the planner also keeps as properties).
func withWriteDefaults(d map[string]iceberg.Literal) TableOption {
	return func(c *tableConfig) error {
		c.writeDefaults = d
		return nil
	}
}

// withIdentifierFields makes the columns the new table's identifier
// fields: CREATE TABLE's PRIMARY KEY, whose constraint property the
// planner sets.
func withIdentifierFields(cols []string) TableOption {
	return func(c *tableConfig) error {
		c.identifier = cols
		return nil
	}
}

// PartitionBy partitions a new table. Each spec is "col", "year(ts)",
// "month(ts)", "day(ts)", "hour(ts)", "bucket(N, col)" or
// "truncate(W, col)".
func PartitionBy(specs ...string) TableOption {
	return func(c *tableConfig) error {
		for _, s := range specs {
			p, err := ParsePartition(s)
			if err != nil {
				return err
			}
			c.partitions = append(c.partitions, p)
		}
		return nil
	}
}

// WithPartitions partitions a new table by already-parsed fields.
func WithPartitions(ps ...Partition) TableOption {
	return func(c *tableConfig) error {
		c.partitions = append(c.partitions, ps...)
		return nil
	}
}

// WithProperties sets Iceberg table properties; they override skade's
// defaults (see package snapshot). "format-version" may be 2 or 3.
func WithProperties(props map[string]string) TableOption {
	return func(c *tableConfig) error {
		for k, v := range props {
			c.props[k] = v
		}
		return nil
	}
}

// CreateTable creates an empty table with the given Arrow schema. Fields
// that are not nullable become required (NOT NULL) columns.
func (l *Lake) CreateTable(ctx context.Context, name string, schema *arrow.Schema, opts ...TableOption) (*Table, error) {
	id, err := l.ident(name)
	if err != nil {
		return nil, err
	}
	ischema, spec, props, err := defineTable(id, schema, l.withDefaults(opts))
	if err != nil {
		return nil, err
	}
	created, err := l.cat.CreateTable(ctx, id, ischema,
		icecatalog.WithPartitionSpec(spec), icecatalog.WithProperties(props))
	if err != nil {
		return nil, translate(fmt.Errorf("create table %s: %w", displayName(id), err))
	}
	return l.newTable(id, created, created.CurrentSnapshot()), nil
}

// withDefaults puts the lake's table defaults before a new table's
// options, so that the table's own properties win.
func (l *Lake) withDefaults(opts []TableOption) []TableOption {
	if len(l.opts.tableDefaults) == 0 {
		return opts
	}
	return append([]TableOption{WithProperties(l.opts.tableDefaults)}, opts...)
}

// defineTable applies a new table's options and turns its Arrow schema
// into Iceberg's schema, partition spec and properties.
func defineTable(id table.Identifier, schema *arrow.Schema, opts []TableOption) (*iceberg.Schema, *iceberg.PartitionSpec, iceberg.Properties, error) {
	cfg := tableConfig{props: iceberg.Properties{}}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, nil, nil, fmt.Errorf("create table %s: %w", displayName(id), err)
		}
	}
	ischema, spec, props, err := tableSpec(schema, cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("create table %s: %w", displayName(id), err)
	}
	return ischema, spec, props, nil
}

// tableSpec turns the user's Arrow schema and options into Iceberg's
// schema, partition spec and properties.
func tableSpec(schema *arrow.Schema, cfg tableConfig) (*iceberg.Schema, *iceberg.PartitionSpec, iceberg.Properties, error) {
	if schema == nil || schema.NumFields() == 0 {
		return nil, nil, nil, &sentinelError{ErrInvalidArgument, errors.New("a table needs at least one column")}
	}
	seen := map[string]bool{}
	for _, f := range schema.Fields() {
		if err := validateColumnName(f.Name); err != nil {
			return nil, nil, nil, err
		}
		lower := strings.ToLower(f.Name)
		if seen[lower] {
			return nil, nil, nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("column %q is defined twice; rename one of them", f.Name)}
		}
		seen[lower] = true
	}
	// Arrow types without an Iceberg type of their own become the type
	// SQL computes them as (plan.CanonicalType): an unsigned integer the
	// next signed type that holds all its values, a dictionary its values,
	// a time or date of another unit microseconds or days, a timestamp in
	// a named zone timestamptz. (iceberg-go made a uint32 column an int
	// and refused the others.)
	fields := schema.Fields()
	for i, f := range fields {
		if primitive(f.Type) || f.Type.ID() == arrow.DICTIONARY {
			fields[i].Type = plan.CanonicalType(f.Type)
		}
	}
	md := schema.Metadata()
	schema = arrow.NewSchema(fields, &md)
	ischema, err := table.ArrowSchemaToIcebergWithFreshIDs(schema, true /* downcastNsTimestamp */)
	if err != nil {
		return nil, nil, nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("unsupported schema: %w", err)}
	}
	if len(cfg.writeDefaults) > 0 {
		fields := ischema.Fields()
		for i, f := range fields {
			if lit, ok := cfg.writeDefaults[f.Name]; ok {
				fields[i].WriteDefault = lit.Any()
			}
		}
		ischema = iceberg.NewSchemaWithIdentifiers(ischema.ID, ischema.IdentifierFieldIDs, fields...)
	}
	if len(cfg.identifier) > 0 {
		ids := make([]int, len(cfg.identifier))
		for i, c := range cfg.identifier {
			f, ok := ischema.FindFieldByName(c)
			if !ok {
				return nil, nil, nil, &sentinelError{ErrInvalidArgument, fmt.Errorf("identifier column %q is not a column of the table", c)}
			}
			ids[i] = f.ID
		}
		ischema = iceberg.NewSchemaWithIdentifiers(ischema.ID, ids, ischema.Fields()...)
	}
	for k := range cfg.props {
		if err := plan.CheckPropertyName(k); err != nil {
			return nil, nil, nil, &sentinelError{ErrInvalidArgument, err}
		}
	}
	props, err := snapshot.Merge(cfg.props)
	if err != nil {
		return nil, nil, nil, &sentinelError{ErrInvalidArgument, err}
	}
	// Dictionary encoding pays on string columns only; see snapshot.Defaults.
	for _, f := range ischema.Fields() {
		if f.Type.Equals(iceberg.PrimitiveTypes.String) {
			k, v := snapshot.DictionaryFor(f.Name)
			if _, set := cfg.props[k]; !set {
				props[k] = v
			}
		}
	}
	spec, err := buildSpec(ischema, cfg.partitions)
	if err != nil {
		return nil, nil, nil, err
	}
	return ischema, spec, props, nil
}

// Table returns a handle on the named table, pinned to its current
// snapshot.
func (l *Lake) Table(ctx context.Context, name string) (*Table, error) {
	id, err := l.ident(name)
	if err != nil {
		return nil, err
	}
	tbl, err := l.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return l.newTable(id, tbl, tbl.CurrentSnapshot()), nil
}

// load reads a table's current metadata. Another process may commit
// several times between our reading the pointer and reading the metadata
// file, and old metadata files are deleted after commit; a missing file is
// therefore retried with a fresh pointer.
func (l *Lake) load(ctx context.Context, id table.Identifier) (*table.Table, error) {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var tbl *table.Table
		tbl, err = l.cat.LoadTable(ctx, id)
		if err == nil {
			return tbl, nil
		}
		if !isNotExist(err) || errors.Is(err, icecatalog.ErrNoSuchTable) {
			break
		}
	}
	if errors.Is(err, icecatalog.ErrNoSuchTable) {
		return nil, &sentinelError{ErrTableNotFound, fmt.Errorf("table %s does not exist; list tables with `skade tables` or SHOW TABLES", displayName(id))}
	}
	return nil, translate(fmt.Errorf("load table %s: %w", displayName(id), err))
}

// Namespaces lists the lake's namespaces (schemas), sorted; the default
// namespace, main, is always one.
func (l *Lake) Namespaces(ctx context.Context) ([]string, error) {
	ids, err := l.cat.ListNamespaces(ctx, nil)
	if err != nil {
		return nil, translate(err)
	}
	out := []string{catalog.DefaultNamespace}
	for _, id := range ids {
		if n := strings.Join(id, "."); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Tables lists every table in the lake as namespace.table, sorted.
func (l *Lake) Tables(ctx context.Context) ([]string, error) {
	nss, err := l.cat.ListNamespaces(ctx, nil)
	if err != nil {
		return nil, translate(err)
	}
	var out []string
	for _, ns := range nss {
		for id, err := range l.cat.ListTables(ctx, ns) {
			if err != nil {
				return nil, translate(err)
			}
			out = append(out, displayName(id))
		}
	}
	slices.Sort(out)
	return out, nil
}

// DropTable removes a table from the catalog. With purge it also deletes
// the table's files, except those another table still references (a
// clone shares its source's data files).
func (l *Lake) DropTable(ctx context.Context, name string, purge bool) error {
	id, err := l.ident(name)
	if err != nil {
		return err
	}
	tbl, err := l.load(ctx, id)
	if err != nil {
		return err
	}
	if err := l.cat.DropTable(ctx, id); err != nil {
		return translate(fmt.Errorf("drop table %s: %w", displayName(id), err))
	}
	if !purge {
		return nil
	}
	// The drop has committed; from here a failure leaves only unreferenced
	// files, which orphan cleanup of the lake removes.
	others, err := l.otherRefs(id)(ctx)
	if err != nil {
		return fmt.Errorf("drop table %s: dropped, but its files were not purged: %w", displayName(id), err)
	}
	if err := snapshot.Purge(ctx, tbl, others); err != nil {
		return fmt.Errorf("drop table %s: dropped, but purging its files failed: %w", displayName(id), err)
	}
	return nil
}

// otherRefs returns a RefsFunc listing the files that every table other
// than id reaches.
func (l *Lake) otherRefs(id table.Identifier) snapshot.RefsFunc {
	return func(ctx context.Context) (snapshot.FileSet, error) {
		out := snapshot.FileSet{}
		names, err := l.Tables(ctx)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			oid, err := l.ident(n)
			if err != nil {
				return nil, err
			}
			if slices.Equal(oid, id) {
				continue
			}
			tbl, err := l.load(ctx, oid)
			if err != nil {
				if errors.Is(err, ErrTableNotFound) {
					continue // dropped meanwhile
				}
				return nil, err
			}
			fsys, err := tbl.FS(ctx)
			if err != nil {
				return nil, err
			}
			if err := snapshot.ReachableFromMetadata(ctx, fsys, tbl.Metadata(), tbl.MetadataLocation(), out); err != nil {
				return nil, fmt.Errorf("list files of table %s: %w", n, err)
			}
		}
		return out, nil
	}
}

// validateColumnName accepts any non-empty UTF-8 name without control
// characters or dots. Column names are not file names (unlike table
// names), so quoted SQL identifiers such as "Weird Name" are fine; a dot
// is refused because Iceberg uses it to address nested fields.
func validateColumnName(name string) error {
	bad := func(why string) error {
		return &sentinelError{ErrInvalidName, fmt.Errorf("invalid column name %q: %s; rename the column", name, why)}
	}
	if name == "" {
		return bad("names cannot be empty")
	}
	if !utf8.ValidString(name) {
		return bad("names must be valid UTF-8")
	}
	for _, r := range name {
		switch {
		case unicode.IsControl(r):
			return bad("names cannot contain control characters")
		case r == '.':
			return bad("names cannot contain \".\" (it separates nested fields)")
		}
	}
	return nil
}

// lakeExists fails with ErrLakeNotFound unless abs holds a catalog file
// or tables (a lake whose catalog was lost is left to catalog.Open, which
// says so).
func lakeExists(abs, dir string) error {
	if _, err := os.Stat(filepath.Join(abs, catalog.DBFile)); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	found, bad, err := catalog.FindTables(abs)
	if err != nil || len(found) > 0 || len(bad) > 0 {
		return nil
	}
	return &sentinelError{ErrLakeNotFound, fmt.Errorf("no lake at %s: it has no %s and no tables; `skade --lake %s sql` creates one", dir, catalog.DBFile, dir)}
}
