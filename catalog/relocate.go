package catalog

import (
	"context"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Pointers returns every table's and view's pointer: the metadata file it
// names, by "table <key>" or "view <key>". skade relocate reads them to
// find where a copied lake was made.
func (c *Catalog) Pointers(ctx context.Context) (map[string]string, error) {
	if c.remote != nil {
		return nil, errRemote("listing pointers")
	}
	out := map[string]string{}
	err := c.view(ctx, func(tx *bolt.Tx) error {
		for _, b := range []struct {
			kind string
			name []byte
		}{{"table", bucketTables}, {"view", bucketViews}} {
			bk := tx.Bucket(b.name)
			if bk == nil {
				continue
			}
			if err := bk.ForEach(func(k, v []byte) error {
				out[b.kind+" "+string(k)] = string(v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// Repoint rewrites, in one transaction, every table and view pointer
// under the directory from so that it names the same file under to
// (skade relocate, once the tables' own files name to). It returns how
// many pointers moved. A pointer that names neither is an error, and
// nothing moves.
func (c *Catalog) Repoint(ctx context.Context, from, to string) (int, error) {
	if c.remote != nil {
		return 0, errRemote("relocating")
	}
	from, to = strings.TrimSuffix(from, "/"), strings.TrimSuffix(to, "/")
	n := 0
	err := c.update(ctx, func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketTables, bucketViews} {
			bk := tx.Bucket(name)
			if bk == nil {
				continue
			}
			moved := map[string][]byte{}
			if err := bk.ForEach(func(k, v []byte) error {
				loc := string(v)
				p, err := localPath(loc)
				if err != nil {
					return err
				}
				rel, ok := strings.CutPrefix(p, from+"/")
				switch {
				case ok:
					moved[string(k)] = []byte(to + "/" + rel)
				case locWithin(c.root, loc):
				default:
					return fmt.Errorf("relocate: %s points at %s, which is under neither %s nor this lake", k, loc, from)
				}
				return nil
			}); err != nil {
				return err
			}
			for k, v := range moved {
				if err := bk.Put([]byte(k), v); err != nil {
					return err
				}
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
