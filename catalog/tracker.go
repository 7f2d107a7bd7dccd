package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sync"

	iceio "github.com/apache/iceberg-go/io"
)

// Tracker wraps a WriteFileIO and records every file created through it, so
// that a write which fails to commit can remove exactly the files it wrote:
// give each write its own Tracker as the table IO, and call RemoveCreated
// when the commit fails. It is safe for concurrent use.
type Tracker struct {
	inner iceio.WriteFileIO

	mu      sync.Mutex
	created []string
	seen    map[string]struct{}
}

var (
	_ iceio.IO              = (*Tracker)(nil)
	_ iceio.ReadFileIO      = (*Tracker)(nil)
	_ iceio.WriteFileIO     = (*Tracker)(nil)
	_ iceio.ListableIO      = (*Tracker)(nil)
	_ iceio.StatIO          = (*Tracker)(nil)
	_ iceio.BulkRemovableIO = (*Tracker)(nil)
)

// NewTracker returns a Tracker that writes through inner.
func NewTracker(inner iceio.WriteFileIO) *Tracker {
	return &Tracker{inner: inner, seen: map[string]struct{}{}}
}

func (t *Tracker) record(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.seen[name]; ok {
		return
	}
	t.seen[name] = struct{}{}
	t.created = append(t.created, name)
}

func (t *Tracker) forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.seen[name]; !ok {
		return
	}
	delete(t.seen, name)
	t.created = slices.DeleteFunc(t.created, func(s string) bool { return s == name })
}

// Created returns the paths created through the Tracker, in creation order,
// minus those removed through it since.
func (t *Tracker) Created() []string {
	t.mu.Lock()
	defer t.mu.Unlock()

	return slices.Clone(t.created)
}

// RemoveCreated removes every file created through the Tracker. Files that
// are already gone count as removed. The ones it could not remove stay
// recorded and are named in the error.
func (t *Tracker) RemoveCreated() error {
	var errs []error
	for _, name := range t.Created() {
		if err := t.inner.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove uncommitted file %s: %w", name, err))

			continue
		}
		t.forget(name)
	}

	return errors.Join(errs...)
}

// Create creates name through the inner IO and records it.
func (t *Tracker) Create(name string) (iceio.FileWriter, error) {
	w, err := t.inner.Create(name)
	if err != nil {
		return nil, err
	}
	t.record(name)

	return w, nil
}

// WriteFile writes name through the inner IO and records it, also when the
// write fails part way (the file may exist).
func (t *Tracker) WriteFile(name string, p []byte) error {
	err := t.inner.WriteFile(name, p)
	if _, statErr := t.Stat(name); err == nil || statErr == nil {
		t.record(name)
	}

	return err
}

func (t *Tracker) Open(name string) (iceio.File, error) { return t.inner.Open(name) }

// Remove removes name and stops tracking it.
func (t *Tracker) Remove(name string) error {
	if err := t.inner.Remove(name); err != nil {
		return err
	}
	t.forget(name)

	return nil
}

func (t *Tracker) ReadFile(name string) ([]byte, error) {
	if r, ok := t.inner.(iceio.ReadFileIO); ok {
		return r.ReadFile(name)
	}
	f, err := t.inner.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()

	return io.ReadAll(f)
}

func (t *Tracker) Stat(name string) (fs.FileInfo, error) {
	if s, ok := t.inner.(iceio.StatIO); ok {
		return s.Stat(name)
	}
	f, err := t.inner.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()

	return f.Stat()
}

func (t *Tracker) WalkDir(root string, fn fs.WalkDirFunc) error {
	if l, ok := t.inner.(iceio.ListableIO); ok {
		return l.WalkDir(root, fn)
	}

	return fmt.Errorf("walk %s: the wrapped IO cannot list directories", root)
}

// DeleteFiles removes paths (missing ones count as removed) and stops
// tracking them.
func (t *Tracker) DeleteFiles(ctx context.Context, paths []string) ([]string, error) {
	deleted := make([]string, 0, len(paths))
	var errs []error
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)

			break
		}
		if err := t.inner.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)

			continue
		}
		t.forget(p)
		deleted = append(deleted, p)
	}

	return deleted, errors.Join(errs...)
}
