package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
)

// DurableFS is the iceberg-go IO of a lake. It reads like iceberg-go's
// io.LocalFS, but every file it creates is fsync'd when its writer is
// closed, together with its parent directory and every directory it had to
// create, so a file is durable, and can be found after a crash, by the time
// Close returns. iceberg-go's LocalFS never fsyncs.
//
// INVARIANT: DurableFS creates, renames and removes nothing outside its root
// (the lake directory); such calls fail with an error wrapping
// ErrOutsideLake.
type DurableFS struct {
	root string // absolute and cleaned
}

var (
	_ iceio.IO                = (*DurableFS)(nil)
	_ iceio.ReadFileIO        = (*DurableFS)(nil)
	_ iceio.WriteFileIO       = (*DurableFS)(nil)
	_ iceio.ListableIO        = (*DurableFS)(nil)
	_ iceio.StatIO            = (*DurableFS)(nil)
	_ iceio.RemoveAllIO       = (*DurableFS)(nil)
	_ iceio.MkdirAllIO        = (*DurableFS)(nil)
	_ iceio.RenameIO          = (*DurableFS)(nil)
	_ iceio.RenameNoReplaceIO = (*DurableFS)(nil)
	_ iceio.BulkRemovableIO   = (*DurableFS)(nil)
)

// NewDurableFS returns a DurableFS that writes only inside root.
func NewDurableFS(root string) (*DurableFS, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("lake directory %q: %w", root, err)
	}

	return &DurableFS{root: filepath.Clean(abs)}, nil
}

// Root returns the directory the IO may write in.
func (d *DurableFS) Root() string { return d.root }

// localPath turns an iceberg location (a plain path or a file:// URL) into a
// file path.
func localPath(name string) (string, error) {
	if strings.HasPrefix(name, "file:") {
		u, err := url.Parse(name)
		if err != nil {
			return "", fmt.Errorf("invalid file location %q: %w; use an absolute path", name, err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return "", fmt.Errorf("invalid file location %q: host %q is not this machine; use an absolute path", name, u.Host)
		}
		name = u.Path
	} else if i := strings.Index(name, "://"); i > 0 && !strings.ContainsAny(name[:i], `/\`) {
		return "", fmt.Errorf("unsupported location %q: skade lakes live on the local file system; use an absolute path", name)
	}

	return filepath.FromSlash(name), nil
}

// writablePath resolves name and checks that it lies inside the root.
func (d *DurableFS) writablePath(op, name string) (string, error) {
	p, err := localPath(name)
	if err != nil {
		return "", err
	}
	if !within(d.root, p) {
		return "", newError([]error{ErrOutsideLake},
			"%s %q: the path is outside the lake directory %q; skade writes only inside its lake", op, name, d.root)
	}

	return filepath.Clean(p), nil
}

func (d *DurableFS) Open(name string) (iceio.File, error) {
	p, err := localPath(name)
	if err != nil {
		return nil, err
	}

	return os.Open(p)
}

func (d *DurableFS) ReadFile(name string) ([]byte, error) {
	p, err := localPath(name)
	if err != nil {
		return nil, err
	}

	return os.ReadFile(p)
}

func (d *DurableFS) Stat(name string) (fs.FileInfo, error) {
	p, err := localPath(name)
	if err != nil {
		return nil, err
	}

	return os.Stat(p)
}

func (d *DurableFS) WalkDir(root string, fn fs.WalkDirFunc) error {
	p, err := localPath(root)
	if err != nil {
		return err
	}

	return filepath.WalkDir(p, fn)
}

// ReadDir lists a directory, like io.LocalFS.ReadDir.
func (d *DurableFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := localPath(name)
	if err != nil {
		return nil, err
	}

	return os.ReadDir(p)
}

// Create creates (or truncates) a file for writing. Its directory chain is
// created durably first; the file itself is durable once the writer's Close
// returns nil.
func (d *DurableFS) Create(name string) (iceio.FileWriter, error) {
	return d.create(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
}

// CreateExclusive is Create, but fails with fs.ErrExist when the file
// already exists.
func (d *DurableFS) CreateExclusive(name string) (iceio.FileWriter, error) {
	return d.create(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
}

func (d *DurableFS) create(name string, flag int) (iceio.FileWriter, error) {
	p, err := d.writablePath("create", name)
	if err != nil {
		return nil, err
	}
	if err := d.mkdirAll(filepath.Dir(p)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, flag, 0o644)
	if err != nil {
		return nil, err
	}

	return &durableWriter{f: f}, nil
}

func (d *DurableFS) WriteFile(name string, content []byte) (err error) {
	w, err := d.Create(name)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, w.Close()) }()
	_, err = w.Write(content)

	return err
}

func (d *DurableFS) MkdirAll(name string) error {
	p, err := d.writablePath("mkdir", name)
	if err != nil {
		return err
	}

	return d.mkdirAll(p)
}

// mkdirAll creates dir and its missing parents, fsyncing each new directory
// and the parent it was added to, so the chain survives a crash.
func (d *DurableFS) mkdirAll(dir string) error {
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if !within(d.root, p) {
			// The lake root itself is created by Open; never create
			// anything above it.
			return newError([]error{ErrOutsideLake},
				"create directory %q: the lake directory %q does not exist; open the lake again to create it", dir, d.root)
		}
		missing = append(missing, p)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := syncDir(missing[i]); err != nil {
			return err
		}
		if err := syncDir(filepath.Dir(missing[i])); err != nil {
			return err
		}
	}

	return nil
}

func (d *DurableFS) Remove(name string) error {
	p, err := d.writablePath("remove", name)
	if err != nil {
		return err
	}

	return os.Remove(p)
}

func (d *DurableFS) RemoveAll(name string) error {
	p, err := d.writablePath("remove", name)
	if err != nil {
		return err
	}

	return os.RemoveAll(p)
}

// DeleteFiles removes every path, treating missing files as removed.
func (d *DurableFS) DeleteFiles(ctx context.Context, paths []string) ([]string, error) {
	deleted := make([]string, 0, len(paths))
	var errs []error
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)

			break
		}
		if err := d.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)

			continue
		}
		deleted = append(deleted, p)
	}

	return deleted, errors.Join(errs...)
}

// Rename moves a file and fsyncs both directories.
func (d *DurableFS) Rename(oldpath, newpath string) error {
	src, dst, err := d.renamePaths(oldpath, newpath)
	if err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		return err
	}

	return syncDirs(filepath.Dir(src), filepath.Dir(dst))
}

// RenameNoReplace moves a file unless newpath exists (hard link, then
// remove), and fsyncs both directories.
func (d *DurableFS) RenameNoReplace(oldpath, newpath string) error {
	src, dst, err := d.renamePaths(oldpath, newpath)
	if err != nil {
		return err
	}
	if err := os.Link(src, dst); err != nil {
		return err
	}
	_ = os.Remove(src) // the new name is published; the old one is garbage

	return syncDirs(filepath.Dir(src), filepath.Dir(dst))
}

func (d *DurableFS) renamePaths(oldpath, newpath string) (string, string, error) {
	src, err := d.writablePath("rename", oldpath)
	if err != nil {
		return "", "", err
	}
	dst, err := d.writablePath("rename", newpath)
	if err != nil {
		return "", "", err
	}
	if err := d.mkdirAll(filepath.Dir(dst)); err != nil {
		return "", "", err
	}

	return src, dst, nil
}

func syncDirs(a, b string) error {
	if err := syncDir(a); err != nil {
		return err
	}
	if a == b {
		return nil
	}

	return syncDir(b)
}

// syncDir fsyncs a directory so the entries added to it are durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}

	return nil
}

// durableWriter fsyncs the file and its directory on Close.
type durableWriter struct {
	f      *os.File
	closed bool
}

var _ iceio.FileWriter = (*durableWriter)(nil)

func (w *durableWriter) Write(p []byte) (int, error)         { return w.f.Write(p) }
func (w *durableWriter) ReadFrom(r io.Reader) (int64, error) { return w.f.ReadFrom(r) }

// Close makes the file durable: fsync the data, close, then fsync the
// directory that holds its entry.
func (w *durableWriter) Close() error {
	if w.closed {
		return os.ErrClosed
	}
	w.closed = true
	syncErr := w.f.Sync()
	closeErr := w.f.Close()
	if err := errors.Join(syncErr, closeErr); err != nil {
		return fmt.Errorf("write %s: %w", w.f.Name(), err)
	}

	return syncDir(filepath.Dir(w.f.Name()))
}

// ReplaceFile writes name atomically (a temporary file renamed over it)
// but without fsync: for files such as the version hint that may be lost
// or stale after a crash, but must never be seen half written.
func (d *DurableFS) ReplaceFile(name string, content []byte) error {
	p, err := d.writablePath("write", name)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
