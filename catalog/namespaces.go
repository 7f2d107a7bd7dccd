package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	bolt "go.etcd.io/bbolt"
)

// Namespaces are single-level. Each is a key of the namespaces bucket whose
// value is its properties as a JSON object.

// CreateNamespace creates a namespace with properties.
func (c *Catalog) CreateNamespace(ctx context.Context, namespace table.Identifier, props iceberg.Properties) error {
	if c.remote != nil {
		return c.remote.CreateNamespace(ctx, namespace, props)
	}
	ns, err := namespaceName(namespace)
	if err != nil {
		return err
	}
	if props == nil {
		props = iceberg.Properties{}
	}
	val, err := json.Marshal(props)
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}

	return c.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNamespaces)
		if b.Get([]byte(ns)) != nil {
			return newError([]error{icecatalog.ErrNamespaceAlreadyExists},
				"namespace %s already exists; choose another name", ns)
		}

		return b.Put([]byte(ns), val)
	})
}

// DropNamespace drops an empty namespace. "main" cannot be dropped.
func (c *Catalog) DropNamespace(ctx context.Context, namespace table.Identifier) error {
	if c.remote != nil {
		return c.remote.DropNamespace(ctx, namespace)
	}
	ns, err := namespaceName(namespace)
	if err != nil {
		return err
	}
	if ns == DefaultNamespace {
		return fmt.Errorf("drop namespace %s: it is the default namespace and always exists; drop its tables instead", ns)
	}

	return c.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNamespaces)
		if b.Get([]byte(ns)) == nil {
			return errNoSuchNamespace(ns)
		}
		prefix := nsPrefix(ns)
		if k, _ := tx.Bucket(bucketTables).Cursor().Seek(prefix); k != nil && len(k) > len(prefix) &&
			string(k[:len(prefix)]) == string(prefix) {
			return newError([]error{icecatalog.ErrNamespaceNotEmpty},
				"drop namespace %s: it still has tables, such as %s; drop them first", ns, k[len(prefix):])
		}
		if views := tx.Bucket(bucketViews); views != nil {
			if k, _ := views.Cursor().Seek(prefix); k != nil && len(k) > len(prefix) && string(k[:len(prefix)]) == string(prefix) {
				return newError([]error{icecatalog.ErrNamespaceNotEmpty},
					"drop namespace %s: it still has views, such as %s; drop them first", ns, k[len(prefix):])
			}
		}

		return b.Delete([]byte(ns))
	})
}

// CheckNamespaceExists reports whether the namespace exists.
func (c *Catalog) CheckNamespaceExists(ctx context.Context, namespace table.Identifier) (bool, error) {
	if c.remote != nil {
		return c.remote.CheckNamespaceExists(ctx, namespace)
	}
	ns, err := namespaceName(namespace)
	if err != nil {
		return false, err
	}
	var ok bool
	err = c.view(ctx, func(tx *bolt.Tx) error {
		ok = tx.Bucket(bucketNamespaces).Get([]byte(ns)) != nil

		return nil
	})

	return ok, err
}

// ListNamespaces lists all namespaces, sorted. Namespaces have one level, so
// a namespace has no children: with a parent it returns an empty list (or
// ErrNoSuchNamespace when the parent does not exist).
func (c *Catalog) ListNamespaces(ctx context.Context, parent table.Identifier) ([]table.Identifier, error) {
	if c.remote != nil {
		return c.remote.ListNamespaces(ctx, parent)
	}
	if len(parent) > 0 {
		ok, err := c.CheckNamespaceExists(ctx, parent)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errNoSuchNamespace(identString(parent))
		}

		return []table.Identifier{}, nil
	}
	var out []table.Identifier
	err := c.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketNamespaces).ForEach(func(k, _ []byte) error {
			out = append(out, table.Identifier{string(k)})

			return nil
		})
	})

	return out, err
}

// LoadNamespaceProperties returns the namespace's properties (never nil).
func (c *Catalog) LoadNamespaceProperties(ctx context.Context, namespace table.Identifier) (iceberg.Properties, error) {
	if c.remote != nil {
		return c.remote.LoadNamespaceProperties(ctx, namespace)
	}
	ns, err := namespaceName(namespace)
	if err != nil {
		return nil, err
	}
	var props iceberg.Properties
	err = c.view(ctx, func(tx *bolt.Tx) error {
		props, err = readNamespace(tx, ns)

		return err
	})

	return props, err
}

func readNamespace(tx *bolt.Tx, ns string) (iceberg.Properties, error) {
	v := tx.Bucket(bucketNamespaces).Get([]byte(ns))
	if v == nil {
		return nil, errNoSuchNamespace(ns)
	}
	props := iceberg.Properties{}
	if err := json.Unmarshal(v, &props); err != nil {
		return nil, fmt.Errorf("namespace %s: its properties in %s are damaged: %w; set them again", ns, DBFile, err)
	}

	return props, nil
}

// UpdateNamespaceProperties removes and sets properties in one transaction.
// A key may not be both removed and set.
func (c *Catalog) UpdateNamespaceProperties(ctx context.Context, namespace table.Identifier,
	removals []string, updates iceberg.Properties,
) (icecatalog.PropertiesUpdateSummary, error) {
	if c.remote != nil {
		return c.remote.UpdateNamespaceProperties(ctx, namespace, removals, updates)
	}
	var summary icecatalog.PropertiesUpdateSummary
	ns, err := namespaceName(namespace)
	if err != nil {
		return summary, err
	}
	for _, k := range removals {
		if _, ok := updates[k]; ok {
			return summary, fmt.Errorf("update namespace %s: property %q is both removed and set; do one or the other", ns, k)
		}
	}
	err = c.update(ctx, func(tx *bolt.Tx) error {
		props, err := readNamespace(tx, ns)
		if err != nil {
			return err
		}
		summary = icecatalog.PropertiesUpdateSummary{Removed: []string{}, Updated: []string{}, Missing: []string{}}
		for _, k := range removals {
			if _, ok := props[k]; ok {
				delete(props, k)
				summary.Removed = append(summary.Removed, k)
			} else {
				summary.Missing = append(summary.Missing, k)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(updates)) {
			if old, ok := props[k]; !ok || old != updates[k] {
				props[k] = updates[k]
				summary.Updated = append(summary.Updated, k)
			}
		}
		val, err := json.Marshal(props)
		if err != nil {
			return err
		}

		return tx.Bucket(bucketNamespaces).Put([]byte(ns), val)
	})

	return summary, err
}

// requireNamespace returns an error wrapping icecatalog.ErrNoSuchNamespace
// when ns does not exist. Creates check it before writing anything; the
// swap checks it again.
func (c *Catalog) requireNamespace(ctx context.Context, ns string) error {
	return c.view(ctx, func(tx *bolt.Tx) error {
		if tx.Bucket(bucketNamespaces).Get([]byte(ns)) == nil {
			return errNoSuchNamespace(ns)
		}

		return nil
	})
}
