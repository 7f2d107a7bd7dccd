package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// ErrOutsidePrefix is wrapped by errors for locations outside the FS's
// bucket and prefix.
var ErrOutsidePrefix = errors.New("location outside the lake's prefix")

// Scheme is the URL scheme of S3 locations.
const Scheme = "s3"

// IsURL reports whether loc names an object-store location (s3://…),
// rather than a local path.
func IsURL(loc string) bool {
	return strings.HasPrefix(loc, Scheme+"://") || strings.HasPrefix(loc, "s3a://") || strings.HasPrefix(loc, "s3n://")
}

// Config tunes an FS. The zero value is ready to use.
type Config struct {
	// MaxAttempts bounds the attempts of one request, retries included
	// (default 5).
	MaxAttempts int
	// MaxBackoff bounds the wait between two attempts (default 5s).
	MaxBackoff time.Duration
	// PartSize is the size of a multipart upload's parts, and the size
	// above which a file is uploaded in parts (default 8 MiB; S3's minimum
	// is 5 MiB).
	PartSize int
	// TailSize is how much of an object's end Open fetches (default 64 KiB).
	TailSize int
	// StallTimeout fails an attempt whose connection delivers no data for
	// this long, so that a hung store ends a statement instead of holding
	// it forever (default 60s; the attempt is then retried).
	StallTimeout time.Duration
	// VirtualHosted addresses buckets as <bucket>.<endpoint> even when an
	// endpoint is configured; by default a configured endpoint (an
	// S3-compatible store) is addressed path-style.
	VirtualHosted bool
	// HTTPClient replaces the SDK's HTTP client (tests).
	HTTPClient *http.Client
	// TailCacheBytes bounds the bytes of manifests' and Parquet files'
	// tails the FS keeps to serve again without a request (tailcache.go;
	// default 16 MiB, negative: none).
	TailCacheBytes int
}

func (c *Config) defaults() {
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 5 * time.Second
	}
	if c.PartSize <= 0 {
		c.PartSize = 8 << 20
	}
	if c.TailSize <= 0 {
		c.TailSize = 64 << 10
	}
	if c.TailCacheBytes == 0 {
		c.TailCacheBytes = tailCacheBytes
	}
	if c.StallTimeout <= 0 {
		c.StallTimeout = 60 * time.Second
	}
}

// FS is the IO of a lake under s3://bucket/prefix. It is safe for
// concurrent use.
type FS struct {
	client *s3.Client
	bucket string
	prefix string // key prefix, no leading or trailing slash; may be ""
	root   string // s3://bucket[/prefix]
	cfg    Config
	stats  Stats
	tails  *tailCache
}

var (
	_ iceio.IO              = (*FS)(nil)
	_ iceio.ReadFileIO      = (*FS)(nil)
	_ iceio.WriteFileIO     = (*FS)(nil)
	_ iceio.ListableIO      = (*FS)(nil)
	_ iceio.StatIO          = (*FS)(nil)
	_ iceio.BulkRemovableIO = (*FS)(nil)
	_ iceio.RemoveAllIO     = (*FS)(nil)
)

// ParseURL splits s3://bucket/prefix into bucket and a cleaned prefix
// (no leading or trailing slash).
func ParseURL(loc string) (bucket, prefix string, err error) {
	u, err := url.Parse(loc)
	if err != nil {
		return "", "", fmt.Errorf("object store location %q: %w", loc, err)
	}
	switch u.Scheme {
	case "s3", "s3a", "s3n":
	default:
		return "", "", fmt.Errorf("object store location %q: scheme %q is not supported; use s3://bucket/prefix", loc, u.Scheme)
	}
	if u.Host == "" {
		return "", "", fmt.Errorf("object store location %q: no bucket; use s3://bucket/prefix", loc)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", "", fmt.Errorf("object store location %q: a query, fragment or user is not allowed; use s3://bucket/prefix", loc)
	}
	p := strings.Trim(u.Path, "/")
	if p != "" {
		if c := path.Clean(p); c != p || strings.HasPrefix(c, "..") {
			return "", "", fmt.Errorf("object store location %q: the prefix %q is not clean (no //, . or .. segments)", loc, u.Path)
		}
	}
	return u.Host, p, nil
}

// Open returns the FS of the lake at loc (s3://bucket/prefix). It loads
// the AWS configuration (credentials, region, endpoint) from the standard
// chain and checks nothing on the network: a wrong bucket or credentials
// surface on the first request.
func Open(ctx context.Context, loc string, cfg Config) (*FS, error) {
	bucket, prefix, err := ParseURL(loc)
	if err != nil {
		return nil, err
	}
	cfg.defaults()
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = cfg.MaxAttempts
				o.MaxBackoff = cfg.MaxBackoff
				// a lake's writes must not give up because earlier
				// requests used up a retry budget
				o.RateLimiter = ratelimit.None
			})
		}),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(cfg.HTTPClient))
	} else {
		opts = append(opts, config.WithHTTPClient(awshttp.NewBuildableClient().WithReadTimeout(cfg.StallTimeout)))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("object store %s: load the AWS configuration: %w", loc, err)
	}
	if awsCfg.Region == "" {
		// S3-compatible stores mostly ignore it, but the signer needs one
		awsCfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		o.UsePathStyle = o.BaseEndpoint != nil && !cfg.VirtualHosted
		// S3-compatible stores differ in which checksum headers they
		// accept; send and check them only where the API requires them
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	root := Scheme + "://" + bucket
	if prefix != "" {
		root += "/" + prefix
	}
	return &FS{client: client, bucket: bucket, prefix: prefix, root: root, cfg: cfg, tails: newTailCache(cfg.TailCacheBytes)}, nil
}

// ClientProperties are the Iceberg FileIO properties another engine needs
// to reach this store (s3.endpoint, s3.path-style-access, client.region),
// and with credentials, the keys this FS itself uses (s3.access-key-id,
// s3.secret-access-key, s3.session-token), as the AWS chain resolved them.
func (f *FS) ClientProperties(ctx context.Context, credentials bool) (map[string]string, error) {
	// the endpoint and addressing the client itself uses, from whichever
	// part of the AWS chain set them
	opts := f.client.Options()
	props := map[string]string{"client.region": opts.Region}
	if ep := aws.ToString(opts.BaseEndpoint); ep != "" {
		props["s3.endpoint"] = ep
		props["s3.path-style-access"] = strconv.FormatBool(opts.UsePathStyle)
	}
	if credentials {
		if opts.Credentials == nil {
			return nil, errors.New("object store: no credentials to hand out: the AWS chain found none")
		}
		c, err := opts.Credentials.Retrieve(ctx)
		if err != nil {
			return nil, fmt.Errorf("object store: retrieve credentials: %w", err)
		}
		props["s3.access-key-id"] = c.AccessKeyID
		props["s3.secret-access-key"] = c.SecretAccessKey
		if c.SessionToken != "" {
			props["s3.session-token"] = c.SessionToken
		}
	}
	return props, nil
}

// Root is the lake's location, s3://bucket[/prefix].
func (f *FS) Root() string { return f.root }

// Stats returns the request and byte counters so far.
func (f *FS) Stats() StatsSnapshot { return f.stats.snapshot() }

// key turns a location (s3://bucket/key, s3a:// and s3n:// alike) into
// its object key, refusing anything outside the prefix.
func (f *FS) key(op, loc string) (string, error) {
	rest, ok := "", false
	for _, s := range []string{"s3://", "s3a://", "s3n://"} {
		if r, cut := strings.CutPrefix(loc, s); cut {
			rest, ok = r, true
			break
		}
	}
	if !ok {
		return "", &fs.PathError{Op: op, Path: loc, Err: fmt.Errorf("%w: not an s3:// location (the lake is %s)", ErrOutsidePrefix, f.root)}
	}
	bucket, k, _ := strings.Cut(rest, "/")
	if bucket != f.bucket {
		return "", &fs.PathError{Op: op, Path: loc, Err: fmt.Errorf("%w: bucket %q is not the lake's bucket %q", ErrOutsidePrefix, bucket, f.bucket)}
	}
	if k == "" || path.Clean(k) != k || strings.HasPrefix(k, "../") || k == ".." {
		return "", &fs.PathError{Op: op, Path: loc, Err: fmt.Errorf("%w: %q is not a clean object key", ErrOutsidePrefix, k)}
	}
	if f.prefix != "" && k != f.prefix && !strings.HasPrefix(k, f.prefix+"/") {
		return "", &fs.PathError{Op: op, Path: loc, Err: fmt.Errorf("%w: key %q is not under %q", ErrOutsidePrefix, k, f.prefix)}
	}
	return k, nil
}

func (f *FS) location(key string) string { return Scheme + "://" + f.bucket + "/" + key }

// notFound reports whether err is S3's answer for a missing key.
func notFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound")
}

func pathErr(op, loc string, err error) error {
	if notFound(err) {
		err = fs.ErrNotExist
	}
	return &fs.PathError{Op: op, Path: loc, Err: err}
}

// ctx bounds no single request: the SDK's retryer and the HTTP client's
// timeouts do. iceberg-go's IO interface carries no context.
func (f *FS) ctx() context.Context { return context.Background() }

// Open opens loc for reading (see the package doc for the requests).
func (f *FS) Open(loc string) (iceio.File, error) {
	k, err := f.key("open", loc)
	if err != nil {
		return nil, err
	}
	if size, tail, ok := f.tails.get(k); ok {
		f.stats.cached.Add(1)
		return &object{fs: f, loc: loc, key: k, size: size, tail: tail, tailStart: size - int64(len(tail))}, nil
	}
	o := &object{fs: f, loc: loc, key: k}
	if err := o.fetchTail(); err != nil {
		return nil, pathErr("open", loc, err)
	}
	f.tails.put(k, o.size, o.tail, true) // o never changes its tail
	return o, nil
}

// ReadFile reads the whole object in one GET.
func (f *FS) ReadFile(loc string) ([]byte, error) {
	k, err := f.key("read", loc)
	if err != nil {
		return nil, err
	}
	if size, tail, ok := f.tails.get(k); ok && int64(len(tail)) == size {
		f.stats.cached.Add(1)
		return bytes.Clone(tail), nil // the caller may change its copy
	}
	f.stats.gets.Add(1)
	out, err := f.client.GetObject(f.ctx(), &s3.GetObjectInput{Bucket: &f.bucket, Key: &k})
	if err != nil {
		return nil, pathErr("read", loc, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	f.stats.bytesRead.Add(int64(len(b)))
	if err != nil {
		return nil, pathErr("read", loc, err)
	}
	f.keepTail(k, b)
	return b, nil
}

// keepTail caches what Open would read of the object key whose whole
// bytes are data: its size and last TailSize bytes (tailcache.go).
func (f *FS) keepTail(key string, data []byte) {
	f.tails.put(key, int64(len(data)), data[max(0, len(data)-f.cfg.TailSize):], false)
}

// Stat reads the object's size and modification time (HEAD).
func (f *FS) Stat(loc string) (fs.FileInfo, error) {
	k, err := f.key("stat", loc)
	if err != nil {
		return nil, err
	}
	f.stats.heads.Add(1)
	out, err := f.client.HeadObject(f.ctx(), &s3.HeadObjectInput{Bucket: &f.bucket, Key: &k})
	if err != nil {
		return nil, pathErr("stat", loc, err)
	}
	return fileInfo{name: path.Base(k), size: aws.ToInt64(out.ContentLength), mod: aws.ToTime(out.LastModified)}, nil
}

// Remove deletes loc. S3 answers a delete of a missing key with success,
// so a missing file is not an error.
func (f *FS) Remove(loc string) error {
	k, err := f.key("remove", loc)
	if err != nil {
		return err
	}
	f.tails.drop(k)
	f.stats.deletes.Add(1)
	if _, err := f.client.DeleteObject(f.ctx(), &s3.DeleteObjectInput{Bucket: &f.bucket, Key: &k}); err != nil {
		return pathErr("remove", loc, err)
	}
	return nil
}

// DeleteFiles deletes paths, up to 1,000 per request, and returns the
// ones deleted.
func (f *FS) DeleteFiles(ctx context.Context, paths []string) ([]string, error) {
	var deleted []string
	var errs []error
	for start := 0; start < len(paths); start += 1000 {
		batch := paths[start:min(start+1000, len(paths))]
		objs := make([]types.ObjectIdentifier, 0, len(batch))
		locs := map[string]string{}
		for _, p := range batch {
			k, err := f.key("delete", p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			f.tails.drop(k)
			objs = append(objs, types.ObjectIdentifier{Key: aws.String(k)})
			locs[k] = p
		}
		if len(objs) == 0 {
			continue
		}
		f.stats.deletes.Add(1)
		out, err := f.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: &f.bucket, Delete: &types.Delete{Objects: objs, Quiet: aws.Bool(true)},
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("delete %d objects: %w", len(objs), err))
			continue
		}
		failed := map[string]bool{}
		for _, e := range out.Errors {
			failed[aws.ToString(e.Key)] = true
			errs = append(errs, fmt.Errorf("delete %s: %s: %s", locs[aws.ToString(e.Key)], aws.ToString(e.Code), aws.ToString(e.Message)))
		}
		for _, o := range objs {
			if !failed[*o.Key] {
				deleted = append(deleted, locs[*o.Key])
			}
		}
	}
	return deleted, errors.Join(errs...)
}

// RemoveAll deletes every object under loc (a "directory").
func (f *FS) RemoveAll(loc string) error {
	var all []string
	err := f.WalkDir(loc, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			all = append(all, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = f.DeleteFiles(f.ctx(), all)
	return err
}

// WalkDir calls fn for root (as a directory) and then for every object
// under root/, in key order, as regular files with their full s3://
// locations. Object stores have no directories, so none other is
// reported. A root with no objects under it is reported as fs.ErrNotExist.
func (f *FS) WalkDir(root string, fn fs.WalkDirFunc) error {
	k, err := f.key("walk", strings.TrimSuffix(root, "/"))
	if err != nil {
		return err
	}
	prefix := k + "/"
	first := true
	var token *string
	for {
		f.stats.lists.Add(1)
		out, err := f.client.ListObjectsV2(f.ctx(), &s3.ListObjectsV2Input{Bucket: &f.bucket, Prefix: &prefix, ContinuationToken: token})
		if err != nil {
			return skipNil(fn(root, nil, pathErr("walk", root, err)))
		}
		for _, o := range out.Contents {
			if first {
				first = false
				if err := fn(root, dirEntry{fileInfo{name: path.Base(k), dir: true}}, nil); err != nil {
					if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
						return nil
					}
					return err
				}
			}
			key := aws.ToString(o.Key)
			if strings.HasSuffix(key, "/") {
				continue // a directory marker some tools write
			}
			info := fileInfo{name: path.Base(key), size: aws.ToInt64(o.Size), mod: aws.ToTime(o.LastModified)}
			if err := fn(f.location(key), dirEntry{info}, nil); err != nil {
				if errors.Is(err, fs.SkipAll) {
					return nil
				}
				if errors.Is(err, fs.SkipDir) {
					continue
				}
				return err
			}
		}
		if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			break
		}
		token = out.NextContinuationToken
	}
	if first {
		return skipNil(fn(root, nil, &fs.PathError{Op: "walk", Path: root, Err: fs.ErrNotExist}))
	}
	return nil
}

// skipNil turns fs.SkipDir and fs.SkipAll, which end a walk, into nil.
func skipNil(err error) error {
	if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

// WriteFile stores p at loc in one PUT (or a multipart upload when it
// is larger than a part).
func (f *FS) WriteFile(loc string, p []byte) error {
	w, err := f.Create(loc)
	if err != nil {
		return err
	}
	if _, err := w.Write(p); err != nil {
		w.(*writer).abort()
		return err
	}
	return w.Close()
}

// Create starts writing loc; the object exists once Close returns nil.
func (f *FS) Create(loc string) (iceio.FileWriter, error) {
	k, err := f.key("create", loc)
	if err != nil {
		return nil, err
	}
	f.tails.drop(k)
	return &writer{fs: f, loc: loc, key: k, buf: bytes.NewBuffer(make([]byte, 0, min(f.cfg.PartSize, 1<<20)))}, nil
}

// CreateExclusive is Create: object stores have no portable create-if-
// absent, and skade names the files it creates exclusively (metadata
// files) with a fresh UUID, so two writers never pick the same name.
func (f *FS) CreateExclusive(loc string) (iceio.FileWriter, error) { return f.Create(loc) }

type fileInfo struct {
	name string
	size int64
	mod  time.Time
	dir  bool
}

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.size }
func (i fileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i fileInfo) ModTime() time.Time { return i.mod }
func (i fileInfo) IsDir() bool        { return i.dir }
func (i fileInfo) Sys() any           { return nil }

type dirEntry struct{ info fileInfo }

func (d dirEntry) Name() string               { return d.info.name }
func (d dirEntry) IsDir() bool                { return d.info.dir }
func (d dirEntry) Type() fs.FileMode          { return d.info.Mode().Type() }
func (d dirEntry) Info() (fs.FileInfo, error) { return d.info, nil }
