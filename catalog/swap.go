package catalog

import (
	"context"
	"fmt"
	"slices"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	bolt "go.etcd.io/bbolt"
)

// PointerSwap moves one table pointer from Expected to New.
//
// Expected "" means the table must not exist (a create); New "" means the
// table is dropped. Expected == New asserts that the pointer has not moved
// without changing it.
type PointerSwap struct {
	Ident    table.Identifier
	Expected string
	New      string
	// View: the pointer is a view's (the views bucket), not a table's.
	View bool
}

// SwapPointers applies every swap in one bbolt transaction, as a
// compare-and-swap: either every pointer held its Expected value and all of
// them move, or nothing moves. A pointer that did not hold its Expected
// value gives a *ConflictError naming the table, which wraps
// table.ErrCommitFailed. This is the only way table pointers change.
//
// INVARIANT: a pointer only ever names a metadata file that is already
// durable and lies inside the lake; SwapPointers checks the location, and
// callers (CommitTable, StageCommit, CreateTable) write the file durably
// before they call it.
func (c *Catalog) SwapPointers(ctx context.Context, swaps []PointerSwap) error {
	if c.remote != nil {
		return errRemote("swapping table pointers")
	}
	swaps, err := c.checkSwaps(swaps)
	if err != nil {
		return err
	}

	if err := c.update(ctx, func(tx *bolt.Tx) error { return applySwaps(tx, swaps) }); err != nil {
		return err
	}
	for _, s := range swaps {
		if s.New != "" && s.New != s.Expected && !s.View {
			c.writeVersionHint(s.New)
		}
	}
	return nil
}

// checkSwaps normalizes identifiers and refuses duplicates and locations
// outside the lake, before any lock is taken.
func (c *Catalog) checkSwaps(swaps []PointerSwap) ([]PointerSwap, error) {
	if len(swaps) == 0 {
		return nil, fmt.Errorf("swap pointers: no swaps given; pass at least one")
	}
	out := make([]PointerSwap, len(swaps))
	seen := make(map[string]bool, len(swaps))
	for i, s := range swaps {
		ident, err := Normalize(s.Ident)
		if err != nil {
			return nil, err
		}
		key := string(tableKey(ident))
		if s.View {
			key = "view\x00" + key
		}
		if seen[key] {
			return nil, fmt.Errorf("swap pointers: table %s appears twice; merge its changes into one swap",
				identString(ident))
		}
		seen[key] = true
		if s.New != "" && s.New != s.Expected {
			if err := c.checkInLake(ident, "metadata file", s.New); err != nil {
				return nil, err
			}
		}
		out[i] = PointerSwap{Ident: ident, Expected: s.Expected, New: s.New, View: s.View}
	}

	return out, nil
}

// applySwaps is the compare-and-swap itself, inside a bbolt write
// transaction. It checks every swap before it changes anything.
func applySwaps(tx *bolt.Tx, swaps []PointerSwap) error {
	tables := tx.Bucket(bucketTables)
	namespaces := tx.Bucket(bucketNamespaces)
	var views *bolt.Bucket
	for _, s := range swaps {
		if s.View && views == nil {
			var err error
			if views, err = tx.CreateBucketIfNotExists(bucketViews); err != nil {
				return err
			}
		}
	}
	bucket := func(s PointerSwap) *bolt.Bucket {
		if s.View {
			return views
		}
		return tables
	}
	for _, s := range swaps {
		found := string(bucket(s).Get(tableKey(s.Ident)))
		if found != s.Expected {
			return &ConflictError{Ident: slices.Clone(s.Ident), Expected: s.Expected, Found: found, View: s.View}
		}
		if s.Expected == "" && s.New != "" && namespaces.Get([]byte(s.Ident[0])) == nil {
			return errNoSuchNamespace(s.Ident[0])
		}
		if s.Expected == "" && s.New != "" && !s.View && viewExists(tx, s.Ident) {
			return newError([]error{icecatalog.ErrTableAlreadyExists}, "table %s: a view has that name; a name is a table's or a view's", identString(s.Ident))
		}
		if s.Expected == "" && s.New != "" && s.View && tables.Get(tableKey(s.Ident)) != nil {
			return newError([]error{icecatalog.ErrTableAlreadyExists}, "create view %s: a table has that name; a name is a table's or a view's", identString(s.Ident))
		}
	}
	for _, s := range swaps {
		tables := bucket(s)
		switch {
		case s.New == s.Expected:
			// an assertion only
		case s.New == "":
			if err := tables.Delete(tableKey(s.Ident)); err != nil {
				return err
			}
		default:
			if err := tables.Put(tableKey(s.Ident), []byte(s.New)); err != nil {
				return err
			}
		}
	}

	return nil
}

// checkInLake refuses a location outside the lake directory.
func (c *Catalog) checkInLake(ident table.Identifier, what, loc string) error {
	if locWithin(c.root, loc) {
		return nil
	}

	return newError([]error{ErrOutsideLake},
		"table %s: %s %q is outside the %s %q; skade keeps every file inside its lake",
		identString(ident), what, loc, c.lakeNoun(), c.root)
}

// lakeNoun is what messages call the lake's root: its directory, or the
// object store location.
func (c *Catalog) lakeNoun() string {
	if c.Local() {
		return "lake directory"
	}
	return "lake"
}
