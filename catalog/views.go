package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"
	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
)

// bucketViews maps a view's (namespace, name) key to its current Iceberg
// view metadata file, as bucketTables does for tables. It is created by
// the first CreateView; a catalog without it has no views. A name is a
// table's or a view's, never both.
var bucketViews = []byte("views")

// ErrViewNotFound is wrapped by the errors for a view that does not exist.
var ErrViewNotFound = icecatalog.ErrNoSuchView

// View is a view as the catalog holds it: its Iceberg view metadata and
// where that lives.
type View struct {
	Ident            table.Identifier
	Metadata         view.Metadata
	MetadataLocation string
}

// SQL is the view's query, in its current version's first SQL
// representation.
func (v *View) SQL() string {
	if cur := v.Metadata.CurrentVersion(); cur != nil {
		for _, r := range cur.Representations {
			if r.Type == "sql" {
				return r.Sql
			}
		}
	}
	return ""
}

// CreateView writes version metadata for the view ident, whose query sql
// yields columns of schema, and points the catalog at it: a new view, or
// with replace a new version of the view of that name. The name must not
// be a table's. dialect names the SQL's dialect in the representation.
func (c *Catalog) CreateView(ctx context.Context, ident table.Identifier, sql, dialect string, schema *iceberg.Schema, replace bool) (*View, error) {
	if c.remote != nil {
		return nil, errRemote("creating a view")
	}
	ident, err := Normalize(ident)
	if err != nil {
		return nil, err
	}
	if err := c.requireNamespace(ctx, ident[0]); err != nil {
		return nil, err
	}
	old, err := c.LoadView(ctx, ident)
	if err != nil && !errors.Is(err, ErrViewNotFound) {
		return nil, err
	}
	if old != nil && !replace {
		return nil, newError([]error{icecatalog.ErrViewAlreadyExists}, "view %s already exists; use CREATE OR REPLACE VIEW", identString(ident))
	}
	nv, discard, err := c.writeViewVersion(ident, sql, dialect, schema, old)
	if err != nil {
		return nil, err
	}
	metaLoc := nv.MetadataLocation
	expected := ""
	if old != nil {
		expected = old.MetadataLocation
	}
	err = c.SwapPointers(ctx, []PointerSwap{{Ident: ident, Expected: expected, New: metaLoc, View: true}})
	var ce *ConflictError
	if errors.As(err, &ce) {
		err = newError([]error{table.ErrCommitFailed}, "create view %s: the view changed while this statement ran; run it again", identString(ident))
	}
	if err != nil {
		if !errors.Is(err, ErrCommitStateUnknown) {
			discard()
		}
		return nil, err
	}
	return nv, nil
}

// writeViewVersion writes the metadata file of a new version of view
// ident whose query sql yields schema: the first version when old is nil,
// else the one after old. It returns the view as that file holds it, and
// discard, which removes the file (and the directories a new view made).
func (c *Catalog) writeViewVersion(ident table.Identifier, sql, dialect string, schema *iceberg.Schema, old *View) (*View, func(), error) {
	var err error
	var bld *view.MetadataBuilder
	loc := ""
	version := 0
	if old != nil {
		if bld, err = view.MetadataBuilderFromBase(old.Metadata); err != nil {
			return nil, nil, fmt.Errorf("view %s: %w", identString(ident), err)
		}
		loc = old.Metadata.Location()
		version = metadataVersion(old.MetadataLocation) + 1
	} else {
		if bld, err = view.NewMetadataBuilder(); err != nil {
			return nil, nil, fmt.Errorf("view %s: %w", identString(ident), err)
		}
		if loc, err = c.NewTableLocation(ident); err != nil {
			return nil, nil, err
		}
		bld.SetLoc(loc).SetUUID(uuid.New()).SetFormatVersion(view.DefaultViewFormatVersion)
	}
	// the builder gives the version and schema their ids
	v, err := view.NewVersion(view.InitialVersionID, 0, []view.Representation{view.NewRepresentation(sql, dialect)},
		table.Identifier{ident[0]})
	if err != nil {
		return nil, nil, fmt.Errorf("view %s: %w", identString(ident), err)
	}
	v.Summary["engine-name"] = "skade"
	bld.SetCurrentVersion(v, schema)
	res, err := bld.Build()
	if err != nil {
		return nil, nil, fmt.Errorf("view %s: %w", identString(ident), err)
	}
	body, err := res.MarshalJSON()
	if err != nil {
		return nil, nil, fmt.Errorf("view %s: %w", identString(ident), err)
	}
	metaLoc := fmt.Sprintf("%s/metadata/%05d-%s.metadata.json", strings.TrimSuffix(loc, "/"), version, uuid.NewString())
	if err := c.checkInLake(ident, "view metadata file", metaLoc); err != nil {
		return nil, nil, err
	}
	discard := func() {
		_ = c.fs.Remove(metaLoc)
		if old == nil {
			c.removeEmptyDirs(metaLoc, loc)
		}
	}
	w, err := c.fs.CreateExclusive(metaLoc)
	if err != nil {
		c.removeEmptyDirs(metaLoc, loc)
		return nil, nil, fmt.Errorf("view %s: writing %s: %w", identString(ident), metaLoc, err)
	}
	_, err = w.Write(body)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		discard()
		return nil, nil, fmt.Errorf("view %s: writing %s: %w", identString(ident), metaLoc, err)
	}
	md, err := view.ParseMetadataBytes(body)
	if err != nil {
		discard()
		return nil, nil, err
	}
	return &View{Ident: ident, Metadata: md, MetadataLocation: metaLoc}, discard, nil
}

// StageView writes, for a transaction, the metadata file of view ident
// as CREATE [OR REPLACE] VIEW makes it: a new view when cur (the view as
// the transaction sees it) is nil, else cur's next version. Nothing
// points at the file until the transaction publishes a ViewSwap naming
// it; discard removes it.
func (c *Catalog) StageView(ctx context.Context, ident table.Identifier, sql, dialect string, schema *iceberg.Schema, cur *View) (*View, func(), error) {
	if c.remote != nil {
		return nil, nil, errRemote("creating a view")
	}
	ident, err := Normalize(ident)
	if err != nil {
		return nil, nil, err
	}
	if err := c.requireNamespace(ctx, ident[0]); err != nil {
		return nil, nil, err
	}
	return c.writeViewVersion(ident, sql, dialect, schema, cur)
}

// ViewSwap is the staged commit that moves view ident's pointer from
// expected ("" : the view did not exist) to loc ("" : drop it), for
// Publish with a transaction's table commits. Its metadata file is the
// caller's to remove if the publish fails.
func ViewSwap(ident table.Identifier, expected, loc string) *StagedCommit {
	return &StagedCommit{Ident: ident, Swap: PointerSwap{Ident: ident, Expected: expected, New: loc, View: true}}
}

// LoadView reads the view ident; an error wrapping ErrViewNotFound when
// there is none.
func (c *Catalog) LoadView(ctx context.Context, ident table.Identifier) (*View, error) {
	if c.remote != nil {
		return nil, newError([]error{ErrViewNotFound}, "view %s does not exist", identString(ident))
	}
	ident, err := Normalize(ident)
	if err != nil {
		return nil, err
	}
	var loc string
	err = c.view(ctx, func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketViews); b != nil {
			loc = string(b.Get(tableKey(ident)))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if loc == "" {
		return nil, newError([]error{ErrViewNotFound}, "view %s does not exist", identString(ident))
	}
	f, err := c.fs.Open(loc)
	if err != nil {
		return nil, fmt.Errorf("view %s: reading %s: %w", identString(ident), loc, err)
	}
	defer f.Close()
	md, err := view.ParseMetadata(f)
	if err != nil {
		return nil, fmt.Errorf("view %s: reading %s: %w", identString(ident), loc, err)
	}
	return &View{Ident: ident, Metadata: md, MetadataLocation: loc}, nil
}

// DropView removes the view ident and its directory; false when there is
// none.
func (c *Catalog) DropView(ctx context.Context, ident table.Identifier) (bool, error) {
	if c.remote != nil {
		return false, errRemote("dropping a view")
	}
	ident, err := Normalize(ident)
	if err != nil {
		return false, err
	}
	var loc string
	err = c.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketViews)
		if b == nil {
			return nil
		}
		loc = string(b.Get(tableKey(ident)))
		if loc == "" {
			return nil
		}
		return b.Delete(tableKey(ident))
	})
	if err != nil || loc == "" {
		return false, err
	}
	dir := loc[:strings.LastIndex(loc, "/metadata/")]
	if err := c.fs.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true, fmt.Errorf("drop view %s: removing %s: %w", identString(ident), dir, err)
	}
	return true, nil
}

// ListViews names the views of namespace ns, sorted.
func (c *Catalog) ListViews(ctx context.Context, ns string) ([]string, error) {
	if c.remote != nil {
		return nil, nil
	}
	var out []string
	err := c.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketViews)
		if b == nil {
			return nil
		}
		prefix := append([]byte(ns), 0)
		return b.ForEach(func(k, _ []byte) error {
			if rest, ok := strings.CutPrefix(string(k), string(prefix)); ok {
				out = append(out, rest)
			}
			return nil
		})
	})
	slices.Sort(out)
	return out, err
}

// viewExists reports, inside a bbolt transaction, whether ident names a
// view (a table of that name cannot be created).
func viewExists(tx *bolt.Tx, ident table.Identifier) bool {
	b := tx.Bucket(bucketViews)
	return b != nil && b.Get(tableKey(ident)) != nil
}
