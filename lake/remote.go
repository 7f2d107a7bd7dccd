package lake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/skadedb/skade/catalog"
	"github.com/skadedb/skade/objstore"
)

// RESTScheme prefixes the location of a lake whose catalog is an Iceberg
// REST catalog: rest+http://host:8181 or rest+https://….
const RESTScheme = "rest+"

// IsRESTLocation reports whether loc names a REST catalog (rest+http://…).
func IsRESTLocation(loc string) bool {
	return strings.HasPrefix(loc, RESTScheme+"http://") || strings.HasPrefix(loc, RESTScheme+"https://")
}

// WithCatalogAuth authenticates a lake on a REST catalog: a bearer token,
// or OAuth2 client credentials "id:secret" that skade exchanges at the
// catalog's token endpoint. Either may be empty.
func WithCatalogAuth(token, credential string) Option {
	return func(o *options) { o.restToken, o.restCredential = token, credential }
}

// openREST opens a lake whose catalog is a REST catalog. Table files are
// read and written where the catalog's table locations say: local paths
// on this machine's disk, s3:// locations through the AWS chain.
func openREST(ctx context.Context, loc string, o options) (*Lake, error) {
	uri := strings.TrimPrefix(loc, RESTScheme)
	store := &routerStore{cfg: o.store, buckets: map[string]*objstore.FS{}}
	cat, err := catalog.OpenRemote(ctx, uri, store, catalog.RemoteAuth{Token: o.restToken, Credential: o.restCredential})
	if err != nil {
		return nil, translate(fmt.Errorf("open lake %s: %w", loc, err))
	}
	return newLake(loc, cat, o), nil
}

// routerStore is the IO of a lake on a REST catalog: each location goes
// to the local disk or to the object store bucket it names.
type routerStore struct {
	cfg objstore.Config

	mu      sync.Mutex
	local   *catalog.DurableFS
	buckets map[string]*objstore.FS
}

var _ catalog.Store = (*routerStore)(nil)

// route picks the store of loc.
func (r *routerStore) route(loc string) (catalog.Store, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if objstore.IsURL(loc) {
		bucket, _, err := objstore.ParseURL(loc)
		if err != nil {
			return nil, err
		}
		if f, ok := r.buckets[bucket]; ok {
			return f, nil
		}
		f, err := objstore.Open(context.Background(), objstore.Scheme+"://"+bucket, r.cfg)
		if err != nil {
			return nil, err
		}
		r.buckets[bucket] = f
		return f, nil
	}
	if i := strings.Index(loc, "://"); i > 0 && !strings.HasPrefix(loc, "file:") {
		return nil, fmt.Errorf("location %q: skade reads and writes local paths and s3:// locations only", loc)
	}
	if r.local == nil {
		// the REST catalog decides where tables live; any local path
		// it names is this machine's
		d, err := catalog.NewDurableFS("/")
		if err != nil {
			return nil, err
		}
		r.local = d
	}
	return r.local, nil
}

func (r *routerStore) Root() string { return "" }

func (r *routerStore) Open(name string) (iceio.File, error) {
	s, err := r.route(name)
	if err != nil {
		return nil, err
	}
	return s.Open(name)
}

func (r *routerStore) ReadFile(name string) ([]byte, error) {
	s, err := r.route(name)
	if err != nil {
		return nil, err
	}
	return s.ReadFile(name)
}

func (r *routerStore) Stat(name string) (fs.FileInfo, error) {
	s, err := r.route(name)
	if err != nil {
		return nil, err
	}
	return s.Stat(name)
}

func (r *routerStore) Remove(name string) error {
	s, err := r.route(name)
	if err != nil {
		return err
	}
	return s.Remove(name)
}

func (r *routerStore) RemoveAll(name string) error {
	s, err := r.route(name)
	if err != nil {
		return err
	}
	return s.RemoveAll(name)
}

func (r *routerStore) Create(name string) (iceio.FileWriter, error) {
	s, err := r.route(name)
	if err != nil {
		return nil, err
	}
	return s.Create(name)
}

func (r *routerStore) CreateExclusive(name string) (iceio.FileWriter, error) {
	s, err := r.route(name)
	if err != nil {
		return nil, err
	}
	return s.CreateExclusive(name)
}

func (r *routerStore) WriteFile(name string, p []byte) error {
	s, err := r.route(name)
	if err != nil {
		return err
	}
	return s.WriteFile(name, p)
}

func (r *routerStore) WalkDir(root string, fn fs.WalkDirFunc) error {
	s, err := r.route(root)
	if err != nil {
		return err
	}
	return s.WalkDir(root, fn)
}

// DeleteFiles hands each store its own paths in one call, so that an
// object store deletes them in batches.
func (r *routerStore) DeleteFiles(ctx context.Context, paths []string) ([]string, error) {
	var deleted []string
	var errs []error
	var order []catalog.Store
	byStore := map[catalog.Store][]string{}
	for _, p := range paths {
		s, err := r.route(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, seen := byStore[s]; !seen {
			order = append(order, s)
		}
		byStore[s] = append(byStore[s], p)
	}
	for _, s := range order {
		d, err := s.DeleteFiles(ctx, byStore[s])
		deleted = append(deleted, d...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return deleted, errors.Join(errs...)
}
